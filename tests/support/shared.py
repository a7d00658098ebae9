"""The one route to the shared material next to the repository: LIBSVM sets in
``../shared/data`` (or ``$FASTPROX_DATA``, as bench.papers reads them), sequences and
trees in ``../shared/structured`` (see its SOURCES.md). Tests reach them through the
fixtures ``shared_data`` and ``shared_structured`` (registered by tests/conftest.py
and bench/tests/conftest.py); a test that needs a missing file fails under CI=true
and is skipped elsewhere."""
import os
from pathlib import Path

import pytest

SHARED = Path(__file__).resolve().parents[2].parent / "shared"
SHARED_DATA = Path(os.environ.get("FASTPROX_DATA", SHARED / "data"))
SHARED_STRUCTURED = SHARED / "structured"


def missing(message):
    """Fail (CI=true) or skip the test for shared material that is not there."""
    if os.environ.get("CI") == "true":
        pytest.fail(message)
    pytest.skip(message)


def files_in(root):
    """``files(*relative)``: the paths of those files below ``root`` (`missing` if
    one is not there)."""
    def files(*relative):
        paths = [root / r for r in relative]
        absent = [str(p) for p in paths if not p.is_file()]
        if absent:
            missing(f"shared data missing: {', '.join(absent)}")
        return paths
    return files


@pytest.fixture(scope="session")
def shared_data():
    """``files(*relative)``: files of the shared LIBSVM data directory (`files_in`)."""
    return files_in(SHARED_DATA)


@pytest.fixture(scope="session")
def shared_structured():
    """``files(*relative)``: files of the shared structured data directory
    (CoNLL-2000, UD English EWT, OCR letters; `files_in`)."""
    return files_in(SHARED_STRUCTURED)
