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
from libc.math cimport exp, log, log1p, expm1, fabs, fmin, fmax, INFINITY, NAN, M_LN2

from fastprox._losses cimport (dloss, LOG, HINGE, SQUARED_HINGE, MODIFIED_HUBER, SQUARED, HUBER,
                               EPSILON_INSENSITIVE)


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


cdef inline double _log_fraction(double z0, double s) noexcept nogil:
    """rho for the log loss from margin z0 = y p. Along the flow dz/dh = q / (1 + e^z),
    so z + e^z = C = z0 + e^z0 + s and e^z = W(e^C): the table's z = C - W(e^C), that
    is log W(e^C). sigma needs d = z - z0, which cancels there (in C - W for large C,
    in z - z0 where d << |z0|); so d is taken as the root of the same equation less
    z0 + e^z0 and divided by 1 + e^z0,
        phi(d) = pi d + (1 - pi) expm1(d) - t = 0,  pi = |l'(p)| = 1 / (1 + e^z0),
    t = s pi the gradient step's change (rho = d / t), by Newton's iteration. phi is
    convex and increasing: past the first step the iterates fall onto d, each error
    under half the square of the last correction, so a rise is rounding. The start is
    t where t <= 1 (an upper bound of d), else the closed form log W(e^C) - z0, which
    is d to rounding where d >= |z0| (then z >= 0, and C's rounding moves z by at most
    an ulp of d: no iteration there, whose m = log(1 - pi) + d would cancel when
    z0 << 0), and t again where it cancels to nothing (z0 << 0, phi all but linear).
    (1 - pi) expm1(d) is evaluated as e^m (1 - e^-d), and phi divided by e^m where
    m > 0: nothing overflows."""
    cdef double e = exp(-fabs(z0))
    cdef double pi = e / (1.0 + e) if z0 > 0.0 else 1.0 / (1.0 + e)
    cdef double log1m_pi = fmin(z0, 0.0) - log1p(e)
    cdef double t = s * pi
    cdef double a, C, d, m, scale, E, step
    cdef int i
    if not t > 0.0:
        return 1.0
    d = t
    if t > 1.0:                             # then e^z0 < s: a is finite
        a = exp(z0)
        C = z0 + a + s
        if C < INFINITY:
            d = log(lambert_w_exp(C)) - z0
        else:                               # log W(e^C) = log C to rounding there
            d = log(0.5 * (z0 + a) + 0.5 * s) + M_LN2 - z0
        if d >= fabs(z0):                   # z >= 0: no cancellation, and m would cancel
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


cdef inline double invariant_sigma(int loss, double p, double y, double q, double h,
                                   double epsilon) noexcept nogil:
    """sigma of the importance-invariant step for a row of margin p, label y (+-1 for the
    classification losses), step norm q >= 0 and importance weight h >= 0 (q h finite):
    v = w - sigma * (eta ⊙ x), b -= sigma * eta_b. The contract's table, as h l'(p) rho;
    0 where l'(p) = 0 (at or past the loss's minimizer: the flow does not move)."""
    cdef double g = dloss(loss, p, y, epsilon)
    cdef double s = q * h
    cdef double z0 = y * p
    cdef double r = fabs(p - y)
    cdef double rho
    if g == 0.0:
        return 0.0
    if loss == LOG:
        rho = _log_fraction(z0, s)
    elif loss == HINGE:
        rho = _flow_fraction(s, 1.0 - z0, INFINITY)
    elif loss == SQUARED_HINGE:
        rho = _flow_fraction(s, 0.0, 2.0)
    elif loss == MODIFIED_HUBER:                # linear up to z = -1, then squared hinge
        rho = _flow_fraction(s, fmax(0.0, 0.25 * (-1.0 - z0)), 2.0)
    elif loss == SQUARED:
        rho = _flow_fraction(s, 0.0, 1.0)
    elif loss == HUBER:                         # |r| falls at rate q epsilon down to epsilon
        rho = _flow_fraction(s, fmax(0.0, (r - epsilon) / epsilon), 1.0)
    else:                                       # EPSILON_INSENSITIVE: |r| falls at rate q to epsilon
        rho = _flow_fraction(s, r - epsilon, INFINITY)
    return h * g * rho
