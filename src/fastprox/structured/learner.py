"""The low-level structured learner: every rule and penalty of fastprox, lazily and
exactly, for any decoder (issue 36, item 4).

A structured example is n items, each a sparse feature row (a sequence's tokens, a
tree's candidate arcs), scored by W (d x K) plus K intercepts, and m further
unpenalized parameters that the user's decoder reads (a sequence's transitions,
starts and stops). The user's decoder turns the current scores into the example's
gradient (perceptron and structured SVM: Phi(x, y^) - Phi(x, y); CRF: E Phi -
Phi), which the learner takes either per item (the items' score gradients
mu_i - onehot(y_i): `step`) or as sparse rows of W's gradient (`step_rows`), and
applies as the contract's "Structured outputs" says: the rule's update, schedule
and penalty entry by entry over the rows the example touches, the untouched ones
caught up lazily, the unpenalized entries by the rule's intercept update, one
example per step. Martins et al.'s online MKL (Alg. 1) needs nothing else:
`update="fobos", penalty="squared_group"` with the kernels' blocks as groups is
its Alg. 3.
"""
import numbers

import numpy as np

from .. import _structured
from .._concurrency import LearnerState, lock_of
from .._kernels import Learner
from .._registry import SCHEDULES, STEPS, UPDATES, averaging
from .._sklearn_names import LEARNER_EQUIVALENTS, checking_names
from .._validation import (COORDINATE_PENALTIES, GROUP_PENALTIES, STRUCTURED_SCHEDULES, average_from, check_grouped,
                           check_groups, check_number, check_one_of, check_structured, float_csr, kernel_arrays,
                           kernel_penalty)


class StructuredLearner:
    """Online learner of a linear structured model from its caller's gradients.

    Parameters
    ----------
    n_features : int
        d, the features of the items' rows (`grow` adds more).
    n_outputs : int
        K, the scores of an item (a sequence's labels; 1 for a tree's arcs).
    n_unpenalized : int, default 0
        m, further unpenalized parameters beside the intercepts (a sequence
        model's K x K transitions then K starts and K stops: K^2 + 2K); they
        follow the rule's intercept update, each with its own AdaGrad
        accumulator.
    update, schedule, penalty : str
        The rule (the manual's table of rules), as for the estimators; every
        rule but ``schedule="normalized"`` (which the contract leaves undefined
        for structured outputs). ``penalty=None`` is "none".
    alpha, l1_ratio, eta0, delta, rda_rho, berhu_gamma, groups, group_weights
        As for the estimators (docs/contract.md); ``eta0`` and ``delta`` are
        numbers (no data to set "auto" from). ``groups`` are sets of feature
        rows (a template's features, a kernel's block).
    fit_intercept : bool, default True
        K unpenalized label biases b, added to every item's scores.
    step : {"gradient"}
        The invariant step is not defined for structured outputs.
    average : bool or int, default False
        Keep the averaged iterate (docs/contract.md, "Averaged iterate": the mean
        of the models after each step from step ``average`` on; True: 1), which
        ``coef_``, ``intercept_`` and ``unpenalized_`` then read (the averaged perceptron's
        model); the decoders' reads during training stay the last iterate's.
        Exact and lazy under fobos with a scalar schedule or AdaGrad and an
        entry-wise penalty, and under rda or ftrl with AdaGrad and l1 or no
        penalty; refused elsewhere.

    Attributes
    ----------
    coef_ : ndarray of shape (K, d)
        W^T after the last step (w_{T+1}), read-only.
    intercept_ : ndarray of shape (K,)
    unpenalized_ : ndarray of shape (m,)
    t_ : int
        Examples stepped so far.

    Notes
    -----
    Each step costs O(nnz K + m) plus the group prox's cost (squared_group:
    O(p log p)), never O(d). The learner may be shared between threads: steps
    and reads are serialized as the estimators' (`fastprox._concurrency`); a
    decoder that reads (`scores`, `weights`, `unpenalized`) and then steps should
    hold the learner alone meanwhile. Pickles keep the lazy state; a pickled
    learner continues bit for bit.
    """

    _equivalents = LEARNER_EQUIVALENTS

    @checking_names
    def __init__(self, n_features, n_outputs, n_unpenalized=0, *, update="fobos", schedule="adagrad",
                 penalty="l1", alpha=0.0, l1_ratio=0.15, eta0=0.1, delta=1e-8, rda_rho=0.0,
                 berhu_gamma=1.0, groups=None, group_weights=None, fit_intercept=True, step="gradient",
                 average=False):
        check_number("n_features", n_features, 0, integer=True)
        check_number("n_outputs", n_outputs, 1, integer=True)
        check_number("n_unpenalized", n_unpenalized, 0, integer=True)
        check_one_of("update", update, UPDATES)
        check_one_of("schedule", schedule, SCHEDULES)
        check_one_of("penalty", penalty, COORDINATE_PENALTIES + GROUP_PENALTIES + (None,))
        check_one_of("step", step, STEPS)
        check_structured(step, schedule)
        if average_from(average):           # (the kernel's refusal would list schedule='normalized')
            averaging(update, schedule, kernel_penalty(penalty), STRUCTURED_SCHEDULES)
        for name, value, low, low_open, high in (("alpha", alpha, 0.0, False, None),
                                                 ("l1_ratio", l1_ratio, 0.0, False, 1.0),
                                                 ("eta0", eta0, 0.0, True, None), ("delta", delta, 0.0, False, None),
                                                 ("rda_rho", rda_rho, 0.0, False, None),
                                                 ("berhu_gamma", berhu_gamma, 0.0, True, None)):
            check_number(name, value, low, low_open=low_open, high=high)
        if not isinstance(fit_intercept, (bool, np.bool_)):
            raise ValueError(f"fit_intercept={fit_intercept!r} must be True or False.")
        for name, value in (("groups", groups), ("group_weights", group_weights)):
            if value is not None:
                check_grouped(name, kernel_penalty(penalty))
        self.n_features, self.n_outputs, self.n_unpenalized = n_features, n_outputs, n_unpenalized
        self.update, self.schedule, self.penalty = update, schedule, penalty
        self.alpha, self.l1_ratio, self.eta0, self.delta = alpha, l1_ratio, eta0, delta
        self.rda_rho, self.berhu_gamma, self.fit_intercept = rda_rho, berhu_gamma, bool(fit_intercept)
        self.average = average
        self._learner = Learner(n_features, n_outputs, update, schedule, kernel_penalty(penalty), None,
                                alpha=alpha, l1_ratio=l1_ratio, eta0=eta0, delta=delta, rda_rho=rda_rho,
                                berhu_gamma=berhu_gamma, fit_intercept=bool(fit_intercept),
                                groups=check_groups(groups, n_features), group_weights=group_weights,
                                n_unpenalized=n_unpenalized, average=average_from(average))

    # ------------------------------------------------------------------ reading
    def weights(self, features):
        """W_t's rows of the given feature ids at the current step: what a decoder scores with.

        Parameters
        ----------
        features : array-like of int of shape (r,)
            Feature ids in [0, n_features).

        Returns
        -------
        ndarray of shape (r, K)
            Their rows, caught up to the current step.
        """
        features = _ids(features)
        with lock_of(self).training():      # (brings the rows up to the step in place)
            return _structured.weights(self._learner, features)

    def unpenalized(self):
        """The m unpenalized entries at the current step (`unpenalized_`).

        Returns
        -------
        ndarray of shape (m,)
            The entries (a sequence's transitions, starts and stops).
        """
        with lock_of(self).reading():
            return _structured.unpenalized(self._learner)

    def scores(self, X):
        """The items' scores at the current step, <W_t[:, k], x_i> + b_k.

        Parameters
        ----------
        X : sparse matrix of shape (n, <= n_features)
            The items, a row each (anything scipy.sparse.csr_matrix takes, of
            float32 or float64 values; columns must be features of the model).

        Returns
        -------
        ndarray of shape (n, K)
            Each item's K scores.
        """
        data, indices, indptr = item_arrays(X)
        with lock_of(self).training():
            return _structured.scores(self._learner, data, indices, indptr)

    def coef(self):
        """W^T after the last step: the eager model w_{T+1}, as the flat learners read it;
        with ``average``, the averaged iterate's (the decoders' reads during training,
        `weights`, `scores`, `unpenalized`, are the last iterate's, which training
        continues from).

        Returns
        -------
        ndarray of shape (K, d)
            The weights, read-only (`coef_`).
        """
        with lock_of(self).reading():
            return self._learner.coef(averaged=self._learner.average > 0)

    @property
    def coef_(self):
        """W^T after the last step, (K, d), read-only (`coef`)."""
        return self.coef()

    @property
    def intercept_(self):
        """The K intercepts b_{T+1} (0 without fit_intercept; with ``average``, averaged)."""
        with lock_of(self).reading():
            return self._learner.averaged_intercept() if self._learner.average else self._learner.intercept()

    @property
    def unpenalized_(self):
        """The m unpenalized entries after the last step (with ``average``, averaged)."""
        if not self._learner.average:
            return self.unpenalized()
        with lock_of(self).reading():
            return self._learner.averaged_unpenalized()[self.n_outputs:].copy()

    @property
    def t_(self):
        """Examples stepped so far."""
        return self._learner.t

    @property
    def n_ops(self):
        """Entries visited so far (catch-ups, scores, updates, rebases): the cost counter."""
        return self._learner.n_ops

    # ------------------------------------------------------------------ training
    def step(self, X_items, Q, unpenalized_grad=None, sample_weight=1.0):
        """One example's step from its items' score gradients.

        Parameters
        ----------
        X_items : sparse matrix of shape (n, <= n_features)
            The example's items, a row each (float32 or float64; empty rows are items
            without features).
        Q : array of shape (n, K)
            The items' score gradients: mu_i - onehot(y_i), mu_i the decoded label's
            one-hot (perceptron, hinge) or the item's marginals (CRF). W's gradient is
            X_items^T Q, the intercepts' the column sums of Q.
        unpenalized_grad : array of shape (m,), default None (zeros)
            The gradient of the m unpenalized entries (E counts - gold counts).
        sample_weight : float, default 1
            The example's weight h >= 0: every gradient is multiplied by it.
        """
        data, indices, indptr = item_arrays(X_items)
        n = len(indptr) - 1
        Q = _gradient("Q", Q, n, self.n_outputs)
        u, h = self._unpenalized_grad(unpenalized_grad), _weight(sample_weight)
        with lock_of(self).training():
            _structured.step(self._learner, data, indices, indptr, Q, u, h, self._example())

    def step_decoded(self, X_items, decode, sample_weight=1.0):
        """One example's step with the decoder in the loop, as a compiled caller takes it.

        The items' scores at the current step (their features caught up once),
        then ``decode(scores, unpenalized)``, then the step. If `decode` raises,
        nothing steps.

        Parameters
        ----------
        X_items : sparse matrix of shape (n, <= n_features)
            The example's items, a row each.
        decode : callable
            ``decode(scores, unpenalized) -> (Q, unpenalized_grad)``, as `step`
            takes them, from the (n, K) array of `scores` and the (m,) array of
            `unpenalized`.
        sample_weight : float, default 1
            The example's weight h >= 0.
        """
        data, indices, indptr = item_arrays(X_items)
        h, K = _weight(sample_weight), self.n_outputs

        def checked(scores, unpenalized):
            Q, u = decode(scores, unpenalized)
            return _gradient("Q", Q, scores.shape[0], K), self._unpenalized_grad(u)

        with lock_of(self).training():
            _structured.step_decoded(self._learner, data, indices, indptr, checked, h, self._example())

    def step_rows(self, features, G, unpenalized_grad=None, sample_weight=1.0, intercept_grad=None):
        """One example's step from W's gradient as sparse rows.

        Any decoder's Phi(x, y^) - Phi(x, y) (or E Phi - Phi). Given the same
        gradient, `step` and `step_rows` compute the same bits.

        Parameters
        ----------
        features : array-like of int of shape (r,)
            The feature ids of the gradient's rows (an id listed twice: its rows
            add up).
        G : array of shape (r, K)
            W's gradient at those rows.
        unpenalized_grad : array of shape (m,), default None (zeros)
            The gradient of the m unpenalized entries.
        sample_weight : float, default 1
            The example's weight h >= 0.
        intercept_grad : array of shape (K,), default None
            The intercepts' gradient (the items' score gradients summed),
            required with fit_intercept.
        """
        features = _ids(features)
        G = _gradient("G", G, len(features), self.n_outputs)
        if self.fit_intercept and intercept_grad is None:
            raise ValueError("this learner fits intercepts: give intercept_grad, the K intercepts' "
                             "gradient (the example's score gradients summed over its items), or "
                             "build it with fit_intercept=False.")
        if not self.fit_intercept and intercept_grad is not None:
            raise ValueError("this learner has no intercepts (fit_intercept=False): drop intercept_grad.")
        b = (np.zeros(self.n_outputs) if intercept_grad is None
             else _vector("intercept_grad", intercept_grad, self.n_outputs))
        u, h = self._unpenalized_grad(unpenalized_grad), _weight(sample_weight)
        with lock_of(self).training():
            _structured.step_rows(self._learner, features, G, b, u, h, self._example())

    def grow(self, n_features):
        """Widen the model to `n_features` features (nothing if it has as many).

        The new ones join with weight 0, as never-touched coordinates of the
        contract. Models with groups or group weights keep their width.

        Parameters
        ----------
        n_features : int
            The model's new width.
        """
        check_number("n_features", n_features, 0, integer=True)
        with lock_of(self).training():
            self._learner.grow(n_features)
            self.n_features = self._learner.n_features

    # ------------------------------------------------------------------ pickling
    def __getstate__(self):
        """The pickle's state: the model between two steps (`LearnerState`)."""
        with lock_of(self).reading():
            state = dict(self.__dict__)
            state["_learner"] = LearnerState(self._learner.__reduce__())
        state.pop("_lock", None)
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)
        if isinstance(self._learner, LearnerState):     # copy.copy's state
            self._learner = self._learner.learner()

    # ------------------------------------------------------------------ helpers
    def _unpenalized_grad(self, values):
        if values is None:
            return np.zeros(self.n_unpenalized)
        return _vector("unpenalized_grad", values, self.n_unpenalized)

    def _example(self):
        """How a refused step's error names its example: by its step."""
        return f"at step {self._learner.t + 1}"


def item_arrays(X):
    """The CSR arrays of the items X (float32 or float64 values, canonical indices)."""
    data, indices, indptr = kernel_arrays(float_csr(X))
    if not np.all(np.isfinite(data)):
        raise ValueError("the items' values contain NaN or infinity; remove or replace them.")
    return data, indices, indptr


def _ids(features):
    """Feature ids as an int64 vector (their range is the kernel's check)."""
    ids = np.asarray(features)
    if ids.ndim != 1 or (ids.size and not np.issubdtype(ids.dtype, np.integer)):
        raise ValueError(f"features must be a vector of integer feature ids; got shape {ids.shape}, "
                         f"dtype {ids.dtype}.")
    return np.ascontiguousarray(ids, dtype=np.int64)


def _gradient(name, values, rows, K):
    """A finite C-contiguous float64 (rows, K) gradient ((rows,) is taken for K = 1)."""
    G = np.asarray(values, dtype=np.float64)
    if G.ndim == 1 and K == 1:
        G = G.reshape(-1, 1)
    if G.shape != (rows, K):
        raise ValueError(f"{name} has shape {G.shape} where ({rows}, {K}) is expected (a row per "
                         f"{'item' if name == 'Q' else 'feature id'}, a column per output).")
    if not np.all(np.isfinite(G)):
        raise ValueError(f"{name} contains NaN or infinity; the decoder's gradient must be finite.")
    return np.ascontiguousarray(G)


def _vector(name, values, n):
    """A finite float64 vector of n values."""
    v = np.asarray(values, dtype=np.float64)
    if v.shape != (n,):
        raise ValueError(f"{name} has shape {v.shape} where ({n},) is expected.")
    if not np.all(np.isfinite(v)):
        raise ValueError(f"{name} contains NaN or infinity; it must be finite.")
    return np.ascontiguousarray(v)


def _weight(h):
    """A sample weight: a finite number >= 0."""
    if isinstance(h, bool) or not isinstance(h, numbers.Real) or not np.isfinite(h) or h < 0:
        raise ValueError(f"sample_weight={h!r} must be a finite number >= 0.")
    return float(h)
