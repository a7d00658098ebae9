"""Every Python example of the README runs as written (in a fresh directory), and its
test command is CI's."""
import re
from pathlib import Path

import pytest

from tests.support.examples import python_blocks, run_example

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
BLOCKS = python_blocks(README.read_text())


def test_the_readme_has_python_examples():
    assert BLOCKS


@pytest.mark.parametrize("code", BLOCKS, ids=[f"block{i}" for i in range(len(BLOCKS))])
def test_readme_python_example_runs(code, tmp_path, monkeypatch, request):
    run_example(code, README, tmp_path, monkeypatch, request)


def test_ci_runs_the_readmes_test_command():
    """.ci/run runs exactly the README's test command (its second command line):
    the library's tests, the slow ones and the benchmarks' smoke tests."""
    command = re.search(r"```bash\n.*\n(.*?)\s+#", README.read_text()).group(1)
    assert "pytest -m slow" in command and "bench/tests" in command
    assert ".[test,dask,bench,docs]" in command      # the manual's build (tests/test_docs.py) too
    assert (ROOT / ".ci" / "run").read_text().rstrip().splitlines()[-1] == command


def test_the_estimators_docstring_examples_run():
    """The examples of the estimators' docstrings (numpydoc's Examples) give what they show."""
    import doctest
    from fastprox import linear_model
    assert doctest.testmod(linear_model).failed == 0
