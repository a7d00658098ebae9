# Loss values and derivatives in the margin p (the contract's loss table).
# Binary losses take y in {-1, +1}; regression losses take a real target.
from libc.math cimport exp, log, log1p, fabs, copysign, frexp

cdef enum:
    # the registry's codes (`fastprox._registry.LOSSES`; tests/test_registry.py checks them)
    LOG = 0
    HINGE = 1
    SQUARED_HINGE = 2
    MODIFIED_HUBER = 3
    SQUARED = 4
    HUBER = 5
    EPSILON_INSENSITIVE = 6


cdef inline double log_pi(double z, double e) noexcept nogil:
    """|l'(p)| of the log loss at the margin z = y p, 1 / (1 + e^z), from e = e^-|z|
    (never overflows): the log loss's derivative is -y log_pi(z, e)."""
    return e / (1.0 + e) if z > 0.0 else 1.0 / (1.0 + e)


cdef inline double dloss(int loss, double p, double y, double epsilon) noexcept nogil:
    """d loss(p, y) / d p, computed without overflow."""
    cdef double z = y * p
    cdef double r = p - y
    if loss == LOG:
        return -y * log_pi(z, exp(-fabs(z)))
    if loss == HINGE:
        return -y if z < 1.0 else 0.0
    if loss == SQUARED_HINGE:
        return -2.0 * y * (1.0 - z) if z < 1.0 else 0.0
    if loss == MODIFIED_HUBER:
        if z >= 1.0:
            return 0.0
        if z >= -1.0:
            return -2.0 * y * (1.0 - z)
        return -4.0 * y
    if loss == SQUARED:
        return r
    if loss == HUBER:
        if fabs(r) <= epsilon:
            return r
        return copysign(epsilon, r)
    # EPSILON_INSENSITIVE
    if fabs(r) > epsilon:
        return copysign(1.0, r)
    return 0.0


cdef inline double loss_value(int loss, double p, double y, double epsilon) noexcept nogil:
    """loss(p, y): what progressive validation reports."""
    cdef double z = y * p
    cdef double r = fabs(p - y)
    if loss == LOG:
        if z > 0.0:
            return log1p(exp(-z))
        return -z + log1p(exp(z))
    if loss == HINGE:
        return 1.0 - z if z < 1.0 else 0.0
    if loss == SQUARED_HINGE:
        return (1.0 - z) * (1.0 - z) if z < 1.0 else 0.0
    if loss == MODIFIED_HUBER:
        if z >= 1.0:
            return 0.0
        if z >= -1.0:
            return (1.0 - z) * (1.0 - z)
        return -4.0 * z
    if loss == SQUARED:
        return 0.5 * r * r
    if loss == HUBER:
        if r <= epsilon:
            return 0.5 * r * r
        return epsilon * r - 0.5 * epsilon * epsilon
    return r - epsilon if r > epsilon else 0.0


cdef inline double dloss_and_value(int loss, double p, double y, double epsilon,
                                   double* value) noexcept nogil:
    """dloss, with loss_value written to value: one exp for the log loss, not two."""
    cdef double z, e
    if loss != LOG:
        value[0] = loss_value(loss, p, y, epsilon)
        return dloss(loss, p, y, epsilon)
    z = y * p
    e = exp(-fabs(z))
    value[0] = log1p(e) if z > 0.0 else -z + log1p(e)
    return -y * log_pi(z, e)


cdef struct LogSum:
    # A sum of log(f_i), f_i in [1, 2], kept as a product m * 2**e: one
    # multiplication per term instead of a log1p, the logarithm taken once.
    double m
    int e
    int n


cdef inline void logsum_add(LogSum* s, double f) noexcept nogil:
    """Add log(f) for f in [1, 2]; renormalize before m could overflow (2**512)."""
    cdef int e
    s.m *= f
    s.n += 1
    if s.n == 512:
        s.m = frexp(s.m, &e)
        s.e += e
        s.n = 0


cdef inline double logsum_pop(LogSum* s) noexcept nogil:
    """The sum added so far; restarts it at 0."""
    cdef double v = log(s.m) + s.e * 0.6931471805599453
    s.m, s.e, s.n = 1.0, 0, 0
    return v


cdef inline double dlog_loss_deferred(double p, double y, double* linear, LogSum* s,
                                      double* exp_margin) noexcept nogil:
    """The log loss's derivative, as dloss; its value max(-z, 0) + log1p(exp(-|z|))
    goes half to linear[0] and half to s (log1p, the row's costliest call, deferred).
    e^-|z| is left in exp_margin[0] (the invariant step of the row takes it again)."""
    cdef double z = y * p
    cdef double e = exp(-fabs(z))
    exp_margin[0] = e
    if e > 1e-6:
        logsum_add(s, 1.0 + e)
    else:                       # 1 + e would round e away: log1p's series, to rounding
        linear[0] += e - 0.5 * e * e
    if z > 0.0:
        return -y * e / (1.0 + e)
    linear[0] += -z
    return -y / (1.0 + e)
