"""SequenceTagger: a linear-chain sequence labeller trained online with every rule and
penalty of fastprox, lazily and exactly (issue 36, item 1).

The model is the contract's ("Structured outputs", sequences): emission weights W
(d x K), label biases b, transitions A (K x K), start and stop scores s and e;
``score(x, y') = sum_i (<W[:, y'_i], x_i> + b[y'_i]) + s[y'_1] + sum_{i>=2}
A[y'_{i-1}, y'_i] + e[y'_n]``. W follows the rule and its penalty (groups of
feature rows: templates, kernels' blocks); b, A, s and e are the kernel's
unpenalized entries. Training is `_tagger.fit_sequences`, compiled and without the
GIL over a batch of sequences; prediction Viterbi (`_tagger.viterbi_sequences`)
over the emission scores of the model read between two steps.
"""
import numpy as np
import scipy.sparse as sp
from sklearn.utils.metaestimators import available_if
from sklearn.utils.validation import validate_data

from .._concurrency import lock_of
from .._docstrings import sharing
from .._sklearn_names import checking_names
from . import _tagger
from .._validation import check_one_of
from ._params import LABEL_FEATURES, SEQUENCE_LOSSES, TAGGER_DEFAULTS as DEFAULTS
from ._estimator import NO_WEIGHTS, StructuredEstimator, sequence_weights, snapshot_array
from .learner import item_arrays
from .model_file import read_structured_model, write_structured_model

__all__ = ["SequenceTagger", "save_tagger", "load_tagger"]

def _part(i, name, doc):
    """The fitted attribute ``name``: part ``i`` of the model's (W, b, A, s, e), read-only."""
    return snapshot_array(lambda self: self._model()[i], name, doc)


class SequenceTagger(StructuredEstimator):
    """Label each item of sequences with a linear-chain model trained online, lazily and exactly.

    A structured perceptron, structured SVM or CRF whose steps are the flat
    estimators' proximal rules (docs/contract.md), so that its weights can be
    sparse (l1) or select feature templates (group penalties, online MKL).

    Parameters
    ----------
    loss : {"log", "hinge", "perceptron"}, default="log"
        ``"log"`` (CRF: forward-backward in log space, E Phi - Phi); ``"hinge"``
        (structured SVM with the Hamming cost: cost-augmented Viterbi; no step where
        the loss is 0); ``"perceptron"`` (Collins 2002: Viterbi, Phi(y^) - Phi(y)).
        The perceptron's and the hinge's steps touch only the items decoded wrong.
    penalty, alpha, l1_ratio, update, schedule, eta0, delta, rda_rho, berhu_gamma
        The rule (docs/contract.md; the manual's table of rules): every update,
        schedule and penalty of the flat estimators but ``schedule="normalized"``,
        which has no structured form. Only W is penalized. The defaults are RDA with
        AdaGrad steps (eta0=0.3) and l2 (alpha=1e-4).
    groups : array of int of shape (n_features,), optional
        A group id per feature (-1: none) for the group penalties: a template's
        features (`TemplateFeatures.groups_`), a kernel's block (MKL:
        ``penalty="squared_group"``).
    group_weights : array of float, optional
        The groups' penalty weights d_G.
    fit_intercept : bool, default=True
        Learn the label biases b.
    max_iter : int, default=4
        Passes over the sequences in `fit`.
    shuffle : bool, default=True
        Visit the sequences in a new random order at every pass of `fit`.
    random_state : int, RandomState or None
        The shuffling's seed.
    warm_start : bool, default=False
        `fit` continues the current model.
    verbose : int, default=0
        Print a line per pass.
    average : bool or int, default=False
        Keep the averaged iterate (the averaged perceptron's model) from step
        ``average`` on (True: 1; a step is a sequence), which ``coef_``,
        ``transitions_``, ``start_``, ``stop_`` and predict read; training continues from
        the last iterate. Kept exactly under update="fobos" with AdaGrad or a
        scalar schedule, and under rda or ftrl with l1 or no penalty; refused
        elsewhere (the defaults' l2 under rda among them).
    label_features : {"all", "seen"}, default="all"
        Which emission weights W[j, k] learn. ``"all"``: every feature with every
        label. ``"seen"``: only the pairs (feature j, label k) where an item of the
        training data with feature j is labelled k (CRFsuite's state features, its
        default); the others stay 0, so that a step scores, catches up and updates
        only a feature's seen labels (fewer than K for most features: cheaper
        passes, a smaller effective model). The pairs are those of the sequences
        `fit` gets; each `partial_fit` (and a warm-started `fit`) adds its own
        sequences' pairs before its steps, so a label first seen later starts
        learning on the features it is seen with then. Exact under every rule: an
        entry outside the pairs has weight 0 and no gradient, which every rule's
        step and catch-up leave at 0.

    Attributes
    ----------
    coef_ : ndarray of shape (n_features, n_classes)
        W.
    intercept_ : ndarray of shape (n_classes,)
        b.
    transitions_ : ndarray of shape (n_classes, n_classes)
        A[j, k], the score of label j followed by label k.
    start_, stop_ : ndarray of shape (n_classes,)
        s and e.
    classes_ : ndarray
        The labels, sorted.
    t_ : int
        Sequences stepped so far.
    n_features_in_ : int
        The width of X.
    feature_names_in_ : ndarray of shape (n_features,)
        X's column names, when trained on a DataFrame with string names: the
        later training calls and prediction refuse a DataFrame whose columns
        differ, and warn for X without names, as scikit-learn's estimators do.
    progressive_loss_ : float
        The mean loss of the sequences of the last training call, each at the model
        it was stepped with (progressive validation).

    Notes
    -----
    A step costs O(nnz K + n K^2) for a sequence of n items with nnz non-zeros
    (features outside it are caught up lazily, when next met). Safe to share
    between threads as the flat estimators are (`fastprox._concurrency`): training
    calls take turns, reads see the model between two sequences.
    """

    _losses = SEQUENCE_LOSSES

    @checking_names
    def __init__(self, loss=DEFAULTS["loss"], penalty=DEFAULTS["penalty"], alpha=DEFAULTS["alpha"],
                 l1_ratio=DEFAULTS["l1_ratio"], update=DEFAULTS["update"], schedule=DEFAULTS["schedule"],
                 eta0=DEFAULTS["eta0"], delta=DEFAULTS["delta"], rda_rho=DEFAULTS["rda_rho"],
                 berhu_gamma=DEFAULTS["berhu_gamma"], groups=None, group_weights=None,
                 fit_intercept=DEFAULTS["fit_intercept"], max_iter=DEFAULTS["max_iter"],
                 shuffle=DEFAULTS["shuffle"], random_state=None, warm_start=False, verbose=0,
                 average=DEFAULTS["average"], label_features=DEFAULTS["label_features"]):
        super().__init__(loss, penalty, alpha, l1_ratio, update, schedule, eta0, delta, rda_rho, berhu_gamma,
                         groups, group_weights, fit_intercept, max_iter, shuffle, random_state, warm_start,
                         verbose, average)
        self.label_features = label_features

    def check_params(self):
        """The shared checks (`StructuredEstimator.check_params`) and ``label_features``."""
        super().check_params()
        check_one_of("label_features", self.label_features, LABEL_FEATURES)

    # ------------------------------------------------------------------ training
    def fit(self, X, y, lengths, sample_weight=None):
        """Train (from scratch unless warm_start) with `max_iter` passes.

        Parameters
        ----------
        X : sparse matrix of shape (n_items, n_features)
            One row per item, the sequences stacked in order (float32 or float64).
        y : array of shape (n_items,)
            Each item's label.
        lengths : array of int of shape (n_sequences,)
            The items of each sequence, in order; they sum to n_items (0 is an
            empty sequence).
        sample_weight : array of shape (n_sequences,), optional
            One weight per sequence.

        Returns
        -------
        self : SequenceTagger
            The trained tagger.
        """
        return self._training((X, y, lengths, sample_weight, None, None), incremental=False)

    @sharing(fit)
    def partial_fit(self, X, y, lengths, classes=None, sample_weight=None):
        """Continue the model with one pass over these sequences, in order.

        Parameters
        ----------
        classes : array of shape (n_classes,), optional
            Every label the model will see; required at the first call (the
            transition matrix is K x K from the start).

        Returns
        -------
        self : SequenceTagger
            The tagger, trained on the sequences.
        """
        return self._training((X, y, lengths, sample_weight, classes, None), incremental=True)

    def _fit_reporting(self, X, y, lengths, report):
        """`fit`, calling ``report(order, losses, errors, starts, indptr)`` after each
        chunk of sequences stepped (the command line's progressive table): their
        ids, progressive losses and items wrong before their step."""
        return self._training((X, y, lengths, None, None, report), incremental=False)

    def _train(self, X, y, lengths, sample_weight, classes, report, *, incremental, first):
        data, indices, indptr, n_features = _matrix(X)
        self._check_names(X, reset=first)
        starts = _starts(lengths, len(indptr) - 1)
        n_sequences = len(starts) - 1
        if first:
            self.classes_ = _classes(y, classes, incremental)
        elif classes is not None and not np.array_equal(np.unique(np.asarray(classes)), self.classes_):
            raise ValueError("classes differ from those of the first partial_fit call; give the same "
                             "classes, or none after the first call.")
        target = _encode(y, self.classes_, len(indptr) - 1)
        weights = sequence_weights(sample_weight, n_sequences)
        if first:
            K = len(self.classes_)
            self._learner = self.new_learner(n_features, K, K * K + 2 * K)
            self.n_features_in_ = n_features
            self._support = None
        elif n_features != self.n_features_in_:
            raise ValueError(f"X has {n_features} features, but SequenceTagger is expecting "
                             f"{self.n_features_in_} features as input.")
        elif (self.label_features == "seen") != (self.__dict__.get("_support") is not None):
            raise ValueError(f"cannot continue training the model: label_features={self.label_features!r} but "
                             "the model was fitted with the other (set_params after the fit); set it back, "
                             "or fit again" + (" with warm_start=False" if self.warm_start else ""))
        self.__dict__.pop("_snapshot", None)
        loss = _tagger.LOSSES[self.loss]
        if self.label_features == "seen":
            self._support = seen_pairs(self._support, indices, indptr, target, n_features, len(self.classes_))
        support = (None, None) if self._support is None else self._support

        def step(chunk, losses, errors):
            _tagger.fit_sequences(self._learner._learner, data, indices, indptr, target, starts, chunk,
                                  NO_WEIGHTS if weights is None else weights, loss, losses, errors,
                                  self._learner.t_ + 1, *support)
        self.run_passes(n_sequences, incremental, step,
                        None if report is None else lambda *chunk: report(*chunk, starts, indptr))

    def _check_names(self, X, reset):
        """X's column names (a DataFrame's) kept by a first training call (`reset`), and
        checked against them by the others and by prediction, by scikit-learn's
        `validate_data`: a DataFrame whose columns differ (a reordering included, which
        would pair values with the wrong weights) raises, X without names where the
        model has them warns. Names only: the width is `_train`'s and `_emissions`'
        check (``ensure_2d=False`` skips validate_data's). A sparse matrix or an array,
        which have no names, to a model without names is let through unprobed
        (validate_data's probes of X cost half a small partial_fit call)."""
        if (sp.issparse(X) or isinstance(X, np.ndarray)) and "feature_names_in_" not in self.__dict__:
            return
        validate_data(self, X, reset=reset, skip_check_array=True, ensure_2d=False)

    # ------------------------------------------------------------------ the model
    def _model(self):
        """(W as (d, K), b, A, s, e) after the last step, read once per step count."""
        self.check_fitted()
        with lock_of(self).reading():
            snapshot = self.__dict__.get("_snapshot")
            if "_learner" in self.__dict__ and (snapshot is None or snapshot[0] != self._learner.t_):
                learner = self._learner
                K = len(self.classes_)
                u = learner.unpenalized_
                W = np.ascontiguousarray(learner.coef_.T)
                snapshot = (learner.t_, W, learner.intercept_, u[:K * K].reshape(K, K).copy(),
                            u[K * K:K * K + K].copy(), u[K * K + K:].copy())
                self._snapshot = snapshot
        return snapshot[1:]

    coef_ = _part(0, "coef_", "W, (n_features, n_classes), read-only.")
    intercept_ = _part(1, "intercept_", "b, (n_classes,): the label biases, read-only.")
    transitions_ = _part(2, "transitions_", "A, (n_classes, n_classes): A[j, k] scores label j followed by label k, "
                                            "read-only.")
    start_ = _part(3, "start_", "s, (n_classes,): the first item's label scores, read-only.")
    stop_ = _part(4, "stop_", "e, (n_classes,): the last item's label scores, read-only.")

    def _emissions(self, X, lengths):
        """(E (n_items, K), A, s, e, starts) of the model for the items X."""
        W, b, A, s, e = self._model()
        data, indices, indptr, n_features = _matrix(X)
        self._check_names(X, reset=False)
        if n_features != W.shape[0]:
            raise ValueError(f"X has {n_features} features, but SequenceTagger is expecting "
                             f"{W.shape[0]} features as input.")
        starts = _starts(lengths, len(indptr) - 1)
        X = sp.csr_matrix((data, indices, indptr), shape=(len(indptr) - 1, n_features))
        E = np.ascontiguousarray(X @ W + b, dtype=np.float64)
        if not np.all(np.isfinite(E)):
            raise ValueError("a score overflowed: the values of X are finite but too large for the "
                             "model's weights; scale them as the training data were scaled.")
        return E, A.reshape(-1), s, e, starts

    @sharing(fit)
    def predict(self, X, lengths):
        """Each item's label by Viterbi decoding of its sequence.

        Returns
        -------
        ndarray of shape (n_items,)
            Each item's label, from ``classes_``.
        """
        E, A, s, e, starts = self._emissions(X, lengths)
        return self.classes_[_tagger.viterbi_sequences(E, A, s, e, starts)]

    def _is_crf(self):
        return self.loss == "log"

    @available_if(_is_crf)
    @sharing(fit)
    def predict_marginals(self, X, lengths):
        """Each item's label probabilities P(y_i = k | x), by forward-backward.

        ``loss="log"`` only: the other losses' scores are not probabilities.

        Returns
        -------
        ndarray of shape (n_items, n_classes)
            The marginals, the columns in the order of ``classes_``.
        """
        return _tagger.marginal_sequences(*self._emissions(X, lengths))

    @sharing(fit)
    def score(self, X, y, lengths, sample_weight=None):
        """The fraction of items labelled right (per-item accuracy).

        Parameters
        ----------
        sample_weight : array of shape (n_items,), optional
            One weight per item.

        Returns
        -------
        float
            The accuracy, 1.0 for no items.
        """
        y = np.asarray(y)
        predicted = self.predict(X, lengths)
        if y.shape != predicted.shape:
            raise ValueError(f"y has {y.shape[0] if y.ndim else 0} labels for {predicted.shape[0]} items.")
        if sample_weight is not None and np.shape(sample_weight) != y.shape:
            raise ValueError(f"sample_weight has shape {np.shape(sample_weight)}; score weighs each item "
                             f"{y.shape} (fit's sample_weight weighs each sequence).")
        return float(np.average(predicted == y, weights=sample_weight)) if len(y) else 1.0



def save_tagger(model, path, extras=None):
    """Write the fitted SequenceTagger ``model`` to a structured model file
    (`fastprox.structured.model_file`), with ``extras`` (plain data: the feature
    extractor's ``to_dict()``, the reader's columns) beside it."""
    W, b, A, s, e = model._model()
    fitted = {"t_": int(model.t_), "n_features_in_": int(model.n_features_in_),
              "progressive_loss_": float(getattr(model, "progressive_loss_", 0.0))}
    params = model.get_params()
    if params["random_state"] is not None and not isinstance(params["random_state"], int):
        params["random_state"] = None       # (a RandomState object: the passes are over)
    write_structured_model(path, "SequenceTagger", params, fitted, W,
                           {"intercept": b, "unpenalized": np.concatenate([A.ravel(), s, e])},
                           model.classes_, extras)


def load_tagger(path):
    """(the SequenceTagger, the extras) of a file `save_tagger` wrote: the model
    predicts as the saved one did; training it again starts a new model (the file
    holds no training state). ValueError naming the file for anything wrong."""
    saved = read_structured_model(path, "SequenceTagger")
    try:
        model = SequenceTagger(**saved.params)
        coef, classes = saved.arrays["coef"], saved.arrays["classes"]
        K, u = len(classes), saved.arrays["unpenalized"]
        if saved.arrays["intercept"].shape != (K,) or u.shape != (K * K + 2 * K,):
            raise ValueError(f"intercept must have {K} entries and unpenalized {K * K + 2 * K}")
        t, d = saved.fitted["t_"], saved.fitted["n_features_in_"]
        if not (isinstance(t, int) and t >= 0 and d == coef.shape[0]):
            raise ValueError("fitted.t_ must be an integer >= 0 and fitted.n_features_in_ W's rows")
        model.check_params()
    except (KeyError, TypeError, ValueError) as e:
        what = f"missing entry {e}" if isinstance(e, KeyError) else str(e)
        raise ValueError(f"{path}: {what}") from None
    model.classes_, model.t_, model.n_features_in_ = classes, t, d
    model.progressive_loss_ = saved.fitted.get("progressive_loss_", 0.0)
    model._snapshot = (t, coef, saved.arrays["intercept"], u[:K * K].reshape(K, K), u[K * K:K * K + K],
                       u[K * K + K:])
    return model, saved.extras


def seen_pairs(support, indices, indptr, target, n_features, K):
    """The emission support of ``label_features="seen"``: ``support`` (a previous
    call's, or None) grown by the pairs (feature, gold label) of these items, as CSR
    over the features (ptr int64 of n_features + 1, each feature's labels int32,
    sorted)."""
    items = np.repeat(np.arange(len(indptr) - 1), np.diff(indptr))
    keys = np.asarray(indices, dtype=np.int64) * K + target[items]
    if support is not None:
        ptr, labels = support
        keys = np.concatenate([np.repeat(np.arange(n_features, dtype=np.int64) * K, np.diff(ptr)) + labels, keys])
    if n_features * K <= 8 * len(keys):     # (a mark per entry: no sort)
        marks = np.zeros(n_features * K, dtype=bool)
        marks[keys] = True
        keys = np.flatnonzero(marks)
    else:
        keys = np.unique(keys)
    ptr = np.zeros(n_features + 1, dtype=np.int64)
    np.cumsum(np.bincount(keys // K, minlength=n_features), out=ptr[1:])
    return ptr, np.ascontiguousarray(keys % K, dtype=np.int32)


def _matrix(X):
    """X's CSR arrays (float32/64 values, canonical indices, all finite) and width."""
    if not sp.issparse(X):
        X = np.asarray(X)
        if X.ndim != 2:
            raise ValueError(f"X must be a 2-d matrix of items (a row each); got {X.ndim} dimensions.")
    data, indices, indptr = item_arrays(X)
    return data, indices, indptr, X.shape[1]


def _starts(lengths, n_items):
    """The first row of each sequence and n_items last (int64), from ``lengths``."""
    lengths = np.asarray(lengths)
    if lengths.ndim != 1 or (lengths.size and not np.issubdtype(lengths.dtype, np.integer)):
        raise ValueError("lengths must be a 1-d array of integers: the items of each sequence, in order.")
    if np.any(lengths < 0):
        raise ValueError("lengths must be >= 0 (the number of items of each sequence).")
    starts = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(lengths, out=starts[1:])
    if starts[-1] != n_items:
        raise ValueError(f"lengths sum to {starts[-1]} but X has {n_items} rows: give one length per "
                         "sequence, the sequences' items stacked in X in the same order.")
    return starts


def _classes(y, classes, incremental):
    """classes_ of a first training call: ``classes`` (partial_fit requires it) or
    y's labels, sorted (labels that do not sort refused, as scikit-learn's
    classifiers refuse a mixed "unknown" target)."""
    if incremental and classes is None:
        raise ValueError("classes must be given at the first partial_fit call: every label the "
                         "model will see (np.unique of all the labels).")
    try:
        labels = np.unique(np.asarray(y) if classes is None else np.asarray(classes))
    except TypeError:       # (NumPy's sort of an object array: "'<' not supported between ...")
        raise _unsortable("labels" if classes is None else "classes") from None
    if labels.dtype.kind == "f" and not np.all(np.isfinite(labels)):
        raise ValueError("the labels contain NaN or infinity; fix or drop those items.")
    if len(labels) == 0:
        raise ValueError("no labels: the sequences have no items (give at least one labelled item).")
    if classes is not None and len(labels) != len(classes):
        raise ValueError("classes must not repeat a label.")
    return labels


def _unsortable(what):
    """The ValueError for labels that NumPy cannot sort together (its TypeError)."""
    return ValueError(f"the {what} mix types that do not sort together (numbers and strings, say): give "
                      "labels of one type.")


def _encode(y, classes, n_items):
    """y as int64 codes into classes (ValueError for a label not in classes)."""
    y = np.asarray(y)
    if y.shape != (n_items,):
        raise ValueError(f"y has shape {y.shape} for {n_items} items: give one label per item.")
    if y.dtype.kind == "f" and not np.all(np.isfinite(y)):
        raise ValueError("y contains NaN or infinity; fix or drop those items.")
    try:
        codes = np.searchsorted(classes, y)
    except TypeError:
        raise _unsortable("labels and the model's classes") from None
    codes[codes == len(classes)] = 0
    unknown = classes[codes] != y
    if np.any(unknown):
        raise ValueError(f"label {y[np.argmax(unknown)].item()!r} is not one of the model's classes "
                         f"{classes[:10].tolist()}{'...' if len(classes) > 10 else ''}; give every label at "
                         "the first partial_fit (classes=...), or fit again.")
    return np.ascontiguousarray(codes, dtype=np.int64)
