"""scikit-learn's `SGDClassifier`, log loss, l1 and l2, at its documented
defaults otherwise (learning_rate="optimal", Bottou's schedule), one pass:
max_iter=1, tol=None (no early stopping), shuffle=False (the suite shuffled)."""
import warnings

from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import SGDClassifier

from .base import EstimatorPeer


class SGD(EstimatorPeer):
    library = "scikit-learn"
    incremental = True

    def __init__(self, penalty, alpha):
        self.name = f"sklearn SGD {penalty}"
        self.params = dict(loss="log_loss", penalty=penalty, alpha=alpha, tol=None, shuffle=False)

    def fit(self, X, y, passes=1):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            self.model = SGDClassifier(max_iter=passes, **self.params).fit(X, y)
        return self

    def next_pass(self, X, y):
        self.model.partial_fit(X, y)


def make(alpha):
    return [SGD("l1", alpha), SGD("l2", alpha)]
