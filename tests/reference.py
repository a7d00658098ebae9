"""The update contract (shared/spec/updates.md), written the slow way.

Every coordinate of every model is updated at every step, with dense NumPy
arrays, straight from the contract's formulas. Nothing here is lazy: it is the
definition the kernels are tested against.
"""
import numpy as np
from scipy.special import expit


def dloss(loss, p, y, epsilon):
    z = y * p
    r = p - y
    if loss == "log":
        return -y * expit(-z)
    if loss == "hinge":
        return np.where(z < 1, -y, 0.0)
    if loss == "squared_hinge":
        return -2 * y * np.maximum(0, 1 - z)
    if loss == "modified_huber":
        return np.where(z >= -1, -2 * y * np.maximum(0, 1 - z), -4 * y)
    if loss == "squared":
        return r
    if loss == "huber":
        return np.clip(r, -epsilon, epsilon)
    if loss == "epsilon_insensitive":
        return np.where(np.abs(r) > epsilon, np.sign(r), 0.0)
    raise ValueError(loss)


def loss_value(loss, p, y, epsilon):
    z = y * p
    r = np.abs(p - y)
    if loss == "log":
        return np.logaddexp(0, -z)
    if loss == "hinge":
        return np.maximum(0, 1 - z)
    if loss == "squared_hinge":
        return np.maximum(0, 1 - z) ** 2
    if loss == "modified_huber":
        return np.where(z >= -1, np.maximum(0, 1 - z) ** 2, -4 * z)
    if loss == "squared":
        return r ** 2 / 2
    if loss == "huber":
        return np.where(r <= epsilon, r ** 2 / 2, epsilon * r - epsilon ** 2 / 2)
    return np.maximum(0, r - epsilon)


def soft(v, a):
    return np.sign(v) * np.maximum(0, np.abs(v) - a)


def prox(penalty, v, a, rho, gamma):
    """The contract's coordinate-wise prox with threshold a (scalar or array)."""
    if penalty == "none":
        return v.copy()
    if penalty == "l1":
        return soft(v, a)
    if penalty == "l2":
        return v / (1 + a)
    if penalty == "elasticnet":
        return soft(v, a * rho) / (1 + a * (1 - rho))
    if penalty == "berhu":
        m = np.abs(v)
        a = np.broadcast_to(a, v.shape)
        return np.where(m <= a, 0.0, np.where(m <= a + gamma, np.sign(v) * (m - a), v / (1 + a / gamma)))
    raise ValueError(penalty)


class EagerReference:
    """K linear models (rows of W) updated densely, one step at a time."""

    def __init__(self, n_features, n_outputs, update, schedule, penalty, loss, alpha=0.0,
                 l1_ratio=0.15, eta0=0.1, delta=1e-8, rda_rho=0.0, berhu_gamma=1.0,
                 epsilon=0.1, fit_intercept=True, ovr=False):
        self.update, self.schedule, self.penalty, self.loss = update, schedule, penalty, loss
        self.alpha, self.rho, self.eta0, self.delta = alpha, l1_ratio, eta0, delta
        self.rda_rho, self.gamma, self.epsilon = rda_rho, berhu_gamma, epsilon
        self.fit_intercept, self.ovr = fit_intercept, ovr
        K, d = n_outputs, n_features
        self.K = K
        self.t = 0
        self.W = np.zeros((K, d))      # fobos: w; rda: s; ftrl: z
        self.G = np.zeros((K, d))      # adagrad / ftrl accumulators
        self.b = np.zeros(K)           # fobos: b; rda: s_b; ftrl: z_b
        self.Gb = np.zeros(K)

    # --- the penalty split used by rda and ftrl: l1 share rho1 of alpha
    def _rho1(self):
        return {"none": 0.0, "l1": 1.0, "l2": 0.0, "elasticnet": self.rho}[self.penalty]

    def _alpha(self):
        return 0.0 if self.penalty == "none" else self.alpha

    def _dual_weights(self, s, beta, T, rda_rho):
        """argmin <s,w> + T alpha r(w) + beta (|w|^2/2 + rda_rho |w|_1), coordinate-wise."""
        rho1, alpha = self._rho1(), self._alpha()
        c = T * alpha * rho1 + beta * rda_rho
        den = beta + T * alpha * (1 - rho1)
        with np.errstate(divide="ignore", invalid="ignore"):
            w = np.where(np.abs(s) <= c, 0.0, -(s - c * np.sign(s)) / den)
        return np.where(den > 0, w, 0.0)

    def weights(self):
        """(W_t, b_t): the model used at the next step (T = t steps summed)."""
        T = self.t
        if self.update == "fobos":
            return self.W.copy(), self.b.copy()
        if self.update == "rda":
            if self.schedule == "adagrad":
                beta = (self.delta + np.sqrt(self.G)) / self.eta0
                beta_b = (self.delta + np.sqrt(self.Gb)) / self.eta0
            else:
                beta = np.full_like(self.W, np.sqrt(T) / self.eta0)
                beta_b = np.full_like(self.b, np.sqrt(T) / self.eta0)
            W = self._dual_weights(self.W, beta, T, self.rda_rho)
        else:
            beta = (self.delta + np.sqrt(self.G)) / self.eta0
            beta_b = (self.delta + np.sqrt(self.Gb)) / self.eta0
            W = self._dual_weights(self.W, beta, T, 0.0)
        with np.errstate(divide="ignore", invalid="ignore"):
            b = np.where(beta_b > 0, -self.b / beta_b, 0.0)
        return W, b

    def _score_gradients(self, P, y):
        """(d loss / d p, loss), both (B, K), for scores P (B, K): binary losses per output
        (one-vs-rest targets for K > 1); subclasses add the multinomial losses."""
        if self.ovr:
            Y = np.where(np.arange(self.K)[None, :] == y[:, None].astype(int), 1.0, -1.0)
        else:
            Y = y[:, None]
        return dloss(self.loss, P, Y, self.epsilon), loss_value(self.loss, P, Y, self.epsilon)

    def _prox(self, V, a):
        """The penalty's prox with threshold a (scalar or per entry) on the (K, d) matrix."""
        return prox(self.penalty, V, a, self.rho, self.gamma)

    def _eta(self, t):
        return {"constant": self.eta0, "invsqrt": self.eta0 / np.sqrt(t),
                "inv": self.eta0 / t}[self.schedule]

    def step(self, X, y, sw):
        """One step on the dense rows X (B, d) with labels y and weights sw."""
        W, b = self.weights()
        self.t += 1
        t = self.t
        dl, losses = self._score_gradients(X @ W.T + b, y)   # (B, K)
        dl = dl * sw[:, None]
        progressive = float(np.sum(losses * sw[:, None]))
        g = dl.T @ X / X.shape[0]                         # (K, d): the mean gradient
        gb = dl.mean(axis=0)
        if not self.fit_intercept:
            gb = np.zeros_like(gb)
        if self.update == "fobos":
            if self.schedule == "adagrad":
                self.G += g ** 2
                self.Gb += gb ** 2
                H, Hb = self.delta + np.sqrt(self.G), self.delta + np.sqrt(self.Gb)
                with np.errstate(divide="ignore"):
                    eta = np.where(H > 0, self.eta0 / H, 0.0)
                    eta_b = np.where(Hb > 0, self.eta0 / Hb, 0.0)
            else:
                eta = eta_b = self._eta(t)
            V = self.W - eta * g
            self.W = self._prox(V, eta * self._alpha())
            self.b = self.b - eta_b * gb
        elif self.update == "rda":
            self.W += g
            self.G += g ** 2
            self.b += gb
            self.Gb += gb ** 2
        else:
            sigma = (np.sqrt(self.G + g ** 2) - np.sqrt(self.G)) / self.eta0
            sigma_b = (np.sqrt(self.Gb + gb ** 2) - np.sqrt(self.Gb)) / self.eta0
            self.W += g - sigma * W
            self.b += gb - sigma_b * b
            self.G += g ** 2
            self.Gb += gb ** 2
        return progressive

    def run(self, X, y, sw, order, batch_size):
        """Steps over rows ``order`` (a dense X), batch_size rows per step."""
        total = 0.0
        for start in range(0, len(order), batch_size):
            rows = order[start:start + batch_size]
            total += self.step(X[rows], y[rows], sw[rows])
        return total

    def coef(self):
        return self.weights()[0]

    def intercept(self):
        return self.weights()[1]


def assert_contract_close(lazy, eager, rtol=1e-9, atol=1e-12):
    """The contract's equality: relative error <= rtol on weights of size >= atol,
    and exact zeros of the eager model stay exact zeros."""
    lazy, eager = np.asarray(lazy, dtype=float), np.asarray(eager, dtype=float)
    assert lazy.shape == eager.shape
    zeros = eager == 0
    assert np.all(lazy[zeros] == 0), f"eager zeros not zero: {lazy[zeros][lazy[zeros] != 0][:5]}"
    big = np.abs(eager) >= atol
    err = np.abs(lazy - eager)
    assert np.all(err[big] <= rtol * np.abs(eager[big])), \
        f"max rel err {np.max(err[big] / np.abs(eager[big]))}"
    assert np.all(err[~big] <= atol)
