"""bench.interpreters: the clean interpreter finds the packages this one finds, from
the same files, and its start imports nothing this one's does not."""
import subprocess
import sys

from bench.interpreters import clean_interpreter, pth_names, start_imports


def test_clean_interpreter_shares_the_packages_and_skips_the_pth_files(tmp_path):
    python = clean_interpreter(tmp_path / "clean")
    where = "import numpy, fastprox; print(numpy.__file__); print(fastprox.__file__)"
    here = subprocess.run([sys.executable, "-c", where], capture_output=True, text=True, check=True).stdout
    there = subprocess.run([python, "-c", where], capture_output=True, text=True, check=True).stdout
    assert there == here
    assert set(start_imports(python)) <= set(start_imports(sys.executable))


def test_pth_names_finds_each_import():
    assert pth_names("import os;exec(\"try:\\n import certifi\\n\")") == ["os", "certifi"]
    assert pth_names("/some/site-packages\n") == []
