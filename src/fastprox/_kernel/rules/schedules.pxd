# The scalar schedules' steps eta_t (constant, invsqrt, inv), their formula written
# once (`divisor`); AdaGrad's steps are per coordinate (`_adagrad`).
from libc.math cimport sqrt
from fastprox._kernel.base.types cimport INVSQRT, INV
from fastprox._kernel.base.state cimport Ctx


cdef inline double divisor(int schedule, long long t, double t0) noexcept nogil:
    """The scalar schedules' one formula, eta_t = eta0 / divisor: 1 (constant; adagrad's
    base step), sqrt(t + t0) (invsqrt), t + t0 (inv), with the learner's offset t0 (0:
    t itself, exactly, as before the offset). A schedule's thresholds alpha eta_t divide
    alpha eta0 by it too (`step_threshold`), as they always have (same bits). The fast
    rows pass their schedule as a constant (`_kernel/steps/rows.pxd`), the rest read it."""
    if schedule == INVSQRT:
        return sqrt(<double>t + t0)
    if schedule == INV:
        return <double>t + t0
    return 1.0


cdef inline double schedule_divisor(Ctx* c, long long t) noexcept nogil:
    """`divisor` of the learner's schedule and offset."""
    return divisor(c.params.schedule, t, c.params.t0)


cdef inline double schedule_eta(Ctx* c, int schedule, long long t) noexcept nogil:
    """eta_t of a scalar schedule (eta0 / 1 is eta0: constant and adagrad take eta0)."""
    return c.params.eta0 / divisor(schedule, t, c.params.t0)


cdef inline bint varies(int schedule) noexcept nogil:
    """Whether eta_t changes every step (invsqrt, inv): only then does `next_eta` compute
    the next one ahead, and only then can `begin_step` find it."""
    return schedule == INVSQRT or schedule == INV


cdef inline void begin_step(Ctx* c) noexcept nogil:
    """`begin_schedule_step` of the learner's schedule."""
    begin_schedule_step(c, c.params.schedule)


cdef inline void begin_schedule_step(Ctx* c, int schedule) noexcept nogil:
    """eta_t of the scalar schedules for step t = c.cursor.t + 1 (AdaGrad's steps are per
    coordinate: its eta is eta0), or the one `next_eta` computed. `schedule` is the
    learner's (a constant in the fast rows)."""
    if varies(schedule) and c.cursor.eta_next_t == c.cursor.t + 1:
        c.cursor.eta = c.cursor.eta_next
    else:
        c.cursor.eta = schedule_eta(c, schedule, c.cursor.t + 1)


cdef inline void next_eta(Ctx* c, int schedule) noexcept nogil:
    """eta of the next step under invsqrt or inv, computed while this step waits on
    its loss's exp: its square root and division would otherwise start the next
    step and, as the oldest instructions in flight, hold up the row behind them.
    `schedule` as `begin_schedule_step` takes it."""
    if varies(schedule):
        c.cursor.eta_next = schedule_eta(c, schedule, c.cursor.t + 2)
        c.cursor.eta_next_t = c.cursor.t + 2


cdef inline double step_threshold(Ctx* c, long long tau) noexcept nogil:
    """alpha * eta_tau of a scalar schedule (sparse_group's replay needs past steps),
    computed as (alpha eta0) / divisor."""
    return c.params.alpha_pen * c.params.eta0 / schedule_divisor(c, tau)
