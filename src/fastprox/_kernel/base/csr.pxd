# The rows a pass visits: their order and weights, the checks that let the steps
# trust the CSR arrays' bounds, and the prefetching of the next steps' state.
from libc.math cimport fabs
from libc.float cimport DBL_MAX
from fastprox._kernel.base.types cimport value_t, index_t
from fastprox._kernel.base.state cimport Ctx
from fastprox._kernel.groups.groups cimport group_of

cdef extern from *:
    """
    #if defined(__GNUC__) || defined(__clang__)
    #define FASTPROX_PREFETCH(p) __builtin_prefetch((p), 1, 3)
    #define FASTPROX_PREFETCH_READ(p) __builtin_prefetch((p), 0, 3)
    #else
    #define FASTPROX_PREFETCH(p) ((void)(p))
    #define FASTPROX_PREFETCH_READ(p) ((void)(p))
    #endif
    """
    void FASTPROX_PREFETCH(const void* p) noexcept nogil
    void FASTPROX_PREFETCH_READ(const void* p) noexcept nogil


cdef inline long long row_at(const long long* order, long long i) noexcept nogil:
    """The i-th row visited: order[i], or i where the order is the file's (NULL)."""
    return order[i] if order != NULL else i


cdef inline double weight_at(const double* sw, long long r) noexcept nogil:
    """Row r's sample weight: sw[r], or 1 where none are given (NULL)."""
    return sw[r] if sw != NULL else 1.0


cdef inline int csr_kind(data, indices) except -1:
    """Which typed loop reads these CSR buffers: 0 float64 values and int32 indices,
    1 float64 and int64, 2 float32 and int32, 3 float32 and int64. Chosen by item
    size here, not by Cython's fused-type dispatch, which imports NumPy to inspect
    its arguments (see fastprox._numpy); the typed views then check the types."""
    return 2 * (memoryview(data).itemsize == 4) + (memoryview(indices).itemsize == 8)


cdef inline long long _check_rows(Py_ssize_t nnz, const index_t[::1] indices, const index_t[::1] indptr,
                           Py_ssize_t n_y, Py_ssize_t n_sw, const long long[::1] order, bint all_rows,
                           long long d, int batch_size, bint want_longest) except -1:
    """Refuse, before any step, what would read outside the arrays: the kernel's
    loops trust these bounds. Returns the longest row's number of non-zeros if
    `want_longest` (ftrl sizes its memo by it), else 0; `all_rows`: the order is
    0..n-1 and needs no check. The loops without min/max vectorize."""
    cdef Py_ssize_t n_rows = indptr.shape[0] - 1, i
    cdef long long lo = 0, hi = n_rows - 1 if all_rows else -1, longest = 0
    cdef bint decreasing = False
    cdef const index_t* ptr         # the loops read through pointers: a .pxd's view reads keep bounds checks
    cdef const long long* rows = &order[0] if not all_rows and order.shape[0] else NULL
    if n_rows < 0 or indices.shape[0] != nnz or indptr[0] != 0 or indptr[n_rows] > nnz:
        raise ValueError("inconsistent CSR arrays: data, indices and indptr do not match.")
    ptr = &indptr[0]
    if n_y != n_rows or n_sw != n_rows:
        raise ValueError(f"y has {n_y} and sample_weight {n_sw} entries for {n_rows} rows.")
    if batch_size < 1:
        raise ValueError(f"batch_size={batch_size} must be >= 1.")
    with nogil:
        if not all_rows:
            for i in range(order.shape[0]):
                lo = min(lo, rows[i])
                hi = max(hi, rows[i])
        if hi < n_rows and lo >= 0:
            if want_longest:
                for i in range(n_rows):
                    longest = max(longest, ptr[i + 1] - ptr[i])
            for i in range(n_rows):
                decreasing |= ptr[i + 1] < ptr[i]
            if decreasing:
                lo = -1
            elif outside(&indices[0] if nnz else NULL, nnz, d):
                lo = -2
    if lo == -2:
        raise ValueError(f"a column index lies outside [0, {d}): the matrix is malformed "
                         "or has more features than the model.")
    if lo < 0 or hi >= n_rows:
        raise ValueError(f"row order must list rows in [0, {n_rows}) of a well-formed CSR matrix.")
    return longest


cdef inline bint outside(const index_t* indices, Py_ssize_t nnz, long long d) noexcept nogil:
    """Whether an index lies outside [0, d). One unsigned comparison each (a negative
    index wraps above d), or-ed without a branch: a loop SSE2 vectorizes for int32."""
    cdef Py_ssize_t i
    cdef unsigned int bad32 = 0, d32
    cdef unsigned long long bad64 = 0
    if index_t is int and d <= 0x7FFFFFFF:
        d32 = <unsigned int>d
        for i in range(nnz):
            bad32 |= <unsigned int>indices[i] >= d32
        return bad32 != 0
    for i in range(nnz):
        bad64 |= <unsigned long long>(<long long>indices[i]) >= <unsigned long long>d
    return bad64 != 0


cdef inline bint consecutive(const long long[::1] order) noexcept nogil:
    """Whether the rows are visited in file order (order[i + 1] = order[i] + 1)."""
    cdef Py_ssize_t i
    cdef const long long* rows = &order[0] if order.shape[0] else NULL     # (no bounds checks)
    for i in range(order.shape[0] - 1):
        if rows[i + 1] != rows[i] + 1:
            return False
    return True


cdef inline void prefetch_lines(const void* lo, const void* hi) noexcept nogil:
    """Ask for the cache lines of [lo, hi) (a row's values or indices)."""
    cdef const char* p = <const char*>lo
    while p < <const char*>hi:
        FASTPROX_PREFETCH_READ(p)
        p += 64


cdef inline void prefetch_rows(Ctx* c, const index_t* indices, long long lo, long long hi,
                               double** keep) noexcept nogil:
    """Ask for the state of the next step's features while this step computes; their
    state rows into keep[0 .. hi - lo) unless it is NULL (the rows in lanes,
    `_state.lane_slot`, which take them from there when their step comes)."""
    cdef long long nz
    cdef double* row
    for nz in range(lo, hi):
        row = c.arrays.state + indices[nz] * c.layout.width
        FASTPROX_PREFETCH(row)
        FASTPROX_PREFETCH(row + c.layout.width - 1)
        if keep != NULL:
            keep[nz - lo] = row
    if c.params.grouped:
        prefetch_groups(c, indices, lo, hi)


cdef inline void prefetch_groups(Ctx* c, const index_t* indices, long long lo, long long hi) noexcept nogil:
    """The group stamps of the next step's features. A loop of its own: a group test
    inside the row loop above made one-output passes 2x slower (measured)."""
    cdef long long nz, g
    for nz in range(lo, hi):
        g = group_of(c, indices[nz])
        if g >= 0:
            if not c.params.plain_rows:
                FASTPROX_PREFETCH(c.groups.mark + g)
            FASTPROX_PREFETCH(c.groups.stamp + g)


cdef inline int refuse_step(const value_t[::1] data, const index_t[::1] indptr,
                            const long long* rows, Py_ssize_t lo, Py_ssize_t hi, bint steep) except -1:
    """Raise the error of a step (rows[lo:hi]) that stopped before its update (`refused`):
    a NaN or an infinity among its rows' values (a first fit leaves them to this
    check, `linear_model`), or else values too large for the steps: a margin that
    overflowed, or (steep) a gradient that could overflow the state."""
    from fastprox._validation import NonFiniteMargin     # (a .pxd imports nothing)
    cdef long long r
    cdef Py_ssize_t i, nz
    for i in range(lo, hi):
        r = row_at(rows, i)
        for nz in range(indptr[r], indptr[r + 1]):
            if not fabs(data[nz]) <= DBL_MAX:
                raise NonFiniteMargin(r, f"Input X contains NaN or infinity ({data[nz]}); "
                                      "remove or replace those values.")
    cause = ("its gradient (the loss's derivative times the row's values) reached 2^480, past "
             "which the steps' sums of squares could overflow" if steep else "the margin overflowed")
    raise NonFiniteMargin(row_at(rows, lo), f"{cause}: the values (or targets, or sample weights) "
                          "are finite but too large for the steps; scale them (or lower eta0) and "
                          "train again. The model is the one before this row.")


cdef inline int margins_csr(const double[:, ::1] W, const value_t[::1] data,
                            const index_t[::1] indices, const index_t[::1] indptr,
                            long long width, double[:, ::1] out) except -1:
    """out[i, k] = sum of W[k, j] x_ij over row i's stored entries with j < W's width,
    for rows of a matrix of `width` columns: an index outside [0, width) is refused
    as `_check_rows` refuses it (a malformed matrix), not skipped. The loop reads
    through pointers once the arrays are checked (a .pxd's view reads keep bounds
    checks); one output's sum is kept in a register, added in the same order."""
    cdef Py_ssize_t i, n = out.shape[0], K = W.shape[0], d = W.shape[1], nnz = indices.shape[0]
    cdef index_t nz, j
    cdef int k
    cdef double z
    cdef bint valid = (indptr.shape[0] == n + 1 and data.shape[0] == nnz and out.shape[1] == K
                       and (n == 0 or indptr[0] == 0))
    cdef const index_t* ptr = &indptr[0] if valid else NULL
    cdef const index_t* ind = &indices[0] if nnz else NULL
    cdef const value_t* x = &data[0] if nnz else NULL
    cdef const double* w = &W[0, 0] if K * d else NULL
    cdef double* o = &out[0, 0] if n * K else NULL
    for i in range(n):
        valid = valid and ptr[i] <= ptr[i + 1] <= nnz
    if not valid:
        raise ValueError("inconsistent CSR arrays: data, indices and indptr do not match.")
    if outside(ind, nnz, width):
        raise ValueError(f"a column index lies outside [0, {width}): the matrix is malformed.")
    with nogil:
        for i in range(n):
            if K == 1:
                z = 0.0
                for nz in range(ptr[i], ptr[i + 1]):
                    j = ind[nz]
                    if j < d:
                        z += w[j] * x[nz]
                o[i] = z
                continue
            for k in range(K):
                o[i * K + k] = 0.0
            for nz in range(ptr[i], ptr[i + 1]):
                j = ind[nz]
                if j < d:
                    for k in range(K):
                        o[i * K + k] += w[k * d + j] * x[nz]
    return 0


cdef inline Py_ssize_t first_nonfinite(const double[:, ::1] out) noexcept nogil:
    """The first row of `out` holding NaN or an infinity; -1 if none does."""
    cdef Py_ssize_t i, k, K = out.shape[1]
    cdef const double* o = &out[0, 0] if out.shape[0] * K else NULL    # (no bounds checks)
    for i in range(out.shape[0]):
        for k in range(K):
            if not fabs(o[i * K + k]) <= DBL_MAX:
                return i
    return -1
