"""Test-suite set-up shared by all test modules."""
import os

# scikit-learn's check_array_api_input runs only when SciPy's array API
# support is switched on, which must happen before SciPy is first imported.
os.environ.setdefault("SCIPY_ARRAY_API", "1")
