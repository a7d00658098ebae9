"""The update contract (shared/spec/updates.md), written the slow way.

Every coordinate of every model is updated at every step, with dense NumPy
arrays, straight from the contract's formulas. Nothing here is lazy: it is the
definition the kernels are tested against.
"""
import functools
import math

import mpmath
import numpy as np
from scipy.special import expit

from fastprox._registry import LOSSES, takes_offset
from fastprox.stream.losses import binary_loss, regression_loss


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
    if loss == "perceptron":
        return np.where(z <= 0, -y, 0.0)
    if loss == "squared":
        return r
    if loss == "huber":
        return np.clip(r, -epsilon, epsilon)
    if loss == "epsilon_insensitive":
        return np.where(np.abs(r) > epsilon, np.sign(r), 0.0)
    if loss == "squared_epsilon_insensitive":
        return 2 * np.sign(r) * np.maximum(0, np.abs(r) - epsilon)
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
    if loss == "perceptron":
        return np.maximum(0, -z)
    if loss == "squared":
        return r ** 2 / 2
    if loss == "huber":
        return np.where(r <= epsilon, r ** 2 / 2, epsilon * r - epsilon ** 2 / 2)
    if loss == "squared_epsilon_insensitive":
        return np.maximum(0, r - epsilon) ** 2
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


def _flow_end(loss, z0, s, epsilon):
    """The contract's table of the invariant step, in mpmath: the margin z (from
    z0 = y p, classification) or residual r (from r0 = p - y, regression) after a
    flow of s = q h; the log loss's is `log_flow_rise`'s."""
    one = mpmath.mpf(1)
    if loss == "hinge":
        return min(one, z0 + s) if z0 < 1 else z0
    if loss == "squared_hinge":
        return 1 - (1 - z0) * mpmath.exp(-2 * s) if z0 < 1 else z0
    if loss == "modified_huber":
        if z0 < -1:
            s1 = (-1 - z0) / 4
            return z0 + 4 * s if s <= s1 else 1 - 2 * mpmath.exp(-2 * (s - s1))
        return 1 - (1 - z0) * mpmath.exp(-2 * s) if z0 < 1 else z0
    if loss == "squared":
        return z0 * mpmath.exp(-s)
    if loss == "huber":
        r = abs(z0)
        if r > epsilon:
            s1 = (r - epsilon) / epsilon
            return mpmath.sign(z0) * (r - epsilon * s if s <= s1 else epsilon * mpmath.exp(-(s - s1)))
        return z0 * mpmath.exp(-s)
    if loss == "epsilon_insensitive":
        return mpmath.sign(z0) * max(epsilon, abs(z0) - s) if abs(z0) > epsilon else z0
    if loss == "squared_epsilon_insensitive":
        return mpmath.sign(z0) * (epsilon + (abs(z0) - epsilon) * mpmath.exp(-2 * s)) if abs(z0) > epsilon else z0
    raise ValueError(loss)


def log_flow_rise(z0, s):
    """z - z0 after the log loss's flow of s = q h > 0 from the margin z0: the root
    d >= 0 of d + e^z0 (e^d - 1) = s, since z + e^z stays z0 + e^z0 + s along the flow
    (the contract's z = C - W(e^C), without the cancellation of C - W(e^C) that takes
    mpmath 60 digits and more: a Lambert W at that precision per step made the long
    streams' references minutes long).

    Both terms of the sum are >= 0 and computed without cancellation, so an evaluation
    errs by a few eps of s, and at the root that is a few eps of d. Newton's method
    from above: the function is convex and increasing, and its linearization's root
    s / (1 + e^z0), capped by log1p(s e^-z0) (where e^z0 (e^d - 1) alone reaches s,
    which keeps e^(z0 + d) finite), is not below the root, so the iterates fall to it
    (a start that rounding puts below it steps over it first). tests/test_invariant.py
    checks it against the table to 4 ulps."""
    if z0 > 700.0:      # d ~ s e^-z0 (to a relative e^-700): e^z0 would overflow, and
        half = math.exp(-z0 / 2)    # e^-z0 lose its last digits below 2^-1022
        return s * half * half
    a = math.exp(z0)
    cap = math.log1p(s * math.exp(-z0)) if z0 > -700.0 else math.log(s) - z0 + math.log1p(a / s)
    d = min(s / (1.0 + a), cap)
    above = False
    while True:
        rise = a * math.expm1(d) if d < 700.0 else math.exp(z0 + d) - a
        excess = d + rise - s
        if excess <= 0.0 and above:
            return d
        step = excess / (1.0 + math.exp(z0 + d))
        if d - step == d:
            return d
        d, above = d - step, excess > 0.0


def invariant_sigma(loss, p, y, q, h, epsilon):
    """sigma of the contract's invariant step (y = +-1 for classification), from its
    table at 60 digits: y (z0 - z) / q or (r0 - r) / q; h l'(p) where q = 0. The log
    loss's z - z0 is `log_flow_rise`'s root, in floats."""
    slope = float(dloss(loss, np.float64(p), np.float64(y), epsilon))
    if q == 0 or slope == 0:    # no flow, or one at rest (huber with epsilon 0: its s1 is 0 / 0)
        return h * slope
    if loss == "log":
        return -float(y) * log_flow_rise(float(y) * float(p), float(q) * float(h)) / float(q)
    with mpmath.workdps(60):
        p, y, q, h, eps = (mpmath.mpf(float(v)) for v in (p, y, q, h, epsilon))
        if LOSSES[loss].kind == "regression":
            r0 = p - y
            return float((r0 - _flow_end(loss, r0, q * h, eps)) / q)
        z0 = y * p
        return float(y * (z0 - _flow_end(loss, z0, q * h, eps)) / q)


#: Losses whose derivative jumps where the invariant step's flow stops (hinge at z = 1,
#: epsilon_insensitive at |r| = epsilon): a step that starts there, as a row revisited
#: after its own invariant step does, takes the loss's full gradient into AdaGrad's G on
#: one side of the kink and none on the other, so its outcome turns on the last bit of
#: the margin. The distance of a margin from the kink, for the tests to set such
#: examples apart.
KINKS = {"hinge": lambda p, y, eps: np.abs(y * p - 1),
         "epsilon_insensitive": lambda p, y, eps: np.abs(np.abs(p - y) - eps)}

#: Losses whose gradient step jumps at a margin that sums of weights reach exactly: the
#: perceptron's z = 0 (under the normalized schedule a step sets each weight to +-c /
#: m_j, and a rescale by m_j / |x_j| makes the next margin a sum of +-c x_j / |x_j|,
#: which cancels), where the step is decided by the margin's last bit. The margin's
#: distance from it, relative to the size of its terms (margins whose terms are all 0
#: are exact and take no part), goes to `kink_gap` too, as does, under rda and ftrl, the
#: relative distance of each dual sum |s| from its threshold c: where they are equal in
#: exact arithmetic (rda_rho = eta0 with delta = 0 makes c = |g| after one step), the
#: weight is 0 or a rounding residual (1e-18) by the last bit of c, and that residual
#: alone decides the perceptron's next step at z = 0.
TIES = ("perceptron",)


def with_offset(rule, params):
    """The parameters ``params`` of a drawn problem for ``rule`` (update, schedule, ...):
    without its offset t0 where the rule's steps take none (`_registry.takes_offset`),
    so that one draw serves every rule."""
    if "t0" in params and not takes_offset(*rule[:2]):
        params = {key: value for key, value in params.items() if key != "t0"}
    return params


class EagerReference:
    """K linear models (rows of W) updated densely, one step at a time."""

    def __init__(self, n_features, n_outputs, update, schedule, penalty, loss, alpha=0.0,
                 l1_ratio=0.15, eta0=0.1, delta=1e-8, rda_rho=0.0, berhu_gamma=1.0,
                 epsilon=0.1, fit_intercept=True, ovr=False, step="gradient", t0=0.0, intercept_scaling=1.0):
        self.update, self.schedule, self.penalty, self.loss = update, schedule, penalty, loss
        self.s = intercept_scaling     # the intercepts' constant feature: b = s w0, self.b holds w0's state
        self.t0 = t0                   # the scalar schedules' offset (fobos)
        self.forward = step
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
        self.M = np.zeros(d)           # normalized: each feature's largest |x| so far
        self.kink_gap = np.inf         # the closest a step started to a kink (`KINKS`, `TIES`)
        self.N = 0.0                   # normalized: the sum of the rows' normalized squared norms

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
            if self.loss in TIES:
                c = np.broadcast_to(c, s.shape)
                top = np.maximum(np.abs(s), c)
                gap = np.abs(np.abs(s) - c)[top > 0] / top[top > 0]
                self.kink_gap = min(self.kink_gap, float(np.min(gap, initial=np.inf)))
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

    def _targets(self, y):
        """(B, K) targets of the binary losses: one-vs-rest +-1 for K > 1, else y."""
        if self.ovr:
            return np.where(np.arange(self.K)[None, :] == y[:, None].astype(int), 1.0, -1.0)
        return y[:, None]

    def _score_gradients(self, P, y):
        """(d loss / d p, loss), both (B, K), for scores P (B, K): binary losses per output
        (one-vs-rest targets for K > 1); subclasses add the multinomial losses."""
        Y = self._targets(y)
        return dloss(self.loss, P, Y, self.epsilon), loss_value(self.loss, P, Y, self.epsilon)

    def _prox(self, V, a):
        """The penalty's prox with threshold a (scalar or per entry) on the (K, d) matrix."""
        return prox(self.penalty, V, a, self.rho, self.gamma)

    def _eta(self, t):
        return {"constant": self.eta0, "invsqrt": self.eta0 / np.sqrt(t + self.t0),
                "inv": self.eta0 / (t + self.t0)}[self.schedule]

    def _rescale(self, x):
        """normalized, step 1: weights of features whose |x_j| exceeds their scale m_j
        shrink by m_j / |x_j|, and m_j becomes |x_j|."""
        a = np.abs(x)
        grow = a > self.M
        with np.errstate(divide="ignore", invalid="ignore"):
            factor = np.where(grow & (self.M > 0), self.M / a, 1.0)
        self.W = self.W * factor
        self.M = np.where(grow, a, self.M)

    def _normalized_steps(self, x):
        """normalized, steps 3 and 5 (after the accumulators): (eta (K, d), eta_b (K,))."""
        with np.errstate(divide="ignore", invalid="ignore"):
            self.N += float(np.sum(np.where(x != 0, (x / self.M) ** 2, 0.0))) + self.fit_intercept
            r = np.sqrt(self.t / self.N) if self.N > 0 else 0.0
            eta = np.where(self.G > 0, self.eta0 * r / (self.M * np.sqrt(self.G)), 0.0)
            eta_b = np.where(self.Gb > 0, self.eta0 * r / (self.s * np.sqrt(self.Gb)), 0.0)   # (its m_j: s)
        return eta, eta_b

    def step(self, X, y, sw):
        """One step on the dense rows X (B, d) with labels y and weights sw."""
        if self.schedule == "normalized":
            assert X.shape[0] == 1
            self._rescale(X[0])
        W, b = self.weights()
        self.t += 1
        P = X @ W.T + self.s * b
        if self.loss in TIES:
            scale = np.abs(X) @ np.abs(W).T + self.s * np.abs(b)
            self.kink_gap = min(self.kink_gap, float(np.min(np.abs(P[scale > 0]) / scale[scale > 0], initial=np.inf)))
        dl, losses = self._score_gradients(P, y)   # (B, K)
        dl = dl * sw[:, None]
        progressive = float(np.sum(losses * sw[:, None]))
        # (K, d): the mean gradient, its sum over the rows in their order as the contract
        # writes it (a matmul's order is BLAS's: the exact zero of a cancellation would be its)
        g = functools.reduce(np.add, (np.outer(dl[i], X[i]) for i in range(X.shape[0]))) / X.shape[0]
        gb = functools.reduce(np.add, dl) / X.shape[0] * self.s      # the constant feature's gradient
        if not self.fit_intercept:
            gb = np.zeros_like(gb)
        forward = None
        if self.forward == "invariant":
            forward = lambda eta, eta_b: self._invariant_forward(X[0], P[0], y, sw[0], eta, eta_b)
        self.update_all(g, gb, W, b, x=X[0] if self.schedule == "normalized" else None, forward=forward)
        return progressive

    def update_all(self, g, gb, W, b, x=None, forward=None):
        """Step t's update (t = self.t, already counted) of every coordinate: W's gradient
        g (K, d), the unpenalized entries' gb (the intercepts', K, or more: the update
        is entry-wise), with (W, b) the model the step read (W_t, b_t). `x`: the row
        (the normalized schedule's steps); `forward`: (eta, eta_b) -> the forward step's
        (g, gb) in place of the gradient's (the invariant step)."""
        t = self.t
        if self.update == "fobos":
            if self.schedule in ("adagrad", "normalized"):
                self.G += g ** 2
                self.Gb += gb ** 2
            if self.schedule == "normalized":
                eta, eta_b = self._normalized_steps(x)
            elif self.schedule == "adagrad":
                H, Hb = self.delta + np.sqrt(self.G), self.delta + np.sqrt(self.Gb)
                with np.errstate(divide="ignore"):
                    eta = np.where(H > 0, self.eta0 / H, 0.0)
                    eta_b = np.where(Hb > 0, self.eta0 / Hb, 0.0)
            else:
                eta = eta_b = self._eta(t)
            if forward is not None:
                g, gb = forward(eta, eta_b)
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

    def _invariant_forward(self, x, p, y, h, eta, eta_b):
        """The invariant step's (g, gb): sigma_k x and sigma_k per output, so that
        W - eta * g is the contract's w - sigma (eta ⊙ x)."""
        Y = self._targets(y)[0]
        eta, eta_b = np.broadcast_to(eta, self.W.shape), np.broadcast_to(eta_b, (self.K,))
        q = (eta * x ** 2).sum(axis=1) + (eta_b * self.s ** 2 if self.fit_intercept else 0.0)
        sigma = np.array([invariant_sigma(self.loss, p[k], Y[k], q[k], h, self.epsilon)
                          for k in range(self.K)])
        if self.loss in KINKS:
            self.kink_gap = min(self.kink_gap, float(np.min(KINKS[self.loss](p, Y, self.epsilon))))
        gb = sigma * self.s if self.fit_intercept else np.zeros(self.K)
        return sigma[:, None] * x[None, :], gb

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
        """b = s w0 (``intercept_scaling`` times the constant feature's weight)."""
        return self.s * self.weights()[1]


#: Rounding of a weight that is the small difference of large ones (a multinomial
#: model's scores that all but cancel): 64 ulps of the model's largest weight.
CANCELLATION = 64 * np.finfo(float).eps


def assert_contract_close(lazy, eager, rtol=1e-9, atol=1e-12):
    """The contract's equality: relative error <= rtol on weights of size >= atol (give
    or take CANCELLATION of the largest weight: a weight 1e-8 of the others' size, left
    by a cancellation, carries their rounding, not its own), and exact zeros of the
    eager model stay exact zeros."""
    lazy, eager = np.asarray(lazy, dtype=float), np.asarray(eager, dtype=float)
    assert lazy.shape == eager.shape
    zeros = eager == 0
    assert np.all(lazy[zeros] == 0), f"eager zeros not zero: {lazy[zeros][lazy[zeros] != 0][:5]}"
    big = np.abs(eager) >= atol
    err = np.abs(lazy - eager)
    floor = CANCELLATION * np.max(np.abs(eager), initial=0.0)
    assert np.all(err[big] <= rtol * np.abs(eager[big]) + floor), \
        f"max rel err {np.max(err[big] / np.abs(eager[big]))}"
    assert np.all(err[~big] <= atol)


def example_loss(est, scores, target):
    """The loss of one example at the margins ``scores`` (a list of K floats) for its
    kernel ``target`` (the label for a regressor, +-1 for one output, the class
    index for K), in Python floats from the registry's values: what the kernel counts
    for a held-out row (`_kernels.held_out_loss`, fastprox.stream.holdout) should be."""
    loss = est.learner.loss
    if est.regression:
        return regression_loss(loss, scores[0] - target, est.params["epsilon"])
    if len(scores) == 1:
        return binary_loss(loss, target * scores[0])
    index = int(target)
    if est.learner.multinomial and loss == "log":
        top = max(scores)
        return math.log(math.fsum(math.exp(s - top) for s in scores)) + top - scores[index]
    if est.learner.multinomial:         # Crammer-Singer
        return max(0.0, max(s + 1.0 for k, s in enumerate(scores) if k != index) - scores[index])
    total = 0.0                         # (in order: Python 3.12's sum() of floats compensates,
    for k, s in enumerate(scores):      # and the kernel's held-out loss, registry_loss, adds so)
        total += binary_loss(loss, s if k == index else -s)
    return total
