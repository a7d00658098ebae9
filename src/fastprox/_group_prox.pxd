# Proximal operators of the group penalties on one block (the contract's
# group table; FOBOS Sec. 5, Martins et al. Sec. 3.1). Inline, nogil.
# A block is m doubles in a contiguous buffer, changed in place.
from libc.math cimport sqrt, fabs, copysign
from libc.stdlib cimport qsort
from fastprox._prox cimport soft_threshold


cdef inline int _descending(const void* a, const void* b) noexcept nogil:
    cdef double x = (<const double*>a)[0], y = (<const double*>b)[0]
    return (x < y) - (x > y)


cdef inline double block_norm(const double* v, Py_ssize_t m) noexcept nogil:
    """Euclidean (Frobenius) norm of the block."""
    cdef double s = 0.0
    cdef Py_ssize_t i
    for i in range(m):
        s += v[i] * v[i]
    return sqrt(s)


cdef inline void prox_l1_l2(double* v, Py_ssize_t m, double a) noexcept nogil:
    """prox of a*||.||_2: max(0, 1 - a/||v||) v (group lasso); the identity for a = 0,
    also on a block whose norm underflows to 0 (a group of weight 0 passes through)."""
    cdef double n = block_norm(v, m)
    cdef double f = 1.0 - a / n if n > a else (0.0 if a > 0.0 else 1.0)
    cdef Py_ssize_t i
    for i in range(m):
        v[i] *= f


cdef enum:
    SMALL_BLOCK = 32     # blocks up to this size find the l1-ball level without sorting


cdef inline double l1_ball_level(const double* v, Py_ssize_t m, double radius, double* work) noexcept nogil:
    """The level theta with sum_i max(|v_i| - theta, 0) = radius, for ||v||_1 > radius.

    Small blocks (a row of K classes) use Michelot's iteration: theta is the mean excess
    of the entries above the previous theta, which only rises, and stops once no entry
    drops out; each pass is branch-free. Sorting per catch-up (qsort's call per
    comparison, mispredicted swaps) cost 5x the rest of an l1/linf step at K = 10.
    Large blocks sort the magnitudes (Duchi et al. 2008, Fig. 1): O(m log m) whatever
    the data, where Michelot's passes can number m.

    A radius below the entries' rounding unit gives theta = max |v_i| (the block
    unchanged, to rounding), never a level that no entry exceeds."""
    cdef Py_ssize_t i, n, count
    cdef double cumsum = 0.0, theta, total = 0.0, above, x
    if m > SMALL_BLOCK:
        for i in range(m):
            work[i] = fabs(v[i])
        qsort(work, m, sizeof(double), _descending)
        theta = work[0] - radius    # the largest entry alone, should rounding fail every test
        for i in range(m):
            cumsum += work[i]
            if work[i] * (i + 1) > cumsum - radius:
                theta = (cumsum - radius) / (i + 1)
        return theta
    for i in range(m):
        total += fabs(v[i])
    n = m
    theta = (total - radius) / n
    while True:
        above = 0.0
        count = 0
        for i in range(m):
            x = fabs(v[i])
            if x > theta:
                above += x
                count += 1
        if count >= n or count == 0:    # none dropped out (0: rounding put theta at the max)
            return theta
        n = count
        theta = (above - radius) / n


cdef inline void prox_l1_linf(double* v, Py_ssize_t m, double a, double* work) noexcept nogil:
    """prox of a*||.||_inf: v minus its projection on the l1-ball of radius a, i.e. v
    clipped at the level theta of that projection (zero when ||v||_1 <= a)."""
    cdef double l1 = 0.0, theta
    cdef Py_ssize_t i
    if a <= 0.0:
        return
    for i in range(m):
        l1 += fabs(v[i])
    if l1 <= a:
        for i in range(m):
            v[i] = 0.0
        return
    theta = l1_ball_level(v, m, a, work)
    for i in range(m):
        if fabs(v[i]) > theta:
            v[i] = copysign(theta, v[i])


cdef inline void prox_sparse_group(double* v, Py_ssize_t m, double a, double rho, double weight) noexcept nogil:
    """prox of a*(rho ||.||_1 + (1-rho) weight ||.||_2): soft-threshold by a rho, then the
    group shrink by a (1-rho) weight (in that order it is the exact prox). The group's
    weight scales the group part only: the l1 part is per entry, not per group."""
    cdef Py_ssize_t i
    for i in range(m):
        v[i] = soft_threshold(v[i], a * rho)
    prox_l1_l2(v, m, a * (1.0 - rho) * weight)


cdef inline double squared_group_tau(const double* norms, const double* weights, Py_ssize_t p,
                                     double a, double* work) noexcept nogil:
    """The shared threshold tau of the prox of (a/2)(sum_G d_G n_G)^2 on group norms n >= 0
    (Martins et al., Alg. 4; weights NULL: every d_G = 1, Alg. 2): the prox is
    n_G -> max(0, n_G - d_G tau), tau = a * sum_G d_G n_G' of the result. Groups with
    d_G = 0 are unpenalized: they pass through and are left out of the sums (n / d would
    be 0 * inf). Sorts u0 = n / d in decreasing order carrying (d, n) along (work: 3p
    doubles, p without weights); the sums and the test use d and n only, so a tiny d
    (u0 = inf) sorts first and stays exact."""
    cdef Py_ssize_t r, k = 0
    cdef double n, d, top = 0.0, mass = 0.0, tau = 0.0
    cdef bint active
    for r in range(p):
        if weights == NULL:
            work[r] = norms[r]
        elif weights[r] > 0.0:
            work[3 * k] = norms[r] / weights[r]
            work[3 * k + 1] = weights[r]
            work[3 * k + 2] = norms[r]
            k += 1
    if weights == NULL:
        k = p
    qsort(work, k, (1 if weights == NULL else 3) * sizeof(double), _descending)
    for r in range(k):
        if weights == NULL:
            n = work[r]
            top += n
            mass += 1.0
            # n_(r) > a top / (1 + a (r + 1)), multiplied out: stays exact for a huge a
            active = n + a * (mass * n - top) > 0.0
        else:
            d, n = work[3 * r + 1], work[3 * r + 2]
            # u0_(r) > a top / (1 + a mass) times d (1 + a mass), over the groups before
            # this one: its own terms, d^2 n - d (d n), cancel but for a rounding that a
            # huge a would blow up past n (at r = 0 the test reads n > 0)
            active = n + a * (mass * n - d * top) > 0.0
            top += d * n                 # sum of a_r u0_r, a_r = d_r^2
            mass += d * d                # sum of a_r
        if active:
            tau = a * top / (1.0 + mass * a)
    return tau
