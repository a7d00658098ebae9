# The general step: any rule, any number of outputs, batches; the fast row kernels
# (`_rows`) serve the common single rows.
from libc.math cimport sqrt
from fastprox._kernel.base.types cimport value_t, index_t, FOBOS, RDA, FTRL, ADAGRAD, NORMALIZED, BERHU
from fastprox._kernel.rules.prox cimport soft_threshold
from fastprox._kernel.base.state cimport (Ctx, entry, index, FOBOS_W, ADAGRAD_W, ADAGRAD_G, RDA_S, RDA_G, DUAL_SUM,
                              DUAL_SQUARES, MEMO_FIELDS)
from fastprox._kernel.rules.schedules cimport begin_step
from fastprox._kernel.rules.berhu cimport heap_current, heap_schedule, BERHU_W, BERHU_PHASE, BERHU_FRESH
from fastprox._kernel.rules.adagrad cimport adagrad_catch_up, adagrad_step, adagrad_eta, adagrad_apply_outputs
from fastprox._kernel.rules.fobos cimport (advance_cumulants, end_step, catch_up, scalar_catch_up, stamp,
                              fobos_prox, apply_berhu)
from fastprox._kernel.rules.dual cimport set_weight_params, dual_weight, ftrl_weight, ftrl_update
from fastprox._kernel.groups.groups cimport (group_of, group_catch_up, groups_prox_step, rda_group_weights,
                               rda_grouped_weight)
from fastprox._kernel.rules.intercept cimport (intercept_value, intercept_step, intercept_term, intercept_norm,
                                  intercept_norm_step)
from fastprox._kernel.rules.normalized cimport (rescale, row_norm, scale_of, set_normalized_eta, normalized_current,
                                   normalized_apply, normalized_apply_factor, normalized_new_factors,
                                   normalized_apply_outputs, normalized_apply_known_outputs)
from fastprox._kernel.losses.invariant cimport invariant_sigma, log_invariant_sigma
from fastprox._kernel.losses.losses cimport LOG
from fastprox._kernel.losses.gradients cimport gradients, refused, row_abs_max, largest_q
from fastprox._kernel.steps.group_rows cimport plain_rows_step
from fastprox._kernel.base.csr cimport row_at, weight_at
from fastprox._kernel.rules.average cimport average_current
from fastprox._kernel.lanes.lanes cimport sum4_t, sum4_start, sum4_add, sum4_total

cdef extern from "_kernel/out_of_line.h":
    pass                          # the functions marked FASTPROX_OUT_OF_LINE or _IN_LINE below


cdef inline double step(Ctx* c, const value_t* data, const index_t* indices, const index_t* indptr,
                  const double* y, const double* sw, const long long* rows, long long first,
                  int n_rows) noexcept nogil:
    """One step over the n_rows rows visited from position `first` on (`row_at`);
    returns their weighted progressive loss (the log loss's logarithms deferred)."""
    cdef int K = c.params.n_outputs
    cdef int i, k
    cdef long long r, nz, n_touched = 0
    cdef bint paired
    cdef double x, total = 0.0
    cdef double* row
    if c.params.update != FOBOS:
        set_weight_params(c)
    begin_step(c)
    if n_rows == 1 and c.params.plain_rows:
        r = row_at(rows, first)
        total = plain_rows_step(c, data, indices, indptr[r], indptr[r + 1], y[r], weight_at(sw, r))
        if c.cursor.nonfinite:
            return total
    elif n_rows == 1:
        r = row_at(rows, first)
        margins(c, data, indices, indptr[r], indptr[r + 1])
        if c.scratch.predictions != NULL and not predict_row(c, data, indices, r, indptr[r], indptr[r + 1]):
            release_row(c, indices, indptr[r], indptr[r + 1])
            abandon_step(c, 0)
            return total
        total = gradients(c, y[r], weight_at(sw, r))
        if refused(c, largest_q(c), row_abs_max(c, data, indptr[r], indptr[r + 1])):
            release_row(c, indices, indptr[r], indptr[r + 1])
            abandon_step(c, 0)
            return total
        if c.params.schedule == NORMALIZED:
            add_row_norm(c, data, indices, indptr[r], indptr[r + 1])
        advance_cumulants(c)
        for k in range(K):
            c.arrays.sigma[k] = c.arrays.score_grads[k]
        if c.params.invariant:
            invariant_sigmas(c, data, indices, indptr[r], indptr[r + 1], y[r], weight_at(sw, r))
        paired = paired_outputs(c)
        for nz in range(indptr[r], indptr[r + 1]):
            row = c.arrays.state + indices[nz] * c.layout.width
            x = data[nz]
            if paired and c.params.schedule == ADAGRAD:
                adagrad_apply_outputs(c, row, x)
            elif paired and c.params.invariant:
                normalized_apply_known_outputs(c, row, x, c.scratch.factor_memo + (nz - indptr[r]) * K)
            elif paired:
                normalized_apply_outputs(c, row, x)
            for k in range(K - K % 2 if paired else 0, K):
                if c.params.update == FTRL:
                    ftrl_update(c, entry(c, row, k), c.arrays.score_grads[k] * x,
                                c.scratch.ftrl_memo + MEMO_FIELDS * ((nz - indptr[r]) * K + k))
                elif c.params.invariant and c.params.schedule == NORMALIZED:
                    normalized_apply_factor(c, row, k, c.arrays.score_grads[k] * x, c.arrays.sigma[k] * x,
                                            c.scratch.factor_memo[(nz - indptr[r]) * K + k])
                else:
                    apply(c, row, k, c.arrays.score_grads[k] * x, c.arrays.sigma[k] * x)
            stamp(c, row)
        c.cursor.n_ops += (indptr[r + 1] - indptr[r]) * K
        for k in range(K):
            c.arrays.intercept_grad[k] = c.arrays.score_grads[k]
    else:
        for k in range(K):
            c.arrays.intercept_grad[k] = 0.0
        for i in range(n_rows):
            r = row_at(rows, first + i)
            margins(c, data, indices, indptr[r], indptr[r + 1])
            if c.scratch.predictions != NULL and not predict_row(c, data, indices, r, indptr[r], indptr[r + 1]):
                release_row(c, indices, indptr[r], indptr[r + 1])
                abandon_step(c, n_touched)
                return total
            total += gradients(c, y[r], weight_at(sw, r))
            if refused(c, largest_q(c), row_abs_max(c, data, indptr[r], indptr[r + 1])):
                release_row(c, indices, indptr[r], indptr[r + 1])
                abandon_step(c, n_touched)
                return total
            for k in range(K):
                c.arrays.intercept_grad[k] += c.arrays.score_grads[k]
            n_touched = collect(c, data, indices, indptr[r], indptr[r + 1], c.arrays.score_grads, n_touched,
                                False)
        advance_cumulants(c)
        apply_collected(c, n_touched, n_rows)
    if c.params.grouped and c.params.update == FOBOS:
        groups_prox_step(c)
    for k in range(K):
        if n_rows == 1:
            intercept_step(c, k, c.arrays.intercept_grad[k],
                           c.arrays.sigma[k] if c.params.invariant else c.arrays.intercept_grad[k])
        else:
            intercept_step(c, k, c.arrays.intercept_grad[k] / n_rows, c.arrays.intercept_grad[k] / n_rows)
    c.cursor.t += 1
    end_step(c)
    return total


cdef inline void margins(Ctx* c, const value_t* data, const index_t* indices,
                   long long lo, long long hi) noexcept nogil:
    """p_k = <w_k, x> + b_k at the current step, catching up the row's features.
    One output accumulates in a register: through c.arrays.scores, every store into the
    state would force a reload of the sum; under the normalized schedule in four
    partial sums (`_kernel/lanes/lanes.h`'s `fastprox_sum4`), as its row kernel's lanes."""
    cdef int k, K = c.params.n_outputs
    cdef long long nz
    cdef double x, acc = intercept_term(c, intercept_value(c, 0))
    cdef bint quarters = K == 1 and c.params.schedule == NORMALIZED
    cdef sum4_t margin = sum4_start(acc)
    cdef double* row
    for k in range(K):
        c.arrays.scores[k] = intercept_term(c, intercept_value(c, k))
    for nz in range(lo, hi):
        row = c.arrays.state + indices[nz] * c.layout.width
        if not c.params.grouped:
            catch_up(c, row)
            if c.params.schedule == NORMALIZED:
                rescale(c, row, data[nz])
        else:
            catch_up_group_of(c, indices[nz])
        x = data[nz]
        if quarters:
            sum4_add(&margin, nz - lo, step_weight(c, row, 0, nz - lo) * x)
        elif K == 1:
            acc += step_weight(c, row, 0, (nz - lo) * K) * x
        else:
            for k in range(K):
                c.arrays.scores[k] += step_weight(c, row, k, (nz - lo) * K + k) * x
    if K == 1:
        c.arrays.scores[0] = sum4_total(&margin) if quarters else acc
    c.cursor.n_ops += (hi - lo) * K


# FASTPROX_OUT_OF_LINE
cdef inline bint predict_row(Ctx* c, const value_t* data, const index_t* indices, long long r, long long lo,
                             long long hi) noexcept nogil:
    """Row r's margins before the step into c.scratch.predictions[r K:], read from the
    weights `margins` has just caught up and summed as `Learner.row_margins` sums them
    (from 0, the intercept's term last; `weight` of a caught-up feature is what
    `current` computes): -p's scores with the row's catch-up done once, by the step
    (`_kernels.steps_predict` says for which rules). A score that is not finite
    refuses the step (c.cursor.nonfinite, c.scratch.unpredictable = r + 1); whether all
    K are finite."""
    cdef int k, K = c.params.n_outputs
    cdef long long nz
    cdef double x
    cdef double* row
    cdef double* out = c.scratch.predictions + r * K
    cdef bint finite = True
    for k in range(K):
        out[k] = 0.0
    for nz in range(lo, hi):
        row = c.arrays.state + indices[nz] * c.layout.width
        x = data[nz]
        for k in range(K):
            out[k] += weight(c, row, k) * x
    for k in range(K):
        out[k] += intercept_term(c, intercept_value(c, k))
        finite = finite and out[k] - out[k] == 0.0
    if not finite:
        c.cursor.nonfinite = True
        c.scratch.unpredictable = r + 1
    return finite


cdef inline void catch_up_feature(Ctx* c, double* row, long long j) noexcept nogil:
    """Bring feature j, whose state row is `row`, to the current step before its weights
    are read or updated: its entries (`_fobos.catch_up`), or its group's block (fobos:
    `group_catch_up`, once per step; rda: the block's weights cached for the step,
    `rda_group_weights`). Under Berhu's heap its entries leave the heap until their
    update (`release` puts back those of a step that is not taken)."""
    if not c.params.grouped:
        catch_up(c, row)
    else:
        catch_up_group_of(c, j)


cdef inline void catch_up_group_of(Ctx* c, long long j) noexcept nogil:
    """Under a group penalty, bring the block of feature j's group (if it has one) to
    the current step, once per step: fobos catches it up (`group_catch_up`), rda
    caches its weights for the step (`rda_group_weights`)."""
    cdef long long g = group_of(c, j)
    if g >= 0:
        if c.params.update == RDA:
            rda_group_weights(c, g)
        else:
            group_catch_up(c, g)


cdef inline long long collect(Ctx* c, const value_t* data, const index_t* indices, long long lo,
                              long long hi, const double* q, long long n_touched,
                              bint catching_up) noexcept nogil:
    """Add the gradient x q^T of the row of non-zeros lo..hi (q: its K score gradients)
    to the step's sums c.scratch.batch_grads, listing each feature the step meets for
    the first time in c.scratch.touched_features (caught up then, `catch_up_feature`,
    where `catching_up`: the margins have not); returns the number listed."""
    cdef int k, K = c.params.n_outputs
    cdef long long nz, j
    cdef double x
    for nz in range(lo, hi):
        j = indices[nz]
        n_touched = touch(c, j, n_touched, catching_up)
        x = data[nz]
        for k in range(K):
            c.scratch.batch_grads[j * c.params.n_outputs + k] += q[k] * x
    return n_touched


cdef inline long long touch(Ctx* c, long long j, long long n_touched, bint catching_up) noexcept nogil:
    """List feature j in the step's touched features unless it is already (its mark is
    the step's); returns the number listed. `catching_up`: bring it to the step as it
    joins (`catch_up_feature`)."""
    if c.scratch.feature_mark[j] != c.cursor.t + 1:
        c.scratch.feature_mark[j] = c.cursor.t + 1
        c.scratch.touched_features[n_touched] = j
        n_touched += 1
        if catching_up:
            catch_up_feature(c, c.arrays.state + j * c.layout.width, j)
    return n_touched


# FASTPROX_OUT_OF_LINE
cdef inline void apply_collected(Ctx* c, long long n_touched, double divisor) noexcept nogil:
    """The update of every listed feature's entries with gradient batch_grads / divisor
    (a mini-batch's mean: divisor B; a structured example's sum: 1), then its stamp;
    the sums are left at 0 for the next step."""
    cdef int k, K = c.params.n_outputs
    cdef long long i, j
    cdef double* row
    for i in range(n_touched):
        j = c.scratch.touched_features[i]
        row = c.arrays.state + j * c.layout.width
        for k in range(K):
            apply(c, row, k, c.scratch.batch_grads[j * c.params.n_outputs + k] / divisor,
                  c.scratch.batch_grads[j * c.params.n_outputs + k] / divisor)
            c.scratch.batch_grads[j * c.params.n_outputs + k] = 0.0
        stamp(c, row)
    c.cursor.n_ops += n_touched * K


cdef inline double step_weight(Ctx* c, double* row, int k, long long slot) noexcept nogil:
    """w_{t,jk} for the margin; ftrl keeps (w, sqrt(n)) in its memo slot for the update."""
    if c.params.update == FTRL:
        return ftrl_weight(c, entry(c, row, k), c.scratch.ftrl_memo + MEMO_FIELDS * slot)
    return weight(c, row, k)


cdef inline double weight(Ctx* c, double* row, int k) noexcept nogil:
    """w_{t,jk} of a caught-up feature (stored for FOBOS, a closed form for rda, ftrl)."""
    cdef double* e = entry(c, row, k)
    if c.params.update == FOBOS:
        return e[FOBOS_W]
    if c.params.grouped:
        return rda_grouped_weight(c, row, k)
    if c.params.update == RDA and c.params.schedule != ADAGRAD:
        return soft_threshold(-e[RDA_S], c.dual.rda_threshold) * c.dual.rda_scale
    return dual_weight(c, e[DUAL_SUM], (c.params.delta + sqrt(e[DUAL_SQUARES])) * c.params.inv_eta0)


cdef inline double current(Ctx* c, Py_ssize_t j, int k) noexcept nogil:
    """w_{T+1,jk} without modifying the state."""
    cdef double* row = c.arrays.state + j * c.layout.width
    if c.params.update != FOBOS:
        return weight(c, row, k)
    if c.params.schedule == ADAGRAD:
        return adagrad_catch_up(c, row, k)
    if c.params.schedule == NORMALIZED:
        return normalized_current(c, row, k)
    if c.params.penalty == BERHU:
        return heap_current(&c.heap, entry(c, row, k), c.cursor.shrink_product, c.cursor.threshold_sum)
    if c.layout.n_row_fields:
        return scalar_catch_up(c, row, k)
    return entry(c, row, k)[FOBOS_W]


cdef inline double averaged(Ctx* c, Py_ssize_t j, int k) noexcept nogil:
    """The averaged iterate's entry (j, k) after t steps without modifying the state
    (`average_current`; the last iterate before the first averaged step)."""
    return average_current(c, c.arrays.state + j * c.layout.width, k, current(c, j, k))


# FASTPROX_IN_LINE
cdef inline void apply(Ctx* c, double* row, int k, double g, double step_g) noexcept nogil:
    """This step's update of entry (j, k) with gradient g; FOBOS's forward step moves
    by its step times `step_g` (g, or the invariant step's sigma x) while AdaGrad's
    and the normalized schedule's G add g^2."""
    cdef double* e = entry(c, row, k)
    cdef double eta
    if c.params.grouped and c.params.update == FOBOS:
        e[FOBOS_W] -= c.cursor.eta * step_g
    elif c.params.update == RDA:
        e[RDA_S] += g
        if c.params.schedule == ADAGRAD:
            e[RDA_G] += g * g
    elif c.params.update == FTRL:
        ftrl_weight(c, e, c.scratch.ftrl_memo)
        ftrl_update(c, e, g, c.scratch.ftrl_memo)
    elif c.params.penalty == BERHU:
        apply_berhu(c, row, k, g, step_g)
    elif c.params.schedule == ADAGRAD:
        eta = adagrad_step(c, e, g)
        if eta > 0.0:
            e[ADAGRAD_W] = fobos_prox(c, e[ADAGRAD_W] - eta * step_g, c.params.alpha_pen * eta)
    elif c.params.schedule == NORMALIZED:
        normalized_apply(c, row, k, g, step_g)
    else:
        e[FOBOS_W] = fobos_prox(c, e[FOBOS_W] - c.cursor.eta * step_g, c.params.alpha_pen * c.cursor.eta)


cdef inline bint paired_outputs(Ctx* c) noexcept nogil:
    """Whether a single row's update takes its outputs two at a time, more than one of
    them: fobos with AdaGrad and a separable penalty (`apply`'s AdaGrad branch:
    `adagrad_apply_outputs`), or with the normalized schedule (`normalized_apply_outputs`;
    the invariant step's factors already taken: `normalized_apply_known_outputs`)."""
    if c.params.n_outputs == 1 or c.params.update != FOBOS or c.params.grouped or c.params.penalty == BERHU:
        return False
    return c.params.schedule == ADAGRAD or c.params.schedule == NORMALIZED


cdef inline double step_size(Ctx* c, double* row, int k, double g) noexcept nogil:
    """eta_{t,jk}, FOBOS's step of entry (j, k) at this step once its gradient g joins
    AdaGrad's accumulator, without changing the state (the normalized schedule's:
    `invariant_sigmas`)."""
    if c.params.schedule == ADAGRAD:
        return adagrad_eta(c, entry(c, row, k)[ADAGRAD_G] + g * g)
    return c.cursor.eta


cdef inline void add_row_norm(Ctx* c, const value_t* data, const index_t* indices,
                              long long lo, long long hi) noexcept nogil:
    """The normalized schedule's step 3: N_t = N_(t-1) + sum (x_j / m_j)^2 (+ 1, the
    intercept's, `intercept_norm`), then r_t = sqrt(t / N_t) into c.cursor.eta. With one output the row's
    terms in four partial sums (`fastprox_sum4`), as its row kernel's lanes."""
    cdef long long nz
    cdef double n = c.cursor.norm_sum, term
    cdef sum4_t quarters = sum4_start(n)
    for nz in range(lo, hi):
        term = row_norm(data[nz], scale_of(c, c.arrays.state + indices[nz] * c.layout.width)[0])
        if c.params.n_outputs == 1:
            sum4_add(&quarters, nz - lo, term)
        else:
            n += term
    if c.params.n_outputs == 1:
        n = sum4_total(&quarters)
    c.cursor.norm_sum = n + intercept_norm(c)
    set_normalized_eta(c)


cdef inline void invariant_sigmas(Ctx* c, const value_t* data, const index_t* indices,
                                  long long lo, long long hi, double y, double h) noexcept nogil:
    """The invariant step's sigma_k for every output, into c.arrays.sigma: from each
    output's step norm q_k = sum_j eta_jk x_j^2 (+ eta^b_k s^2, `intercept_norm_step`), with the steps this update
    takes, the flow's closed form (`_invariant`). The normalized schedule's new step
    factors are kept in c.scratch.factor_memo, entry by entry, for `step`'s update
    (their square root and division once); its terms eta x^2 = factor r_t x^2, with one
    output in four partial sums (`fastprox_sum4`), as its row kernel's lanes."""
    cdef int k, K = c.params.n_outputs
    cdef long long nz
    cdef double x, target, eta
    cdef double* row
    cdef double* factors
    cdef sum4_t norm
    for k in range(K):
        c.arrays.sigma[k] = intercept_norm_step(c, c.params.schedule, k, c.arrays.score_grads[k], &eta)
    norm = sum4_start(c.arrays.sigma[0])
    for nz in range(lo, hi):
        row = c.arrays.state + indices[nz] * c.layout.width
        x = data[nz]
        if c.params.schedule == NORMALIZED:
            factors = c.scratch.factor_memo + (nz - lo) * K
            normalized_new_factors(c, row, x, factors)
            if K == 1:
                sum4_add(&norm, nz - lo, factors[0] * c.cursor.eta * x * x)
            else:
                for k in range(K):
                    c.arrays.sigma[k] += factors[k] * c.cursor.eta * x * x
        else:
            for k in range(K):
                c.arrays.sigma[k] += step_size(c, row, k, c.arrays.score_grads[k] * x) * x * x
    if K == 1 and c.params.schedule == NORMALIZED:
        c.arrays.sigma[0] = sum4_total(&norm)
    for k in range(K):
        target = (1.0 if k == <int>y else -1.0) if c.params.ovr else y
        if c.params.loss == LOG and h == 1.0:   # e^-|y p| as `gradients` took it
            c.arrays.sigma[k] = log_invariant_sigma(target * c.arrays.scores[k], target, c.arrays.sigma[k],
                                                    1.0, c.arrays.exp_margins[k])
        else:
            c.arrays.sigma[k] = invariant_sigma(c.params.loss, c.arrays.scores[k], target, c.arrays.sigma[k],
                                                h, c.params.epsilon)


cdef inline void abandon_step(Ctx* c, long long n_touched) noexcept nogil:
    """Undo a refused step's bookkeeping (its weights were only caught up): the
    batch's gradient sums, the listed features' Berhu entries (`release`), and the
    marks of the groups it caught up, so that the next step collects and lists them
    afresh."""
    cdef long long i, j
    cdef int k
    for i in range(n_touched):
        j = c.scratch.touched_features[i]
        release(c, c.arrays.state + j * c.layout.width)
        c.scratch.feature_mark[j] = 0
        for k in range(c.params.n_outputs):
            c.scratch.batch_grads[j * c.params.n_outputs + k] = 0.0
    for i in range(c.groups.n_touched):
        c.groups.mark[c.groups.touched[i]] = 0
    c.groups.n_touched = 0


# FASTPROX_OUT_OF_LINE
cdef inline void release_row(Ctx* c, const index_t* indices, long long lo, long long hi) noexcept nogil:
    """`release` the features of the non-zeros lo..hi (a row whose margin caught them up
    in a step that is not taken)."""
    cdef long long nz
    if c.params.berhu_heap:
        for nz in range(lo, hi):
            release(c, c.arrays.state + indices[nz] * c.layout.width)


# FASTPROX_OUT_OF_LINE
cdef inline void release(Ctx* c, double* row) noexcept nogil:
    """Under Berhu's heap, put back into the schedule the entries of a feature caught up
    for a step that is not taken (refused) or for a read: `heap_catch_up` left them
    current at this step and out of the heap until their update. Each is stored as
    current at the cumulants of the step before (which it is: the catch-up read them),
    as an update stores it, so that the later steps' proxes reach it again."""
    cdef int k
    cdef double* e
    if not c.params.berhu_heap:
        return
    for k in range(c.params.n_outputs):
        e = entry(c, row, k)
        if <int>e[BERHU_PHASE] == BERHU_FRESH:
            heap_schedule(&c.heap, e, index(c, row, k), e[BERHU_W], c.cursor.shrink_product,
                          c.cursor.threshold_sum)
