"""The manual (docs/, Sphinx with MyST and numpydoc) builds without a warning, the
public API's docstrings pass numpydoc's validation, the guide's examples run as
written, and what the pages show is what the code does (the table of rules, the
command line's options). Sphinx and numpydoc are the `docs` extra: without them the
tests fail under CI=true and are skipped elsewhere."""
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.examples import python_blocks, run_example
from tests.support.shared import extra_module

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
#: The pages whose ```python examples run: the user guide and the pages for newcomers.
EXAMPLE_PAGES = sorted(DOCS.glob("guide/*.md")) + [DOCS / "from_sklearn.md"]
#: Each page's examples, run in turn in one directory (a later one may read an earlier one's file).
EXAMPLES = {page.relative_to(DOCS).as_posix(): "\n".join(python_blocks(page.read_text()))
            for page in EXAMPLE_PAGES if python_blocks(page.read_text())}
#: The public API's methods that numpydoc's validation holds to Parameters and Returns.
METHODS = ("fit", "partial_fit", "predict", "predict_proba", "predict_log_proba", "decision_function",
           "predict_marginals", "score", "sparsify", "densify", "step", "step_decoded", "step_rows", "scores",
           "weights", "unpenalized", "coef", "grow")
#: numpydoc's checks that the public API's docstrings pass: a docstring, its
#: summary, every parameter documented with a type and a description and none
#: unknown, a Returns (or Yields) section with descriptions, sections in order.
CHECKS = {"GL08", "GL06", "GL07", "SS01", "PR01", "PR02", "PR03", "PR07", "PR10", "RT01", "RT03", "YD01"}


def test_the_manual_builds_without_warnings(tmp_path):
    """sphinx-build -W (every warning an error) builds the whole manual."""
    extra_module("sphinx"), extra_module("myst_parser"), extra_module("numpydoc")
    run = subprocess.run([sys.executable, "-m", "sphinx", "-W", "--keep-going", "-E", "-q", "-b", "html",
                          str(DOCS), str(tmp_path / "html")], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr[-5000:]
    pages = {p.relative_to(tmp_path / "html").as_posix() for p in (tmp_path / "html").rglob("*.html")}
    for page in DOCS.rglob("*.md"):          # every page is in the manual (a toctree reaches it)
        assert page.relative_to(DOCS).with_suffix(".html").as_posix() in pages


def public_api():
    """The names of the public API: fastprox's and fastprox.structured's, the
    METHODS of their classes that fastprox defines, and fastprox.dask.fit."""
    import inspect
    import fastprox
    import fastprox.structured
    names = []
    for module in (fastprox, fastprox.structured):
        for name in module.__all__:
            obj = getattr(module, name)
            names.append(f"{module.__name__}.{name}")
            if inspect.isclass(obj):
                names += [f"{module.__name__}.{name}.{m}" for m in METHODS
                          if m in dir(obj) and getattr(getattr(obj, m), "__module__", "").startswith("fastprox")]
    return names + ["fastprox.dask.fit"]


@pytest.mark.parametrize("name", public_api())
def test_public_docstrings_pass_numpydoc_validation(name):
    validate = extra_module("numpydoc.validate").validate
    result = validate(name)
    errors = [(code, message) for code, message in result["errors"] if code in CHECKS
              and not (code == "RT01" and "Yields" in result["docstring"])]
    assert errors == []


@pytest.mark.parametrize("page", sorted(EXAMPLES))
def test_guide_examples_run(page, tmp_path, monkeypatch, request):
    run_example(EXAMPLES[page], DOCS / page, tmp_path, monkeypatch, request)


def test_the_guide_shows_the_table_of_rules():
    """The guide's table of supported combinations is the table of rules' (`_registry`)."""
    from fastprox._registry import markdown_table
    assert markdown_table() in (DOCS / "guide" / "parameters.md").read_text()


def test_the_command_line_guide_shows_real_options():
    """Every command of the command-line guide, from_vw.md and the README (a line ``$ ...
    fastprox ARGS``) is one that `fastprox` parses: its command and options exist, its values are valid."""
    from fastprox.cli import build_parser
    for page in (DOCS / "cli.md", DOCS / "from_vw.md", ROOT / "README.md"):
        lines = re.findall(r"^\$ (?:.*\| )?fastprox (.*)$", page.read_text(), flags=re.M)
        assert lines, page
        for line in lines:
            argv = shlex.split(re.split(r" [>|] ", line)[0])
            build_parser().parse_args(argv)     # a UsageError names what is wrong


def test_the_command_line_guides_a9a_sessions_print_what_they_show(shared_data, tmp_path, monkeypatch, capsys):
    """The command-line guide's sessions on a9a (``fastprox train``, ``predict`` and
    ``info`` of a9a, a9a.t and the model they write), run in turn in one directory,
    print every line the guide shows (but "..." and the times): the session of
    ``--passes 3`` showed the output of before VW's holdout (97683 examples, no
    holdout line)."""
    from fastprox.cli import main
    for path in shared_data("a9a/a9a", "a9a/a9a.t"):
        (tmp_path / path.name).symlink_to(path)
    monkeypatch.chdir(tmp_path)
    blocks = re.findall(r"```console\n(.*?)```", (DOCS / "cli.md").read_text(), flags=re.S)
    sessions = [block for block in blocks if re.match(r"\$ fastprox (train|predict|info) a9a", block)]
    assert len(sessions) >= 4
    for block in sessions:
        shown, printed = [], []
        for line in block.splitlines():
            if not line.startswith("$ "):
                shown.append(line)
                continue
            argv, _, into = line[2:].partition(" > ")
            argv = shlex.split(argv)
            if argv[0] == "head":
                printed += Path(argv[-1]).read_text().splitlines()[:int(argv[1][1:])]
                continue
            assert argv[0] == "fastprox" and main(argv[1:]) == 0, line
            out, err = capsys.readouterr()
            if into:
                Path(into).write_text(out)
                out = ""
            printed += (err + out).splitlines()
        missing_lines = [line for line in shown if line != "..." and not line.startswith("time:")
                         and line not in printed]
        assert not missing_lines, (block, printed)
