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


#: The shared data sets (LIBSVM files), next to the repository.
SHARED_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"


@pytest.fixture(scope="session")
def shared_data():
    """``files(*relative)``: the paths of those files of the shared data directory; a
    test that needs a missing one fails under CI=true, and is skipped elsewhere."""
    def files(*relative):
        paths = [SHARED_DATA / r for r in relative]
        missing = [str(p) for p in paths if not p.is_file()]
        if missing:
            message = f"shared data missing: {', '.join(missing)}"
            if os.environ.get("CI") == "true":
                pytest.fail(message)
            pytest.skip(message)
        return paths
    return files
