"""The LIBSVM parser's class declared for the parsers that extend it (fastprox._vw:
the same buffers, counters, errors, ``feed`` and ``peek``; its own ``parse_line``)."""
from libc.stdint cimport int64_t


cdef class Parser:
    cdef double *data
    cdef int64_t *indices
    cdef int64_t *indptr
    cdef double *labels
    cdef int64_t *qids
    cdef Py_ssize_t nnz_capacity, row_capacity
    cdef readonly Py_ssize_t nnz, rows
    cdef readonly int64_t line, min_index, max_index, max_index_line
    cdef readonly int error
    cdef readonly int64_t error_line
    cdef readonly Py_ssize_t error_start, error_end, max_line
    cdef bint want_qid, allow_nonfinite
    # whether the first line fed opens its file: a UTF-8 byte order mark there is skipped
    cdef public bint file_start

    cdef bint reserve_rows(self, Py_ssize_t n) noexcept nogil
    cdef bint reserve_nnz(self, Py_ssize_t n) noexcept nogil
    cdef int fail(self, int code, const char *base, const char *start, const char *end) noexcept nogil
    cdef int parse_line(self, const char *base, const char *p, const char *e, const char *end,
                        int64_t lo, int64_t hi, int64_t offset) noexcept nogil
