"""Every input channel gives what the file gives: LIBSVM data through a pipe that
another process writes (read as /dev/fd/N, as ``<(zcat f.gz)`` gives it), a FIFO
that a thread writes, standard input (``-``, /dev/stdin) and file objects, plain
or compressed, read by load_libsvm, iter_libsvm and the command line; streams
cut short (empty, a first read shorter than the magic bytes, truncated gzip).
And a command whose output pipe closes (``| head``) ends quietly, status 0."""
import bz2
import contextlib
import fcntl
import functools
import gzip
import io
import itertools
import lzma
import os
import re
import shutil
import signal
import struct
import subprocess
import sys
import termios
import threading
import time
import zlib

import numpy as np
import pytest

from tests.support.cli_process import cli_command
from fastprox import load_model
from fastprox.cli import main
from fastprox.libsvm import iter_libsvm, load_libsvm
from test_cli import run
from test_libsvm import assert_same, stack

#: The shared data directory's data files (SOURCES.md), each fed through every channel.
FILES = ("a1a/a1a", "a1a/a1a.t", "a8a/a8a", "a9a/a9a", "a9a/a9a.t", "dna/dna.scale",
         "dna/dna.scale.t", "ijcnn1/ijcnn1.trn", "ijcnn1/ijcnn1.tst", "mnist_t10k/mnist_t10k",
         "pendigits/pendigits", "pendigits/pendigits.t", "pendigits/pendigits.scale",
         "pendigits/pendigits.scale.t", "rcv1_vw_small/rcv1_small.test.svm",
         "rcv1_vw_small/rcv1_small.train.svm", "reuters_moneyfx/reuters.trn",
         "reuters_moneyfx/reuters.tst", "satimage/satimage.scale", "satimage/satimage.scale.t",
         "usps/usps.t", "w1a/w1a", "w8a/w8a")

#: Train/test pairs run through the command line (binary, multiclass with CRLF lines, wide).
CLI_SETS = (("a9a/a9a", "a9a/a9a.t"), ("dna/dna.scale", "dna/dna.scale.t"),
            ("rcv1_vw_small/rcv1_small.train.svm", "rcv1_vw_small/rcv1_small.test.svm"))

COMPRESSORS = {"plain": lambda data: data, "gz": lambda data: gzip.compress(data, 1),
               "bz2": lambda data: bz2.compress(data, 1), "xz": lambda data: lzma.compress(data, preset=0)}

_names = itertools.count()


@pytest.fixture(scope="module")
def stored(tmp_path_factory, shared_data):
    """``stored(name, compression)``: the path of a shared data file as given, or of
    its compressed copy (made once, in a temporary directory)."""
    directory = tmp_path_factory.mktemp("compressed")

    def path(name, compression="plain"):
        (source,) = shared_data(name)
        if compression == "plain":
            return source
        copy = directory / f"{name.replace('/', '_')}.{compression}"
        if not copy.exists():
            copy.write_bytes(COMPRESSORS[compression](source.read_bytes()))
        return copy

    return path


@pytest.fixture(scope="module")
def cut(tmp_path_factory, stored):
    """Streams cut short: ``empty`` (no byte) and ``truncated`` (the first half of
    a9a.t gzipped)."""
    directory = tmp_path_factory.mktemp("cut")
    (directory / "empty").write_bytes(b"")
    data = stored("a9a/a9a.t", "gz").read_bytes()
    (directory / "truncated").write_bytes(data[:len(data) // 2])
    return directory


@functools.lru_cache(maxsize=1)
def from_file(path):
    """load_libsvm of the shared data file itself: what every channel must give."""
    return load_libsvm(path)


@contextlib.contextmanager
def fifo_from(path, directory):
    """A FIFO in ``directory`` that a thread writes ``path``'s bytes into once it
    is opened for reading. Then, until the end, a reader opening it again finds
    it empty rather than waiting forever for a writer (the bug was to open it
    twice); at the end, a writer still waiting for its reader is let go."""
    fifo = directory / f"fifo{next(_names)}"
    os.mkfifo(fifo)
    done = threading.Event()

    def write():
        with contextlib.suppress(BrokenPipeError), open(fifo, "wb") as out, open(path, "rb") as f:
            shutil.copyfileobj(f, out)
        while not done.wait(0.2):
            with contextlib.suppress(OSError):     # ENXIO: no reader waiting
                os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))

    writer = threading.Thread(target=write, daemon=True)
    writer.start()
    try:
        yield fifo
    finally:
        done.set()
        os.close(os.open(fifo, os.O_RDONLY | os.O_NONBLOCK))
        writer.join()


@contextlib.contextmanager
def fed(kind, path, directory):
    """``(DATA, stdin)`` for a reader of ``path``'s bytes: a FIFO in ``directory``
    (``kind`` "fifo"), or the read end of a pipe that another process (cat)
    writes into, read as standard input under the name ``kind`` (``-`` or
    /dev/stdin), or named /dev/fd/N (``kind`` "/dev/fd")."""
    if kind == "fifo":
        with fifo_from(path, directory) as fifo:
            yield fifo, None
        return
    writer = subprocess.Popen(["cat", str(path)], stdout=subprocess.PIPE)
    try:
        yield (f"/dev/fd/{writer.stdout.fileno()}" if kind == "/dev/fd" else kind), writer.stdout
    finally:
        writer.stdout.close()
        writer.wait()


def assert_equal_data(got, expected):
    """Bit-identical matrices, equal labels."""
    assert_same(got[0], expected[0])
    np.testing.assert_array_equal(got[1], expected[1])


def fastprox(*argv, stdin=None):
    """(status, stdout, stderr) of ``fastprox ARGV`` in a fresh interpreter whose
    standard input is ``stdin`` (a file object; none by default)."""
    command, env = cli_command(*argv)
    done = subprocess.run(command, env=env, stdin=stdin if stdin is not None else subprocess.DEVNULL,
                          capture_output=True)
    return done.returncode, done.stdout.decode(), done.stderr.decode()


# --- every data file, through every channel ----------------------------------------

def test_every_data_file_is_fed(shared_data):
    """FILES lists the shared data directory's data files, all of them."""
    directory = shared_data(*FILES)[0].parents[1]
    present = sorted(str(p.relative_to(directory)) for p in directory.rglob("*")
                     if p.is_file() and p.name != "SOURCES.md")
    assert present == sorted(FILES)


@pytest.mark.parametrize("name, kind, compression",
                         [(name, kind, compression) for name in FILES for kind in ("/dev/fd", "fifo")
                          for compression in ("plain", "gz")],
                         ids=lambda value: value)
def test_channel_reads_what_the_file_holds(name, kind, compression, stored, tmp_path):
    """load_libsvm, and iter_libsvm's chunks stacked (small blocks and chunks, so
    that lines and chunks straddle many reads), give the file's matrix and labels
    bit for bit."""
    expected = from_file(stored(name))
    source = stored(name, compression)
    with fed(kind, source, tmp_path) as (path, _):
        assert_equal_data(load_libsvm(path), expected)
    with fed(kind, source, tmp_path) as (path, _):
        assert_equal_data(stack(list(iter_libsvm(path, chunk_rows=997, block_bytes=1 << 16))), expected)


@pytest.mark.parametrize("compression", ["plain", "gz", "bz2", "xz"])
def test_standard_input_as_dash(compression, stored, monkeypatch):
    """``-`` reads standard input, here a pipe, from its first byte."""
    for read in (load_libsvm, lambda path: stack(list(iter_libsvm(path, chunk_rows=500)))):
        with fed("-", stored("dna/dna.scale.t", compression), None) as (path, stdin):
            monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(stdin))
            assert_equal_data(read(path), from_file(stored("dna/dna.scale.t")))


@pytest.mark.parametrize("compression", ["bz2", "xz"])
def test_bz2_and_xz_streams_through_a_pipe(compression, stored):
    with fed("/dev/fd", stored("a9a/a9a.t", compression), None) as (path, _):
        assert_equal_data(load_libsvm(path), from_file(stored("a9a/a9a.t")))


@pytest.mark.parametrize("compression", ["plain", "gz"])
def test_open_file_objects(compression, stored):
    """A binary file object is read from where it stands, and left open."""
    expected = from_file(stored("a1a/a1a"))
    with open(stored("a1a/a1a", compression), "rb") as f:
        assert_equal_data(load_libsvm(f), expected)
        assert not f.closed
    data = stored("a1a/a1a", compression).read_bytes()
    assert_equal_data(load_libsvm(io.BytesIO(data)), expected)
    with pytest.raises(TypeError, match="binary mode"):
        load_libsvm(io.StringIO("1 1:1\n"))


def test_empty_stream(cut):
    with fed("/dev/fd", cut / "empty", None) as (path, _):
        assert_equal_data(load_libsvm(path), load_libsvm(cut / "empty"))
    with fed("/dev/fd", cut / "empty", None) as (path, _):
        (X, y), = iter_libsvm(path)
    assert X.shape == (0, 1) and len(y) == 0


def pending(fd):
    """Bytes written into a pipe and not read yet (FIONREAD)."""
    return struct.unpack("i", fcntl.ioctl(fd, termios.FIONREAD, b"\0" * 4))[0]


@pytest.mark.parametrize("compression", ["plain", "gz", "xz"])
@pytest.mark.parametrize("first", [1, 2])
def test_first_read_shorter_than_the_magic_bytes(first, compression, stored):
    """The writer sends ``first`` bytes and waits for the reader to take them
    before the rest: the reader's first read holds fewer bytes than gzip's (2)
    or xz's (6) magic."""
    data = stored("a1a/a1a", compression).read_bytes()
    r, w = os.pipe()

    def write():
        os.write(w, data[:first])
        deadline = time.monotonic() + 10      # no endless wait if the reader fails
        while pending(w) and time.monotonic() < deadline:
            time.sleep(0.001)
        with open(w, "wb") as out:
            out.write(data[first:])

    writer = threading.Thread(target=write)
    writer.start()
    try:
        assert_equal_data(load_libsvm(f"/dev/fd/{r}"), from_file(stored("a1a/a1a")))
    finally:
        os.close(r)
        writer.join()


def test_truncated_gzip_stream_names_the_source_and_line(cut):
    """A gzip stream cut short is reported at the line it breaks off in (the whole
    lines before it parsed), whatever the channel."""
    data = (cut / "truncated").read_bytes()
    whole = zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(data).count(b"\n")
    assert whole > 1000
    with fed("/dev/fd", cut / "truncated", None) as (path, _):
        with pytest.raises(ValueError, match=f"^{path}:{whole + 1}: corrupt or truncated compressed data"):
            load_libsvm(path)
    with pytest.raises(ValueError, match=f":{whole + 1}: corrupt or truncated compressed data"):
        list(iter_libsvm(cut / "truncated", chunk_rows=100))


# --- the command line ----------------------------------------------------------------

@pytest.fixture(scope="module")
def models(tmp_path_factory, stored):
    """Each CLI_SETS training file's model, trained by ``fastprox train FILE`` with
    its width and classes given (nothing to infer): name -> path."""
    directory = tmp_path_factory.mktemp("models")
    trained = {}
    for name, _ in CLI_SETS:
        trained[name] = directory / f"{name.replace('/', '_')}.npz"
        argv = ["train", stored(name), "--model", trained[name], *width_and_classes(stored(name))]
        assert main(list(map(str, argv + ["--quiet"]))) == 0
    return trained


def width_and_classes(path):
    """The options that give train the width and classes of the file."""
    X, y = from_file(path)
    return ["--n-features", X.shape[1], "--classes", *(repr(float(label)) for label in np.unique(y))]


def needed_classes(path):
    """--classes for a multiclass file (a binary one's are recognized as they come)."""
    labels = np.unique(from_file(path)[1])
    return [] if len(labels) == 2 else ["--classes", ",".join(map(repr, labels.tolist()))]


@pytest.mark.parametrize("train, test", CLI_SETS)
def test_train_from_standard_input_equals_train_from_the_file(train, test, models, stored, tmp_path):
    """``train -`` from a pipe (with --test through a FIFO), with neither --n-features
    nor --classes (but for a multiclass file), gives the model that ``train FILE``
    gives with both: the stream is read once, the model grows with it and the
    classes are recognized as they come. ``train /dev/stdin`` the same from a
    gzip stream, and a FIFO."""
    expected = load_model(models[train])
    for kind, compression in (("-", "plain"), ("/dev/stdin", "gz"), ("fifo", "xz")):
        model = tmp_path / f"{compression}.npz"
        with fed(kind, stored(train, compression), tmp_path) as (path, stdin), \
                fifo_from(stored(test), tmp_path) as fifo:
            status, out, err = fastprox("train", path, *needed_classes(stored(train)), "--model", model,
                                        "--test", fifo, stdin=stdin)
        assert status == 0 and err.splitlines()[-1].startswith("total feature number = "), err
        assert f"rows of {fifo})" in out
        got = load_model(model)
        np.testing.assert_array_equal(got.coef_, expected.coef_)
        np.testing.assert_array_equal(got.intercept_, expected.intercept_)
        np.testing.assert_array_equal(got.classes_, expected.classes_)


#: Channels and compressions that the commands read from.
CLI_CHANNELS = (("-", "plain"), ("-", "gz"), ("/dev/stdin", "bz2"), ("fifo", "xz"))


@pytest.mark.parametrize("train, test", CLI_SETS)
def test_predict_from_every_channel_equals_the_file(train, test, models, stored, capsys, tmp_path):
    """``predict MODEL DATA --proba`` prints what it prints for the file."""
    status, expected, metrics = run(capsys, "predict", models[train], stored(test), "--proba")
    assert status == 0
    for kind, compression in CLI_CHANNELS:
        with fed(kind, stored(test, compression), tmp_path) as (path, stdin):
            status, out, err = fastprox("predict", models[train], path, "--proba", stdin=stdin)
            shown = "<stdin>" if path == "-" else str(path)
            assert (status, out, err) == (0, expected, metrics.replace(str(stored(test)), shown))


def test_info_from_every_channel_equals_the_file(stored, capsys, tmp_path):
    """``info DATA`` prints what it prints for the file, under the name given
    (``<stdin>`` for ``-``)."""
    status, expected, _ = run(capsys, "info", stored("dna/dna.scale"))
    assert status == 0
    for kind, compression in CLI_CHANNELS:
        with fed(kind, stored("dna/dna.scale", compression), tmp_path) as (path, stdin):
            shown = "<stdin>" if path == "-" else str(path)
            assert fastprox("info", path, stdin=stdin) == (0, shown + "\n" + expected.split("\n", 1)[1], "")


def test_empty_and_truncated_standard_input(models, cut):
    with fed("-", cut / "empty", None) as (path, stdin):
        assert fastprox("predict", models["a9a/a9a"], path, stdin=stdin) == (0, "", "")
    with fed("-", cut / "truncated", None) as (path, stdin):
        status, out, err = fastprox("predict", models["a9a/a9a"], path, stdin=stdin)
    whole = zlib.decompressobj(16 + zlib.MAX_WBITS).decompress((cut / "truncated").read_bytes()).count(b"\n")
    assert status == 1
    assert err.startswith(f"fastprox: error: <stdin>:{whole + 1}: corrupt or truncated compressed data")


#: Damage to a small compressed file (all of it within the bytes read to tell its format).
DAMAGE = {"cut": lambda data: data[:len(data) // 2],
          "flipped": lambda data: data[:len(data) // 2] + bytes([data[len(data) // 2] ^ 0xFF]) + data[len(data) // 2 + 1:]}

#: Small files for the commands that read them: LIBSVM, CRFsuite's and CoNLL-U text.
SMALL_TEXT = {"libsvm": "".join(f"{1 - 2 * (i % 2)} {i % 7 + 1}:0.5 {i % 5 + 9}:1.5\n" for i in range(400)),
              "crfsuite": "".join(f"B-NP\tw=w{i % 9}\tp=NN\n" + ("\n" if i % 5 == 4 else "") for i in range(600)),
              "conllu": "".join(f"1\tw{i % 9}\tw\tNOUN\tNN\t_\t0\troot\t_\t_\n"
                                f"2\t.\t.\tPUNCT\t.\t_\t1\tpunct\t_\t_\n\n" for i in range(200))}


@pytest.mark.parametrize("damage", DAMAGE)
@pytest.mark.parametrize("compression", ["gz", "bz2", "xz"])
def test_a_small_damaged_compressed_file_is_named_by_every_command(compression, damage, models, tmp_path,
                                                                     capsys):
    """A compressed file cut short or with a byte flipped, small enough for the whole of
    it to be read when its format is told (VW text or LIBSVM), gives each command one
    line naming the file and the line where the damage is found (it was an internal
    error, or gzip's and bzip2's message naming nothing), and so do the structured
    commands' readers. (A byte flipped may decode to other text, found malformed at a
    line before the checksum is read.)"""
    def damaged(kind):
        path = tmp_path / f"{kind}.{compression}"
        path.write_bytes(DAMAGE[damage](COMPRESSORS[compression](SMALL_TEXT[kind].encode())))
        return path
    libsvm, crfsuite, conllu = damaged("libsvm"), damaged("crfsuite"), damaged("conllu")
    found = "corrupt or truncated compressed data" if damage == "cut" else ""
    for path, argv in ((libsvm, ["info", libsvm]), (libsvm, ["train", libsvm, "--quiet"]),
                       (libsvm, ["predict", models["a9a/a9a"], libsvm]),
                       (crfsuite, ["tag", "train", crfsuite, "--format", "crfsuite", "--quiet"]),
                       (conllu, ["parse", "train", conllu, "--quiet"])):
        status, out, err = run(capsys, *argv)
        assert status == 1 and err.count("\n") == 1, (argv, err)
        assert re.match(rf"fastprox: error: {re.escape(str(path))}:[1-9]\d*: {found}", err), (argv, err)


def test_train_refuses_to_read_a_stream_twice(capsys):
    """A stream cannot be read once per pass, nor named twice: each is refused
    before any reading, naming the options that fix it."""
    status, _, err = run(capsys, "train", "-", "--passes", 2)
    assert status == 1 and "--passes 2 reads it 2 times" in err
    status, _, err = run(capsys, "train", "-", "--n-features", 10, "--classes", -1, 1, "--passes", 2)
    assert status == 1 and "--passes 2 reads it 2 times" in err
    status, _, err = run(capsys, "train", "-", "--n-features", 10, "--classes", -1, 1, "--test", "-")
    assert status == 1 and "<stdin> is given twice" in err
    status, _, err = run(capsys, "info", "-", "-")
    assert status == 1 and "<stdin> is given twice" in err


@pytest.mark.parametrize("command", ["info", "train", "predict"])
@pytest.mark.parametrize("channel", ["/dev/zero", "-"])
def test_an_endless_input_ends_every_command_at_its_first_line(command, channel, models):
    """/dev/zero as a path or as standard input: each command stops at once with the
    source and line (the former reader held the endless line, without end)."""
    argv = {"info": ["info"], "train": ["train"], "predict": ["predict", models["a9a/a9a"]]}[command]
    with open("/dev/zero", "rb") as zero:
        status, out, err = fastprox(*argv, channel, stdin=zero if channel == "-" else None)
    shown = "<stdin>" if channel == "-" else channel
    assert (status, out) == (1, "")
    assert err.startswith(f"fastprox: error: {shown}:1: NUL byte: this looks like binary data")


def test_a_line_beyond_max_line_bytes_names_the_option(tmp_path, capsys):
    path = tmp_path / "long.svm"
    path.write_bytes(b"1 1:1\n-1 " + b" ".join(b"%d:1" % i for i in range(1, 1000)) + b"\n")
    for argv in (["info", path], ["train", path, "--quiet"]):
        status, _, err = run(capsys, *argv, "--max-line-bytes", 100)
        assert status == 1 and err == (f"fastprox: error: {path}:2: line longer than --max-line-bytes 100 "
                                       "bytes; LIBSVM text holds one example per line, so this is not "
                                       "LIBSVM text (no newline: binary data, an endless stream), or give "
                                       "a larger --max-line-bytes\n")
    assert run(capsys, "info", path, "--max-line-bytes", 10_000)[0] == 0


def _table(err):
    """The progress table's lines of train's standard error, up to its summary."""
    return err.split("\nfinished run")[0].splitlines()


@pytest.mark.parametrize("options", [[], ["--zero-based", "--hash-bits", "12"], ["--chunk-rows", "100000"]])
def test_first_table_lines_come_with_their_rows_whatever_the_chunk(options, stored, tmp_path):
    """Rows written to train's standard input a few at a time: the table's lines for
    examples 1, 2, 4, 8 and 16 are printed once those rows are in, while the first
    chunk (10,000 rows) is far from complete (they waited for it: 10 s at 1,000 rows
    a second); and every line is the one a run from the file prints, bit for bit
    (the preview reads the indices as written, a9a being one-based)."""
    lines = stored("a9a/a9a").read_bytes().splitlines(keepends=True)[:3000]
    if "--zero-based" in options:
        lines = [re.sub(rb"(\d+):", lambda m: b"%d:" % (int(m.group(1)) - 1), line) for line in lines]
    path = tmp_path / "data.svm"
    path.write_bytes(b"".join(lines))
    expected = _table(fastprox("train", path, *options)[2])
    command, env = cli_command("train", "-", *options)
    process = subprocess.Popen(command, env=env, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE)
    guard = threading.Timer(120, process.kill)          # a hang fails the test, not a timing
    guard.start()
    try:
        process.stdin.write(b"".join(lines[:16]))
        process.stdin.flush()
        shown = []
        while not (shown and shown[-1].split()[2:3] == ["16"]):
            line = process.stderr.readline().decode()
            assert line, "standard error ended before the line of example 16"
            shown.append(line.rstrip("\n"))
        process.stdin.write(b"".join(lines[16:]))
        process.stdin.close()
        rest = process.stderr.read().decode()
        assert process.wait() == 0
    finally:
        guard.cancel()
    assert shown == expected[:len(shown)] and len(shown) == 3 + 5
    assert shown + _table(rest) == expected


# --- a closed output -----------------------------------------------------------------

def test_predict_into_head_ends_quietly(models, stored):
    """``fastprox predict MODEL FILE --proba | head -3``: head exits after three
    lines, with most of the output (680 kB) unwritten; predict ends with status
    0 and nothing on stderr."""
    command, env = cli_command("predict", models["a9a/a9a"], stored("a9a/a9a.t"), "--proba")
    predict = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    head = subprocess.Popen(["head", "-3"], stdin=predict.stdout, stdout=subprocess.PIPE)
    predict.stdout.close()
    out, _ = head.communicate()
    with predict.stderr:
        err = predict.stderr.read()
    assert (predict.wait(), err) == (0, b"")
    assert len(out.splitlines()) == 3 and out.startswith(b"labels -1 1\n")


@pytest.mark.parametrize("command", [["info", "a9a/a9a"], ["predict", "MODEL", "a9a/a9a.t"],
                                     ["train", "a1a/a1a"]])
def test_every_command_ends_quietly_on_a_closed_output(command, models, stored):
    """Standard output a pipe whose reader has gone before the first write."""
    argv = [models["a9a/a9a"] if a == "MODEL" else stored(a) for a in command[1:]]
    r, w = os.pipe()
    os.close(r)
    cli, env = cli_command(command[0], *argv)
    done = subprocess.run(cli, env=env, stdout=w, stderr=subprocess.PIPE)
    os.close(w)
    assert done.returncode == 0 and b"error" not in done.stderr and b"Traceback" not in done.stderr
    if command[0] != "train":       # train's table is on stderr, predict's metrics follow all output
        assert done.stderr == b""


# --- a pipe that stays open and quiet -------------------------------------------------

def test_closing_a_stream_stops_its_reader_waiting_on_a_quiet_pipe():
    """A stream read ahead (a parser thread, `read_ahead`) from a pipe whose writer keeps
    it open and writes no more, closed by its consumer (at an error, at Ctrl-C): the
    parser, waiting in the Pump for the pipe's next piece, is woken and ends, and so
    does the close (which waited for the next write or the writer's end)."""
    from fastprox.stream.files import labelled_chunks, read_ahead
    r, w = os.pipe()
    os.write(w, b"1 1:1\n-1 2:1\n")      # one chunk: the parser then waits for the pipe
    stream = read_ahead(labelled_chunks(f"/dev/fd/{r}", 2))
    assert next(stream)[0].shape == (2, 2)
    closing = threading.Thread(target=stream.close, daemon=True)
    closing.start()
    closing.join(timeout=60)        # a guard against a hang, not a timing
    hung = closing.is_alive()
    os.close(w)                     # (ends a hung close)
    closing.join()
    os.close(r)
    assert not hung, "the stream's close waited for the pipe's writer"


def test_ctrl_c_ends_a_train_waiting_on_a_quiet_pipe(tmp_path):
    """``fastprox train`` reading a FIFO whose writer (another program: Ctrl-C does not
    reach it) keeps it open and writes no more: Ctrl-C ends the command at once,
    status 130, no model written (it waited for the writer's next write or its end)."""
    fifo, model = tmp_path / "fifo", tmp_path / "model.npz"
    os.mkfifo(fifo)
    command, env = cli_command("train", fifo, "--model", model, "--quiet")
    # Python's Ctrl-C, as in a terminal, whatever pytest inherited (a background job of a
    # script ignores SIGINT, and so would its child; preexec_fn is unsafe beside threads)
    command[2] = "import signal; signal.signal(signal.SIGINT, signal.default_int_handler); " + command[2]
    train = subprocess.Popen(command, env=env, stderr=subprocess.PIPE)
    w = os.open(fifo, os.O_WRONLY)
    try:
        os.write(w, b"1 1:1\n-1 2:1\n" * 4)
        while pending(w):           # read by the command, which then waits for more
            time.sleep(0.001)
        train.send_signal(signal.SIGINT)
        try:
            _, err = train.communicate(timeout=60)      # a guard against a hang, not a timing
        except subprocess.TimeoutExpired:
            train.kill()
            train.communicate()
            pytest.fail("fastprox train did not end at Ctrl-C: it waited for the pipe's writer")
    finally:
        os.close(w)
    assert (train.returncode, err) == (130, b"fastprox: error: interrupted\n") and not model.exists()
