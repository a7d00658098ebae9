# The best tree in which the root heads exactly one word (CoNLL-U's trees: one word has
# HEAD 0), by either tree decoder: the arc-factored decoders let the root head several.
from libc.stdint cimport int64_t

ctypedef void (*tree_decoder)(const double*, Py_ssize_t, const int64_t*, double*, int64_t*,
                              int64_t*) noexcept nogil


cdef inline void one_root(tree_decoder decode, double* S, Py_ssize_t n, const int64_t* gold, double* work,
                          int64_t* iwork, int64_t* heads) noexcept nogil:
    """Write to `heads` the tree of highest score (plus the Hamming cost to `gold`, if
    not NULL) among the trees whose root heads one word, by `decode` (Chu-Liu-Edmonds
    or Eisner, whose arguments these are).

    The decoder's tree when it has one root already (the same heads, bit for bit).
    Otherwise the decoder's tree of S with every root arc 0 -> m lowered by M, one
    more than any two trees' (costed) scores can differ (the sum over the words m of
    the spread of their arcs' scores, plus 1 per word with the cost): every tree has
    a root arc, and one with k > 1 of them scores (k - 1) M less against any tree with
    one than it would, more than it could gain. So the lowered S's best tree has one
    root arc and, all those trees being lowered by the same M, the highest score among
    them (Gabow and Tarjan's reduction). O(n^2) besides the decoder's two runs. S's
    row 0 is changed then (S is the caller's scratch).
    """
    cdef Py_ssize_t N = n + 1, h, m, roots = 0
    cdef double low, high, M = 1.0
    decode(S, n, gold, work, iwork, heads)
    for m in range(1, N):
        roots += heads[m] == 0
    if roots <= 1:
        return
    for m in range(1, N):
        low = high = S[m]
        for h in range(1, N):
            if h != m:
                low = min(low, S[h * N + m])
                high = max(high, S[h * N + m])
        M += high - low + (gold != NULL)
    for m in range(1, N):
        S[m] -= M
    decode(S, n, gold, work, iwork, heads)
