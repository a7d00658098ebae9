# The dual rules' weights (RDA, FTRL-Proximal): closed forms of each entry's
# gradient sums, with the step's constants computed once (`set_weight_params`).
from libc.math cimport sqrt
from fastprox._kernel.base.types cimport ADAGRAD
from fastprox._kernel.rules.prox cimport soft_threshold
from fastprox._kernel.base.state cimport Ctx, FTRL_Z, FTRL_N, FTRL_ROOT, MEMO_W, MEMO_ROOT

cdef extern from "_kernel/out_of_line.h":
    pass                          # the functions marked FASTPROX_OUT_OF_LINE or _IN_LINE below


# FASTPROX_OUT_OF_LINE
cdef inline void set_weight_params(Ctx* c) noexcept nogil:
    """Constants of the dual (rda, ftrl) weight formulas with T = c.cursor.t gradients summed.
    AdaGrad's beta is per coordinate: its separable weights need no scalar beta
    (a square root and two divisions a step saved; the grouped ones still use it)."""
    cdef double T = <double>c.cursor.t
    c.dual.l1_threshold = T * c.params.alpha_pen * c.params.l1_share
    c.dual.l2_weight = T * c.params.alpha_pen * (1.0 - c.params.l1_share)
    if c.params.schedule == ADAGRAD and not c.params.grouped:
        return
    c.dual.beta = sqrt(T) / c.params.eta0
    c.dual.rda_threshold = c.dual.l1_threshold + c.dual.beta * c.params.rda_rho
    c.dual.rda_scale = 1.0 / (c.dual.beta + c.dual.l2_weight) if c.dual.beta + c.dual.l2_weight > 0.0 else 0.0


cdef inline double dual_weight(Ctx* c, double s, double beta) noexcept nogil:
    """argmin_w s w + T alpha r(w) + beta (w^2/2 + rda_rho |w|), coordinate-wise."""
    cdef double den = beta + c.dual.l2_weight
    if not den > 0.0:       # as `dual_weights2` in `dual_row`
        return 0.0
    return soft_threshold(-s, c.dual.l1_threshold + beta * c.params.rda_rho) / den


cdef inline double ftrl_weight(Ctx* c, double* e, double* memo) noexcept nogil:
    """An entry's FTRL weight from (z, n); memo keeps (w, sqrt(n)) for its update."""
    memo[MEMO_ROOT] = e[FTRL_ROOT] if c.layout.ftrl_roots else sqrt(e[FTRL_N])
    memo[MEMO_W] = dual_weight(c, e[FTRL_Z], (c.params.delta + memo[MEMO_ROOT]) * c.params.inv_eta0)
    return memo[MEMO_W]


cdef inline void ftrl_update(Ctx* c, double* e, double g, const double* memo) noexcept nogil:
    """FTRL-Proximal's z += g - sigma w, n += g^2, with (w, sqrt(n)) from `ftrl_weight`."""
    e[FTRL_N] += g * g
    ftrl_z(e, g, sqrt(e[FTRL_N]), memo, c.params.inv_eta0, c.layout.ftrl_roots)


cdef inline void ftrl_z(double* e, double g, double root, const double* memo, double inv_eta0,
                        bint roots) noexcept nogil:
    """z += g - sigma w, sigma = (root - sqrt(n_old)) / eta0, with n grown to root^2 and
    (w, sqrt(n_old)) in memo; the entry keeps the root where `roots`. (`dual_row` passes
    its locals, `ftrl_update` the context's.)"""
    e[FTRL_Z] += g - (root - memo[MEMO_ROOT]) * inv_eta0 * memo[MEMO_W]
    if roots:
        e[FTRL_ROOT] = root
