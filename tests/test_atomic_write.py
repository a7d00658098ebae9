"""Atomic writes (fastprox._writes.atomic_write, behind dump_libsvm, save_model and
``fastprox train --model``): the target is the old file or the new one, never a
torn one, even under ``kill -9``; a write removes the temporary files that
interrupted writes to the same target left, and no other file; the directory
is fsynced after the rename."""
import errno
import gzip
import os
import random
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import threading
import time

import numpy as np
import pytest
import scipy.sparse as sp

from tests.support.cli_process import cli_command
from fastprox import dump_libsvm
from fastprox._writes import atomic_write, check_output
from fastprox.model_io import read_model

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="flock and SIGKILL are POSIX")

TARGET = "model.npz"


def temporaries(directory, target=TARGET):
    """The temporary files of writes to ``target`` in ``directory``."""
    return sorted(p for p in os.listdir(directory) if p.startswith(f".{target}.") and p.endswith(".tmp"))


def write_bytes(path, content):
    atomic_write(os.fspath(path), lambda f: f.write(content))


# --- leftovers ------------------------------------------------------------------

def test_next_write_removes_leftovers_of_its_target_only(tmp_path):
    leftovers = [tempfile.mkstemp(dir=tmp_path, prefix=f".{TARGET}.", suffix=".tmp") for _ in range(3)]
    for fd, path in leftovers:
        os.write(fd, b"half a model")
        os.close(fd)
    (tmp_path / f".{TARGET}.abcd_123.tmp").write_bytes(b"x")           # mkstemp's alphabet
    others = [f".{TARGET}.ABCDEFGH.tmp", f".{TARGET}.abcdefg.tmp", f".{TARGET}.abcdefghi.tmp",
              f".{TARGET}.abcdefgh.tmp.keep", f"{TARGET}.abcdefgh.tmp", f".{TARGET}x.abcdefgh.tmp",
              ".model.abcdefgh.tmp", ".other.npz.abcdefgh.tmp", f".{TARGET}.abc.efgh.tmp",
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
from fastprox._writes import atomic_write

def write(f):
    f.write(b"child's first half, ")
    f.flush()
    print("writing", flush=True)
    sys.stdin.readline()
    f.write(b"child's second half")

atomic_write(sys.argv[1], write)
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
        atomic_write(os.fspath(target), fail)
    assert target.read_bytes() == b"old" and os.listdir(tmp_path) == [TARGET]


# --- what the path leads to ---------------------------------------------------------

def test_a_symbolic_link_keeps_itself_and_its_target_is_replaced(tmp_path):
    """A link (relative, to another directory) stays a link; its target takes the
    write, atomically in the target's directory; a dangling link's target is made."""
    (tmp_path / "models").mkdir()
    (tmp_path / "models" / TARGET).write_bytes(b"old")
    link = tmp_path / "current.npz"
    link.symlink_to(os.path.join("models", TARGET))
    write_bytes(link, b"new")
    assert link.is_symlink() and os.readlink(link) == os.path.join("models", TARGET)
    assert (tmp_path / "models" / TARGET).read_bytes() == b"new"
    assert sorted(os.listdir(tmp_path / "models")) == [TARGET]
    dangling = tmp_path / "next.npz"
    dangling.symlink_to(tmp_path / "models" / "next-target.npz")
    write_bytes(dangling, b"made")
    assert dangling.is_symlink() and (tmp_path / "models" / "next-target.npz").read_bytes() == b"made"


def test_a_device_or_a_fifo_is_written_directly(tmp_path):
    """A null device stays the device (renaming over it would replace it: as root,
    the system's /dev/null; as root the test writes to a node of its own, made
    here, so that a regression cannot replace the system's); a FIFO stays a FIFO
    and its reader gets the bytes, compressed as the name asks."""
    null = "/dev/null"
    if os.geteuid() == 0:
        null = tmp_path / "null"
        os.mknod(null, stat.S_IFCHR | 0o666, os.makedev(1, 3))
    write_bytes(null, b"gone")
    assert stat.S_ISCHR(os.stat(null).st_mode)
    if null != "/dev/null":
        os.unlink(null)
    fifo = tmp_path / "pipe.gz"
    os.mkfifo(fifo)
    got = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()))
    reader.start()
    atomic_write(fifo, lambda f: f.write(b"through the pipe"))
    reader.join(timeout=60)
    assert gzip.decompress(got[0]) == b"through the pipe"
    assert stat.S_ISFIFO(os.stat(fifo).st_mode) and os.listdir(tmp_path) == ["pipe.gz"]


def test_a_directory_or_a_socket_is_refused(tmp_path):
    with pytest.raises(IsADirectoryError) as info:
        write_bytes(tmp_path, b"x")
    assert info.value.filename == os.fspath(tmp_path)
    server = socket.socket(socket.AF_UNIX)
    try:
        server.bind(os.fspath(tmp_path / "socket"))
        with pytest.raises(ValueError, match="socket or another special file, which cannot be written"):
            write_bytes(tmp_path / "socket", b"x")
    finally:
        server.close()


@pytest.mark.parametrize("where, error", [("mkstemp", errno.EROFS), ("write", errno.ENOSPC),
                                          ("replace", errno.EACCES)])
def test_errors_name_the_path_given_not_the_temporary_file(tmp_path, monkeypatch, where, error):
    """A read-only directory, a full disk, a refused rename: the OSError names the
    path given (the user's), and no temporary file is left."""
    def fail(*args, **kwargs):
        raise OSError(error, os.strerror(error), args[0] if args and isinstance(args[0], str) else None)

    target = tmp_path / TARGET
    if where == "write":        # (the file's own writes fail: a full disk)
        monkeypatch.setattr(os, "fdopen", lambda fd, mode: (os.close(fd), open("/dev/full", mode))[1])
        with pytest.raises(OSError) as info:
            write_bytes(target, b"x")
    else:
        monkeypatch.setattr(tempfile if where == "mkstemp" else os, where, fail)
        with pytest.raises(OSError) as info:
            write_bytes(target, b"x")
    assert (info.value.errno, info.value.filename) == (error, os.fspath(target))
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize("compress", [False, True])
def test_the_datas_errors_are_not_the_outputs(tmp_path, compress):
    """An OSError that the data being written raise (a file read while the output is
    written: train -p reads its data as it writes the predictions) passes as it is,
    not named as the output's; the output's own, a full device, names it."""
    target = tmp_path / ("out.gz" if compress else "out")
    for error in (OSError(errno.EIO, "Input/output error", "data.svm"), OSError(errno.EIO, "Input/output error")):
        def write(f):
            f.write(b"some")
            raise error
        with pytest.raises(OSError) as info:
            atomic_write(target, write)
        assert info.value is error and os.listdir(tmp_path) == []
    full = tmp_path / target.name      # (a link to a full device, written through the compressor its name asks)
    full.symlink_to("/dev/full")
    with pytest.raises(OSError) as info:
        atomic_write(full, lambda f: f.write(b"x" * (1 << 17)))
    assert info.value.errno == errno.ENOSPC and info.value.filename == os.fspath(full)
    assert info.value.strerror.endswith("; free some space, or write to another disk")


def test_check_output_refuses_what_would_fail_or_destroy_an_input(tmp_path, monkeypatch):
    data = tmp_path / "data.svm"
    data.write_bytes(b"1 1:1\n")
    os.link(data, tmp_path / "hard.svm")
    (tmp_path / "soft.svm").symlink_to(data)
    for output in (data, tmp_path / "hard.svm", tmp_path / "soft.svm"):
        with pytest.raises(ValueError, match=f"^--model {output} is the input {data}: writing it would "
                                             "destroy the data; give another path$"):
            check_output(output, "--model", [data])
    with pytest.raises(ValueError, match="is a directory; give a file path"):
        check_output(tmp_path, "--out")
    with pytest.raises(ValueError, match=f"directory {tmp_path / 'no'} does not exist; create it first"):
        check_output(tmp_path / "no" / "m.npz", "--model")
    check_output("/dev/null", "--out", [data])
    check_output(tmp_path / "new.npz", "--model", [data, "-"])
    monkeypatch.setattr(os, "access", lambda path, mode: False)
    with pytest.raises(ValueError, match=f"directory {tmp_path} is not writable"):
        check_output(tmp_path / "new.npz", "--model", [data])


def test_commands_refuse_outputs_before_any_work(tmp_path, monkeypatch, capsys):
    """An output that is an input, or in a directory that cannot be written, stops
    train and predict at once: one line, no table, no model, the data intact."""
    from fastprox.cli import main
    data = tmp_path / "data.svm"
    dump_libsvm(sp.random(200, 20, density=0.3, format="csr", random_state=0), np.arange(200) % 2, data)
    before = data.read_bytes()
    assert main(["train", str(data), "--model", str(tmp_path / "m.npz"), "--quiet"]) == 0
    capsys.readouterr()
    for argv, message in (
            (["train", data, "--model", data], f"--model {data} is the input {data}"),
            (["train", data, "--test", tmp_path / "m.npz", "--model", tmp_path / "m.npz"], "is the input"),
            (["predict", tmp_path / "m.npz", data, "--out", data], f"-p/--out {data} is the input {data}"),
            (["predict", tmp_path / "m.npz", data, "-p", tmp_path / "m.npz"], "-p/--out "),     # named --out alone
            (["predict", tmp_path / "m.npz", data, "--out", tmp_path / "m.npz"], "is the input")):
        assert main(list(map(str, argv))) == 1
        out, err = capsys.readouterr()
        assert out == "" and err.count("\n") == 1 and message in err, err
    monkeypatch.setattr(os, "access", lambda path, mode: False)
    assert main(["train", str(data), "--model", str(tmp_path / "new.npz")]) == 1
    out, err = capsys.readouterr()
    assert out == "" and err == (f"fastprox: error: --model {tmp_path / 'new.npz'}: directory {tmp_path} is "
                                 "not writable (the file is written there, then renamed); give a path in a "
                                 "writable directory\n")
    assert data.read_bytes() == before and sorted(os.listdir(tmp_path)) == ["data.svm", "m.npz"]


def test_train_refuses_two_outputs_to_one_file(tmp_path, capsys):
    """Two of train's outputs (--model, --readable-model, --invert-hash, --predictions)
    naming one file, new or not, by the same or another path (./, a symbolic or hard
    link), stop train before any work: the one written last replaced the other, exit 0
    (a new file), or the message called the other output "the input". /dev/null takes
    several."""
    from fastprox.cli import main
    data = tmp_path / "data.svm"
    dump_libsvm(sp.random(200, 20, density=0.3, format="csr", random_state=0), np.arange(200) % 2, data)
    model = tmp_path / "m.npz"
    assert main(["train", str(data), "--model", str(model), "--quiet"]) == 0
    before = model.read_bytes()
    (tmp_path / "soft").symlink_to(model)
    os.link(model, tmp_path / "hard")
    new = tmp_path / "new.txt"
    for first, second in ((["--model", new], ["--predictions", f"{tmp_path}/./new.txt"]),
                          (["--readable-model", new], ["--invert-hash", new]),
                          (["--model", model], ["--predictions", model]),
                          (["--model", tmp_path / "soft"], ["--invert-hash", model]),
                          (["--model", model], ["--predictions", tmp_path / "hard"])):
        capsys.readouterr()
        assert main(list(map(str, ["train", data, "--quiet", *first, *second]))) == 1
        out, err = capsys.readouterr()
        assert out == "" and err == (f"fastprox: error: {second[0]} {second[1]} is the file of {first[0]} too: "
                                     f"the one written last would replace the other; give each its own path\n")
        assert not new.exists() and model.read_bytes() == before
    assert main(["train", str(data), "--quiet", "--predictions", "/dev/null", "--readable-model", "/dev/null"]) == 0


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


def test_sigterm_stops_train_as_ctrl_c_does(tmp_path):
    """SIGTERM (kill, a scheduler's stop) in the middle of `fastprox train`, while -p's
    file is being written (it is, the whole run): exit status 143, one line saying so,
    the old predictions and model kept, no temporary file left. (Python's default was
    to die at once, leaving the temporary file to the next write.)"""
    data = tmp_path / "d.svm"
    data.write_text("".join(f"{1 if i % 3 else -1} {1 + i % 7}:1 {8 + i % 5}:0.5\n" for i in range(300)))
    predictions, model = tmp_path / "p.txt", tmp_path / "m.npz"
    predictions.write_text("old predictions\n")
    model.write_bytes(b"old model")
    command, env = cli_command("train", data, "--passes", 1_000_000, "--holdout-off", "-p", predictions,
                               "-f", model, "--quiet")
    process = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        assert wait_for(lambda: temporaries(tmp_path, "p.txt"), process, time.perf_counter() + 60)
        process.send_signal(signal.SIGTERM)
        status = process.wait(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
    err = process.stderr.read()
    process.stderr.close()
    assert status == 143 and err == "fastprox: error: terminated (SIGTERM)\n", (status, err)
    assert predictions.read_text() == "old predictions\n" and model.read_bytes() == b"old model"
    assert sorted(os.listdir(tmp_path)) == ["d.svm", "m.npz", "p.txt"]


@pytest.mark.slow
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
