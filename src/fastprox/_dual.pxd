# The dual rules' weights (RDA, FTRL-Proximal): closed forms of each entry's
# gradient sums, with the step's constants computed once (`set_weight_params`).
from libc.math cimport sqrt
from fastprox._types cimport ADAGRAD
from fastprox._prox cimport soft_threshold
from fastprox._state cimport Ctx

cdef extern from "_out_of_line.h":
    """
    FASTPROX_OUT_OF_LINE(void __pyx_f_8fastprox_5_dual_set_weight_params(struct __pyx_t_8fastprox_6_state_Ctx *))
    """


cdef inline void set_weight_params(Ctx* c) noexcept nogil:
    """Constants of the dual (rda, ftrl) weight formulas with T = c.t gradients summed.
    AdaGrad's beta is per coordinate: its separable weights need no scalar beta
    (a square root and two divisions a step saved; the grouped ones still use it)."""
    cdef double T = <double>c.t
    c.wc = T * c.alpha_pen * c.rho1
    c.wl2 = T * c.alpha_pen * (1.0 - c.rho1)
    if c.schedule == ADAGRAD and not c.grouped:
        return
    c.wbeta = sqrt(T) / c.eta0
    c.wthr = c.wc + c.wbeta * c.rda_rho
    c.winv = 1.0 / (c.wbeta + c.wl2) if c.wbeta + c.wl2 > 0.0 else 0.0


cdef inline double dual_weight(Ctx* c, double s, double beta) noexcept nogil:
    """argmin_w s w + T alpha r(w) + beta (w^2/2 + rda_rho |w|), coordinate-wise."""
    cdef double den = beta + c.wl2
    if not den > 0.0:       # as `dual_weights2` in `dual_row`
        return 0.0
    return soft_threshold(-s, c.wc + beta * c.rda_rho) / den


cdef inline double ftrl_weight(Ctx* c, double* e, double* memo) noexcept nogil:
    """An entry's FTRL weight from (z, n); memo keeps (w, sqrt(n)) for its update."""
    memo[1] = e[2] if c.ftrl_roots else sqrt(e[1])
    memo[0] = dual_weight(c, e[0], (c.delta + memo[1]) * c.inv_eta0)
    return memo[0]


cdef inline void ftrl_update(Ctx* c, double* e, double g, const double* memo) noexcept nogil:
    """FTRL-Proximal's z += g - sigma w, n += g^2, with (w, sqrt(n)) from `ftrl_weight`."""
    e[1] += g * g
    ftrl_z(e, g, sqrt(e[1]), memo, c.inv_eta0, c.ftrl_roots)


cdef inline void ftrl_z(double* e, double g, double root, const double* memo, double inv_eta0,
                        bint roots) noexcept nogil:
    """z += g - sigma w, sigma = (root - sqrt(n_old)) / eta0, with n grown to root^2 and
    (w, sqrt(n_old)) in memo; the entry keeps the root where `roots`. (`dual_row` passes
    its locals, `ftrl_update` the context's.)"""
    e[0] += g - (root - memo[1]) * inv_eta0 * memo[0]
    if roots:
        e[2] = root
