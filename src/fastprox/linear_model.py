"""scikit-learn estimators over the lazy kernels: the Python layer selects
(validation, defaults, label encoding, passes), `_kernels.Learner` computes."""
import time

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
from sklearn.utils import check_random_state
from sklearn.utils.class_weight import compute_class_weight
from sklearn.utils.metaestimators import available_if
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils import check_array, check_X_y
from sklearn.utils.validation import (check_is_fitted, validate_data, _check_feature_names, _check_sample_weight,
                                      _get_feature_names)

from ._concurrency import LearnerState, lock_of
from ._restore import restored_on_failure
from ._sklearn_names import EQUIVALENTS, NamedParameters, checking_names, refuse_unknown
from ._stopping import StoppingRule, held_out_score, validation_split, warn_unconverged
from ._core import (AUTO_ROWS, CLASSIFIER_DEFAULTS as C, LATER_PARAMS, REGRESSOR_DEFAULTS as R, check_classes,
                    check_same_groups, check_same_hashing, check_same_kernel, encode_labels, has_proba, margins,
                    model_array, model_coef, model_intercept, model_nonzeros, new_learner, predictions, probabilities,
                    reads_head, run_passes)
from ._arrays import all_finite, two_labels
from ._docstrings import sharing
from ._validation import (CLASSIFICATION_LOSSES, MULTI_CLASS, REGRESSION_LOSSES, as_float_array,
                          canonical, check_one_of, check_params)


class _BaseProx(NamedParameters, BaseEstimator):
    """Shared training loop: a stream of CSR rows through one `Learner`.

    Safe to share between threads (`_concurrency`): training calls take turns,
    and reads (predict, coef_, pickling, save_model) see the model after some
    completed step: before or after a training call, or at one of the pauses a
    training call makes every 65,536 rows and between passes.
    """

    _losses = ()
    _equivalents = EQUIVALENTS

    def __init__(self, loss, penalty, alpha, l1_ratio, update, schedule, step, eta0, t0, delta, rda_rho,
                 berhu_gamma, batch_size, fit_intercept, intercept_scaling, max_iter, shuffle, random_state,
                 warm_start, epsilon, groups, group_weights, grow_features, hash_bits, verbose, average,
                 tol, n_iter_no_change, early_stopping, validation_fraction, learning_rate, power_t):
        self.loss = loss
        self.penalty = penalty
        self.alpha = alpha
        self.l1_ratio = l1_ratio
        self.update = update
        self.schedule = schedule
        self.step = step
        self.eta0 = eta0
        self.t0 = t0
        self.delta = delta
        self.rda_rho = rda_rho
        self.berhu_gamma = berhu_gamma
        self.batch_size = batch_size
        self.fit_intercept = fit_intercept
        self.intercept_scaling = intercept_scaling
        self.max_iter = max_iter
        self.shuffle = shuffle
        self.random_state = random_state
        self.warm_start = warm_start
        self.epsilon = epsilon
        self.groups = groups
        self.group_weights = group_weights
        self.grow_features = grow_features
        self.hash_bits = hash_bits
        self.verbose = verbose
        self.average = average
        self.tol = tol
        self.n_iter_no_change = n_iter_no_change
        self.early_stopping = early_stopping
        self.validation_fraction = validation_fraction
        self.learning_rate = learning_rate
        self.power_t = power_t

    # ------------------------------------------------------------------ model
    def _coef(self):
        """The weights `coef_` gives: the kernel's read-only snapshot of this step
        (`Learner.coef`), or its CSR copy after `sparsify()`."""
        check_is_fitted(self, "t_")
        sparse = getattr(self, "_sparse_coef", False)
        with lock_of(self).reading():
            coef = model_nonzeros(self._learner) if sparse else model_coef(self._learner)
        return sp.csr_matrix(coef) if sparse else coef

    def _intercept(self):
        """The intercepts `intercept_` gives (a new array)."""
        check_is_fitted(self, "t_")
        with lock_of(self).reading():
            return model_intercept(self._learner)

    coef_ = model_array(_coef, "coef_", EQUIVALENTS["coef_init"],
                        """w_{T+1}: (1, d) for one output, (K, d) for K classes; sparse after
                        `sparsify()`. With ``average``, the averaged iterate's weights
                        (scikit-learn's meaning). Read-only (`_core.model_array`).""")
    intercept_ = model_array(_intercept, "intercept_", EQUIVALENTS["intercept_init"],
                             """b_{T+1}, one entry per output (with ``average``, the averaged
                             iterate's); read-only, as ``coef_``.""")

    @property
    def eta0_(self):
        """The eta0 the model trains with: `eta0`, or what "auto" chose at the first call."""
        check_is_fitted(self, "t_")
        return self._learner.eta0

    @property
    def t0_(self):
        """The schedule's offset the model trains with: `t0`, or learning_rate="optimal"'s."""
        check_is_fitted(self, "t_")
        return self._learner.t0

    @property
    def delta_(self):
        """The delta the model trains with: `delta`, or what "auto" chose at the first call."""
        check_is_fitted(self, "t_")
        return self._learner.delta

    @property
    def schedule_(self):
        """The schedule the model trains with: `schedule`, or the rule's default for None."""
        check_is_fitted(self, "t_")
        return self._learner.schedule

    @property
    def step_(self):
        """fobos's forward step: `step`, or the rule's default for None."""
        check_is_fitted(self, "t_")
        return self._learner.step

    @property
    def n_nonzero_rows_(self):
        """Features with a non-zero weight for some output (rows of W switched on)."""
        check_is_fitted(self, "t_")
        with lock_of(self).reading():
            return int(np.count_nonzero(np.any(model_nonzeros(self._learner) != 0, axis=0)))

    @property
    def group_norms_(self):
        """||W_G|| per group: per feature (default groups) or per user group id 0..p-1."""
        check_is_fitted(self, "t_")
        with lock_of(self).reading():
            coef = model_nonzeros(self._learner)
        norms = np.sqrt(np.sum(coef ** 2, axis=0))
        if self._learner.groups is None:
            return norms
        ids = self._learner.groups
        mask = ids >= 0
        return np.sqrt(np.bincount(ids[mask], weights=norms[mask] ** 2, minlength=ids.max(initial=-1) + 1))

    @property
    def beta_(self):
        """squared_group's kernel weights beta_G = d_G ||W_G|| / sum_H d_H ||W_H|| (MKL
        paper, Alg. 3 line 11, with d = 1): the beta of the simplex that attains
        (sum_G d_G ||W_G||)^2 = min_beta sum_G d_G^2 ||W_G||^2 / beta_G, so they keep
        their meaning as kernel weights under group_weights (0 for d_G = 0)."""
        if self.penalty != "squared_group":
            raise AttributeError("beta_ is defined for penalty='squared_group'.")
        norms = self.group_norms_
        if self._learner.group_weights is not None:
            norms = norms * self._learner.group_weights
        total = norms.sum()
        return norms / total if total > 0 else norms

    def __getstate__(self):
        """The pickle's state: the model at a step boundary (a snapshot of the kernel
        taken under the read lock, `LearnerState`); the lock is left out (copy.copy
        would keep it, and the copy would take turns with this model), a copy gets
        its own."""
        with lock_of(self).reading():
            state = dict(super().__getstate__())     # object.__getstate__ gives __dict__ itself
            if "_learner" in state:
                state["_learner"] = LearnerState(self._learner.__reduce__())
        state.pop("_lock", None)
        return state

    def __setstate__(self, state):
        """A pickle's state; the parameters newer than the pickle take the values that
        model files written before them load with (`_core.LATER_PARAMS`), so that
        get_params, clone and repr read them as they do every other parameter."""
        super().__setstate__(state)
        for name in self._get_param_names():
            if name not in self.__dict__ and name in LATER_PARAMS:
                setattr(self, name, LATER_PARAMS[name])
        if isinstance(self.__dict__.get("_learner"), LearnerState):   # copy.copy's state
            self._learner = self._learner.learner()

    def sparsify(self):
        """Give ``coef_`` as a scipy CSR matrix from now on.

        An l1 model is mostly zeros; the kernel's state is unchanged, only how
        ``coef_`` is returned.

        Returns
        -------
        self : object
            The estimator.
        """
        self._sparse_coef = True
        return self

    def densify(self):
        """Give ``coef_`` as a dense array again (the default).

        Returns
        -------
        self : object
            The estimator.
        """
        self._sparse_coef = False
        return self

    def _margins(self, X):
        """<w_k, x> + b_k: shape (n,) for one output, (n, K) for K outputs."""
        check_is_fitted(self, "t_")
        with lock_of(self).reading():       # the width and the model of one step
            if not self._plain_csr(X, None, reset=False):
                X = self._validate(X)
            return margins(self._learner, self._hashed(X if sp.issparse(X) else sp.csr_matrix(X)))

    # ------------------------------------------------------------------ training
    def _check_input(self, X, y, reset):
        if y is None:       # (`_plain_csr` reads None as "no labels", as prediction gives)
            raise ValueError(f"This {type(self).__name__} estimator requires y to be passed, but the target y "
                             "is None: give the rows' labels.")
        shape = getattr(X, "shape", ())
        if not reset and len(shape) == 2 and shape[1] > self.n_features_in_ and not self._any_width():
            raise ValueError(f"X has {shape[1]} features, but {type(self).__name__} is expecting "
                             f"{self.n_features_in_} features as input; a stream whose rows widen needs "
                             "grow_features=True (or hash_bits) from its first call.")
        if self._plain_csr(X, y, reset):
            return X, y
        X, y = self._validate(X, y, reset=reset)
        return sp.csr_matrix(X) if not sp.issparse(X) else X, y

    def _validate(self, X, y="no_validation", reset=False):
        """validate_data's checks and conversions (of X alone when y is its default);
        with grow_features or a hashing model, those of X and y without the check
        that X is as wide as the model (`_grow`, `_hashed`), X's column names
        checked by `_check_any_width_names`."""
        kwargs = dict(accept_sparse="csr", dtype=[np.float64, np.float32], accept_large_sparse=True)
        no_y = isinstance(y, str) and y == "no_validation"
        if not no_y:
            kwargs["y_numeric"] = self._losses is REGRESSION_LOSSES
        if not self._any_width():
            return validate_data(self, X, y, reset=reset, **kwargs)
        self._check_any_width_names(X, reset, training=not no_y)
        if no_y:
            return check_array(X, **kwargs)
        return check_X_y(X, y, **kwargs)        # n_features_in_ is the grown model's (`_grow`)

    def _check_any_width_names(self, X, reset, training):
        """X's column names (a DataFrame's) under grow_features or hashing, as
        validate_data checks them at a fixed width: kept by a first fit
        (``feature_names_in_``), then required to agree, in order, on the columns
        the model and X both have (the model reads X's columns by position: a
        reordered DataFrame would meet the wrong weights), the names of a training
        call's wider X kept; X without names where the model has them, or the
        converse, warns as scikit-learn's estimators warn."""
        if reset:
            _check_feature_names(self, X, reset=True)
            return
        names, fitted = _get_feature_names(X), getattr(self, "feature_names_in_", None)
        if names is None or fitted is None:
            _check_feature_names(self, X, reset=False)      # (its warnings, or nothing)
            return
        both = min(len(names), len(fitted))
        if not np.array_equal(names[:both], fitted[:both]):
            differ = np.flatnonzero(names[:both] != fitted[:both])[0]
            raise ValueError(f"The feature names should match those that were passed during fit: column "
                             f"{differ} is {names[differ]!r} where the model's is {fitted[differ]!r}. With "
                             f"grow_features or hash_bits the model reads X's columns by position: give its "
                             f"columns first, in the order it was trained with, and new ones after them.")
        if training and len(names) > len(fitted):
            self.feature_names_in_ = names

    def _any_width(self):
        """Whether X may have any width: grow_features, or a model that hashes its
        input's ids (hash_bits_)."""
        return self.grow_features or getattr(self, "hash_bits_", None) is not None

    def _hashed(self, X):
        """The CSR matrix X as the model reads it: its ids hashed into 2^hash_bits_
        columns (`hash_features`) by a model that hashes, else X itself. The model
        remembers its hashing, so that prediction hashes as training did (a model
        file keeps it too)."""
        bits = getattr(self, "hash_bits_", None)
        if bits is None:
            return X
        from .hashing import hash_features
        return hash_features(X, bits)

    def _grow(self, X):
        """With grow_features, widen the model to X's width (features met for the first
        time join at weight 0, as never touched: `Learner.grow`)."""
        if self.grow_features and X.shape[1] > self._learner.n_features:
            self._learner.grow(X.shape[1])
        self.n_features_in_ = self._learner.n_features

    def _plain_csr(self, X, y, reset):
        """Whether X (and y, unless None) need none of validate_data's conversions: a
        finite float CSR matrix without feature names, finite numeric 1-d labels of
        its length. Then n_features_in_ is set or checked here, as validate_data
        would, without its dataframe probes (2/3 of a small partial_fit call);
        anything else, errors included, goes through validate_data.

        A first fit (`reset`) leaves X's values to the kernel, which stops at the
        first row whose margin is not finite (NaN or infinity in X gives one) and
        names it; `_fit` then restores the estimator: a pass over X saved. A call
        that continues a model must not change it before refusing X, and
        prediction must not return NaN: those check X here."""
        if not (sp.issparse(X) and X.format == "csr" and X.dtype in (np.float64, np.float32)
                and min(X.shape) > 0 and not hasattr(self, "feature_names_in_")
                and (reset or _finite(X.data))):
            return False
        if y is not None and not (isinstance(y, np.ndarray) and y.shape == (X.shape[0],)
                                  and y.dtype.kind in "biuf" and _finite(y)):
            return False
        if reset:
            self.n_features_in_ = X.shape[1]
        elif X.shape[1] != getattr(self, "n_features_in_", X.shape[1]) and not self._any_width():
            raise ValueError(f"X has {X.shape[1]} features, but {type(self).__name__} "
                             f"is expecting {self.n_features_in_} features as input.")
        return True

    def _fit(self, X, y, sample_weight, classes=None, incremental=False):
        """`_train` a new model (first) or the current one, one training call at a time
        (`_concurrency`). A `fit` that fails or is interrupted leaves the estimator as
        it was (a warm start's model included: it is copied first); so does a first
        `partial_fit`. A later `partial_fit` that fails or is interrupted keeps the
        steps it completed, and t_ counts them."""
        with lock_of(self).training():
            check_params(self, self._losses)
            first = not (incremental or self.warm_start) or not hasattr(self, "_learner")
            if not first:
                self._check_same_kernel()
            try:
                with restored_on_failure(self, first or not incremental, model=not first):
                    if first:
                        self.hash_bits_ = self.hash_bits
                    return self._train(X, y, sample_weight, classes, incremental, first)
            finally:
                if hasattr(self, "_learner"):
                    self.t_ = self._learner.t

    def _check_same_kernel(self):
        """partial_fit and a warm start continue the kernel they have: a parameter it was
        built with and set_params changed since raises instead of going unheeded. The
        parameters are read as `new_learner` reads them (vars: get_params costs a
        partial_fit call more than its check)."""
        params = vars(self)
        try:
            check_same_kernel(params, self._learner)
            check_same_groups(params, self._learner.groups, self._learner.group_weights)
            check_same_hashing(params, getattr(self, "hash_bits_", None))
        except ValueError as e:
            fresh = " with warm_start=False" if self.warm_start else ""
            raise ValueError(f"cannot continue training the model: {e}{fresh}") from None

    def _train(self, X, y, sample_weight, classes, incremental, first):
        """Check and encode the input, make the learner if first, run the passes."""
        X, y = self._check_input(X, y, reset=first)
        X = canonical(self._hashed(X))      # once: the "auto" steps and the passes read it
        target, n_outputs, ovr, multinomial = self._encode(y, classes, first)
        if sample_weight is not None:
            sample_weight = _check_sample_weight(sample_weight, X)
        rows, held_out = (None, None) if incremental else validation_split(
            self, y, sample_weight, self._losses is not REGRESSION_LOSSES)
        if first:
            head = (X if rows is None or not reads_head(vars(self), multinomial)
                    else X[rows[:AUTO_ROWS]])       # the "auto" steps read training rows
            self._learner = new_learner(vars(self), X.shape[1], n_outputs, ovr, multinomial, [head])
        self._grow(X)
        rng = None
        if not incremental and self.shuffle:
            rng = check_random_state(self.random_state)
        passes = 1 if incremental else self.max_iter
        weights = self._row_weights(X, y, sample_weight)
        n_rows = X.shape[0] if rows is None else len(rows)
        rule = None if incremental else StoppingRule(self, n_rows, None if held_out is None else held_out_score(
            self._learner, X[held_out], y[held_out], None if sample_weight is None else sample_weight[held_out],
            getattr(self, "classes_", None)))
        report = _pass_report(self._learner, n_rows) if self.verbose else None
        total = run_passes(self._learner, X, target, weights, self.batch_size, passes, rng, self._pause,
                           _after_pass(report, rule), rows)
        passes = passes if rule is None else rule.passes
        self.progressive_loss_ = total / max(1, passes * n_rows)
        self.n_iter_ = passes
        self.t_ = self._learner.t
        return self

    def _row_weights(self, X, y, sample_weight):
        """Each row's weight: sample_weight checked, or None (unit weights, which
        the kernel makes)."""
        return None if sample_weight is None else _check_sample_weight(sample_weight, X)

    def _pause(self):
        """Serve the reads waiting for this training call (at a step boundary)."""
        self.t_ = self._learner.t
        lock_of(self).pause()

    def fit(self, X, y, sample_weight=None, coef_init=None, intercept_init=None):
        """Train a new model (or continue it, with ``warm_start``) by up to ``max_iter``
        passes, fewer where the stopping rule stops them (``tol``, ``early_stopping``).

        NaN or infinity in X, or values so large that a margin or the state would
        overflow, raise a ValueError naming the row; a fit that fails or is
        interrupted (Ctrl-C) leaves the estimator as it was.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            The rows; a CSR matrix of float32 or float64 values is read without
            a copy.
        y : array-like of shape (n_samples,)
            Class labels (ProxClassifier) or targets (ProxRegressor).
        sample_weight : array-like of shape (n_samples,), default=None
            Each row's weight, which scales its step (None: 1 each).
        coef_init, intercept_init : None
            SGDClassifier's starting weights: refused, naming what to use instead
            (fastprox starts from zero; ``warm_start`` or ``partial_fit`` continue a
            model).

        Returns
        -------
        self : object
            The trained estimator.
        """
        given = {name for name, value in (("coef_init", coef_init), ("intercept_init", intercept_init))
                 if value is not None}
        refuse_unknown(type(self), given)
        self._fit(X, y, sample_weight)
        warn_unconverged(self, self.n_iter_)     # after the call: a warning raised as an error keeps the fit
        return self

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags


def _after_pass(report, rule):
    """What `run_passes` calls after each pass: verbose's `report` and the stopping
    `rule` (either may be None), true to stop; with a report, the stop is printed as
    scikit-learn's SGD prints it."""
    if rule is None:
        return report
    start = time.perf_counter()

    def after(index, loss):
        if report is not None:
            report(index, loss)
        stop = rule(index, loss)
        if stop and report is not None:
            print(f"Convergence after {index + 1} epochs took {time.perf_counter() - start:.2f} seconds")
        return stop
    return after


def _pass_report(learner, n_rows):
    """verbose's report after each pass over n_rows rows, printed to stdout as
    scikit-learn's SGD prints each epoch: the pass's number, the norm of coef_
    and its non-zeros, the intercept, t_ (steps so far; SGD's T counts rows),
    the pass's progressive loss (mean over its rows) and the time since the
    training call began."""
    start = time.perf_counter()

    def report(index, loss):
        coef = learner.coef()
        print(f"-- Epoch {index + 1}")
        print(f"Norm: {np.linalg.norm(coef):.2f}, NNZs: {np.count_nonzero(coef)}, "
              f"Bias: {_bias(learner.intercept())}, T: {learner.t}, Avg. loss: {loss / n_rows:f}")
        print(f"Total training time: {time.perf_counter() - start:.2f} seconds.", flush=True)
    return report


def _bias(intercept):
    """The intercept as verbose prints it: SGD's %.6f, in brackets for K outputs."""
    text = " ".join(f"{b:.6f}" for b in intercept)
    return text if len(intercept) == 1 else f"[{text}]"


def _finite(a):
    """Whether the numbers of the 1-d array a are all finite (integers always are);
    float32/float64 in one pass without a temporary (`_arrays.all_finite`)."""
    if a.dtype.kind in "biu":
        return True
    if a.dtype in (np.float64, np.float32) and a.flags.c_contiguous:
        return all_finite(a)
    return bool(np.isfinite(a).all())


class ProxClassifier(ClassifierMixin, _BaseProx):
    """Linear classifier trained online by FOBOS, RDA or FTRL-Proximal, lazily and exactly.

    Each step costs time proportional to the non-zeros of its rows, and the model
    read at any time (``coef_``, ``predict``, a pickle, a saved model) equals the
    eager definition of the contract (docs/contract.md) to rounding. The defaults
    need no tuning and read nothing from the data (docs/defaults.md); the manual's
    user guide groups the parameters by what they choose.

    Parameters
    ----------
    loss : {"log", "hinge", "squared_hinge", "modified_huber", "perceptron"}, default="log"
        The loss per row. "log_loss" (scikit-learn's name) is "log"; "log" and
        "modified_huber" give ``predict_proba``. "perceptron" is max(0, -y p),
        scikit-learn's, and takes the gradient step (the invariant flow stops at
        margin 0, where every model starts).
    penalty : {"none", "l1", "l2", "elasticnet", "berhu", "l1_l2", "l1_linf", \
"sparse_group", "squared_group"} or None, default="l1"
        The regularizer r(w), applied by its exact proximal step. None
        (scikit-learn's spelling) is "none". It takes effect with a positive
        ``alpha``.
    alpha : float, default=0.0
        Penalty weight per example: the objective is mean loss + alpha * r(w)
        under every update rule, so rules can be swapped without re-tuning. 0
        leaves the penalty off, which keeps the defaults scale-free.
    l1_ratio : float in [0, 1], default=0.15
        Share of l1 in the elastic net (and of the entrywise l1 in
        "sparse_group").
    update : {"fobos", "rda", "ftrl"}, default="fobos"
        The update rule: forward-backward splitting, regularized dual averaging
        (Xiao 2010) or FTRL-Proximal (McMahan 2011).
    schedule : {"constant", "invsqrt", "inv", "adagrad", "normalized"} or None, default=None
        The step sizes. None picks "normalized" where the rule takes it (fobos,
        penalty "none" or "l1", one row per step, not multinomial), else
        "adagrad", or "invsqrt" where the penalty has no exact lazy form under
        "adagrad" (the group penalties under fobos); ``schedule_`` says which. "normalized" is Vowpal Wabbit's
        scale-free AdaGrad (Ross, Mineiro & Langford 2013); rda takes
        "invsqrt" or "adagrad", ftrl "adagrad".
    step : {"gradient", "invariant"} or None, default=None
        FOBOS's forward step. "invariant" follows the exact flow of the row's
        loss (Karampatziakis & Langford 2011), so a row never overshoots its
        minimum and a row of weight h counts as h rows; None picks it where the
        rule takes it (fobos, one row per step, not multinomial, not the
        perceptron), else "gradient"; ``step_`` says which.
    eta0 : float or "auto", default="auto"
        Base step size (AdaGrad's eta). "auto" is 0.5, except under "adagrad",
        where it is 1 / sqrt(mean ||(1, x)||^2) over the first 10,000 rows of
        the first training call.
    t0 : float >= 0, default=0.0
        The offset of the decaying scalar schedules, eta0 / sqrt(t + t0) and
        eta0 / (t + t0) (fobos only; "constant" ignores it): the first steps
        are smaller and the rate's tail the same, Bottou's shifted 1/t, which
        scikit-learn's "optimal" rate is (``learning_rate``).
    delta : float or "auto", default="auto"
        AdaGrad's offset, eta_j = eta0 / (delta + sqrt(G_j)). "auto" is the root
        mean square of the first rows' stored values; unused by the other
        schedules. Under AdaGrad, eta0 and delta are fixed once chosen: give a
        first batch of rows, or numbers.
    rda_rho : float, default=0.0
        Enhanced l1-RDA's extra sparsity (Xiao's rho); rda only.
    berhu_gamma : float, default=1.0
        Berhu's switch point between l1 and squared l2.
    batch_size : int, default=1
        Rows per step; the gradient is their mean. Each pass and each
        ``partial_fit`` call ends with a possibly shorter step.
    fit_intercept : bool, default=True
        Fit an unpenalized intercept.
    intercept_scaling : float > 0, default=1.0
        The intercept is the weight of a constant feature of this value (its
        margin term and ``intercept_`` are intercept_scaling times that weight,
        its gradient the score's gradient times it), as in scikit-learn's
        liblinear models. Under the scalar schedules with the gradient step,
        intercept_scaling=s scales the intercept's updates by s^2: 0.1 is
        SGDClassifier's 0.01 decay of them on sparse X. Under "adagrad" and
        "normalized" it is one feature's scale like any other.
    max_iter : int, default=1
        Passes over the data in ``fit``; one pass is what online learning is
        for.
    shuffle : bool, default=True
        Shuffle the rows before each pass of ``fit`` (never in ``partial_fit``).
    random_state : int, RandomState instance or None, default=None
        The seed of the shuffles, for reproducible passes.
    warm_start : bool, default=False
        ``fit`` continues from the current model and step count. The model keeps
        the parameters it was built with: one that ``set_params`` changed since
        raises ValueError (``max_iter``, ``shuffle``, ``class_weight`` may
        change).
    epsilon : float, default=0.1
        Unused by the classification losses; kept for a signature shared with
        ``ProxRegressor``.
    multi_class : {"ovr", "multinomial"}, default="ovr"
        For K >= 3 classes: K binary models trained in the same pass ("ovr"), or
        one K-score model with the softmax ("log") or Crammer-Singer ("hinge")
        loss. Two classes always give one binary model.
    groups : array-like of int of shape (n_features,) or None, default=None
        The groups of the group penalties ("l1_l2", "l1_linf", "sparse_group",
        "squared_group"): features with the same id form a group, -1 leaves a
        feature unpenalized. None makes each feature's row of W a group.
    group_weights : array-like of float >= 0, one per group, or None, default=None
        The groups' weights d_G in r(W) = sum_G d_G ||W_G|| (None: all 1), e.g.
        sqrt(group size) so that large groups do not win by size; 0 leaves a
        group unpenalized.
    grow_features : bool, default=False
        Accept X of any width: the model widens to the widest X it has trained
        on, new features joining at weight 0, so that a stream of unknown width
        (``iter_libsvm`` chunks) trains with ``partial_fit``. Off by default, so
        that scikit-learn's width check catches mistakes.
    hash_bits : int in [1, 62] or None, default=None
        Hash X's column ids into 2^hash_bits buckets in every call (Vowpal
        Wabbit's ``-b``), for ids without a useful bound. The model remembers
        its hashing (``hash_bits_``): pass raw ids to prediction too.
    class_weight : dict, "balanced" or None, default=None
        Multiplies each row's sample weight by its class's weight, as in
        scikit-learn, for imbalanced data. ``partial_fit`` refuses "balanced"
        (one batch's frequencies are not the stream's): pass a dict.
    verbose : int, default=0
        If > 0, print scikit-learn SGD's report after each pass (norm,
        non-zeros, intercept, steps, average loss, time).
    average : bool or int, default=False
        scikit-learn's: True makes ``coef_``, ``intercept_`` and the predictions
        read the averaged iterate, the mean of the models after each step (the
        RDA and online MKL papers state their guarantees for it); an integer
        a >= 1 averages from step a on. Training continues from the last model.
        Kept exactly and lazily where the rule allows it; refused, naming the
        rules that do, elsewhere (docs/contract.md, "Averaged iterate").
    tol : float >= 0 or None, default=1e-3
        scikit-learn's stopping rule for ``fit``'s passes: stop once
        ``n_iter_no_change`` consecutive passes have not lowered the pass's
        summed training loss (each row's loss before its step) below the best by
        ``tol`` times the rows, or, with ``early_stopping``, raised the held-out
        score by ``tol``. None runs all ``max_iter`` passes. The rule needs
        ``n_iter_no_change + 1`` passes, so the one-pass default is unchanged by
        it, and a script from SGDClassifier with ``max_iter=1000`` stops as it
        does. ``partial_fit`` never stops.
    n_iter_no_change : int >= 1, default=5
        Passes without improvement before stopping.
    early_stopping : bool, default=False
        Hold out ``validation_fraction`` of ``fit``'s rows (stratified for the
        classifier, as scikit-learn's split, seeded by ``random_state``) and stop
        on their score (accuracy; R^2 for the regressor), the averaged model's
        with ``average``. One-vs-rest stops its K outputs together.
    validation_fraction : float in (0, 1), default=0.1
        The share of rows ``early_stopping`` holds out.
    learning_rate : {None, "constant", "optimal", "invscaling"}, default=None
        scikit-learn's name for the schedule: "constant" is
        ``schedule="constant"``, "invscaling" (eta0 / t^power_t) is "invsqrt"
        for ``power_t=0.5``, "inv" for 1, "constant" for 0. "optimal" is
        scikit-learn's 1 / (alpha (t + t0)) with Bottou's t0 from alpha and
        the loss: ``schedule="inv"`` with ``eta0=1 / alpha`` and that ``t0``
        (``eta0_``, ``t0_``); it needs ``alpha > 0`` and refuses ``schedule``,
        ``eta0`` and ``t0`` beside it. Its forward step is ``step``'s, the
        invariant step by default: scikit-learn's is ``step="gradient"``.
        "adaptive", "pa1" and "pa2" have no fastprox schedule and are refused
        naming what to use; None leaves it to ``schedule``.
    power_t : float, default=0.5
        The exponent of "invscaling" (0, 0.5 or 1).
    n_jobs : int or None, default=None
        Accepted and unused: one-vs-rest trains its K outputs in one pass of one
        kernel, each row read once for all K.

    Attributes
    ----------
    coef_ : ndarray of shape (1, n_features) or (n_classes, n_features)
        The weights w_{T+1}; a CSR matrix after ``sparsify()``.
    intercept_ : ndarray of shape (1,) or (n_classes,)
        The intercepts b_{T+1}.
    classes_ : ndarray of shape (n_classes,)
        The class labels.
    n_features_in_ : int
        The model's width (the widest X trained on, under ``grow_features``).
    feature_names_in_ : ndarray of shape (n_features,)
        X's column names, when trained on a DataFrame with string names; under
        ``grow_features`` and ``hash_bits``, those of the widest such X, checked
        on the columns the model and X both have.
    t_ : int
        Steps taken so far.
    n_iter_ : int
        Passes of the last training call (``max_iter`` after fit, 1 after
        partial_fit, as SGDClassifier's).
    progressive_loss_ : float
        Mean loss of each row before its update, over the last training call.
    schedule_ : str
        The schedule trained with (``schedule`` with None resolved).
    step_ : str
        The forward step trained with (``step`` with None resolved).
    eta0_ : float
        The base step trained with ("auto" resolved).
    t0_ : float
        The schedule's offset trained with (learning_rate="optimal"'s).
    delta_ : float
        AdaGrad's offset trained with ("auto" resolved).
    hash_bits_ : int or None
        The hashing the model applies to X's ids.
    n_nonzero_rows_ : int
        Features with a non-zero weight for some output.
    group_norms_ : ndarray of shape (n_groups,)
        ||W_G|| per group (per feature for the default groups).
    beta_ : ndarray of shape (n_groups,)
        "squared_group"'s kernel weights (online MKL), d_G ||W_G|| normalized.

    See Also
    --------
    ProxRegressor : The same learners for regression.
    sklearn.linear_model.SGDClassifier : The eager peer whose parameters these follow.

    Examples
    --------
    >>> import numpy as np, scipy.sparse as sp
    >>> from fastprox import ProxClassifier
    >>> X = sp.csr_matrix(np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0], [0.0, 2.0]]))
    >>> clf = ProxClassifier(shuffle=False).fit(X, [1, -1, 1, -1])
    >>> clf.predict(X).shape
    (4,)
    >>> clf.partial_fit(X, [1, -1, 1, -1]).t_
    8
    """

    _losses = CLASSIFICATION_LOSSES

    @checking_names
    def __init__(self, loss=C["loss"], penalty=C["penalty"], alpha=C["alpha"],
                 l1_ratio=C["l1_ratio"], update=C["update"], schedule=C["schedule"], step=C["step"],
                 eta0=C["eta0"], t0=C["t0"], delta=C["delta"], rda_rho=C["rda_rho"],
                 berhu_gamma=C["berhu_gamma"], batch_size=C["batch_size"],
                 fit_intercept=C["fit_intercept"], intercept_scaling=C["intercept_scaling"],
                 max_iter=C["max_iter"], shuffle=C["shuffle"],
                 random_state=C["random_state"], warm_start=C["warm_start"],
                 epsilon=C["epsilon"], multi_class=C["multi_class"], groups=C["groups"],
                 group_weights=C["group_weights"], grow_features=C["grow_features"],
                 hash_bits=C["hash_bits"], class_weight=C["class_weight"], verbose=C["verbose"],
                 average=C["average"], tol=C["tol"], n_iter_no_change=C["n_iter_no_change"],
                 early_stopping=C["early_stopping"], validation_fraction=C["validation_fraction"],
                 learning_rate=C["learning_rate"], power_t=C["power_t"], n_jobs=C["n_jobs"]):
        super().__init__(loss=loss, penalty=penalty, alpha=alpha, l1_ratio=l1_ratio, update=update,
                         schedule=schedule, step=step, eta0=eta0, t0=t0, delta=delta, rda_rho=rda_rho,
                         berhu_gamma=berhu_gamma, batch_size=batch_size, fit_intercept=fit_intercept,
                         intercept_scaling=intercept_scaling,
                         max_iter=max_iter, shuffle=shuffle, random_state=random_state,
                         warm_start=warm_start, epsilon=epsilon, groups=groups,
                         group_weights=group_weights, grow_features=grow_features, hash_bits=hash_bits,
                         verbose=verbose, average=average, tol=tol, n_iter_no_change=n_iter_no_change,
                         early_stopping=early_stopping, validation_fraction=validation_fraction,
                         learning_rate=learning_rate, power_t=power_t)
        self.multi_class = multi_class
        self.class_weight = class_weight
        self.n_jobs = n_jobs

    def _encode(self, y, classes, first):
        """Targets for the kernel: +-1 for two classes (the larger is +1), class indices for K >= 3."""
        check_one_of("multi_class", self.multi_class, MULTI_CLASS)
        if first and classes is None and y.dtype == np.float64 and y.flags.c_contiguous:
            two = two_labels(y)         # the common case in one pass: two integer labels
            if two is not None:
                self.classes_ = np.array(two[:2])
                return two[2], 1, False, False
        if y.dtype.kind not in "biuf":      # numbers are checked by check_classes, faster
            check_classification_targets(y)
        if first:
            self.classes_ = np.asarray(check_classes(y if classes is None else np.asarray(classes)))
        elif classes is not None and not np.array_equal(np.unique(classes), self.classes_):
            raise ValueError(f"classes={classes!r} differs from the classes of the first call, {self.classes_!r}.")
        return encode_labels(y, self.classes_, self.multi_class, self.loss)

    def _row_weights(self, X, y, sample_weight):
        """sample_weight times the weight of each row's class (class_weight, by
        scikit-learn's compute_class_weight: "balanced" from this call's y), as
        scikit-learn's classifiers weigh rows; a weighted row is one step scaled
        by its weight."""
        sample_weight = super()._row_weights(X, y, sample_weight)
        if self.class_weight is None:
            return sample_weight
        per_class = compute_class_weight(self.class_weight, classes=self.classes_, y=y)
        weights = per_class[np.searchsorted(self.classes_, y)]
        return weights if sample_weight is None else sample_weight * weights

    @sharing(_BaseProx.fit)
    def partial_fit(self, X, y, classes=None, sample_weight=None):
        """Continue the stream with one pass over (X, y), in order.

        Several calls train what one ``fit`` pass (``shuffle=False``) over the
        concatenated rows trains, bit for bit under the defaults (under AdaGrad,
        given the same ``eta0_`` and ``delta_``). The parameters the model was
        built with stay its own: one changed by ``set_params`` since raises
        ValueError. A call that fails keeps the steps it completed.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            The next rows of the stream.
        y : array-like of shape (n_samples,)
            Their class labels.
        classes : array-like of shape (n_classes,), default=None
            All the labels the stream will contain; required on the first call.

        Returns
        -------
        self : object
            The estimator, trained on the rows.
        """
        if not hasattr(self, "_learner") and classes is None:
            raise ValueError("classes must be passed on the first call to partial_fit "
                             "(all labels the stream will contain).")
        if isinstance(self.class_weight, str) and self.class_weight == "balanced":
            raise ValueError(
                "class_weight='balanced' is not supported by partial_fit, which sees one batch of "
                "the stream at a time. Compute the weights from a large enough sample of the "
                "stream's labels, weights = sklearn.utils.class_weight.compute_class_weight("
                "'balanced', classes=classes, y=y_sample), and pass "
                "class_weight=dict(zip(classes, weights)).")
        return self._fit(X, y, sample_weight, classes=classes, incremental=True)

    @sharing(_BaseProx.fit)
    def decision_function(self, X):
        """The margins <w_k, x> + b_k of the rows.

        Returns
        -------
        ndarray of shape (n_samples,) or (n_samples, n_classes)
            One margin per row for two classes (positive: ``classes_[1]``), one
            per class for K >= 3.
        """
        return self._margins(X)

    @sharing(_BaseProx.fit)
    def predict(self, X):
        """The class with the largest margin (the sign of the margin for two classes).

        Returns
        -------
        ndarray of shape (n_samples,)
            One label of ``classes_`` per row.
        """
        return predictions(self._margins(X), self.classes_)

    def _has_proba(self):
        return has_proba(self.loss)

    @available_if(_has_proba)
    @sharing(_BaseProx.fit)
    def predict_proba(self, X):
        """Class probabilities, for ``loss="log"`` and ``"modified_huber"``.

        The softmax of the scores for the multinomial model; else the logistic of
        the margin ("log") or (clip(margin, -1, 1) + 1) / 2 ("modified_huber", as
        scikit-learn); one-vs-rest probabilities are normalized to sum to one.

        Returns
        -------
        ndarray of shape (n_samples, n_classes)
            Each row's probability of each class of ``classes_``.
        """
        return probabilities(self._margins(X), self._learner.loss, self._learner.multinomial)

    @available_if(_has_proba)
    @sharing(_BaseProx.fit)
    def predict_log_proba(self, X):
        """The logarithm of ``predict_proba``.

        Returns
        -------
        ndarray of shape (n_samples, n_classes)
            Each row's log-probability of each class (-inf for 0).
        """
        with np.errstate(divide="ignore"):
            return np.log(self.predict_proba(X))


@sharing(ProxClassifier, drop=("classes_",))
class ProxRegressor(RegressorMixin, _BaseProx):
    """Linear regressor trained online by FOBOS, RDA or FTRL-Proximal, lazily and exactly.

    ``ProxClassifier``'s learners for real-valued targets: the same rules,
    schedules, steps and penalties, the same contract (docs/contract.md).

    Parameters
    ----------
    loss : {"squared", "huber", "epsilon_insensitive", "squared_epsilon_insensitive"}, default="squared"
        The loss per row. "squared_error" (scikit-learn's name) is "squared".
    epsilon : float, default=0.1
        The width of the Huber and the (squared) epsilon-insensitive losses.

    Attributes
    ----------
    coef_ : ndarray of shape (1, n_features)
        The weights w_{T+1}; a CSR matrix after ``sparsify()``.
    intercept_ : ndarray of shape (1,)
        The intercept b_{T+1}.

    See Also
    --------
    ProxClassifier : The same learners for classification.
    sklearn.linear_model.SGDRegressor : The eager peer whose parameters these follow.
    """

    _losses = REGRESSION_LOSSES

    @checking_names
    def __init__(self, loss=R["loss"], penalty=R["penalty"], alpha=R["alpha"],
                 l1_ratio=R["l1_ratio"], update=R["update"], schedule=R["schedule"], step=R["step"],
                 eta0=R["eta0"], t0=R["t0"], delta=R["delta"], rda_rho=R["rda_rho"],
                 berhu_gamma=R["berhu_gamma"], batch_size=R["batch_size"],
                 fit_intercept=R["fit_intercept"], intercept_scaling=R["intercept_scaling"],
                 max_iter=R["max_iter"], shuffle=R["shuffle"],
                 random_state=R["random_state"], warm_start=R["warm_start"],
                 epsilon=R["epsilon"], groups=R["groups"], group_weights=R["group_weights"],
                 grow_features=R["grow_features"], hash_bits=R["hash_bits"], verbose=R["verbose"],
                 average=R["average"], tol=R["tol"], n_iter_no_change=R["n_iter_no_change"],
                 early_stopping=R["early_stopping"], validation_fraction=R["validation_fraction"],
                 learning_rate=R["learning_rate"], power_t=R["power_t"]):
        super().__init__(loss=loss, penalty=penalty, alpha=alpha, l1_ratio=l1_ratio, update=update,
                         schedule=schedule, step=step, eta0=eta0, t0=t0, delta=delta, rda_rho=rda_rho,
                         berhu_gamma=berhu_gamma, batch_size=batch_size, fit_intercept=fit_intercept,
                         intercept_scaling=intercept_scaling,
                         max_iter=max_iter, shuffle=shuffle, random_state=random_state,
                         warm_start=warm_start, epsilon=epsilon, groups=groups,
                         group_weights=group_weights, grow_features=grow_features, hash_bits=hash_bits,
                         verbose=verbose, average=average, tol=tol, n_iter_no_change=n_iter_no_change,
                         early_stopping=early_stopping, validation_fraction=validation_fraction,
                         learning_rate=learning_rate, power_t=power_t)

    def _encode(self, y, classes, first):
        return as_float_array("y", y, len(y)), 1, False, False

    @sharing(ProxClassifier.partial_fit, also=("Returns",))
    def partial_fit(self, X, y, sample_weight=None):
        """Continue the stream with one pass over (X, y), in order, as ``ProxClassifier.partial_fit``.

        Parameters
        ----------
        y : array-like of shape (n_samples,)
            Their targets.
        """
        return self._fit(X, y, sample_weight, incremental=True)

    @sharing(_BaseProx.fit)
    def predict(self, X):
        """The predicted targets <w, x> + b.

        Returns
        -------
        ndarray of shape (n_samples,)
            One prediction per row.
        """
        return self._margins(X)

