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

from .._concurrency import lock_of
from . import _tagger
from ._params import SEQUENCE_LOSSES, TAGGER_DEFAULTS as DEFAULTS
from ._estimator import NO_WEIGHTS, StructuredEstimator, sequence_weights
from .learner import item_arrays
from .model_file import read_structured_model, write_structured_model

__all__ = ["SequenceTagger", "save_tagger", "load_tagger"]

def _part(i, doc):
    """A fitted attribute: part ``i`` of the model's (W, b, A, s, e), a copy."""
    return property(lambda self: self._model()[i].copy(), doc=doc)


class SequenceTagger(StructuredEstimator):
    """Label each item of sequences: a linear-chain model (structured perceptron,
    structured SVM or CRF) trained by online proximal steps, lazily and exactly.

    Parameters
    ----------
    loss : {"log", "hinge", "perceptron"}, default="log"
        ``"log"`` (CRF: forward-backward in log space, E Phi - Phi); ``"hinge"``
        (structured SVM with the Hamming cost: cost-augmented Viterbi; no step where
        the loss is 0); ``"perceptron"`` (Collins 2002: Viterbi, Phi(y^) - Phi(y)).
        The perceptron's and the hinge's steps touch only the items decoded wrong.
    penalty, alpha, l1_ratio, update, schedule, eta0, delta, rda_rho, berhu_gamma
        The rule (docs/contract.md; the README's table of rules): every update,
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
        ``average`` on (True: 1; a step is a sequence), which coef_,
        transitions_, start_, stop_ and predict read; training continues from
        the last iterate. Kept exactly under update="fobos" with AdaGrad or a
        scalar schedule; refused elsewhere (the defaults' rda among them).

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

    def __init__(self, loss=DEFAULTS["loss"], penalty=DEFAULTS["penalty"], alpha=DEFAULTS["alpha"],
                 l1_ratio=DEFAULTS["l1_ratio"], update=DEFAULTS["update"], schedule=DEFAULTS["schedule"],
                 eta0=DEFAULTS["eta0"], delta=DEFAULTS["delta"], rda_rho=DEFAULTS["rda_rho"],
                 berhu_gamma=DEFAULTS["berhu_gamma"], groups=None, group_weights=None,
                 fit_intercept=DEFAULTS["fit_intercept"], max_iter=DEFAULTS["max_iter"],
                 shuffle=DEFAULTS["shuffle"], random_state=None, warm_start=False, verbose=0,
                 average=DEFAULTS["average"]):
        super().__init__(loss, penalty, alpha, l1_ratio, update, schedule, eta0, delta, rda_rho, berhu_gamma,
                         groups, group_weights, fit_intercept, max_iter, shuffle, random_state, warm_start,
                         verbose, average)

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
        """
        return self._training((X, y, lengths, sample_weight, None, None), incremental=False)

    def partial_fit(self, X, y, lengths, classes=None, sample_weight=None):
        """One pass over these sequences, in order, continuing the model. ``classes``
        (every label the model will see) is required at the first call."""
        return self._training((X, y, lengths, sample_weight, classes, None), incremental=True)

    def _fit_reporting(self, X, y, lengths, report):
        """`fit`, calling ``report(order, losses, errors, starts, indptr)`` after each
        chunk of sequences stepped (the command line's progressive table): their
        ids, progressive losses and items wrong before their step."""
        return self._training((X, y, lengths, None, None, report), incremental=False)

    def _train(self, X, y, lengths, sample_weight, classes, report, *, incremental, first):
        data, indices, indptr, n_features = _matrix(X)
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
        elif n_features != self.n_features_in_:
            raise ValueError(f"X has {n_features} features, but SequenceTagger is expecting "
                             f"{self.n_features_in_} features as input.")
        self.__dict__.pop("_snapshot", None)
        loss = _tagger.LOSSES[self.loss]

        def step(chunk, losses, errors):
            _tagger.fit_sequences(self._learner._learner, data, indices, indptr, target, starts, chunk,
                                  NO_WEIGHTS if weights is None else weights, loss, losses, errors,
                                  self._learner.t_ + 1)
        self.run_passes(n_sequences, incremental, step,
                        None if report is None else lambda *chunk: report(*chunk, starts, indptr))

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

    coef_ = _part(0, "W, (n_features, n_classes).")
    intercept_ = _part(1, "b, (n_classes,): the label biases.")
    transitions_ = _part(2, "A, (n_classes, n_classes): A[j, k] scores label j followed by label k.")
    start_ = _part(3, "s, (n_classes,): the first item's label scores.")
    stop_ = _part(4, "e, (n_classes,): the last item's label scores.")

    def _emissions(self, X, lengths):
        """(E (n_items, K), A, s, e, starts) of the model for the items X."""
        W, b, A, s, e = self._model()
        data, indices, indptr, n_features = _matrix(X)
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

    def predict(self, X, lengths):
        """Each item's label by Viterbi decoding of its sequence: an array of n_items."""
        E, A, s, e, starts = self._emissions(X, lengths)
        return self.classes_[_tagger.viterbi_sequences(E, A, s, e, starts)]

    def _is_crf(self):
        return self.loss == "log"

    @available_if(_is_crf)
    def predict_marginals(self, X, lengths):
        """P(y_i = k | x) of each item (forward-backward), (n_items, n_classes), the
        columns in the order of classes_ (loss="log" only: the other losses' scores
        are not probabilities)."""
        return _tagger.marginal_sequences(*self._emissions(X, lengths))

    def score(self, X, y, lengths, sample_weight=None):
        """The fraction of items labelled right (per-item accuracy; ``sample_weight``,
        one per item, weighs them)."""
        y = np.asarray(y)
        predicted = self.predict(X, lengths)
        if y.shape != predicted.shape:
            raise ValueError(f"y has {y.shape[0] if y.ndim else 0} labels for {predicted.shape[0]} items.")
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
    y's labels, sorted."""
    if incremental and classes is None:
        raise ValueError("classes must be given at the first partial_fit call: every label the "
                         "model will see (np.unique of all the labels).")
    labels = np.unique(np.asarray(y) if classes is None else np.asarray(classes))
    if labels.dtype.kind == "f" and not np.all(np.isfinite(labels)):
        raise ValueError("the labels contain NaN or infinity; fix or drop those items.")
    if len(labels) == 0:
        raise ValueError("no labels: the sequences have no items (give at least one labelled item).")
    if classes is not None and len(labels) != len(classes):
        raise ValueError("classes must not repeat a label.")
    return labels


def _encode(y, classes, n_items):
    """y as int64 codes into classes (ValueError for a label not in classes)."""
    y = np.asarray(y)
    if y.shape != (n_items,):
        raise ValueError(f"y has shape {y.shape} for {n_items} items: give one label per item.")
    if y.dtype.kind == "f" and not np.all(np.isfinite(y)):
        raise ValueError("y contains NaN or infinity; fix or drop those items.")
    codes = np.searchsorted(classes, y)
    codes[codes == len(classes)] = 0
    unknown = classes[codes] != y
    if np.any(unknown):
        raise ValueError(f"label {y[np.argmax(unknown)].item()!r} is not one of the model's classes "
                         f"{classes[:10].tolist()}{'...' if len(classes) > 10 else ''}; give every label at "
                         "the first partial_fit (classes=...), or fit again.")
    return np.ascontiguousarray(codes, dtype=np.int64)
