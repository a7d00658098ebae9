# The row kernels with the averaged iterate kept (`average`, docs/contract.md §12a): the
# general step's single row under averaging, its operations in its order, with the
# row kernel of `_kernel/steps/rows.pxd` for the weights. Each entry's averaging takes
# its weight before the margin's catch-up (`catch_up`: the skipped iterates join S)
# and after the update (`stamp`: the new iterate joins S), so that a first loop over
# the row catches its sums up, the row kernel steps, and a last loop adds the new
# iterates: the general path's bits (tests/test_average_rows.py compares them). The
# rows' catch-up in the kernel finds them current (an identity). Scalar fobos's rows
# with a penalty do the same in the kernel's own two loops (`fobos_row`,
# `fobos_l1_row` at field 2, l2's `fobos_prefix_row`: each pair's catch-up with its sums
# before its margin term, its new iterates right after its update, its identity catch-up
# skipped), which reads A and S there; no other row kernel reads or writes them. The normalized
# schedule's rows without a penalty, scalar fobos's without a penalty (A, w, S) and
# the dual rules' rows keep A as their first field, before what their kernel reads
# at fixed places (`_kernel/base/layout.h`): the kernel sees each state row from its
# second field, its row fields but A (`shift`). Scalar fobos's l1 rows (Q, A, w, S)
# take the l1 kernel with the weight at field 2 (`fobos_l1_row`'s at_w). The
# normalized schedule's l1 rows keep A between their fields (R, A, m): they take the
# general step.
from fastprox._kernel.base.types cimport value_t, index_t, FOBOS
from fastprox._kernel.base.state cimport Ctx
from fastprox._kernel.base.csr cimport weight_at
from fastprox._kernel.rules.schedules cimport begin_schedule_step
from fastprox._kernel.rules.dual cimport set_weight_params
from fastprox._kernel.rules.fobos cimport catch_up, stamp, end_step
from fastprox._kernel.rules.average cimport unpenalized_catch_up, add_iterates
from fastprox._kernel.steps.rows cimport (rows_t, step_t, loss_t, eta_t, row_kernel, row_intercept, update_of,
                                          schedule_of, fobos_l1_row, fobos_row, fobos_prefix_row, FobosRows,
                                          FobosL1Rows,
                                          AdagradL1Rows,
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
    the skipped iterates into S, A the step), the row kernel on the state rows seen from
    field `shift` on (their row fields less `shift`), the new iterates into S (`stamp`),
    the intercept, and `end_step` (the intercepts' sums and the cumulants' history
    before the rebase). Scalar fobos's rows with a penalty run in one kernel
    (`fobos_row`, `fobos_l1_row` averaged, l2's `fobos_prefix_row`): each pair's catch-up
    with its sums (`fobos_averaged_catch_up`, l2's `fastprox_prefix_catch_up2`) in the
    margin's loop, its new iterates into S (`average.add_iterates`) in the step's loop,
    each entry's operations in the order of the three loops.

    Mirrors `_step.step`'s single-row branch: `margins` -> `catch_up`, the row kernel's
    arithmetic, `stamp` -> `add_iterate` / `add_dual_iterate`, `intercept_step`, `end_step`."""
    cdef long long lo = indptr[r], hi = indptr[r + 1], nz, width = c.layout.width
    cdef double total, intercept_eta = 0.0
    cdef bint fused = rows_t is FobosL1Rows or (rows_t is FobosRows and shift == 0)
    if update_of(kernel) != FOBOS:
        set_weight_params(c)
    begin_schedule_step(c, schedule_of(schedule))
    if not fused:
        for nz in range(lo, hi):
            if rows_t is NormalizedRows or rows_t is InvariantNormalizedRows or rows_t is FobosRows:
                unpenalized_catch_up(c, c.arrays.state + indices[nz] * width)     # (fobos: no penalty)
            elif rows_t is not InvariantAdagradRows:     # (which adds the sums in its own loops)
                catch_up(c, c.arrays.state + indices[nz] * width)
    c.arrays.state += shift
    c.layout.n_row_fields -= shift
    if rows_t is FobosL1Rows:       # (Q, A, w, S): the weight at field 2
        total = fobos_l1_row(c, data, indices, lo, hi, y[r], weight_at(sw, r), loss, schedule, 2)
    elif fused and c.layout.avg_prefix:     # (l2's: P stamp, SP, SP_lo, w, S)
        total = fobos_prefix_row(c, data, indices, lo, hi, y[r], weight_at(sw, r), loss, schedule)
    elif fused:                     # (scalar fobos's rows with a penalty)
        total = fobos_row(c, data, indices, lo, hi, y[r], weight_at(sw, r), loss, schedule)
    else:
        total = row_kernel(c, data, indices, lo, hi, y[r], weight_at(sw, r), kernel, loss, schedule,
                           &intercept_eta)
    c.arrays.state -= shift
    c.layout.n_row_fields += shift
    if c.cursor.nonfinite:
        return total
    if rows_t is FobosRows and not fused:        # (without a penalty)
        for nz in range(lo, hi):
            add_iterates(c, c.arrays.state + indices[nz] * width, 1)
    elif not fused and rows_t is not InvariantAdagradRows:
        for nz in range(lo, hi):
            stamp(c, c.arrays.state + indices[nz] * width)
    row_intercept(c, kernel, schedule, intercept_eta)
    c.cursor.t += 1
    end_step(c)
    return total
