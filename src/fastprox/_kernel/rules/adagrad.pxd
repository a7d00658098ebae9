# AdaGrad's composite mirror descent under FOBOS: the per-coordinate step and the
# closed-form catch-up of m proxes with a frozen step.
from libc.math cimport sqrt, exp, log1p, expm1, fabs, copysign
from fastprox._kernel.base.types cimport BERHU
from fastprox._kernel.rules.prox cimport soft_threshold
from fastprox._kernel.base.state cimport Ctx, entry, ROW_LAST_STEP, ADAGRAD_W, ADAGRAD_G, ADAGRAD_ETA
from fastprox._kernel.rules.berhu cimport berhu_const_catch_up
from fastprox._kernel.lanes.pairs cimport adagrad_outputs2

cdef extern from "_kernel/out_of_line.h":
    pass                          # the functions marked FASTPROX_OUT_OF_LINE or _IN_LINE below

cdef extern from *:
    """
    /* Up to this many proxes, `l2_power` takes r^m by binary powering (its relative error
       is below 5.2 m 2^-53 + 5 log2(m) 2^-53, 3.8e-11 here: the contract allows 1e-9);
       beyond, by libm's exp and log1p. */
    #define FASTPROX_POWER_MAX 65536.0
    /* Below this, log1p and expm1 are the first four terms of their series, to rounding:
       the fifth is under 2^-56 / 5 of the sum (`small_log1p`, `small_expm1`). */
    #define FASTPROX_SERIES_MAX (1.0 / 16384)
    """
    const double POWER_MAX "FASTPROX_POWER_MAX"
    const double SERIES_MAX "FASTPROX_SERIES_MAX"

cdef enum:
    L2_LANES = 8                  # the entries `l2_powers` takes at a time


cdef inline double adagrad_catch_up(Ctx* c, double* row, int k) noexcept nogil:
    """m = T - last proxes (last: the row's last step) with the entry's frozen step eta0/(delta + sqrt(G)), in closed form."""
    cdef double* e = entry(c, row, k)
    return adagrad_after(c, e[ADAGRAD_W], e[ADAGRAD_ETA], c.cursor.t - row[ROW_LAST_STEP])


# FASTPROX_IN_LINE
cdef inline double adagrad_after(Ctx* c, double w, double eta, double m) noexcept nogil:
    """The weight w after m proxes with the frozen step eta, in closed form (the
    averaged iterate's catch-up reads it at each of the skipped steps). Kept in line:
    with that second caller GCC left it a call in the AdaGrad rows' l2 catch-up, 15-20%
    slower."""
    cdef double a, kept, lost, L
    if m <= 0 or w == 0.0 or c.params.alpha_pen == 0.0:
        return w
    a = c.params.alpha_pen * eta
    if c.params.penalty == BERHU:
        return berhu_const_catch_up(w, a, m, c.params.berhu_gamma)
    if c.params.l1_share == 1.0:
        return soft_threshold(w, m * a)
    if c.params.l2_powering:
        if c.params.l1_share == 0.0:
            return w * l2_power(a, m, &lost)
        kept = l2_power(a * (1.0 - c.params.l1_share), m, &lost)
        return copysign(max(0.0, kept * fabs(w) - c.params.l1_share / (1.0 - c.params.l1_share) * lost), w)
    L = -m * small_log1p(a * (1.0 - c.params.l1_share))
    if c.params.l1_share == 0.0:
        return w * small_exp(L)
    return copysign(max(0.0, small_exp(L) * fabs(w)
                             + c.params.l1_share / (1.0 - c.params.l1_share) * small_expm1(L)), w)


cdef inline double small_log1p(double x) noexcept nogil:
    """log1p(x); where |x| <= SERIES_MAX its series' first four terms (the common
    catch-up: alpha eta is small, and libm's call was a fifth of an l2 pass)."""
    if fabs(x) <= SERIES_MAX:
        return x * (1.0 - x * (0.5 - x * (1.0 / 3.0 - 0.25 * x)))
    return log1p(x)


cdef inline double small_expm1(double x) noexcept nogil:
    """expm1(x); where |x| <= SERIES_MAX its series' first four terms."""
    if fabs(x) <= SERIES_MAX:
        return x * (1.0 + x * (0.5 + x * (1.0 / 6.0 + x * (1.0 / 24.0))))
    return expm1(x)


cdef inline double small_exp(double x) noexcept nogil:
    """exp(x); where |x| <= SERIES_MAX, 1 + `small_expm1`(x)."""
    if fabs(x) <= SERIES_MAX:
        return 1.0 + small_expm1(x)
    return exp(x)


cdef inline double l2_power(double a, double m, double* lost) noexcept nogil:
    """r^m for r = 1 / (1 + a), a >= 0, m >= 0 a whole number: the factor of m l2 proxes
    with the threshold a (each divides by 1 + a), the shrink of a structured learner's
    lazy l2 catch-ups under AdaGrad (`Params.l2_powering`: `adagrad_after`, the averaged
    sums' geometric series); 1 - r^m into lost[0]. `l2_powers` of one entry: the same
    bits as the structured rows' K entries at a time."""
    cdef double kept
    l2_powers(&a, m, &kept, lost, 1)
    return kept


cdef inline double l2_geometric_sum(double lost, double a, double m) noexcept nogil:
    """sum_{i=1}^{m} r^i = (1 - r^m) / a for r = 1 / (1 + a), from `l2_powers`' lost =
    1 - r^m (m itself where a = 0): the skipped iterates' shrinks that the averaged sums
    add (`average.adagrad_skipped_sum`, the structured rows' `adagrad_l2_catch_up`)."""
    return lost / a if a > 0.0 else m


cdef inline void l2_powers(const double* a, double m, double* kept, double* lost, int n) noexcept nogil:
    """kept[k] = r_k^m and lost[k] = 1 - r_k^m, without cancellation, for r_k = 1 / (1 +
    a[k]), k < n <= L2_LANES (the entries of a feature, which share m: one control flow
    for all, the loops over k vectorised). Up to POWER_MAX proxes by binary powering on
    the pairs (x, 1 - x), x = r^(2^i): 1 - x^2 = (1 - x)(1 + x) and 1 - p x = (1 - p) +
    p (1 - x) are sums and products of positive numbers, so each rounding adds at most
    2^-53 to a relative error that the squarings double: r's own (2 2^-53) and theirs
    stay under 5.2 m 2^-53 + 5 log2(m) 2^-53 (3.8e-11 at POWER_MAX: the contract allows
    1e-9), whatever a. Beyond, exp(-m log1p(a)) and -expm1 of it: a few |m log1p(a)|
    2^-53 (under 746 where r^m is not 0). In structured learners it replaced libm's exp
    and log1p per entry, a quarter of an AdaGrad l2 pass (tests/test_l2_power.py: against
    mpmath)."""
    cdef double x[L2_LANES]
    cdef double y[L2_LANES]
    cdef double L
    cdef long long bits
    cdef int k
    if m > POWER_MAX:
        for k in range(n):
            L = -m * log1p(a[k])
            lost[k] = -expm1(L)
            kept[k] = exp(L)
        return
    for k in range(n):
        x[k] = 1.0 / (1.0 + a[k])
        y[k] = a[k] * x[k]                  # 1 - r
        kept[k], lost[k] = 1.0, 0.0
    bits = <long long>m
    while bits:
        if bits & 1:
            for k in range(n):
                lost[k] = lost[k] + kept[k] * y[k]      # 1 - kept x
                kept[k] = kept[k] * x[k]
        bits >>= 1
        if bits:
            for k in range(n):
                y[k] = y[k] * (1.0 + x[k])              # 1 - x^2
                x[k] = x[k] * x[k]


cdef inline double adagrad_step(Ctx* c, double* e, double g) noexcept nogil:
    """G += g^2 and the entry's new step eta0 / (delta + sqrt(G)), kept (ADAGRAD_ETA) for its
    catch-up; 0 while delta + sqrt(G) = 0 (never a gradient: the weight stays 0)."""
    e[ADAGRAD_G] += g * g
    e[ADAGRAD_ETA] = adagrad_eta(c, e[ADAGRAD_G])
    return e[ADAGRAD_ETA]


cdef inline double adagrad_eta(Ctx* c, double G) noexcept nogil:
    """AdaGrad's step eta0 / (delta + sqrt(G)) for a sum of squares G; 0 while delta +
    sqrt(G) = 0 (never a gradient)."""
    cdef double H = c.params.delta + sqrt(G)
    return c.params.eta0 / H if H > 0.0 else 0.0


# FASTPROX_IN_LINE
cdef inline void adagrad_apply_outputs(Ctx* c, double* row, double x) noexcept nogil:
    """This step's update of the entries of outputs 0 .. K - 1 - K % 2 of a feature of
    value x (one-vs-rest, multinomial; a separable penalty; `_step.step` updates an odd
    K's last): `adagrad_step` then `fobos_prox` at w - eta sigma_k x (sigma_k = q_k for
    the gradient step), two outputs at a time (`_kernel/lanes/pairs.h`: AdaGrad's square root and
    division once for both lanes), lane by lane the scalar operations: the same bits."""
    cdef int k
    for k in range(0, c.params.n_outputs - 1, 2):
        adagrad_outputs2(entry(c, row, k), entry(c, row, k + 1), c.arrays.score_grads[k] * x,
                         c.arrays.score_grads[k + 1] * x, c.arrays.sigma[k] * x, c.arrays.sigma[k + 1] * x,
                         c.params.alpha_pen, c.params.l1_share, c.params.delta, c.params.eta0)
