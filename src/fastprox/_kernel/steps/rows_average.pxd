# The row kernels with the averaged iterate kept (`average`, docs/contract.md §12a): the
# general step's single row under averaging, its operations in its order, with the
# row kernel of `_kernel/steps/rows.pxd` for the weights. The averaged sums S and the
# stamp A are fields no row kernel reads or writes, and each entry's averaging takes
# its weight before the margin's catch-up (`catch_up`: the skipped iterates join S)
# and after the update (`stamp`: the new iterate joins S), so that a first loop over
# the row catches its sums up, the row kernel steps, and a last loop adds the new
# iterates: the general path's bits (tests/test_average_rows.py compares them). The
# rows' catch-up in the kernel finds them current (an identity). The normalized
# schedule's rows without a penalty, scalar fobos's without a penalty (A, w, S) and
# the dual rules' rows keep A as their first field, before what their kernel reads
# at fixed places (`_kernel/base/layout.h`): the kernel sees each state row from its
# second field, its row fields but A (`shift`). Scalar fobos's l1 rows (Q, A, w, S)
# take the l1 kernel with the weight at field 2 (`fobos_l1_row`'s at_w). The
# normalized schedule's l1 rows keep A between their fields (R, A, m): they take the
# general step.
from fastprox._kernel.base.types cimport value_t, index_t, FOBOS
from fastprox._kernel.base.state cimport Ctx, NORM_W, FOBOS_W
from fastprox._kernel.base.csr cimport weight_at
from fastprox._kernel.rules.schedules cimport begin_schedule_step
from fastprox._kernel.rules.dual cimport set_weight_params
from fastprox._kernel.rules.fobos cimport catch_up, stamp, end_step, scalar_catch_up, stamp_cumulants
from fastprox._kernel.rules.average cimport constant_sum, scalar_history_sum, add_iterates
from fastprox._kernel.steps.rows cimport (rows_t, step_t, loss_t, eta_t, row_kernel, row_intercept, update_of,
                                          schedule_of, fobos_l1_row, FobosRows, FobosL1Rows, AdagradL1Rows,
                                          AdagradRows,
                                          NormalizedRows, InvariantNormalizedRows, InvariantAdagradRows,
                                          RdaAdagradRows, FtrlRows)


# The averaged row kernels, each naming the row kernel of `_kernel/steps/rows.pxd` it
# runs (fobos under a scalar schedule: l2 and elastic net (P stamp), l1 (Q stamp), no
# penalty; AdaGrad with either step, the normalized schedule
# without a penalty with either step, rda and ftrl under AdaGrad's steps: the rules
# whose averaged iterate is kept, but the normalized schedule's l1 rows).
cdef struct AveragedFobosRows:
    char tag
cdef struct AveragedFobosL1Rows:
    char tag
cdef struct AveragedUnpenalizedFobosRows:
    char tag
cdef struct AveragedAdagradL1Rows:
    char tag
cdef struct AveragedAdagradRows:
    char tag
cdef struct AveragedNormalizedRows:
    char tag
cdef struct AveragedInvariantNormalizedRows:
    char tag
cdef struct AveragedInvariantAdagradRows:
    char tag
cdef struct AveragedRdaAdagradRows:
    char tag
cdef struct AveragedFtrlRows:
    char tag

ctypedef fused averaged_t:
    AveragedFobosRows
    AveragedFobosL1Rows
    AveragedUnpenalizedFobosRows
    AveragedAdagradL1Rows
    AveragedAdagradRows
    AveragedNormalizedRows
    AveragedInvariantNormalizedRows
    AveragedInvariantAdagradRows
    AveragedRdaAdagradRows
    AveragedFtrlRows

# What a pass runs: the general step, a row kernel, or an averaged row kernel.
ctypedef fused pass_step_t:
    step_t
    averaged_t


cdef inline double averaged_row_step(Ctx* c, const value_t* data, const index_t* indices,
                                     const index_t* indptr, const double* y, const double* sw, long long r,
                                     averaged_t* kernel, loss_t* loss, eta_t* schedule) noexcept nogil:
    """`step` for row r alone with the averaged iterate kept, by the averaged row kernel
    `kernel` (`averaged_rows` with its row kernel and the shift of its state rows)."""
    if averaged_t is AveragedFobosRows:
        return averaged_rows(c, data, indices, indptr, y, sw, r, <FobosRows*>NULL, loss, schedule, 0)
    elif averaged_t is AveragedFobosL1Rows:
        return averaged_rows(c, data, indices, indptr, y, sw, r, <FobosL1Rows*>NULL, loss, schedule, 0)
    elif averaged_t is AveragedUnpenalizedFobosRows:
        return averaged_rows(c, data, indices, indptr, y, sw, r, <FobosRows*>NULL, loss, schedule, 1)
    elif averaged_t is AveragedAdagradL1Rows:
        return averaged_rows(c, data, indices, indptr, y, sw, r, <AdagradL1Rows*>NULL, loss, schedule, 0)
    elif averaged_t is AveragedAdagradRows:
        return averaged_rows(c, data, indices, indptr, y, sw, r, <AdagradRows*>NULL, loss, schedule, 0)
    elif averaged_t is AveragedNormalizedRows:
        return averaged_rows(c, data, indices, indptr, y, sw, r, <NormalizedRows*>NULL, loss, schedule, 1)
    elif averaged_t is AveragedInvariantNormalizedRows:
        return averaged_rows(c, data, indices, indptr, y, sw, r, <InvariantNormalizedRows*>NULL, loss,
                             schedule, 1)
    elif averaged_t is AveragedInvariantAdagradRows:
        return averaged_rows(c, data, indices, indptr, y, sw, r, <InvariantAdagradRows*>NULL, loss, schedule,
                             0)
    elif averaged_t is AveragedRdaAdagradRows:
        return averaged_rows(c, data, indices, indptr, y, sw, r, <RdaAdagradRows*>NULL, loss, schedule, 1)
    else:
        return averaged_rows(c, data, indices, indptr, y, sw, r, <FtrlRows*>NULL, loss, schedule, 1)


cdef inline double averaged_rows(Ctx* c, const value_t* data, const index_t* indices,
                                 const index_t* indptr, const double* y, const double* sw, long long r,
                                 rows_t* kernel, loss_t* loss, eta_t* schedule, int shift) noexcept nogil:
    """`rows.row_step` with the averaged sums: the row's entries caught up (`catch_up`,
    the skipped iterates into S, A the step; scalar fobos's in line,
    `fobos_averaged_catch_up`), the row kernel on the state rows seen from field
    `shift` on (their row fields less `shift`), the new iterates into S (`stamp`;
    scalar fobos's `average.add_iterates` of one output: its row kernel stamped P and Q), the
    intercept, and `end_step` (the intercepts' sums and the cumulants' history before
    the rebase).

    Mirrors `_step.step`'s single-row branch: `margins` -> `catch_up`, the row kernel's
    arithmetic, `stamp` -> `add_iterate` / `add_dual_iterate`, `intercept_step`, `end_step`."""
    cdef long long lo = indptr[r], hi = indptr[r + 1], nz, width = c.layout.width
    cdef double total, intercept_eta = 0.0
    if update_of(kernel) != FOBOS:
        set_weight_params(c)
    begin_schedule_step(c, schedule_of(schedule))
    for nz in range(lo, hi):
        if rows_t is NormalizedRows or rows_t is InvariantNormalizedRows:
            unpenalized_catch_up(c, c.arrays.state + indices[nz] * width)
        elif rows_t is FobosRows or rows_t is FobosL1Rows:
            fobos_averaged_catch_up(c, c.arrays.state + indices[nz] * width)
        elif rows_t is not InvariantAdagradRows:     # (which adds the sums in its own loops)
            catch_up(c, c.arrays.state + indices[nz] * width)
    c.arrays.state += shift
    c.layout.n_row_fields -= shift
    if rows_t is FobosL1Rows:       # (Q, A, w, S): the weight at field 2
        total = fobos_l1_row(c, data, indices, lo, hi, y[r], weight_at(sw, r), loss, schedule, 2)
    else:
        total = row_kernel(c, data, indices, lo, hi, y[r], weight_at(sw, r), kernel, loss, schedule,
                           &intercept_eta)
    c.arrays.state -= shift
    c.layout.n_row_fields += shift
    if c.cursor.nonfinite:
        return total
    if rows_t is FobosRows or rows_t is FobosL1Rows:
        for nz in range(lo, hi):
            add_iterates(c, c.arrays.state + indices[nz] * width, 1)   # (the kernel stamped P and Q)
    elif rows_t is not InvariantAdagradRows:
        for nz in range(lo, hi):
            stamp(c, c.arrays.state + indices[nz] * width)
    row_intercept(c, kernel, schedule, intercept_eta)
    c.cursor.t += 1
    end_step(c)
    return total


cdef inline void unpenalized_catch_up(Ctx* c, double* row) noexcept nogil:
    """`catch_up` of a row without a penalty and with one entry, in line (the normalized
    schedule's, scalar fobos's: the weight is the entry's first field, NORM_W = FOBOS_W =
    0): the weight stays as it is while the row is untouched, so the skipped averaged
    iterates sum to the weight times their count (`average.constant_sum`, without
    `history_sum`'s test for a history); the stamp A is the step."""
    cdef double* e = row + c.layout.n_row_fields
    e[c.layout.avg_sum_at] += constant_sum(c, e[NORM_W], <long long>row[c.layout.avg_stamp_at])
    row[c.layout.avg_stamp_at] = c.cursor.t


# FASTPROX_IN_LINE
cdef inline void fobos_averaged_catch_up(Ctx* c, double* row) noexcept nogil:
    """`catch_up` of a scalar-FOBOS row with one output, in line: nothing where its
    stamp A is the step (a row met at the step before, or caught up by a rebase since:
    its P and Q stamps are the cumulants, so its weight's catch-up is the identity
    and no iterate was skipped); without a penalty `unpenalized_catch_up`; else the
    weight's catch-up and the skipped iterates' sum from the history
    (`average.scalar_history_sum`: a penalty's stamp, so a history), and its stamps."""
    cdef double* e = row + c.layout.n_row_fields
    cdef double caught
    if <long long>row[c.layout.avg_stamp_at] >= c.cursor.t:
        return
    if c.layout.shrink_stamp_at < 0 and c.layout.threshold_stamp_at < 0:
        unpenalized_catch_up(c, row)
        return
    caught = scalar_catch_up(c, row, 0)
    e[c.layout.avg_sum_at] += scalar_history_sum(c, row, 0, caught != 0.0)
    e[FOBOS_W] = caught
    stamp_cumulants(c, row)
    row[c.layout.avg_stamp_at] = c.cursor.t
