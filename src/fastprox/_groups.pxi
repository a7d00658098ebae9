# Group penalties under FOBOS with a scalar schedule, and under RDA with the
# invsqrt schedule (included by _kernels.pyx).
#
# A group is a block of W: one feature's row (the default, p = d) or the rows
# of the features a user maps to the same id. Entries hold plain weights; each
# group carries a stamp, and an untouched group is caught up when one of its
# features is read:
#
# - l1_l2, l1_linf: successive proxes add up (FOBOS Proposition 11), so the
#   stamp is the threshold sum Q = alpha sum eta_tau and one prox with
#   Q - Q_s catches up.
# - squared_group: every step shrinks all group norms by the same tau_t
#   (Martins et al., Alg. 2), which scales an untouched block so that its norm
#   drops by exactly tau_t: the stamp is the sum of the tau, and the catch-up is
#   the l1_l2 prox with the summed tau. Each step needs every group's norm,
#   known in O(1) from its stored norm and stamp: O(p log p) per step.
# - sparse_group: its proxes do not compose; the stamp is the step index and
#   the catch-up replays the skipped proxes on the block (O(k) for k skipped
#   steps, as the contract says), stopping once the block is zero.
#
# Under RDA a block's weights are a closed form of its gradient sums S_G:
# W_G = prox of (T alpha / beta_T) r at -S_G / beta_T. They are computed once per
# step for each touched group into a cache, and on reading the model.

cdef inline long long group_of(Ctx* c, long long j) noexcept nogil:
    return c.group[j] if c.group != NULL else j


cdef inline Py_ssize_t block_size(Ctx* c, long long g) noexcept nogil:
    if c.group == NULL:
        return c.K
    return (c.gptr[g + 1] - c.gptr[g]) * c.K


cdef inline double* block_get(Ctx* c, long long g) noexcept nogil:
    """The group's weights as a contiguous buffer: in place for row groups,
    gathered into scratch for user groups (write back with `block_put`)."""
    cdef long long i, k, m = 0
    if c.group == NULL:
        return c.state + g * c.width
    for i in range(c.gptr[g], c.gptr[g + 1]):
        for k in range(c.K):
            c.block[m] = c.state[c.gmem[i] * c.width + k]
            m += 1
    return c.block


cdef inline void block_put(Ctx* c, long long g, const double* v) noexcept nogil:
    cdef long long i, k, m = 0
    if c.group == NULL:
        return
    for i in range(c.gptr[g], c.gptr[g + 1]):
        for k in range(c.K):
            c.state[c.gmem[i] * c.width + k] = v[m]
            m += 1


cdef inline double step_threshold(Ctx* c, long long tau) noexcept nogil:
    """alpha * eta_tau of a scalar schedule (sparse_group's replay needs past steps)."""
    if c.schedule == CONSTANT:
        return c.alpha_pen * c.eta0
    if c.schedule == INVSQRT:
        return c.alpha_pen * c.eta0 / sqrt(<double>tau)
    return c.alpha_pen * c.eta0 / <double>tau


cdef void block_catch_up(Ctx* c, long long g, double* v, Py_ssize_t m) noexcept nogil:
    """Apply to block v the proxes of the steps since group g's stamp."""
    cdef long long tau
    cdef double a
    if c.penalty == SPARSE_GROUP:
        for tau in range(<long long>c.gstamp[g] + 1, c.t + 1):
            if block_norm(v, m) == 0.0:
                return
            prox_sparse_group(v, m, step_threshold(c, tau), c.rho1)
        c.n_ops += (c.t - <long long>c.gstamp[g]) * m
        return
    a = c.Q - c.gstamp[g]
    if a <= 0.0:
        return
    if c.penalty == L1_LINF:
        prox_l1_linf(v, m, a, c.work)
    else:
        prox_l1_l2(v, m, a)


cdef void group_catch_up(Ctx* c, long long g) noexcept nogil:
    """Bring group g to the current step, once per step; list it as touched."""
    cdef Py_ssize_t m
    cdef double* v
    if c.gmark[g] == c.t + 1:
        return
    c.gmark[g] = c.t + 1
    c.gtouched[c.n_tg] = g
    c.n_tg += 1
    m = block_size(c, g)
    v = block_get(c, g)
    block_catch_up(c, g, v, m)
    block_put(c, g, v)
    c.gstamp[g] = c.t if c.penalty == SPARSE_GROUP else c.Q
    if c.penalty == SQUARED_GROUP:
        c.gnorm[g] = block_norm(v, m)
    c.n_ops += m


cdef inline double group_norm_now(Ctx* c, long long g) noexcept nogil:
    """||W_G|| at the current step of an untouched squared_group block."""
    cdef double n = c.gnorm[g] - (c.Q - c.gstamp[g])
    return n if n > 0.0 else 0.0


cdef void groups_prox_step(Ctx* c) noexcept nogil:
    """This step's prox on every touched group (after their gradient steps); for
    squared_group, the shared threshold from all group norms."""
    cdef double a = c.alpha_pen * c.eta
    cdef double tau
    cdef long long i, g
    cdef Py_ssize_t m
    cdef double* v
    if c.penalty == SQUARED_GROUP:
        for i in range(c.n_tg):
            g = c.gtouched[i]
            c.gnorm[g] = block_norm(block_get(c, g), block_size(c, g))
            c.gstamp[g] = c.Q
        for g in range(c.n_groups):
            c.work[g] = group_norm_now(c, g)
        c.n_ops += c.n_groups
        a = squared_group_tau(c.work, c.n_groups, a, c.work)
    for i in range(c.n_tg):
        g = c.gtouched[i]
        m = block_size(c, g)
        v = block_get(c, g)
        if c.penalty == L1_LINF:
            prox_l1_linf(v, m, a, c.work)
        elif c.penalty == SPARSE_GROUP:
            prox_sparse_group(v, m, a, c.rho1)
        else:
            prox_l1_l2(v, m, a)
        block_put(c, g, v)
        if c.penalty == SQUARED_GROUP:
            c.gnorm[g] = block_norm(v, m)
        c.gstamp[g] = c.t + 1 if c.penalty == SPARSE_GROUP else c.Q + a
        c.n_ops += m
    c.Q += a
    c.n_tg = 0


cdef void groups_rebase(Ctx* c) noexcept nogil:
    """Catch every group up and restart the threshold sum at 0 (exact differences)."""
    cdef long long g
    cdef Py_ssize_t m
    cdef double* v
    if c.penalty == SPARSE_GROUP:
        return
    for g in range(c.n_groups):
        m = block_size(c, g)
        v = block_get(c, g)
        block_catch_up(c, g, v, m)
        block_put(c, g, v)
        if c.penalty == SQUARED_GROUP:
            c.gnorm[g] = block_norm(v, m)
        c.gstamp[g] = 0.0
        c.n_ops += m
    c.Q = 0.0


cdef inline long long block_feature(Ctx* c, long long g, Py_ssize_t i) noexcept nogil:
    """The feature of entry i of group g's gathered block."""
    return g if c.group == NULL else c.gmem[c.gptr[g] + i // c.K]


cdef void block_copy(Ctx* c, long long g, double* v) noexcept nogil:
    """Gather group g's stored entries into v (the state is left as it is)."""
    cdef Py_ssize_t i
    for i in range(block_size(c, g)):
        v[i] = c.state[block_feature(c, g, i) * c.width + i % c.K]


cdef void rda_block_weights(Ctx* c, double* v, Py_ssize_t m) noexcept nogil:
    """Gradient sums -> weights, in place: W = prox_{T alpha r / beta}(-S / beta)."""
    cdef Py_ssize_t i
    cdef double a
    if c.wbeta <= 0.0:
        for i in range(m):
            v[i] = 0.0
        return
    for i in range(m):
        v[i] = -v[i] / c.wbeta
    a = c.t * c.alpha_pen / c.wbeta
    if c.penalty == L1_LINF:
        prox_l1_linf(v, m, a, c.work)
    elif c.penalty == SPARSE_GROUP:
        prox_sparse_group(v, m, a, c.rho1)
    else:
        prox_l1_l2(v, m, a)


cdef void rda_group_weights(Ctx* c, long long g) noexcept nogil:
    """Cache the current weights of group g's features, once per step."""
    cdef Py_ssize_t i, m = block_size(c, g)
    if c.gmark[g] == c.t + 1:
        return
    c.gmark[g] = c.t + 1
    block_copy(c, g, c.block)
    rda_block_weights(c, c.block, m)
    for i in range(m):
        c.wcache[block_feature(c, g, i) * c.K + i % c.K] = c.block[i]
    c.n_ops += m


cdef inline double rda_grouped_weight(Ctx* c, double* row, int k) noexcept nogil:
    """w_{t,jk} under rda with a group penalty (unpenalized features: -s / beta)."""
    cdef long long j = (row - c.state) // c.width
    if group_of(c, j) >= 0:
        return c.wcache[j * c.K + k]
    return -row[k] / c.wbeta if c.wbeta > 0.0 else 0.0


cdef void groups_materialize(Ctx* c, double* out) noexcept nogil:
    """out (K, d) = the weights at the current step, leaving the state as it is."""
    cdef long long g, j, k
    cdef Py_ssize_t i, m
    for j in range(c.d):
        for k in range(c.K):
            out[k * c.d + j] = rda_grouped_weight(c, c.state + j * c.width, k) \
                if c.update == RDA else c.state[j * c.width + k]
    for g in range(c.n_groups):
        m = block_size(c, g)
        block_copy(c, g, c.block)
        if c.update == RDA:
            rda_block_weights(c, c.block, m)
        else:
            block_catch_up(c, g, c.block, m)
        for i in range(m):
            out[(i % c.K) * c.d + block_feature(c, g, i)] = c.block[i]
