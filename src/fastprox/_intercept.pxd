# The unpenalized intercept b_k of each rule: its value at the current step and its
# update.
from libc.math cimport sqrt
from fastprox._types cimport FOBOS, RDA, FTRL, ADAGRAD, NORMALIZED
from fastprox._adagrad cimport adagrad_eta
from fastprox._state cimport (Ctx, INTERCEPT_SUM, INTERCEPT_SQUARES, INTERCEPT_FIELDS, MEMO_W,
                              MEMO_ROOT, MEMO_FIELDS)

cdef extern from "_out_of_line.h":
    """
    FASTPROX_OUT_OF_LINE(double __pyx_f_8fastprox_10_intercept_intercept_value(struct __pyx_t_8fastprox_6_state_Ctx *, int))
    """


cdef inline double intercept_feature(Ctx* c) noexcept nogil:
    """The intercept's constant feature: 1, or 0 without an intercept (its gradient is
    then no step's: `refused` and the margin loops start their largest |x| there)."""
    return 1.0 if c.params.fit_intercept else 0.0


cdef inline double intercept_value(Ctx* c, int k) noexcept nogil:
    """b_k at the current step. ftrl keeps (b_k, sqrt(n_b)) in c.scratch.intercept_memo for
    the step's update (`apply_intercept`), as its features keep theirs in c.scratch.ftrl_memo."""
    cdef double* b = c.arrays.intercepts + INTERCEPT_FIELDS * k
    cdef double* memo = c.scratch.intercept_memo + MEMO_FIELDS * k
    cdef double a = b[INTERCEPT_SUM], root
    if c.params.update == FOBOS:
        return a
    if c.params.update == RDA and c.params.schedule != ADAGRAD:
        return dual_intercept(a, sqrt(<double>c.cursor.t) / c.params.eta0)
    root = sqrt(b[INTERCEPT_SQUARES])
    if c.params.update == FTRL:
        memo[MEMO_ROOT] = root
        memo[MEMO_W] = dual_intercept(a, (c.params.delta + root) / c.params.eta0)
        return memo[MEMO_W]
    return dual_intercept(a, (c.params.delta + root) / c.params.eta0)


cdef inline double dual_intercept(double a, double beta) noexcept nogil:
    """The unpenalized dual weight for gradient sum a: argmin_b a b + beta b^2 / 2."""
    return -a / beta if beta > 0.0 else 0.0


cdef inline double intercept_step_size(Ctx* c, int k, double g) noexcept nogil:
    """eta^b_t of FOBOS's intercept once this step's gradient g joins its G_b (not
    stored: the invariant step's norm needs it before the update)."""
    cdef double G = c.arrays.intercepts[INTERCEPT_FIELDS * k + INTERCEPT_SQUARES] + g * g
    if c.params.schedule == ADAGRAD:
        return adagrad_eta(c, G)
    if c.params.schedule == NORMALIZED:
        return c.params.eta0 * c.cursor.eta / sqrt(G) if G > 0.0 else 0.0
    return c.cursor.eta


cdef inline void apply_intercept(Ctx* c, int k, double g, double step_g) noexcept nogil:
    """The unpenalized intercept's step with gradient g (sum of l' over the step),
    after the step's margins (ftrl reads the b and sqrt(n_b) they kept). FOBOS moves
    b by its step times `step_g`: g, or the invariant step's sigma (its G_b adds g^2)."""
    cdef double* b = c.arrays.intercepts + INTERCEPT_FIELDS * k
    cdef double* memo = c.scratch.intercept_memo + MEMO_FIELDS * k
    cdef double eta
    if not c.params.fit_intercept:
        return
    if c.params.update == FOBOS:
        if c.params.schedule == ADAGRAD or c.params.schedule == NORMALIZED:
            eta = intercept_step_size(c, k, g)
            b[INTERCEPT_SQUARES] += g * g
            if eta > 0.0:
                b[INTERCEPT_SUM] -= eta * step_g
        else:
            b[INTERCEPT_SUM] -= c.cursor.eta * step_g
    elif c.params.update == RDA:
        b[INTERCEPT_SUM] += g
        b[INTERCEPT_SQUARES] += g * g
    else:
        b[INTERCEPT_SQUARES] += g * g
        b[INTERCEPT_SUM] += g - (sqrt(b[INTERCEPT_SQUARES]) - memo[MEMO_ROOT]) / c.params.eta0 * memo[MEMO_W]
