"""Test metrics for `fastprox train`, in NumPy: scikit-learn's metrics module
would add a second of import time to every run, more than training a small file."""
import numpy as np


def log_loss(true_index, proba):
    """Mean negative log-probability of the true classes (probabilities clipped
    at 1e-15, as scikit-learn does)."""
    picked = proba[np.arange(len(true_index)), true_index]
    return float(-np.mean(np.log(np.clip(picked, 1e-15, 1.0))))


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
