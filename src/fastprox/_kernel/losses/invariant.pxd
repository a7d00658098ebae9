# The importance-invariant step (Karampatziakis & Langford 2011, the contract's
# `step = "invariant"`): a row of importance weight h moves the weights by
# v = w - sigma * (eta ⊙ x), where sigma(h) solves d sigma/dh = l'(p - sigma q, y),
# sigma(0) = 0, with q = sum_j eta_j x_j^2 the row's step norm. Every loss's
# sigma is a closed form, written here as the gradient step shortened by a
# fraction rho in (0, 1]:
#
#     sigma = h * l'(p) * rho,   rho = (what the flow moves) / (what h * l'(p) moves),
#
# so that sigma / h -> l'(p) as q h -> 0 with no cancellation (the table's
# (z0 - z) / q loses every digit when q h is small), and q = 0 gives the
# gradient step h * l'(p) exactly. s = q * h throughout: the step norm of the row
# times its weight, the flow's time in units of the margin.
from libc.math cimport exp, log, log1p, expm1, fma, fabs, fmin, fmax, INFINITY, NAN, M_LN2

from fastprox._kernel.losses.losses cimport (dloss, log_pi, LOG, HINGE, SQUARED_HINGE, MODIFIED_HUBER, SQUARED, HUBER,
                               EPSILON_INSENSITIVE, SQUARED_EPSILON_INSENSITIVE)


cdef inline double _halley_w(double x, double C, double L) noexcept nogil:
    """W(x e^C), principal branch, from log(1 + x e^C) = L: Halley's iteration on
    f(w) = w - u, u = x e^(C - w) (f = 0 is w e^w = x e^C; u never overflows, and f is
    computed to a rounding of w, so W is too: the direct form x e^-w for x, the log
    form e^(C - w) for e^C, whose C - w is exact while w >= C / 2). The start is
    Winitzki's approximation (within 2 % and within 0.08 of W); the iteration's error
    constant is below 1/4, so a correction under 1e-6 min(w, 1) leaves the next error
    under 1e-19 w. A correction under 4e-15 w is rounding: f is known to a few ulps of
    w (one ulp of w moves u by u ulps of w), however many iterations follow."""
    cdef double w = L * (1.0 - log1p(L) / (2.0 + L))
    cdef double u, f, d
    cdef int i
    for i in range(16):
        u = x * exp(C - w)
        f = w - u
        d = f / (1.0 + u) / (1.0 + f * u / (2.0 * (1.0 + u) * (1.0 + u)))
        w -= d
        if fabs(d) <= fmax(1e-6 * fmin(w, 1.0), 4e-15 * w):
            break
    return w


cdef inline double lambert_w(double x) noexcept nogil:
    """W0(x) for x >= 0 (all the log loss needs), within 2 ulps up to the largest
    double; NaN for x < 0, +inf for +inf."""
    if not x < INFINITY:
        return x
    if x < 0.0:
        return NAN
    return _halley_w(x, 0.0, log1p(x))


cdef inline double lambert_w_exp(double C) noexcept nogil:
    """W(e^C) without forming e^C, within 2 ulps for C from -708 (below, W(e^C) = e^C
    is subnormal) up to the largest double. For C <= 0 through e^C (a rounding, and W's
    condition number 1/(1 + W) <= 1; the log form would pass on C's rounding, |C|
    ulps); for C > 0 in the log domain, w + log w = C, from log(1 + e^C) =
    C + log1p(e^-C): W(e^C) ~ C - log C."""
    if not C < INFINITY:
        return C
    if C <= 0.0:
        return lambert_w(exp(C))
    return _halley_w(1.0, C, C + log1p(exp(-C)))


cdef inline double _decay_fraction(double s) noexcept nogil:
    """(1 - e^-s) / s, 1 at s = 0: the fraction of a step s that a flow decaying as
    e^-s covers (expm1: no cancellation for small s)."""
    if s > 0.0:
        return -expm1(-s) / s
    return 1.0


cdef inline double _flow_fraction(double s, double s1, double k) noexcept nogil:
    """rho for a loss whose derivative is constant along the flow up to s = s1 (a kink
    of the loss), then decays as e^(-k (s - s1)): k = 2 for the squared hinge's
    quadratic part, 1 for the squared residual's, INFINITY for a loss that is flat past
    the kink (the flow stops there: hinge, epsilon_insensitive)."""
    if s <= s1:
        return 1.0
    return (s1 + (s - s1) * _decay_fraction(k * (s - s1))) / s


# The log loss's rho for a short flow, t = s pi <= LOG_SERIES_END, from its series:
# exact to rounding up to LOG_SERIES_EXACT, one Householder correction above
# (`_log_fraction_short`); longer flows up to LOG_HOUSEHOLDER_END take Householder's
# iteration (`_log_fraction_long`, from its lower start up to LOG_LOWER_START_END),
# longer ones `_log_fraction`'s.
cdef extern from *:
    """
    #define FASTPROX_LOG_SERIES_EXACT 0.01
    #define FASTPROX_LOG_SERIES_END 0.25
    #define FASTPROX_LOG_LOWER_START_END 3.0
    #define FASTPROX_LOG_HOUSEHOLDER_END 512.0
    """
    const double LOG_SERIES_EXACT "FASTPROX_LOG_SERIES_EXACT"
    const double LOG_SERIES_END "FASTPROX_LOG_SERIES_END"
    const double LOG_LOWER_START_END "FASTPROX_LOG_LOWER_START_END"
    const double LOG_HOUSEHOLDER_END "FASTPROX_LOG_HOUSEHOLDER_END"


cdef inline double _log_series(double t, double a) noexcept nogil:
    """d / t from the series inversion of phi(d) = d + a (e^d - 1 - d) - t (the log
    loss's phi below, a = 1 - pi) through t^8: d = t + sum_n b_n(a) t^n, each b_n a
    polynomial in a without constant term (a = 0: d = t; a = 1: d = log1p(t), b_n =
    (-1)^(n+1) / n, the largest |b_n| over a in [0, 1]). The inverse's radius is at
    least 1, and the terms left out add at most t^8 / (9 (1 - t)) to d / t: below 2^-56
    up to t = LOG_SERIES_EXACT, 2.3e-6 at t = LOG_SERIES_END. The b_n wait only for a
    (known before the row's step norm), the sum in t is taken in pairs of terms
    (Estrin's scheme): t is the last input of sigma, and the row's update waits for it."""
    cdef double b2 = a * (-1.0 / 2.0)
    cdef double b3 = a * (-1.0 / 6.0 + a * (1.0 / 2.0))
    cdef double b4 = a * (-1.0 / 24.0 + a * (5.0 / 12.0 + a * (-5.0 / 8.0)))
    cdef double b5 = a * (-1.0 / 120.0 + a * (5.0 / 24.0 + a * (-7.0 / 8.0 + a * (7.0 / 8.0))))
    cdef double b6 = a * (-1.0 / 720.0 + a * (7.0 / 90.0 + a * (-49.0 / 72.0 + a * (
        7.0 / 4.0 + a * (-21.0 / 16.0)))))
    cdef double b7 = a * (-1.0 / 5040.0 + a * (17.0 / 720.0 + a * (-137.0 / 360.0 + a * (
        15.0 / 8.0 + a * (-55.0 / 16.0 + a * (33.0 / 16.0))))))
    cdef double b8 = a * (-1.0 / 40320.0 + a * (41.0 / 6720.0 + a * (-65.0 / 384.0 + a * (
        407.0 / 288.0 + a * (-605.0 / 128.0 + a * (429.0 / 64.0 + a * (-429.0 / 128.0)))))))
    cdef double t2 = t * t
    return 1.0 + t * ((b2 + b3 * t) + t2 * ((b4 + b5 * t) + t2 * ((b6 + b7 * t) + t2 * b8)))


cdef inline double _expm1_less_identity(double d) noexcept nogil:
    """e^d - 1 - d for 0 <= d <= LOG_SERIES_END, by its Taylor series through d^13 (the
    next term is below 2^-56 of the sum there): to a few roundings of itself, where
    expm1(d) - d would carry expm1's rounding, half an ulp of d. Estrin's scheme: four
    levels of products where Horner's would chain twelve (d is on sigma's critical
    path)."""
    cdef double d2 = d * d
    cdef double d4 = d2 * d2
    cdef double low = ((1.0 / 2.0 + (1.0 / 6.0) * d) + d2 * (1.0 / 24.0 + (1.0 / 120.0) * d)
                       + d4 * ((1.0 / 720.0 + (1.0 / 5040.0) * d) + d2 * (1.0 / 40320.0 + (1.0 / 362880.0) * d)))
    cdef double high = ((1.0 / 3628800.0 + (1.0 / 39916800.0) * d)
                        + d2 * (1.0 / 479001600.0 + (1.0 / 6227020800.0) * d))
    return d2 * (low + (d4 * d4) * high)


cdef inline double _householder3(double phi, double slope, double curvature) noexcept nogil:
    """Householder's correction of order 3 to a root of the log loss's phi, from phi,
    phi' = slope and phi'' = phi''' = curvature (= a e^d): the d to subtract,
        phi (6 phi'^2 - 3 phi phi'') / (6 phi'^3 - 6 phi phi' phi'' + phi^2 phi''').
    Its error is C e^4 for an error e of d, |C| <= 0.0098 however phi's parts weigh
    (C depends on u = a e^d / phi' in [0, 1] alone; 0.00978 at u = 0.738, an mpmath
    scan of u by steps of 0.001 and e up to 3e-4)."""
    return (phi * (6.0 * slope * slope - 3.0 * phi * curvature)
            / (6.0 * slope * slope * slope - 6.0 * phi * slope * curvature + phi * phi * curvature))


cdef inline double _log_fraction_short(double t, double a) noexcept nogil:
    """rho = d / t for the log loss where 0 < t <= LOG_SERIES_END (a = 1 - pi):
    `_log_series`, exact to rounding up to LOG_SERIES_EXACT; above, its d (relative
    error under 2.3e-6) takes one Householder step of order 3 (`_householder3`), whose
    error is of the fourth order in the start's: below 1e-22. phi(d) = (d - t) + a (e^d
    - 1 - d) carries only the rounding of a (e^d - 1 - d), far below an ulp of d (d - t
    is exact: d >= t / 2). The correction goes to rho with the rounding of d = rho t (fma), so that
    rho is rounded once: within an ulp of the root (0.7 ulps over a dense grid); 1 / t
    is taken while the series is summed, off the critical path."""
    cdef double rho = _log_series(t, a)
    cdef double d, rounding, excess, phi, e_d_less_1, slope, curvature, correction
    if t <= LOG_SERIES_EXACT:
        return rho
    d = rho * t
    rounding = fma(rho, t, -d)                      # rho t - d, exactly
    excess = _expm1_less_identity(d)
    phi = (d - t) + a * excess
    e_d_less_1 = d + excess
    slope = 1.0 + a * e_d_less_1
    curvature = a + a * e_d_less_1
    correction = _householder3(phi, slope, curvature)
    return rho - (rounding + correction) * (1.0 / t)   # a tiny term: its rounding is not rho's


cdef inline double _log_fraction_long(double t, double a, double pi) noexcept nogil:
    """rho = d / t for the log loss where LOG_SERIES_END < t <= LOG_HOUSEHOLDER_END (a =
    1 - pi > 0): Householder's iteration of order 3 (`_householder3`) on
    `_log_fraction`'s phi(d) = pi d + a expm1(d) - t, one expm1 per iteration (phi'' =
    phi''' = a e^d <= phi'). The root lies in [log1p(t), min(t, log1p(t / a))] (each term
    of phi increases), and both ends are roots of a part of phi whose e^d needs no exp:
    log1p(t), that of expm1(d) = t (there phi = pi (d - t), phi' = 1 + a t, phi'' = a (1
    + t)), and log1p(t / a), that of a expm1(d) = t (phi = pi d, phi' = 1 + t, phi'' = a
    + t). The start is one Householder step from the first up to t = LOG_LOWER_START_END
    (within 1e-4 min(d, 1) of the root wherever t <= 2: the rows of text sets), from the
    second above, closer there unless a < 0.1; a start outside (0, t) is t. A
    correction under 2e-4 min(d, 1) leaves the next error under 0.0098 (2e-4)^4 min(d,
    1)^4 < 1.6e-17 d, and the iteration stops there: one expm1 on nine in ten points of a
    grid of (t, a) over t <= 8 and on nearly all the peer suite's Zipf rows, three at
    most anywhere (a from 1e-12 to 1 - 1e-12). phi is summed with two fmas, pi d + (a
    expm1(d) - t), each rounded once; that rounding, a few ulps of t, moves d by as many
    ulps of t / phi' <= d. Nothing overflows: d <= t <= 512."""
    cdef double d, em1, phi, slope, curvature, step
    cdef int i
    if t <= LOG_LOWER_START_END:
        d = log1p(t)
        d -= _householder3(pi * (d - t), 1.0 + a * t, a * (1.0 + t))
    else:
        d = log1p(t / a)
        d -= _householder3(pi * d, 1.0 + t, a + t)
    if not 0.0 < d < t:
        d = t
    for i in range(16):
        em1 = expm1(d)
        curvature = fma(a, em1, a)              # a e^d
        phi = fma(pi, d, fma(a, em1, -t))
        slope = pi + curvature
        step = _householder3(phi, slope, curvature)
        d -= step
        if fabs(step) <= 2e-4 * fmin(d, 1.0):
            break
    return d / t


cdef inline double _log_fraction(double z0, double s, double e, double pi) noexcept nogil:
    """rho for the log loss from margin z0 = y p, e = e^-|z0|, pi = |l'(p)|. Along the flow dz/dh = q / (1 + e^z),
    so z + e^z = C = z0 + e^z0 + s and e^z = W(e^C): the table's z = C - W(e^C), that
    is log W(e^C). sigma needs d = z - z0, which cancels there (in C - W for large C,
    in z - z0 where d << |z0|); so d is taken as the root of the same equation less
    z0 + e^z0 and divided by 1 + e^z0,
        phi(d) = pi d + (1 - pi) expm1(d) - t = 0,  pi = |l'(p)| = 1 / (1 + e^z0),
    t = s pi the gradient step's change (rho = d / t). Up to t = LOG_SERIES_END,
    `_log_fraction_short` (no exp, no log); up to LOG_HOUSEHOLDER_END, `_log_fraction_long`
    (one expm1 per iteration, one iteration on most rows); beyond, by Newton's
    iteration from the closed form. phi is convex and increasing: past the first step
    the iterates fall onto d, each error under half the square of the last correction,
    so a rise is rounding. The start is the closed form log W(e^C) - z0, which is d to
    rounding where d >= |z0| (then z >= 0, and C's rounding moves z by at most an ulp
    of d: no iteration there, whose m = log(1 - pi) + d would cancel when z0 << 0),
    and t where it cancels to nothing (z0 << 0, phi all but linear). (1 - pi)
    expm1(d) is evaluated as e^m (1 - e^-d), and phi divided by e^m where m > 0:
    nothing overflows."""
    cdef double t = s * pi
    cdef double log1m_pi, a, ez0, C, d, m, scale, E, step
    cdef int i
    if not t > 0.0:
        return 1.0
    a = (1.0 if z0 > 0.0 else e) / (1.0 + e)  # 1 - pi = 1 / (1 + e^-z0), without cancellation
    if t <= LOG_SERIES_END:
        return _log_fraction_short(t, a)
    if t <= LOG_HOUSEHOLDER_END:
        if a == 0.0:                        # pi = 1: phi(d) = d - t
            return 1.0
        return _log_fraction_long(t, a, pi)
    log1m_pi = fmin(z0, 0.0) - log1p(e)
    ez0 = exp(z0)                           # finite: t > 1, so e^z0 < s
    C = z0 + ez0 + s
    if C < INFINITY:
        d = log(lambert_w_exp(C)) - z0
    else:                                   # log W(e^C) = log C to rounding there
        d = log(0.5 * (z0 + ez0) + 0.5 * s) + M_LN2 - z0
    if d >= fabs(z0):                       # z >= 0: no cancellation, and m would cancel
        return fmin(d, t) / t
    if not d > 0.0:
        d = t
    for i in range(64):
        m = log1m_pi + d                        # E = (1 - pi) e^d = e^m, times scale
        if m > 0.0:
            scale, E = exp(-m), 1.0
        else:
            scale, E = 1.0, exp(m)
        step = ((pi * d - t) * scale - E * expm1(-d)) / (pi * scale + E)
        d -= step
        if fabs(step) <= 1e-8 * fmin(d, 1.0) or (i > 0 and step < 0.0):
            break                               # converged, or a rise: rounding
    return d / t


cdef inline double log_invariant_sigma(double z0, double y, double s, double h, double e) noexcept nogil:
    """`invariant_sigma` of the log loss at margin z0 = y p with s = q h, from e = e^-|z0|
    (the row's gradient has taken it: `Cursor.exp_margin`): dloss's l'(p) = -y pi, its
    e shared with rho."""
    cdef double pi = log_pi(z0, e)
    cdef double g = -y * pi
    if g == 0.0:
        return 0.0
    return h * g * _log_fraction(z0, s, e, pi)


cdef inline double invariant_sigma(int loss, double p, double y, double q, double h,
                                   double epsilon) noexcept nogil:
    """sigma of the importance-invariant step for a row of margin p, label y (+-1 for the
    classification losses), step norm q >= 0 and importance weight h >= 0 (q h finite):
    v = w - sigma * (eta ⊙ x), b -= sigma * eta_b. The contract's table, as h l'(p) rho;
    0 where l'(p) = 0 (at or past the loss's minimizer: the flow does not move)."""
    cdef double s = q * h
    cdef double z0 = y * p
    cdef double r = fabs(p - y)
    cdef double g, rho
    if loss == LOG:
        return log_invariant_sigma(z0, y, s, h, exp(-fabs(z0)))
    g = dloss(loss, p, y, epsilon)
    if g == 0.0:
        return 0.0
    if loss == HINGE:
        rho = _flow_fraction(s, 1.0 - z0, INFINITY)
    elif loss == SQUARED_HINGE:
        rho = _flow_fraction(s, 0.0, 2.0)
    elif loss == MODIFIED_HUBER:                # linear up to z = -1, then squared hinge
        rho = _flow_fraction(s, fmax(0.0, 0.25 * (-1.0 - z0)), 2.0)
    elif loss == SQUARED:
        rho = _flow_fraction(s, 0.0, 1.0)
    elif loss == HUBER:                         # |r| falls at rate q epsilon down to epsilon
        rho = _flow_fraction(s, fmax(0.0, (r - epsilon) / epsilon), 1.0)
    elif loss == EPSILON_INSENSITIVE:           # |r| falls at rate q to epsilon
        rho = _flow_fraction(s, r - epsilon, INFINITY)
    elif loss == SQUARED_EPSILON_INSENSITIVE:   # |r| - epsilon decays as e^-2s
        rho = _flow_fraction(s, 0.0, 2.0)
    else:                                       # no flow (perceptron): refused before any step
        return NAN
    return h * g * rho
