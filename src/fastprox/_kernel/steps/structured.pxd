# The structured step (the contract's "Structured outputs"; Martins et al.'s online
# MKL, Alg. 1): one example per step, its gradient given by the caller's decoder.
#
# An example is n items, CSR rows of x with K scores each (a sequence's tokens, a
# tree's candidate arcs with K = 1). The caller scores the items at the current step
# (`emissions`) and reads the unpenalized entries (`unpenalized_current`), decodes,
# and gives back the gradient: per item, the score gradient q_i = mu_i - onehot(y_i)
# (`structured_step`: G[j, k] = sum_i x_ij q_ik), or G itself as sparse rows, a
# dense K-block per feature id (`structured_step_rows`: any decoder's
# Phi(x, y^) - Phi(x, y)); with it the intercepts' gradient (the items' q summed)
# and the m further unpenalized entries' (a sequence's transitions, starts and
# stops), all times the example's weight h. The step is then the general step's
# mini-batch branch (`_step.collect`, `apply_collected`) with that G in place of the
# batch's mean: the rule's update entry by entry over the touched features, its
# group prox, the unpenalized entries' update (`_intercept.unpenalized_update`),
# t += 1. Every rule of the table but the normalized schedule, under the gradient
# step (`_validation.check_structured`; a Learner built with loss=None has passed
# it). Cost O(nnz K + m) per example, plus the group prox's (squared_group:
# O(p log p)); features outside the example are caught up lazily, as always. The rows
# of rda and of fobos under AdaGrad with a separable penalty take loops of their own
# (`dual_adagrad_rows`, `adagrad_rows`: the same bits without the per-entry choice of
# rule; `Params.structured_rows` off, as `Learner._use_general_step` sets it, takes
# the general step's).
#
# C-level API, for a compiled caller (SequenceTagger.fit's loop) that holds a
# `fastprox._kernels.Learner` built with loss=None (cimport it: `_kernels.pxd`) and
# drives its context `c = &learner.c` (or a local copy of it, written back after the
# loop, as `_kernels.fit_csr` does):
#
#   structured_scratch(c, longest)       with the GIL, before the steps and after any
#                                        `grow`: the scratch they write, for items of
#                                        up to `longest` non-zeros
#   then per example, without the GIL:
#   emissions(c, data, indices, indptr, first, n, scores)
#                                        scores[i K + k] = p_ik of items first..first+n-1
#                                        at the current step (features caught up)
#   unpenalized_current(c, u)            the value of unpenalized entry u (0 <= u < m)
#   ... decode, fill q (n x K), u_grad (m) ...
#   structured_step(c, data, indices, indptr, first, n, q, u_grad, h)
#   or structured_step_rows(c, features, n_rows, G, b_grad, u_grad, h)
#   if c.cursor.nonfinite: break         the example was refused before its update (a
#                                        score not finite, or a gradient that could
#                                        overflow the state): with the GIL,
#                                        refuse_example(c, example) raises its ValueError
#                                        and clears the flags; the model is that of the
#                                        examples before it
#
# `emissions` leaves the items' features caught up for the step that follows over the
# same items (`structured_step`): if none follows (the scores were only read, or the
# step is taken as rows, `structured_step_rows`), `release_items` first leaves the
# state as a step finds it (Berhu's heap keeps the caught-up entries out of its
# schedule until their update). Reads that need no step (`feature_weights`, the
# Python `scores`) release what they catch up themselves.
from libc.float cimport DBL_MAX
from libc.math cimport fabs, sqrt, copysign
from fastprox._kernel.base.types cimport value_t, index_t, FOBOS, RDA, FTRL, ADAGRAD, BERHU
from fastprox._kernel.base.state cimport (Ctx, MEMO_FIELDS, ensure_scratch, entry, DUAL_SUM, DUAL_SQUARES,
                                          ROW_LAST_STEP, ADAGRAD_W, ADAGRAD_ETA)
from fastprox._kernel.rules.average cimport averaging, adagrad_skipped_sum, dual_skipped_sum
from fastprox._kernel.rules.adagrad cimport adagrad_after, l2_powers, l2_geometric_sum, L2_LANES
from fastprox._kernel.lanes.pairs cimport adagrad_outputs2
from fastprox._kernel.base.csr cimport FASTPROX_PREFETCH
from fastprox._kernel.rules.schedules cimport begin_step
from fastprox._kernel.rules.fobos cimport advance_cumulants, end_step, stamp
from fastprox._kernel.rules.dual cimport set_weight_params
from fastprox._kernel.groups.groups cimport groups_prox_step
from fastprox._kernel.rules.intercept cimport (unpenalized_at, unpenalized_memo, unpenalized_value, unpenalized_update,
                                  intercept_value, apply_intercept)
from fastprox._kernel.losses.gradients cimport GRADIENT_MAX, refused
from fastprox._kernel.steps.step cimport (margins, weight, catch_up_feature, touch, apply_collected,
                             apply, abandon_step, release, release_row)
from fastprox._kernels cimport chosen_lanes

cdef extern from *:
    """
    /* A step's batch scratch (gradient sums, marks), which `ensure_scratch` allocates for
       mini-batches: every structured example is one. */
    #define FASTPROX_STRUCTURED_BATCH 2
    /* The labels a row's averaged rda catch-up takes branch-free on the stack
       (`dual_averaged_catch_up`; more take it entry by entry). */
    #define FASTPROX_STRUCTURED_MAX_K 64
    """
    const int STRUCTURED_BATCH "FASTPROX_STRUCTURED_BATCH"
    const int STRUCTURED_MAX_K "FASTPROX_STRUCTURED_MAX_K"


cdef inline int structured_scratch(Ctx* c, long long longest) except -1:
    """Allocate what the structured steps write: the gradient sums and feature marks of a
    mini-batch, ftrl's memo for items of up to `longest` non-zeros; and take the passes in
    lanes `_kernels` chose (`Ctx.lanes`: the rows' loops over a feature's K entries). With
    the GIL, before the steps, and again after `Learner.grow` (which frees them)."""
    c.lanes = chosen_lanes()
    return ensure_scratch(c, longest, STRUCTURED_BATCH)


cdef inline void prepare(Ctx* c) noexcept nogil:
    """The current step's constants: the dual rules' weight formulas at T = t, the scalar
    schedules' eta_t (both functions of t: computing them again changes nothing)."""
    if c.params.update != FOBOS:
        set_weight_params(c)
    begin_step(c)


cdef inline void emissions(Ctx* c, const value_t* data, const index_t* indices, const index_t* indptr,
                           long long first, long long n_items, double* out) noexcept nogil:
    """out[i K + k] = p_ik = <W_t[:, k], x_i> + b_k, the scores of items first ..
    first + n_items - 1 (CSR rows) at the current step, their features caught up for the
    step's update (`_step.margins`; without a step, `release_items`). A score that is not
    finite (X's values, or their overflow) flags c.cursor.nonfinite: the step refuses."""
    cdef int k, K = c.params.n_outputs
    cdef long long i
    prepare(c)
    if n_items:
        prefetch_item(c, indices, indptr[first], indptr[first + 1])
    for i in range(n_items):
        if i + 1 < n_items:
            prefetch_item(c, indices, indptr[first + i + 1], indptr[first + i + 2])
        if dual_adagrad_rows(c):
            dual_adagrad_margins(c, data, indices, indptr[first + i], indptr[first + i + 1])
        elif adagrad_rows(c):
            adagrad_margins(c, data, indices, indptr[first + i], indptr[first + i + 1])
        else:
            margins(c, data, indices, indptr[first + i], indptr[first + i + 1])
        for k in range(K):
            out[i * K + k] = c.arrays.scores[k]
            c.cursor.nonfinite |= not fabs(c.arrays.scores[k]) <= DBL_MAX


cdef inline bint dual_adagrad_rows(Ctx* c) noexcept nogil:
    """Whether every weight is rda's closed form of its entry's (s, G) alone: rda with
    AdaGrad, a separable penalty (no groups), the averaged sums kept (l1 or none: the
    row's stamp A its one row field) or not (no row fields). The structured items'
    rows then take `dual_adagrad_margins` and `dual_adagrad_apply`, the general step's
    arithmetic without its per-entry choice of rule (the CRF's steps update all K
    entries of every feature they meet)."""
    return (c.params.structured_rows and c.params.update == RDA and c.params.schedule == ADAGRAD
            and not c.params.grouped and c.layout.n_row_fields == (1 if averaging(c) else 0))


cdef inline void dual_adagrad_margins(Ctx* c, const value_t* data, const index_t* indices, long long lo,
                                      long long hi) noexcept nogil:
    """`_step.margins` under `dual_adagrad_rows`: the same sums in the same order,
    w_jk = `dual_weight`(s_jk, (delta + sqrt(G_jk)) / eta0) (rda's entries are
    current: the only catch-up is the averaged sums', `dual_averaged_catch_up`), a
    feature's K entries in lanes (`Ctx.lanes`' `dual_margins`). With an emission
    support (`Ctx.support`) each feature's seen labels only, one at a time: the others'
    weights are 0."""
    cdef int k, K = c.params.n_outputs
    cdef long long nz, j, p, stride = c.layout.n_entry_fields
    cdef double x
    cdef double* scores = c.arrays.scores
    cdef double* row
    cdef const double* e
    cdef double delta = c.params.delta, inv_eta0 = c.params.inv_eta0, rho = c.params.rda_rho
    cdef double l1 = c.dual.l1_threshold, l2 = c.dual.l2_weight
    cdef bint summing = averaging(c)
    for k in range(K):
        scores[k] = intercept_value(c, k)
    for nz in range(lo, hi):
        j = indices[nz]
        row = c.arrays.state + j * c.layout.width
        if summing:
            dual_averaged_catch_up(c, row, j)
        e = entry(c, row, 0)
        x = data[nz]
        if c.support.ptr == NULL:
            c.lanes.dual_margins(e, stride, K, x, scores, delta, inv_eta0, rho, l1, l2)
            c.cursor.n_ops += K
            continue
        for p in range(c.support.ptr[j], c.support.ptr[j + 1]):
            k = c.support.labels[p]
            scores[k] += dual_adagrad_weight(e + k * stride, delta, inv_eta0, rho, l1, l2) * x
        c.cursor.n_ops += c.support.ptr[j + 1] - c.support.ptr[j]


cdef inline double dual_adagrad_weight(const double* f, double delta, double inv_eta0, double rho, double l1,
                                      double l2) noexcept nogil:
    """The weight of rda + AdaGrad's entry f (s, G): `dual_weight`(s, (delta +
    sqrt(G)) / eta0), branch-free (0 where the denominator is not positive); the
    seen entries' (`Ctx.support`). Every feature's K entries take `Ctx.lanes`'
    `dual_margins` and `dual_apply`, its operations in lanes."""
    cdef double beta = (delta + sqrt(f[DUAL_SQUARES])) * inv_eta0
    cdef double den = beta + l2
    cdef double m = fabs(-f[DUAL_SUM]) - (l1 + beta * rho)
    cdef double w = copysign(0.0 if 0.0 > m else m, -f[DUAL_SUM]) / den
    return w if den > 0.0 else 0.0


cdef inline void dual_adagrad_apply(Ctx* c, long long n_touched) noexcept nogil:
    """`_step.apply_collected` (divisor 1) under `dual_adagrad_rows`: s += g, G += g^2
    per entry (the support's entries, `Ctx.support`, where it is set), the sums left
    at 0; averaging, then `_average.add_dual_iterate`'s (the new weights into S where
    the step is averaged, the row's stamp A the step t + 1). A feature's K entries in
    lanes (`Ctx.lanes`' `dual_apply`), the seen entries one at a time."""
    cdef int K = c.params.n_outputs
    cdef long long i, j, n, stride = c.layout.n_entry_fields, S = c.layout.avg_sum_at
    cdef double T = c.cursor.t + 1, threshold = T * c.params.alpha_pen * c.params.l1_share
    cdef double delta = c.params.delta, inv_eta0 = c.params.inv_eta0, rho = c.params.rda_rho
    cdef bint summing = averaging(c), adding = summing and c.cursor.t + 1 >= c.params.average_from
    cdef double* row
    cdef double* e
    cdef double* sums
    cdef const int* ks
    for i in range(n_touched):
        j = c.scratch.touched_features[i]
        row = c.arrays.state + j * c.layout.width
        e = entry(c, row, 0)
        sums = c.scratch.batch_grads + j * K
        ks, n = support_of(c, j)
        if ks == NULL:
            c.lanes.dual_apply(e, stride, K, sums, S if adding else -1, delta, inv_eta0, rho, threshold)
        else:
            seen_apply(e, stride, ks, n, sums, S if adding else -1, delta, inv_eta0, rho, threshold)
        if summing:
            row[c.layout.avg_stamp_at] = T
    c.cursor.n_ops += n_touched * K


cdef inline void seen_apply(double* e, long long stride, const int* ks, long long n, double* sums, long long S,
                            double delta, double inv_eta0, double rho, double threshold) noexcept nogil:
    """`dual_adagrad_apply` of a feature's seen entries ks[0 .. n) (`Ctx.support`): the
    operations of `Ctx.lanes`' `dual_apply` one entry at a time (S < 0: not averaged)."""
    cdef long long p, k
    cdef double g
    for p in range(n):
        k = ks[p]
        g = sums[k]
        e[k * stride + DUAL_SUM] += g
        e[k * stride + DUAL_SQUARES] += g * g
        sums[k] = 0.0
        if S >= 0:          # `dual_at`(s, beta, T): `dual_adagrad_weight` with no l2 weight
            e[k * stride + S] += dual_adagrad_weight(e + k * stride, delta, inv_eta0, rho, threshold, 0.0)


cdef inline void dual_averaged_catch_up(Ctx* c, double* row, long long j) noexcept nogil:
    """`_average.dual_catch_up` under `dual_adagrad_rows` (the support's entries only,
    `Ctx.support`, where it is set: the others' weights and sums stay 0): the skipped
    iterates into S (`dual_skipped_sum`), the row's stamp A the current step. Under l1
    (alpha > 0) `dual_skipped_sum`'s two common cases, in lanes (`Ctx.lanes`'
    `dual_skipped`: `dual_skipped_sum`'s arithmetic in its order, over the steps lo ..
    t): the weight 0 at the first skipped step (so at every one: nothing to add) or not
    0 at the last (the arithmetic series), added to S there; where an entry's weight
    reaches 0 between them (NaN in `terms`) it takes `dual_skipped_sum` itself, and the
    row's terms are added here."""
    cdef long long p, n, lo = max(<long long>row[c.layout.avg_stamp_at] + 1, c.params.average_from)
    cdef long long stride = c.layout.n_entry_fields, S = c.layout.avg_sum_at
    cdef const int* ks
    cdef double* e
    cdef double terms[STRUCTURED_MAX_K]
    cdef double cnt = c.cursor.t - lo + 1, alpha = c.params.alpha_pen, share = c.params.l1_share
    if row[c.layout.avg_stamp_at] >= c.cursor.t:
        return
    ks, n = support_of(c, j)
    if lo <= c.cursor.t and c.params.alpha_pen > 0.0 and ks == NULL and n <= STRUCTURED_MAX_K:
        e = entry(c, row, 0)
        if c.lanes.dual_skipped(e, stride, n, c.params.delta, c.params.inv_eta0, c.params.rda_rho,
                                alpha, <double>lo * alpha * share, <double>c.cursor.t * alpha * share, cnt,
                                <double>(lo + c.cursor.t) * cnt / 2.0, S, terms):
            for p in range(n):                  # (the terms not added)
                if terms[p] != terms[p]:        # NaN: the weight reaches 0 in the range
                    terms[p] = dual_skipped_sum(c, row, p)
            for p in range(n):
                e[p * stride + S] += terms[p]
    else:
        for p in range(n):
            entry(c, row, p if ks == NULL else ks[p])[S] += dual_skipped_sum(c, row, p if ks == NULL else ks[p])
    row[c.layout.avg_stamp_at] = c.cursor.t


cdef inline (const int*, long long) support_of(Ctx* c, long long j) noexcept nogil:
    """Feature j's entries that learn: (its seen labels, their number) under an emission
    support (`Ctx.support`), else (NULL, K): every label, entry p being label p."""
    if c.support.ptr == NULL:
        return NULL, c.params.n_outputs
    return c.support.labels + c.support.ptr[j], c.support.ptr[j + 1] - c.support.ptr[j]


cdef inline bint adagrad_rows(Ctx* c) noexcept nogil:
    """Whether every entry is fobos's under AdaGrad with a separable penalty (l1, l2,
    elastic net, none; no groups, no Berhu), the averaged sums kept or not. The
    structured items' rows then take `adagrad_margins` and `adagrad_apply`, the general
    step's arithmetic without its per-entry choice of rule."""
    return (c.params.structured_rows and c.params.update == FOBOS and c.params.schedule == ADAGRAD
            and not c.params.grouped and c.params.penalty != BERHU)


cdef inline void adagrad_margins(Ctx* c, const value_t* data, const index_t* indices, long long lo,
                                 long long hi) noexcept nogil:
    """`_step.margins` under `adagrad_rows`: each feature caught up as `_fobos.catch_up`
    does it (the skipped averaged iterates into S, `adagrad_skipped_sum`, once the
    averaged steps have begun: before, each adds 0; then the weights after the skipped
    proxes, `adagrad_after`; the row's step t), then the same sums in the same order.
    Under l2 the K entries' shrinks are `l2_powers`' (`adagrad_l2_catch_up`). With an
    emission support (`Ctx.support`) only a feature's seen labels are caught up and
    summed: the others' weights are 0."""
    cdef int k, K = c.params.n_outputs
    cdef long long nz, j, p, n, stride = c.layout.n_entry_fields
    cdef long long S = c.layout.avg_sum_at, t = c.cursor.t
    cdef bint summing = averaging(c) and t >= c.params.average_from
    cdef bint l2 = c.params.l1_share == 0.0 and c.params.alpha_pen > 0.0
    cdef double x, skipped
    cdef double* scores = c.arrays.scores
    cdef double* row
    cdef double* e
    cdef const int* ks
    for k in range(K):
        scores[k] = intercept_value(c, k)
    for nz in range(lo, hi):
        j = indices[nz]
        row = c.arrays.state + j * c.layout.width
        e = entry(c, row, 0)
        ks, n = support_of(c, j)
        if row[ROW_LAST_STEP] < t:
            skipped = t - row[ROW_LAST_STEP]
            if l2:
                adagrad_l2_catch_up(c, row, e, ks, n, skipped, summing)
            else:
                for p in range(n):
                    k = p if ks == NULL else ks[p]
                    if summing:
                        e[k * stride + S] += adagrad_skipped_sum(c, row, k)
                    e[k * stride + ADAGRAD_W] = adagrad_after(c, e[k * stride + ADAGRAD_W],
                                                              e[k * stride + ADAGRAD_ETA], skipped)
            row[ROW_LAST_STEP] = t
        x = data[nz]
        if ks == NULL:
            for k in range(K):
                scores[k] += e[k * stride + ADAGRAD_W] * x
        else:
            for p in range(n):
                scores[ks[p]] += e[ks[p] * stride + ADAGRAD_W] * x
        c.cursor.n_ops += n


cdef inline void adagrad_l2_catch_up(Ctx* c, double* row, double* e, const int* ks, long long n_entries,
                                     double skipped, bint summing) noexcept nogil:
    """`adagrad_margins`' catch-up of a row `skipped` steps behind under l2 (alpha > 0),
    of its entries ks[0 .. n_entries) (ks NULL: 0 .. n_entries):
    `adagrad_after`'s w r^m and the averaged sums' `adagrad_skipped_sum`, from
    `l2_powers` of L2_LANES entries at a time: their bits. Where the averaged sums take
    all the skipped iterates (the row's last step at or after the first averaged one)
    that sum is w (1 - r^m) / a, from the same powering; where they take only the last
    cnt = t - average_from + 1 (the row's first catch-up after the averaging began,
    most rows' in an average over the last pass), w (1 - r^cnt) / a r^(m - cnt), from
    two more (`adagrad_skipped_sum`'s, K entries at a time rather than one)."""
    cdef int k, k0 = 0, n, lanes = L2_LANES
    cdef long long stride = c.layout.n_entry_fields, S = c.layout.avg_sum_at
    cdef bint whole = summing and c.params.average_from <= row[ROW_LAST_STEP] + 1
    cdef bint partial = summing and not whole
    cdef double cnt = c.cursor.t - c.params.average_from + 1, before = skipped - cnt
    cdef double a[L2_LANES]
    cdef double kept[L2_LANES]
    cdef double lost[L2_LANES]
    cdef double kept_cnt[L2_LANES]
    cdef double lost_cnt[L2_LANES]
    cdef double kept_before[L2_LANES]
    cdef double lost_before[L2_LANES]
    cdef double* f[L2_LANES]
    while k0 < n_entries:
        n = lanes if n_entries - k0 > lanes else n_entries - k0
        for k in range(n):
            f[k] = e + (k0 + k if ks == NULL else ks[k0 + k]) * stride
            a[k] = c.params.alpha_pen * f[k][ADAGRAD_ETA]
        l2_powers(a, skipped, kept, lost, n)
        if partial:
            l2_powers(a, cnt, kept_cnt, lost_cnt, n)
            l2_powers(a, before, kept_before, lost_before, n)
        for k in range(n):
            if whole:
                f[k][S] += f[k][ADAGRAD_W] * l2_geometric_sum(lost[k], a[k], skipped)
            elif partial:
                f[k][S] += (0.0 if f[k][ADAGRAD_W] == 0.0 else f[k][ADAGRAD_W]
                            * (l2_geometric_sum(lost_cnt[k], a[k], cnt) * kept_before[k]))
            f[k][ADAGRAD_W] = f[k][ADAGRAD_W] * kept[k]
        k0 += lanes


cdef inline void adagrad_apply(Ctx* c, long long n_touched) noexcept nogil:
    """`_step.apply_collected` (divisor 1) under `adagrad_rows`: per touched feature its
    entries' AdaGrad step and prox two outputs at a time (`_lanes.pairs`'
    `adagrad_outputs2`, as a single row's outputs take them; an odd K's last by
    `_step.apply`), the sums left at 0, then `_fobos.stamp` (the new iterates into S
    where the step is averaged; the row's step t + 1). With an emission support
    (`Ctx.support`) the seen entries only, paired in their order."""
    cdef int k, k2, K = c.params.n_outputs
    cdef long long i, j, p, n
    cdef double* row
    cdef double* sums
    cdef const int* ks
    for i in range(n_touched):
        j = c.scratch.touched_features[i]
        row = c.arrays.state + j * c.layout.width
        sums = c.scratch.batch_grads + j * K
        ks, n = support_of(c, j)
        for p in range(0, n - 1, 2):
            k = p if ks == NULL else ks[p]
            k2 = p + 1 if ks == NULL else ks[p + 1]
            adagrad_outputs2(entry(c, row, k), entry(c, row, k2), sums[k], sums[k2], sums[k], sums[k2],
                             c.params.alpha_pen, c.params.l1_share, c.params.delta, c.params.eta0)
        if n % 2:
            k = n - 1 if ks == NULL else ks[n - 1]
            apply(c, row, k, sums[k], sums[k])
        for p in range(n):
            sums[p if ks == NULL else ks[p]] = 0.0
        stamp(c, row)
    c.cursor.n_ops += n_touched * K


cdef inline void prefetch_item(Ctx* c, const index_t* indices, long long lo, long long hi) noexcept nogil:
    """Ask for what the next item's features need while this one is scored: their state
    rows (read by the margins, written by the step), gradient sums and marks (`collect`).
    A structured item has K entries a feature, rows of several cache lines each, all
    asked for: without it each feature's rows are missed in turn (the margins' and the
    sums' loads wait behind the previous feature's work)."""
    cdef long long nz, j, K = c.params.n_outputs
    for nz in range(lo, hi):
        j = indices[nz]
        prefetch_span(c.arrays.state + j * c.layout.width, c.layout.width)
        if c.scratch.batch_grads != NULL:
            prefetch_span(c.scratch.batch_grads + j * K, K)
            FASTPROX_PREFETCH(c.scratch.feature_mark + j)


cdef inline void prefetch_span(const double* p, long long size) noexcept nogil:
    """Ask for the cache lines of p[0 .. size), to be written."""
    cdef long long i
    for i in range(0, size, 8):
        FASTPROX_PREFETCH(p + i)
    FASTPROX_PREFETCH(p + size - 1)


cdef inline void release_items(Ctx* c, const index_t* indices, const index_t* indptr, long long first,
                               long long n_items) noexcept nogil:
    """Leave the state as a step finds it after `emissions` of these items without their
    step (`_step.release`: Berhu's heap takes back their entries; nothing else to do)."""
    cdef long long i
    for i in range(n_items):
        release_row(c, indices, indptr[first + i], indptr[first + i + 1])


cdef inline void feature_weights(Ctx* c, long long j, double* out) noexcept nogil:
    """out[k] = w_{t,jk}, feature j's K weights at the current step, read as the step's
    margins read them (caught up, then released: the state as a step finds it)."""
    cdef int k
    cdef double* row = c.arrays.state + j * c.layout.width
    prepare(c)
    catch_up_feature(c, row, j)
    for k in range(c.params.n_outputs):
        out[k] = weight(c, row, k)
    release(c, row)


cdef inline double unpenalized_current(Ctx* c, long long u) noexcept nogil:
    """The value at the current step of unpenalized entry u (0 <= u < m), leaving the
    state and the memos as they are."""
    cdef double memo[MEMO_FIELDS]
    return unpenalized_value(c, unpenalized_at(c, c.params.n_outputs + u), memo)


cdef inline void structured_step(Ctx* c, const value_t* data, const index_t* indices, const index_t* indptr,
                                 long long first, long long n_items, const double* q, const double* u_grad,
                                 double h) noexcept nogil:
    """The step of one example of weight h whose items are CSR rows first ..
    first + n_items - 1, given each item's score gradient q[i K:(i + 1) K] (mu_i -
    onehot(y_i)) and the m unpenalized entries' gradient u_grad: W's gradient is
    h sum_i x_i q_i^T over the union of the items' supports, the intercepts'
    h sum_i q_i. The items' features are caught up here if `emissions` has not."""
    cdef int k, K = c.params.n_outputs
    cdef long long i, n_touched = 0
    prepare(c)
    for k in range(K):
        c.arrays.intercept_grad[k] = 0.0
    for i in range(n_items):
        if seen_rows(c):
            n_touched = collect_seen(c, data, indices, indptr[first + i], indptr[first + i + 1], q + i * K,
                                     n_touched)
        else:
            n_touched = collect_items(c, data, indices, indptr[first + i], indptr[first + i + 1], q + i * K,
                                      n_touched)
        for k in range(K):
            c.arrays.intercept_grad[k] += q[i * K + k]
    c.cursor.n_ops += (indptr[first + n_items] - indptr[first]) * K
    finish_step(c, n_touched, u_grad, h)


cdef inline long long collect_items(Ctx* c, const value_t* data, const index_t* indices, long long lo,
                                    long long hi, const double* q, long long n_touched) noexcept nogil:
    """`_step.collect` (each feature caught up as the step meets it) with a feature's K
    sums in lanes (`Ctx.lanes`' `add_products`: sums[k] += q[k] x, the same sums)."""
    cdef long long nz, j
    for nz in range(lo, hi):
        j = indices[nz]
        n_touched = touch(c, j, n_touched, True)
        c.lanes.add_products(c.scratch.batch_grads + j * c.params.n_outputs, q, data[nz], c.params.n_outputs)
    return n_touched


cdef inline bint seen_rows(Ctx* c) noexcept nogil:
    """Whether an emission support is set (`Ctx.support`: SequenceTagger's
    label_features="seen") and the rows take loops of their own (`dual_adagrad_rows`,
    `adagrad_rows`), which then visit the seen entries only. Under the general step
    the support masks the gradient sums instead (`finish_step`): the same model."""
    return c.support.ptr != NULL and (dual_adagrad_rows(c) or adagrad_rows(c))


cdef inline long long collect_seen(Ctx* c, const value_t* data, const index_t* indices, long long lo,
                                   long long hi, const double* q, long long n_touched) noexcept nogil:
    """`_step.collect` (features caught up by the margins) under `seen_rows`: the
    gradient x q^T on each feature's seen labels only."""
    cdef long long nz, j, p
    cdef double x
    cdef double* sums
    for nz in range(lo, hi):
        j = indices[nz]
        n_touched = touch(c, j, n_touched, True)
        x = data[nz]
        sums = c.scratch.batch_grads + j * c.params.n_outputs
        for p in range(c.support.ptr[j], c.support.ptr[j + 1]):
            sums[c.support.labels[p]] += q[c.support.labels[p]] * x
    return n_touched


cdef inline bint seen_gradient(Ctx* c, long long j, double h) noexcept nogil:
    """`finish_step`'s scaling of feature j's gradient sums by h under an emission
    support: the seen entries' (the others are left 0: under `seen_rows` never
    written, under the general step set to 0, so that they stay 0 under every rule);
    returns whether one of them is `too_steep`."""
    cdef int k, K = c.params.n_outputs
    cdef long long p = c.support.ptr[j], end = c.support.ptr[j + 1]
    cdef double g
    cdef double* sums = c.scratch.batch_grads + j * K
    cdef bint steep = False
    if seen_rows(c):
        for p in range(c.support.ptr[j], end):
            g = h * sums[c.support.labels[p]]
            sums[c.support.labels[p]] = g
            steep |= too_steep(g)
        return steep
    for k in range(K):
        if p < end and c.support.labels[p] == k:
            g = h * sums[k]
            sums[k] = g
            steep |= too_steep(g)
            p += 1
        else:
            sums[k] = 0.0
    return steep


cdef inline void structured_step_rows(Ctx* c, const long long* features, long long n_rows, const double* G,
                                      const double* b_grad, const double* u_grad, double h) noexcept nogil:
    """The step of one example of weight h given its gradient as sparse rows: W's is
    h G[r K:(r + 1) K] on feature features[r] (a feature listed twice: the sum of its
    rows), the intercepts' h b_grad (K values; ignored without fit_intercept), the m
    unpenalized entries' h u_grad. The features are caught up here."""
    cdef int k, K = c.params.n_outputs
    cdef long long r, j, n_touched = 0
    prepare(c)
    for r in range(n_rows):
        j = features[r]
        n_touched = touch(c, j, n_touched, True)
        for k in range(K):
            c.scratch.batch_grads[j * K + k] += G[r * K + k]
    for k in range(K):
        c.arrays.intercept_grad[k] = b_grad[k]
    c.cursor.n_ops += n_rows * K
    finish_step(c, n_touched, u_grad, h)


cdef inline void finish_step(Ctx* c, long long n_touched, const double* u_grad, double h) noexcept nogil:
    """The update of a structured step whose gradient sums are collected (W's in
    c.scratch.batch_grads over the touched features, the intercepts' in
    c.arrays.intercept_grad), all times h (a feature's K sums in lanes: `Ctx.lanes`'
    `scale_sums`); or, if a score was not finite or a gradient would reach GRADIENT_MAX,
    nothing (`refused`: the caller raises)."""
    cdef int k, K = c.params.n_outputs
    cdef long long i, j, u
    cdef double g
    cdef bint steep = False
    cdef double* b
    cdef double* memo
    for i in range(n_touched):
        j = c.scratch.touched_features[i]
        if c.support.ptr != NULL:
            steep |= seen_gradient(c, j, h)
            continue
        steep |= c.lanes.scale_sums(c.scratch.batch_grads + j * K, K, h, GRADIENT_MAX)   # `too_steep`'s test
    for k in range(K):
        c.arrays.intercept_grad[k] *= h
        if c.params.fit_intercept:
            steep |= too_steep(c.arrays.intercept_grad[k])
    for u in range(c.params.n_unpenalized):
        steep |= too_steep(h * u_grad[u])
    if refused(c, GRADIENT_MAX if steep else 0.0, 1.0):
        abandon_step(c, n_touched)
        return
    advance_cumulants(c)
    if dual_adagrad_rows(c):
        dual_adagrad_apply(c, n_touched)
    elif adagrad_rows(c):
        adagrad_apply(c, n_touched)
    else:
        apply_collected(c, n_touched, 1.0)
    if c.params.grouped and c.params.update == FOBOS:
        groups_prox_step(c)
    for k in range(K):
        if c.params.update == FTRL:
            intercept_value(c, k)           # ftrl's memo of b_k and sqrt(n_b), for its update
        apply_intercept(c, k, c.arrays.intercept_grad[k], c.arrays.intercept_grad[k])
    for u in range(c.params.n_unpenalized):
        g = h * u_grad[u]
        if g != 0.0:                        # (a zero gradient leaves every rule's entry as it is)
            b, memo = unpenalized_at(c, K + u), unpenalized_memo(c, K + u)
            if c.params.update == FTRL:
                unpenalized_value(c, b, memo)
            unpenalized_update(c, b, memo, g, g)
    c.cursor.n_ops += c.params.n_unpenalized
    c.cursor.t += 1
    end_step(c)


cdef inline bint too_steep(double g) noexcept nogil:
    """Whether a gradient of `finish_step` is not finite or reaches GRADIENT_MAX: then
    `refused` stops the step (the only test its bound takes, so that the check is a
    flag, not a running maximum)."""
    return not fabs(g) < GRADIENT_MAX


cdef inline int refuse_example(Ctx* c, object example) except -1:
    """With the GIL, after a step that stopped (c.cursor.nonfinite): clear the flags and
    raise the ValueError that names `example` and the cause; the model is that of the
    examples before it."""
    cdef bint steep = c.cursor.steep
    c.cursor.nonfinite = c.cursor.steep = False
    cause = ("its gradient (the scores' gradients times the items' values, times its weight) "
             "reached 2^480, past which the steps' sums of squares could overflow" if steep else
             "a score is NaN or infinite (the items' values are, or overflowed)")
    raise ValueError(f"example {example}: {cause}; scale the values (or lower eta0, or the "
                     "gradients) and step again. The model is the one before this example.")
