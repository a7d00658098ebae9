# The scalar schedules' steps eta_t (constant, invsqrt, inv; AdaGrad's steps are
# per coordinate, `_adagrad`).
from libc.math cimport sqrt
from fastprox._types cimport CONSTANT, INVSQRT, INV, ADAGRAD
from fastprox._state cimport Ctx


cdef inline void begin_step(Ctx* c) noexcept nogil:
    """eta_t of the scalar schedules for step t = c.cursor.t + 1 (AdaGrad's steps are per
    coordinate: nothing to compute), or the one `next_eta` computed."""
    cdef double t = <double>(c.cursor.t + 1)
    if c.cursor.eta_next_t == c.cursor.t + 1:
        c.cursor.eta = c.cursor.eta_next
    elif c.params.schedule == CONSTANT or c.params.schedule == ADAGRAD:
        c.cursor.eta = c.params.eta0
    elif c.params.schedule == INVSQRT:
        c.cursor.eta = c.params.eta0 / sqrt(t)
    else:
        c.cursor.eta = c.params.eta0 / t


cdef inline void next_eta(Ctx* c) noexcept nogil:
    """eta of the next step under invsqrt or inv, computed while this step waits on
    its loss's exp: its square root and division would otherwise start the next
    step and, as the oldest instructions in flight, hold up the row behind them."""
    cdef double t = <double>(c.cursor.t + 2)
    if c.params.schedule == INVSQRT:
        c.cursor.eta_next = c.params.eta0 / sqrt(t)
    elif c.params.schedule == INV:
        c.cursor.eta_next = c.params.eta0 / t
    else:
        return
    c.cursor.eta_next_t = c.cursor.t + 2


cdef inline double step_threshold(Ctx* c, long long tau) noexcept nogil:
    """alpha * eta_tau of a scalar schedule (sparse_group's replay needs past steps)."""
    if c.params.schedule == CONSTANT:
        return c.params.alpha_pen * c.params.eta0
    if c.params.schedule == INVSQRT:
        return c.params.alpha_pen * c.params.eta0 / sqrt(<double>tau)
    return c.params.alpha_pen * c.params.eta0 / <double>tau
