"""The multiclass part of the update contract (shared/spec/updates.md,
"Multiclass" and "Group penalties"), written the slow way.

``MulticlassReference`` extends ``reference.EagerReference`` with the
multinomial score gradients (softmax, Crammer-Singer) and the four group
penalties. Every group goes through its prox at every step; nothing is lazy.
The proxes are written here from their definitions in plain NumPy and never
call ``fastprox``, so that the kernels are checked against something that does
not share their code.

Layout: as in ``EagerReference``, ``W`` is stored (K, d), so the contract's
row ``j`` of its (d, K) matrix is column ``W[:, j]`` here, and group ``G`` is
the block ``W[:, G]``.

Group weights d_G (``group_weights``) multiply group G's threshold: its whole
prox for l1_l2 and l1_linf, the group part of sparse_group, and its norm's
weight inside squared_group's square, (a/2)(sum_G d_G ||W_G||)^2.

Covered: the multinomial losses under every update rule and schedule (they
only change ``EagerReference``'s score gradient), and the group penalties under
``fobos`` with the scalar schedules (constant, invsqrt, inv) and ``rda`` with
``invsqrt`` (they change its prox and dual weights) and ``adagrad`` (each block
solves its problem with per-entry beta, `block_solve`).
"""
import numpy as np
from scipy.optimize import brentq
from scipy.special import logsumexp, softmax

from fastprox._registry import losses_of, penalties_of

from .reference import EagerReference, dloss, loss_value, prox, soft

# The names only: the mathematics below is written from the contract.
GROUP_PENALTIES = penalties_of("group")
MULTINOMIAL_LOSSES = losses_of("binary", multinomial=True)


# ---------------------------------------------------------------- score gradients
def multinomial_gradient(loss, P, y):
    """(Q, losses): q = d loss / d p per row of the scores P (B, K), labels y (class indices).

    log: q = softmax(p) - e_y, loss = logsumexp(p) - p_y.
    hinge (Crammer-Singer, 0/1 cost): yhat = argmax_k p_k + [k != y] (lowest index
    on ties); q = e_yhat - e_y when yhat != y and p_yhat + 1 - p_y > 0, else 0.
    """
    B, K = P.shape
    rows, y = np.arange(B), y.astype(int)
    onehot = np.zeros((B, K))
    onehot[rows, y] = 1.0
    if loss == "log":
        return softmax(P, axis=1) - onehot, logsumexp(P, axis=1) - P[rows, y]
    if loss == "hinge":
        augmented = P + 1.0 - onehot
        yhat = np.argmax(augmented, axis=1)
        margin = augmented[rows, yhat] - P[rows, y]
        active = (yhat != y) & (margin > 0)
        Q = np.zeros((B, K))
        Q[rows[active], yhat[active]] = 1.0
        Q[rows[active], y[active]] = -1.0
        return Q, np.where(active, margin, 0.0)
    raise ValueError(f"no multinomial loss {loss!r}")


# ---------------------------------------------------------------- block proxes
def l1_ball_level(v, radius):
    """The level theta >= 0 of the Euclidean projection of v onto the l1-ball of the
    given radius: sum_i max(|v_i| - theta, 0) = radius, or 0 inside the ball.

    With u the magnitudes sorted in decreasing order, theta is the largest of
    (u_1 + ... + u_j - radius) / j over j: the
    sequence rises up to the support size of the projection, then falls)."""
    u = np.sort(np.abs(v).ravel())[::-1]
    if u.sum() <= radius:
        return 0.0
    return float(np.max((np.cumsum(u) - radius) / np.arange(1, u.size + 1)))


def block_l1_l2(V, a):
    """prox of a*||V||_F: max(0, 1 - a/||V||) V (V itself for a = 0, even if ||V||
    underflows)."""
    if a == 0:
        return V.copy()
    n = np.sqrt(np.sum(V * V))
    return V * (1.0 - a / n) if n > a else np.zeros_like(V)


def block_l1_linf(V, a):
    """prox of a*max|V|: V minus its projection onto the l1-ball of radius a, that is
    0 when ||V||_1 <= a, else V clipped at the projection's level theta."""
    if np.abs(V).sum() <= a:
        return np.zeros_like(V)
    theta = l1_ball_level(V, a)
    return np.clip(V, -theta, theta)


def block_sparse_group(V, a, rho, d=1.0):
    """prox of a*(rho ||V||_1 + (1 - rho) d ||V||_F): soft-threshold, then group shrink."""
    return block_l1_l2(soft(V, a * rho), a * (1.0 - rho) * d)


def squared_group_tau(norms, a, weights):
    """tau with the prox of (a/2)(sum_G d_G n_G)^2 on norms n >= 0 equal to
    n_G -> max(0, n_G - d_G tau), from its fixed-point definition (not Martins et
    al.'s scan): tau = a sum_G d_G max(0, n_G - d_G tau). With the active set A,
    tau = a sum_A d n / (1 + a sum_A d^2); A must be {G : n_G / d_G > tau}. Each
    candidate A = {n / d >= v} (v one of the ratios) is tried and the one whose
    tau agrees best with it is kept (the right one agrees exactly, up to rounding).
    Groups with d_G = 0 are unpenalized: left out."""
    n, d = np.asarray(norms, dtype=float), np.asarray(weights, dtype=float)
    n, d = n[d > 0], d[d > 0]
    u = n / d
    best, tau = np.inf, 0.0
    for v in np.unique(u[u > 0]):
        active = u >= v
        t = a * np.sum(d[active] * n[active]) / (1.0 + a * np.sum(d[active] ** 2))
        misfit = max(t - np.min(u[active]), np.max(u[~active], initial=0.0) - t, 0.0)
        if misfit < best:
            best, tau = misfit, t
    return tau


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


def group_prox(penalty, W, a, rho, members, weights):
    """The contract's prox with threshold a on the (K, d) matrix W, for the groups
    ``members`` (a list of column-index arrays) with weights d_G; columns in no group
    pass through."""
    out = W.copy()
    if penalty == "squared_group":
        norms = [np.sqrt(np.sum(W[:, cols] ** 2)) for cols in members]
        tau = squared_group_tau(norms, a, weights)
        for cols, n, d in zip(members, norms, weights):
            out[:, cols] = block_l1_l2(W[:, cols], d * tau)
        return out
    block = {"l1_l2": lambda V, d: block_l1_l2(V, a * d),
             "l1_linf": lambda V, d: block_l1_linf(V, a * d),
             "sparse_group": lambda V, d: block_sparse_group(V, a, rho, d)}[penalty]
    for cols, d in zip(members, weights):
        out[:, cols] = block(W[:, cols], d)
    return out


def random_group_weights(rng, n_groups):
    """Test weights d_G: uniform in [0.1, 3], about a quarter of them 0 (unpenalized)."""
    return np.where(rng.random(n_groups) < 0.25, 0.0, rng.uniform(0.1, 3.0, n_groups))


def group_members(n_features, groups):
    """Column indices of each penalized group: one per feature when groups is None,
    else one per id 0..max(groups) (ids -1 are never penalized)."""
    if groups is None:
        return [np.array([j]) for j in range(n_features)]
    groups = np.asarray(groups)
    return [np.flatnonzero(groups == g) for g in range(int(groups.max(initial=-1)) + 1)]


# ---------------------------------------------------------------- the learner
class MulticlassReference(EagerReference):
    """EagerReference with ``multinomial`` losses and ``groups`` / ``group_weights`` /
    group penalties."""

    def __init__(self, n_features, n_outputs, update, schedule, penalty, loss,
                 multinomial=False, groups=None, group_weights=None, **params):
        super().__init__(n_features, n_outputs, update, schedule, penalty, loss, **params)
        self.multinomial = multinomial
        self.members = group_members(n_features, groups)
        self.group_weights = np.ones(len(self.members)) if group_weights is None else \
            np.asarray(group_weights, dtype=float)
        if penalty in GROUP_PENALTIES and ((schedule == "adagrad" and update == "fobos") or update == "ftrl"):
            raise NotImplementedError("group models: fobos (constant, invsqrt, inv) and rda (invsqrt, "
                                      "adagrad) only")
        if multinomial and loss not in MULTINOMIAL_LOSSES:
            raise ValueError(f"no multinomial loss {loss!r}")

    def _prox(self, V, a):
        """The penalty's prox with threshold a on the whole (K, d) matrix."""
        if self.penalty in GROUP_PENALTIES:
            return group_prox(self.penalty, V, a, self.rho, self.members, self.group_weights)
        return prox(self.penalty, V, a, self.rho, self.gamma)

    def _dual_weights(self, s, beta, T, rda_rho):
        """rda: argmin <s,W> + T alpha r(W) + beta (||W||^2/2 + rda_rho ||W||_1), i.e.
        the prox of (T alpha / beta) r after the l1 part, at -s/beta (beta is uniform)."""
        if self.penalty not in GROUP_PENALTIES:
            return super()._dual_weights(s, beta, T, rda_rho)
        if self.schedule == "adagrad":
            return self._adagrad_group_weights(s, beta, T)
        b = float(np.max(beta, initial=0.0))
        if b == 0:
            return np.zeros_like(s)
        return self._prox(soft(-s / b, rda_rho), T * self._alpha() / b)

    def _adagrad_group_weights(self, S, beta, T):
        """rda + adagrad: each block's weights solve  min sum_i S_i w_i + beta_i w_i^2 / 2
        + T alpha r_G(w)  (`block_solve`); features in no group are -S / beta."""
        W = np.where(beta > 0, -S / np.where(beta > 0, beta, 1), 0.0)
        for cols, d in zip(self.members, self.group_weights):
            block = block_solve(S[:, cols].ravel(), beta[:, cols].ravel(), T * self._alpha(), self.penalty,
                                self.rho, d)
            W[:, cols] = block.reshape(self.K, -1)
        return W

    def _score_gradients(self, P, y):
        """(dl, losses), both (B, K): d loss / d p and the loss of each row and output."""
        if self.multinomial:
            Q, losses = multinomial_gradient(self.loss, P, y)
            return Q, losses[:, None]
        if self.ovr:
            Y = np.where(np.arange(self.K)[None, :] == y[:, None].astype(int), 1.0, -1.0)
        else:
            Y = y[:, None]
        return dloss(self.loss, P, Y, self.epsilon), loss_value(self.loss, P, Y, self.epsilon)
