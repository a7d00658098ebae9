"""The one route to the shared material next to the repository: LIBSVM sets in
``../shared/data`` (or ``$FASTPROX_DATA``, as bench.papers reads them), sequences and
trees in ``../shared/structured`` (see its SOURCES.md). Tests reach them through the
fixtures ``shared_data`` and ``shared_structured`` (registered by tests/conftest.py
and bench/tests/conftest.py); a test that needs a missing file fails under CI=true
and is skipped elsewhere. So does a test that needs a module of one of fastprox's
optional extras (`extra_module`): CI installs them all, a user's ``pip install
".[test]"`` runs the rest."""
import importlib
import os
from pathlib import Path

import pytest

SHARED = Path(__file__).resolve().parents[2].parent / "shared"
SHARED_DATA = Path(os.environ.get("FASTPROX_DATA", SHARED / "data"))
SHARED_STRUCTURED = SHARED / "structured"


#: The modules of fastprox's optional extras (pyproject.toml) that tests import: module ->
#: its extra. (The test extra's own are plain imports: the tests need them.)
EXTRAS = {"dask": "dask", "distributed": "dask", "dask_ml": "dask",
          "sphinx": "docs", "myst_parser": "docs", "numpydoc": "docs"}


def missing(message, module_level=False):
    """Fail (CI=true) or skip the test (``module_level``: the whole test module, called
    as it is collected) for shared material or an extra's module that is not there."""
    if os.environ.get("CI") == "true":
        pytest.fail(message)
    pytest.skip(message, allow_module_level=module_level)


def extra_module(name, module_level=False):
    """The module ``name`` (a package of an optional extra, `EXTRAS`, or one of its
    submodules), imported; `missing` where it is not installed."""
    try:
        return importlib.import_module(name)
    except ImportError as error:
        missing(extra_missing(error) or str(error), module_level)


def extra_missing(error):
    """The line for an ImportError of an optional extra's module (which, and how to
    install it), None for any other."""
    top = (getattr(error, "name", None) or "").partition(".")[0]
    return f"{top} is not installed: pip install '.[{EXTRAS[top]}]'" if top in EXTRAS else None


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
