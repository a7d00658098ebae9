# The hand-fused row kernels: one row of a rule with one output (or l1_l2 / l1_linf
# over W's rows), the general path's arithmetic operation for operation with the
# step's constants in locals (tests/test_fast_paths.py checks the bits).
from fastprox._kernel.base.types cimport value_t, index_t, FOBOS, FTRL, ADAGRAD, L1_LINF
from fastprox._kernel.losses.losses cimport LOG
from fastprox._kernel.groups.group_prox cimport prox_l1_l2, prox_l1_linf
from fastprox._kernel.base.state cimport (Ctx, ROW_LAST_STEP, ADAGRAD_ROW_FIELDS, ADAGRAD_W, DUAL_SUM, DUAL_SQUARES,
                              FTRL_N, FTRL_ROOT, INTERCEPT_FIELDS, INTERCEPT_SUM, MEMO_FIELDS, MEMO_W,
                              MEMO_ROOT)
from fastprox._kernel.rules.schedules cimport begin_step, next_eta
from fastprox._kernel.rules.adagrad cimport adagrad_catch_up
from fastprox._kernel.rules.fobos cimport advance_cumulants, end_step
from fastprox._kernel.rules.dual cimport set_weight_params, ftrl_z
from fastprox._kernel.rules.intercept cimport intercept_feature, intercept_value, apply_intercept
from fastprox._kernel.losses.gradients cimport gradient, gradients, refused, abs_max2, row_abs_max, largest_q
from fastprox._kernel.base.csr cimport weight_at, prefetch_rows
from fastprox._kernel.base.state cimport normalized_l1_rows, lane_slot, LANE_SLOTS, PREFETCH_STEPS
from fastprox._kernel.rules.normalized cimport set_normalized_eta
from fastprox._kernel.rules.intercept cimport intercept_step_size
from fastprox._kernel.losses.invariant cimport invariant_sigma, log_invariant_sigma
from fastprox._kernel.lanes.pairs cimport (pair, sqrt2, l1_catch_up2, l1_step2, scalar_catch_up2, scalar_step2,
                               rda_weights2, dual_weights2)
from fastprox._kernel.lanes.lanes cimport lanes_t, lane_row_t


cdef inline double separable_step(Ctx* c, const value_t* data, const index_t* indices,
                                  const index_t* indptr, const double* y, const double* sw,
                                  long long r) noexcept nogil:
    """`step` for row r alone under a rule with one output and a separable penalty
    (`Params.plain_fobos`, `plain_adagrad`, `plain_normalized`, `plain_dual`): the most common steps, called
    by `fit_csr`'s loop directly (3-5% of an ijcnn1 pass was `step`'s dispatch).

    Mirrors `_step.step` with n_rows = 1 (its begin, intercept and end), the row
    itself computed by the kernel below."""
    cdef double total
    if c.params.update != FOBOS:
        set_weight_params(c)
    begin_step(c)
    if c.params.plain_fobos:
        total = plain_fobos_step(c, data, indices, indptr[r], indptr[r + 1], y[r], weight_at(sw, r))
    elif c.params.plain_adagrad:
        total = plain_adagrad_step(c, data, indices, indptr[r], indptr[r + 1], y[r], weight_at(sw, r))
    elif c.params.plain_normalized:
        total = plain_normalized_step(c, data, indices, indptr[r], indptr[r + 1], y[r], weight_at(sw, r))
    else:
        total = plain_dual_step(c, data, indices, indptr[r], indptr[r + 1], y[r], weight_at(sw, r))
    if c.cursor.nonfinite:
        return total
    apply_intercept(c, 0, c.arrays.intercept_grad[0],
                    c.arrays.sigma[0] if c.params.invariant else c.arrays.intercept_grad[0])
    c.cursor.t += 1
    end_step(c)
    return total


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


cdef inline double plain_fobos_step(Ctx* c, const value_t* data, const index_t* indices,
                            long long lo, long long hi, double y, double sw) noexcept nogil:
    """One row of the most common rule (one output, fobos with a scalar step and an
    l1/l2/elasticnet penalty). The l1 layout (Q stamp, w) has loops of its own.

    Mirrors `_step.step`'s single-row branch under this rule: `margins` (`_fobos.catch_up`
    -> `scalar_catch_up`, then `weight`), `_gradients.gradient`, `refused`,
    `_fobos.advance_cumulants`, `_step.apply` -> `_fobos.fobos_prox`, `_fobos.stamp`."""
    if c.layout.shrink_stamp_at < 0 and c.layout.threshold_stamp_at == 0 and c.layout.n_row_fields == 1:
        return fobos_l1_row(c, data, indices, lo, hi, y, sw)
    return fobos_row(c, data, indices, lo, hi, y, sw, c.layout.n_row_fields, c.layout.threshold_stamp_at)


cdef inline double fobos_l1_row(Ctx* c, const value_t* data, const index_t* indices,
                         long long lo, long long hi, double y, double sw) noexcept nogil:
    """`fobos_row` in the l1 layout (Q stamp, w), its non-zeros two at a time (e, f),
    each instruction of the catch-up and of the step for both (`_kernel/lanes/pairs.h`); the same
    operations in the same order, the same bits.

    Mirrors as `plain_fobos_step` says, with l1's P = 1 (no P stamp, no ratio)."""
    cdef double* state = c.arrays.state
    cdef long long width = c.layout.width, nz
    cdef double shrink_product = c.cursor.shrink_product, threshold_sum = c.cursor.threshold_sum
    cdef double eta, acc = c.arrays.intercepts[INTERCEPT_SUM], a, q, total
    cdef double x_max = intercept_feature(c)
    cdef double* e
    cdef double* f
    cdef bint two
    for nz in range(lo, hi, 2):
        two = entries(state, width, indices, nz, hi, &e, &f)
        acc = dot2(acc, l1_catch_up2(e, f, shrink_product, threshold_sum), data, nz, two)
        x_max = abs_max2(x_max, data, nz, two)
    c.arrays.scores[0] = acc
    next_eta(c)
    total = 0.0
    q = c.arrays.score_grads[0] = gradient(c, acc, y, sw, &total)
    if refused(c, q, x_max):
        return total
    advance_cumulants(c)
    threshold_sum, eta = c.cursor.threshold_sum, c.cursor.eta
    a = c.params.alpha_pen * eta
    for nz in range(lo, hi, 2):
        two = entries(state, width, indices, nz, hi, &e, &f)
        l1_step2(e, f, data[nz], data[nz + two], q, eta, a, threshold_sum)
    c.cursor.n_ops += 2 * (hi - lo)
    c.arrays.intercept_grad[0] = q
    return total


cdef inline double fobos_row(Ctx* c, const value_t* data, const index_t* indices,
                             long long lo, long long hi, double y, double sw,
                             int n_row_fields, int threshold_stamp_at) noexcept nogil:
    """`plain_fobos_step` for the layouts with a P stamp or none (l2, elasticnet, no
    penalty; `_kernel/lanes/pairs.h`'s scalar_catch_up2), as `fobos_l1_row`: the general path's
    arithmetic, operation for operation, two non-zeros at a time.

    Mirrors as `plain_fobos_step` says."""
    cdef double* state = c.arrays.state
    cdef long long width = c.layout.width, nz
    cdef double shrink_product = c.cursor.shrink_product, threshold_sum = c.cursor.threshold_sum
    cdef double l1_share = c.params.l1_share, a, eta, q, total
    cdef double acc = c.arrays.intercepts[INTERCEPT_SUM], x_max = intercept_feature(c)
    cdef double* e
    cdef double* f
    cdef bint two
    for nz in range(lo, hi, 2):
        two = entries(state, width, indices, nz, hi, &e, &f)
        acc = dot2(acc, scalar_catch_up2(e, f, n_row_fields, threshold_stamp_at, shrink_product,
                                         threshold_sum), data, nz, two)
        x_max = abs_max2(x_max, data, nz, two)
    c.arrays.scores[0] = acc
    next_eta(c)
    total = 0.0
    q = c.arrays.score_grads[0] = gradient(c, acc, y, sw, &total)
    if refused(c, q, x_max):
        return total
    advance_cumulants(c)
    shrink_product, threshold_sum, eta = c.cursor.shrink_product, c.cursor.threshold_sum, c.cursor.eta
    a = c.params.alpha_pen * eta
    for nz in range(lo, hi, 2):
        two = entries(state, width, indices, nz, hi, &e, &f)
        scalar_step2(e, f, n_row_fields, threshold_stamp_at, data[nz], data[nz + two], q, eta, a,
                     l1_share, shrink_product, threshold_sum)
    c.cursor.n_ops += 2 * (hi - lo)
    c.arrays.intercept_grad[0] = q
    return total


cdef inline double plain_adagrad_step(Ctx* c, const value_t* data, const index_t* indices,
                              long long lo, long long hi, double y, double sw) noexcept nogil:
    """One row of AdaGrad's composite mirror descent with one output, as
    `plain_fobos_step`: the general path's arithmetic with its constants in locals
    (under l1 or without a penalty: `adagrad_l1_row`), the step in lanes (`_kernel/lanes/lanes.h`).
    Row layout: t0, w, G, eta.

    Mirrors `_step.step`'s single-row branch under this rule: `margins` (`_fobos.catch_up`
    -> `_adagrad.adagrad_catch_up`), `_gradients.gradient`, `refused`, `_step.apply`
    -> `_adagrad.adagrad_step` then `_fobos.fobos_prox`, `_fobos.stamp` (ROW_LAST_STEP)."""
    cdef lane_row_t lanes
    cdef long long i
    cdef double t = <double>c.cursor.t, q, total
    cdef double acc = c.arrays.intercepts[INTERCEPT_SUM], x_max = intercept_feature(c)
    cdef double* row
    if c.params.l1_share == 1.0:             # l1, or no penalty (`Learner`: then l1_share is 1)
        return adagrad_l1_row(c, data, indices, lo, hi, y, sw)
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
    q = c.arrays.score_grads[0] = gradient(c, acc, y, sw, &total)
    if refused(c, q, x_max):
        return total
    lane_prefetch(c, indices)
    c.lanes.adagrad_step(&lanes, q, t, c.params.alpha_pen, c.params.l1_share, c.params.delta, c.params.eta0)
    c.cursor.n_ops += 2 * lanes.n
    c.arrays.intercept_grad[0] = q
    return total


cdef inline double adagrad_l1_row(Ctx* c, const value_t* data, const index_t* indices,
                           long long lo, long long hi, double y, double sw) noexcept nogil:
    """`plain_adagrad_step` under l1, its passes in lanes (`_kernel/lanes/lanes.h`: the catch-up and
    the margin, then the step, each instruction for every lane). The catch-up has no
    branch: a current feature (t0 = t) has threshold 0, which keeps it. Without a
    penalty (alpha 0) every threshold is 0: the general path's bits, without its
    per-feature branch and l2's division by 1.

    Mirrors as `plain_adagrad_step` says, with `adagrad_catch_up`'s l1 case
    (`soft_threshold(w, m a)`)."""
    cdef lane_row_t lanes = lane_entries(c, data, indices, lo, hi)
    cdef double t = <double>c.cursor.t, alpha = c.params.alpha_pen, q, total
    cdef double acc = c.arrays.intercepts[INTERCEPT_SUM], x_max = intercept_feature(c)
    acc = c.lanes.adagrad_margin(&lanes, t, alpha, acc, &x_max)
    c.arrays.scores[0] = acc
    total = 0.0
    q = c.arrays.score_grads[0] = gradient(c, acc, y, sw, &total)
    if refused(c, q, x_max):
        return total
    lane_prefetch(c, indices)
    c.lanes.adagrad_step(&lanes, q, t, alpha, 1.0, c.params.delta, c.params.eta0)
    c.cursor.n_ops += 2 * lanes.n
    c.arrays.intercept_grad[0] = q
    return total


cdef inline double plain_dual_step(Ctx* c, const value_t* data, const index_t* indices,
                            long long lo, long long hi, double y, double sw) noexcept nogil:
    """One row of rda or ftrl with one output and a separable penalty: `dual_row` for
    the rule's layout, its flags constants, so the loops test none of them.

    Mirrors `_step.step`'s single-row branch under rda or ftrl (see `dual_row`)."""
    if c.params.update == FTRL and c.layout.ftrl_roots:
        return dual_row(c, data, indices, lo, hi, y, sw, True, True, True)
    if c.params.update == FTRL:
        return dual_row(c, data, indices, lo, hi, y, sw, True, True, False)
    if c.params.schedule == ADAGRAD:
        return dual_row(c, data, indices, lo, hi, y, sw, False, True, False)
    return dual_row(c, data, indices, lo, hi, y, sw, False, False, False)


cdef inline double dual_row(Ctx* c, const value_t* data, const index_t* indices,
                            long long lo, long long hi, double y, double sw,
                            bint ftrl, bint adagrad, bint roots) noexcept nogil:
    """`plain_dual_step` for one layout, as `plain_fobos_step`: `weight`'s closed forms
    and `apply`'s sums, operation for operation, with the step's constants in locals.
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
    cdef double acc = intercept_value(c, 0), x_max = intercept_feature(c)
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
    q = c.arrays.score_grads[0] = gradient(c, acc, y, sw, &total)
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


cdef inline double plain_rows_step(Ctx* c, const value_t* data, const index_t* indices,
                            long long lo, long long hi, double y, double sw) noexcept nogil:
    """One row under l1_l2 or l1_linf over W's rows with fobos and a scalar step (the
    multiclass structured-sparsity case), as the general path computes it: each
    feature's row caught up in one prox with the threshold summed since its stamp,
    the K scores, the gradient step (its prox joins the next catch-up, see
    `groups_prox_step`). A row's features are distinct groups, each caught up once,
    so the per-step group marks of the general path are not needed.

    Mirrors `_step.margins` -> `_groups.group_catch_up` -> `block_catch_up` (l1_l2,
    l1_linf), `_gradients.gradients`, `refused` and `_step.apply`'s grouped fobos step:
    `step` calls it in place of those and runs `groups_prox_step` after it as after them."""
    cdef double* state = c.arrays.state
    cdef double* group_stamp = c.groups.stamp
    cdef double* p = c.arrays.scores
    cdef double* q = c.arrays.score_grads
    cdef long long width = c.layout.width, nz, j
    cdef int k, K = c.params.n_outputs
    cdef double threshold_sum = c.cursor.threshold_sum, eta = c.cursor.eta, a, x, total
    cdef bint linf = c.params.penalty == L1_LINF
    cdef double* row
    for k in range(K):
        p[k] = c.arrays.intercepts[INTERCEPT_FIELDS * k + INTERCEPT_SUM]
    for nz in range(lo, hi):
        j = indices[nz]
        row = state + j * width
        a = threshold_sum - group_stamp[j]
        if a > 0.0:
            if linf:
                prox_l1_linf(row, K, a, c.scratch.work)
            else:
                prox_l1_l2(row, K, a)
            group_stamp[j] = threshold_sum
        x = data[nz]
        for k in range(K):
            p[k] += row[k] * x
    total = gradients(c, y, sw)
    if refused(c, largest_q(c), row_abs_max(c, data, lo, hi)):
        return total
    for nz in range(lo, hi):
        row = state + indices[nz] * width
        x = data[nz]
        for k in range(K):
            row[k] -= eta * (q[k] * x)
    c.cursor.n_ops += 3 * (hi - lo) * K
    for k in range(K):
        c.arrays.intercept_grad[k] = q[k]
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
    in the step's slot, or here), padded with the dummy row; its values (in place where
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
        for i in range(row.n):
            rows[i] = state + indices[lo + i] * width
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


cdef inline double plain_normalized_step(Ctx* c, const value_t* data, const index_t* indices,
                                         long long lo, long long hi, double y, double sw) noexcept nogil:
    """One row under the normalized schedule with one output, gradient or invariant
    step: the general `step`'s `margins` (`normalized_catch_up`, `rescale`),
    `add_row_norm`, `invariant_sigmas` and `apply` (`normalized_apply`), the same
    arithmetic fused into three passes over the row (two with the gradient step), in
    lanes (`_kernel/lanes/lanes.h`, the rows' layout a constant in each pass); N_t's sum is taken in
    the first pass and kept only if the row is not refused. The invariant step's second
    pass stores G (and under l1 the step factor) as `apply` would, since only the
    weights wait for sigma; without a penalty the rows keep no factor, and the pass
    leaves them in the row's memo for the third (`lane_entries`). One output: each feature's entry
    is the row's first (`entry(c, row, 0)`).

    Mirrors `_normalized`: `normalized_catch_up`, `rescale`, `row_norm`,
    `normalized_accumulate` (`normalized_factor`), `normalized_apply`."""
    cdef const lanes_t* lanes = c.lanes
    cdef lane_row_t row = lane_entries(c, data, indices, lo, hi)
    cdef bint penalized = normalized_l1_rows(c)
    cdef double acc = c.arrays.intercepts[INTERCEPT_SUM], x_max = intercept_feature(c), norms = c.cursor.norm_sum
    cdef double alpha = c.params.alpha_pen, eta0 = c.params.eta0, threshold_sum = c.cursor.threshold_sum
    cdef double q, r, step_norm, sigma, total = 0.0
    acc = lanes.normalized_margin(&row, penalized, threshold_sum, alpha, acc, &norms, &x_max)
    c.arrays.scores[0] = acc
    q = c.arrays.score_grads[0] = gradient(c, acc, y, sw, &total)
    if refused(c, q, x_max):
        return total
    c.cursor.norm_sum = norms + intercept_feature(c)
    set_normalized_eta(c)
    r = c.cursor.eta
    threshold_sum = c.cursor.threshold_sum = threshold_sum + r
    sigma = q
    if c.params.invariant:
        step_norm = intercept_step_size(c, 0, q) if c.params.fit_intercept else 0.0
        step_norm = lanes.normalized_factors(&row, penalized, q, r, eta0, step_norm)
        if c.params.loss == LOG and sw == 1.0:      # e^-|y p| as `gradient` took it
            sigma = log_invariant_sigma(y * acc, y, step_norm, 1.0, c.cursor.exp_margin)
        else:
            sigma = invariant_sigma(c.params.loss, acc, y, step_norm, sw, c.params.epsilon)
        lane_prefetch(c, indices)
        lanes.normalized_step(&row, penalized, sigma, r, alpha, threshold_sum)
    else:
        lane_prefetch(c, indices)
        lanes.normalized_update(&row, penalized, q, r, eta0, alpha, threshold_sum)
    c.cursor.n_ops += 2 * row.n
    c.arrays.intercept_grad[0] = q
    c.arrays.sigma[0] = sigma
    return total
