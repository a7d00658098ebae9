"""The shared data's fixtures for the benchmarks' tests: the library tests' own
(tests/support/shared.py, the one route to ../shared)."""
from tests.support.shared import shared_data, shared_structured  # noqa: F401
