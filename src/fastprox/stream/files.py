"""LIBSVM files as streams of chunks: checked before any work, opened so that a
pipe's writer never waits (`pumped`), read ahead by a thread (`read_ahead`), their
ids hashed (`hashed`), a row's place named for errors (`locate`).

Training takes the reader's :class:`~fastprox.libsvm.Chunk` objects as they are:
``array.array`` buffers, without NumPy or scipy (their imports would double the
start-up of a command on a small file). Only evaluating and predicting, which
multiply a matrix by the weights, make NumPy arrays (`labelled_chunks`).
"""
import contextlib
import io
import math
import os
import queue
import threading
import time

from .._hashing import hash_indices
from ..libsvm import (MAX_LINE_BYTES, STDIN, Chunk, iter_chunks, open_source, read_once, refuse_directory,
                      source_name, split_points)
from ..vw.reader import vw_reader

#: Default rows per chunk of a stream (the commands' --chunk-rows): small enough that a
#: chunk's arrays stay in cache and, in `train`, that parsing the next chunk
#: overlaps learning this one from the start; as iter_libsvm's default, the
#: rows from which zero_based="auto" decides.
CHUNK_ROWS = 10_000


#: VW text's bytes per span that one of PARSERS threads parses while the other parses
#: the next (`vw_chunks`): a few chunks' worth, so that a thread holds a whole span's
#: chunks (SPAN_CHUNKS) while the stream takes the other's.
SPAN_BYTES = 1 << 20
PARSERS = 2
SPAN_CHUNKS = 4
#: The spans on which one parser thread is timed against the kernel (`vw_chunks`), after
#: as many spans of start-up, and the kernel's share of the parser's CPU time from which the
#: kernel is the slower of the two even with one parser: a second would not shorten
#: the pass (the reader and the kernel already fill the two cores) but compete with
#: them for the cores and their caches.
TRIAL = 2
KERNEL_SHARE = 0.5


def check_readable(paths):
    """Raise the usual OSError now for a missing or unreadable file, not after
    minutes of training on the files before it, and a ValueError for a source
    read once (standard input, a pipe: fastprox.libsvm.read_once) given twice:
    the second reading would find it empty. Only regular files are opened to
    check them: opening and closing a FIFO would end its writer's output."""
    seen = set()
    for path in paths:
        refuse_directory(path)
        if not read_once(path):
            with open(path, "rb"):
                pass
        elif path in seen:
            raise ValueError(f"{source_name(path)} is given twice, but it can be read only "
                             f"once (standard input, a pipe)")
        seen.add(path)


def chunks_of(source, format="libsvm", vw_bits=None, terms=(), n_features=None, names=None, crossing=None,
              **reading):
    """The chunks of ``source`` in its ``format``: iter_chunks's of LIBSVM text (the
    other arguments its own; with ``crossing``, a fastprox.stream.groups.GroupCrossing,
    the file's features are the group file's and each chunk's rows are crossed), iter_vw_chunks's
    of VW text (``vw_bits`` and the interactions ``terms``, lines without a label read if
    ``unlabelled``, the namespaces of ``selection`` (fastprox.vw.reader.namespace_selection's
    dict) read; the width is 2^vw_bits, ``zero_based`` means nothing; ``names``, a
    dict, is filled with the columns' feature names, `iter_vw_chunks`'s)."""
    if crossing is not None:
        return map(crossing.crossed, iter_chunks(source, n_features=crossing.n, **reading))
    if format == "vw":
        return vw_chunks(source, vw_bits, terms, reading["chunk_rows"], preview=reading.get("preview"),
                         unlabelled=reading.get("unlabelled", False), names=names,
                         max_line_bytes=reading.get("max_line_bytes", MAX_LINE_BYTES),
                         selection=reading.get("selection"))
    return iter_chunks(source, n_features=n_features, **reading)


def vw_chunks(source, bits, terms, chunk_rows, names=None, **vw):
    """iter_vw_chunks's chunks of ``source``; a plain regular file of more than two
    spans of SPAN_BYTES is parsed a span at a time in turn by one thread, joined by
    a second (`parallel_chunks`) unless, on TRIAL spans after the first TRIAL, the
    thread that consumes the rows (the kernel's) took at least KERNEL_SHARE of the
    parser's CPU time: it would then wait for neither, and a third thread would only
    compete for the two cores. Names are gathered in one pass (in the order they are
    met). The rows are the same, in the same order; an error names its line in the
    file."""
    spans = [] if names is not None or not isinstance(source, (str, os.PathLike)) else \
        split_points(source, os.path.getsize(source) // SPAN_BYTES, 2 * SPAN_BYTES)
    if not spans:
        return iter(vw_reader(source, bits, terms, chunk_rows, names=names, **vw))
    preview = vw.pop("preview", None)
    starts = [0] + spans
    readers = {}

    def read_span(i, k):        # (in parser thread k, with its reader)
        span = (starts[i], starts[i + 1] if i + 1 < len(starts) else None)
        if k not in readers:
            readers[k] = vw_reader(source, bits, terms, chunk_rows, span=span, preview=preview if i == 0 else None, **vw)
            return iter(readers[k])
        return readers[k].read_span(span)

    def failed(i, error):
        """Span i's error again, its line counted from the file's start (the lines
        before the span counted; the span read again)."""
        if not i or not isinstance(error, ValueError):
            return error
        lines, left = 0, starts[i]
        with open(source, "rb") as f:
            while left > 0:
                piece = f.read(min(left, SPAN_BYTES))
                if not piece:
                    break
                lines, left = lines + piece.count(b"\n"), left - len(piece)
        span = (starts[i], starts[i + 1] if i + 1 < len(starts) else None)
        for _ in vw_reader(source, bits, terms, chunk_rows, span=span, first_line=lines, **vw):
            pass
        return error

    return parallel_chunks(len(starts), read_span, failed, trial=TRIAL)


def kernel_clock():
    """A function giving the CPU seconds of the thread that consumes the rows (the
    main thread: the commands' kernel; NaN once it cannot be read), or None where
    threads have no CPU clock."""
    try:
        clock = time.pthread_getcpuclockid(threading.main_thread().ident)
        time.clock_gettime(clock)
    except (AttributeError, OSError):
        return None

    def seconds():
        try:
            return time.clock_gettime(clock)
        except OSError:
            return math.nan     # (no decision: NaN compares false)
    return seconds


def parallel_chunks(n, read_span, failed, parsers=PARSERS, depth=SPAN_CHUNKS, trial=None):
    """The chunks of ``read_span(i, k)`` for i in range(n), in order, span i parsed by
    the parser thread k that claimed it (the spans are claimed in order), each thread
    at most ``depth`` chunks ahead of the stream (the memory stays bounded). With
    ``trial``, thread 0 alone parses the first 2 * ``trial`` spans, and the others join
    only if the kernel (`kernel_clock`) took less than KERNEL_SHARE of its CPU time over
    the last ``trial`` of them (decided once, past the first chunks' start-up). A span's exception is raised
    in its place in the order, as ``failed(i, error)`` raises or returns it. Closing
    the iterator stops the threads, a thread waiting for a pipe included: the
    `Pump`s made in them are closed first (`_PARSING`)."""
    ahead = [queue.Queue(maxsize=depth) for _ in range(parsers)]
    pumps = _Pumps()
    stop, go = threading.Event(), threading.Event()
    claimed = threading.Condition()
    owner, state = [None] * n, {"next": 0, "alone": False}
    end = object()
    clock = kernel_clock() if trial is not None and parsers > 1 else None
    if clock is None:
        go.set()

    def claim(k):
        """The next span, claimed by thread k; None when none is left."""
        with claimed:
            i = state["next"]
            if i >= n or (k and state["alone"]):
                return None
            state["next"], owner[i] = i + 1, k
            claimed.notify_all()
            return i

    def parse(k):
        mark = None     # thread 0's and the kernel's CPU times when span `trial` starts
        _PARSING.pumps = pumps
        try:
            if k:
                go.wait()
            while not stop.is_set():
                i = claim(k)
                if i is None:
                    return
                if i == trial and not go.is_set():
                    mark = (time.thread_time(), clock())
                for chunk in read_span(i, k):
                    if stop.is_set():
                        return
                    ahead[k].put(chunk)
                ahead[k].put(end)
                if mark is not None and i == 2 * trial - 1 and not go.is_set():
                    state["alone"] = clock() - mark[1] >= KERNEL_SHARE * (time.thread_time() - mark[0])
                    go.set()
        except BaseException as e:          # raised by the stream, in its place
            ahead[k].put(_Failure(e))
        finally:
            if not k:
                go.set()        # (the others wait no longer than thread 0 runs)

    threads = [threading.Thread(target=parse, args=(k,), daemon=True) for k in range(parsers)]
    for thread in threads:
        thread.start()
    try:
        for i in range(n):
            with claimed:
                while owner[i] is None:
                    claimed.wait()
            k = owner[i]
            while True:
                item = ahead[k].get()
                if item is end:
                    break
                if isinstance(item, _Failure):
                    raise failed(i, item.error)
                yield item
    finally:
        stop.set()
        go.set()
        pumps.close()
        for thread in threads:
            while thread.is_alive():        # unblock a thread waiting on a full queue
                for q in ahead:
                    try:
                        q.get_nowait()
                    except queue.Empty:
                        pass
                thread.join(0.01)


def labelled_chunks(path, chunk_rows, bits=None, zero_based="auto", max_line_bytes=MAX_LINE_BYTES, **vw):
    """``(chunk, y, where)`` of ``path``, its ids hashed into 2^bits buckets if
    ``bits`` (`hashed`), y the chunk's labels as a NumPy array, ``where(i)`` the
    place of its row i (`locate`): what evaluating and predicting read (the model's
    margins need no scipy matrix; columns beyond its width weigh 0). ``vw``: VW
    text's arguments (`chunks_of`)."""
    import numpy as np
    row = 0
    with pumped(path) as source:
        for chunk in chunks_of(source, chunk_rows=chunk_rows, zero_based=zero_based,
                               max_line_bytes=max_line_bytes, **vw):
            yield hashed(chunk, bits), np.asarray(chunk.y), row_locator(path, row)
            row += chunk.shape[0]


def row_locator(path, row):
    """``where(i)``: the place of data row ``row + i + 1`` of ``path`` (`locate`)."""
    return lambda i: locate(path, row + i + 1)


def hashed(chunk, bits):
    """The chunk with its feature ids hashed into 2^bits buckets (fastprox._hashing:
    a bucket's values in a row summed), of width 2^bits; the chunk itself when
    ``bits`` is None."""
    if bits is None:
        return chunk
    data, indices, indptr, _ = hash_indices(chunk.data, chunk.indices, chunk.indptr, bits)
    return Chunk(data, indices, indptr, chunk.y, chunk.qids, 1 << bits)


def locate(path, row):
    """Where data row ``row`` (1-based, as counted by the reader: lines with a label)
    of ``path`` is, for a message: "PATH:LINE" for a file, found by reading it
    again up to that row (this runs only to report an error), or "NAME: data row
    ROW" for a source read once (standard input, a pipe)."""
    if read_once(path):
        return f"{source_name(path)}: data row {row}"
    rows = 0
    with open_source(path) as f:
        for number, line in enumerate(io.BufferedReader(f, 1 << 20), 1):
            rows += bool(line.split(b"#", 1)[0].strip())
            if rows == row:
                return f"{source_name(path)}:{number}"
    return f"{source_name(path)}: data row {row}"


@contextlib.contextmanager
def pumped(path):
    """``path`` as the reader should open it: a regular file as it is; a source read
    once (standard input, a pipe, a FIFO) as a `Pump`, so that its writer (``zcat f.gz
    |``) keeps writing while the reader parses."""
    if not read_once(path):
        yield path
        return
    pump = Pump(0, source_name(path)) if path == STDIN else Pump(os.open(path, os.O_RDONLY),
                                                                  source_name(path), owned=True)
    try:
        yield pump
    finally:
        pump.close()


#: A parser thread's (`parallel_chunks`): ``pumps``, the `_Pumps` where each `Pump` made
#: in that thread enters itself, which the stream closes when it is closed: a parser
#: waiting for a pipe whose writer keeps it open and writes nothing would keep the
#: stream's close (at an error, at Ctrl-C) waiting for the next write.
_PARSING = threading.local()


class _Pumps:
    """The Pumps made in a stream's parser threads, closed with the stream; one made
    after (its parser had not yet opened the pipe when the stream closed) is closed
    at once."""

    def __init__(self):
        self.lock, self.pumps, self.closed = threading.Lock(), [], False

    def enter(self, pump):
        with self.lock:
            if not self.closed:
                self.pumps.append(pump)
                return
        pump.close()

    def close(self):
        with self.lock:
            self.closed, pumps = True, self.pumps
        for pump in pumps:
            pump.close()


class Pump(io.RawIOBase):
    """A pipe read by a thread of its own into a queue of up to PUMP_BYTES: the reader
    reads a block and parses it before it reads again, and a pipe holds 64 kB, so its
    writer would wait for every parse; drained as it fills, it does not. Closing it
    stops the thread at its next piece (a reader that stopped early, at an error,
    leaves no thread filling the queue: /dev/zero never ends) and wakes a reader
    waiting for a piece, whose read then raises; the thread closes the descriptor
    if ``owned``, once it no longer reads it."""

    #: Bytes read from the pipe at a time, and pieces queued at most.
    PIECE, PIECES = 1 << 20, 16

    def __init__(self, fd, name, owned=False):
        super().__init__()
        self.name, self.fd, self.owned = name, fd, owned
        self.pieces = queue.Queue(self.PIECES)
        self.piece, self.at = b"", 0
        self.stopped = False
        self.thread = threading.Thread(target=self._pump, daemon=True)
        self.thread.start()
        stream = getattr(_PARSING, "pumps", None)
        if stream is not None:
            stream.enter(self)

    def _pump(self):
        """Read the pipe to its end (or until closed) into the queue; an OSError is
        handed on, in order."""
        try:
            while not self.stopped:
                try:
                    piece = os.read(self.fd, self.PIECE)
                except OSError as e:
                    self.pieces.put(_Failure(e))
                    return
                self.pieces.put(piece)
                if not piece:
                    return
        finally:
            if self.owned:
                os.close(self.fd)

    def close(self):
        """Stop the thread (a piece it waits to queue is let in, then it ends), and
        wake a reader waiting for a piece (from another thread: `parallel_chunks`)."""
        self.stopped = True
        while True:
            try:
                self.pieces.get_nowait()
            except queue.Empty:
                break
        with contextlib.suppress(queue.Full):      # (full: no reader waits)
            self.pieces.put_nowait(_Failure(ValueError(f"{self.name}: read after the stream was closed")))
        super().close()

    def readable(self):
        return True

    def readinto(self, into):
        """What the queue holds next, up to len(into) bytes; 0 at the end."""
        if self.at == len(self.piece):
            self.piece, self.at = self.pieces.get(), 0
            if isinstance(self.piece, _Failure):
                raise self.piece.error
            if not self.piece:
                self.pieces.put(b"")        # the end stays the end
                return 0
        n = min(len(into), len(self.piece) - self.at)
        into[:n] = self.piece[self.at:self.at + n]
        self.at += n
        return n


def read_ahead(chunks, depth=2):
    """The chunks of an iterator, produced by a reader thread up to ``depth`` ahead:
    the parser and the kernel both release the GIL, so on two cores parsing the
    next chunk overlaps learning from this one (as Vowpal Wabbit's parser thread
    does). Order is kept; the reader's exception is raised here, in order: one span
    parsed by one thread (`parallel_chunks`)."""
    return parallel_chunks(1, lambda i, k: chunks, lambda i, error: error, parsers=1, depth=depth)


class _Failure:
    """The reader thread's exception, handed to the consumer."""

    def __init__(self, error):
        self.error = error
