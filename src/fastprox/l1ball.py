"""An l1-ball constrained online linear classifier (projected subgradient).

The constrained counterpart of l1-regularized FOBOS, as the FOBOS
experiments ran it (Duchi & Singer 2009, Sec. 7): minimise the loss subject to
``||w||_1 <= radius`` by taking a subgradient step on each row and projecting
back onto the ball (Duchi, Shalev-Shwartz, Singer & Chandra 2008). The step
touches the row's non-zeros only, and ``SparseL1Ball`` projects in
O(s log d) for a row with s non-zeros. The intercept is not constrained.
"""
import numpy as np
import scipy.sparse as sp
from scipy.special import expit
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from fastprox._concurrency import lock_of
from fastprox._core import model_array
from fastprox._docstrings import sharing
from fastprox._sklearn_names import NamedParameters, checking_names
from fastprox._validation import canonical, check_flag, check_number
from fastprox.projection import SparseL1Ball

_SCHEDULES = {
    "constant": lambda eta0, t: eta0,
    "invsqrt": lambda eta0, t: eta0 / np.sqrt(t),
    "inv": lambda eta0, t: eta0 / t,
}

#: Rows stepped between two pauses of a training call, where the reads waiting are
#: served (as the structured estimators' PAUSE_EXAMPLES): a pause at every row would
#: hand the model over to a reader, and back, once a row.
PAUSE_ROWS = 1024

# d loss(p, y) / d p for y in {-1, +1}.
_LOSS_DERIVATIVES = {
    "hinge": lambda p, y: -y if y * p < 1.0 else 0.0,
    "log": lambda p, y: -y * expit(-y * p),
}


class L1BallClassifier(NamedParameters, ClassifierMixin, BaseEstimator):
    """Binary linear classifier with ``||coef_||_1 <= radius`` at all times.

    For each row ``x_t`` (label ``y_t`` in {-1, +1}, the larger class being +1),
    step ``t`` counting every row seen since ``fit``:

        p = <w, x_t> + b
        w <- Pi_radius(w - eta_t * l'(p, y_t) * x_t),   b <- b - eta_t * l'(p, y_t)

    Parameters
    ----------
    radius : float > 0, default=1.0
        The l1-ball's radius: a hard bound on the model's l1 norm, where a
        penalty would only weigh it.
    loss : {"hinge", "log"}, default="hinge"
        The loss per row.
    eta0 : float > 0, default=0.1
        The base step.
    schedule : {"constant", "invsqrt", "inv"}, default="invsqrt"
        The step eta_t: eta0, eta0 / sqrt(t) or eta0 / t.
    max_iter : int >= 1, default=1
        Passes over the data in ``fit``.
    fit_intercept : bool, default=True
        Fit an intercept b, outside the ball.
    shuffle : bool, default=True
        Shuffle the rows before each pass of ``fit``.
    random_state : int or None, default=None
        The shuffling's seed.

    Attributes
    ----------
    coef_ : ndarray of shape (1, n_features)
        The weights w, inside the ball: a read-only copy of the ball's state.
    intercept_ : ndarray of shape (1,)
        The intercept b.
    classes_ : ndarray of shape (2,)
        The two labels, sorted; ``classes_[1]`` is +1.
    n_features_in_ : int
        The width of X, checked at prediction and by ``partial_fit``.
    feature_names_in_ : ndarray of shape (n_features,)
        X's column names, when fitted on a DataFrame with string names.
    t_ : int
        Steps taken since ``fit`` (one per row).
    n_iter_ : int
        Passes of the last training call (``max_iter`` after fit, 1 after partial_fit).

    Notes
    -----
    Safe to share between threads as the other estimators are (`_concurrency`):
    training calls take turns, and reads (predict, ``coef_``, pickling) see the
    model after some completed step, a training call letting waiting reads in
    every 1,024 rows and after each pass.
    """

    @checking_names
    def __init__(self, radius=1.0, loss="hinge", eta0=0.1, schedule="invsqrt", max_iter=1,
                 fit_intercept=True, shuffle=True, random_state=None):
        self.radius = radius
        self.loss = loss
        self.eta0 = eta0
        self.schedule = schedule
        self.max_iter = max_iter
        self.fit_intercept = fit_intercept
        self.shuffle = shuffle
        self.random_state = random_state

    def _check_params(self):
        if self.loss not in _LOSS_DERIVATIVES:
            raise ValueError(f"loss must be one of {sorted(_LOSS_DERIVATIVES)}, got {self.loss!r}")
        if self.schedule not in _SCHEDULES:
            raise ValueError(f"schedule must be one of {sorted(_SCHEDULES)}, got {self.schedule!r}")
        check_number("radius", self.radius, 0.0, low_open=True)
        check_number("eta0", self.eta0, 0.0, low_open=True)
        check_number("max_iter", self.max_iter, 1, integer=True)
        for name in ("fit_intercept", "shuffle"):
            check_flag(name, getattr(self, name))

    def _rows(self, X, y="no_validation", reset=False):
        """X checked as scikit-learn checks it (`validate_data`: finite numbers, 2-d,
        as wide as the model unless ``reset``, the same feature names), as float64
        CSR rows with sorted unique indices (a copy where the caller's are not);
        with y given (None included: refused), the labels too (1-d, as long as X, of
        classes, not continuous)."""
        kwargs = dict(accept_sparse="csr", dtype=np.float64)
        if isinstance(y, str) and y == "no_validation":
            return canonical(sp.csr_matrix(validate_data(self, X, reset=reset, **kwargs)))
        X, y = validate_data(self, X, y, reset=reset, **kwargs)
        check_classification_targets(y)
        return canonical(sp.csr_matrix(X)), y

    def _start(self, n_features, classes):
        classes = np.unique(classes)
        if classes.size != 2:
            raise ValueError("Only binary classification is supported: L1BallClassifier needs exactly 2 "
                             f"classes, got {classes.size} "
                             f"class{'' if classes.size == 1 else 'es'}: {classes[:10]!r}; use ProxClassifier "
                             "for more classes.")
        self.classes_ = classes
        self._ball = SparseL1Ball(np.zeros(n_features), self.radius)
        self.intercept_ = np.zeros(1)
        self.t_ = 0

    def _coef(self):
        """The weights `coef_` gives: a new dense copy of the ball's."""
        check_is_fitted(self)
        with lock_of(self).reading():
            return self._ball.to_dense()[np.newaxis, :]

    coef_ = model_array(_coef, "coef_", "fit starts from zero weights, partial_fit continues the trained ones",
                        """w, (1, n_features): read-only, a copy of the ball's state, which training
                        continues from (a write to the array could not reach it, so it raises
                        instead of changing the predictions until the next partial_fit).""",
                        state="the ball's state")

    def _signs(self, y):
        y = np.asarray(y)
        unknown = ~np.isin(y, self.classes_)
        if unknown.any():
            raise ValueError(f"labels {np.unique(y[unknown])!r} are not in classes_ {self.classes_!r}")
        return np.where(y == self.classes_[1], 1.0, -1.0)

    def _pass(self, X, signs, order):
        """One projected subgradient step per row, in ``order``, the parameters read
        once (a set_params from another thread takes effect at the next call); every
        PAUSE_ROWS rows and at the end, a `ModelLock.pause` serves the reads waiting."""
        dloss, step = _LOSS_DERIVATIVES[self.loss], _SCHEDULES[self.schedule]
        eta0, fit_intercept, ball, pause = self.eta0, self.fit_intercept, self._ball, lock_of(self).pause
        for done, i in enumerate(order, 1):
            start, stop = X.indptr[i], X.indptr[i + 1]
            indices, values = X.indices[start:stop], X.data[start:stop]
            eta = step(eta0, self.t_ + 1)
            slope = dloss(ball.dot(indices, values) + self.intercept_[0], signs[i])
            if slope != 0.0:
                ball.add(indices, -eta * slope * values)
                if fit_intercept:
                    self.intercept_[0] -= eta * slope
            self.t_ += 1
            if done % PAUSE_ROWS == 0:
                pause()
        pause()

    def _training(self, train, X, y, **kwargs):
        """``train(X, y, **kwargs)`` as one training call: after the calls from other
        threads that arrived before it, with no read in the middle of a step."""
        with lock_of(self).training():
            return train(X, y, **kwargs)

    def fit(self, X, y):
        """Start from w = 0 and make ``max_iter`` passes over (X, y).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            The rows.
        y : array-like of shape (n_samples,)
            Their labels, two classes.

        Returns
        -------
        self : L1BallClassifier
            The trained classifier.
        """
        return self._training(self._fit, X, y)

    def _fit(self, X, y):
        """`fit`'s work, inside its training call."""
        self._check_params()
        rng = _shuffler(self.random_state)
        X, y = self._rows(X, y, reset=True)
        self._start(X.shape[1], y)
        signs = self._signs(y)
        for _ in range(self.max_iter):
            self._pass(X, signs, rng.permutation(X.shape[0]) if self.shuffle else range(X.shape[0]))
        self.n_iter_ = self.max_iter
        return self

    @sharing(fit)
    def partial_fit(self, X, y, classes=None):
        """One pass over (X, y) in order, continuing from the current model.

        Parameters
        ----------
        classes : array-like of shape (2,), default=None
            Both labels; required on the first call.

        Returns
        -------
        self : L1BallClassifier
            The classifier, trained on the rows.
        """
        return self._training(self._partial_fit, X, y, classes=classes)

    def _partial_fit(self, X, y, classes):
        """`partial_fit`'s work, inside its training call."""
        self._check_params()
        first = not hasattr(self, "_ball")
        if first and classes is None:
            raise ValueError("pass classes=[negative, positive] to the first partial_fit")
        X, y = self._rows(X, y, reset=first)
        if first:
            self._start(X.shape[1], classes)
        elif classes is not None and not np.array_equal(np.unique(classes), self.classes_):
            raise ValueError(f"classes={classes!r} differs from the classes of the first call, {self.classes_!r}.")
        elif self.radius != self._ball.radius:     # (the ball keeps the radius it was made with)
            raise ValueError(f"cannot continue training the model: radius={self.radius!r} but its ball was made "
                             f"with radius={self._ball.radius!r}; fit anew, or set_params(radius="
                             f"{self._ball.radius!r}) to continue.")
        self._pass(X, self._signs(y), range(X.shape[0]))
        self.n_iter_ = 1
        return self

    @sharing(fit)
    def decision_function(self, X):
        """<w, x> + b for each row.

        Returns
        -------
        ndarray of shape (n_samples,)
            The margins.
        """
        check_is_fitted(self)
        with lock_of(self).reading():       # the width, the weights and the intercept of one step
            return np.asarray(self._rows(X) @ self._ball.to_dense()) + self.intercept_[0]

    def __getstate__(self):
        """The pickle's state: the model between two steps, its ball and intercept
        copied under the read lock (pickle reads the state after this returns, when a
        training call may have stepped on); the lock is left out, a copy gets its own."""
        with lock_of(self).reading():
            state = dict(super().__getstate__())
            if "_ball" in state:
                state["_ball"], state["intercept_"] = self._ball.copy(), self.intercept_.copy()
        state.pop("_lock", None)
        return state

    def __setstate__(self, state):
        """A pickle's state, its intercept made the estimator's own array: training
        writes into it, and a pickle's may be a read-only map of its file (joblib's
        ``mmap_mode="r"``)."""
        super().__setstate__(state)
        if "intercept_" in self.__dict__:
            self.intercept_ = np.array(self.intercept_)

    @sharing(fit)
    def predict(self, X):
        """The class of each row: classes_[1] where the decision is > 0.

        Returns
        -------
        ndarray of shape (n_samples,)
            The labels.
        """
        positive = self.decision_function(X) > 0
        return self.classes_[positive.astype(int)]

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        tags.classifier_tags.multi_class = False
        return tags


def _shuffler(random_state):
    """NumPy's generator for ``random_state`` (``default_rng``: every seed it takes
    shuffles as before), a seed it cannot take refused with a ValueError naming the
    parameter, as scikit-learn's ``check_random_state`` refuses one, not NumPy's
    TypeError."""
    try:
        return np.random.default_rng(random_state)
    except (TypeError, ValueError):
        raise ValueError(f"random_state={random_state!r} cannot seed the shuffling: give None, an int >= 0 "
                         f"or a numpy.random.Generator") from None
