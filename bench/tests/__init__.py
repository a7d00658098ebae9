"""Smoke tests of the benchmarks and paper reproductions (``pytest bench/tests``,
with the ``bench`` extra installed): run by CI apart from the library's tests,
which import nothing of bench."""
