"""The forward-backward kernel's algorithm (`_kernel/decoders/forward_backward.pxd`) one
scalar operation at a time in Python floats (IEEE doubles, no fused operations; math.exp
and math.log call the C library's, as the kernel does): the bits the kernel must give
with its products in lanes, in every instruction set (tests/test_decoders.py). Slow: for
short chains only. Each product sum runs j (or i) outer, as the kernel's loops before
the lanes did."""
import math

FB_SAFE = 300


def _log_sum_exp(terms):
    m = terms[0]
    for v in terms[1:]:
        if v > m:
            m = v
    if not math.isfinite(m):
        return m
    total = 0.0
    for v in terms:
        total += math.exp(v - m)
    return m + math.log(total)


def _exp_shifted(v):
    m = v[0]
    for x in v[1:]:
        if x > m:
            m = x
    return m, [math.exp(x - m) for x in v]


def _combine(weights, rows, K):
    out = [weights[0] * rows[0][k] for k in range(K)]
    for j in range(1, len(weights)):
        for k in range(K):
            out[k] += weights[j] * rows[j][k]
    return out


def forward_backward(E, A, s, e):
    """(log Z, mu, xi) as lists of floats (mu n x K, xi K x K)."""
    n, K = len(E), len(s)
    xi = [[0.0] * K for _ in range(K)]
    if n == 0:
        return 0.0, [], xi
    G, flat = _exp_shifted([A[j][k] for j in range(K) for k in range(K)])
    Ahat = [flat[j * K:(j + 1) * K] for j in range(K)]
    AhatT = [[Ahat[j][k] for j in range(K)] for k in range(K)]
    tiny = math.exp(-float(FB_SAFE))
    alpha = [[E[0][k] + s[k] for k in range(K)]]
    P, V = [None] * n, [None] * n
    for i in range(1, n):
        prv = alpha[i - 1]
        m, P[i] = _exp_shifted(prv)
        off = m + G
        V[i] = _combine(P[i], Ahat, K)
        alpha.append([(math.log(V[i][k]) + off) + E[i][k] if V[i][k] >= tiny
                      else _log_sum_exp([prv[j] + A[j][k] for j in range(K)]) + E[i][k] for k in range(K)])
    logZ = _log_sum_exp([alpha[n - 1][k] + e[k] for k in range(K)])
    if not math.isfinite(logZ):
        return logZ, [[0.0] * K for _ in range(n)], xi
    if n == 1:
        _, mu0 = _exp_shifted([alpha[0][k] + e[k] for k in range(K)])
        total = 0.0
        for x in mu0:
            total += x
        return logZ, [[x * (1.0 / total) for x in mu0]], xi
    beta, Q, W = [None] * n, [None] * n, [None] * n
    beta[n - 1] = list(e)
    for i in range(n - 2, -1, -1):
        v = [E[i + 1][k] + beta[i + 1][k] for k in range(K)]
        m, Q[i + 1] = _exp_shifted(v)
        off = m + G
        W[i] = _combine(Q[i + 1], AhatT, K)
        beta[i] = [math.log(W[i][j]) + off if W[i][j] >= tiny
                   else _log_sum_exp([A[j][k] + v[k] for k in range(K)]) for j in range(K)]
    mu = [[0.0] * K for _ in range(n)]
    M = [[0.0] * K for _ in range(K)]
    for i in range(1, n):
        cur = [V[i][k] * Q[i][k] for k in range(K)]
        z = 0.0
        for x in cur:
            z += x
        if z >= tiny:
            z = 1.0 / z
            mu[i] = [x * z for x in cur]
            if i == 1:
                mu[0] = [(P[1][j] * W[0][j]) * z for j in range(K)]
            for j in range(K):
                a = P[i][j] * z
                for k in range(K):
                    M[j][k] += a * Q[i][k]
            continue
        prv = alpha[i - 1]
        block = [[(prv[j] + A[j][k]) + (E[i][k] + beta[i][k]) for k in range(K)] for j in range(K)]
        m = block[0][0]
        for j in range(K):
            for k in range(K):
                if block[j][k] > m:
                    m = block[j][k]
        block = [[math.exp(c - m) for c in row] for row in block]
        total = 0.0
        for row in block:
            for c in row:
                total += c
        block = [[c * (1.0 / total) for c in row] for row in block]
        cur = [0.0] * K
        for j in range(K):
            if i == 1:
                total = 0.0
                for c in block[j]:
                    total += c
                mu[0][j] = total
            for k in range(K):
                xi[j][k] += block[j][k]
                cur[k] += block[j][k]
        mu[i] = cur
    for j in range(K):
        for k in range(K):
            xi[j][k] += Ahat[j][k] * M[j][k]
    return logZ, mu, xi
