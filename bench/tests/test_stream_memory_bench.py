"""Smoke test of bench.stream_memory on small files: both settings run, pinned, and
train the same model; the table names the machine and both settings."""
import os

from bench.tests.test_dask_bench import _run


def test_stream_memory_writes_its_table(tmp_path):
    out = tmp_path / "stream_memory.md"
    core = str(min(os.sched_getaffinity(0)))
    done = _run("bench.stream_memory", "--dir", str(tmp_path / "data"), "--files", "2", "--rows", "2000",
                "--runs", "1", "--passes", "2", "--core", core, "--out", str(out))
    assert done.returncode == 0, done.stderr
    text = out.read_text()
    assert "- Machine: " in text and "| lifted (as shipped) |" in text and "| glibc's own rule |" in text
    assert "the two models are the same bytes" in text
