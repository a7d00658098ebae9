# Scalar proximal operators shared by every kernel (FOBOS Sec. 3, the
# contract's table of coordinate-wise proxes). Inline, nogil, no Python.
from libc.math cimport fabs, copysign


cdef inline double soft_threshold(double v, double a) noexcept nogil:
    """prox of a*|.|: shrink |v| by a, (signed) zero inside [-a, a]. Branch-free:
    the sign of a weight is data, and mispredicted branches cost more than the math."""
    cdef double m = fabs(v) - a
    return copysign(0.5 * (m + fabs(m)), v)     # max(m, 0), exactly, without a branch


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
