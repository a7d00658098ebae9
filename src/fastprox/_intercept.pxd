# The unpenalized intercept b_k of each rule: its value at the current step and its
# update.
from libc.math cimport sqrt
from fastprox._types cimport FOBOS, RDA, FTRL, ADAGRAD, NORMALIZED
from fastprox._state cimport Ctx

cdef extern from "_out_of_line.h":
    """
    FASTPROX_OUT_OF_LINE(double __pyx_f_8fastprox_10_intercept_intercept_value(struct __pyx_t_8fastprox_6_state_Ctx *, int))
    """


cdef inline double intercept_feature(Ctx* c) noexcept nogil:
    """The intercept's constant feature: 1, or 0 without an intercept (its gradient is
    then no step's: `refused` and the margin loops start their largest |x| there)."""
    return 1.0 if c.fit_intercept else 0.0


cdef inline double intercept_value(Ctx* c, int k) noexcept nogil:
    """b_k at the current step. ftrl keeps (b_k, sqrt(n_b)) in c.bmemo for the step's
    update (`apply_intercept`), as its features keep theirs in c.wrow."""
    cdef double a = c.bstate[2 * k], root
    if c.update == FOBOS:
        return a
    if c.update == RDA and c.schedule != ADAGRAD:
        return dual_intercept(a, sqrt(<double>c.t) / c.eta0)
    root = sqrt(c.bstate[2 * k + 1])
    if c.update == FTRL:
        c.bmemo[2 * k + 1] = root
        c.bmemo[2 * k] = dual_intercept(a, (c.delta + root) / c.eta0)
        return c.bmemo[2 * k]
    return dual_intercept(a, (c.delta + root) / c.eta0)


cdef inline double dual_intercept(double a, double beta) noexcept nogil:
    """The unpenalized dual weight for gradient sum a: argmin_b a b + beta b^2 / 2."""
    return -a / beta if beta > 0.0 else 0.0


cdef inline double intercept_step_size(Ctx* c, int k, double g) noexcept nogil:
    """eta^b_t of FOBOS's intercept once this step's gradient g joins its G_b (not
    stored: the invariant step's norm needs it before the update)."""
    cdef double G = c.bstate[2 * k + 1] + g * g, H
    if c.schedule == ADAGRAD:
        H = c.delta + sqrt(G)
        return c.eta0 / H if H > 0.0 else 0.0
    if c.schedule == NORMALIZED:
        return c.eta0 * c.eta / sqrt(G) if G > 0.0 else 0.0
    return c.eta


cdef inline void apply_intercept(Ctx* c, int k, double g, double step_g) noexcept nogil:
    """The unpenalized intercept's step with gradient g (sum of l' over the step),
    after the step's margins (ftrl reads the b and sqrt(n_b) they kept). FOBOS moves
    b by its step times `step_g`: g, or the invariant step's sigma (its G_b adds g^2)."""
    cdef double eta
    if not c.fit_intercept:
        return
    if c.update == FOBOS:
        if c.schedule == ADAGRAD or c.schedule == NORMALIZED:
            eta = intercept_step_size(c, k, g)
            c.bstate[2 * k + 1] += g * g
            if eta > 0.0:
                c.bstate[2 * k] -= eta * step_g
        else:
            c.bstate[2 * k] -= c.eta * step_g
    elif c.update == RDA:
        c.bstate[2 * k] += g
        c.bstate[2 * k + 1] += g * g
    else:
        c.bstate[2 * k + 1] += g * g
        c.bstate[2 * k] += g - (sqrt(c.bstate[2 * k + 1]) - c.bmemo[2 * k + 1]) / c.eta0 * c.bmemo[2 * k]
