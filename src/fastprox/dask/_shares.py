"""The data of a cluster run as shares: what one task reads, on the worker that
runs it, a chunk at a time (memory: the model and a chunk or two).

A `FileShare` is a LIBSVM file (plain or compressed), read by the worker with
fastprox's streaming reader (`iter_chunks`), never through the client. A
`BlockShare` is one block of a Dask collection (a row block of a dask.array,
sparse or dense, with its labels, or a partition of a bag of ``(X, y)``
blocks): its data arrive with the task, as Dask moves them. Both yield the
triples `fastprox.stream.trainer.Trainer` trains on, ``(rows, labels, origin)``, and
name a row's place for errors (``locator``): a file's line, a block's row.
"""
import glob
import os

from .._numpy import np
from .._validation import canonical, float_csr
from ..hashing import hash_features
from ..libsvm import MAX_LINE_BYTES, Chunk, iter_chunks, refuse_directory, source_name
from ..stream.files import CHUNK_ROWS, hashed, pumped, read_ahead, row_locator
from ._labels import coded


class FileShare:
    """A LIBSVM file, read where the task runs."""

    def __init__(self, path, chunk_rows=CHUNK_ROWS, n_features=None, hash_bits=None, zero_based="auto",
                 max_line_bytes=MAX_LINE_BYTES):
        self.path, self.n_features, self.hash_bits = os.fspath(path), n_features, hash_bits
        self.reading = dict(chunk_rows=chunk_rows, zero_based=zero_based, max_line_bytes=max_line_bytes)
        self.name = source_name(self.path)

    @property
    def size(self):
        """Bytes on disk (compressed files count as stored): the share's weight when
        shares are dealt to workers."""
        try:
            return os.path.getsize(self.path)
        except OSError:
            return 0

    def chunks(self, data=None, ahead=True):
        """(chunk, labels, first row) of the file, read ahead by a thread as `fastprox
        train` reads (the parser and the kernel overlap); ``ahead`` False: parsed as
        they are asked for, in the caller's thread (a reader that stops after its
        first rows, `_tasks.start`, parses none it does not use)."""
        return read_ahead(self._read()) if ahead else self._read()

    def _read(self):
        refuse_directory(self.path)     # (on the worker: the client may not see its files)
        row = 0
        with pumped(self.path) as source:
            for chunk in iter_chunks(source, n_features=self.n_features, **self.reading):
                yield hashed(chunk, self.hash_bits), chunk.y, row
                row += chunk.shape[0]

    def locator(self, row):
        """``where(i)``: "FILE:LINE" of the chunk's row i (the chunk starting at data row ``row``)."""
        return row_locator(self.path, row)


class BlockShare:
    """Block ``index`` of a Dask collection named ``name``: a (X, y) pair (X a
    scipy matrix or a dense array) or a list of such pairs (a bag's partition),
    its ids hashed into 2^hash_bits columns if ``hash_bits``. A bag's item may be
    a triple (X, y, sample_weight): its rows' importance weights, as
    ``partial_fit``'s (and VW's: the progressive loss is a mean over them)."""

    def __init__(self, name, index, size=0, hash_bits=None):
        self.name, self.index, self.size = f"{name} block {index}", index, size
        self.hash_bits = hash_bits
        #: The sorted classes that code the labels (`fastprox.dask._labels.coded`), or None:
        #: set by `fastprox.dask.fit` once it knows them.
        self.classes = None

    def chunks(self, data, ahead=True):
        """(rows, labels, first row) of the block's pieces, in order (``ahead``: as
        `FileShare.chunks`; the data are in memory, nothing to read ahead)."""
        row = 0
        for X, y, *weights in ([data] if isinstance(data, tuple) else data):
            X, y = _csr(X), coded(y, self.classes, self.locator(row))
            if X.shape[0] != len(y):
                raise ValueError(f"{self.name}: X has {X.shape[0]} rows but y has {len(y)} labels")
            if self.hash_bits is not None:
                X = hash_features(X, self.hash_bits)
            yield (_weighted(X, y, weights[0], self.name) if weights else X), y, row
            row += X.shape[0]

    def locator(self, row):
        return lambda i: f"{self.name}: row {row + i + 1}"


def _csr(X):
    """A block's rows as a canonical float CSR matrix of aligned arrays (scipy imported
    only here). A block Dask has moved between workers may hold arrays at unaligned
    addresses in the message it came in, whose buffers say so (format "=i"), which
    the trainer's row pointers cannot be rebuilt from (``array``): copied."""
    X = float_csr(X)
    if not all(a.flags.aligned for a in (X.data, X.indices, X.indptr)):
        X = X.copy()
    return canonical(X)


def _weighted(X, y, sample_weight, name):
    """CSR rows ``X`` with their importance weights, as the VW reader's chunks carry
    them (`fastprox.vw.reader.VWChunk`: the trainer weighs each row's step and loss)."""
    from ..vw.reader import VWChunk
    w = np.ascontiguousarray(sample_weight, dtype=np.float64).reshape(-1)
    if len(w) != len(y):
        raise ValueError(f"{name}: X has {len(y)} rows but sample_weight has {len(w)} weights")
    if not (np.isfinite(w).all() and (w >= 0).all()):
        raise ValueError(f"{name}: sample_weight must be finite and >= 0 (importance weights)")
    return VWChunk(X.data, X.indices, X.indptr, y, X.shape[1], w, None)


class Window:
    """The triples of ``items`` for the rows [skip, skip + limit) of a share
    (``limit`` None: to its end), chunks cut where the range cuts them; after the
    iteration, ``more`` says whether the share has rows beyond it (found by parsing
    at most one chunk more), and ``rest`` is then an iterator of the share's
    triples from there on (the cut chunk's tail, the chunk parsed to look, the
    reader's next ones): a later round resumes the open reader with it
    (`OpenReaders`). A share reopened at row ``skip`` is read again up to there
    (parsed, not trained on)."""

    def __init__(self, items, skip, limit):
        self.items, self.skip, self.limit, self.more, self.rest = items, skip, limit, False, None

    def __iter__(self):
        seen, skip, limit = 0, self.skip, self.limit
        items = iter(self.items)
        for X, y, row in items:
            n = X.shape[0]
            a, b = max(skip - seen, 0), n if limit is None else min(n, skip + limit - seen)
            seen += n
            if a < b:
                yield (X, y, row) if (a, b) == (0, n) else (rows_of(X, a, b), y[a:b], row + a)
            if limit is not None and seen >= skip + limit:
                ahead = [(rows_of(X, b, n), y[b:], row + b)] if b < n else []
                ahead += [item for item in [next(items, None)] if item is not None]
                self.more = bool(ahead)
                self.rest = _continued(ahead, items) if ahead else None
                return


def _continued(ahead, items):
    """The triples ``ahead``, then the rest of ``items``; closing it closes ``items``
    (a reader and its thread)."""
    try:
        yield from ahead
        yield from items
    finally:
        getattr(items, "close", lambda: None)()


def rows_of(X, a, b):
    """Rows [a, b) of a CSR matrix or a reader's Chunk (a weighted one's weights kept)."""
    if not isinstance(X, Chunk):
        return X[a:b]
    indptr = np.asarray(X.indptr)
    lo, hi = indptr[a], indptr[b]
    data, indices, y = np.asarray(X.data)[lo:hi], np.asarray(X.indices)[lo:hi], np.asarray(X.y)[a:b]
    weights = getattr(X, "weights", None)
    if weights is not None:
        tags = None if X.tags is None else X.tags[a:b]
        return type(X)(data, indices, indptr[a:b + 1] - lo, y, X.shape[1], np.asarray(weights)[a:b], tags)
    return Chunk(data, indices, indptr[a:b + 1] - lo, y, np.asarray(X.qids)[a:b], X.shape[1])


def file_shares(paths, **reading):
    """FileShares of a path, a glob pattern or a list of them, in order (a pattern's
    matches sorted, found on the client: a pattern that matches nothing raises
    FileNotFoundError now, a directory IsADirectoryError). Paths are not opened here:
    the workers read them, and a file a worker cannot open fails its task with the
    usual OSError."""
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    found = []
    for path in map(os.fspath, paths):
        matches = sorted(glob.glob(path)) if glob.has_magic(path) else [path]
        if not matches:
            raise FileNotFoundError(2, "no file matches this pattern", path)
        found += matches
    for path in found:
        refuse_directory(path)
    return [FileShare(path, **reading) for path in found]


def deal(shares, n_groups):
    """The shares dealt to ``n_groups`` groups of about equal size (largest first,
    each to the lightest group), each group keeping the shares' order."""
    n_groups = max(1, min(n_groups, len(shares)))
    loads, groups = [0] * n_groups, [[] for _ in range(n_groups)]
    for i in sorted(range(len(shares)), key=lambda i: -max(shares[i].size, 1)):
        g = loads.index(min(loads))
        groups[g].append(i)
        loads[g] += max(shares[i].size, 1)
    return [sorted(g) for g in groups]
