# Scalar proximal operators shared by every kernel (FOBOS Sec. 3, the
# contract's table of coordinate-wise proxes). Inline, nogil, no Python.
from libc.math cimport fabs, copysign

cdef extern from "_kernel/lanes/max0.h" nogil:
    double max0 "fastprox_max0"(double m)


cdef inline double soft_threshold(double v, double a) noexcept nogil:
    """prox of a*|.|: shrink |v| by a, (signed) zero inside [-a, a]. Branch-free:
    the sign of a weight is data, and mispredicted branches cost more than the math."""
    cdef double m = fabs(v) - a
    return copysign(max0(m), v)


cdef inline double prox_elasticnet(double v, double a, double rho) noexcept nogil:
    """prox of a*(rho*|.| + (1-rho)*.^2/2): soft-threshold by a*rho, then shrink."""
    return soft_threshold(v, a * rho) / (1.0 + a * (1.0 - rho))


cdef inline double prox_berhu(double v, double a, double gamma) noexcept nogil:
    """prox of a*berhu_gamma: zero, soft-threshold, or l2 shrink by |v|."""
    cdef double m = fabs(v)
    if m <= a:
        return 0.0
    if m <= a + gamma:
        return copysign(m - a, v)
    return v / (1.0 + a / gamma)
