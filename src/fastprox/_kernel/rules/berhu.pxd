# Lazy Berhu under FOBOS: the schedule of the weights' l2 phases.
#
# The Berhu prox with threshold a is, by |v|: zero (|v| <= a), soft-threshold
# (a < |v| <= a + gamma), or the l2 shrink v / (1 + a/gamma). Left alone, a
# weight first shrinks by factors (the l2 branch) and, once at or below
# a_tau + gamma, soft-thresholds to zero (the l1 branch, which it never leaves).
#
# Under a scalar schedule the thresholds a_tau = alpha eta_tau change, so the
# step at which a weight leaves the l2 branch has no closed form; but
# L_tau = P_{tau-1} / (a_tau + gamma) strictly decreases with tau (P is the
# product of l2 shrink factors), and a weight stamped at P_s with value w
# leaves at the first step with L_tau <= P_s / |w|. A max-heap of those keys
# therefore tells, at every step, exactly which weights leave the l2 branch
# now: they are moved to the l1 phase, where thresholds add up (FOBOS
# Proposition 11). Cost: O(log(d K)) per touched entry, amortised.
#
# Under adagrad the threshold of an untouched entry is constant, and the
# number of l2 steps is a logarithm: `berhu_const_catch_up`.
from libc.math cimport fabs, copysign, log, log1p, exp, ceil
from fastprox._kernel.rules.prox cimport soft_threshold

cdef extern from "_kernel/out_of_line.h":
    pass                          # the functions marked FASTPROX_OUT_OF_LINE or _IN_LINE below


cdef enum:
    # the entry of fobos + berhu under a scalar step (named offsets, as `_state`'s)
    BERHU_W = 0                   # the weight, current at the stamp
    BERHU_PHASE = 1               # BERHU_L1, BERHU_L2 or BERHU_FRESH
    BERHU_STAMP = 2               # Q_s (l1 phase) or P_s (l2 phase)
    BERHU_ENTRY = 3

cdef enum:
    BERHU_L1 = 0                  # w at threshold sum Q_s: current = soft(w, Q - Q_s)
    BERHU_L2 = 1                  # w at product P_s, in the heap: current = w P / P_s
    BERHU_FRESH = 2               # current and unscheduled, between catch-up and update


cdef struct Heap:
    # Entries in the l2 phase: an indexed max-heap of their exit keys P_s / |w|.
    double gamma
    long long size
    long long* items              # heap position -> entry index j * K + k
    double* keys                  # heap position -> key
    long long* pos                # entry index -> heap position, -1 if absent


cdef inline double berhu_const_catch_up(double w, double a, double m, double gamma) noexcept nogil:
    """m Berhu proxes with the same threshold a: l2 shrinks while |w| > a + gamma, then l1."""
    cdef double v = fabs(w)
    cdef double n2 = 0.0
    cdef double log_s
    if v > a + gamma:
        log_s = -log1p(a / gamma)
        n2 = min(m, ceil(log((a + gamma) / v) / log_s))
        v *= exp(n2 * log_s)
    return copysign(max(0.0, v - (m - n2) * a), w)


cdef inline double heap_current(Heap* h, double* e, double shrink_product,
                                double threshold_sum) noexcept nogil:
    """The entry's value at the current step, without changing it."""
    cdef int phase = <int>e[BERHU_PHASE]
    if phase == BERHU_L2:
        return e[BERHU_W] * (shrink_product / e[BERHU_STAMP])
    if phase == BERHU_L1:
        return soft_threshold(e[BERHU_W], threshold_sum - e[BERHU_STAMP])
    return e[BERHU_W]


cdef inline void heap_catch_up(Heap* h, double* e, long long idx, double shrink_product,
                               double threshold_sum) noexcept nogil:
    """Make the entry current and take it out of the schedule until its update."""
    cdef double w = heap_current(h, e, shrink_product, threshold_sum)
    if <int>e[BERHU_PHASE] == BERHU_L2:
        heap_remove(h, idx)
    e[BERHU_W] = w
    e[BERHU_PHASE] = BERHU_FRESH


cdef inline void heap_schedule(Heap* h, double* e, long long idx, double w, double shrink_product,
                               double threshold_sum) noexcept nogil:
    """Store w as current at the cumulants (shrink_product P, threshold_sum Q) and put it
    in the phase it will start with."""
    e[BERHU_W] = w
    if fabs(w) > h.gamma:
        e[BERHU_PHASE] = BERHU_L2
        e[BERHU_STAMP] = shrink_product
        heap_push(h, idx, shrink_product / fabs(w))
    else:
        e[BERHU_PHASE] = BERHU_L1
        e[BERHU_STAMP] = threshold_sum


cdef inline void heap_advance(Heap* h, double* base, int n_entry_fields, double shrink_product,
                              double threshold_sum, double a) noexcept nogil:
    """Before this step's cumulants: move every entry that leaves the l2 branch now to l1."""
    cdef double L = shrink_product / (a + h.gamma)
    cdef double v
    cdef double* e
    while h.size > 0 and h.keys[0] >= L:
        e = base + h.items[0] * n_entry_fields
        heap_remove(h, h.items[0])
        v = fabs(e[BERHU_W]) * (shrink_product / e[BERHU_STAMP])
        e[BERHU_W] = copysign(v - a, e[BERHU_W]) if v > a else 0.0
        e[BERHU_PHASE] = BERHU_L1
        e[BERHU_STAMP] = threshold_sum + a


cdef inline void heap_push(Heap* h, long long idx, double key) noexcept nogil:
    cdef long long i = h.size
    h.size += 1
    h.items[i] = idx
    h.keys[i] = key
    h.pos[idx] = i
    heap_sift_up(h, i)


# FASTPROX_OUT_OF_LINE
cdef inline void heap_remove(Heap* h, long long idx) noexcept nogil:
    cdef long long i = h.pos[idx]
    cdef long long last = h.size - 1
    cdef long long moved
    h.pos[idx] = -1
    h.size = last
    if i == last:
        return
    moved = h.items[last]
    h.items[i] = moved
    h.keys[i] = h.keys[last]
    h.pos[moved] = i
    heap_sift_up(h, i)
    heap_sift_down(h, h.pos[moved])


cdef inline void heap_swap(Heap* h, long long i, long long j) noexcept nogil:
    cdef long long it = h.items[i]
    cdef double k = h.keys[i]
    h.items[i], h.keys[i] = h.items[j], h.keys[j]
    h.items[j], h.keys[j] = it, k
    h.pos[h.items[i]] = i
    h.pos[h.items[j]] = j


# FASTPROX_OUT_OF_LINE
cdef inline void heap_sift_up(Heap* h, long long i) noexcept nogil:
    cdef long long parent
    while i > 0:
        parent = (i - 1) // 2
        if h.keys[parent] >= h.keys[i]:
            return
        heap_swap(h, i, parent)
        i = parent


cdef inline void heap_sift_down(Heap* h, long long i) noexcept nogil:
    cdef long long c, best
    while True:
        best = i
        c = 2 * i + 1
        if c < h.size and h.keys[c] > h.keys[best]:
            best = c
        if c + 1 < h.size and h.keys[c + 1] > h.keys[best]:
            best = c + 1
        if best == i:
            return
        heap_swap(h, i, best)
        i = best
