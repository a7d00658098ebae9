"""Every Python example of the README runs as written (in a fresh directory)."""
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
#: The blocks fenced ```python, which run as written.
BLOCKS = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)
#: The files of the shared data that the examples read by name (CoNLL-2000, UD English EWT):
#: name -> (its path below ../shared/structured, the sentences given). The example's directory
#: holds each file's first sentences, so that the examples run in seconds.
EXAMPLE_FILES = {"train.txt": ("conll2000/train.txt", 300), "test.txt": ("conll2000/test.txt", 100),
                 "en_ewt-ud-train.conllu": ("ud_english_ewt/en_ewt-ud-train.conllu", 300),
                 "en_ewt-ud-dev.conllu": ("ud_english_ewt/en_ewt-ud-dev.conllu", 100)}


def test_the_readme_has_python_examples():
    assert BLOCKS


@pytest.mark.parametrize("code", BLOCKS, ids=[f"block{i}" for i in range(len(BLOCKS))])
def test_readme_python_example_runs(code, tmp_path, monkeypatch, request):
    for name, (relative, sentences) in EXAMPLE_FILES.items():
        if f'"{name}"' in code:
            path, = request.getfixturevalue("shared_structured")(relative)
            head = path.read_text(encoding="utf-8").split("\n\n")[:sentences]
            (tmp_path / name).write_text("\n\n".join(head) + "\n\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    exec(compile(code, str(README), "exec"), {"__name__": "__readme__"})


def test_the_readme_shows_the_table_of_rules():
    """The README's table of supported combinations is the table of rules' (`_registry`)."""
    from fastprox._registry import markdown_table
    assert markdown_table() in README.read_text()


def test_ci_runs_the_readmes_test_command():
    """.ci/run runs exactly the README's test command (its second command line):
    the library's tests, the slow ones and the benchmarks' smoke tests."""
    command = re.search(r"```bash\n.*\n(.*?)\s+#", README.read_text()).group(1)
    assert "pytest -m slow" in command and "bench/tests" in command
    assert (ROOT / ".ci" / "run").read_text().rstrip().splitlines()[-1] == command


def test_the_estimators_docstring_examples_run():
    """The examples of the estimators' docstrings (numpydoc's Examples) give what they show."""
    import doctest
    from fastprox import linear_model
    assert doctest.testmod(linear_model).failed == 0
