# Proximal operators of the group penalties on one block (the contract's
# group table; FOBOS Sec. 5, Martins et al. Sec. 3.1). Inline, nogil.
# A block is m doubles in a contiguous buffer, changed in place.
from libc.math cimport sqrt, fabs, copysign
from libc.stdlib cimport qsort
from fastprox._kernel.rules.prox cimport soft_threshold


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


# Under RDA with AdaGrad's per-entry beta_i, the block problem
#     min sum_i (S_i w_i + beta_i w_i^2 / 2) + c r(w),  c = T alpha,
# is no longer a scaled prox, but it stays one-dimensional:
# - l1_l2: w = 0 if ||S|| <= c, else w_i = -S_i nu / (beta_i nu + c) with nu = ||w||
#   the root of sum_i S_i^2 / (beta_i nu + c)^2 = 1 (decreasing and convex in nu:
#   Newton from nu = 0 climbs to it monotonically);
# - sparse_group: the same on soft(S, c rho) with c (1 - rho);
# - l1_linf: w = 0 if ||S||_1 <= c, else w_i = -sign(S_i) min(|S_i| / beta_i, u) with u
#   the root of sum_i max(0, |S_i| - beta_i u) = c, piecewise linear: exact after sorting.

cdef inline void adagrad_group_shrink(double* v, const double* beta, Py_ssize_t m, double c) noexcept nogil:
    """v <- argmin sum_i (-v_i w_i + beta_i w_i^2 / 2) + c ||w||_2, in place (v = -S)."""
    cdef Py_ssize_t i, it
    cdef double nu = 0.0, step, psi, dpsi, den, s2 = 0.0
    for i in range(m):
        s2 += v[i] * v[i]
    if c <= 0.0:
        for i in range(m):
            v[i] = v[i] / beta[i] if beta[i] > 0.0 else 0.0
        return
    if sqrt(s2) <= c:
        for i in range(m):
            v[i] = 0.0
        return
    for it in range(200):
        psi, dpsi = -1.0, 0.0
        for i in range(m):
            den = beta[i] * nu + c
            psi += v[i] * v[i] / (den * den)
            dpsi -= 2.0 * v[i] * v[i] * beta[i] / (den * den * den)
        if dpsi == 0.0:
            break
        step = -psi / dpsi
        if not step > 0.0 or nu + step == nu:
            break
        nu += step
    for i in range(m):
        v[i] = v[i] * nu / (beta[i] * nu + c)


cdef inline void adagrad_linf_shrink(double* v, const double* beta, Py_ssize_t m, double c, double* work) noexcept nogil:
    """v <- argmin sum_i (-v_i w_i + beta_i w_i^2 / 2) + c ||w||_inf, in place (v = -S)."""
    cdef Py_ssize_t i, r, n = 0
    cdef double l1 = 0.0, sum_s = 0.0, sum_b = 0.0, u = 0.0
    for i in range(m):
        l1 += fabs(v[i])
    if l1 <= c:
        for i in range(m):
            v[i] = 0.0
        return
    for i in range(m):
        if beta[i] > 0.0 and v[i] != 0.0:
            work[3 * n] = fabs(v[i]) / beta[i]
            work[3 * n + 1] = fabs(v[i])
            work[3 * n + 2] = beta[i]
            n += 1
    qsort(work, n, 3 * sizeof(double), _descending)    # by each triple's first value
    for r in range(n):
        sum_s += work[3 * r + 1]
        sum_b += work[3 * r + 2]
        u = (sum_s - c) / sum_b
        if r + 1 == n or u >= work[3 * (r + 1)]:
            break
    for i in range(m):
        if beta[i] > 0.0:
            v[i] = copysign(min(fabs(v[i]) / beta[i], u), v[i])
        else:
            v[i] = 0.0
