"""lightning's `AdaGradClassifier` (sklearn-contrib-lightning): log loss,
alpha with l1_ratio=1 (its objective is mean loss + alpha ||w||_1, the
suite's), its default eta=1.0, n_iter passes, shuffle=False. It fits no
intercept. Its CSR-to-dataset conversion is inside `fit`, hence timed."""
from lightning.classification import AdaGradClassifier

from .base import EstimatorPeer


class Lightning(EstimatorPeer):
    library = "lightning"
    name = "lightning AdaGrad"

    def __init__(self, alpha):
        self.alpha = alpha

    def fit(self, X, y, passes=1):
        self.model = AdaGradClassifier(alpha=self.alpha, l1_ratio=1.0, loss="log", n_iter=passes,
                                       shuffle=False).fit(X, y)
        return self

    def weights(self):
        return self.model.coef_.ravel().astype(float), 0.0


def make(alpha):
    return [Lightning(alpha)]
