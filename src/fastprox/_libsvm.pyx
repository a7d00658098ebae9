# cython: language_level=3
"""Parsing and formatting kernels for LIBSVM/svmlight text.

The parser works on complete lines of a ``bytearray`` buffer without the GIL and
appends rows to growable C arrays; :mod:`fastprox.libsvm` feeds it blocks of a
file and turns what it collected into CSR chunks.  On bad input it stops and
records an error code, the 1-based line and the offending token's position,
so that the Python layer can write a ``PATH:LINE:`` message.

Tokens and numbers are scanned by fastprox._text (exact conversion, digits read
8 at a time).
"""
cimport cython
from cpython.bytearray cimport PyByteArray_AS_STRING, PyByteArray_GET_SIZE
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize, PyBytes_GET_SIZE
from libc.math cimport isfinite
from libc.stdint cimport INT64_MAX, int32_t, int64_t, uint64_t
from libc.stdlib cimport free
from libc.string cimport memchr, memcpy
from fastprox._text cimport *
from cpython cimport array

import array as pyarray

# The parser hands its rows over in the standard library's arrays, not NumPy's:
# training from a file (`fastprox train`) then never imports NumPy.
cdef array.array DOUBLES = pyarray.array("d"), INT64 = pyarray.array("q"), INT32 = pyarray.array("i")

cdef extern from "_kernel/text/repr.h" nogil:
    int FASTPROX_REPR_MAX
    int fastprox_repr(double v, int add_dot_0, char *out)

cdef extern from "Python.h":
    const char *PyUnicode_AsUTF8AndSize(object s, Py_ssize_t *size) except NULL

# Error codes; fastprox.libsvm turns each into a message.
cpdef enum Error:
    OK
    ERR_LABEL
    ERR_MULTILABEL
    ERR_NO_COLON
    ERR_INDEX
    ERR_NEGATIVE_INDEX
    ERR_ZERO_INDEX
    ERR_INDEX_OVERFLOW
    ERR_INDEX_RANGE
    ERR_DUPLICATE
    ERR_DECREASING
    ERR_VALUE
    ERR_NONFINITE
    ERR_NUL
    ERR_QID
    ERR_MISSING_QID
    ERR_NO_MEMORY
    ERR_LONG_LINE

# Largest index accepted, so that ``index + 1`` (a width) still fits int64.
MAX_INDEX = INT64_MAX - 1
cdef int64_t MAX_INDEX_TENTH = (INT64_MAX - 1) // 10
cdef int64_t MAX_INDEX_LAST_DIGIT = (INT64_MAX - 1) % 10

cdef locale_t C_LOCALE = newlocale(LC_ALL_MASK, b"C", NULL)


cdef inline const char *scan_int(const char *p, const char *e, int64_t *out,
                                 int *code) noexcept nogil:
    """Parse ``[+-]digits`` at ``p`` into ``out``; return its end.

    ``code`` is set to OK, ERR_INDEX (no digits) or ERR_INDEX_OVERFLOW (the
    magnitude is above MAX_INDEX).
    """
    cdef bint negative = False
    cdef int64_t v = 0, d
    code[0] = OK
    out[0] = 0
    if p < e and (p[0] == 43 or p[0] == 45):
        negative = p[0] == 45
        p += 1
    if p == e or not is_digit(p[0]):
        code[0] = ERR_INDEX
        return p
    while p < e and is_digit(p[0]):
        d = p[0] - 48
        if v > MAX_INDEX_TENTH or (v == MAX_INDEX_TENTH and d > MAX_INDEX_LAST_DIGIT):
            code[0] = ERR_INDEX_OVERFLOW
        else:
            v = v * 10 + d
        p += 1
    out[0] = -v if negative else v
    return p



cdef class Parser:
    """Accumulates rows parsed from successive buffers into C arrays.

    ``feed`` parses complete lines, ``take`` hands the rows collected so far
    over as NumPy arrays and starts a new chunk.  Counters (``line``, the
    smallest and largest index seen, the line of the largest) run over the
    whole stream.  After an error (``feed`` returns -1) ``error``,
    ``error_line``, ``error_start`` and ``error_end`` describe it. A line of
    more than ``max_line`` bytes (its newline excluded) is an error
    (ERR_LONG_LINE) before any of it is parsed. While ``file_start`` (the
    default), the first line opens its file, and a UTF-8 byte order mark opening
    it is skipped (some editors write one; so does Vowpal Wabbit's reader); a
    reader of a span that starts later turns it off. (``more``: a subclass's own
    arguments, fastprox._vw.VWParser's, which parses another format's lines.)
    """

    def __cinit__(self, bint want_qid, bint allow_nonfinite, Py_ssize_t max_line, *more):
        self.want_qid = want_qid
        self.allow_nonfinite = allow_nonfinite
        self.max_line = max_line
        self.file_start = True
        self.min_index = INT64_MAX
        self.max_index = -1
        if not self.reserve_rows(1024) or not self.reserve_nnz(16384):
            raise MemoryError()
        self.indptr[0] = 0

    def __dealloc__(self):
        free(self.data)
        free(self.indices)
        free(self.indptr)
        free(self.labels)
        free(self.qids)

    cdef bint reserve_rows(self, Py_ssize_t n) noexcept nogil:
        """Make room for ``n`` more rows; False when out of memory."""
        cdef Py_ssize_t cap = self.row_capacity
        if self.rows + n <= cap:
            return True
        while cap < self.rows + n:
            cap = 2 * cap + 1024
        if not (grow(<void **>&self.indptr, (cap + 1) * sizeof(int64_t))
                and grow(<void **>&self.labels, cap * sizeof(double))
                and grow(<void **>&self.qids, cap * sizeof(int64_t))):
            return False
        self.row_capacity = cap
        return True

    cdef bint reserve_nnz(self, Py_ssize_t n) noexcept nogil:
        """Make room for ``n`` more stored values; False when out of memory."""
        cdef Py_ssize_t cap = self.nnz_capacity
        if self.nnz + n <= cap:
            return True
        while cap < self.nnz + n:
            cap = 2 * cap + 16384
        if not (grow(<void **>&self.data, cap * sizeof(double))
                and grow(<void **>&self.indices, cap * sizeof(int64_t))):
            return False
        self.nnz_capacity = cap
        return True

    cdef int fail(self, int code, const char *base, const char *start,
                  const char *end) noexcept nogil:
        self.error = code
        self.error_line = self.line
        self.error_start = start - base
        self.error_end = end - base
        return code

    cdef int parse_line(self, const char *base, const char *p, const char *e, const char *end,
                        int64_t lo, int64_t hi, int64_t offset) noexcept nogil:
        """Parse one line [p, e) (no newline) of the buffer [base, end); append a
        row unless it is blank. The byte at ``e`` (newline, ``#`` or the final
        NUL) ends every scan that has no bound of its own."""
        cdef const char *t
        cdef const char *colon
        cdef double label, value
        cdef int64_t index, previous = -1, qid = 0
        cdef int code
        cdef Py_ssize_t first_nnz = self.nnz
        t = <const char *>memchr(p, 0, e - p)
        if t != NULL:
            return self.fail(ERR_NUL, base, t, t + 1)
        if self.line == 1 and self.file_start:
            p = after_bom(p, e)
        t = <const char *>memchr(p, 35, e - p)  # '#'
        if t != NULL:
            e = t
        p = skip_space(p, e)
        if p == e:
            return OK
        t = p
        p = token_end(p, e)
        if memchr(t, 44, p - t) != NULL:  # ','
            return self.fail(ERR_MULTILABEL, base, t, p)
        if not parse_double(t, p, end, &label):
            return self.fail(ERR_LABEL, base, t, p)
        if not self.allow_nonfinite and not isfinite(label):
            return self.fail(ERR_NONFINITE, base, t, p)
        p = skip_space(p, e)
        if e - p >= 4 and p[0] == 113 and p[1] == 105 and p[2] == 100 and p[3] == 58:
            t = p
            p = token_end(p, e)
            if scan_int(t + 4, p, &qid, &code) != p or code != OK:
                return self.fail(ERR_QID, base, t, p)
        elif self.want_qid:
            return self.fail(ERR_MISSING_QID, base, p, p)
        while True:
            while is_space(p[0]):
                p += 1
            if p == e:
                break
            t = p
            # Indices of up to 18 digits cannot overflow: read here; the rest
            # (signs, no digit, longer) by scan_int, which checks.
            colon = t
            index = 0
            while is_digit(colon[0]):
                index = index * 10 + (colon[0] - 48)
                colon += 1
            code = OK
            if colon == t or colon - t > 18:
                colon = scan_int(t, e, &index, &code)
            if colon[0] != 58:  # not followed by ':'
                p = token_end(t, e)
                colon = <const char *>memchr(t, 58, p - t)
                if colon == NULL:
                    return self.fail(ERR_NO_COLON, base, t, p)
                return self.fail(ERR_INDEX, base, t, colon)
            if index < 0 or (code == ERR_INDEX_OVERFLOW and t[0] == 45):
                return self.fail(ERR_NEGATIVE_INDEX, base, t, colon)
            if code != OK:
                return self.fail(code, base, t, colon)
            if index < lo:
                return self.fail(ERR_ZERO_INDEX, base, t, colon)
            if index > hi:
                return self.fail(ERR_INDEX_RANGE, base, t, colon)
            if index <= previous:
                return self.fail(ERR_DUPLICATE if index == previous else ERR_DECREASING,
                                 base, t, colon)
            p = scan_double(colon + 1, end, &value)
            if p == NULL or (p < e and not is_space(p[0])):
                p = token_end(colon + 1, e)
                return self.fail(ERR_VALUE, base, colon + 1, p)
            if not self.allow_nonfinite and not isfinite(value):
                return self.fail(ERR_NONFINITE, base, colon + 1, p)
            if self.nnz == self.nnz_capacity and not self.reserve_nnz(1):
                return self.fail(ERR_NO_MEMORY, base, t, p)
            self.indices[self.nnz] = index - offset
            self.data[self.nnz] = value
            self.nnz += 1
            previous = index
        if not self.reserve_rows(1):
            return self.fail(ERR_NO_MEMORY, base, t, p)
        if self.nnz > first_nnz:
            if self.indices[first_nnz] + offset < self.min_index:
                self.min_index = self.indices[first_nnz] + offset
            if previous > self.max_index:
                self.max_index = previous
                self.max_index_line = self.line
        self.labels[self.rows] = label
        self.qids[self.rows] = qid
        self.rows += 1
        self.indptr[self.rows] = self.nnz
        return OK

    def feed(self, bytearray buf not None, Py_ssize_t pos, Py_ssize_t size, bint final,
             Py_ssize_t max_rows, int64_t lo, int64_t hi, int64_t offset):
        """Parse complete lines of the text ``buf[:size]`` from ``pos``; return
        where it stopped.

        ``buf[size]`` must be a NUL byte: it stops the scans of a last line
        with no newline. Stops when ``max_rows`` more rows were collected or
        no complete line is left; with ``final`` the text after the last
        newline is a line too.  Indices must lie in ``[lo, hi]``;
        ``index - offset`` is stored. Returns -1 on bad input (see ``error``).
        """
        if not (0 <= pos <= size < PyByteArray_GET_SIZE(buf) and max_rows >= 0
                and PyByteArray_AS_STRING(buf)[size] == 0):
            raise ValueError("feed: need 0 <= pos <= size < len(buf), buf[size] == 0 "
                             "and max_rows >= 0")
        cdef const char *base = PyByteArray_AS_STRING(buf)
        cdef const char *end = base + size
        cdef const char *p = base + pos
        cdef const char *nl
        cdef Py_ssize_t stop_rows = self.rows + max_rows
        cdef int code = OK
        cdef locale_t previous_locale
        with nogil:
            previous_locale = uselocale(C_LOCALE)
            while p < end and self.rows < stop_rows:
                nl = <const char *>memchr(p, 10, end - p)
                if nl == NULL:
                    if not final:
                        break
                    nl = end
                self.line += 1
                if nl - p > self.max_line:
                    code = self.fail(ERR_LONG_LINE, base, p, p)
                    break
                code = self.parse_line(base, p, nl, end, lo, hi, offset)
                if code != OK:
                    break
                p = nl + 1 if nl < end else end
            uselocale(previous_locale)
        if code != OK:
            return -1
        return p - base

    @cython.boundscheck(False)
    @cython.wraparound(False)
    def take(self, int64_t shift, bint wide):
        """Return ``(data, indices - shift, indptr, labels, qids)`` and reset.

        ``array.array`` buffers: float64 ``data`` and ``labels``, int64 ``qids``;
        ``indices`` and ``indptr`` are int64 when ``wide``, else int32.
        """
        cdef Py_ssize_t i, rows = self.rows, nnz = self.nnz
        cdef array.array data = array.clone(DOUBLES, nnz, zero=False)
        cdef array.array labels = array.clone(DOUBLES, rows, zero=False)
        cdef array.array qids = array.clone(INT64, rows, zero=False)
        cdef array.array indices, indptr
        memcpy(data.data.as_doubles, self.data, nnz * sizeof(double))
        memcpy(labels.data.as_doubles, self.labels, rows * sizeof(double))
        memcpy(qids.data.as_longlongs, self.qids, rows * sizeof(int64_t))
        if wide:
            indices = array.clone(INT64, nnz, zero=False)
            indptr = array.clone(INT64, rows + 1, zero=False)
            for i in range(nnz):
                indices.data.as_longlongs[i] = self.indices[i] - shift
            for i in range(rows + 1):
                indptr.data.as_longlongs[i] = self.indptr[i]
        else:
            indices = array.clone(INT32, nnz, zero=False)
            indptr = array.clone(INT32, rows + 1, zero=False)
            for i in range(nnz):
                indices.data.as_ints[i] = <int32_t>(self.indices[i] - shift)
            for i in range(rows + 1):
                indptr.data.as_ints[i] = <int32_t>self.indptr[i]
        self.rows = 0
        self.nnz = 0
        return data, indices, indptr, labels, qids


    @cython.boundscheck(False)
    @cython.wraparound(False)
    def peek(self, Py_ssize_t start):
        """Copies of the rows ``start`` to ``rows`` collected so far, as ``(data,
        indices, indptr, labels)`` (indices as stored and indptr, both int64), the
        parser left as it is: rows of a chunk not yet complete."""
        if not 0 <= start <= self.rows:
            raise ValueError(f"peek: start={start} must lie in [0, {self.rows}]")
        cdef Py_ssize_t i, rows = self.rows - start, lo = self.indptr[start], nnz = self.nnz - self.indptr[start]
        cdef array.array data = array.clone(DOUBLES, nnz, zero=False)
        cdef array.array indices = array.clone(INT64, nnz, zero=False)
        cdef array.array indptr = array.clone(INT64, rows + 1, zero=False)
        cdef array.array labels = array.clone(DOUBLES, rows, zero=False)
        memcpy(data.data.as_doubles, self.data + lo, nnz * sizeof(double))
        memcpy(indices.data.as_longlongs, self.indices + lo, nnz * sizeof(int64_t))
        memcpy(labels.data.as_doubles, self.labels + start, rows * sizeof(double))
        for i in range(rows + 1):
            indptr.data.as_longlongs[i] = self.indptr[start + i] - lo
        return data, indices, indptr, labels


cdef class _Text:
    """A growable byte buffer for the writer."""
    cdef char *buf
    cdef Py_ssize_t size, capacity

    def __dealloc__(self):
        free(self.buf)

    cdef int reserve(self, Py_ssize_t n) except -1:
        """Room for ``n`` more bytes (the capacity doubled, plus 64 KiB, until they fit)."""
        cdef Py_ssize_t cap = self.capacity
        if self.size + n > cap:
            while cap < self.size + n:
                cap = 2 * cap + 65536
            if not grow(<void **>&self.buf, cap):
                raise MemoryError()
            self.capacity = cap
        return 0

    cdef int append(self, const char *s, Py_ssize_t n) except -1:
        self.reserve(n)
        memcpy(self.buf + self.size, s, n)
        self.size += n
        return 0

    cdef int append_double(self, double v, bint add_dot_0=False) except -1:
        """v's shortest round-trip text as Python's repr writes it, written in place
        (`fastprox_repr`, _kernel/text/repr.h: Ryu's digits, no Python call, no
        allocation a value); ``add_dot_0``: an integral value ends with ".0", as in
        repr (without it, LIBSVM's ``1``)."""
        self.reserve(FASTPROX_REPR_MAX)
        self.size += fastprox_repr(v, add_dot_0, self.buf + self.size)
        return 0

    cdef int append_int(self, int64_t v) except -1:
        cdef char digits[24]
        cdef int n = 24
        cdef bint negative = v < 0
        cdef uint64_t u = <uint64_t>(-v) if negative else <uint64_t>v
        while True:
            n -= 1
            digits[n] = <char>(48 + u % 10)
            u //= 10
            if u == 0:
                break
        if negative:
            n -= 1
            digits[n] = 45
        self.append(digits + n, 24 - n)
        return 0


def format_rows(const double[::1] data not None, const int64_t[::1] indices not None,
                const int64_t[::1] indptr not None, const double[::1] labels not None,
                const int64_t[::1] qids not None, int64_t index_offset):
    """LIBSVM text for the CSR rows given, one line each, as ``bytes``.

    Values use Python's shortest round-trip repr (``1``, ``0.1``, ``1e-05``);
    ``index_offset`` is added to every column index; ``qids`` may be empty
    (no ``qid:``) or hold one query id per row.  Indices must be sorted.
    """
    cdef _Text out = _Text()
    cdef Py_ssize_t row, k
    cdef bint with_qid = qids.shape[0] > 0
    for row in range(labels.shape[0]):
        out.append_double(labels[row])
        if with_qid:
            out.append(b" qid:", 5)
            out.append_int(qids[row])
        for k in range(indptr[row], indptr[row + 1]):
            out.append(b" ", 1)
            out.append_int(indices[k] + index_offset)
            out.append(b":", 1)
            out.append_double(data[k])
        out.append(b"\n", 1)
    return PyBytes_FromStringAndSize(out.buf, out.size)


cdef bint _ascii(const char *p, Py_ssize_t n) noexcept:
    cdef Py_ssize_t j
    for j in range(n):
        if <unsigned char>p[j] >= 128:
            return False
    return True


cdef int _append_tag(_Text out, object tag) except -1:
    """A prediction line's tag (`format_predictions`), after a space: nothing for None
    or an empty one; ``bytes`` as their UTF-8 text with each invalid byte as "\\xNN"
    (``decode("utf-8", "backslashreplace")``: an ASCII tag, VW's usual, is copied as it
    is), a ``str`` encoded as UTF-8, another object as its text (``format``)."""
    cdef const char *p
    cdef Py_ssize_t n
    if tag is None:
        return 0
    if isinstance(tag, bytes):
        p, n = PyBytes_AS_STRING(tag), PyBytes_GET_SIZE(tag)
        if n == 0:
            return 0
        if _ascii(p, n):
            out.append(b" ", 1)
            out.append(p, n)
            return 0
        tag = (<bytes>tag).decode("utf-8", "backslashreplace")
    elif not isinstance(tag, str):
        if not tag:
            return 0
        tag = format(tag, "")
    elif not tag:
        return 0
    p = PyUnicode_AsUTF8AndSize(tag, &n)
    out.append(b" ", 1)
    out.append(p, n)
    return 0


@cython.boundscheck(False)
@cython.wraparound(False)
def format_predictions(const double[::1] scores not None, Py_ssize_t outputs, tuple labels, tags,
                       Py_ssize_t first, bint margins=False):
    """``train -p``'s lines (VW's -p) of the rows whose margins ``scores`` holds, and
    ``predict``'s without ``--proba`` (VW's -t -p), ``outputs`` a row, as ``bytes``, in
    one call a run of rows (no Python float or string a row). Row i's line: where ``labels`` is None (one output, a regressor) its
    first margin's ``repr`` (the text float.__repr__ writes, from _kernel/text/repr.h),
    else ``labels[k]`` (``bytes``, a class as -p writes
    it) of its largest margin's output k (the first of equal ones, as ``max``'s), or
    with ``margins`` every output's ``labels[k]:margin`` separated by spaces (predict
    --raw of a multiclass model, as VW's -r with --oaa); then its tag ``tags[first +
    i]`` after a space, if it has one (`_append_tag`; ``tags`` None: no row has one);
    then a newline."""
    cdef _Text out = _Text()
    cdef Py_ssize_t i, k, best, n
    cdef const double *s
    cdef bytes label
    if outputs < 1 or scores.shape[0] % outputs:
        raise ValueError(f"format_predictions: {scores.shape[0]} margins are not rows of outputs={outputs}")
    if labels is not None and len(labels) != outputs:
        raise ValueError(f"format_predictions: {len(labels)} labels for outputs={outputs}: give one an output")
    n = scores.shape[0] // outputs
    if tags is not None and not 0 <= first <= len(tags) - n:
        raise ValueError(f"format_predictions: rows [{first}, {first + n}) of {len(tags)} tags")
    for i in range(n):
        s = &scores[i * outputs]
        if labels is None:
            out.append_double(s[0], True)
        elif margins:
            for k in range(outputs):
                label = labels[k]
                if k:
                    out.append(b" ", 1)
                out.append(PyBytes_AS_STRING(label), PyBytes_GET_SIZE(label))
                out.append(b":", 1)
                out.append_double(s[k], True)
        else:
            best = 0
            for k in range(1, outputs):
                if s[k] > s[best]:
                    best = k
            label = labels[best]
            out.append(PyBytes_AS_STRING(label), PyBytes_GET_SIZE(label))
        if tags is not None:
            _append_tag(out, tags[first + i])
        out.append(b"\n", 1)
    return PyBytes_FromStringAndSize(out.buf, out.size)


@cython.boundscheck(False)
@cython.wraparound(False)
def count_labels(const double[::1] y not None, dict counts not None, Py_ssize_t limit):
    """Add the labels ``y`` to ``counts`` (label -> rows). Returns False, leaving
    ``counts`` incomplete, once there would be more than ``limit`` distinct
    labels (regression targets, not classes)."""
    cdef Py_ssize_t i, k, n = y.shape[0], found = 0
    cdef array.array seen = array.clone(DOUBLES, limit + 1, zero=False)
    cdef array.array rows = array.clone(INT64, limit + 1, zero=True)
    cdef double* label = seen.data.as_doubles
    cdef long long* count = rows.data.as_longlongs
    for value in counts:
        if found == limit + 1:
            return False
        label[found] = value
        found += 1
    cdef Py_ssize_t known = found
    with nogil:
        k = 0
        for i in range(n):
            if found and label[k] == y[i]:      # runs of one label: no search
                count[k] += 1
                continue
            k = 0
            while k < found and label[k] != y[i]:
                k += 1
            if k == found:
                if found == limit + 1:
                    break
                label[k] = y[i]
                found += 1
            count[k] += 1
    if found > limit:
        return False
    for k in range(found):
        counts[label[k]] = counts.get(label[k], 0) + count[k] if k < known else count[k]
    return True
