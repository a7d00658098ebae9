# The scalar schedules' steps eta_t (constant, invsqrt, inv; AdaGrad's steps are
# per coordinate, `_adagrad`).
from libc.math cimport sqrt
from fastprox._types cimport CONSTANT, INVSQRT, INV, ADAGRAD
from fastprox._state cimport Ctx


cdef inline void begin_step(Ctx* c) noexcept nogil:
    """eta_t of the scalar schedules for step t = c.t + 1 (AdaGrad's steps are per
    coordinate: nothing to compute), or the one `next_eta` computed."""
    cdef double t = <double>(c.t + 1)
    if c.eta_next_t == c.t + 1:
        c.eta = c.eta_next
    elif c.schedule == CONSTANT or c.schedule == ADAGRAD:
        c.eta = c.eta0
    elif c.schedule == INVSQRT:
        c.eta = c.eta0 / sqrt(t)
    else:
        c.eta = c.eta0 / t


cdef inline void next_eta(Ctx* c) noexcept nogil:
    """eta of the next step under invsqrt or inv, computed while this step waits on
    its loss's exp: its square root and division would otherwise start the next
    step and, as the oldest instructions in flight, hold up the row behind them."""
    cdef double t = <double>(c.t + 2)
    if c.schedule == INVSQRT:
        c.eta_next = c.eta0 / sqrt(t)
    elif c.schedule == INV:
        c.eta_next = c.eta0 / t
    else:
        return
    c.eta_next_t = c.t + 2


cdef inline double step_threshold(Ctx* c, long long tau) noexcept nogil:
    """alpha * eta_tau of a scalar schedule (sparse_group's replay needs past steps)."""
    if c.schedule == CONSTANT:
        return c.alpha_pen * c.eta0
    if c.schedule == INVSQRT:
        return c.alpha_pen * c.eta0 / sqrt(<double>tau)
    return c.alpha_pen * c.eta0 / <double>tau
