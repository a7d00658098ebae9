"""fastprox's modules import one another without a cycle, and every module imports.

The import graph is read from the source (`ast`), every import counted, those inside
functions too (a lazy import only hides a cycle): an edge A -> B when A imports B or a
name from B (`from .pkg import sub` is an edge to the submodule). Run it alone to see
the graph's size and its cycles: ``python tests/test_imports.py``.
"""
import ast
import importlib
import sys
from pathlib import Path

from tests.support.shared import extra_missing, missing

SRC = Path(__file__).resolve().parents[1] / "src"
PACKAGE = "fastprox"


def modules():
    """{module name: path} of every Python module of the package."""
    found = {}
    for path in sorted((SRC / PACKAGE).rglob("*.py")):
        parts = list(path.relative_to(SRC).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    for path in sorted((SRC / PACKAGE).rglob("*.pyx")):       # compiled modules: leaves of the graph
        found.setdefault(".".join(path.relative_to(SRC).with_suffix("").parts), None)
    return found


def imports_of(name, path, known):
    """The package's modules that module `name` (at `path`) imports."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    edges = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                anchor = anchor[:len(anchor) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            targets = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base
                       for alias in node.names]
        else:
            continue
        edges.update(t for t in targets if t in known and t != name)
    return edges


def private_imports(name, path, known):
    """The private names (``_x``, not modules) that module `name` imports from another module."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.ImportFrom) and (node.level or (node.module or "").startswith(PACKAGE)):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                base = ".".join(anchor[:len(anchor) - node.level + 1] + ([base] if base else []))
            found += [f"{base}.{a.name}" for a in node.names
                      if a.name.startswith("_") and not a.name.startswith("__") and f"{base}.{a.name}" not in known]
    return found


def graph():
    known = modules()
    return {name: imports_of(name, path, known) if path else set() for name, path in known.items()}


def cycles(edges):
    """The strongly connected components of more than one module (Tarjan), sorted."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(edges[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10_000))
    for v in sorted(edges):
        if v not in index:
            visit(v)
    return sorted(found)


def test_no_import_cycle():
    assert cycles(graph()) == []


def test_no_private_name_crosses_modules():
    """A name a module keeps to itself (``_x``) is not imported by another: what two
    modules share is public in the module whose job it is."""
    known = modules()
    crossing = {name: found for name, path in known.items() if path
                for found in [private_imports(name, path, known)] if found}
    assert crossing == {}


def test_the_graph_sees_a_cycle():
    """The check can fail: a cycle written into the graph is found."""
    edges = graph()
    edges["fastprox.libsvm.reader"] = edges["fastprox.libsvm.reader"] | {"fastprox.cli.train"}
    assert any("fastprox.cli.train" in c and "fastprox.libsvm.reader" in c for c in cycles(edges))


def test_every_module_imports():
    """Every module imports; those that need an optional extra's package (fastprox.dask
    and the command line's cluster module: the dask extra) where it is installed,
    `missing` after the others where it is not."""
    absent = set()
    for name in modules():
        try:
            importlib.import_module(name)
        except ImportError as error:
            line = extra_missing(error)
            if line is None:
                raise
            absent.add(line)
    if absent:
        missing("; ".join(sorted(absent)))


if __name__ == "__main__":
    edges = graph()
    print(f"{len(edges)} modules, {sum(map(len, edges.values()))} imports; cycles: {cycles(edges) or 'none'}")
