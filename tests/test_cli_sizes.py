"""Sizes on the command line: a huge feature index or --n-features, or memory
running out, ends `fastprox train` with one line on stderr naming the size and
the fix, exit status 1 and no traceback; a large model that fits trains, with
a one-line note. Run as a user runs it, in a fresh interpreter, except where a
threshold is lowered in-process."""
import resource
import subprocess
import sys

import pytest

from tests.support.cli_process import cli_command
from fastprox._validation import available_memory
from fastprox.cli import main, train
from fastprox.stream import model

GIB = 1 << 30


def fastprox_cli(*argv, memory_limit=None):
    """``fastprox ARGV`` in a fresh interpreter (address space limited to
    ``memory_limit`` bytes if given): the completed process, text output."""
    command, env = cli_command(*argv)
    limit = None if memory_limit is None else (
        lambda: resource.setrlimit(resource.RLIMIT_AS, (memory_limit, memory_limit)))
    return subprocess.run(command, capture_output=True, text=True, env=env, preexec_fn=limit,
                          timeout=120)


def one_error_line(run, status=1):
    """The single stderr line of a run that failed as the command line should: exit
    ``status``, 2 for an option's value (fastprox.cli.options.OptionError), else 1."""
    assert "Traceback" not in run.stderr
    assert run.returncode == status, run.stderr
    lines = run.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("fastprox: error: "), run.stderr
    return lines[0]


def libsvm_file(tmp_path, largest_index):
    """Ten rows, one of them with a feature at ``largest_index``."""
    path = tmp_path / f"index{largest_index}.svm"
    rows = [f"{1 if i % 2 else -1} 1:1 {i + 2}:0.5" for i in range(9)]
    path.write_text("\n".join(rows + [f"1 3:1 {largest_index}:1"]) + "\n")
    return path


def refused_here(n_bytes):
    """Skip a test of a refusal on a machine where the model would fit."""
    free = available_memory()
    if free is not None and free >= n_bytes:
        pytest.skip(f"{n_bytes} bytes would fit in this machine's memory")


@pytest.mark.parametrize("power", [31, 40])
def test_a_huge_index_names_the_model_size_and_its_origin(tmp_path, power):
    """The default model keeps 24 bytes per feature: 48 GiB at 2^31, 24 TiB at 2^40."""
    refused_here(24 << power)
    path = libsvm_file(tmp_path, 2**power)
    line = one_error_line(fastprox_cli("train", path))
    assert f"the model's state for {2**power} features x 1 output(s) needs" in line
    assert "use fewer features (hash them into fewer buckets" in line
    assert f"The width comes from the largest feature index in {path}." in line


@pytest.mark.parametrize("n_features, given_classes, expected, status", [
    (2**30, False, "The width comes from --n-features.", 1),
    (2**62, True, "needs 98304.0 PiB", 1),
    (2**63 - 1, True, "--n-features must be at most 9223372036854775806, not 9223372036854775807", 2),
    (2**70, False, f"--n-features must be at most 9223372036854775806, not {2**70}", 2),
])
def test_a_huge_n_features_is_one_line(tmp_path, n_features, given_classes, expected, status):
    refused_here(24 * n_features)
    classes = ["--classes", "-1", "1"] if given_classes else []
    line = one_error_line(fastprox_cli("train", libsvm_file(tmp_path, 5), "--n-features",
                                       n_features, *classes), status)
    assert expected in line


def test_a_huge_batch_size_is_one_line(tmp_path):
    line = one_error_line(fastprox_cli("train", libsvm_file(tmp_path, 5), "--batch-size", 2**70), 2)
    assert line.endswith(f"--batch-size must be at most {2**31 - 1}, not {2**70}")


@pytest.mark.parametrize("argv, size", [
    (["--n-features", 2**40, "--rows", 10], "24.0 TiB"),
    (["--n-features", 16, "--rows", 10**11], "139.7 TiB"),
])
def test_default_data_too_large_to_generate_is_one_line(argv, size):
    """Refused before NumPy tries to allocate it."""
    line = one_error_line(fastprox_cli("train", *argv))
    assert f"needs about {size} of memory to generate" in line
    assert line.endswith("pass a smaller --n-features or --rows")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="RLIMIT_AS is Linux's")
def test_memory_running_out_is_one_line(tmp_path):
    """A 1.5 GiB model (2^26 features) in a 1 GiB address space: the memory the
    kernel's check sees is not there, the allocation fails (a bare MemoryError)."""
    line = one_error_line(fastprox_cli("train", libsvm_file(tmp_path, 2**26), memory_limit=GIB))
    assert f"for {2**26} features" in line and "fewer features" in line
    assert "out of memory allocating the model's state" in line or "needs 1.5 GiB" in line


@pytest.mark.parametrize("error, expected", [
    (MemoryError(), "out of memory; use fewer features (hash them into fewer buckets) "
                    "or a smaller --chunk-rows"),
    (MemoryError("Unable to allocate 8.00 GiB for an array with shape (1073741824,) and data "
                 "type int64"), "out of memory (Unable to allocate 8.00 GiB for an array"),
    (MemoryError("a.svm:3: out of memory while reading"), "a.svm:3: out of memory while reading"),
])
def test_any_memory_error_is_one_line(monkeypatch, capsys, error, expected):
    def run(args):
        raise error
    monkeypatch.setattr(train, "run", run)
    assert main(["train"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("fastprox: error: " + expected) and err.count("\n") == 1


def test_a_large_model_that_fits_trains_with_a_note(tmp_path, monkeypatch, capsys):
    """Past NOTE_BYTES (1 GiB; lowered here) the state's size and what set the
    width are printed on stderr, once, and training goes on (the table's first
    lines, shown as the first rows arrive, may come before it)."""
    path = libsvm_file(tmp_path, 1000)
    assert main(["train", str(path), "--quiet"]) == 0
    assert capsys.readouterr().err == ""
    monkeypatch.setattr(model, "NOTE_BYTES", 1000 * 24 - 1)   # the default model's 24 bytes per feature
    assert main(["train", str(path)]) == 0
    out, err = capsys.readouterr()
    notes = [line for line in err.splitlines() if line.startswith("fastprox: note:")]
    assert notes == [
        f"fastprox: note: the model's state for 1000 features takes 23.5 KiB of memory "
        f"(the width comes from the largest feature index in {path}); hash the features into "
        f"fewer buckets (--hash-bits) to shrink it"]
    assert "1000 features" in out
