# The hand-fused row kernels: one row of a rule with one output and a separable penalty,
# the general path's arithmetic operation for operation with the step's constants in
# locals (tests/test_fast_paths.py checks the bits). `fit_csr` picks a pass's kernel,
# loss family and schedule kind once, before its loop (`_kernels.pyx`, `pass_kernel`), as
# the tags below: each loop it instantiates holds one kernel, its branches on the rule,
# the loss and the schedule resolved when compiled.
from fastprox._kernel.base.types cimport value_t, index_t, FOBOS, RDA, FTRL, CONSTANT, INVSQRT, INV, ADAGRAD, NORMALIZED
from fastprox._kernel.losses.losses cimport LOG
from fastprox._kernel.base.state cimport (Ctx, ROW_LAST_STEP, ADAGRAD_ROW_FIELDS, ADAGRAD_W, DUAL_SUM, DUAL_SQUARES,
                              FTRL_N, FTRL_ROOT, MEMO_FIELDS, MEMO_W, MEMO_ROOT)
from fastprox._kernel.rules.schedules cimport begin_schedule_step, next_eta, varies
from fastprox._kernel.rules.adagrad cimport adagrad_catch_up
from fastprox._kernel.rules.fobos cimport advance_separable, count_step, fobos_averaged_catch_up, stamp_cumulants
from fastprox._kernel.rules.average cimport add_iterates
from fastprox._kernel.rules.dual cimport set_weight_params, ftrl_z
from fastprox._kernel.rules.intercept cimport (intercept_feature, intercept_value, apply_rule_intercept,
                                  intercept_term, intercept_margin, intercept_norm, intercept_norm_step,
                                  intercept_known_step)
from fastprox._kernel.losses.gradients cimport loss_gradient, refused, abs_max2
from fastprox._kernel.base.csr cimport weight_at, prefetch_rows
from fastprox._kernel.base.state cimport normalized_l1_rows, lane_slot, LANE_SLOTS, PREFETCH_STEPS
from fastprox._kernel.rules.normalized cimport set_normalized_eta, scale_of
from fastprox._kernel.base.state cimport entry, NORM_W
from fastprox._kernel.losses.invariant cimport invariant_sigma, log_invariant_sigma
from fastprox._kernel.lanes.pairs cimport (pair, sqrt2, l1_catch_up2, l1_step2, scalar_step2,
                               prefix_margin2, prefix_step2, prefix_stamp2, rda_weights2, dual_weights2,
                               prox_mode, PROX_NONE, PROX_SCALE, PROX_FULL, top_t, top_start, top_max,
                               scalar_margin2)
from fastprox._kernel.lanes.lanes cimport lanes_t, lane_row_t
from fastprox._kernel.steps.rows_invariant cimport InvariantAdagradRows, invariant_adagrad_row

cdef extern from "_kernel/out_of_line.h":
    pass                          # the functions marked FASTPROX_IN_LINE below


# The row kernels (`Params.plain_fobos`, `plain_adagrad`, `plain_normalized`, `plain_dual`
# by layout and step), empty structs that only name a specialization of the fused
# functions below: fobos under a scalar schedule in the l1 layout (Q stamp) or the
# others (P stamp, both, none); AdaGrad under l1 (or no penalty) or l2 and elastic net,
# or with the invariant step (`_kernel/steps/rows_invariant.pxd`);
# the normalized schedule with the gradient or the invariant step; rda under invsqrt or
# adagrad, ftrl with or without sqrt(n) kept.
cdef struct FobosL1Rows:
    char tag
cdef struct FobosRows:
    char tag
cdef struct AdagradL1Rows:
    char tag
cdef struct AdagradRows:
    char tag
cdef struct NormalizedRows:
    char tag
cdef struct InvariantNormalizedRows:
    char tag
cdef struct RdaRows:
    char tag
cdef struct RdaAdagradRows:
    char tag
cdef struct FtrlRows:
    char tag
cdef struct FtrlRootsRows:
    char tag
# The general step (`_kernel/steps/step.pxd`): mini-batches and the rules without a row kernel.
cdef struct GeneralStep:
    char tag

ctypedef fused rows_t:
    FobosL1Rows
    FobosRows
    AdagradL1Rows
    AdagradRows
    NormalizedRows
    InvariantNormalizedRows
    InvariantAdagradRows
    RdaRows
    RdaAdagradRows
    FtrlRows
    FtrlRootsRows

ctypedef fused step_t:
    GeneralStep
    rows_t

# The loss family: the log loss (its code a constant: the defaults' and the logistic
# models' rows) or any loss, its code read from the learner (`loss_gradient`'s switch).
cdef struct LogLoss:
    char tag
cdef struct AnyLoss:
    char tag

ctypedef fused loss_t:
    LogLoss
    AnyLoss

# The schedule kind of eta_t (`_kernel/rules/schedules.pxd`): eta0 every step (constant,
# and the per-coordinate schedules' base step), eta0 / sqrt(t) or eta0 / t.
cdef struct ConstantEta:
    char tag
cdef struct InvSqrtEta:
    char tag
cdef struct InvEta:
    char tag

ctypedef fused eta_t:
    ConstantEta
    InvSqrtEta
    InvEta


cdef inline int loss_of(Ctx* c, loss_t* loss) noexcept nogil:
    """The loss code of a pass: LOG under `LogLoss` (a constant), the learner's otherwise."""
    if loss_t is LogLoss:
        return LOG
    else:
        return c.params.loss


cdef inline int schedule_of(eta_t* schedule) noexcept nogil:
    """The schedule whose eta_t a pass's steps take (a constant: `begin_schedule_step`)."""
    if eta_t is InvSqrtEta:
        return INVSQRT
    elif eta_t is InvEta:
        return INV
    else:
        return CONSTANT


cdef inline int update_of(rows_t* kernel) noexcept nogil:
    """The update rule of a row kernel."""
    if rows_t is RdaRows or rows_t is RdaAdagradRows:
        return RDA
    elif rows_t is FtrlRows or rows_t is FtrlRootsRows:
        return FTRL
    else:
        return FOBOS


cdef inline int rule_schedule(rows_t* kernel, eta_t* schedule) noexcept nogil:
    """The schedule of a row kernel's rule: adagrad, normalized, or the scalar one of the
    pass's schedule kind."""
    if (rows_t is AdagradL1Rows or rows_t is AdagradRows or rows_t is InvariantAdagradRows
            or rows_t is RdaAdagradRows or rows_t is FtrlRows or rows_t is FtrlRootsRows):
        return ADAGRAD
    elif rows_t is NormalizedRows or rows_t is InvariantNormalizedRows:
        return NORMALIZED
    else:
        return schedule_of(schedule)


cdef inline bint tagged(int schedule) noexcept nogil:
    """Whether the row kernels have the schedule's kind: those whose eta_t does not vary
    (`ConstantEta`), invsqrt and inv. A scalar schedule added without its tag here (and
    its branch in `_kernels.pass_eta`) leaves its single rows to the general step."""
    return not varies(schedule) or schedule == INVSQRT or schedule == INV


cdef inline double row_step(Ctx* c, const value_t* data, const index_t* indices,
                            const index_t* indptr, const double* y, const double* sw, long long r,
                            rows_t* kernel, loss_t* loss, eta_t* schedule) noexcept nogil:
    """`step` for row r alone under a rule with one output and a separable penalty, by
    the row kernel `kernel` under the pass's loss family and schedule kind: the most
    common steps, which `fit_csr`'s loop takes directly (3-5% of an ijcnn1 pass was
    `step`'s dispatch), its kernel chosen once per pass (the tags are constants here).

    Mirrors `_step.step` with n_rows = 1 (its begin, intercept and end), the row
    itself computed by the kernel below."""
    cdef long long lo = indptr[r], hi = indptr[r + 1]
    cdef double total, yr = y[r], w = weight_at(sw, r), intercept_eta = 0.0
    cdef int update = update_of(kernel), rule = rule_schedule(kernel, schedule)
    if update != FOBOS:
        set_weight_params(c)
    begin_schedule_step(c, schedule_of(schedule))
    total = row_kernel(c, data, indices, lo, hi, yr, w, kernel, loss, schedule, &intercept_eta)
    if c.cursor.nonfinite:
        return total
    row_intercept(c, kernel, schedule, intercept_eta)
    c.cursor.t += 1
    if update == FOBOS and rule != ADAGRAD:     # `end_step`
        count_step(c)
    return total


cdef inline double row_kernel(Ctx* c, const value_t* data, const index_t* indices, long long lo,
                              long long hi, double yr, double w, rows_t* kernel, loss_t* loss,
                              eta_t* schedule, double* intercept_eta) noexcept nogil:
    """The row of non-zeros lo..hi (label yr, weight w) by the row kernel `kernel`: its
    margin, gradient and update, between `row_step`'s begin and its intercept (the
    invariant normalized row leaves the intercept's step size in intercept_eta[0])."""
    if rows_t is FobosL1Rows:
        return fobos_l1_row(c, data, indices, lo, hi, yr, w, loss, schedule, 1)
    elif rows_t is FobosRows:
        return fobos_plain_row(c, data, indices, lo, hi, yr, w, loss, schedule)
    elif rows_t is AdagradL1Rows:
        return adagrad_l1_row(c, data, indices, lo, hi, yr, w, loss)
    elif rows_t is AdagradRows:
        return adagrad_row(c, data, indices, lo, hi, yr, w, loss)
    elif rows_t is NormalizedRows:
        return normalized_row(c, data, indices, lo, hi, yr, w, loss, False, intercept_eta)
    elif rows_t is InvariantNormalizedRows:
        return normalized_row(c, data, indices, lo, hi, yr, w, loss, True, intercept_eta)
    elif rows_t is InvariantAdagradRows:     # (`_kernel/steps/rows_invariant.pxd`)
        return invariant_adagrad_row(c, data, indices, lo, hi, yr, w, loss_of(c, loss), intercept_eta)
    elif rows_t is RdaRows:
        return dual_row(c, data, indices, lo, hi, yr, w, loss, False, False, False)
    elif rows_t is RdaAdagradRows:
        return dual_row(c, data, indices, lo, hi, yr, w, loss, False, True, False)
    elif rows_t is FtrlRows:
        return dual_row(c, data, indices, lo, hi, yr, w, loss, True, True, False)
    else:
        return dual_row(c, data, indices, lo, hi, yr, w, loss, True, True, True)


cdef inline void row_intercept(Ctx* c, rows_t* kernel, eta_t* schedule, double intercept_eta) noexcept nogil:
    """The intercept's update after a row kernel's step (the invariant step's by sigma,
    with the step size intercept_eta its step norm took)."""
    cdef int update = update_of(kernel), rule = rule_schedule(kernel, schedule)
    if rows_t is InvariantNormalizedRows or rows_t is InvariantAdagradRows:
        intercept_known_step(c, c.arrays.intercept_grad[0], c.arrays.sigma[0], intercept_eta)
    else:
        apply_rule_intercept(c, update, rule, 0, c.arrays.intercept_grad[0], c.arrays.intercept_grad[0])


cdef inline bint entries(double* state, long long width, const index_t* indices, long long nz,
                         long long hi, double** e, double** f) noexcept nogil:
    """The state rows of non-zeros nz and nz + 1 of a row ending at hi, for the loops
    that take them two at a time: f = e for an odd row's last one. Whether there are two."""
    cdef bint two = nz + 1 < hi
    e[0] = state + indices[nz] * width
    f[0] = state + indices[nz + two] * width
    return two


cdef inline double dot2(double acc, pair w, const value_t* data, long long nz, bint two) noexcept nogil:
    """acc + w.a x_nz, then + w.b x_(nz+1) if there are two: the margin's sum in row order."""
    acc += w.a * data[nz]
    if two:
        acc += w.b * data[nz + 1]
    return acc


cdef inline double l1_margin_pair(double* state, long long width, int at_w, const value_t* data,
                                  const index_t* indices, long long nz, bint two, double shrink_product,
                                  double threshold_sum, double acc, double* x_max) noexcept nogil:
    """`fobos_l1_row`'s margin for non-zeros nz and nz + 1 (`two`), or nz alone (an odd
    row's last, both lanes on its state row as `entries` gives them): their catch-up
    (none in the averaged layout, at_w = 2: the identity there, `averaged_catch_up2`
    having caught them up), acc plus their terms, returned, and the largest |x| into x_max[0]. `two` a constant
    at each call: the row's pairs, then its last one, with no test of `two` per pair."""
    cdef double* e = state + indices[nz] * width
    cdef double* f = state + indices[nz + two] * width
    x_max[0] = abs_max2(x_max[0], data, nz, two)
    if at_w == 2:           # (averaged: `averaged_catch_up2` left them current)
        return dot2(acc, pair(e[at_w], f[at_w]), data, nz, two)
    return dot2(acc, l1_catch_up2(e, f, at_w, shrink_product, threshold_sum), data, nz, two)


cdef inline void l1_step_pair(double* state, long long width, int at_w, const value_t* data,
                              const index_t* indices, long long nz, bint two, double q, double eta, double a,
                              double threshold_sum) noexcept nogil:
    """`fobos_l1_row`'s step of non-zeros nz and nz + 1 (`two`), or nz alone, as
    `l1_margin_pair` takes them."""
    l1_step2(state + indices[nz] * width, state + indices[nz + two] * width, at_w, data[nz], data[nz + two], q,
             eta, a, threshold_sum)


# FASTPROX_IN_LINE
cdef inline void averaged_catch_up2(Ctx* c, double* e, double* f, bint two) noexcept nogil:
    """The averaged catch-up of state rows e and f (`two`), or e alone, in the fobos rows'
    first loop: their skipped iterates into S and their stamps the step's
    (`fobos_averaged_catch_up`), which makes the kernel's own catch-up of them the identity."""
    fobos_averaged_catch_up(c, e)
    if two:
        fobos_averaged_catch_up(c, f)


# FASTPROX_IN_LINE
cdef inline void add_iterates2(Ctx* c, double* e, double* f, bint two) noexcept nogil:
    """The new iterates of state rows e and f (`two`), or e alone, into their sums, in
    the fobos rows' step loop right after their update (`average.add_iterates`)."""
    add_iterates(c, e, 1)
    if two:
        add_iterates(c, f, 1)


cdef inline double fobos_l1_row(Ctx* c, const value_t* data, const index_t* indices,
                                long long lo, long long hi, double y, double sw,
                                loss_t* loss, eta_t* schedule, int at_w) noexcept nogil:
    """`fobos_row` in the l1 layout (Q stamp, w; with the averaged iterate kept (Q stamp,
    A, w, S): the weight at field at_w, 1 or 2, a constant at each call, 2 taking the
    averaged catch-up and iterates as `fobos_row` takes them), its non-zeros two at a time
    (`l1_margin_pair`, `l1_step_pair`: the row's pairs, then an odd row's last), each
    instruction of the catch-up and of the step for both (`_kernel/lanes/pairs.h`); the
    same operations in the same order, the same bits. A refused row's entries, caught up,
    are stamped as `fobos.catch_up` leaves them.

    Mirrors as `fobos_row` says, with l1's P = 1 (no P stamp, no ratio)."""
    cdef double* state = c.arrays.state
    cdef long long width = 2 * at_w, nz         # (Q stamp; w) or (Q stamp, A; w, S): one output
    cdef double shrink_product = c.cursor.shrink_product, threshold_sum = c.cursor.threshold_sum
    cdef double eta, acc = intercept_margin(c), a, q, total
    cdef double x_max = intercept_feature(c)
    for nz in range(lo, hi - 1, 2):
        if at_w == 2:
            averaged_catch_up2(c, state + indices[nz] * width, state + indices[nz + 1] * width, True)
        acc = l1_margin_pair(state, width, at_w, data, indices, nz, True, shrink_product, threshold_sum, acc,
                             &x_max)
    if (hi - lo) & 1:
        if at_w == 2:
            averaged_catch_up2(c, state + indices[hi - 1] * width, NULL, False)
        acc = l1_margin_pair(state, width, at_w, data, indices, hi - 1, False, shrink_product, threshold_sum,
                             acc, &x_max)
    c.arrays.scores[0] = acc
    next_eta(c, schedule_of(schedule))
    total = 0.0
    q = c.arrays.score_grads[0] = loss_gradient(c, loss_of(c, loss), acc, y, sw, &total)
    if refused(c, q, x_max):
        if at_w == 1:       # (the averaged catch-up stamped them)
            fobos_stamps(c, indices, lo, hi)
        return total
    advance_separable(c, c.params.alpha_pen * c.cursor.eta, 1.0)     # (l1: the layout's share)
    threshold_sum, eta = c.cursor.threshold_sum, c.cursor.eta
    a = c.params.alpha_pen * eta
    for nz in range(lo, hi - 1, 2):
        l1_step_pair(state, width, at_w, data, indices, nz, True, q, eta, a, threshold_sum)
        if at_w == 2:
            add_iterates2(c, state + indices[nz] * width, state + indices[nz + 1] * width, True)
    if (hi - lo) & 1:
        l1_step_pair(state, width, at_w, data, indices, hi - 1, False, q, eta, a, threshold_sum)
        if at_w == 2:
            add_iterates2(c, state + indices[hi - 1] * width, NULL, False)
    c.cursor.n_ops += 2 * (hi - lo)
    c.arrays.intercept_grad[0] = q
    return total


cdef inline double row_gradient(Ctx* c, double acc, double y, double sw, loss_t* loss, eta_t* schedule,
                                double* total) noexcept nogil:
    """After a fobos row's margin loop: its margin acc kept, the step's eta (`next_eta`),
    and its loss derivative q, kept and returned (its loss into total[0], from 0)."""
    cdef double q
    c.arrays.scores[0] = acc
    next_eta(c, schedule_of(schedule))
    total[0] = 0.0
    q = c.arrays.score_grads[0] = loss_gradient(c, loss_of(c, loss), acc, y, sw, total)
    return q


cdef inline double fobos_row(Ctx* c, const value_t* data, const index_t* indices,
                             long long lo, long long hi, double y, double sw,
                             loss_t* loss, eta_t* schedule) noexcept nogil:
    """One row of the most common rule (one output, fobos with a scalar step and an
    l1/l2/elasticnet penalty) with the averaged iterate, in the averaged elastic-net rows
    (P stamp, Q stamp, A, w, S; l2's, `Layout.avg_prefix`, run `fobos_prefix_row`; the
    l1 layout is `fobos_l1_row`'s; without the averaged iterate, `fobos_plain_row`) of
    `_kernel/steps/rows_average.pxd`: the general path's arithmetic, operation for
    operation, two non-zeros at a time, each pair caught up with its sums in the
    margin's loop (`averaged_catch_up2`, after which the kernel's own catch-up is the
    identity and is skipped) and its new iterates added in the step's loop
    (`add_iterates2`).

    Its layout is the one averaged rows of this rule keep (`_kernel/base/state.pxd`'s
    `set_layout`: l1 and l2 take the kernels above), constants in its loops: three row
    fields (P stamp, Q stamp at 1, A), then (w, S); the row's pairs then an odd row's last
    (`fobos_averaged_margin`, `fobos_averaged_steps`, no test of `two` per pair).

    Mirrors `_step.step`'s single-row branch under this rule: `margins` (`_fobos.catch_up`
    -> `scalar_catch_up`, then `weight`), `_gradients.gradient`, `refused`,
    `_fobos.advance_cumulants`, `_step.apply` -> `_fobos.fobos_prox`, `_fobos.stamp`."""
    cdef double x_max = intercept_feature(c), q, total
    cdef double acc = fobos_averaged_margin(c, data, indices, lo, hi, &x_max)
    q = row_gradient(c, acc, y, sw, loss, schedule, &total)
    if refused(c, q, x_max):
        return total
    advance_separable(c, c.params.alpha_pen * c.cursor.eta, c.params.l1_share)
    fobos_averaged_steps(c, data, indices, lo, hi, q)
    c.cursor.n_ops += 2 * (hi - lo)
    c.arrays.intercept_grad[0] = q
    return total


# FASTPROX_IN_LINE
cdef inline double fobos_averaged_margin(Ctx* c, const value_t* data, const index_t* indices, long long lo,
                                         long long hi, double* x_max) noexcept nogil:
    """`fobos_row`'s margin loop: each pair caught up with its sums (`averaged_catch_up2`)
    and its terms added (`dot2`, the weight at field 3), the row's pairs then an odd
    row's last; returns the margin, the largest |x| into x_max[0] (from x_max[0])."""
    cdef double* state = c.arrays.state
    cdef long long width = c.layout.width, nz
    cdef double acc = intercept_margin(c)
    cdef double* e
    cdef double* f
    for nz in range(lo, hi - 1, 2):
        e = state + indices[nz] * width
        f = state + indices[nz + 1] * width
        averaged_catch_up2(c, e, f, True)
        acc = dot2(acc, pair(e[3], f[3]), data, nz, True)
        x_max[0] = abs_max2(x_max[0], data, nz, True)
    if (hi - lo) & 1:
        e = state + indices[hi - 1] * width
        averaged_catch_up2(c, e, e, False)
        acc = dot2(acc, pair(e[3], e[3]), data, hi - 1, False)
        x_max[0] = abs_max2(x_max[0], data, hi - 1, False)
    return acc


# FASTPROX_IN_LINE
cdef inline void fobos_averaged_steps(Ctx* c, const value_t* data, const index_t* indices, long long lo,
                                      long long hi, double q) noexcept nogil:
    """`fobos_row`'s step loop: each pair stepped (`scalar_step2` in its layout, the
    full prox) and its new iterates added (`add_iterates2`), the row's pairs then an
    odd row's last."""
    cdef double* state = c.arrays.state
    cdef long long width = c.layout.width, nz
    cdef double P = c.cursor.shrink_product, Q = c.cursor.threshold_sum, eta = c.cursor.eta
    cdef double l1_share = c.params.l1_share, a = c.params.alpha_pen * c.cursor.eta
    cdef double* e
    cdef double* f
    for nz in range(lo, hi - 1, 2):
        e = state + indices[nz] * width
        f = state + indices[nz + 1] * width
        scalar_step2(e, f, 3, 1, data[nz], data[nz + 1], q, eta, a, l1_share, P, Q, PROX_FULL)
        add_iterates2(c, e, f, True)
    if (hi - lo) & 1:
        e = state + indices[hi - 1] * width
        scalar_step2(e, e, 3, 1, data[hi - 1], data[hi - 1], q, eta, a, l1_share, P, Q, PROX_FULL)
        add_iterates2(c, e, e, False)


cdef inline double fobos_plain_row(Ctx* c, const value_t* data, const index_t* indices,
                                   long long lo, long long hi, double y, double sw,
                                   loss_t* loss, eta_t* schedule) noexcept nogil:
    """`fobos_row` without the averaged iterate: its layout (n_row row fields: 0, (w), no
    penalty, or (A; w, S), whose averaged rows `rows_average.averaged_rows` shows the
    kernel from w on; 1, (P stamp, w), l2; 2, (P stamp, Q stamp, w), elastic net) and how much of
    the prox its step computes (`prox_mode`) decided once a row, each loop then
    compiled with them constants (`fobos_plain_margin`, `fobos_plain_steps`, always in
    line: GCC left a function of the layout out of line, its branches on the layout in
    every pair). A refused row's entries, caught up, are stamped as `fobos.catch_up`
    leaves them."""
    cdef int n_row = c.layout.n_row_fields, mode
    cdef long long width = c.layout.width
    cdef double l1_share = c.params.l1_share, a, eta, q, total
    cdef double x_max = intercept_feature(c), acc
    if n_row == 1:
        acc = fobos_plain_margin(c, data, indices, lo, hi, 1, -1, 2, &x_max)
    elif n_row == 0:
        acc = fobos_plain_margin(c, data, indices, lo, hi, 0, -1, width, &x_max)
    else:
        acc = fobos_plain_margin(c, data, indices, lo, hi, 2, 1, 3, &x_max)
    q = row_gradient(c, acc, y, sw, loss, schedule, &total)
    if refused(c, q, x_max):
        fobos_stamps(c, indices, lo, hi)
        return total
    advance_separable(c, c.params.alpha_pen * c.cursor.eta, l1_share)
    eta = c.cursor.eta
    a = c.params.alpha_pen * eta
    mode = prox_mode(a, l1_share)
    if n_row == 1 and mode == PROX_SCALE:       # (l2: the soft threshold at 0 skipped)
        fobos_plain_steps(c, data, indices, lo, hi, 1, -1, 2, q, a, PROX_SCALE)
    elif n_row == 0 and mode == PROX_NONE:      # (no penalty: the prox is the identity)
        fobos_plain_steps(c, data, indices, lo, hi, 0, -1, width, q, a, PROX_NONE)
    elif n_row == 1:
        fobos_plain_steps(c, data, indices, lo, hi, 1, -1, 2, q, a, PROX_FULL)
    elif n_row == 0:
        fobos_plain_steps(c, data, indices, lo, hi, 0, -1, width, q, a, PROX_FULL)
    else:
        fobos_plain_steps(c, data, indices, lo, hi, 2, 1, 3, q, a, PROX_FULL)
    c.cursor.n_ops += 2 * (hi - lo)
    c.arrays.intercept_grad[0] = q
    return total


# FASTPROX_IN_LINE
cdef inline double fobos_plain_margin(Ctx* c, const value_t* data, const index_t* indices, long long lo,
                                      long long hi, int n_row, int off_Q, long long width,
                                      double* x_max) noexcept nogil:
    """`fobos_plain_row`'s margin loop in the layout of n_row row fields with the Q stamp
    at off_Q (-1: none), constants at each call, as the rows' width but without a penalty
    (`fobos_plain_row`'s layouts): each pair caught up and its terms added
    (`_kernel/lanes/pairs.h`'s `scalar_margin2`, the largest |x| kept in its lanes), the
    row's pairs then an odd row's last (no test of `two` per pair, as `fobos_l1_row`);
    returns the margin, the largest |x| into x_max[0] (from x_max[0])."""
    cdef double* state = c.arrays.state
    cdef long long nz
    cdef double P = c.cursor.shrink_product, Q = c.cursor.threshold_sum
    cdef double acc = intercept_margin(c)
    cdef double* e
    cdef top_t top = top_start(x_max[0])
    for nz in range(lo, hi - 1, 2):
        acc = scalar_margin2(acc, state + indices[nz] * width, state + indices[nz + 1] * width, n_row, off_Q, P, Q,
                             data[nz], data[nz + 1], True, &top)
    if (hi - lo) & 1:
        e = state + indices[hi - 1] * width
        acc = scalar_margin2(acc, e, e, n_row, off_Q, P, Q, data[hi - 1], data[hi - 1], False, &top)
    x_max[0] = top_max(top)
    return acc


cdef inline void fobos_stamps(Ctx* c, const index_t* indices, long long lo, long long hi) noexcept nogil:
    """A refused row's entries, which its margin loop caught up, stamped with the
    cumulants (`fobos.stamp_cumulants`), as the general step's catch-up leaves them."""
    cdef long long nz
    for nz in range(lo, hi):
        stamp_cumulants(c, c.arrays.state + indices[nz] * c.layout.width)


# FASTPROX_IN_LINE
cdef inline void fobos_plain_steps(Ctx* c, const value_t* data, const index_t* indices, long long lo,
                                   long long hi, int n_row, int off_Q, long long width, double q, double a,
                                   int prox) noexcept nogil:
    """`fobos_plain_row`'s step loop (`_kernel/lanes/pairs.h`'s `scalar_step2`, stamped with
    the cumulants after the step), its layout as `fobos_plain_margin` takes it and how
    much of the prox it computes (`prox`, `fastprox_prox_as2`) constants at each call."""
    cdef double* state = c.arrays.state
    cdef long long nz
    cdef double P = c.cursor.shrink_product, Q = c.cursor.threshold_sum, eta = c.cursor.eta
    cdef double l1_share = c.params.l1_share
    cdef double* e
    for nz in range(lo, hi - 1, 2):
        scalar_step2(state + indices[nz] * width, state + indices[nz + 1] * width, n_row, off_Q, data[nz],
                     data[nz + 1], q, eta, a, l1_share, P, Q, prox)
    if (hi - lo) & 1:
        e = state + indices[hi - 1] * width
        scalar_step2(e, e, n_row, off_Q, data[hi - 1], data[hi - 1], q, eta, a, l1_share, P, Q, prox)


cdef inline double fobos_prefix_row(Ctx* c, const value_t* data, const index_t* indices,
                                    long long lo, long long hi, double y, double sw,
                                    loss_t* loss, eta_t* schedule) noexcept nogil:
    """`fobos_row` in the averaged l2 rows (P stamp, SP, SP_lo, w, S:
    `Layout.avg_prefix`, the fields of `_kernel/lanes/pairs.h`'s `FASTPROX_PREFIX_*`, at
    places known when compiled), two non-zeros at a time in both loops, the row's pairs
    then an odd row's last (no test of `two` per pair, as `fobos_plain_row`): each pair
    caught up with its sums (`fastprox_prefix_caught2`: `fobos_averaged_catch_up` without its
    stamps) and its terms added in the margin's loop (`prefix_margin2`, the largest |x|
    kept in its lanes), stepped, its new iterates added and stamped (`prefix_step2`:
    `scalar_step2` then `average.add_iterates`) in the step's (`fobos_prefix_steps`); a
    refused row's pairs stamped as the catch-up would have left them. Each entry's
    operations in `fobos_row`'s order: the same bits.

    Mirrors as `fobos_row` says, with l2's threshold stamp absent (Q = 0)."""
    cdef double* state = c.arrays.state
    cdef long long width = c.layout.width, nz
    cdef double P = c.cursor.shrink_product, SP = c.cursor.avg_prefix, SP_lo = c.cursor.avg_prefix_lo
    cdef double a, q, total
    cdef double acc = intercept_margin(c)
    cdef double* e
    cdef top_t top = top_start(intercept_feature(c))
    for nz in range(lo, hi - 1, 2):
        acc = prefix_margin2(acc, state + indices[nz] * width, state + indices[nz + 1] * width, P, SP, SP_lo,
                             data[nz], data[nz + 1], True, &top)
    if (hi - lo) & 1:
        e = state + indices[hi - 1] * width
        acc = prefix_margin2(acc, e, e, P, SP, SP_lo, data[hi - 1], data[hi - 1], False, &top)
    q = row_gradient(c, acc, y, sw, loss, schedule, &total)
    if refused(c, q, top_max(top)):
        for nz in range(lo, hi):
            prefix_stamp2(state + indices[nz] * width, state + indices[nz] * width, P, SP, SP_lo)
        return total
    advance_separable(c, c.params.alpha_pen * c.cursor.eta, c.params.l1_share)
    a = c.params.alpha_pen * c.cursor.eta
    if prox_mode(a, c.params.l1_share) == PROX_SCALE:       # (l2's share 0: soft(v, 0) is v, skipped)
        fobos_prefix_steps(c, data, indices, lo, hi, q, a, PROX_SCALE)
    else:
        fobos_prefix_steps(c, data, indices, lo, hi, q, a, PROX_FULL)
    c.cursor.n_ops += 2 * (hi - lo)
    c.arrays.intercept_grad[0] = q
    return total


# FASTPROX_IN_LINE
cdef inline void fobos_prefix_steps(Ctx* c, const value_t* data, const index_t* indices, long long lo,
                                    long long hi, double q, double a, int prox) noexcept nogil:
    """`fobos_prefix_row`'s step loop (`prefix_step2`, the cumulants after the step
    advanced), how much of the prox it computes (`prox`) a constant at each call: the
    row's pairs, then an odd row's last."""
    cdef double* state = c.arrays.state
    cdef long long width = c.layout.width, nz
    cdef double P = c.cursor.shrink_product, SP = c.cursor.avg_prefix, SP_lo = c.cursor.avg_prefix_lo
    cdef double eta = c.cursor.eta, l1_share = c.params.l1_share
    cdef bint add = c.cursor.t + 1 >= c.params.average_from
    cdef double* e
    for nz in range(lo, hi - 1, 2):
        prefix_step2(state + indices[nz] * width, state + indices[nz + 1] * width, data[nz], data[nz + 1], q, eta,
                     a, l1_share, add, P, SP, SP_lo, prox)
    if (hi - lo) & 1:
        e = state + indices[hi - 1] * width
        prefix_step2(e, e, data[hi - 1], data[hi - 1], q, eta, a, l1_share, add, P, SP, SP_lo, prox)


cdef inline double adagrad_row(Ctx* c, const value_t* data, const index_t* indices,
                               long long lo, long long hi, double y, double sw, loss_t* loss) noexcept nogil:
    """One row of AdaGrad's composite mirror descent with one output under l2 or elastic
    net, as `fobos_row`: the general path's arithmetic with its constants in locals
    (under l1 or without a penalty: `adagrad_l1_row`), the step in lanes (`_kernel/lanes/lanes.h`).
    Row layout: last (the last step), w, G, eta.

    Mirrors `_step.step`'s single-row branch under this rule: `margins` (`_fobos.catch_up`
    -> `_adagrad.adagrad_catch_up`), `_gradients.gradient`, `refused`, `_step.apply`
    -> `_adagrad.adagrad_step` then `_fobos.fobos_prox`, `_fobos.stamp` (ROW_LAST_STEP)."""
    cdef lane_row_t lanes
    cdef long long i
    cdef double t = <double>c.cursor.t, q, total
    cdef double acc = intercept_margin(c), x_max = intercept_feature(c)
    cdef double* row
    lanes = lane_entries(c, data, indices, lo, hi)
    for i in range(lanes.n):
        row = lanes.rows[i]
        if row[ROW_LAST_STEP] < t:
            row[ADAGRAD_ROW_FIELDS + ADAGRAD_W] = adagrad_catch_up(c, row, 0)
            row[ROW_LAST_STEP] = t
        lanes.weight[i] = row[ADAGRAD_ROW_FIELDS + ADAGRAD_W]
        acc += lanes.weight[i] * lanes.x[i]
        x_max = abs_max2(x_max, lanes.x, i, False)
    c.arrays.scores[0] = acc
    total = 0.0
    q = c.arrays.score_grads[0] = loss_gradient(c, loss_of(c, loss), acc, y, sw, &total)
    if refused(c, q, x_max):
        return total
    lane_prefetch(c, indices)
    c.lanes.adagrad_step(&lanes, q, t, c.params.alpha_pen, c.params.l1_share, c.params.delta, c.params.eta0)
    c.cursor.n_ops += 2 * lanes.n
    c.arrays.intercept_grad[0] = q
    return total


cdef inline double adagrad_l1_row(Ctx* c, const value_t* data, const index_t* indices,
                                  long long lo, long long hi, double y, double sw, loss_t* loss) noexcept nogil:
    """`adagrad_row` under l1 (or no penalty: `Learner` makes l1_share 1 then), its passes in lanes (`_kernel/lanes/lanes.h`: the catch-up and
    the margin, then the step, each instruction for every lane). The catch-up has no
    branch: a current feature (last = t) has threshold 0, which keeps it. Without a
    penalty (alpha 0) every threshold is 0: the general path's bits, without its
    per-feature branch and l2's division by 1.

    Mirrors as `adagrad_row` says, with `adagrad_catch_up`'s l1 case
    (`soft_threshold(w, m a)`)."""
    cdef lane_row_t lanes = lane_entries(c, data, indices, lo, hi)
    cdef double t = <double>c.cursor.t, alpha = c.params.alpha_pen, q, total
    cdef double acc = intercept_margin(c), x_max = intercept_feature(c)
    acc = c.lanes.adagrad_margin(&lanes, t, alpha, acc, &x_max)
    c.arrays.scores[0] = acc
    total = 0.0
    q = c.arrays.score_grads[0] = loss_gradient(c, loss_of(c, loss), acc, y, sw, &total)
    if refused(c, q, x_max):
        return total
    lane_prefetch(c, indices)
    c.lanes.adagrad_step(&lanes, q, t, alpha, 1.0, c.params.delta, c.params.eta0)
    c.cursor.n_ops += 2 * lanes.n
    c.arrays.intercept_grad[0] = q
    return total


cdef inline double dual_row(Ctx* c, const value_t* data, const index_t* indices,
                            long long lo, long long hi, double y, double sw, loss_t* loss,
                            bint ftrl, bint adagrad, bint roots) noexcept nogil:
    """One row of rda or ftrl with one output and a separable penalty in one layout (its
    flags constants, so the loops test none of them), as `fobos_row`: `weight`'s closed
    forms and `apply`'s sums, operation for operation, with the step's constants in locals.
    Entry layout: s (rda) or z (ftrl), then G or n (adagrad, ftrl), then sqrt(n)
    (`ftrl_roots`). The margin takes its non-zeros two at a time (e, f), each
    instruction of their weights' formula for both (`_kernel/lanes/pairs.h`), as ftrl's update.

    Mirrors `_step.margins` -> `_step.step_weight` -> `weight` (rda: `soft_threshold`
    with `DualConstants.rda_threshold`, `rda_scale`; adagrad: `_dual.dual_weight`;
    ftrl: `_dual.ftrl_weight`), `_gradients.gradient`, `refused`, then `_step.apply`'s
    rda sums or `_dual.ftrl_update` (-> `ftrl_z`)."""
    cdef double* state = c.arrays.state
    cdef double* memo = c.scratch.ftrl_memo
    cdef long long width = c.layout.width, nz
    cdef double l1_threshold = c.dual.l1_threshold, l2_weight = c.dual.l2_weight
    cdef double rda_threshold = c.dual.rda_threshold, rda_scale = c.dual.rda_scale
    cdef double rda_rho = c.params.rda_rho
    cdef double delta = c.params.delta, inv_eta0 = c.params.inv_eta0, ge, gf, ne, q, total
    cdef double acc = intercept_term(c, intercept_value(c, 0)), x_max = intercept_feature(c)
    cdef double* e
    cdef double* f
    cdef pair root, w
    cdef bint two
    if not (ftrl or adagrad):
        for nz in range(lo, hi, 2):
            two = entries(state, width, indices, nz, hi, &e, &f)
            acc = dot2(acc, rda_weights2(e[DUAL_SUM], f[DUAL_SUM], rda_threshold, rda_scale), data, nz, two)
            x_max = abs_max2(x_max, data, nz, two)
    else:
        for nz in range(lo, hi, 2):
            two = entries(state, width, indices, nz, hi, &e, &f)
            root = pair(e[FTRL_ROOT], f[FTRL_ROOT]) if roots else sqrt2(e[DUAL_SQUARES], f[DUAL_SQUARES])
            w = dual_weights2(e[DUAL_SUM], f[DUAL_SUM], root, delta, inv_eta0, l1_threshold, rda_rho,
                              l2_weight)
            if ftrl:
                memo[MEMO_FIELDS * (nz - lo) + MEMO_W] = w.a
                memo[MEMO_FIELDS * (nz - lo) + MEMO_ROOT] = root.a
                if two:
                    memo[MEMO_FIELDS * (nz - lo + 1) + MEMO_W] = w.b
                    memo[MEMO_FIELDS * (nz - lo + 1) + MEMO_ROOT] = root.b
            acc = dot2(acc, w, data, nz, two)
            x_max = abs_max2(x_max, data, nz, two)
    c.arrays.scores[0] = acc
    total = 0.0
    q = c.arrays.score_grads[0] = loss_gradient(c, loss_of(c, loss), acc, y, sw, &total)
    if refused(c, q, x_max):
        return total
    if ftrl:
        for nz in range(lo, hi, 2):
            two = entries(state, width, indices, nz, hi, &e, &f)
            ge = q * data[nz]
            e[FTRL_N] += ge * ge
            ne = e[FTRL_N]
            gf = q * data[nz + two]
            if two:
                f[FTRL_N] += gf * gf
            root = sqrt2(ne, f[FTRL_N])
            ftrl_z(e, ge, root.a, memo + MEMO_FIELDS * (nz - lo), inv_eta0, roots)
            if two:
                ftrl_z(f, gf, root.b, memo + MEMO_FIELDS * (nz - lo + 1), inv_eta0, roots)
    else:
        for nz in range(lo, hi):
            e = state + indices[nz] * width
            ge = q * data[nz]
            e[DUAL_SUM] += ge
            if adagrad:
                e[DUAL_SQUARES] += ge * ge
    c.cursor.n_ops += 2 * (hi - lo)
    c.arrays.intercept_grad[0] = q
    return total


cdef inline void lane_prefetch(Ctx* c, const index_t* indices) noexcept nogil:
    """The prefetching of the row PREFETCH_STEPS ahead (`_csr.prefetch_rows`), which
    `fit_csr` leaves to the rows in lanes (c.scratch.lane_ahead_lo/hi), and its state
    rows into their slot. Called where the step waits on a long chain (sigma, the
    gradient's exp): instructions retire in order, so the ones that wait on nothing run
    in that chain's shadow, where at the step's start they delayed it."""
    cdef long long lo = c.scratch.lane_ahead_lo
    if lo >= 0:
        prefetch_rows(c, indices, lo, c.scratch.lane_ahead_hi,
                      lane_slot(c, c.scratch.lane_at + PREFETCH_STEPS))
        c.scratch.lane_tag[(c.scratch.lane_at + PREFETCH_STEPS) % LANE_SLOTS] = lo


cdef inline lane_row_t lane_entries(Ctx* c, const value_t* data, const index_t* indices,
                                    long long lo, long long hi) noexcept nogil:
    """A row as the passes in lanes read it (`_kernel/lanes/lanes.h`'s fastprox_lane_row): the state
    rows of its non-zeros, each address taken once (by the prefetching, which keeps them
    in the step's slot, or by the lanes' `state_rows`, four at a time in the AVX sets),
    padded with the dummy row; its values (in place where
    they are doubles, else converted into c.scratch.lane_block); the memos in the lane
    block (sized by `ensure_scratch`)."""
    cdef lane_row_t row
    cdef double** rows = lane_slot(c, c.scratch.lane_at)
    cdef double* block = c.scratch.lane_block
    cdef double* state = c.arrays.state
    cdef double* xs = block
    cdef long long width = c.layout.width, size = c.scratch.lane_size, i
    row.n = hi - lo
    if c.scratch.lane_tag[c.scratch.lane_at % LANE_SLOTS] != lo:
        if index_t is int:
            c.lanes.state_rows(rows, state, indices + lo, NULL, row.n, width, block + 4 * size)
        else:
            c.lanes.state_rows(rows, state, NULL, indices + lo, row.n, width, block + 4 * size)
    else:
        for i in range(row.n, row.n + c.lanes.width - 1):
            rows[i] = block + 4 * size
    if value_t is double:
        row.x = data + lo
    else:
        for i in range(row.n):
            xs[i] = data[lo + i]
        row.x = xs
    row.rows, row.factor, row.scale, row.weight = rows, block + size, block + 2 * size, block + 3 * size
    return row


cdef inline void keep_scales(Ctx* c, const lane_row_t* row) noexcept nogil:
    """The scales and weights of a refused row's features, as the rescale of its first
    pass left them in the memos, stored as the general step's `margins` stores them:
    without a penalty that pass stores nothing (the step stores (m, w) of every entry),
    and a refused row takes no step."""
    cdef long long i
    for i in range(row.n):
        scale_of(c, row.rows[i])[0] = row.scale[i]
        entry(c, row.rows[i], 0)[NORM_W] = row.weight[i]


cdef inline double normalized_row(Ctx* c, const value_t* data, const index_t* indices,
                                  long long lo, long long hi, double y, double sw, loss_t* loss,
                                  bint invariant, double* intercept_eta) noexcept nogil:
    """One row under the normalized schedule with one output, gradient or invariant
    step (`invariant`, a constant): the general `step`'s `margins` (`normalized_catch_up`, `rescale`),
    `add_row_norm`, `invariant_sigmas` and `apply` (`normalized_apply`), the same
    arithmetic fused into three passes over the row (two with the gradient step), in
    lanes (`_kernel/lanes/lanes.h`, the rows' layout a constant in each pass), the row's sums
    (margin, N_t, step norm) in four partial sums as the general step's (`fastprox_sum4`);
    N_t's sum is taken in the first pass and kept only if the row is not refused. The invariant step's second
    pass stores G (and under l1 the step factor) as `apply` would, since only the
    weights wait for sigma; without a penalty the rows keep no factor, and the pass
    leaves them in the row's memo for the third (`lane_entries`). One output: each feature's entry
    is the row's first (`entry(c, row, 0)`). The invariant step leaves the intercept's
    step size, which its step norm takes, in intercept_eta[0] for the intercept's update
    (`_kernel/rules/intercept.pxd`, `intercept_known_step`).

    Mirrors `_normalized`: `normalized_catch_up`, `rescale`, `row_norm`,
    `normalized_accumulate` (`normalized_factor`), `normalized_apply`."""
    cdef const lanes_t* lanes = c.lanes
    cdef lane_row_t row = lane_entries(c, data, indices, lo, hi)
    cdef bint penalized = normalized_l1_rows(c)
    cdef double acc = intercept_margin(c), x_max = intercept_feature(c)
    cdef double norms = c.cursor.norm_sum
    cdef double alpha = c.params.alpha_pen, eta0 = c.params.eta0, threshold_sum = c.cursor.threshold_sum
    cdef double q, r, step_norm, sigma, total = 0.0
    acc = lanes.normalized_margin(&row, penalized, threshold_sum, alpha, acc, &norms, &x_max)
    c.arrays.scores[0] = acc
    q = c.arrays.score_grads[0] = loss_gradient(c, loss_of(c, loss), acc, y, sw, &total)
    if refused(c, q, x_max):
        if not penalized:
            keep_scales(c, &row)
        return total
    c.cursor.norm_sum = norms + intercept_norm(c)
    set_normalized_eta(c)
    r = c.cursor.eta
    threshold_sum = c.cursor.threshold_sum = threshold_sum + r
    sigma = q
    if invariant:
        step_norm = intercept_norm_step(c, NORMALIZED, 0, q, intercept_eta)
        step_norm = lanes.normalized_factors(&row, penalized, q, r, eta0, step_norm)
        if loss_of(c, loss) == LOG and sw == 1.0:      # e^-|y p| as `loss_gradient` took it
            sigma = log_invariant_sigma(y * acc, y, step_norm, 1.0, c.cursor.exp_margin)
        else:
            sigma = invariant_sigma(loss_of(c, loss), acc, y, step_norm, sw, c.params.epsilon)
        lane_prefetch(c, indices)
        lanes.normalized_step(&row, penalized, sigma, r, alpha, threshold_sum)
    else:
        lane_prefetch(c, indices)
        lanes.normalized_update(&row, penalized, q, r, eta0, alpha, threshold_sum)
    c.cursor.n_ops += 2 * row.n
    c.arrays.intercept_grad[0] = q
    c.arrays.sigma[0] = sigma
    return total
