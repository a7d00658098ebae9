# Group penalties under FOBOS with a scalar schedule, and under RDA with the
# invsqrt and adagrad schedules (included by _kernels.pyx).
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

cdef inline long long group_of(Ctx* c, long long j) noexcept nogil:
    return c.group[j] if c.group != NULL else j


cdef inline double group_weight(Ctx* c, long long g) noexcept nogil:
    """d_G, the factor of group g's threshold (1 without group_weights)."""
    return c.gweight[g] if c.gweight != NULL else 1.0


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
            prox_sparse_group(v, m, step_threshold(c, tau), c.rho1, group_weight(c, g))
        c.n_ops += (c.t - <long long>c.gstamp[g]) * m
        return
    a = group_weight(c, g) * (c.Q - c.gstamp[g])
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
    cdef double n = c.gnorm[g] - group_weight(c, g) * (c.Q - c.gstamp[g])
    return n if n > 0.0 else 0.0


cdef void groups_prox_step(Ctx* c) noexcept nogil:
    """This step's prox on every touched group (after their gradient steps); for
    squared_group, the shared threshold from all group norms (a group's threshold
    is d_G times the step's)."""
    cdef double a = c.alpha_pen * c.eta
    cdef double tau
    cdef long long i, g
    cdef Py_ssize_t m
    cdef double* v
    if c.penalty == L1_L2 or c.penalty == L1_LINF:
        # Left to the next catch-up: stamped at the step before, a touched group's
        # block takes this step's threshold in the same single prox as the next ones
        # (Proposition 11), so each step proxes a group at most once.
        c.Q += a
        c.n_tg = 0
        return
    if c.penalty == SQUARED_GROUP:
        for i in range(c.n_tg):
            g = c.gtouched[i]
            c.gnorm[g] = block_norm(block_get(c, g), block_size(c, g))
            c.gstamp[g] = c.Q
        for g in range(c.n_groups):
            c.gnow[g] = group_norm_now(c, g)
        c.n_ops += c.n_groups
        a = squared_group_tau(c.gnow, c.gweight, c.n_groups, a, c.work)
    for i in range(c.n_tg):
        g = c.gtouched[i]
        m = block_size(c, g)
        v = block_get(c, g)
        if c.penalty == L1_LINF:
            prox_l1_linf(v, m, a * group_weight(c, g), c.work)
        elif c.penalty == SPARSE_GROUP:
            prox_sparse_group(v, m, a, c.rho1, group_weight(c, g))
        else:
            prox_l1_l2(v, m, a * group_weight(c, g))
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


cdef void block_copy(Ctx* c, long long g, double* v, int field) noexcept nogil:
    """Gather one field of group g's entries into v (the state is left as it is)."""
    cdef Py_ssize_t i
    for i in range(block_size(c, g)):
        v[i] = c.state[block_feature(c, g, i) * c.width + (i % c.K) * c.n_entry + field]


cdef void rda_block_weights(Ctx* c, long long g, double* v, Py_ssize_t m) noexcept nogil:
    """Gradient sums -> weights, in place: W = prox_{T alpha r / beta}(-S / beta)."""
    cdef Py_ssize_t i
    cdef double a
    if c.schedule == ADAGRAD:
        block_copy(c, g, c.gbeta, 1)
        for i in range(m):
            c.gbeta[i] = (c.delta + sqrt(c.gbeta[i])) / c.eta0
        adagrad_block_weights(c, v, c.gbeta, m, group_weight(c, g))
        return
    if c.wbeta <= 0.0:
        for i in range(m):
            v[i] = 0.0
        return
    for i in range(m):
        v[i] = -v[i] / c.wbeta
    a = c.t * c.alpha_pen / c.wbeta
    if c.penalty == L1_LINF:
        prox_l1_linf(v, m, a * group_weight(c, g), c.work)
    elif c.penalty == SPARSE_GROUP:
        prox_sparse_group(v, m, a, c.rho1, group_weight(c, g))
    else:
        prox_l1_l2(v, m, a * group_weight(c, g))


cdef void rda_group_weights(Ctx* c, long long g) noexcept nogil:
    """Cache the current weights of group g's features, once per step."""
    cdef Py_ssize_t i, m = block_size(c, g)
    if c.gmark[g] == c.t + 1:
        return
    c.gmark[g] = c.t + 1
    block_copy(c, g, c.block, 0)
    rda_block_weights(c, g, c.block, m)
    for i in range(m):
        c.wcache[block_feature(c, g, i) * c.K + i % c.K] = c.block[i]
    c.n_ops += m


cdef inline double rda_grouped_weight(Ctx* c, double* row, int k) noexcept nogil:
    """w_{t,jk} under rda with a group penalty (unpenalized features: -s / beta)."""
    cdef long long j = (row - c.state) // c.width
    cdef double beta = c.wbeta
    if group_of(c, j) >= 0:
        return c.wcache[j * c.K + k]
    if c.schedule == ADAGRAD:
        beta = (c.delta + sqrt(row[k * c.n_entry + 1])) / c.eta0
    return -row[k * c.n_entry] / beta if beta > 0.0 else 0.0


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
        block_copy(c, g, c.block, 0)
        if c.update == RDA:
            rda_block_weights(c, g, c.block, m)
        else:
            block_catch_up(c, g, c.block, m)
        for i in range(m):
            out[(i % c.K) * c.d + block_feature(c, g, i)] = c.block[i]


# ------------------------------------------------------------------ rda + adagrad
# With per-entry beta_i the block problem  min sum_i (S_i w_i + beta_i w_i^2 / 2) + c r(w),
# c = T alpha, is no longer a scaled prox, but it stays one-dimensional:
# - l1_l2: w = 0 if ||S|| <= c, else w_i = -S_i nu / (beta_i nu + c) with nu = ||w||
#   the root of sum_i S_i^2 / (beta_i nu + c)^2 = 1 (decreasing and convex in nu:
#   Newton from nu = 0 climbs to it monotonically);
# - sparse_group: the same on soft(S, c rho) with c (1 - rho);
# - l1_linf: w = 0 if ||S||_1 <= c, else w_i = -sign(S_i) min(|S_i| / beta_i, u) with u
#   the root of sum_i max(0, |S_i| - beta_i u) = c, piecewise linear: exact after sorting.

cdef void adagrad_group_shrink(double* v, const double* beta, Py_ssize_t m, double c) noexcept nogil:
    """v <- argmin sum_i (-v_i w_i + beta_i w_i^2 / 2) + c ||w||_2, in place (v = -S)."""
    cdef Py_ssize_t i, it
    cdef double nu = 0.0, step, psi, dpsi, den, s2 = 0.0
    for i in range(m):
        s2 += v[i] * v[i]
    if c <= 0.0:
        for i in range(m):
            v[i] = v[i] / beta[i] if beta[i] > 0.0 else 0.0
        return
    if sqrt(s2) <= c:
        for i in range(m):
            v[i] = 0.0
        return
    for it in range(200):
        psi, dpsi = -1.0, 0.0
        for i in range(m):
            den = beta[i] * nu + c
            psi += v[i] * v[i] / (den * den)
            dpsi -= 2.0 * v[i] * v[i] * beta[i] / (den * den * den)
        if dpsi == 0.0:
            break
        step = -psi / dpsi
        if not step > 0.0 or nu + step == nu:
            break
        nu += step
    for i in range(m):
        v[i] = v[i] * nu / (beta[i] * nu + c)


cdef void adagrad_linf_shrink(double* v, const double* beta, Py_ssize_t m, double c, double* work) noexcept nogil:
    """v <- argmin sum_i (-v_i w_i + beta_i w_i^2 / 2) + c ||w||_inf, in place (v = -S)."""
    cdef Py_ssize_t i, r, n = 0
    cdef double l1 = 0.0, sum_s = 0.0, sum_b = 0.0, u = 0.0
    for i in range(m):
        l1 += fabs(v[i])
    if l1 <= c:
        for i in range(m):
            v[i] = 0.0
        return
    for i in range(m):
        if beta[i] > 0.0 and v[i] != 0.0:
            work[3 * n] = fabs(v[i]) / beta[i]
            work[3 * n + 1] = fabs(v[i])
            work[3 * n + 2] = beta[i]
            n += 1
    qsort(work, n, 3 * sizeof(double), _descending)    # by each triple's first value
    for r in range(n):
        sum_s += work[3 * r + 1]
        sum_b += work[3 * r + 2]
        u = (sum_s - c) / sum_b
        if r + 1 == n or u >= work[3 * (r + 1)]:
            break
    for i in range(m):
        if beta[i] > 0.0:
            v[i] = copysign(min(fabs(v[i]) / beta[i], u), v[i])
        else:
            v[i] = 0.0


cdef void adagrad_block_weights(Ctx* c, double* v, const double* beta, Py_ssize_t m,
                                double weight) noexcept nogil:
    """Gradient sums -> weights, in place, under rda with per-entry beta (AdaGrad);
    `weight` is the group's d_G (on sparse_group's group part only)."""
    cdef Py_ssize_t i
    cdef double a = c.t * c.alpha_pen
    for i in range(m):
        v[i] = -v[i]
    if c.penalty == L1_LINF:
        adagrad_linf_shrink(v, beta, m, a * weight, c.work)
        return
    if c.penalty == SPARSE_GROUP:
        for i in range(m):
            v[i] = soft_threshold(v[i], a * c.rho1)
        a *= 1.0 - c.rho1
    adagrad_group_shrink(v, beta, m, a * weight)
