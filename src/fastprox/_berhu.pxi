# Lazy Berhu under FOBOS (included by _kernels.pyx).
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

cdef int BERHU_ENTRY = 3          # entry fields: w, phase, stamp

cdef enum:
    BERHU_L1 = 0                  # w at threshold sum Q_s: current = soft(w, Q - Q_s)
    BERHU_L2 = 1                  # w at product P_s, in the heap: current = w P / P_s
    BERHU_FRESH = 2               # current and unscheduled, between catch-up and update


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


@cython.final
cdef class BerhuHeap:
    """Entries in the l2 phase, as an indexed max-heap of their exit keys P_s / |w|."""
    cdef double gamma
    cdef long long size
    cdef long long[::1] items, pos
    cdef double[::1] keys

    def __init__(self, long long n, double gamma):
        self.gamma = gamma
        self.size = 0
        self.items = np.zeros(n, dtype=np.int64)
        self.keys = np.zeros(n)
        self.pos = np.full(n, -1, dtype=np.int64)

    def __getstate__(self):
        return (self.size, np.asarray(self.items).copy(), np.asarray(self.keys).copy(),
                np.asarray(self.pos).copy())

    def __setstate__(self, s):
        self.size = s[0]
        self.items, self.keys, self.pos = s[1].copy(), s[2].copy(), s[3].copy()

    cdef double current(self, double* e, double P, double Q) noexcept nogil:
        """The entry's value at the current step, without changing it."""
        cdef int phase = <int>e[1]
        if phase == BERHU_L2:
            return e[0] * (P / e[2])
        if phase == BERHU_L1:
            return soft_threshold(e[0], Q - e[2])
        return e[0]

    cdef void catch_up(self, double* e, long long idx, double P, double Q) noexcept nogil:
        """Make the entry current and take it out of the schedule until its update."""
        cdef double w = self.current(e, P, Q)
        if <int>e[1] == BERHU_L2:
            self._remove(idx)
        e[0] = w
        e[1] = BERHU_FRESH

    cdef void schedule(self, double* e, long long idx, double w, double P, double Q) noexcept nogil:
        """Store w as current at cumulants (P, Q) and put it in the phase it will start with."""
        e[0] = w
        if fabs(w) > self.gamma:
            e[1] = BERHU_L2
            e[2] = P
            self._push(idx, P / fabs(w))
        else:
            e[1] = BERHU_L1
            e[2] = Q

    cdef void advance(self, double* base, int n_entry, double P, double Q, double a) noexcept nogil:
        """Before this step's cumulants: move every entry that leaves the l2 branch now to l1."""
        cdef double L = P / (a + self.gamma)
        cdef double v
        cdef double* e
        while self.size > 0 and self.keys[0] >= L:
            e = base + self.items[0] * n_entry
            self._remove(self.items[0])
            v = fabs(e[0]) * (P / e[2])
            e[0] = copysign(v - a, e[0]) if v > a else 0.0
            e[1] = BERHU_L1
            e[2] = Q + a

    cdef void _push(self, long long idx, double key) noexcept nogil:
        cdef long long i = self.size
        self.size += 1
        self.items[i] = idx
        self.keys[i] = key
        self.pos[idx] = i
        self._sift_up(i)

    cdef void _remove(self, long long idx) noexcept nogil:
        cdef long long i = self.pos[idx]
        cdef long long last = self.size - 1
        cdef long long moved
        self.pos[idx] = -1
        self.size = last
        if i == last:
            return
        moved = self.items[last]
        self.items[i] = moved
        self.keys[i] = self.keys[last]
        self.pos[moved] = i
        self._sift_up(i)
        self._sift_down(self.pos[moved])

    cdef void _swap(self, long long i, long long j) noexcept nogil:
        cdef long long it = self.items[i]
        cdef double k = self.keys[i]
        self.items[i], self.keys[i] = self.items[j], self.keys[j]
        self.items[j], self.keys[j] = it, k
        self.pos[self.items[i]] = i
        self.pos[self.items[j]] = j

    cdef void _sift_up(self, long long i) noexcept nogil:
        cdef long long parent
        while i > 0:
            parent = (i - 1) // 2
            if self.keys[parent] >= self.keys[i]:
                return
            self._swap(i, parent)
            i = parent

    cdef void _sift_down(self, long long i) noexcept nogil:
        cdef long long c, best
        while True:
            best = i
            c = 2 * i + 1
            if c < self.size and self.keys[c] > self.keys[best]:
                best = c
            if c + 1 < self.size and self.keys[c + 1] > self.keys[best]:
                best = c + 1
            if best == i:
                return
            self._swap(i, best)
            i = best
