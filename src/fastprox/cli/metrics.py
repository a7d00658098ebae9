"""Metrics of a model on labelled rows, for `train --test` and `predict`, in
NumPy: scikit-learn's metrics module would add a second of import time to
every run, more than training a small file. (NumPy itself is imported on first
use, `fastprox._numpy`: the commands import this module whether they evaluate or not.)"""
from .._numpy import np
from .._validation import kernel_loss
from ..stream.losses import binary_loss, regression_loss
from ..stream.progress import decimal


class Metrics:
    """A model's metrics over labelled chunks, added one at a time: the mean loss
    (the model's own loss, as the kernel counts it), accuracy, log-loss of the
    probabilities (log and modified_huber models), AUC (two classes; the
    one-vs-rest mean of the probabilities' for more) or RMSE (regression).
    Rows whose label the model does not know are counted apart, not scored.
    Rows with importance weights (VW text) weigh each metric by them, as VW's
    average loss does (sums of weighted terms over the sum of the weights). The
    AUC keeps each row's score and weight (16 bytes per row and class)."""

    def __init__(self, est):
        self.est, self.loss = est, kernel_loss(est.loss)
        self.classes = None if est.regression else np.asarray(est.classes, dtype=np.float64)
        self.rows, self.loss_sum, self.correct, self.squares, self.log_loss_sum = 0, 0.0, 0.0, 0.0, 0.0
        self.weight, self.weighted = 0.0, False     # the rows' weights' sum; whether any was not 1
        self.unknown = {}               # label -> rows, for labels not among the classes
        self.width = 0                  # the widest chunk's width
        self.labels, self.ranked, self.weights = [], [], []       # what the AUC needs

    def add(self, width, y, scores, weights=None):
        """Score a chunk of ``width`` columns, labels y (a float64 array), margins
        ``scores`` (finite) and the rows' importance ``weights`` (None: all 1); its
        predictions. A loss too large for a float (a margin near 1e308, a residual's
        square) counts as infinite, without a warning."""
        if weights is None:
            weights = np.ones(len(y))
        else:
            weights = np.asarray(weights, dtype=np.float64)
            self.weighted = True
        with np.errstate(over="ignore"):
            return self._add(width, y, scores, weights)

    def _add(self, width, y, scores, weights):
        self.width = max(self.width, width)
        predicted = self.est.labels_of(scores)
        if not len(y):
            return predicted
        labelled = y == y
        if not labelled.all():          # VW text's lines without a label (NaN): predicted, not scored
            self._add(width, y[labelled], scores[labelled], weights[labelled])
            return predicted
        if self.est.regression:
            self._add_regression(y, scores, weights)
            return predicted
        index = np.minimum(np.searchsorted(self.classes, y), len(self.classes) - 1)
        known = self.classes[index] == y
        if not known.all():
            for label, rows in zip(*np.unique(y[~known], return_counts=True)):
                self.unknown[float(label)] = self.unknown.get(float(label), 0) + int(rows)
            y, index, scores, weights = y[known], index[known], scores[known], weights[known]
            if not len(y):
                return predicted
        self.rows += len(y)
        self.weight += float(weights.sum())
        self.correct += float(weights @ (predicted[known] == y))
        self.loss_sum += float(weights @ self._losses(scores, index))
        proba = self.est.proba_of(scores) if self.est.has_proba() else None
        if proba is not None:
            self.log_loss_sum += float(weights @ log_losses(index, proba))
        if len(self.classes) == 2 or proba is not None:
            self.labels.append(index)
            self.ranked.append(scores if len(self.classes) == 2 else proba)
            self.weights.append(weights)
        return predicted

    def _add_regression(self, y, scores, weights):
        self.rows += len(y)
        self.weight += float(weights.sum())
        self.loss_sum += float(weights @ regression_loss(self.loss, scores - y, self.est.params["epsilon"]))
        self.squares += float(weights @ (scores - y) ** 2)

    def _losses(self, scores, index):
        """Each row's loss at its margins (the kernel's losses, fastprox.stream.losses)."""
        if scores.ndim == 1:
            return binary_loss(self.loss, np.where(index == 1, scores, -scores), np)
        rows = np.arange(len(index))
        if self.est.learner.multinomial and self.loss == "log":
            top = scores.max(axis=1)
            return np.log(np.exp(scores - top[:, None]).sum(axis=1)) + top - scores[rows, index]
        if self.est.learner.multinomial:          # Crammer-Singer
            rivals = scores + 1.0
            rivals[rows, index] = -np.inf
            return np.maximum(0.0, rivals.max(axis=1) - scores[rows, index])
        signs = np.where(np.arange(scores.shape[1]) == index[:, None], 1.0, -1.0)
        return binary_loss(self.loss, signs * scores, np).sum(axis=1)

    def values(self):
        """[(name, value, note)] of the metrics, in the order printed."""
        if not self.rows:
            return []
        loss_name = self.est.loss + (" loss" if not self.est.loss.endswith("loss") else "")
        if not self.weight:
            return [("loss", None, f"n/a (every row weighs 0; {loss_name}")]
        found = [("loss", self.loss_sum / self.weight, f" ({loss_name}" + (", weighted" if self.weighted else ""))]
        if self.est.regression:
            return found + [("RMSE", float(np.sqrt(self.squares / self.weight)), "")]
        found.append(("accuracy", self.correct / self.weight, ""))
        if self.est.has_proba():
            found.append(("log-loss", self.log_loss_sum / self.weight, ""))
        if self.labels:
            found.append(self._auc())
        return found

    def _auc(self):
        index, ranked, weights = (np.concatenate(self.labels), np.concatenate(self.ranked),
                                  np.concatenate(self.weights))
        if len(np.unique(index[weights > 0])) < len(self.classes):
            return ("AUC", None, "n/a (some class has no rows)")
        if ranked.ndim == 1:
            return ("AUC", roc_auc(index == 1, ranked, weights), "")
        auc = np.mean([roc_auc(index == k, ranked[:, k], weights) for k in range(len(self.classes))])
        return ("AUC", float(auc), " (one-vs-rest mean)")


def roc_auc(positive, scores, weights=None):
    """Area under the ROC curve: the probability that a positive row outscores a
    negative one, ties counting one half (Mann-Whitney), each pair of rows weighing
    the product of their ``weights`` (None: all 1), as scikit-learn's
    ``roc_auc_score(sample_weight=)``."""
    positive = np.asarray(positive, dtype=bool)
    weights = np.ones(len(positive)) if weights is None else np.asarray(weights, dtype=np.float64)
    _, inverse = np.unique(scores, return_inverse=True)
    inverse = inverse.ravel()
    pos = np.bincount(inverse, weights * positive)       # each distinct score's positive weight
    neg = np.bincount(inverse, weights * ~positive)      # and negative weight
    total_pos, total_neg = pos.sum(), neg.sum()
    if not total_pos or not total_neg:
        raise ValueError("AUC needs positive and negative rows.")
    below = np.cumsum(neg) - neg                         # negative weight strictly below each score
    return float(pos @ (below + neg / 2.0) / (total_pos * total_neg))


def log_losses(true_index, proba):
    """Each row's negative log-probability of its true class (probabilities clipped
    at 1e-15, as scikit-learn does)."""
    picked = proba[np.arange(len(true_index)), true_index]
    return -np.log(np.clip(picked, 1e-15, 1.0))


def metric_lines(metrics, name):
    """"NAME: VALUE (NOTE)" lines of the metrics, the first naming the rows scored."""
    lines = [f"{what}: {note.strip()}" if value is None else f"{what}: {decimal(value)}{note}"
             for what, value, note in metrics.values()]
    lines[0] += f", {metrics.rows} rows of {name})"
    return lines
