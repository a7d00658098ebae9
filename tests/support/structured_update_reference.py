"""The contract's update of a structured example ("Structured outputs"), written the
slow way: given the example's gradient, every coordinate of W and every unpenalized
entry is updated at every step, densely.

The step is the flat contract's update (`reference.EagerReference.update_all`, with
the group penalties of `reference_multiclass.MulticlassReference`) applied to the
structured gradient: W's is h X^T Q for the items X (n, d) and their score gradients
Q (n, K), the intercepts' h sum_i Q_i (with fit_intercept), and the m further
unpenalized entries' h u, which follow the intercepts' update (their own
accumulators under adagrad). Nothing here decodes: the tests draw Q and u.

Layout: as the references, W is stored (K, d); the unpenalized entries are
``b[K:]`` beside the intercepts ``b[:K]``.
"""
import numpy as np

from .reference_multiclass import MulticlassReference


class StructuredUpdateReference(MulticlassReference):
    """W (K x d) with an entry-wise or group penalty, K intercepts and m unpenalized
    entries, updated densely by structured examples' gradients."""

    def __init__(self, n_features, n_outputs, n_unpenalized, update, schedule, penalty, **params):
        super().__init__(n_features, n_outputs, update, schedule, penalty, None, **params)
        self.m = n_unpenalized
        self.b, self.Gb = np.zeros(n_outputs + n_unpenalized), np.zeros(n_outputs + n_unpenalized)

    def scores(self, X):
        """The items' scores at the current step: X W_t^T + b_t (dense X, (n, d))."""
        W, b = self.weights()
        return X @ W.T + b[:self.K]

    def step(self, X, Q, u, h):
        """One example: dense items X (n, d), score gradients Q (n, K), unpenalized
        gradient u (m,), weight h."""
        W, b = self.weights()
        self.t += 1
        g = h * (Q.T @ X)
        gb = np.concatenate([h * Q.sum(axis=0) if self.fit_intercept else np.zeros(self.K), h * u])
        self.update_all(g, gb, W, b)

    def step_rows(self, features, G, b_grad, u, h):
        """One example given W's gradient as rows G (r, K) of feature ids `features`."""
        W, b = self.weights()
        self.t += 1
        g = np.zeros_like(self.W)
        np.add.at(g.T, features, G)
        gb = np.concatenate([h * b_grad if self.fit_intercept else np.zeros(self.K), h * u])
        self.update_all(h * g, gb, W, b)

    def intercept(self):
        return self.weights()[1][:self.K]

    def unpenalized(self):
        return self.weights()[1][self.K:]
