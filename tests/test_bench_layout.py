"""The benchmarks and paper reproductions live in the repository's bench/, not in
the installed package: they run from a clone's root as ``python -m bench.NAME``
(the README's commands), and the library imports nothing of them."""
import argparse
import ast
import importlib
import importlib.util
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src" / "fastprox"


def test_the_library_ships_no_benchmarks():
    assert importlib.util.find_spec("fastprox.benchmarks") is None
    assert not list(SRC.glob("_lazy_l1*"))
    from fastprox.cli import COMMANDS
    assert COMMANDS == ("train", "predict", "info", "tag", "parse")


def test_the_library_imports_nothing_of_bench():
    for path in SRC.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import) else
                     [node.module or ""] if isinstance(node, ast.ImportFrom) and not node.level else [])
            assert not [n for n in names if n.split(".")[0] == "bench"], (path, names)


def commands():
    from bench.__main__ import commands
    return [command.split()[-1] for command, _ in commands()]


def test_python_m_bench_lists_every_entry_point():
    found = commands()
    for name in ("bench.table1", "bench.papers", "bench.peers", "bench.peers.run", "bench.throughput",
                 "bench.reader", "bench.file_to_model", "bench.defaults", "bench.orders",
                 "bench.model_hashes", "bench.papers.rda_mnist"):
        assert name in found, found


@pytest.mark.parametrize("name", sorted(set(commands()) | {"bench.lazy_l1", "bench.test_micro"}))
def test_every_bench_module_imports_from_the_root(name):
    """What `python -m NAME` imports resolves from the repository's root."""
    package = importlib.util.find_spec(name).submodule_search_locations is not None
    importlib.import_module(name + ".__main__" if package else name)


def test_table1_rejects_no_repeats():
    from bench import table1
    args = table1.add_arguments(argparse.ArgumentParser()).parse_args(["--repeats", "0"])
    with pytest.raises(ValueError, match="--repeats must be at least 1, got 0"):
        table1.run(args)


def test_python_m_bench_papers_lists_the_experiments():
    """`python -m bench.papers --help` from the root (a fresh interpreter, as the README runs it)."""
    done = subprocess.run([sys.executable, "-m", "bench.papers", "--help"], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    for name in ("rda_mnist", "rda_params", "adagrad_text", "adagrad_mnist", "fobos_synthetic",
                 "fobos_mixed_norms", "mkl", "ocr_table1"):
        assert re.search(rf"^    {name}\b", done.stdout, re.M), done.stdout


def test_each_experiment_keeps_its_options(capsys):
    from bench.papers.__main__ import main
    for name in ("rda_mnist", "rda_params", "adagrad_text", "adagrad_mnist", "fobos_synthetic",
                 "fobos_mixed_norms", "mkl", "ocr_table1"):
        with pytest.raises(SystemExit) as exit_:
            main([name, "--help"])
        out = capsys.readouterr().out
        assert exit_.value.code == 0 and "--quick" in out and "--data-dir" in out, out
