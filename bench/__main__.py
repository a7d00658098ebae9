"""``python -m bench``: list the benchmarks and reproductions, each run from the
repository's root as ``python -m bench.NAME [options]`` (``--help`` gives them)."""
import ast
import textwrap
from pathlib import Path

HERE = Path(__file__).resolve().parent


def commands():
    """(command, first line of its docstring) for every runnable module of bench/:
    a module with ``if __name__ == "__main__"``, or a package with a __main__.py."""
    found = []
    for path in sorted(HERE.rglob("*.py")):
        relative = path.relative_to(HERE.parent).with_suffix("")
        parts = relative.parts
        if any(p.startswith("_") for p in parts[:-1]) or parts[-1] in ("__init__", "lazy_l1"):
            continue
        if parts == ("bench", "__main__"):
            continue
        if parts[-1] == "__main__":
            parts, path = parts[:-1], path.with_name("__init__.py")
        elif parts[-1].startswith(("_", "test_")) or "__main__" not in path.read_text():
            continue
        doc = ast.get_docstring(ast.parse(path.read_text())) or ""
        found.append(("python -m " + ".".join(parts), " ".join(doc.split("\n\n")[0].split())))
    return found


if __name__ == "__main__":
    for command, summary in commands():
        print(command)
        print(textwrap.fill(summary, 88, initial_indent="    ", subsequent_indent="    "))
