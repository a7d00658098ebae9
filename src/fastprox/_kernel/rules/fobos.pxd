# FOBOS under a scalar schedule: the two global cumulants, their rebase, and the
# catch-up of a feature's entries from its stamps; AdaGrad's and Berhu's catch-ups
# are dispatched from here too.
#
# Scalar FOBOS keeps two global cumulants over steps tau: the shrink product
# P = prod 1/(1 + a_tau (1 - rho)) (`Cursor.shrink_product`) and the threshold sum
# Q = sum a_tau rho / P_{tau-1} (`Cursor.threshold_sum`) with a_tau = alpha eta_tau.
# A feature stamped (P_s, Q_s) catches up as w <- soft(w P/P_s, P (Q - Q_s)).
# Both cumulants are rebased (every feature caught up, P = 1, Q = 0) when P
# nears underflow and at least every rebase_period >= d steps, which keeps
# their differences exact at amortised O(1) cost per step.
from fastprox._kernel.base.types cimport FOBOS, ADAGRAD, NORMALIZED, BERHU
from fastprox._kernel.rules.prox cimport soft_threshold, prox_elasticnet, prox_berhu
from fastprox._kernel.base.state cimport (Ctx, entry, index, normalized_l1_rows, ROW_LAST_STEP, FOBOS_W, ADAGRAD_W,
                              NORM_STAMP)
from fastprox._kernel.rules.berhu cimport heap_advance, heap_catch_up, heap_schedule, BERHU_W
from fastprox._kernel.rules.adagrad cimport adagrad_catch_up, adagrad_step
from fastprox._kernel.groups.groups cimport groups_rebase
from fastprox._kernel.lanes.pairs cimport prefix_rebase2, l1_catch_up2, scalar_catch_up2
from fastprox._kernel.rules.normalized cimport normalized_catch_up
from fastprox._kernel.rules.average cimport (averaging, keeps_history, history_origin, average_end_step,
                                             scalar_skipped_sum, scalar_history_sum, adagrad_skipped_sum,
                                             normalized_skipped_sum, add_iterate,
                                             dual_catch_up, add_dual_iterate, add_prefix, stamp_sums,
                                             PREFIX_SHARE)

cdef extern from "_kernel/out_of_line.h":
    pass                          # the functions marked FASTPROX_OUT_OF_LINE or _IN_LINE below


cdef extern from *:
    """
    /* Cumulant floor below which scalar FOBOS rebases (far above underflow). */
    #define FASTPROX_P_FLOOR 1e-200
    """
    const double P_FLOOR "FASTPROX_P_FLOOR"


cdef inline void stamp_origin(Ctx* c, double* row) noexcept nogil:
    """Stamp a feature's row as current at the cumulants' origin (P = 1, Q = 0); with
    its entries 0, the row of a feature never touched."""
    if c.params.schedule == NORMALIZED:
        if normalized_l1_rows(c):
            row[NORM_STAMP] = 0.0
        return
    if c.layout.shrink_stamp_at >= 0:
        row[c.layout.shrink_stamp_at] = 1.0
    if c.layout.threshold_stamp_at >= 0:
        row[c.layout.threshold_stamp_at] = 0.0
    if c.layout.avg_prefix:
        stamp_sums(c, row, 0)           # (after a rebase: the prefix sums' origin, 0)


cdef inline bint zero_origin(Ctx* c) noexcept nogil:
    """Whether `stamp_origin` writes only zeros (every layout but the P stamp's), so
    that a row of zeros is already stamped at the origin."""
    return c.params.schedule == NORMALIZED or c.layout.shrink_stamp_at < 0


cdef inline void reset_stamps(Ctx* c) noexcept nogil:
    """Stamp every feature as current at the cumulants' origin."""
    cdef Py_ssize_t j
    for j in range(c.params.n_features):
        stamp_origin(c, c.arrays.state + j * c.layout.width)


cdef inline void advance_cumulants(Ctx* c) noexcept nogil:
    """Fold this step's prox into the scalar-FOBOS cumulants (P, Q); under the
    normalized schedule, r_t into its cumulant R (Q)."""
    cdef double a = c.params.alpha_pen * c.cursor.eta
    if c.params.update != FOBOS or c.params.schedule == ADAGRAD or c.params.grouped:
        return
    if c.params.schedule == NORMALIZED:
        c.cursor.threshold_sum += c.cursor.eta
        return
    if c.params.penalty == BERHU:
        heap_advance(&c.heap, c.arrays.state, c.layout.n_entry_fields, c.cursor.shrink_product,
                     c.cursor.threshold_sum, a)
        c.cursor.threshold_sum += a
        c.cursor.shrink_product /= 1.0 + a / c.params.berhu_gamma
        return
    advance_separable(c, a, c.params.l1_share)


# FASTPROX_IN_LINE
cdef inline void advance_separable(Ctx* c, double a, double l1_share) noexcept nogil:
    """P and Q of a separable penalty after a prox with threshold a = alpha eta_t and the
    penalty's l1 share (the fast rows of fobos call it directly, l1's share 1 a constant)."""
    c.cursor.threshold_sum += a * l1_share / c.cursor.shrink_product
    if l1_share != 1.0:           # (l1: P / 1 is P, and a division a row is 1% of ijcnn1's)
        c.cursor.shrink_product /= 1.0 + a * (1.0 - l1_share)
    if c.layout.avg_prefix:
        add_prefix(c)


cdef inline void end_step(Ctx* c) noexcept nogil:
    if averaging(c):
        average_end_step(c)
    if c.params.update != FOBOS or c.params.schedule == ADAGRAD:
        return
    count_step(c)


cdef inline void count_step(Ctx* c) noexcept nogil:
    """One step more on the cumulants (fobos under a scalar or the normalized schedule):
    their rebase when P nears underflow, falls under PREFIX_SHARE of its prefix sum
    (l2's averaged rows: `average.prefix_sum`; the sum is 0 elsewhere) or
    rebase_period steps have passed."""
    c.cursor.since_rebase += 1
    if (c.cursor.shrink_product < P_FLOOR or c.cursor.since_rebase >= c.params.rebase_period
            or c.cursor.shrink_product < PREFIX_SHARE * c.cursor.avg_prefix):
        rebase(c)


# FASTPROX_OUT_OF_LINE
cdef inline void rebase(Ctx* c) noexcept nogil:
    """Catch every feature up, then restart the cumulants at P = 1, Q = 0 (the rows of
    one output in a layout of `rebase_pairs` stamped at the origin as they are caught
    up, the others by `reset_stamps`)."""
    cdef Py_ssize_t j
    cdef bint paired = c.params.n_outputs == 1 and c.params.update == FOBOS and pair_layout(c)
    if c.params.grouped:
        c.cursor.since_rebase = 0
        groups_rebase(c)
        return
    if paired:
        rebase_pairs(c)
    else:
        for j in range(c.params.n_features):
            catch_up(c, c.arrays.state + j * c.layout.width)
    c.cursor.since_rebase = 0           # (after: the averaged catch-up reads the history since the last)
    if keeps_history(c):
        history_origin(c)
    c.cursor.avg_prefix = c.cursor.avg_prefix_lo = 0.0
    c.cursor.n_ops += c.params.n_features * c.params.n_outputs
    c.cursor.shrink_product, c.cursor.threshold_sum = 1.0, 0.0
    if not paired:
        reset_stamps(c)
    if c.params.berhu_heap:
        for j in range(c.params.n_features * c.params.n_outputs):
            heap_schedule(&c.heap, c.arrays.state + j * c.layout.n_entry_fields, j,
                          c.arrays.state[j * c.layout.n_entry_fields + BERHU_W], 1.0, 0.0)


cdef inline bint pair_layout(Ctx* c) noexcept nogil:
    """Whether FOBOS's rows under a scalar schedule have a layout `rebase_pairs` catches
    up: the averaged l2 rows (`Layout.avg_prefix`), or without the averaged iterate the
    rows of a separable penalty (P stamp, Q stamp or both; without a penalty there is
    nothing to catch up or stamp)."""
    if c.params.schedule == ADAGRAD or c.params.schedule == NORMALIZED or c.params.berhu_heap:
        return False
    return c.layout.avg_prefix or (not averaging(c) and c.layout.n_row_fields > 0)


cdef inline void rebase_pairs(Ctx* c) noexcept nogil:
    """`rebase`'s catch-up of every feature (`catch_up`'s arithmetic, entry by entry: the
    same bits) and their stamps at the origin (`stamp_origin`'s), two rows at a time in
    one loop per layout (`pair_layout`; one output), without `catch_up`'s dispatch per
    feature (`_kernel/lanes/pairs.h`: the averaged l2 rows' `fastprox_prefix_rebase2`,
    l1's `fastprox_l1_catch_up2`, l2's and elastic net's `fastprox_scalar_catch_up2`)."""
    cdef double* state = c.arrays.state
    cdef long long width = c.layout.width, d = c.params.n_features, j
    cdef int n_row_fields = c.layout.n_row_fields, shrink_at = c.layout.shrink_stamp_at
    cdef int threshold_at = c.layout.threshold_stamp_at
    cdef double P = c.cursor.shrink_product, Q = c.cursor.threshold_sum
    cdef double SP = c.cursor.avg_prefix, SP_lo = c.cursor.avg_prefix_lo
    cdef double* e
    cdef double* f
    if c.layout.avg_prefix:
        for j in range(0, d, 2):
            e, f = state + j * width, state + min(j + 1, d - 1) * width
            prefix_rebase2(e, f, P, SP, SP_lo)
    elif shrink_at < 0:                 # (l1: Q stamp, w)
        for j in range(0, d, 2):
            e, f = state + j * width, state + min(j + 1, d - 1) * width
            l1_catch_up2(e, f, 1, P, Q)
            e[0] = f[0] = 0.0
    elif threshold_at < 0:              # (l2: P stamp, w)
        for j in range(0, d, 2):
            e, f = state + j * width, state + min(j + 1, d - 1) * width
            scalar_catch_up2(e, f, 1, -1, P, Q)
            e[0] = f[0] = 1.0
    else:                               # (elastic net: P stamp, Q stamp, w)
        for j in range(0, d, 2):
            e, f = state + j * width, state + min(j + 1, d - 1) * width
            scalar_catch_up2(e, f, 2, 1, P, Q)
            e[0] = f[0] = 1.0
            e[1] = f[1] = 0.0


cdef inline void catch_up(Ctx* c, double* row) noexcept nogil:
    """Bring the stored entries of a FOBOS feature to the current step, in place (a dual
    rule's need none: its averaged sums only, `dual_catch_up`)."""
    cdef int k
    cdef double caught
    if c.params.update != FOBOS:
        if averaging(c):
            dual_catch_up(c, row)
        return
    if c.params.schedule == ADAGRAD:
        if row[ROW_LAST_STEP] < c.cursor.t:
            for k in range(c.params.n_outputs):
                if averaging(c):
                    entry(c, row, k)[c.layout.avg_sum_at] += adagrad_skipped_sum(c, row, k)
                entry(c, row, k)[ADAGRAD_W] = adagrad_catch_up(c, row, k)
            row[ROW_LAST_STEP] = c.cursor.t
    elif c.params.schedule == NORMALIZED:
        if averaging(c):
            for k in range(c.params.n_outputs):
                entry(c, row, k)[c.layout.avg_sum_at] += normalized_skipped_sum(c, row, k)
            row[c.layout.avg_stamp_at] = c.cursor.t
        normalized_catch_up(c, row)
    elif c.params.berhu_heap:
        berhu_catch_up(c, row)
    elif c.layout.n_row_fields:
        for k in range(c.params.n_outputs):
            caught = scalar_catch_up(c, row, k)
            if averaging(c):
                entry(c, row, k)[c.layout.avg_sum_at] += scalar_skipped_sum(c, row, k, caught != 0.0)
            entry(c, row, k)[FOBOS_W] = caught
        stamp_cumulants(c, row)
        if averaging(c):
            stamp_sums(c, row, c.cursor.t)


# FASTPROX_OUT_OF_LINE
cdef inline void berhu_catch_up(Ctx* c, double* row) noexcept nogil:
    cdef int k
    for k in range(c.params.n_outputs):
        heap_catch_up(&c.heap, entry(c, row, k), index(c, row, k), c.cursor.shrink_product,
                      c.cursor.threshold_sum)


# FASTPROX_IN_LINE
cdef inline double scalar_catch_up(Ctx* c, double* row, int k) noexcept nogil:
    """soft(w P/P_s, P (Q - Q_s)): the steps since the stamp, in one prox."""
    cdef double w = entry(c, row, k)[FOBOS_W]
    cdef double ratio = 1.0, thr = 0.0
    if c.layout.shrink_stamp_at >= 0:
        ratio = c.cursor.shrink_product / row[c.layout.shrink_stamp_at]
    if c.layout.threshold_stamp_at >= 0:
        thr = c.cursor.shrink_product * (c.cursor.threshold_sum - row[c.layout.threshold_stamp_at])
    return soft_threshold(w * ratio, thr)


cdef inline void stamp(Ctx* c, double* row) noexcept nogil:
    """Mark a FOBOS feature as current after the step's update (its new weights join
    their averaged sums: `add_iterate`; a dual rule's, `add_dual_iterate`)."""
    if c.params.update != FOBOS:
        if averaging(c):
            add_dual_iterate(c, row)
        return
    if averaging(c):
        add_iterate(c, row)
    if c.params.schedule == ADAGRAD:
        row[ROW_LAST_STEP] = c.cursor.t + 1
        return
    stamp_cumulants(c, row)


# FASTPROX_IN_LINE
cdef inline void stamp_cumulants(Ctx* c, double* row) noexcept nogil:
    """Stamp a FOBOS feature under a scalar or the normalized schedule with the current
    cumulants."""
    if c.params.schedule == NORMALIZED:
        if normalized_l1_rows(c):
            row[NORM_STAMP] = c.cursor.threshold_sum
        return
    if c.layout.shrink_stamp_at >= 0:
        row[c.layout.shrink_stamp_at] = c.cursor.shrink_product
    if c.layout.threshold_stamp_at >= 0:
        row[c.layout.threshold_stamp_at] = c.cursor.threshold_sum


# FASTPROX_IN_LINE
cdef inline void fobos_averaged_catch_up(Ctx* c, double* row) noexcept nogil:
    """`catch_up` of a scalar-FOBOS row with one output and a penalty that keeps the
    history (l1, elastic net), in line (without a penalty:
    `average.unpenalized_catch_up`; l2's rows, `Layout.avg_prefix`:
    `_kernel/lanes/pairs.h`'s `fastprox_prefix_catch_up2`): nothing where the row is
    current, its stamp A the step (a row met at the step before, or caught up by a
    rebase since: its weight's catch-up is the identity and no iterate was skipped); else
    the weight's catch-up and the skipped iterates' sum from the history
    (`average.scalar_history_sum`), and its stamps."""
    cdef double* e = row + c.layout.n_row_fields
    cdef double caught
    if <long long>row[c.layout.avg_stamp_at] >= c.cursor.t:
        return
    caught = scalar_catch_up(c, row, 0)
    e[c.layout.avg_sum_at] += scalar_history_sum(c, row, 0, caught != 0.0)
    e[FOBOS_W] = caught
    stamp_cumulants(c, row)
    row[c.layout.avg_stamp_at] = c.cursor.t


cdef inline double fobos_prox(Ctx* c, double v, double a) noexcept nogil:
    """The elastic-net family's prox with threshold a (l1 without the trivial division)."""
    if c.params.l1_share == 1.0:
        return soft_threshold(v, a)
    return prox_elasticnet(v, a, c.params.l1_share)


# FASTPROX_OUT_OF_LINE
cdef inline void apply_berhu(Ctx* c, double* row, int k, double g, double step_g) noexcept nogil:
    """FOBOS's Berhu update: the plain prox under adagrad, rescheduled in the heap
    otherwise (`step_g`: g, or the invariant step's sigma x; AdaGrad's G adds g^2)."""
    cdef double* e = entry(c, row, k)
    cdef double eta = c.cursor.eta
    if c.params.schedule == ADAGRAD:
        eta = adagrad_step(c, e, g)
        if eta == 0.0:
            return
    if c.params.berhu_heap:
        heap_schedule(&c.heap, e, index(c, row, k),
                      prox_berhu(e[FOBOS_W] - eta * step_g, c.params.alpha_pen * eta, c.params.berhu_gamma),
                      c.cursor.shrink_product, c.cursor.threshold_sum)
    else:
        e[FOBOS_W] = prox_berhu(e[FOBOS_W] - eta * step_g, c.params.alpha_pen * eta, c.params.berhu_gamma)
