# FOBOS under a scalar schedule: the two global cumulants, their rebase, and the
# catch-up of a feature's entries from its stamps; AdaGrad's and Berhu's catch-ups
# are dispatched from here too.
from fastprox._types cimport FOBOS, ADAGRAD, NORMALIZED, BERHU
from fastprox._prox cimport soft_threshold, prox_elasticnet, prox_berhu
from fastprox._state cimport Ctx, entry, index
from fastprox._berhu cimport heap_advance, heap_catch_up, heap_schedule
from fastprox._adagrad cimport adagrad_catch_up, adagrad_step
from fastprox._groups cimport groups_rebase
from fastprox._normalized cimport normalized_catch_up, NORM_STAMP

cdef extern from "_out_of_line.h":
    """
    FASTPROX_OUT_OF_LINE(void __pyx_f_8fastprox_6_fobos_rebase(struct __pyx_t_8fastprox_6_state_Ctx *))
    FASTPROX_OUT_OF_LINE(void __pyx_f_8fastprox_6_fobos_berhu_catch_up(struct __pyx_t_8fastprox_6_state_Ctx *, double *))
    FASTPROX_OUT_OF_LINE(void __pyx_f_8fastprox_6_fobos_apply_berhu(struct __pyx_t_8fastprox_6_state_Ctx *, double *, int, double, double))
    """


cdef extern from *:
    """
    /* Cumulant floor below which scalar FOBOS rebases (far above underflow). */
    #define FASTPROX_P_FLOOR 1e-200
    """
    const double P_FLOOR "FASTPROX_P_FLOOR"


cdef inline void stamp_origin(Ctx* c, double* row) noexcept nogil:
    """Stamp a feature's row as current at the cumulants' origin (P = 1, Q = 0); with
    its entries 0, the row of a feature never touched."""
    if c.schedule == NORMALIZED:
        row[NORM_STAMP] = 0.0
        return
    if c.off_P >= 0:
        row[c.off_P] = 1.0
    if c.off_Q >= 0:
        row[c.off_Q] = 0.0


cdef inline void reset_stamps(Ctx* c) noexcept nogil:
    """Stamp every feature as current at the cumulants' origin."""
    cdef Py_ssize_t j
    for j in range(c.d):
        stamp_origin(c, c.state + j * c.width)


cdef inline void advance_cumulants(Ctx* c) noexcept nogil:
    """Fold this step's prox into the scalar-FOBOS cumulants (P, Q); under the
    normalized schedule, r_t into its cumulant R (Q)."""
    cdef double a = c.alpha_pen * c.eta
    if c.update != FOBOS or c.schedule == ADAGRAD or c.grouped:
        return
    if c.schedule == NORMALIZED:
        c.Q += c.eta
        return
    if c.penalty == BERHU:
        heap_advance(&c.heap, c.state, c.n_entry, c.P, c.Q, a)
        c.Q += a
        c.P /= 1.0 + a / c.gamma
        return
    c.Q += a * c.rho1 / c.P
    if c.rho1 != 1.0:           # (l1: P / 1 is P, and a division a row is 1% of ijcnn1's)
        c.P /= 1.0 + a * (1.0 - c.rho1)


cdef inline void end_step(Ctx* c) noexcept nogil:
    if c.update != FOBOS or c.schedule == ADAGRAD:
        return
    c.since_rebase += 1
    if c.P < P_FLOOR or c.since_rebase >= c.rebase_period:
        rebase(c)


cdef inline void rebase(Ctx* c) noexcept nogil:
    """Catch every feature up, then restart the cumulants at P = 1, Q = 0."""
    cdef Py_ssize_t j
    c.since_rebase = 0
    if c.grouped:
        groups_rebase(c)
        return
    for j in range(c.d):
        catch_up(c, c.state + j * c.width)
    c.n_ops += c.d * c.K
    c.P, c.Q = 1.0, 0.0
    reset_stamps(c)
    if c.berhu_heap:
        for j in range(c.d * c.K):
            heap_schedule(&c.heap, c.state + j * c.n_entry, j, c.state[j * c.n_entry], 1.0, 0.0)


cdef inline void catch_up(Ctx* c, double* row) noexcept nogil:
    """Bring the stored entries of a FOBOS feature to the current step, in place."""
    cdef int k
    if c.update != FOBOS:
        return
    if c.schedule == ADAGRAD:
        if row[0] < c.t:
            for k in range(c.K):
                entry(c, row, k)[0] = adagrad_catch_up(c, row, k)
            row[0] = c.t
    elif c.schedule == NORMALIZED:
        normalized_catch_up(c, row)
    elif c.berhu_heap:
        berhu_catch_up(c, row)
    elif c.n_row:
        for k in range(c.K):
            entry(c, row, k)[0] = scalar_catch_up(c, row, k)
        stamp(c, row)


cdef inline void berhu_catch_up(Ctx* c, double* row) noexcept nogil:
    cdef int k
    for k in range(c.K):
        heap_catch_up(&c.heap, entry(c, row, k), index(c, row, k), c.P, c.Q)


cdef inline double scalar_catch_up(Ctx* c, double* row, int k) noexcept nogil:
    """soft(w P/P_s, P (Q - Q_s)): the steps since the stamp, in one prox."""
    cdef double w = entry(c, row, k)[0]
    cdef double ratio = 1.0, thr = 0.0
    if c.off_P >= 0:
        ratio = c.P / row[c.off_P]
    if c.off_Q >= 0:
        thr = c.P * (c.Q - row[c.off_Q])
    return soft_threshold(w * ratio, thr)


cdef inline void stamp(Ctx* c, double* row) noexcept nogil:
    """Mark a FOBOS feature as current after the step's update."""
    if c.update != FOBOS:
        return
    if c.schedule == ADAGRAD:
        row[0] = c.t + 1
        return
    if c.schedule == NORMALIZED:
        row[NORM_STAMP] = c.Q
        return
    if c.off_P >= 0:
        row[c.off_P] = c.P
    if c.off_Q >= 0:
        row[c.off_Q] = c.Q


cdef inline double fobos_prox(Ctx* c, double v, double a) noexcept nogil:
    """The elastic-net family's prox with threshold a (l1 without the trivial division)."""
    if c.rho1 == 1.0:
        return soft_threshold(v, a)
    return prox_elasticnet(v, a, c.rho1)


cdef inline void apply_berhu(Ctx* c, double* row, int k, double g, double step_g) noexcept nogil:
    """FOBOS's Berhu update: the plain prox under adagrad, rescheduled in the heap
    otherwise (`step_g`: g, or the invariant step's sigma x; AdaGrad's G adds g^2)."""
    cdef double* e = entry(c, row, k)
    cdef double eta = c.eta
    if c.schedule == ADAGRAD:
        eta = adagrad_step(c, e, g)
        if eta == 0.0:
            return
    if c.berhu_heap:
        heap_schedule(&c.heap, e, index(c, row, k),
                      prox_berhu(e[0] - eta * step_g, c.alpha_pen * eta, c.gamma), c.P, c.Q)
    else:
        e[0] = prox_berhu(e[0] - eta * step_g, c.alpha_pen * eta, c.gamma)
