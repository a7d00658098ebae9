"""Running the Python examples of the README and the manual as written: each block
fenced ```python, in a fresh directory that holds the first sentences of the shared
files it names (so that the examples run in seconds)."""
import re

from tests.support.shared import extra_missing, missing

#: The files of the shared data that the examples read by name (CoNLL-2000, UD English EWT):
#: name -> (its path below ../shared/structured, the sentences given).
EXAMPLE_FILES = {"train.txt": ("conll2000/train.txt", 300), "test.txt": ("conll2000/test.txt", 100),
                 "en_ewt-ud-train.conllu": ("ud_english_ewt/en_ewt-ud-train.conllu", 300),
                 "en_ewt-ud-dev.conllu": ("ud_english_ewt/en_ewt-ud-dev.conllu", 100)}


def python_blocks(text):
    """The blocks of a Markdown text fenced ```python, which run as written."""
    return re.findall(r"```python\n(.*?)```", text, flags=re.S)


def run_example(code, source, directory, monkeypatch, request):
    """Run the example `code` of the file `source` in `directory` (the test's
    tmp_path), with the shared files it names (through the ``shared_structured``
    fixture: a failure under CI=true when they are missing, as where the example
    imports an optional extra's package that is not installed)."""
    for name, (relative, sentences) in EXAMPLE_FILES.items():
        if f'"{name}"' in code:
            path, = request.getfixturevalue("shared_structured")(relative)
            head = path.read_text(encoding="utf-8").split("\n\n")[:sentences]
            (directory / name).write_text("\n\n".join(head) + "\n\n", encoding="utf-8")
    monkeypatch.chdir(directory)
    try:
        exec(compile(code, str(source), "exec"), {"__name__": "__example__"})
    except ImportError as error:             # an example of an optional extra (the cluster's: dask)
        line = extra_missing(error)
        if line is None:
            raise
        missing(line)
