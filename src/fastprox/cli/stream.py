"""LIBSVM files as streams of chunks for the commands, and a one-pass summary.

Training and scanning take the reader's :class:`~fastprox.libsvm.Chunk`
objects as they are: ``array.array`` buffers, without NumPy or scipy (their
imports would double the start-up of a command on a small file). Only
evaluating and predicting, which multiply a matrix by the weights, make
NumPy arrays and scipy matrices.
"""
import os
import queue
import threading
from .._libsvm import count_labels
from ..libsvm import STDIN, half_readers, iter_chunks, read_halves, read_once, source_name

#: Default rows per chunk of the commands (--chunk-rows): small enough that a
#: chunk's arrays stay in cache and, in `train`, that parsing the next chunk
#: overlaps learning this one from the start; as iter_libsvm's default, the
#: rows from which zero_based="auto" decides.
CHUNK_ROWS = 10_000

#: Distinct labels counted by `scan`; beyond this the file is taken as
#: regression targets and only the number of rows is kept.
MAX_LABELS = 1000

#: Parsed rows `scan` may keep for `train`, in bytes: files whose rows fit are
#: parsed once, not once to scan and again to train (on a file of a few MB,
#: the second parse is a fifth of the command's time); larger ones are read
#: again, so memory stays bounded whatever the file size.
KEEP_BYTES = 64 << 20


def check_readable(paths):
    """Raise the usual OSError now for a missing or unreadable file, not after
    minutes of training on the files before it, and a ValueError for a source
    read once (standard input, a pipe: fastprox.libsvm.read_once) given twice:
    the second reading would find it empty. Only regular files are opened to
    check them: opening and closing a FIFO would end its writer's output."""
    seen = set()
    for path in paths:
        if path != STDIN and os.path.isdir(path):
            raise IsADirectoryError(21, "is a directory, not a LIBSVM file", path)
        if not read_once(path):
            with open(path, "rb"):
                pass
        elif path in seen:
            raise ValueError(f"{source_name(path)} is given twice, but it can be read only "
                             f"once (standard input, a pipe)")
        seen.add(path)


def labelled_chunks(path, chunk_rows):
    """``(chunk, y)`` of ``path``, y the chunk's labels as a NumPy array: what
    evaluating and predicting read (the model's margins need no scipy matrix;
    columns beyond its width weigh 0)."""
    import numpy as np
    for chunk in iter_chunks(path, chunk_rows=chunk_rows):
        yield chunk, np.asarray(chunk.y)


class Summary:
    """What one streaming pass over LIBSVM files finds: rows, width, non-zeros,
    label -> rows (None past MAX_LABELS) and, while they fit in the bytes it may
    keep, the chunks read (else None)."""

    def __init__(self, keep_bytes=0):
        self.rows = self.n_features = self.nnz = 0
        self.labels = {}
        self.chunks, self.kept_bytes, self.keep_bytes = [], 0, keep_bytes

    def add(self, chunk):
        self.rows += chunk.shape[0]
        self.n_features = max(self.n_features, chunk.shape[1])
        self.nnz += chunk.nnz
        if self.labels is not None and not count_labels(chunk.y, self.labels, MAX_LABELS):
            self.labels = None
        if self.chunks is not None:     # the buffers, and about 600 bytes of Python objects
            self.kept_bytes += 600 + sum(a.itemsize * len(a) for a in
                                         (chunk.data, chunk.indices, chunk.indptr, chunk.y, chunk.qids))
            if self.kept_bytes <= self.keep_bytes:
                self.chunks.append(chunk)
            else:
                self.chunks = None

    def merge(self, other, n_features):
        """Add another summary's counts, with the width of the two together."""
        self.rows += other.rows
        self.nnz += other.nnz
        self.n_features = max(self.n_features, n_features)
        if self.labels is not None and other.labels is not None:
            for label, rows in other.labels.items():
                self.labels[label] = self.labels.get(label, 0) + rows
        if other.labels is None or self.labels is not None and len(self.labels) > MAX_LABELS:
            self.labels = None
        self.chunks = None


def scan(paths, chunk_rows, keep_bytes=0):
    """One streaming pass over ``paths``: rows, width (as load_libsvm gives it),
    non-zeros and label counts, all files together; the chunks too if they fit
    in ``keep_bytes``."""
    summary = Summary(keep_bytes)
    for path in paths:
        halves = _scan_halves(path, chunk_rows)
        if halves is not None:
            summary.merge(*halves)
            continue
        for chunk in iter_chunks(path, chunk_rows=chunk_rows):
            summary.add(chunk)
    return summary


def _scan_halves(path, chunk_rows):
    """(summary, width) of a file that splits (fastprox.libsvm.split_point; on two
    cores its scan takes about half as long), its two halves read at once, as one
    pass would find them; None for other files, and whenever one pass could find
    otherwise or fail (no feature in the first half, an index 0 in the second
    half of a one-based file, a malformed line): the caller then reads the file
    in one pass, which raises the error at its line. The scan of a smaller file
    is one pass whose chunks `train` may keep (KEEP_BYTES; parsed rows take
    about 0.5-1.2 times their text)."""
    readers = half_readers(path, chunk_rows)
    if readers is None:
        return None
    first, second = readers
    summaries = [Summary(), Summary()]
    if not read_halves([first, second], lambda i, chunk: summaries[i].add(chunk)):
        return None
    offset = first.offset
    if offset is None or (offset == 1 and second.parser.min_index == 0):
        return None
    summaries[0].merge(summaries[1], second.parser.max_index - offset + 1)
    return summaries[0], summaries[0].n_features


def read_ahead(chunks, depth=2):
    """The chunks of an iterator, produced by a reader thread up to ``depth`` ahead:
    the parser and the kernel both release the GIL, so on two cores parsing the
    next chunk overlaps learning from this one (as Vowpal Wabbit's parser thread
    does). Order is kept; the reader's exception is raised here, in order."""
    ahead = queue.Queue(maxsize=depth)
    done = object()
    stop = threading.Event()

    def read():
        try:
            for item in chunks:
                if stop.is_set():
                    return
                ahead.put(item)
        except BaseException as e:          # handed to the consumer, raised there
            ahead.put(_Failure(e))
            return
        ahead.put(done)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        while True:
            item = ahead.get()
            if item is done:
                return
            if isinstance(item, _Failure):
                raise item.error
            yield item
    finally:
        stop.set()
        while reader.is_alive():            # unblock a reader waiting on a full queue
            try:
                ahead.get(timeout=0.05)
            except queue.Empty:
                pass
        reader.join()


class _Failure:
    """The reader thread's exception, handed to the consumer."""

    def __init__(self, error):
        self.error = error
