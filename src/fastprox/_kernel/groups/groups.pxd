# Group penalties under FOBOS with a scalar schedule, and under RDA with the
# invsqrt and adagrad schedules.
#
# A group is a block of W: one feature's row (the default, p = d) or the rows
# of the features a user maps to the same id. Entries hold plain weights; each
# group carries a stamp, and an untouched group is caught up when one of its
# features is read:
#
# - l1_l2, l1_linf: successive proxes add up (FOBOS Proposition 11), so the
#   stamp is the threshold sum Q = alpha sum eta_tau and one prox with
#   Q - Q_s catches up; a touched group keeps the stamp of the step before, so
#   its own step's prox joins that same catch-up.
# - squared_group: every step shrinks all group norms by the same tau_t
#   (Martins et al., Alg. 2), which scales an untouched block so that its norm
#   drops by exactly tau_t: the stamp is the sum of the tau, and the catch-up is
#   the l1_l2 prox with the summed tau. Each step needs every group's norm,
#   known in O(1) from its stored norm and stamp: O(p log p) per step.
# - group weights d_G (group_weights=): group G's threshold is d_G times the
#   penalty's (for sparse_group, its group part only), so the stamps stay the
#   unweighted sums and a catch-up multiplies the summed threshold by d_G; for
#   squared_group the shared tau_t is Martins et al.'s Alg. 4 and norms drop by
#   d_G tau_t. d_G = 0 leaves a group unpenalized.
# - sparse_group: its proxes do not compose; the stamp is the step index and
#   the catch-up replays the skipped proxes on the block (O(k) for k skipped
#   steps, as the contract says), stopping once the block is zero.
#
# Under RDA a block's weights are a closed form of its gradient sums S_G:
# W_G = prox of (T alpha / beta_T) r at -S_G / beta_T. They are computed once per
# step for each touched group into a cache, and on reading the model.


from libc.math cimport sqrt
from fastprox._kernel.base.types cimport FOBOS, RDA, ADAGRAD, L1_L2, L1_LINF, SPARSE_GROUP, SQUARED_GROUP
from fastprox._kernel.rules.prox cimport soft_threshold
from fastprox._kernel.groups.group_prox cimport (block_norm, prox_l1_l2, prox_l1_linf, prox_sparse_group,
                                   squared_group_tau, adagrad_group_shrink, adagrad_linf_shrink)
from fastprox._kernel.base.state cimport Ctx, FOBOS_W, RDA_S, RDA_G
from fastprox._kernel.rules.schedules cimport step_threshold

cdef extern from "_kernel/out_of_line.h":
    pass                          # the functions marked FASTPROX_OUT_OF_LINE or _IN_LINE below



cdef inline long long group_of(Ctx* c, long long j) noexcept nogil:
    return c.groups.feature_group[j] if c.groups.feature_group != NULL else j


cdef inline double group_weight(Ctx* c, long long g) noexcept nogil:
    """d_G, the factor of group g's threshold (1 without group_weights)."""
    return c.groups.weight[g] if c.groups.weight != NULL else 1.0


cdef inline Py_ssize_t block_size(Ctx* c, long long g) noexcept nogil:
    if c.groups.feature_group == NULL:
        return c.params.n_outputs
    return (c.groups.member_start[g + 1] - c.groups.member_start[g]) * c.params.n_outputs


cdef inline double* block_get(Ctx* c, long long g) noexcept nogil:
    """The group's weights as a contiguous buffer: in place for row groups,
    gathered into scratch for user groups (write back with `block_put`)."""
    cdef long long i, k, m = 0
    if c.groups.feature_group == NULL:
        return c.arrays.state + g * c.layout.width
    for i in range(c.groups.member_start[g], c.groups.member_start[g + 1]):
        for k in range(c.params.n_outputs):
            c.scratch.block[m] = c.arrays.state[c.groups.members[i] * c.layout.width + k]
            m += 1
    return c.scratch.block


cdef inline void block_put(Ctx* c, long long g, const double* v) noexcept nogil:
    cdef long long i, k, m = 0
    if c.groups.feature_group == NULL:
        return
    for i in range(c.groups.member_start[g], c.groups.member_start[g + 1]):
        for k in range(c.params.n_outputs):
            c.arrays.state[c.groups.members[i] * c.layout.width + k] = v[m]
            m += 1


cdef inline void group_prox(Ctx* c, long long g, double* v, Py_ssize_t m, double a) noexcept nogil:
    """The group penalty's prox of group g's block v (m entries) at threshold a, the
    group's weight d_G applied (squared_group takes l1_l2's with its shared tau)."""
    if c.params.penalty == L1_LINF:
        prox_l1_linf(v, m, a * group_weight(c, g), c.scratch.work)
    elif c.params.penalty == SPARSE_GROUP:
        prox_sparse_group(v, m, a, c.params.l1_share, group_weight(c, g))
    else:
        prox_l1_l2(v, m, a * group_weight(c, g))


# FASTPROX_OUT_OF_LINE
cdef inline void block_catch_up(Ctx* c, long long g, double* v, Py_ssize_t m) noexcept nogil:
    """Apply to block v the proxes of the steps since group g's stamp."""
    cdef long long tau
    cdef double a
    if c.params.penalty == SPARSE_GROUP:
        for tau in range(<long long>c.groups.stamp[g] + 1, c.cursor.t + 1):
            if block_norm(v, m) == 0.0:
                return
            prox_sparse_group(v, m, step_threshold(c, tau), c.params.l1_share, group_weight(c, g))
        c.cursor.n_ops += (c.cursor.t - <long long>c.groups.stamp[g]) * m
        return
    a = group_weight(c, g) * (c.cursor.threshold_sum - c.groups.stamp[g])
    if a <= 0.0:
        return
    if c.params.penalty == L1_LINF:
        prox_l1_linf(v, m, a, c.scratch.work)
    else:
        prox_l1_l2(v, m, a)


# FASTPROX_OUT_OF_LINE
cdef inline void group_catch_up(Ctx* c, long long g) noexcept nogil:
    """Bring group g to the current step, once per step; list it as touched."""
    cdef Py_ssize_t m
    cdef double* v
    if c.groups.mark[g] == c.cursor.t + 1:
        return
    c.groups.mark[g] = c.cursor.t + 1
    c.groups.touched[c.groups.n_touched] = g
    c.groups.n_touched += 1
    m = block_size(c, g)
    v = block_get(c, g)
    block_catch_up(c, g, v, m)
    block_put(c, g, v)
    c.groups.stamp[g] = c.cursor.t if c.params.penalty == SPARSE_GROUP else c.cursor.threshold_sum
    if c.params.penalty == SQUARED_GROUP:
        c.groups.norm[g] = block_norm(v, m)
    c.cursor.n_ops += m


cdef inline double group_norm_now(Ctx* c, long long g) noexcept nogil:
    """||W_G|| at the current step of an untouched squared_group block."""
    cdef double n = c.groups.norm[g] - group_weight(c, g) * (c.cursor.threshold_sum - c.groups.stamp[g])
    return n if n > 0.0 else 0.0


# FASTPROX_OUT_OF_LINE
cdef inline void groups_prox_step(Ctx* c) noexcept nogil:
    """This step's prox on every touched group (after their gradient steps); for
    squared_group, the shared threshold from all group norms (a group's threshold
    is d_G times the step's)."""
    cdef double a = c.params.alpha_pen * c.cursor.eta
    cdef double tau
    cdef long long i, g
    cdef Py_ssize_t m
    cdef double* v
    if c.params.penalty == L1_L2 or c.params.penalty == L1_LINF:
        # Left to the next catch-up: stamped at the step before, a touched group's
        # block takes this step's threshold in the same single prox as the next ones
        # (Proposition 11), so each step proxes a group at most once.
        c.cursor.threshold_sum += a
        c.groups.n_touched = 0
        return
    if c.params.penalty == SQUARED_GROUP:
        for i in range(c.groups.n_touched):
            g = c.groups.touched[i]
            c.groups.norm[g] = block_norm(block_get(c, g), block_size(c, g))
            c.groups.stamp[g] = c.cursor.threshold_sum
        for g in range(c.groups.n_groups):
            c.groups.norm_now[g] = group_norm_now(c, g)
        c.cursor.n_ops += c.groups.n_groups
        a = squared_group_tau(c.groups.norm_now, c.groups.weight, c.groups.n_groups, a, c.scratch.work)
    for i in range(c.groups.n_touched):
        g = c.groups.touched[i]
        m = block_size(c, g)
        v = block_get(c, g)
        group_prox(c, g, v, m, a)
        block_put(c, g, v)
        if c.params.penalty == SQUARED_GROUP:
            c.groups.norm[g] = block_norm(v, m)
        c.groups.stamp[g] = c.cursor.t + 1 if c.params.penalty == SPARSE_GROUP else c.cursor.threshold_sum + a
        c.cursor.n_ops += m
    c.cursor.threshold_sum += a
    c.groups.n_touched = 0


cdef inline void groups_rebase(Ctx* c) noexcept nogil:
    """Catch every group up and restart the threshold sum at 0 (exact differences)."""
    cdef long long g
    cdef Py_ssize_t m
    cdef double* v
    if c.params.penalty == SPARSE_GROUP:
        return
    for g in range(c.groups.n_groups):
        m = block_size(c, g)
        v = block_get(c, g)
        block_catch_up(c, g, v, m)
        block_put(c, g, v)
        if c.params.penalty == SQUARED_GROUP:
            c.groups.norm[g] = block_norm(v, m)
        c.groups.stamp[g] = 0.0
        c.cursor.n_ops += m
    c.cursor.threshold_sum = 0.0


cdef inline void groups_replay(Ctx* c) noexcept nogil:
    """sparse_group under fobos: replay every group's skipped proxes and stamp it
    current (`Learner.caught_up`)."""
    cdef long long g
    cdef Py_ssize_t m
    cdef double* v
    for g in range(c.groups.n_groups):
        m = block_size(c, g)
        v = block_get(c, g)
        block_catch_up(c, g, v, m)
        block_put(c, g, v)
        c.groups.stamp[g] = c.cursor.t


cdef inline long long block_feature(Ctx* c, long long g, Py_ssize_t i) noexcept nogil:
    """The feature of entry i of group g's gathered block."""
    if c.groups.feature_group == NULL:
        return g
    return c.groups.members[c.groups.member_start[g] + i // c.params.n_outputs]


# FASTPROX_OUT_OF_LINE
cdef inline void block_copy(Ctx* c, long long g, double* v, int field) noexcept nogil:
    """Gather one field of group g's entries into v (the state is left as it is)."""
    cdef Py_ssize_t i
    for i in range(block_size(c, g)):
        v[i] = c.arrays.state[block_feature(c, g, i) * c.layout.width
                              + (i % c.params.n_outputs) * c.layout.n_entry_fields + field]


# FASTPROX_OUT_OF_LINE
cdef inline void rda_block_weights(Ctx* c, long long g, double* v, Py_ssize_t m) noexcept nogil:
    """Gradient sums -> weights, in place: W = prox_{T alpha r / beta}(-S / beta)."""
    cdef Py_ssize_t i
    if c.params.schedule == ADAGRAD:
        block_copy(c, g, c.scratch.block_beta, RDA_G)
        for i in range(m):
            c.scratch.block_beta[i] = (c.params.delta + sqrt(c.scratch.block_beta[i])) / c.params.eta0
        adagrad_block_weights(c, v, c.scratch.block_beta, m, group_weight(c, g))
        return
    if c.dual.beta <= 0.0:
        for i in range(m):
            v[i] = 0.0
        return
    for i in range(m):
        v[i] = -v[i] / c.dual.beta
    group_prox(c, g, v, m, c.cursor.t * c.params.alpha_pen / c.dual.beta)


# FASTPROX_OUT_OF_LINE
cdef inline void rda_group_weights(Ctx* c, long long g) noexcept nogil:
    """Cache the current weights of group g's features, once per step."""
    if c.groups.mark[g] == c.cursor.t + 1:
        return
    c.groups.mark[g] = c.cursor.t + 1
    cache_group_weights(c, g)
    c.cursor.n_ops += block_size(c, g)


cdef inline double* block_now(Ctx* c, long long g, Py_ssize_t m) noexcept nogil:
    """Group g's m weights at the current step, gathered into c.scratch.block, the state
    left as it is (under fobos the catch-up applied to the copy)."""
    block_copy(c, g, c.scratch.block, RDA_S)    # (FOBOS_W under fobos: both 0)
    if c.params.update == RDA:
        rda_block_weights(c, g, c.scratch.block, m)
    else:
        block_catch_up(c, g, c.scratch.block, m)
    return c.scratch.block


# FASTPROX_OUT_OF_LINE
cdef inline void cache_group_weights(Ctx* c, long long g) noexcept nogil:
    """Group g's weights at the current step (`block_now`) into
    c.scratch.group_weights_now, feature j's output k at j K + k: rda's cache of the
    step (`rda_group_weights`), and a row's margins between steps (`group_margins`)."""
    cdef Py_ssize_t i, m = block_size(c, g)
    cdef double* v = block_now(c, g, m)
    for i in range(m):
        c.scratch.group_weights_now[block_feature(c, g, i) * c.params.n_outputs + i % c.params.n_outputs] = v[i]


cdef inline double rda_grouped_weight(Ctx* c, double* row, int k) noexcept nogil:
    """w_{t,jk} under rda with a group penalty (unpenalized features: -s / beta)."""
    cdef long long j = (row - c.arrays.state) // c.layout.width
    cdef double beta = c.dual.beta
    if group_of(c, j) >= 0:
        return c.scratch.group_weights_now[j * c.params.n_outputs + k]
    if c.params.schedule == ADAGRAD:
        beta = (c.params.delta + sqrt(row[k * c.layout.n_entry_fields + RDA_G])) / c.params.eta0
    return -row[k * c.layout.n_entry_fields + RDA_S] / beta if beta > 0.0 else 0.0


cdef inline double ungrouped_weight(Ctx* c, long long j, int k) noexcept nogil:
    """Feature j's weight for output k where j belongs to no group (group id -1, left
    unpenalized), as `groups_materialize` reads it."""
    if c.params.update == RDA:
        return rda_grouped_weight(c, c.arrays.state + j * c.layout.width, k)
    return c.arrays.state[j * c.layout.width + k + FOBOS_W]


cdef inline void groups_materialize(Ctx* c, double* out) noexcept nogil:
    """out (K, d) = the weights at the current step, leaving the state as it is."""
    cdef long long g, j, k
    cdef Py_ssize_t i, m
    cdef double* v
    for j in range(c.params.n_features):
        for k in range(c.params.n_outputs):
            out[k * c.params.n_features + j] = ungrouped_weight(c, j, k)
    for g in range(c.groups.n_groups):
        m = block_size(c, g)
        v = block_now(c, g, m)
        for i in range(m):
            out[(i % c.params.n_outputs) * c.params.n_features + block_feature(c, g, i)] = v[i]


cdef inline void adagrad_block_weights(Ctx* c, double* v, const double* beta, Py_ssize_t m,
                                double weight) noexcept nogil:
    """Gradient sums -> weights, in place, under rda with per-entry beta (AdaGrad);
    `weight` is the group's d_G (on sparse_group's group part only)."""
    cdef Py_ssize_t i
    cdef double a = c.cursor.t * c.params.alpha_pen
    for i in range(m):
        v[i] = -v[i]
    if c.params.penalty == L1_LINF:
        adagrad_linf_shrink(v, beta, m, a * weight, c.scratch.work)
        return
    if c.params.penalty == SPARSE_GROUP:
        for i in range(m):
            v[i] = soft_threshold(v[i], a * c.params.l1_share)
        a *= 1.0 - c.params.l1_share
    adagrad_group_shrink(v, beta, m, a * weight)
