"""river's `linear_model.LogisticRegression` with `optim.FTRLProximal` (l1 in
the optimizer, l2=0) and with `optim.AdaGrad` (l1 in the model), both at
their documented defaults otherwise, fed one dict per row (`learn_one`).

river runs in pure Python, some hundred times slower than the others, so it
trains on the first `subset_rows` rows only; the suite reports its speed on
that subset and its seconds scaled to the whole set by non-zeros, and its
accuracy and objective are those of the subset model (said in the report).
The row dicts are built in `prepare`, untimed."""
import numpy as np
from river import linear_model, optim

from .base import Peer


class River(Peer):
    library = "river"

    def __init__(self, optimizer, alpha, subset_rows):
        self.optimizer = optimizer
        self.alpha = alpha
        self.subset_rows = subset_rows
        self.name = f"river {optimizer}"

    def prepare(self, problem):
        X = problem.X_train[:self.subset_rows]
        self.n_features = problem.n_features
        self.rows = [dict(zip(X.indices[a:b].tolist(), X.data[a:b].tolist()))
                     for a, b in zip(X.indptr[:-1], X.indptr[1:])]
        self.labels = (problem.y_train[:self.subset_rows] > 0).tolist()

    def _model(self):
        if self.optimizer == "FTRLProximal":
            return linear_model.LogisticRegression(optimizer=optim.FTRLProximal(l1=self.alpha, l2=0.0))
        return linear_model.LogisticRegression(optimizer=optim.AdaGrad(), l1=self.alpha)

    def fit(self, X, y, passes=1):
        self.model = self._model()
        learn = self.model.learn_one
        for _ in range(passes):
            for x, label in zip(self.rows, self.labels):
                learn(x, label)
        return self

    def weights(self):
        coef = np.zeros(self.n_features)
        for j, w in self.model.weights.items():
            coef[j] = w
        return coef, float(self.model.intercept)


def make(alpha, subset_rows):
    return [River("FTRLProximal", alpha, subset_rows), River("AdaGrad", alpha, subset_rows)]
