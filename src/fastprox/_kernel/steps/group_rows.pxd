# The single rows under l1_l2 or l1_linf over W's rows (the multiclass structured-sparsity
# case): the general step's arithmetic for one row, which `_kernel/steps/step.pxd` calls in
# place of its margins, gradients and update.
from fastprox._kernel.base.types cimport value_t, index_t, L1_LINF
from fastprox._kernel.groups.group_prox cimport prox_l1_l2, prox_l1_linf
from fastprox._kernel.base.state cimport Ctx, INTERCEPT_FIELDS, INTERCEPT_SUM
from fastprox._kernel.rules.intercept cimport intercept_term
from fastprox._kernel.losses.gradients cimport gradients, refused, row_abs_max, largest_q


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
        p[k] = intercept_term(c, c.arrays.intercepts[INTERCEPT_FIELDS * k + INTERCEPT_SUM])
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
