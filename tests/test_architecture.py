"""docs/architecture.md stays true: a line for every source file of src/ and every
folder of tests/ and bench/, and no line for a file or folder that is gone."""
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "architecture.md"
SOURCES = {".py", ".pyx", ".pxd", ".h"}


def named():
    """The paths the page's lines name (a line: "- `path`: what it does")."""
    return [m.group(1) for m in re.finditer(r"^- `([^`]+)`: ", DOC.read_text(), re.M)]


def tree():
    """Every source file of src/ (what Cython and the build write is left out: .c
    files and the compiled modules) and every folder of tests/ and bench/."""
    files = {p.relative_to(ROOT).as_posix() for p in (ROOT / "src").rglob("*")
             if p.suffix in SOURCES and "__pycache__" not in p.parts and "build" not in p.parts}
    for top in ("tests", "bench"):
        files.add(f"{top}/")
        files.update(p.relative_to(ROOT).as_posix() + "/" for p in (ROOT / top).iterdir()
                     if p.is_dir() and not p.name.startswith((".", "_")))     # _pyxbld: a build's
    return files


def test_every_file_has_its_line():
    assert sorted(tree() - set(named())) == []


def test_every_line_names_a_file_that_exists():
    assert sorted(set(named()) - tree()) == []


def test_one_line_a_file():
    lines = named()
    assert sorted(p for p in set(lines) if lines.count(p) > 1) == []
