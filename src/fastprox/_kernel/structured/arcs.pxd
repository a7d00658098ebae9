# The features of every candidate arc of a sentence, as CSR rows (the contract's
# "Trees": a row phi_hm per arc h -> m). `fastprox.structured.arcs` compiles the
# template table into an ArcPlan; `fastprox._arcs` is the Python face.
#
# A sentence of n words has (n + 1) * n rows, h = 0..n, m = 1..n, the arc h -> m
# in row h * n + m - 1; the rows with h = m are empty. Its tokens are (n + 3) rows
# of plan.n_kinds stable hashes, positions -1..n+1 (`fastprox.structured.arcs.tokens`).
# Each template owns a block of columns, and a feature's column is the block's
# first column plus the top bits of its 64-bit hash x,
#     offset + ((x * 0x9E3779B97F4A7C15 mod 2^64) >> shift),
# fastprox.hashing's multiplicative bucket. The hash x of a template whose base
# has seed s (the stable hash of the base's name), on the arc h -> m:
#     H = C(s, F(s, head-side atoms' values at h))
#     M = F(s, modifier-side atoms' values at m)
#     x = C(H, M)
# then C(x, v) for each distinct value v of an in-between template, then C(., d)
# with d the hash of the arc's direction and distance (`dd`) for a conjoined one.
# C(h, v) = fmix64((h * 0x9E3779B97F4A7C15 mod 2^64) XOR v) (MurmurHash3's
# finalizer) and F folds C over the values in order, as
# `fastprox.structured.features.stable_hash.combine` does. Bases whose atoms are
# all on one side have H (or M) hold the whole x, so that an arc reads it.
#
# A row's features come in block order (the plan lists the templates so, the
# in-between ones last, each base's plain block then its conjunction's) and the
# in-between ones are sorted within their block, so
# rows are sorted; an index repeats only where two in-between values' hashes
# share a bucket (the values sum, as the contract sums a repeated index).
from libc.stdint cimport int32_t, int64_t, uint64_t
from libc.stdlib cimport free, realloc
from libc.string cimport memset

cdef extern from "Python.h":
    const Py_ssize_t PY_SSIZE_T_MAX

cdef enum:
    # At most this many atoms on a side of a template.
    ARC_MAX_ATOMS = 4
    # The distance bins (1, 2, 3, 4, 5, 6-10, 11+), for each direction.
    ARC_N_BINS = 7

cdef struct ArcPlan:
    # The bases (the templates before `dd`) come in four runs: n_both reading both
    # sides, n_head_only reading the head's side only, n_mod_only the modifier's
    # only, then n_between in-between bases (both sides and the words between).
    Py_ssize_t n_kinds          # the attributes of a position (tokens' columns)
    Py_ssize_t n_bases
    Py_ssize_t n_both
    Py_ssize_t n_head_only
    Py_ssize_t n_mod_only
    Py_ssize_t n_between
    const int32_t* n_head       # per base: its head-side atoms,
    const int32_t* head_kind    # ARC_MAX_ATOMS per base: each one's attribute
    const int32_t* head_offset  # and its position from the head (-1, 0, +1)
    const int32_t* n_mod        # the same for the modifier's side
    const int32_t* mod_kind
    const int32_t* mod_offset
    const uint64_t* seed        # per base
    const uint64_t* dd          # 2 * ARC_N_BINS: d of R (h < m) by bin, then of L
    Py_ssize_t n_single         # the features every arc has (templates without bp):
    const int32_t* plain_at     # per base: where in a row its template's feature goes
    const int64_t* plain_offset # (-1: not selected), and that block's first column;
    const int32_t* conj_at      # the same for the base conjoined with dd
    const int64_t* conj_offset
    Py_ssize_t between_kind     # the attribute `bp` reads
    const int64_t* between_offset   # 2 per in-between base: the first column of its
                                    # template, then of its conjunction with dd (-1: not selected)
    Py_ssize_t per_value        # the in-between templates selected: features per value between
    int shift                   # 64 - the bits of a block


cdef inline uint64_t arc_combine(uint64_t h, uint64_t v) noexcept nogil:
    """C(h, v): v folded into h (MurmurHash3's fmix64 of h * golden XOR v)."""
    cdef uint64_t x = (h * <uint64_t>0x9E3779B97F4A7C15ULL) ^ v
    x ^= x >> 33
    x *= <uint64_t>0xFF51AFD7ED558CCDULL
    x ^= x >> 33
    x *= <uint64_t>0xC4CEB9FE1A85EC53ULL
    x ^= x >> 33
    return x


cdef inline int32_t _bucket(int64_t offset, uint64_t x, int shift) noexcept nogil:
    return <int32_t>(offset + <int64_t>((x * <uint64_t>0x9E3779B97F4A7C15ULL) >> shift))


cdef inline Py_ssize_t arc_work(const ArcPlan* plan, Py_ssize_t n) noexcept nogil:
    """The uint64 scratch of a sentence of n words: the tables H and M ((n + 1) x
    n_bases each), and for the in-between POS the distinct values met (n), each
    word's first word of the same POS (n + 1) and the sweep that last met each (n + 1)."""
    return 2 * plan.n_bases * (n + 1) + 3 * n + 2


cdef inline uint64_t _side(const uint64_t* tokens, Py_ssize_t n_kinds, Py_ssize_t i, uint64_t s,
                           int32_t count, const int32_t* kind, const int32_t* offset) noexcept nogil:
    """F(s, the atoms' values around position i)."""
    cdef int32_t a
    for a in range(count):
        s = arc_combine(s, tokens[(i + offset[a] + 1) * n_kinds + kind[a]])
    return s


cdef inline void _tables(const ArcPlan* plan, const uint64_t* tokens, Py_ssize_t n,
                         uint64_t* H, uint64_t* M) noexcept nogil:
    """H[i * n_bases + b] and M[i * n_bases + b] of every position i in 0..n and base b."""
    cdef Py_ssize_t B = plan.n_bases, b, i, at
    cdef Py_ssize_t head_only = plan.n_both, mod_only = plan.n_both + plan.n_head_only
    cdef uint64_t s, head, mod
    for i in range(n + 1):
        for b in range(B):
            s = plan.seed[b]
            at = b * ARC_MAX_ATOMS
            head = arc_combine(s, _side(tokens, plan.n_kinds, i, s, plan.n_head[b],
                                        plan.head_kind + at, plan.head_offset + at))
            mod = _side(tokens, plan.n_kinds, i, s, plan.n_mod[b], plan.mod_kind + at, plan.mod_offset + at)
            if head_only <= b < mod_only:
                head = arc_combine(head, s)         # M = F(s, ()) = s
            elif mod_only <= b < mod_only + plan.n_mod_only:
                mod = arc_combine(arc_combine(s, s), mod)
            H[i * B + b] = head
            M[i * B + b] = mod


cdef inline void _first_of_tag(const ArcPlan* plan, const uint64_t* tokens, Py_ssize_t n,
                               uint64_t* first) noexcept nogil:
    """first[i]: the first word j <= i whose in-between attribute equals word i's."""
    cdef Py_ssize_t i, j
    cdef uint64_t tag
    for i in range(1, n + 1):
        tag = tokens[(i + 1) * plan.n_kinds + plan.between_kind]
        j = 1
        while tokens[(j + 1) * plan.n_kinds + plan.between_kind] != tag:
            j += 1
        first[i] = <uint64_t>j


cdef inline Py_ssize_t _meet(const ArcPlan* plan, const uint64_t* tokens, Py_ssize_t i,
                             const uint64_t* first, uint64_t* seen, uint64_t sweep, uint64_t* met,
                             Py_ssize_t k) noexcept nogil:
    """Word i joins the words between: the number of distinct values met, after
    appending word i's to met[0..k) if this sweep had not met it."""
    cdef uint64_t f = first[i]
    if seen[f] == sweep:
        return k
    seen[f] = sweep
    if met != NULL:
        met[k] = tokens[(i + 1) * plan.n_kinds + plan.between_kind]
    return k + 1


cdef inline Py_ssize_t arc_count(const ArcPlan* plan, const uint64_t* tokens, Py_ssize_t n,
                                 int64_t* indptr, uint64_t* work) noexcept nogil:
    """Fill indptr ((n + 1) * n + 1 entries) and work (`arc_work`) for the sentence
    of n >= 1 words with these tokens; returns its number of stored features."""
    cdef Py_ssize_t N = n + 1, B = plan.n_bases, h, m, k, row
    cdef Py_ssize_t per_value = plan.per_value
    cdef uint64_t* first = work + 2 * B * N + n
    cdef uint64_t* seen = first + N
    cdef uint64_t sweep = 0
    _tables(plan, tokens, n, work, work + B * N)
    indptr[0] = 0
    for row in range(N * n):
        h, m = row // n, row % n + 1
        indptr[row + 1] = 0 if h == m else plan.n_single
    if per_value:
        _first_of_tag(plan, tokens, n, first)
        memset(seen, 0, N * sizeof(uint64_t))
        for h in range(N):
            sweep += 1
            k = 0
            for m in range(h + 1, n + 1):           # rightwards: words h+1..m-1 between
                if m - 1 > h:
                    k = _meet(plan, tokens, m - 1, first, seen, sweep, NULL, k)
                indptr[h * n + m] += per_value * k
            sweep += 1
            k = 0
            for m in range(h - 1, 0, -1):           # leftwards: words m+1..h-1 between
                if m + 1 < h:
                    k = _meet(plan, tokens, m + 1, first, seen, sweep, NULL, k)
                indptr[h * n + m] += per_value * k
    for row in range(N * n):
        indptr[row + 1] += indptr[row]
    return <Py_ssize_t>indptr[N * n]


# (an insertion sort of a[0..k): k is at most the number of distinct tags)
from fastprox._rowsort cimport insertion_sort as _sort


cdef inline void _emit(Py_ssize_t b, uint64_t x, uint64_t d, const int32_t* plain_at,
                       const int64_t* plain_offset, const int32_t* conj_at, const int64_t* conj_offset,
                       int shift, int32_t* out) noexcept nogil:
    """Base b's features on an arc where its hash is x: its template's, its
    conjunction with dd's (the plan's fields passed as locals, which the stores to
    out cannot change)."""
    if plain_at[b] >= 0:
        out[plain_at[b]] = _bucket(plain_offset[b], x, shift)
    if conj_at[b] >= 0:
        out[conj_at[b]] = _bucket(conj_offset[b], arc_combine(x, d), shift)


cdef inline void _arc(const ArcPlan* plan, Py_ssize_t h, Py_ssize_t m, const uint64_t* H,
                      const uint64_t* M, const uint64_t* met, Py_ssize_t k, int32_t* out) noexcept nogil:
    """The features of the arc h -> m, whose in-between words have the k distinct
    values met[0..k), into out (its row)."""
    cdef Py_ssize_t B = plan.n_bases, b, j, dist = h - m if h > m else m - h
    cdef Py_ssize_t head_only = plan.n_both, mod_only = head_only + plan.n_head_only
    cdef Py_ssize_t end = mod_only + plan.n_mod_only
    cdef Py_ssize_t bin = dist - 1 if dist <= 5 else (5 if dist <= 10 else 6)
    cdef uint64_t d = plan.dd[(h > m) * ARC_N_BINS + bin], x, y
    cdef const uint64_t* Hh = H + h * B
    cdef const uint64_t* Mm = M + m * B
    cdef const int32_t* plain_at = plan.plain_at
    cdef const int32_t* conj_at = plan.conj_at
    cdef const int64_t* plain_offset = plan.plain_offset
    cdef const int64_t* conj_offset = plan.conj_offset
    cdef int shift = plan.shift
    cdef int64_t plain, conj
    cdef int32_t* more
    for b in range(head_only):
        _emit(b, arc_combine(Hh[b], Mm[b]), d, plain_at, plain_offset, conj_at, conj_offset, shift, out)
    for b in range(head_only, mod_only):
        _emit(b, Hh[b], d, plain_at, plain_offset, conj_at, conj_offset, shift, out)
    for b in range(mod_only, end):
        _emit(b, Mm[b], d, plain_at, plain_offset, conj_at, conj_offset, shift, out)
    if k == 0:
        return
    out += plan.n_single
    for b in range(end, B):                         # the in-between bases, each's blocks in turn
        plain, conj = plan.between_offset[2 * (b - end)], plan.between_offset[2 * (b - end) + 1]
        more = out + k if plain >= 0 else out
        x = arc_combine(Hh[b], Mm[b])
        for j in range(k):
            y = arc_combine(x, met[j])
            if plain >= 0:
                out[j] = _bucket(plain, y, shift)
            if conj >= 0:
                more[j] = _bucket(conj, arc_combine(y, d), shift)
        if plain >= 0:
            _sort(out, k)
        if conj >= 0:
            _sort(more, k)
        out = more + k if conj >= 0 else more


cdef inline void arc_fill(const ArcPlan* plan, const uint64_t* tokens, Py_ssize_t n,
                          const int64_t* indptr, int32_t* indices, uint64_t* work) noexcept nogil:
    """Write the features of every arc into indices (indptr[(n + 1) * n] entries),
    from the indptr and work that `arc_count` filled for these tokens."""
    cdef Py_ssize_t N = n + 1, B = plan.n_bases, h, m, k
    cdef bint between = plan.per_value > 0
    cdef uint64_t* H = work
    cdef uint64_t* M = work + B * N
    cdef uint64_t* met = M + B * N
    cdef uint64_t* first = met + n
    cdef uint64_t* seen = first + N
    cdef uint64_t sweep = 0
    if between:
        memset(seen, 0, N * sizeof(uint64_t))
    for h in range(N):
        sweep += 1
        k = 0
        for m in range(h + 1, n + 1):
            if between and m - 1 > h:
                k = _meet(plan, tokens, m - 1, first, seen, sweep, met, k)
            _arc(plan, h, m, H, M, met, k, indices + indptr[h * n + m - 1])
        sweep += 1
        k = 0
        for m in range(h - 1, 0, -1):
            if between and m + 1 < h:
                k = _meet(plan, tokens, m + 1, first, seen, sweep, met, k)
            _arc(plan, h, m, H, M, met, k, indices + indptr[h * n + m - 1])


cdef struct ArcRows:
    # One sentence's rows, in buffers on the C heap that grow to the longest
    # sentence seen (by half again each time) and are reused: a pass over a corpus
    # holds one sentence's arcs. Zero-initialise; release with arc_rows_free.
    int32_t* indices
    int64_t* indptr
    uint64_t* work
    Py_ssize_t indices_size, indptr_size, work_size     # their capacities
    Py_ssize_t n, n_rows, nnz                           # the sentence's


cdef inline int _grow(void** buffer, Py_ssize_t* size, Py_ssize_t need, size_t item) noexcept nogil:
    """Make buffer hold need items of item bytes (by half again at least); -1 if it cannot."""
    cdef Py_ssize_t new_size
    cdef void* grown
    if need <= size[0]:
        return 0
    new_size = need if need > size[0] + size[0] // 2 else size[0] + size[0] // 2
    if <size_t>new_size > PY_SSIZE_T_MAX // item:
        return -1
    grown = realloc(buffer[0], <size_t>new_size * item)
    if grown == NULL:
        return -1
    buffer[0], size[0] = grown, new_size
    return 0


cdef inline int arc_rows(const ArcPlan* plan, const uint64_t* tokens, Py_ssize_t n,
                         ArcRows* rows) noexcept nogil:
    """The rows of the sentence of n >= 1 words with these tokens, into rows;
    0, or -1 where memory ran out (rows then hold no sentence, n_rows = 0)."""
    rows.n = rows.n_rows = rows.nnz = 0
    if (_grow(<void**>&rows.work, &rows.work_size, arc_work(plan, n), sizeof(uint64_t))
            or _grow(<void**>&rows.indptr, &rows.indptr_size, (n + 1) * n + 1, sizeof(int64_t))):
        return -1
    cdef Py_ssize_t nnz = arc_count(plan, tokens, n, rows.indptr, rows.work)
    if _grow(<void**>&rows.indices, &rows.indices_size, nnz if nnz > 0 else 1, sizeof(int32_t)):
        return -1
    arc_fill(plan, tokens, n, rows.indptr, rows.indices, rows.work)
    rows.n, rows.n_rows, rows.nnz = n, (n + 1) * n, nnz
    return 0


cdef inline void arc_rows_free(ArcRows* rows) noexcept nogil:
    free(rows.indices)
    free(rows.indptr)
    free(rows.work)
    memset(rows, 0, sizeof(ArcRows))


cdef inline double _row_sum(const int32_t* indices, int64_t start, int64_t stop, const double* w,
                            double total) noexcept nogil:
    """total, then w at indices[start..stop) added in turn."""
    cdef int64_t j
    for j in range(start, stop):
        total += w[indices[j]]
    return total


cdef inline void arc_scores(const ArcRows* rows, const double* w, double* S) noexcept nogil:
    """S[h * (n + 1) + m] = <w, phi_hm> for every arc of the sentence in rows (w
    covers every column), each summed in its row's order (as a CSR product sums
    it); S's diagonal and column 0, no arcs, get 0. Four rows are summed side by
    side, so that their additions and reads overlap."""
    cdef Py_ssize_t n = rows.n, N = n + 1, r, row, i
    cdef const int32_t* at = rows.indices
    cdef const int64_t* p = rows.indptr
    cdef int64_t a, b, c, d, common
    cdef double ta, tb, tc, td
    for r in range(N):
        S[r * N] = 0.0
    row = 0
    while row + 4 <= rows.n_rows:
        a, b, c, d = p[row], p[row + 1], p[row + 2], p[row + 3]
        common = min(min(b - a, c - b), min(p[row + 4] - d, d - c))
        ta = tb = tc = td = 0.0
        for i in range(common):
            ta += w[at[a + i]]
            tb += w[at[b + i]]
            tc += w[at[c + i]]
            td += w[at[d + i]]
        ta = _row_sum(at, a + common, b, w, ta)
        tb = _row_sum(at, b + common, c, w, tb)
        tc = _row_sum(at, c + common, d, w, tc)
        td = _row_sum(at, d + common, p[row + 4], w, td)
        S[(row // n) * N + row % n + 1] = ta
        S[((row + 1) // n) * N + (row + 1) % n + 1] = tb
        S[((row + 2) // n) * N + (row + 2) % n + 1] = tc
        S[((row + 3) // n) * N + (row + 3) % n + 1] = td
        row += 4
    for row in range(row, rows.n_rows):
        S[(row // n) * N + row % n + 1] = _row_sum(at, p[row], p[row + 1], w, 0.0)
