"""AdaGrad's primal-dual form (rda + adagrad) with group penalties: each block's
weights solve  min sum_i (S_i w_i + beta_i w_i^2 / 2) + T alpha r(w)  with a
per-entry beta_i, which the kernel does by a monotone Newton root-find (l1_l2,
sparse_group) or an exact piecewise-linear solve (l1_linf). The reference here
solves the same problems independently, with scipy's brentq, and runs the
contract eagerly. A group weight d_G multiplies the block's c (sparse_group: its
group part only)."""
import pickle

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings, strategies as st
from scipy.optimize import brentq

from fastprox._kernels import Learner
from tests.support.reference import assert_contract_close
from tests.support.reference_multiclass import random_group_weights


def block_solve(S, beta, c, penalty, rho, weight):
    """argmin_w sum_i S_i w_i + beta_i w_i^2 / 2 + c r(w) for one block of weight d_G."""
    inverse = np.where(beta > 0, -S / np.where(beta > 0, beta, 1), 0.0)
    if penalty == "sparse_group":
        S = np.sign(S) * np.maximum(0, np.abs(S) - c * rho)
        inverse = np.where(beta > 0, -S / np.where(beta > 0, beta, 1), 0.0)
        c, penalty = c * (1 - rho), "l1_l2"
    c = c * weight
    if c == 0:
        return inverse
    if penalty == "l1_l2":
        if np.linalg.norm(S) <= c:
            return np.zeros_like(S)
        excess = lambda nu: np.sum(S ** 2 / (beta * nu + c) ** 2) - 1
        hi = 1.0
        while excess(hi) > 0:
            hi *= 2
        nu = brentq(excess, 0, hi, xtol=1e-300, rtol=8.9e-16, maxiter=1000)
        return -S * nu / (beta * nu + c)
    if np.sum(np.abs(S)) <= c:
        return np.zeros_like(S)
    ok = beta > 0
    excess = lambda u: np.sum(np.maximum(0, np.abs(S[ok]) - beta[ok] * u)) - c
    u = brentq(excess, 0, np.max(np.abs(S[ok]) / beta[ok]), xtol=1e-300, rtol=8.9e-16, maxiter=1000)
    return np.where(ok, -np.sign(S) * np.minimum(np.abs(inverse), u), 0.0)


class EagerRdaAdagradGroups:
    """rda + adagrad with a group penalty and a multinomial loss, every entry every step."""

    def __init__(self, d, K, penalty, loss, alpha, eta0, delta, l1_ratio, groups, group_weights):
        self.K, self.penalty, self.loss = K, penalty, loss
        self.alpha, self.eta0, self.delta, self.rho = alpha, eta0, delta, l1_ratio
        self.ids = np.arange(d) if groups is None else groups
        n_groups = int(self.ids.max(initial=-1)) + 1
        self.weights_of = np.ones(n_groups) if group_weights is None else group_weights
        self.S, self.G = np.zeros((K, d)), np.zeros((K, d))
        self.sb, self.Gb = np.zeros(K), np.zeros(K)
        self.t = 0

    def weights(self):
        beta = (self.delta + np.sqrt(self.G)) / self.eta0
        W = np.where(beta > 0, -self.S / np.where(beta > 0, beta, 1), 0.0)
        for g in np.unique(self.ids[self.ids >= 0]):
            cols = self.ids == g
            block = block_solve(self.S[:, cols].ravel(), beta[:, cols].ravel(), self.t * self.alpha,
                                self.penalty, self.rho, self.weights_of[g])
            W[:, cols] = block.reshape(self.K, -1)
        bb = (self.delta + np.sqrt(self.Gb)) / self.eta0
        return W, np.where(bb > 0, -self.sb / np.where(bb > 0, bb, 1), 0.0)

    def step(self, x, y):
        W, b = self.weights()
        p = W @ x + b
        if self.loss == "log":
            q = np.exp(p - p.max())
            q /= q.sum()
            q[y] -= 1
        else:
            top = int(np.argmax(p + (np.arange(self.K) != y)))
            q = np.zeros(self.K)
            if top != y and p[top] + 1 - p[y] > 0:
                q[top], q[y] = 1, -1
        g = np.outer(q, x)
        self.S += g
        self.G += g * g
        self.sb += q
        self.Gb += q * q
        self.t += 1


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32 - 1), penalty=st.sampled_from(["l1_l2", "l1_linf", "sparse_group"]),
       loss=st.sampled_from(["log", "hinge"]), user_groups=st.booleans(),
       alpha=st.sampled_from([0.0, 0.01, 0.1, 0.5]), delta=st.sampled_from([0.0, 1e-8, 0.5]),
       split=st.floats(0, 1), weighted=st.booleans())
def test_rda_adagrad_groups_equal_eager(seed, penalty, loss, user_groups, alpha, delta, split, weighted):
    """Row or user groups, unweighted or with random group weights (zeros included),
    fit_rows split in two with a pickle round trip after each part."""
    rng = np.random.default_rng(seed)
    n, d, K = int(rng.integers(1, 20)), int(rng.integers(1, 9)), int(rng.choice([3, 4]))
    X = sp.random(n, d, density=float(rng.choice([0.2, 0.6, 1.0])), format="csr", random_state=rng,
                  data_rvs=lambda k: rng.uniform(-2, 2, k))
    y = rng.integers(0, K, n)
    groups = rng.integers(-1, 3, d) if user_groups else None
    n_groups = d if groups is None else int(groups.max(initial=-1)) + 1
    weights = random_group_weights(rng, n_groups) if weighted else None
    lazy = Learner(d, K, "rda", "adagrad", penalty, loss, alpha=alpha, eta0=0.5, delta=delta,
                   l1_ratio=0.5, multinomial=True, groups=groups, group_weights=weights)
    cut = int(split * n)
    for part in (np.arange(cut), np.arange(cut, n)):
        lazy.fit_rows(X.data, X.indices, X.indptr, y.astype(float), np.ones(n), part.astype(np.int64), 1)
        lazy = pickle.loads(pickle.dumps(lazy))
    eager = EagerRdaAdagradGroups(d, K, penalty, loss, alpha, 0.5, delta, 0.5, groups, weights)
    for i in range(n):
        eager.step(X[i].toarray().ravel(), int(y[i]))
    W, b = eager.weights()
    assert_contract_close(lazy.coef(), W)
    assert_contract_close(lazy.intercept(), b)


def test_squared_group_and_rda_rho_are_refused_under_rda():
    with pytest.raises(ValueError, match="squared_group"):
        Learner(5, 3, "rda", "adagrad", "squared_group", "log", multinomial=True)
    with pytest.raises(ValueError, match="rda_rho=0"):
        Learner(5, 3, "rda", "adagrad", "l1_l2", "log", rda_rho=0.1, multinomial=True)
