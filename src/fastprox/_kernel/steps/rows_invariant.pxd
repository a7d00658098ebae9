# The row kernel of AdaGrad under FOBOS with the importance-invariant step and one
# output (`InvariantAdagradRows`): the defaults' rule once a penalty other than l1 is
# named (`_registry.defaults_for`: penalty="l2", as a script ported from SGDClassifier
# names it, or elastic net), and any separable penalty under schedule="adagrad",
# step="invariant". The general step's single row (`_step.step`: `margins`,
# `gradients`, `invariant_sigmas`, `apply`, `stamp`) with the step's constants in
# locals and without its dispatch on the rule per entry: the same operations in the
# same order, the same bits (tests/test_rows_invariant.py compares the state's bytes).
# Three loops over the row: the catch-up and the margin; the step norm, each entry's
# new step kept in c.scratch.factor_memo (`wants_factor_memo`); the update. Scalar
# loops (the gradient step's AdaGrad rows run in lanes, `_kernel/lanes/lanes.h`).
# With the averaged iterate kept, the skipped iterates join their sums in the first
# loop and the new ones in the last, as the general step's `catch_up` and `stamp` add
# them, entry by entry: `_kernel/steps/rows_average.pxd` leaves them to this kernel.
from fastprox._kernel.base.types cimport value_t, index_t, ADAGRAD
from fastprox._kernel.base.state cimport Ctx, ROW_LAST_STEP, ADAGRAD_ROW_FIELDS, ADAGRAD_W, ADAGRAD_G, ADAGRAD_ETA
from fastprox._kernel.losses.losses cimport LOG
from fastprox._kernel.rules.adagrad cimport adagrad_catch_up, adagrad_eta, small_exp, small_log1p
from fastprox._kernel.rules.fobos cimport fobos_prox
from fastprox._kernel.rules.average cimport averaging, adagrad_skipped_sum, add_iterate
from fastprox._kernel.rules.intercept cimport intercept_feature, intercept_margin, intercept_norm_step
from fastprox._kernel.losses.gradients cimport loss_gradient, refused, abs_max2
from fastprox._kernel.losses.invariant cimport invariant_sigma, log_invariant_sigma


# The tag of this row kernel among `_kernel/steps/rows.pxd`'s (`rows_t`).
cdef struct InvariantAdagradRows:
    char tag


cdef inline double invariant_adagrad_row(Ctx* c, const value_t* data, const index_t* indices,
                                         long long lo, long long hi, double y, double sw, int loss,
                                         double* intercept_eta) noexcept nogil:
    """One row of AdaGrad's FOBOS step with the importance-invariant step, one output, a
    separable penalty (`loss`: the pass's loss code, a constant for the log loss).
    Leaves the intercept's step size, which the step norm takes, in intercept_eta[0]
    (`_kernel/rules/intercept.pxd`, `intercept_known_step`). Row layout: last (the last step), then w, G, eta.

    Mirrors `_step.step`'s single-row branch under this rule: `margins` (`_fobos.catch_up`
    -> `_average.adagrad_skipped_sum` where the averaged iterate is kept,
    `_adagrad.adagrad_catch_up`), `_gradients.gradients`, `refused`,
    `invariant_sigmas` (`step_size` -> `adagrad_eta` of G + g^2), then `apply` ->
    `_adagrad.adagrad_step` (whose new step is the one the norm took: G + g^2 is the
    same sum) and `_fobos.fobos_prox` at w - eta (sigma x), then `_fobos.stamp`
    (`_average.add_iterate`)."""
    cdef double* state = c.arrays.state
    cdef double* steps = c.scratch.factor_memo
    cdef long long width = c.layout.width, nz
    cdef double t = <double>c.cursor.t, alpha = c.params.alpha_pen, ridge = 1.0 - c.params.l1_share
    cdef bint averaged = averaging(c), l2 = c.params.l1_share == 0.0 and not averaged
    cdef long long avg_sum_at = c.layout.avg_sum_at
    cdef double acc = intercept_margin(c), x_max = intercept_feature(c)
    cdef double q, x, g, eta, norm, sigma, total = 0.0
    cdef double* row
    cdef double* e
    for nz in range(lo, hi):
        row = state + indices[nz] * width
        e = row + ADAGRAD_ROW_FIELDS
        if l2:
            e[ADAGRAD_W] = l2_caught_up(e[ADAGRAD_W], alpha * e[ADAGRAD_ETA], ridge, t - row[ROW_LAST_STEP])
            row[ROW_LAST_STEP] = t
        elif row[ROW_LAST_STEP] < t:
            if averaged:
                e[avg_sum_at] += adagrad_skipped_sum(c, row, 0)
            e[ADAGRAD_W] = adagrad_catch_up(c, row, 0)
            row[ROW_LAST_STEP] = t
        acc += e[ADAGRAD_W] * data[nz]
        x_max = abs_max2(x_max, data, nz, False)
    c.arrays.scores[0] = acc
    q = c.arrays.score_grads[0] = loss_gradient(c, loss, acc, y, sw, &total)
    if refused(c, q, x_max):
        return total
    norm = intercept_norm_step(c, ADAGRAD, 0, q, intercept_eta)
    for nz in range(lo, hi):
        e = state + indices[nz] * width + ADAGRAD_ROW_FIELDS
        x = data[nz]
        g = q * x
        eta = steps[nz - lo] = adagrad_eta(c, e[ADAGRAD_G] + g * g)
        norm += eta * x * x
    if loss == LOG and sw == 1.0:      # e^-|y p| as `loss_gradient` took it
        sigma = log_invariant_sigma(y * acc, y, norm, 1.0, c.cursor.exp_margin)
    else:
        sigma = invariant_sigma(loss, acc, y, norm, sw, c.params.epsilon)
    for nz in range(lo, hi):
        row = state + indices[nz] * width
        e = row + ADAGRAD_ROW_FIELDS
        x = data[nz]
        g = q * x
        e[ADAGRAD_G] += g * g
        eta = e[ADAGRAD_ETA] = steps[nz - lo]
        if eta > 0.0:
            e[ADAGRAD_W] = fobos_prox(c, e[ADAGRAD_W] - eta * (sigma * x), alpha * eta)
        if averaged:
            add_iterate(c, row)
        row[ROW_LAST_STEP] = t + 1.0
    c.cursor.n_ops += 2 * (hi - lo)
    c.arrays.intercept_grad[0] = q
    c.arrays.sigma[0] = sigma
    return total


cdef inline double l2_caught_up(double w, double a, double ridge, double m) noexcept nogil:
    """Under l2, w after m >= 0 proxes with the frozen step's threshold a = alpha eta, as
    `_adagrad.adagrad_after` computes it (w e^L, L = -m log1p(a (1 - rho)), rho = 0), but
    without its tests: a feature already current (m = 0), a zero weight and alpha = 0
    give L = -0, e^L = 1 and w itself, the bits the tests return. A branch fewer per
    entry, the one the row's features took at random (Zipf's frequent features are
    current at one step and behind at the next)."""
    return w * small_exp(-m * small_log1p(a * ridge))
