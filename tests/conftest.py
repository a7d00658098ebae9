"""Test-suite set-up shared by all test modules."""
import os
import signal
import sys
from pathlib import Path

import pytest

# The tests' helpers (tests/support/) are imported from the repository's root as
# the package `tests.support`.
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


# The shared data's fixtures (tests/support/shared.py: its one route).
from tests.support.shared import shared_data, shared_structured  # noqa: E402,F401


@pytest.fixture
def ctrl_c():
    """Ctrl-C (SIGINT, _thread.interrupt_main) raises KeyboardInterrupt during the
    test, whatever the run inherited: a command run in the background by a
    non-interactive shell (``pytest &`` in a script) starts with SIGINT ignored,
    Python then leaves it ignored, and interrupt_main does nothing."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, previous)
