# Forward-backward for a linear-chain CRF (the contract's `loss="log"` over
# sequences): log Z and the item and pair marginals, in log space with the maxima
# subtracted, so that no exp overflows whatever the scores' magnitude.
from libc.math cimport exp, log, isfinite

from fastprox._kernel.lanes.lanes cimport lanes_t

# A log-sum-exp taken in product form (a sum of products of exps, each at most 1) is
# trusted while the sum stays at or above exp(-FB_SAFE) ~ 5e-131: far above the
# smallest normal double, so the terms that underflowed weigh less than 1e-170 of
# it; below, the direct log-sum-exp is taken.
cdef enum:
    FB_SAFE = 300


cdef inline double log_sum_exp(const double* a, Py_ssize_t sa, const double* b, Py_ssize_t sb,
                               Py_ssize_t K) noexcept nogil:
    """``log sum_k exp(a[k*sa] + b[k*sb])`` over k < K (K >= 1), the maximum
    subtracted before the exps (the first maximum's term is exp(0) = 1, not computed); an
    infinite maximum is returned as it is."""
    cdef Py_ssize_t k, top = 0
    cdef double v, m = a[0] + b[0], total = 0.0
    for k in range(1, K):
        v = a[k * sa] + b[k * sb]
        if v > m:
            m = v
            top = k
    if not isfinite(m):
        return m
    for k in range(K):
        total += 1.0 if k == top else exp((a[k * sa] + b[k * sb]) - m)
    return m + log(total)


cdef inline double _exp_shifted(const double* v, Py_ssize_t K, double* out) noexcept nogil:
    """out[k] = exp(v[k] - max v), returning max v. Where the maximum is finite, the first
    one's exp is exp(0) = 1, not computed: one libm call fewer a row, the same bits."""
    cdef Py_ssize_t k, top = 0
    cdef double m = v[0]
    for k in range(1, K):
        if v[k] > m:
            m = v[k]
            top = k
    if isfinite(m):
        out[top] = 1.0
    else:
        top = K
    for k in range(top):
        out[k] = exp(v[k] - m)
    for k in range(top + 1, K):
        out[k] = exp(v[k] - m)
    return m


cdef inline double _sum(const double* x, Py_ssize_t size) noexcept nogil:
    """x[0] + ... + x[size-1]."""
    cdef Py_ssize_t k
    cdef double total = 0.0
    for k in range(size):
        total += x[k]
    return total


cdef inline void _scale(double* x, Py_ssize_t size, double factor) noexcept nogil:
    """x *= factor."""
    cdef Py_ssize_t k
    for k in range(size):
        x[k] = x[k] * factor


cdef inline Py_ssize_t forward_backward_work(Py_ssize_t n, Py_ssize_t K) noexcept nogil:
    """The double scratch `forward_backward` needs for n items and K labels: 6*n*K + 4*K*K + K."""
    return 6 * n * K + 4 * K * K + K


cdef inline double forward_backward(const double* E, const double* A, const double* s, const double* e,
                                    Py_ssize_t n, Py_ssize_t K, double* work, double* mu, double* xi,
                                    const lanes_t* lanes) noexcept nogil:
    """Return log Z and write the marginals of the CRF ``p(y') = exp(score(y')) / Z``.

    Parameters
    ----------
    E, A, s, e, n, K : as `viterbi.viterbi` (E n*K, A K*K, s and e K, K >= 1).
    work : scratch, `forward_backward_work(n, K)` doubles.
    mu : output, n*K doubles: mu[i*K + k] = P(y'_i = k); the start marginals are
        mu[0:K], the stop marginals mu[(n-1)*K:n*K].
    xi : output, K*K doubles: xi[j*K + k] = sum over i >= 1 of P(y'_{i-1} = j, y'_i = k),
        summing to n - 1.
    lanes : the instruction set whose passes take the K x K products (`_kernels.chosen_lanes`:
        `_kernel/lanes/chain.h`); every set gives the same bits.

    Returns
    -------
    log Z = log sum_{y'} exp(score(y')); 0.0 for n = 0 (the empty labelling; xi is
    zero). Where log Z is not finite (the scores' sums left the double range) mu and
    xi are zero.

    Notes
    -----
    ``alpha_0(k) = E[0, k] + s[k]``, ``alpha_i(k) = log sum_j exp(alpha_{i-1}(j) +
    A[j, k]) + E[i, k]``, ``beta_{n-1}(k) = e[k]``, ``beta_i(j) = log sum_k
    exp(A[j, k] + E[i+1, k] + beta_{i+1}(k))``. Each log-sum-exp is a product with
    ``Ahat = exp(A - max A)``: ``V[i, k] = sum_j P[i, j] Ahat[j, k]`` with
    ``P[i, j] = exp(alpha_{i-1}(j) - max)``, and ``W[i, j] = sum_k Ahat[j, k] Q[i+1, k]``
    with ``Q[i, k] = exp(E[i, k] + beta_i(k) - max)``: K exps an item, not K^2, exact
    as long as the sum stays above exp(-FB_SAFE), which holds whenever A's entries
    lie within FB_SAFE of each other; a sum below falls back to the direct
    log-sum-exp. The pair marginals of positions i-1 and i are
    ``P[i, j] Ahat[j, k] Q[i, k] / z_i`` with ``z_i = sum_k V[i, k] Q[i, k]``, their
    own total (equal to Z up to rounding that at large magnitudes would skew them),
    so every position's pair block and every row of mu (``V[i, k] Q[i, k] / z_i``;
    ``P[1, j] W[0, j] / z_1`` for item 0) sums to 1; a position whose z_i falls
    below exp(-FB_SAFE) takes its block from the log scores directly. O(n K^2) time;
    O(n K + K^2) exps and logs when A's entries lie within FB_SAFE of each other, up
    to O(n K^2) otherwise. Finite inputs whose sums stay in the double range give
    finite outputs. The products V, W and ``M = sum_i (P[i] / z_i) Q[i]^T`` run in lanes
    across k, each sum in the scalar loop's order: i (or j) outer, for every k.
    """
    cdef Py_ssize_t i, j, k, run = 0
    cdef double G, logZ, tiny, m, z, c, off
    cdef double* alpha = work                  # n*K: the forward log scores
    cdef double* beta = alpha + n * K          # n*K: the backward log scores
    cdef double* P = beta + n * K              # n*K: row i >= 1, exp(alpha_{i-1} - max)
    cdef double* Q = P + n * K                 # n*K: row i >= 1, exp(E[i] + beta_i - max)
    cdef double* V = Q + n * K                 # n*K: row i >= 1, sum_j P[i, j] Ahat[j, :]
    cdef double* W = V + n * K                 # n*K: row i < n-1, sum_k Ahat[:, k] Q[i+1, k]
    cdef double* Ahat = W + n * K              # K*K: exp(A - max A)
    cdef double* AhatT = Ahat + K * K          # K*K: its transpose
    cdef double* M = AhatT + K * K             # K*K: sum_i P[i, j] Q[i, k] / z_i
    cdef double* block = M + K * K             # K*K: one position's pair marginals, directly
    cdef double* v = block + K * K             # K
    cdef const double* prv
    cdef double* cur
    cdef double* row
    for k in range(K * K):
        xi[k] = 0.0
    if n == 0:
        return 0.0
    G = _exp_shifted(A, K * K, Ahat)
    for j in range(K):
        for k in range(K):
            AhatT[k * K + j] = Ahat[j * K + k]
    tiny = exp(-<double>FB_SAFE)
    for k in range(K):
        alpha[k] = E[k] + s[k]
    for i in range(1, n):
        prv = alpha + (i - 1) * K
        cur = alpha + i * K
        off = _exp_shifted(prv, K, P + i * K) + G
        lanes.chain_combine(P + i * K, 1, Ahat, K, K, V + i * K, True, 1, 0)
        for k in range(K):
            if V[i * K + k] >= tiny:
                cur[k] = (log(V[i * K + k]) + off) + E[i * K + k]
            else:
                cur[k] = log_sum_exp(prv, 1, A + k, K, K) + E[i * K + k]
    logZ = log_sum_exp(alpha + (n - 1) * K, 1, e, 1, K)
    if not isfinite(logZ):
        for k in range(n * K):
            mu[k] = 0.0
        return logZ
    if n == 1:
        for k in range(K):
            v[k] = alpha[k] + e[k]
        _exp_shifted(v, K, mu)
        _scale(mu, K, 1.0 / _sum(mu, K))
        return logZ
    for k in range(K):
        beta[(n - 1) * K + k] = e[k]
    for i in range(n - 2, -1, -1):
        cur = beta + i * K
        for k in range(K):
            v[k] = E[(i + 1) * K + k] + beta[(i + 1) * K + k]
        off = _exp_shifted(v, K, Q + (i + 1) * K) + G
        lanes.chain_combine(Q + (i + 1) * K, 1, AhatT, K, K, W + i * K, True, 1, 0)
        for j in range(K):
            if W[i * K + j] >= tiny:
                cur[j] = log(W[i * K + j]) + off
            else:
                cur[j] = log_sum_exp(A + j * K, 1, v, 1, K)
    for k in range(K * K):
        M[k] = 0.0
    for i in range(1, n):
        cur = mu + i * K
        z = 0.0
        for k in range(K):
            cur[k] = V[i * K + k] * Q[i * K + k]
            z += cur[k]
        if z >= tiny:
            z = 1.0 / z
            _scale(cur, K, z)
            if i == 1:
                for j in range(K):
                    mu[j] = (P[K + j] * W[j]) * z
            _scale(P + i * K, K, z)         # the block's row weights P[i, j] / z_i
            if run == 0:
                run = i
            continue
        if run:                             # M += the run of positions before, in their order
            lanes.chain_combine(P + run * K, K, Q + run * K, i - run, K, M, False, K, 1)
            run = 0
        # A position whose product form underflows: its block from the log scores.
        prv = alpha + (i - 1) * K
        m = (prv[0] + A[0]) + (E[i * K] + beta[i * K])
        for j in range(K):
            for k in range(K):
                c = (prv[j] + A[j * K + k]) + (E[i * K + k] + beta[i * K + k])
                block[j * K + k] = c
                if c > m:
                    m = c
        for k in range(K * K):
            block[k] = exp(block[k] - m)
        _scale(block, K * K, 1.0 / _sum(block, K * K))
        for k in range(K):
            cur[k] = 0.0
        for j in range(K):
            row = block + j * K
            if i == 1:
                mu[j] = _sum(row, K)
            for k in range(K):
                xi[j * K + k] += row[k]
                cur[k] += row[k]
    if run:
        lanes.chain_combine(P + run * K, K, Q + run * K, n - run, K, M, False, K, 1)
    for k in range(K * K):
        xi[k] += Ahat[k] * M[k]
    return logZ
