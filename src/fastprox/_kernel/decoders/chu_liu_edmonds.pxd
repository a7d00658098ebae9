# Chu-Liu-Edmonds: the maximum spanning arborescence rooted at 0 of a dense arc-score
# matrix (the contract's non-projective trees; McDonald et al. 2005), optionally
# augmented by the Hamming cost to gold heads.
from libc.stdint cimport int64_t

from fastprox._kernel.decoders.hamming cimport hamming


cdef inline Py_ssize_t chu_liu_edmonds_work(Py_ssize_t n) noexcept nogil:
    """The double scratch `chu_liu_edmonds` needs for n words: N*N, N = n + 1."""
    return (n + 1) * (n + 1)


cdef inline Py_ssize_t chu_liu_edmonds_iwork(Py_ssize_t n) noexcept nogil:
    """The int64 scratch `chu_liu_edmonds` needs for n words: N*N + 12*N + 1, N = n + 1."""
    return (n + 1) * (n + 1) + 12 * (n + 1) + 1


cdef inline Py_ssize_t _best_head(const double* T, const int64_t* alive, Py_ssize_t N,
                                  Py_ssize_t v) noexcept nogil:
    """The alive node u != v of highest T[v*N + u] (arc u -> v), the first in index order."""
    cdef Py_ssize_t u, best = 0
    cdef const double* row = T + v * N
    for u in range(1, N):
        if u != v and alive[u] and row[u] > row[best]:
            best = u
    return best


cdef inline Py_ssize_t _find_cycle(const int64_t* parent, const int64_t* alive, int64_t* mark,
                                   Py_ssize_t N) noexcept nogil:
    """A node on a cycle of the alive nodes' best-head pointers, or 0 if they form a
    tree: walks from each alive node in index order, marking the nodes it passes with
    the walk's start, until the root or a node already marked; the first walk that
    meets its own mark has found a cycle."""
    cdef Py_ssize_t v, x
    for v in range(N):
        mark[v] = 0
    for v in range(1, N):
        if not alive[v] or mark[v]:
            continue
        x = v
        while x != 0 and mark[x] == 0:
            mark[x] = v
            x = parent[x]
        if x != 0 and mark[x] == v:
            return x
    return 0


cdef inline void _set_arc(int64_t arc, Py_ssize_t N, int64_t* heads, int64_t* entry,
                          Py_ssize_t v) noexcept nogil:
    """Keep the original arc h*N + m (heads[m] = h), entering the current node v."""
    heads[arc % N] = arc // N
    entry[v] = arc % N


cdef inline void chu_liu_edmonds(const double* S, Py_ssize_t n, const int64_t* gold, double* T,
                                 int64_t* iwork, int64_t* heads) noexcept nogil:
    """Write to `heads` the maximum spanning arborescence rooted at 0.

    Parameters
    ----------
    S : N*N doubles, row-major, N = n + 1; S[h*N + m] the score of the arc h -> m
        (head h in 0..n, modifier m in 1..n, h != m; column 0 and the diagonal unread).
    n : words (n >= 0); the root 0 may take several of them.
    gold : N heads (gold[0] unread), or NULL. When given, each arc h -> m with
        h != gold[m] counts 1 more (the Hamming cost).
    T : scratch, `chu_liu_edmonds_work(n)` doubles (the working scores, stored by
        modifier: T[m*N + h]).
    iwork : scratch, `chu_liu_edmonds_iwork(n)` int64.
    heads : output, N int64: heads[m] the head of word m, heads[0] = -1.

    Notes
    -----
    Each node takes its best head; while those pointers close a cycle C, C is
    contracted into its smallest node c: an arc u -> c scores max over v in C of
    (u -> v) - (head(v) -> v), an arc c -> u max over v in C of (v -> u), each
    remembering the original arc it stands for; undoing the contractions last first,
    the arc entering c keeps the cycle's other arcs. O(n^2) time: a contraction of a
    cycle of L nodes costs O(L n) and removes L - 1 nodes, and the cycle search is
    O(n) per contraction (the dense-graph bound of Tarjan 1977). Deterministic: best
    heads are the first maximum in index order (kept, after a contraction, unless
    they lay in the cycle, when c takes their place), the cycle found first in that
    order is contracted first, and a contracted arc stands for the first best arc in
    the cycle's order (from its first-found node along the head pointers).
    """
    cdef Py_ssize_t N = n + 1
    cdef Py_ssize_t h, m, u, v, x, c, t, first, last, pos, best_v, ncon, member, m0
    cdef double score, best_in, best_out
    cdef int64_t* orig = iwork                    # N*N: the original arc h*N + m of T[m*N + h]
    cdef int64_t* parent = iwork + N * N          # N: best head of each alive node
    cdef int64_t* alive = parent + N              # N
    cdef int64_t* mark = alive + N                # N: walks, then cycle membership
    cdef int64_t* up = mark + N                   # N: the node a dead node was contracted into
    cdef int64_t* died = up + N                   # N: at which contraction
    cdef int64_t* entry = died + N                # N: the original modifier of the arc entering a node
    cdef int64_t* cycle = entry + N               # 2N: the cycles' nodes, one contraction after the other
    cdef int64_t* cycle_arc = cycle + 2 * N       # 2N: the original arc into each of them
    cdef int64_t* start = cycle_arc + 2 * N       # N + 1: where each contraction's nodes begin
    cdef int64_t* rep = start + N + 1             # N: the node each contraction kept
    heads[0] = -1
    if n == 0:
        return
    for m in range(N):
        alive[m] = 1
        up[m] = -1
    for m in range(1, N):
        for h in range(N):
            if h != m:
                T[m * N + h] = S[h * N + m] + hamming(gold, m, h)
                orig[m * N + h] = h * N + m
    for v in range(1, N):
        parent[v] = _best_head(T, alive, N, v)
    ncon = 0
    pos = 0
    while True:
        first = _find_cycle(parent, alive, mark, N)
        if first == 0:
            break
        # The cycle's nodes in order along the head pointers, marked -1, and c.
        start[ncon] = pos
        for v in range(N):
            mark[v] = 0
        c = first
        x = first
        while True:
            cycle[pos] = x
            cycle_arc[pos] = orig[x * N + parent[x]]
            pos += 1
            mark[x] = -1
            if x < c:
                c = x
            x = parent[x]
            if x == first:
                break
        last = pos
        rep[ncon] = c
        for u in range(N):
            if not alive[u] or mark[u] == -1:
                continue
            # u -> c: the best u -> v less the cycle's arc into v.
            best_v = cycle[start[ncon]]
            best_out = T[best_v * N + u] - T[best_v * N + parent[best_v]]
            for t in range(start[ncon] + 1, last):
                v = cycle[t]
                score = T[v * N + u] - T[v * N + parent[v]]
                if score > best_out:
                    best_out = score
                    best_v = v
            T[c * N + u] = best_out
            orig[c * N + u] = orig[best_v * N + u]
            if u == 0:
                continue
            # c -> u: the best v -> u.
            best_v = cycle[start[ncon]]
            best_in = T[u * N + best_v]
            for t in range(start[ncon] + 1, last):
                v = cycle[t]
                if T[u * N + v] > best_in:
                    best_in = T[u * N + v]
                    best_v = v
            T[u * N + c] = best_in
            orig[u * N + c] = orig[u * N + best_v]
            if mark[parent[u]] == -1:
                parent[u] = c
        for t in range(start[ncon], last):
            v = cycle[t]
            if v != c:
                alive[v] = 0
                up[v] = c
                died[v] = ncon
        parent[c] = _best_head(T, alive, N, c)
        ncon += 1
    # The tree of the last graph, then each contraction undone, last first.
    for v in range(1, N):
        if alive[v]:
            _set_arc(orig[v * N + parent[v]], N, heads, entry, v)
    start[ncon] = pos
    for t in range(ncon - 1, -1, -1):
        c = rep[t]
        m0 = entry[c]
        # The cycle's node that held m0 when the cycle was contracted.
        member = m0
        while up[member] >= 0 and died[member] < t:
            member = up[member]
        for x in range(start[t], start[t + 1]):
            v = cycle[x]
            if v == member:
                entry[v] = m0
            else:
                _set_arc(cycle_arc[x], N, heads, entry, v)
