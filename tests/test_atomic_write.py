"""Atomic writes (fastprox.libsvm._atomic_write, behind dump_libsvm, save_model and
``fastprox train --model``): the target is the old file or the new one, never a
torn one, even under ``kill -9``; a write removes the temporary files that
interrupted writes to the same target left, and no other file; the directory
is fsynced after the rename."""
import gzip
import os
import random
import signal
import stat
import subprocess
import sys
import tempfile
import time

import numpy as np
import pytest
import scipy.sparse as sp

from cli_process import cli_command
from fastprox import dump_libsvm, libsvm
from fastprox.model_io import read_model

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="flock and SIGKILL are POSIX")

TARGET = "model.npz"


def temporaries(directory, target=TARGET):
    """The temporary files of writes to ``target`` in ``directory``."""
    return sorted(p for p in os.listdir(directory) if p.startswith(f".{target}.") and p.endswith(".tmp"))


def write_bytes(path, content):
    libsvm._atomic_write(os.fspath(path), lambda f: f.write(content))


# --- leftovers ------------------------------------------------------------------

def test_next_write_removes_leftovers_of_its_target_only(tmp_path):
    leftovers = [tempfile.mkstemp(dir=tmp_path, prefix=f".{TARGET}.", suffix=".tmp") for _ in range(3)]
    for fd, path in leftovers:
        os.write(fd, b"half a model")
        os.close(fd)
    (tmp_path / f".{TARGET}.abcd_123.tmp").write_bytes(b"x")           # mkstemp's alphabet
    others = [f".{TARGET}.ABCDEFGH.tmp", f".{TARGET}.abcdefg.tmp", f".{TARGET}.abcdefghi.tmp",
              f".{TARGET}.abcdefgh.tmp.keep", f"{TARGET}.abcdefgh.tmp", f".{TARGET}x.abcdefgh.tmp",
              f".model.abcdefgh.tmp", f".other.npz.abcdefgh.tmp", f".{TARGET}.abc.efgh.tmp",
              f".{TARGET}.abcdefgh.npz.abcdefgh.tmp", "unrelated.txt"]
    for name in others:
        (tmp_path / name).write_bytes(b"keep me")
    (tmp_path / f".{TARGET}.linkedxx.tmp").symlink_to(tmp_path / "unrelated.txt")
    (tmp_path / f".{TARGET}.director.tmp").mkdir()
    write_bytes(tmp_path / TARGET, b"new")
    assert (tmp_path / TARGET).read_bytes() == b"new"
    left = set(os.listdir(tmp_path))
    assert left == {TARGET, *others, f".{TARGET}.linkedxx.tmp", f".{TARGET}.director.tmp"}
    assert all((tmp_path / name).read_bytes() == b"keep me" for name in others)


def test_a_locked_temporary_file_is_left_alone(tmp_path):
    """A write in progress holds its temporary file's flock: another write to the
    same target, in this process or another, leaves it; once free it goes."""
    import fcntl
    fd, path = tempfile.mkstemp(dir=tmp_path, prefix=f".{TARGET}.", suffix=".tmp")
    fcntl.flock(fd, fcntl.LOCK_EX)
    write_bytes(tmp_path / TARGET, b"first")
    assert os.path.exists(path)
    os.close(fd)
    write_bytes(tmp_path / TARGET, b"second")
    assert os.listdir(tmp_path) == [TARGET]


CONCURRENT_WRITER = """
import sys
from fastprox.libsvm import _atomic_write

def write(f):
    f.write(b"child's first half, ")
    f.flush()
    print("writing", flush=True)
    sys.stdin.readline()
    f.write(b"child's second half")

_atomic_write(sys.argv[1], write)
"""


def test_a_concurrent_writer_in_another_process_completes(tmp_path):
    target = tmp_path / TARGET
    env = cli_command()[1]
    child = subprocess.Popen([sys.executable, "-c", CONCURRENT_WRITER, str(target)], env=env,
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout.readline() == "writing\n"
        (child_temporary,) = temporaries(tmp_path)
        write_bytes(target, b"parent")
        assert target.read_bytes() == b"parent"
        assert temporaries(tmp_path) == [child_temporary]
        child.stdin.write("\n")
        child.stdin.flush()
        assert child.wait(timeout=30) == 0
    finally:
        child.kill()
        child.wait()
    assert target.read_bytes() == b"child's first half, child's second half"
    assert os.listdir(tmp_path) == [TARGET]


def test_a_temporary_file_removed_before_it_was_locked_is_made_again(tmp_path, monkeypatch):
    """Another process's cleanup may remove a temporary file between its creation
    and its lock (it is not locked yet): the writer notices and makes another."""
    made = []
    mkstemp = tempfile.mkstemp

    def removed_at_once(*args, **kwargs):
        fd, path = mkstemp(*args, **kwargs)
        made.append(path)
        if len(made) == 1:
            os.unlink(path)
        return fd, path

    monkeypatch.setattr(tempfile, "mkstemp", removed_at_once)
    write_bytes(tmp_path / TARGET, b"written")
    assert len(made) == 2 and (tmp_path / TARGET).read_bytes() == b"written"
    assert os.listdir(tmp_path) == [TARGET]


# --- what writes kept ----------------------------------------------------------------

def test_the_directory_is_fsynced_after_the_rename(tmp_path, monkeypatch):
    events = []
    fsync, replace = os.fsync, os.replace

    def logged_fsync(fd):
        events.append("fsync " + ("directory" if stat.S_ISDIR(os.fstat(fd).st_mode) else "file"))
        fsync(fd)

    def logged_replace(src, dst):
        events.append("rename")
        replace(src, dst)

    monkeypatch.setattr(os, "fsync", logged_fsync)
    monkeypatch.setattr(os, "replace", logged_replace)
    write_bytes(tmp_path / TARGET, b"durable")
    assert events == ["fsync file", "rename", "fsync directory"]


def test_permissions_follow_the_umask_and_the_suffix_compresses(tmp_path):
    mask = os.umask(0o027)
    try:
        dump_libsvm(sp.csr_matrix([[0.0, 2.5]]), [1], tmp_path / "data.svm.gz")
    finally:
        os.umask(mask)
    path = tmp_path / "data.svm.gz"
    assert stat.S_IMODE(path.stat().st_mode) == 0o640
    assert gzip.decompress(path.read_bytes()) == b"1 2:2.5\n"


def test_an_exception_keeps_the_old_file_and_removes_the_temporary_one(tmp_path):
    target = tmp_path / TARGET
    target.write_bytes(b"old")

    def fail(f):
        f.write(b"half")
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        libsvm._atomic_write(os.fspath(target), fail)
    assert target.read_bytes() == b"old" and os.listdir(tmp_path) == [TARGET]


# --- kill -9 ------------------------------------------------------------------------

KILLS = 30
N_FEATURES = 300_000


@pytest.fixture(scope="module")
def wide_data(tmp_path_factory):
    """3,000 rows of 100 features each, every one of 300,000 features used once:
    a model file of about 10 MB, written in tens of milliseconds."""
    rng = np.random.default_rng(0)
    rows, per_row = 3000, 100
    indices = np.arange(rows * per_row) % N_FEATURES
    X = sp.csr_matrix((rng.random(rows * per_row), indices, np.arange(0, rows * per_row + 1, per_row)),
                      shape=(rows, N_FEATURES))
    path = tmp_path_factory.mktemp("wide") / "wide.svm"
    dump_libsvm(X, np.where(rng.random(rows) < 0.5, 1.0, -1.0), path)
    return path


def train(data, out, alpha):
    """``fastprox train DATA --model OUT``, started; alpha tells its model apart."""
    command, env = cli_command("train", data, "--model", out, "--alpha", alpha,
                               "--n-features", N_FEATURES, "--classes", -1, 1)
    return subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def wait_for(condition, process, deadline):
    """Poll until ``condition()`` (True), or until the process exits or the deadline
    passes (False)."""
    while time.perf_counter() < deadline and process.poll() is None:
        if condition():
            return True
        time.sleep(0.0005)
    return False


def calibrate(data, directory):
    """Seconds an uninterrupted run takes to write its model (from its temporary
    file's appearance to the rename) and to exit; its model is then removed."""
    out = directory / TARGET
    started = time.perf_counter()
    process = train(data, out, 1e-6)
    wait_for(lambda: temporaries(directory), process, started + 60)
    appeared = time.perf_counter()
    wait_for(lambda: not temporaries(directory), process, started + 60)
    renamed = time.perf_counter()
    assert process.wait(timeout=60) == 0, process.stderr.read()
    process.stderr.close()
    out.unlink()
    return renamed - appeared, time.perf_counter() - started


def outcome(out, previous, alpha):
    """What a killed (or finished) run left at OUT: "absent" (no model yet),
    "previous" (the last complete model, byte for byte) or "new" (a complete
    model of this run: read_model checks every member and its CRC)."""
    if not out.exists():
        assert previous is None, "a complete model was removed"
        return "absent"
    content = out.read_bytes()
    if content == previous:
        return "previous"
    assert read_model(out).params["alpha"] == alpha
    return "new"


def test_kill_9_never_leaves_a_torn_model(wide_data, tmp_path):
    """KILLS runs of `fastprox train --model OUT`, each SIGKILLed at a seeded
    moment: half while the model is being written (after its temporary file
    appeared; the first of them half-way, before any model exists), half
    anywhere in the run. OUT is always absent (before any complete model), the
    previous model or this run's; a run that wrote its model removed the
    leftovers of the killed ones, and a last full run leaves none."""
    decoy = tmp_path / ".other.npz.abcdefgh.tmp"
    decoy.write_bytes(b"not ours")
    writing, to_exit = calibrate(wide_data, tmp_path)
    out, previous = tmp_path / TARGET, None
    outcomes, leftovers_seen, finished = {"absent": 0, "previous": 0, "new": 0}, 0, 0
    for trial in range(KILLS):
        rng = random.Random(trial)
        alpha = 1e-6 * (trial + 2)
        started, leftovers = time.perf_counter(), set(temporaries(tmp_path))
        process = train(wide_data, out, alpha)
        if trial % 2:
            time.sleep(rng.uniform(0, 1.1 * to_exit))
        elif wait_for(lambda: set(temporaries(tmp_path)) - leftovers, process, started + 60):
            time.sleep(rng.uniform(0, 1.5 * writing) if trial else writing / 2)
        process.send_signal(signal.SIGKILL)
        status = process.wait(timeout=60)
        assert status in (0, -signal.SIGKILL), process.stderr.read()
        process.stderr.close()
        result = outcome(out, previous, alpha)
        outcomes[result] += 1
        leftovers_seen += bool(temporaries(tmp_path))
        finished += status == 0
        assert result == "new" or status != 0
        if result == "new":
            assert not temporaries(tmp_path), "a write kept the leftovers of killed ones"
            previous = out.read_bytes()
    process = train(wide_data, out, 1.0)
    assert process.wait(timeout=60) == 0, process.stderr.read()
    process.stderr.close()
    assert read_model(out).params["alpha"] == 1.0
    assert temporaries(tmp_path) == [] and decoy.read_bytes() == b"not ours"
    print(f"kill -9 x {KILLS} ({finished} runs finished first): {outcomes}, "
          f"temporary files left after {leftovers_seen}")
    assert leftovers_seen > 0, "no kill landed while a model was being written"
