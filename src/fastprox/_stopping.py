"""scikit-learn's stopping rules for the passes of `fit` (SGDClassifier's ``tol``,
``n_iter_no_change``, ``early_stopping``, ``validation_fraction``; its
``_plain_sgd`` and ``_make_validation_split``): the validation split, the rule
checked after each pass, the ConvergenceWarning. The passes themselves stay
`_core.run_passes`' kernel calls; the rule reads each pass's summed progressive
loss, which the kernel reports anyway, or scores the held-out rows once per pass."""
import warnings
from math import ceil

import numpy as np
from sklearn.exceptions import ConvergenceWarning
from sklearn.metrics import r2_score
from sklearn.model_selection import ShuffleSplit, StratifiedShuffleSplit
from sklearn.utils import check_random_state

try:        # private to scikit-learn: where it moves, the splitter itself draws the split
    from sklearn.utils.extmath import _approximate_mode
except ImportError:     # pragma: no cover
    _approximate_mode = None

from ._core import kernel_arrays, predictions


def validation_split(est, y, sample_weight, classifier):
    """The rows `fit` trains on and those it holds out to score each pass, as
    scikit-learn's early stopping splits them: a stratified split for a classifier
    (StratifiedShuffleSplit), a plain one for a regressor (ShuffleSplit), of
    ``validation_fraction`` of the rows, seeded by ``random_state``.

    Parameters
    ----------
    est : ProxClassifier or ProxRegressor
        Its early_stopping, validation_fraction and random_state.
    y : ndarray of shape (n,)
        The labels (the strata) or targets.
    sample_weight : None or ndarray of shape (n,)
        The rows' weights: the held-out rows must not all weigh 0.
    classifier : bool
        Whether to stratify by y.

    Returns
    -------
    (train, held_out) : ndarrays of row indices, or (None, None)
        Sorted int64 indices; (None, None) without early_stopping.
    """
    if not est.early_stopping:
        return None, None
    split = stratified_split(y, est.validation_fraction, est.random_state) if classifier else None
    if split is None:
        splitter = (StratifiedShuffleSplit if classifier else ShuffleSplit)(
            test_size=est.validation_fraction, random_state=est.random_state)
        split = next(splitter.split(np.zeros((len(y), 1)), y))
    train, held_out = split
    if len(train) == 0 or len(held_out) == 0:
        raise ValueError(f"Splitting {len(y)} samples with validation_fraction={est.validation_fraction!r} "
                         f"leaves an empty set ({len(train)} and {len(held_out)} samples); change "
                         "validation_fraction, give more samples, or use early_stopping=False.")
    if sample_weight is not None and not np.any(sample_weight[held_out] > 0):
        raise ValueError("The sample weights of the validation set are all zero; use another "
                         "random_state, or early_stopping=False.")
    return sorted_rows(train, len(y)), sorted_rows(held_out, len(y))


#: `held_out_margins` maps the held-out columns through an O(d) table while the model's
#: width d is at most this many times the held-out entries, else by a sort of them.
SPARSE_WIDTH = 16


def sorted_rows(rows, n):
    """Distinct indices below n (rows, or a held-out set's columns), sorted, as int64:
    by a mask, O(n), where a sort is O(n log n)."""
    mask = np.zeros(n, dtype=bool)
    mask[rows] = True
    return np.flatnonzero(mask).astype(np.int64)


def stratified_split(y, fraction, random_state):
    """StratifiedShuffleSplit's first split of y (test_size ``fraction``): the same
    draws from the same generator in the same order (`_approximate_mode` of the
    class counts, a permutation of each class's rows, then of each side), with each
    side joined as one array where scikit-learn 1.9 extends a list by each index as a
    numpy scalar (on the larger sets, more time than a pass). None where the splitter
    would refuse y (a class of one row, fewer rows on a side than classes), so that
    its own error is raised, and where scikit-learn no longer has `_approximate_mode`.
    tests/test_sgd_parameters.py compares the two.

    Parameters
    ----------
    y : ndarray of shape (n,)
        The labels (the strata).
    fraction : float
        validation_fraction, in (0, 1).
    random_state : None, int or RandomState
        The seed (a RandomState given is drawn from, as the splitter draws from it).

    Returns
    -------
    (train, held_out) : ndarrays of row indices, or None
        In the splitter's order.
    """
    if _approximate_mode is None:
        return None
    classes = np.unique(y)
    y_indices = np.searchsorted(classes, y)     # np.unique's inverse, without its argsort of y
    class_counts = np.bincount(y_indices, minlength=len(classes))
    n_test = ceil(fraction * len(y))
    n_train = len(y) - n_test
    if (y.ndim != 1 or np.min(class_counts) < 2 or n_train < len(classes) or n_test < len(classes)):
        return None
    class_indices = np.split(np.argsort(y_indices, kind="stable"), np.cumsum(class_counts)[:-1])
    rng = check_random_state(random_state)
    n_i = _approximate_mode(class_counts, n_train, rng)
    t_i = _approximate_mode(class_counts - n_i, n_test, rng)
    train, test = [], []
    for i in range(len(classes)):
        rows = class_indices[i].take(rng.permutation(class_counts[i]), mode="clip")
        train.append(rows[:n_i[i]])
        test.append(rows[n_i[i]:n_i[i] + t_i[i]])
    return rng.permutation(np.concatenate(train)), rng.permutation(np.concatenate(test))


class StoppingRule:
    """scikit-learn's rule, checked after each pass of `fit`: stop once
    ``n_iter_no_change`` consecutive passes have not improved on the best so far by
    ``tol``: the training loss (the pass's summed progressive loss, below the best
    by less than tol times the rows) without early_stopping, the held-out rows'
    score (accuracy for a classifier, R^2 for a regressor, above the best by less
    than tol) with it. tol=None never stops. A callable for `run_passes`'
    ``after_pass``: returns True to stop.

    Parameters
    ----------
    est : ProxClassifier or ProxRegressor
        Its tol and n_iter_no_change.
    n_rows : int
        The rows a pass trains on (tol counts per row, as scikit-learn's).
    score : None or callable
        None: the training loss decides; else a function of no arguments giving
        the held-out score of the current model.
    """

    def __init__(self, est, n_rows, score=None):
        self.tol = -np.inf if est.tol is None else est.tol
        self.patience = est.n_iter_no_change
        self.n_rows = n_rows
        self.score = score
        self.best = -np.inf if score is not None else np.inf
        self.waited = 0
        self.passes = 0

    def __call__(self, index, loss):
        """Whether to stop after a pass.

        Parameters
        ----------
        index : int
            The pass just run, from 0.
        loss : float
            Its summed progressive loss (read without early_stopping).

        Returns
        -------
        bool
            True once n_iter_no_change passes in a row have not improved.
        """
        self.passes = index + 1
        if self.score is not None:
            value = self.score()
            stalled = self.tol > -np.inf and value < self.best + self.tol
            self.best = max(self.best, value)
        else:
            stalled = self.tol > -np.inf and loss > self.best - self.tol * self.n_rows
            self.best = min(self.best, loss)
        self.waited = self.waited + 1 if stalled else 0
        return self.waited >= self.patience


def held_out_score(learner, X, y, sample_weight, classes):
    """A function of no arguments: the current model's score on the held-out rows,
    as the estimator's ``score`` gives it (accuracy over ``classes``, R^2 for a
    regressor: ``classes`` None), weighted by ``sample_weight``, read without the
    estimator's lock (the training call holds it). The margins are `_core.margins`',
    bit for bit, from the weights of the held-out rows' own features only
    (`held_out_margins`): after each pass, where the model's d weights would be
    materialized.

    Parameters
    ----------
    learner : Learner
        The kernel being trained.
    X : CSR matrix
        The held-out rows.
    y : ndarray
        Their labels or targets.
    sample_weight : None or ndarray
        Their weights.
    classes : None or ndarray
        The classifier's classes_, None for a regressor.

    Returns
    -------
    callable
        Returning a float.
    """
    margins = held_out_margins(learner, X)
    if classes is None:
        def score():
            return float(r2_score(y, margins(), sample_weight=sample_weight))
    else:
        def score():        # accuracy_score's value (np.average of the matches) without its input checks
            return float(np.average(predictions(margins(), classes) == y, weights=sample_weight))
    return score


def held_out_margins(learner, X):
    """A function of no arguments: `_core.margins(learner, X)` of the current model
    (averaged where the learner averages), bit for bit, reading the weights of X's
    own columns only (`Learner.coef_at`): X's indices are mapped once, through an
    O(d) table, to positions among its distinct columns (those at or beyond the
    model's width to one past them, weighing 0 as in `margins`).

    Parameters
    ----------
    learner : Learner
        The kernel being trained (its width fixed for the passes).
    X : CSR matrix
        The held-out rows.

    Returns
    -------
    callable
        Returning (n,) margins for one output, (n, K) for K.
    """
    data, indices, indptr = kernel_arrays(X)
    indices = np.asarray(indices)
    inside = indices < learner.n_features
    if learner.n_features <= SPARSE_WIDTH * len(indices):
        columns = sorted_rows(indices[inside], learner.n_features)     # O(d), not a sort
        position = np.full(max(learner.n_features, X.shape[1]), len(columns), dtype=indices.dtype)
        position[columns] = np.arange(len(columns), dtype=indices.dtype)
        local = position[indices]   # a lookup per entry (a search per entry cost more than the passes' reads)
    else:                           # (a hashed 2^28 width: sort the entries, no O(d) table)
        columns = np.unique(indices[inside]).astype(np.int64)
        local = np.full(len(indices), len(columns), dtype=indices.dtype)
        local[inside] = np.searchsorted(columns, indices[inside])
    averaged = learner.average > 0

    def margins():
        weights = learner.coef_at(columns, averaged)
        scores = learner.margins(data, local, indptr, len(columns) + 1, averaged=averaged, weights=weights)
        return scores.ravel() if scores.shape[1] == 1 else scores
    return margins


def warn_unconverged(est, n_iter):
    """scikit-learn's ConvergenceWarning when the passes reached max_iter with a
    stopping rule (tol not None) that could have stopped them: not where max_iter
    <= n_iter_no_change (the rule needs n_iter_no_change + 1 passes; scikit-learn
    warns there too), so that fastprox's one online pass (max_iter=1, the default)
    and a few passes asked for warn nothing.

    Parameters
    ----------
    est : ProxClassifier or ProxRegressor
        Its tol and max_iter.
    n_iter : int
        The passes `fit` ran.
    """
    if est.tol is not None and est.max_iter > est.n_iter_no_change and n_iter == est.max_iter:
        warnings.warn("Maximum number of iteration reached before convergence. Consider increasing "
                      "max_iter to improve the fit.", ConvergenceWarning, stacklevel=3)
