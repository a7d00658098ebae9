"""Test-suite set-up shared by all test modules."""
import os
import sys
from pathlib import Path

import pytest

# The benchmarks and paper reproductions (bench/, not part of the installed
# package) are imported from the repository's root, as `python -m bench.NAME` does.
ROOT = str(Path(__file__).resolve().parents[1])
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

# scikit-learn's check_array_api_input runs only when SciPy's array API
# support is switched on, which must happen before SciPy is first imported.
os.environ.setdefault("SCIPY_ARRAY_API", "1")

# CI draws the same property-test examples every run (hypothesis's derandomize), so
# that its verdict is the code's, not the draw's; elsewhere each run draws anew and
# keeps what fails in .hypothesis/ to replay it.
if os.environ.get("CI") == "true":
    from hypothesis import settings

    settings.register_profile("ci", derandomize=True)
    settings.load_profile("ci")


#: The shared material next to the repository: LIBSVM sets in data/, sequences
#: and trees in structured/ (see structured/SOURCES.md).
SHARED = Path(__file__).resolve().parents[1].parent / "shared"
SHARED_DATA = SHARED / "data"
SHARED_STRUCTURED = SHARED / "structured"


def _files_in(root):
    """``files(*relative)``: the paths of those files below ``root``; a test that
    needs a missing one fails under CI=true, and is skipped elsewhere."""
    def files(*relative):
        paths = [root / r for r in relative]
        missing = [str(p) for p in paths if not p.is_file()]
        if missing:
            message = f"shared data missing: {', '.join(missing)}"
            if os.environ.get("CI") == "true":
                pytest.fail(message)
            pytest.skip(message)
        return paths
    return files


@pytest.fixture(scope="session")
def shared_data():
    """``files(*relative)``: files of the shared LIBSVM data directory (`_files_in`)."""
    return _files_in(SHARED_DATA)


@pytest.fixture(scope="session")
def shared_structured():
    """``files(*relative)``: files of the shared structured data directory
    (CoNLL-2000, UD English EWT, OCR letters; `_files_in`)."""
    return _files_in(SHARED_STRUCTURED)
