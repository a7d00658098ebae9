"""The LIBSVM reader: one pass over a source, blocks in, chunks of canonical CSR
rows out (iter_libsvm, iter_chunks), every error naming its line."""
import operator
import sys
from array import array

from .._libsvm import MAX_INDEX, Error, Parser
from .._numpy import np
from . import sources
from .sources import DECOMPRESSION_ERRORS, DECOMPRESSORS, corrupt, damaged, named, refuse_text, source_name

#: Bytes read from the file at a time; a line longer than this is still read
#: whole (the buffer grows to fit it, up to MAX_LINE_BYTES).
BLOCK_BYTES = 1 << 22
#: The longest line read (bytes, its newline excluded): one example per line,
#: so a longer one is not LIBSVM text (an endless line: /dev/zero, a binary
#: file without newlines) or an example too large to hold; the reader stops
#: with the line and this bound once a line exceeds it, having held no more.
MAX_LINE_BYTES = 1 << 28

INT32_MAX = 2**31 - 1


def iter_libsvm(path, chunk_rows=10_000, n_features=None, dtype="float64",
                zero_based="auto", query_id=False, allow_nonfinite=False, *,
                block_bytes=BLOCK_BYTES, max_line_bytes=MAX_LINE_BYTES):
    """Yield ``(X, y)`` (or ``(X, y, qid)``) chunks of ``chunk_rows`` rows.

    The file is read ``block_bytes`` at a time, so memory stays bounded by the
    block, chunk and line sizes however large the file. The last chunk may be
    shorter; an empty file yields one chunk with no rows. Whenever iteration
    succeeds, the chunks stacked equal `load_libsvm`'s result.

    Parameters
    ----------
    chunk_rows : int, default=10000
        The rows of each chunk.
    n_features : int or None, default=None
        The width of every chunk; None: one more than the largest column seen
        so far (it never shrinks).
    zero_based : bool or "auto", default="auto"
        As for `load_libsvm`, but "auto" decides from the first chunk that has
        any feature and keeps that for the rest of the file: an index 0 found
        later raises ValueError telling you to pass ``zero_based=True``.

    Yields
    ------
    X : scipy.sparse.csr_matrix of shape (n_chunk_rows, n_features)
        The chunk's rows, as `load_libsvm` gives them.
    y : ndarray of float64 of shape (n_chunk_rows,)
        Their labels.
    qid : ndarray of int64 of shape (n_chunk_rows,)
        Their query ids, with ``query_id=True`` only.
    """
    return (chunk.returned(query_id) for chunk in
            iter_chunks(path, chunk_rows, n_features, dtype, zero_based, query_id,
                        allow_nonfinite, block_bytes=block_bytes, max_line_bytes=max_line_bytes))


def iter_chunks(path, chunk_rows=10_000, n_features=None, dtype="float64",
                zero_based="auto", query_id=False, allow_nonfinite=False, *,
                block_bytes=BLOCK_BYTES, max_line_bytes=MAX_LINE_BYTES, preview=None):
    """:func:`iter_libsvm`'s chunks as :class:`Chunk` objects, before any scipy
    matrix is made: for callers that hand the arrays to the kernel (the command
    line), which then never import scipy. Arguments and checks as for
    :func:`iter_libsvm`; the arguments are checked now, not at the first chunk.

    ``preview``, if given, sees the first chunk's rows as they arrive, before the
    chunk is complete (zero_based="auto" decides from the whole chunk): each time
    the reader is about to read more of the source, ``preview(rows)`` gets a Chunk
    of the float64 rows parsed since its last call, their indices as written less
    the offset if known (as written while "auto" is undecided; a width given is
    one more then); it returns whether it wants more. The command line's progress table shows its first lines from
    them (fastprox.stream.preview).
    """
    if not positive_int(chunk_rows):
        raise ValueError(f"chunk_rows must be a positive integer, not {chunk_rows!r}")
    reader = Reader(path, int(chunk_rows), n_features, dtype, zero_based, query_id, allow_nonfinite,
                     block_bytes, max_line_bytes)
    reader.preview = preview
    return iter(reader)


def positive_int(value, high=sys.maxsize):
    """Whether value is an integer (Python's or NumPy's) in [1, high]."""
    try:
        return 1 <= operator.index(value) <= high
    except TypeError:
        return False


class Chunk:
    """Rows read from a LIBSVM file as canonical CSR arrays (sorted, unique
    indices; ``indices`` and ``indptr`` of one integer type), the labels ``y``
    and the query ids ``qids`` (zeros when the file has none): the parser's
    ``array.array`` buffers (NumPy's arrays once joined or converted).

    It has the attributes of a ``scipy.sparse.csr_matrix`` that the kernel
    reads (``data``, ``indices``, ``indptr``, ``shape``, ``nnz``,
    ``has_canonical_format``), so it is trained on as it is, without NumPy;
    :meth:`csr` makes the matrix, importing scipy (a fifth of a second) only
    then.
    """
    __slots__ = ("data", "indices", "indptr", "y", "qids", "shape", "offset")
    has_canonical_format = True

    def __init__(self, data, indices, indptr, y, qids, n_features, offset=0):
        self.data, self.indices, self.indptr = data, indices, indptr
        self.y, self.qids, self.shape = y, qids, (len(y), n_features)
        #: What the file's indices are less than the columns: 1 for a one-based file
        #: (the names of the features, `fastprox train --invert-hash`).
        self.offset = offset

    @property
    def nnz(self):
        return len(self.data)

    def csr(self):
        """The rows as a ``scipy.sparse.csr_matrix`` (sharing these arrays)."""
        from scipy.sparse import csr_matrix
        X = csr_matrix((np.asarray(self.data), np.asarray(self.indices), np.asarray(self.indptr)),
                       shape=self.shape)
        X.has_sorted_indices = True
        return X

    def returned(self, query_id):
        """What load_libsvm and iter_libsvm give: ``(X, y)`` or ``(X, y, qid)``,
        NumPy arrays sharing these buffers."""
        y = np.asarray(self.y)
        return (self.csr(), y, np.asarray(self.qids)) if query_id else (self.csr(), y)


class Reader:
    """One pass over a file: blocks in, :class:`Chunk` objects out (see iter_libsvm).

    Holds the stream state that error messages and the zero-based decision
    need: the current buffer, the index offset once known (0 or 1) and the
    line up to which the "auto" decision was taken. With ``whole`` the chunks
    are parts of one result (load_libsvm): "auto" is settled over the whole
    file by :meth:`joined`, the chunks keep the indices as written.
    """

    def __init__(self, path, chunk_rows, n_features, dtype, zero_based, query_id,
                 allow_nonfinite, block_bytes, max_line_bytes=MAX_LINE_BYTES, whole=False, span=None):
        # float64, the parser's type, is recognized without NumPy; others convert
        self.dtype = None if str(getattr(dtype, "__name__", dtype)) == "float64" else np.dtype(dtype)
        if self.dtype is not None and self.dtype.kind != "f":
            raise ValueError(f"dtype must be a floating type such as np.float64, not {dtype!r}")
        if n_features is not None and not positive_int(n_features, MAX_INDEX):
            raise ValueError(f"n_features must be None or a positive integer, not {n_features!r}")
        if zero_based not in (True, False, "auto"):
            raise ValueError(f"zero_based must be True, False or 'auto', not {zero_based!r}")
        if not positive_int(block_bytes):
            raise ValueError(f"block_bytes must be a positive integer, not {block_bytes!r}")
        if not positive_int(max_line_bytes):
            raise ValueError(f"max_line_bytes must be a positive integer, not {max_line_bytes!r}")
        refuse_text(path)
        self.name = source_name(path)
        self.source = path
        self.chunk_rows = chunk_rows or sys.maxsize
        self.n_features = None if n_features is None else int(n_features)
        self.query_id = bool(query_id)
        self.block_bytes = int(block_bytes)
        self.max_line = int(max_line_bytes)
        self.parser = Parser(self.query_id, bool(allow_nonfinite), self.max_line)
        self.offset = None if zero_based == "auto" else int(not zero_based)
        self.decided_at_line = None
        self.whole = whole
        self.span = span    # (start, stop or None: the end): these bytes of a plain regular file, whole lines
        self.width = 1
        self.buf = bytearray(1)  # the text read is buf[:size], then a NUL
        self.size = 0
        self.left = None        # the bytes left to read, if known (a plain regular file): `_block`
        self.failure = None     # a decompression error that follows the bytes read
        self.preview, self.previewed = None, 0      # see iter_chunks; the rows it has seen

    def __iter__(self):
        parser, pos, eof, emitted = self.parser, 0, False, False
        parser.file_start = self.span is None or self.span[0] == 0     # (a byte order mark is skipped)
        with self._stream() as f:
            self.left = sources.bytes_left(f, None if self.span is None else self.span[1])
            while True:
                lo, hi = self._bounds()
                pos = parser.feed(self.buf, pos, self.size, eof, self.chunk_rows - parser.rows,
                                  lo, hi, lo if self.offset is not None else 0)
                if pos < 0:
                    raise self._parse_error()
                if parser.rows == self.chunk_rows:
                    emitted = True
                    yield self._take()
                    continue
                if eof:
                    break
                if self.preview is not None and parser.rows > self.previewed:
                    self._preview()
                pos, eof = self._read_line(f, pos)
        if parser.rows or not emitted:
            yield self._take()

    def _stream(self):
        """The source as one binary stream (`_open`); for a span, the plain file
        opened at the span's start."""
        if self.span is None:
            return sources.open_source(self.source)
        f = open(self.source, "rb")
        f.seek(self.span[0])
        return f

    def _read_line(self, f, pos):
        """Read behind the text ``buf[pos:size]``, an unfinished line (the parser
        took every whole line before it), until a newline arrives or the stream
        ends; returns (where that text now starts, whether the stream ended).

        Linear in the bytes read, whatever the channel and the line's length:
        each read goes into the buffer behind the text, without copying it; new
        bytes are searched once, for a newline (then the parser takes over) and,
        while there is none, for a NUL (binary data) and against the line's
        bound, so that an endless line stops with its line number once the bound
        is passed, having held no more than the bound and a block. The text moves
        to the buffer's front only when the buffer is full (once per line at
        most), and the buffer grows only for a line that does not fit."""
        self._check_unfinished(pos, pos)
        while True:
            pos = self._make_room(pos)
            start = self.size
            read = self._read(f, memoryview(self.buf)[start:start + self._block()])
            self.size = start + read
            if self.left is not None:
                self.left -= read
            self.buf[self.size] = 0
            if not read:
                return pos, True
            if self.buf.find(b"\n", start, self.size) >= 0:
                return pos, False
            self._check_unfinished(pos, start)

    def _check_unfinished(self, pos, start):
        """Refuse the unfinished line ``buf[pos:size]``, whose bytes from ``start`` on
        were not searched yet, if it holds a NUL or outgrew the bound."""
        where = self._where(self.parser.line + 1)
        if self.buf.find(b"\0", start, self.size) >= 0:
            raise ValueError(where + _MESSAGES[Error.ERR_NUL])
        if self.size - pos > self.max_line:
            raise ValueError(where + _long_line(self.max_line))

    def _make_room(self, pos):
        """Room for a block behind the text: the unfinished line moved to the front
        if the buffer is full, the buffer grown if it is still full. Returns where
        the line starts."""
        block = self._block()
        if len(self.buf) - self.size > block:
            return pos
        tail = self.size - pos
        if pos:
            with memoryview(self.buf) as view:
                view[:tail] = view[pos:self.size]
            self.size, pos = tail, 0
            self.buf[tail] = 0
        need = self.size + block + 1
        if need > len(self.buf):    # doubling, to the line's bound and a block at most
            _grow(self.buf, max(need, min(2 * len(self.buf), self.max_line + block + 1)))
        return pos

    def _block(self):
        """The bytes to read next: a block, or what is left of a plain file if less (and a
        piece more, to find its end whatever was appended), so that a file smaller than a
        block neither zeroes nor faults in a block's buffer."""
        if self.left is None:
            return self.block_bytes
        return min(self.block_bytes, max(self.left, 0) + PIECE_BYTES)

    def _read(self, f, into):
        """Read what the stream has into ``into`` (up to the span's end) and return
        how many bytes: ``readinto1`` where there is one, so that a pipe's rows reach
        the caller as they arrive, not once the block is full; a decompressor's small
        pieces are gathered up to the block. Decompression errors become ValueError
        naming the line they break off in: those after bytes were gathered are
        raised by the next read, once the parser has taken the whole lines before."""
        if self.span is not None and self.span[1] is not None:
            into = into[:max(0, self.span[1] - f.tell())]
        if self.failure is not None:
            raise self._corrupt(self.failure)
        read = 0
        try:
            read = getattr(f, "readinto1", f.readinto)(into)
            while read and read < len(into) and isinstance(f, DECOMPRESSORS):
                more = f.readinto1(into[read:])
                if not more:
                    break
                read += more
        except DECOMPRESSION_ERRORS as e:
            if not damaged(e):
                raise named(e, self.name) from None
            if not read:
                raise self._corrupt(e) from e
            self.failure = e.with_traceback(None)    # (its frames would hold the buffer)
        return read

    def _corrupt(self, error):
        return corrupt(self.name, self.parser.line + 1, error)

    def _bounds(self):
        """Smallest and largest index allowed as written in the file."""
        hi = MAX_INDEX if self.n_features is None else self.n_features
        if self.offset is None:
            return 0, hi
        return self.offset, hi - 1 + self.offset if self.n_features is not None else hi

    def _preview(self):
        """Hand the rows parsed since the last preview to ``preview`` (iter_chunks)."""
        data, indices, indptr, labels = self.parser.peek(self.previewed)
        self.previewed = self.parser.rows
        if self.n_features is not None:     # the width given (less one index while "auto" waits)
            width = self.n_features + (self.offset is None)
        else:
            width = max(1, self.parser.max_index - (self.offset or 0) + 1)
        if not self.preview(Chunk(data, indices, indptr, labels, array("q", bytes(8 * len(labels))), width)):
            self.preview = None

    def _take(self):
        """Close the current chunk: settle "auto", check the width, make the Chunk
        (the first one ends the preview)."""
        self.preview, self.previewed = None, 0
        parser, shift = self.parser, 0
        if self.offset is None and parser.max_index >= 0 and not self.whole:
            self.offset = shift = self._settle()
            self.decided_at_line = parser.line
        if self.n_features is not None:
            self.width = self.n_features
        elif parser.max_index >= 0:
            self.width = max(self.width, parser.max_index - (self.offset or 0) + 1)
        wide = max(self.width, parser.nnz) > INT32_MAX
        data, indices, indptr, labels, qids = parser.take(shift, wide)
        if self.dtype is not None:
            data = np.asarray(data).astype(self.dtype, copy=False)
        return Chunk(data, indices, indptr, labels, qids, self.width, self.offset or 0)

    def _settle(self, parsers=None):
        """"auto"'s offset from the indices parsed so far (0 if any index is 0,
        else 1) by this reader's parser or by ``parsers``, checked against n_features."""
        parsers = parsers or [self.parser]
        top = max(parsers, key=lambda p: p.max_index)
        offset = 0 if min(p.min_index for p in parsers) == 0 else 1
        if self.n_features is not None and top.max_index - offset >= self.n_features:
            raise ValueError(self._where(top.max_index_line) + _range_message(
                f"'{top.max_index}'", self.n_features, self.n_features - 1))
        return offset

    def joined(self, chunks, rest=None):
        """The ``whole`` file's chunks as one Chunk, "auto" settled over all its rows;
        ``rest`` is the reader of the file's second half when this one read the first."""
        readers = [self] + ([rest] if rest is not None else [])
        shift, width = 0, max(r.width for r in readers)
        top = max(r.parser.max_index for r in readers)
        if self.offset is None and top >= 0:
            shift = self._settle([r.parser for r in readers])
            width = self.n_features or top - shift + 1
        nnz = sum(c.nnz for c in chunks)
        itype = np.int64 if max(width, nnz) > INT32_MAX else np.int32
        data, indices, indptr, y, qids = ([np.asarray(getattr(c, a)) for c in chunks]
                                          for a in ("data", "indices", "indptr", "y", "qids"))
        if len(chunks) == 1:
            data, y, qids = data[0], y[0], qids[0]
            indices, indptr = indices[0].astype(itype, copy=False), indptr[0].astype(itype, copy=False)
        else:
            data, y, qids = np.concatenate(data), np.concatenate(y), np.concatenate(qids)
            starts = np.cumsum([c.nnz for c in chunks]) - [c.nnz for c in chunks]
            indptr = np.concatenate([np.zeros(1, itype)] + [p[1:].astype(itype) + start
                                                             for p, start in zip(indptr, starts)])
            indices = np.concatenate(indices, dtype=itype)
        if shift:
            indices -= itype(shift)
        return Chunk(data, indices, indptr, y, qids, width)

    def _where(self, line):
        return f"{self.name}:{line}: "

    def _parse_error(self):
        """The ValueError (or MemoryError) for the parser's recorded error."""
        p = self.parser
        code = Error(p.error)
        if code == Error.ERR_NO_MEMORY:
            return MemoryError(f"{self.name}:{p.error_line}: out of memory while reading")
        if code == Error.ERR_LONG_LINE:
            return ValueError(self._where(p.error_line) + _long_line(self.max_line))
        token = self.buf[p.error_start:p.error_end]
        shown = "'%s'" % token[:60].decode("ascii", "backslashreplace")
        if code == Error.ERR_INDEX_RANGE:
            lo, hi = self._bounds()
            what = _range_message(shown, self.n_features, hi)
        elif code == Error.ERR_ZERO_INDEX and self.decided_at_line is not None:
            what = (f"index 0, but zero_based='auto' took the file as one-based from its "
                    f"first chunk (lines 1-{self.decided_at_line}, no index 0); "
                    f"pass zero_based=True to read it as zero-based")
        elif code == Error.ERR_INDEX and token.startswith(b"qid"):
            what = "qid: must come right after the label, before the features"
        elif code == Error.ERR_VALUE and not token:
            what = "feature has no value after ':'; features are written index:value"
        else:
            what = _MESSAGES[code].format(shown)
        return ValueError(self._where(p.error_line) + what)


PIECE_BYTES = 1 << 16
ZEROS = memoryview(bytes(PIECE_BYTES))


def _grow(buf, size):
    """Lengthen the bytearray ``buf`` to ``size`` bytes in place (its new bytes 0),
    a piece of ZEROS at a time: no temporary object of the added size."""
    while len(buf) < size:
        buf += ZEROS[:size - len(buf)]


def _long_line(bound):
    return (f"line longer than max_line_bytes={bound} bytes; LIBSVM text holds one example per "
            f"line, so this is not LIBSVM text (no newline: binary data, an endless stream), or "
            f"pass a larger max_line_bytes")


def _range_message(shown, n_features, hi):
    return (f"index {shown} is beyond n_features={n_features} (the largest allowed "
            f"index is {hi}); pass a larger n_features, or None to take it from the file")


_MESSAGES = {
    Error.ERR_LABEL: "label {} is not a number; each line must start with a numeric "
                     "label such as 1, -1 or 0.5",
    Error.ERR_MULTILABEL: "multi-label row (label {}) is not supported; give one label per line",
    Error.ERR_NO_COLON: "feature {} has no ':'; features are written index:value",
    Error.ERR_INDEX: "index {} is not an integer; features are written index:value",
    Error.ERR_NEGATIVE_INDEX: "negative index {}; indices must be 0 or more",
    Error.ERR_ZERO_INDEX: "index 0 in a one-based file; pass zero_based=True (or 'auto') "
                          "if the file's indices start at 0",
    Error.ERR_INDEX_OVERFLOW: "index {} is too large (at most %d); renumber the features "
                              "below that" % MAX_INDEX,
    Error.ERR_DUPLICATE: "duplicate index {}; each index may appear once per row, "
                         "in strictly increasing order",
    Error.ERR_DECREASING: "index {} is smaller than the index before it; sort each row's "
                          "features by increasing index",
    Error.ERR_VALUE: "value {} is not a number; features are written index:value",
    Error.ERR_NONFINITE: "non-finite number {}; pass allow_nonfinite=True to accept "
                         "NaN and infinity",
    Error.ERR_NUL: "NUL byte: this looks like binary data, not LIBSVM text (gzip, "
                   "bzip2 and xz files are recognised by their content)",
    Error.ERR_QID: "bad query id {}; write qid:INTEGER right after the label",
    Error.ERR_MISSING_QID: "no qid: after the label, but query_id=True; give every line "
                           "a qid:INTEGER or pass query_id=False",
}
