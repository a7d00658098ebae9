# Eisner's algorithm: the best projective dependency tree rooted at 0 (the
# contract's `projective=True` trees; Eisner 1996, McDonald et al. 2005), optionally
# augmented by the Hamming cost to gold heads.
from libc.stdint cimport int64_t

from fastprox._kernel.decoders.hamming cimport hamming

# The span kinds, as the backtracking stack stores them.
cdef enum:
    COMPLETE_RIGHT = 0
    COMPLETE_LEFT = 1
    INCOMPLETE_RIGHT = 2
    INCOMPLETE_LEFT = 3

# The span tables, N*N doubles each in `work`, stored by the span's start s (row s,
# column t) or by its end t (row t, column s), so that every split scans rows: C[s][t]
# complete spans, I[s][t] incomplete ones (an arc s -> t (right) or t -> s (left)).
cdef enum:
    CR_BY_START = 0     # C[s][t][->] at s*N + t (s heads the span)
    CR_BY_END = 1       # C[s][t][->] at t*N + s
    CL_BY_START = 2     # C[s][t][<-] at s*N + t (t heads the span)
    CL_BY_END = 3       # C[s][t][<-] at t*N + s
    IR_BY_START = 4     # I[s][t][->] at s*N + t
    IL_BY_END = 5       # I[s][t][<-] at t*N + s


cdef inline Py_ssize_t eisner_work(Py_ssize_t n) noexcept nogil:
    """The double scratch `eisner` needs for n words: 6*N*N, N = n + 1 (the span tables)."""
    return 6 * (n + 1) * (n + 1)


cdef inline Py_ssize_t eisner_iwork(Py_ssize_t n) noexcept nogil:
    """The int64 scratch `eisner` needs for n words: max(n, 1) (the spans still to unfold)."""
    return n if n > 0 else 1


cdef inline Py_ssize_t _first_best(const double* a, const double* b, Py_ssize_t lo, Py_ssize_t hi,
                                   double* best) noexcept nogil:
    """The first r in lo..hi-1 (lo < hi) of highest a[r] + b[r]; writes that sum to best.
    Every split of a span is this scan over two table rows in memory order."""
    cdef Py_ssize_t r, arg = lo
    cdef double v, m = a[lo] + b[lo]
    for r in range(lo + 1, hi):
        v = a[r] + b[r]
        if v > m:
            m = v
            arg = r
    best[0] = m
    return arg


cdef inline Py_ssize_t _split(const double* work, Py_ssize_t N, int kind, Py_ssize_t s, Py_ssize_t t,
                              double* best) noexcept nogil:
    """The best split point r of span s..t of the given kind (the first in r among ties)
    and its score, without the arc of an incomplete span:
    incomplete: r in s..t-1, C[s][r][->] + C[r+1][t][<-];
    COMPLETE_LEFT: r in s..t-1, C[s][r][<-] + I[r][t][<-];
    COMPLETE_RIGHT: r in s+1..t, I[s][r][->] + C[r][t][->]."""
    cdef Py_ssize_t NN = N * N
    if kind == COMPLETE_RIGHT:
        return _first_best(work + IR_BY_START * NN + s * N, work + CR_BY_END * NN + t * N, s + 1, t + 1, best)
    if kind == COMPLETE_LEFT:
        return _first_best(work + CL_BY_START * NN + s * N, work + IL_BY_END * NN + t * N, s, t, best)
    return _first_best(work + CR_BY_START * NN + s * N, work + CL_BY_END * NN + t * N + 1, s, t, best)


cdef inline int64_t _span(int kind, Py_ssize_t s, Py_ssize_t t, Py_ssize_t N) noexcept nogil:
    """The stack's code of a span: (kind*N + s)*N + t."""
    return (kind * N + s) * N + t


cdef inline Py_ssize_t _push(int64_t* stack, Py_ssize_t top, int kind, Py_ssize_t s, Py_ssize_t t,
                             Py_ssize_t N) noexcept nogil:
    """Push the span s..t unless it is a single word (nothing to unfold); the new top.
    The pending spans overlap at most at their ends, so at most n are pending."""
    if s < t:
        stack[top] = _span(kind, s, t, N)
        return top + 1
    return top


cdef inline void eisner(const double* S, Py_ssize_t n, const int64_t* gold, double* work,
                        int64_t* stack, int64_t* heads) noexcept nogil:
    """Write to `heads` the projective tree rooted at 0 of highest score.

    Parameters
    ----------
    S, n, gold : as `chu_liu_edmonds.chu_liu_edmonds` (S (n+1)*(n+1) row-major,
        S[h*(n+1) + m] the arc h -> m; gold (n+1) heads or NULL for the Hamming cost).
    work : scratch, `eisner_work(n)` doubles.
    stack : scratch, `eisner_iwork(n)` int64.
    heads : output, N int64: heads[m] the head of word m, heads[0] = -1.

    Notes
    -----
    Spans s..t of the words, complete (C: a head and all its descendants on one
    side) or incomplete (I: an arc s -> t or t -> s with what lies between), built
    by increasing t and, for each t, decreasing s, so that every table row a split
    scans lies in memory order:
    ``I[s][t] = max_r C[s][r][->] + C[r+1][t][<-]`` plus the arc,
    ``C[s][t][<-] = max_r C[s][r][<-] + I[r][t][<-]``,
    ``C[s][t][->] = max_r I[s][r][->] + C[r][t][->]``; no span makes 0 a
    modifier, and the root may head several words. The tree is unfolded from
    C[0][n][->] with each span's split recomputed by the same function (so the same
    sums, the same choice). Complete spans are stored twice, by start and by end, so
    that each split scans two rows in memory order. O(n^3) time, O(n^2) space.
    Deterministic: each split is the first maximum in increasing r.
    """
    cdef Py_ssize_t N = n + 1, NN = N * N
    cdef Py_ssize_t s, t, r, top
    cdef int64_t code
    cdef int kind
    cdef double m
    cdef double* CR = work + CR_BY_START * NN
    cdef double* CRe = work + CR_BY_END * NN
    cdef double* CL = work + CL_BY_START * NN
    cdef double* CLe = work + CL_BY_END * NN
    cdef double* IR = work + IR_BY_START * NN
    cdef double* ILe = work + IL_BY_END * NN
    heads[0] = -1
    if n == 0:
        return
    for s in range(N):
        CR[s * N + s] = CRe[s * N + s] = CL[s * N + s] = CLe[s * N + s] = 0.0
    for t in range(1, N):
        for s in range(t - 1, -1, -1):
            _split(work, N, INCOMPLETE_RIGHT, s, t, &m)
            IR[s * N + t] = m + (S[s * N + t] + hamming(gold, t, s))
            if s > 0:
                ILe[t * N + s] = m + (S[t * N + s] + hamming(gold, s, t))
                _split(work, N, COMPLETE_LEFT, s, t, &m)
                CL[s * N + t] = CLe[t * N + s] = m
            _split(work, N, COMPLETE_RIGHT, s, t, &m)
            CR[s * N + t] = CRe[t * N + s] = m
    top = 0
    stack[top] = _span(COMPLETE_RIGHT, 0, n, N)
    top += 1
    while top > 0:
        top -= 1
        code = stack[top]
        t = code % N
        s = (code // N) % N
        kind = <int>(code // NN)
        r = _split(work, N, kind, s, t, &m)
        if kind == COMPLETE_RIGHT:
            top = _push(stack, top, INCOMPLETE_RIGHT, s, r, N)
            top = _push(stack, top, COMPLETE_RIGHT, r, t, N)
        elif kind == COMPLETE_LEFT:
            top = _push(stack, top, COMPLETE_LEFT, s, r, N)
            top = _push(stack, top, INCOMPLETE_LEFT, r, t, N)
        else:
            if kind == INCOMPLETE_RIGHT:
                heads[t] = s
            else:
                heads[s] = t
            top = _push(stack, top, COMPLETE_RIGHT, s, r, N)
            top = _push(stack, top, COMPLETE_LEFT, r + 1, t, N)
