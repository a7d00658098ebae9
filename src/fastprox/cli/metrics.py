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
    The AUC keeps each row's score (8 bytes per row and class)."""

    def __init__(self, est):
        self.est, self.loss = est, kernel_loss(est.loss)
        self.classes = None if est.regression else np.asarray(est.classes, dtype=np.float64)
        self.rows, self.loss_sum, self.correct, self.squares, self.log_loss_sum = 0, 0.0, 0, 0.0, 0.0
        self.unknown = {}               # label -> rows, for labels not among the classes
        self.width = 0                  # the widest chunk's width
        self.labels, self.ranked = [], []       # what the AUC needs

    def add(self, width, y, scores):
        """Score a chunk of ``width`` columns, labels y (a float64 array) and margins
        ``scores`` (finite); its predictions. A loss too large for a float (a margin
        near 1e308, a residual's square) counts as infinite, without a warning."""
        with np.errstate(over="ignore"):
            return self._add(width, y, scores)

    def _add(self, width, y, scores):
        self.width = max(self.width, width)
        predicted = self.est.labels_of(scores)
        if not len(y):
            return predicted
        labelled = y == y
        if not labelled.all():          # VW text's lines without a label (NaN): predicted, not scored
            self._add(width, y[labelled], scores[labelled])
            return predicted
        if self.est.regression:
            self._add_regression(y, scores)
            return predicted
        index = np.minimum(np.searchsorted(self.classes, y), len(self.classes) - 1)
        known = self.classes[index] == y
        if not known.all():
            for label, rows in zip(*np.unique(y[~known], return_counts=True)):
                self.unknown[float(label)] = self.unknown.get(float(label), 0) + int(rows)
            y, index, scores = y[known], index[known], scores[known]
            if not len(y):
                return predicted
        self.rows += len(y)
        self.correct += int(np.sum(predicted[known] == y))
        self.loss_sum += float(np.sum(self._losses(scores, index)))
        proba = self.est.proba_of(scores) if self.est.has_proba() else None
        if proba is not None:
            self.log_loss_sum += log_loss(index, proba) * len(index)
        if len(self.classes) == 2 or proba is not None:
            self.labels.append(index)
            self.ranked.append(scores if len(self.classes) == 2 else proba)
        return predicted

    def _add_regression(self, y, scores):
        self.rows += len(y)
        self.loss_sum += float(np.sum(regression_loss(self.loss, scores - y, self.est.params["epsilon"])))
        self.squares += float(np.sum((scores - y) ** 2))

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
        found = [("loss", self.loss_sum / self.rows, f" ({loss_name}")]
        if self.est.regression:
            return found + [("RMSE", float(np.sqrt(self.squares / self.rows)), "")]
        found.append(("accuracy", self.correct / self.rows, ""))
        if self.est.has_proba():
            found.append(("log-loss", self.log_loss_sum / self.rows, ""))
        if self.labels:
            found.append(self._auc())
        return found

    def _auc(self):
        index, ranked = np.concatenate(self.labels), np.concatenate(self.ranked)
        if len(np.unique(index)) < len(self.classes):
            return ("AUC", None, "n/a (some class has no rows)")
        if ranked.ndim == 1:
            return ("AUC", roc_auc(index == 1, ranked), "")
        auc = np.mean([roc_auc(index == k, ranked[:, k]) for k in range(len(self.classes))])
        return ("AUC", float(auc), " (one-vs-rest mean)")


def roc_auc(positive, scores):
    """Area under the ROC curve: the probability that a positive row outscores a
    negative one, ties counting one half (Mann-Whitney with average ranks)."""
    positive = np.asarray(positive, dtype=bool)
    n_pos = int(positive.sum())
    n_neg = len(positive) - n_pos
    if not n_pos or not n_neg:
        raise ValueError("AUC needs positive and negative rows.")
    _, inverse, counts = np.unique(scores, return_inverse=True, return_counts=True)
    average_rank = np.cumsum(counts) - (counts - 1) / 2.0
    ranks = average_rank[inverse.ravel()]
    return float((ranks[positive].sum() - n_pos * (n_pos + 1) / 2.0) / (n_pos * n_neg))


def log_loss(true_index, proba):
    """Mean negative log-probability of the true classes (probabilities clipped
    at 1e-15, as scikit-learn does)."""
    picked = proba[np.arange(len(true_index)), true_index]
    return float(-np.mean(np.log(np.clip(picked, 1e-15, 1.0))))


def metric_lines(metrics, name):
    """"NAME: VALUE (NOTE)" lines of the metrics, the first naming the rows scored."""
    lines = [f"{what}: {note.strip()}" if value is None else f"{what}: {decimal(value)}{note}"
             for what, value, note in metrics.values()]
    lines[0] += f", {metrics.rows} rows of {name})"
    return lines
