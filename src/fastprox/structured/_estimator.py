"""What the structured estimators share (SequenceTagger; a dependency parser):
their rule's parameters and checks, the kernel they build (a `StructuredLearner`),
the training call's contract and the thread contract of the flat estimators.

- Parameters: the rule (``update``, ``schedule``, ``penalty`` and its numbers, as
  `StructuredLearner` takes them: every rule of the table but the normalized
  schedule, the gradient step), ``groups`` / ``group_weights`` (feature templates
  or kernels' blocks: MKL is ``penalty="squared_group"``), ``loss`` (one of the
  subclass's ``_losses``), passes (``max_iter``, ``shuffle``, ``random_state``),
  ``warm_start`` and ``verbose``. Checked when training starts, as scikit-learn
  asks (``__init__`` stores them as given).
- Training calls (`_training`): one at a time (`fastprox._concurrency`); a `fit`,
  or a first `partial_fit`, that fails or is interrupted leaves the estimator as it
  was; a later `partial_fit` keeps the examples it completed (``t_`` counts them).
  A set_params that changes the kernel's rule after the fit is refused by
  `partial_fit` and warm starts (`check_same_rule`).
- Reads (`predict`, the fitted attributes, pickling) see the model between two
  examples: at the end of a training call or at one of its pauses (`pause`),
  which the subclass's loop calls between chunks of examples.
"""
import copy
import numbers

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.utils import check_random_state

from .._concurrency import lock_of
from .._core import check_same_groups, model_array
from .._restore import restored_on_failure
from .._sklearn_names import STRUCTURED_EQUIVALENTS, NamedParameters
from .._validation import check_number, check_one_of, check_seed
from .learner import StructuredLearner

#: The rule's parameters, as StructuredLearner takes them and keeps them.
RULE_PARAMS = ("update", "schedule", "penalty", "alpha", "l1_ratio", "eta0", "delta", "rda_rho",
               "berhu_gamma", "fit_intercept", "average")

def snapshot_array(read, name, doc):
    """The fitted attribute ``name``: the array ``read(estimator)`` of the model's
    snapshot (made once per step count), read-only (`_core.model_array`); no copy is
    made (a parser's weights are hundreds of MB)."""
    return model_array(read, name, "continue training with partial_fit or warm_start=True, or load a saved "
                                   "model", doc)


#: Examples stepped between two pauses of a training call (reads are served there;
#: Ctrl-C is seen there).
PAUSE_EXAMPLES = 1024


class StructuredEstimator(NamedParameters, BaseEstimator):
    """The shell of an online structured estimator (see the module's docstring).

    A subclass sets ``_losses`` and implements ``_train(*data, incremental, first)``
    (check and encode its input, build the kernel with `new_learner` when first, run
    its passes calling `pause` between chunks); its ``fit`` and ``partial_fit`` call
    `_training`. Its ``__init__`` is checked (`_sklearn_names.checking_names`): a
    parameter it lacks is named with what to use (``_equivalents``)."""

    _losses = ()
    _equivalents = STRUCTURED_EQUIVALENTS

    def __init__(self, loss, penalty, alpha, l1_ratio, update, schedule, eta0, delta, rda_rho, berhu_gamma,
                 groups, group_weights, fit_intercept, max_iter, shuffle, random_state, warm_start, verbose,
                 average=False):
        self.loss = loss
        self.penalty = penalty
        self.alpha = alpha
        self.l1_ratio = l1_ratio
        self.update = update
        self.schedule = schedule
        self.eta0 = eta0
        self.delta = delta
        self.rda_rho = rda_rho
        self.berhu_gamma = berhu_gamma
        self.groups = groups
        self.group_weights = group_weights
        self.fit_intercept = fit_intercept
        self.max_iter = max_iter
        self.shuffle = shuffle
        self.random_state = random_state
        self.warm_start = warm_start
        self.verbose = verbose
        self.average = average

    # ------------------------------------------------------------------ the kernel
    def new_learner(self, n_features, n_outputs, n_unpenalized):
        """The kernel of a new model: a StructuredLearner of the rule's parameters
        (which checks them and their combination)."""
        params = {key: getattr(self, key) for key in RULE_PARAMS}
        return StructuredLearner(n_features, n_outputs, n_unpenalized, groups=self.groups,
                                 group_weights=self.group_weights, **params)

    def check_params(self):
        """ValueError for a loss, a number of passes, a flag or a seed out of range (the
        rule's parameters are checked by `new_learner`)."""
        check_one_of("loss", self.loss, self._losses)
        check_number("max_iter", self.max_iter, 1, integer=True)
        for name in ("shuffle", "warm_start"):
            if not isinstance(getattr(self, name), (bool, np.bool_)):
                raise ValueError(f"{name}={getattr(self, name)!r} must be True or False.")
        if isinstance(self.verbose, bool) or not isinstance(self.verbose, numbers.Integral) or self.verbose < 0:
            raise ValueError(f"verbose={self.verbose!r} must be an integer >= 0.")
        check_seed(self.random_state)

    def check_same_rule(self):
        """partial_fit and warm starts continue the kernel they have: a rule's
        parameter that set_params changed since it was built raises ValueError."""
        kernel = self._learner
        for key in RULE_PARAMS:
            given, fitted = getattr(self, key), getattr(kernel, key)
            if given != fitted:
                raise ValueError(f"cannot continue training the model: {key}={given!r} but the model "
                                 f"was fitted with {key}={fitted!r} (set_params after the fit); set it "
                                 "back, or fit again" + (" with warm_start=False" if self.warm_start else ""))
        try:
            check_same_groups(vars(self), kernel._learner.groups, kernel._learner.group_weights)
        except ValueError as e:
            raise ValueError(f"cannot continue training the model: {e}") from None

    def rng(self, incremental):
        """The passes' generator of sequence orders, or None for the input's order
        (partial_fit, or shuffle=False)."""
        return None if incremental or not self.shuffle else check_random_state(self.random_state)

    # ------------------------------------------------------------------ training calls
    def _training(self, data, incremental):
        """Run ``_train(*data, incremental=..., first=...)`` as one training call (the
        module's contract): a new model unless incremental or warm_start (with a
        model to continue), the estimator restored if a fit, or a first partial_fit,
        fails or is interrupted."""
        with lock_of(self).training():
            self.check_params()
            if (incremental or self.warm_start) and hasattr(self, "t_") and not hasattr(self, "_learner"):
                raise ValueError("this model was read from a model file, which holds it for prediction "
                                 "only: train a new one (fit), or continue from a pickle of the estimator.")
            first = not (incremental or self.warm_start) or not hasattr(self, "_learner")
            if not first:
                self.check_same_rule()
            try:
                with restored_on_failure(self, first or not incremental, model=not first):
                    self._train(*data, incremental=incremental, first=first)
            finally:
                if hasattr(self, "_learner"):
                    self.t_ = self._learner.t_
        return self

    def run_passes(self, n_examples, incremental, step, report=None, after_pass=None):
        """The passes of a training call over n_examples (one for partial_fit, else
        max_iter, in a new order each when shuffled), in chunks of PAUSE_EXAMPLES:
        ``step(chunk, losses, errors)`` steps the examples ``chunk`` (int64 ids),
        writing each one's loss and, when ``report`` is given, its items wrong
        before its step; then ``report(chunk, losses, errors)`` and a `pause`; after
        each pass ``after_pass(epoch)``. Sets progressive_loss_ and n_iter_."""
        rng, passes = self.rng(incremental), 1 if incremental else self.max_iter
        total = 0.0
        for epoch in range(passes):
            order = np.arange(n_examples) if rng is None else rng.permutation(n_examples)
            for at in range(0, n_examples, PAUSE_EXAMPLES):
                chunk = np.ascontiguousarray(order[at:at + PAUSE_EXAMPLES], dtype=np.int64)
                losses = np.zeros(len(chunk))
                errors = np.zeros(len(chunk) if report else 0, dtype=np.int64)
                step(chunk, losses, errors)
                total += losses.sum()
                if report is not None:
                    report(chunk, losses, errors)
                self.pause()
            if self.verbose:
                print(f"-- Epoch {epoch + 1}: mean loss {total / max(1, (epoch + 1) * n_examples):.6f}, "
                      f"t_ = {self._learner.t_}")
            if after_pass is not None:
                after_pass(epoch)
        self.progressive_loss_ = total / max(1, passes * n_examples)
        self.n_iter_ = passes

    def pause(self):
        """Between two chunks of a training call: serve the reads waiting (they see
        the model after the last example stepped)."""
        self.t_ = self._learner.t_
        lock_of(self).pause()

    def check_fitted(self):
        """AttributeError-like NotFittedError before the first training call."""
        from sklearn.utils.validation import check_is_fitted
        check_is_fitted(self, "t_")

    # ------------------------------------------------------------------ pickling
    def __getstate__(self):
        """The pickle's state: the model between two examples (the kernel pickles
        itself under its own lock; the estimator's lock is left out, and a copy
        gets a new one)."""
        with lock_of(self).reading():
            state = dict(super().__getstate__())
            if "_learner" in state:
                state["_learner"] = copy.copy(self._learner)
                state.pop("_snapshot", None)    # (read again from the learner; a model read
        state.pop("_lock", None)                # from a file has nothing else)
        return state

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags


#: The compiled loops' sample weights where none are given (weights 1).
NO_WEIGHTS = np.empty(0)


def sequence_weights(sample_weight, n_examples, what="sequence"):
    """One finite weight >= 0 per example (float64), or None for weights 1."""
    if sample_weight is None:
        return None
    w = np.asarray(sample_weight, dtype=np.float64)
    if w.shape != (n_examples,):
        raise ValueError(f"sample_weight has shape {w.shape}; give one weight per {what} "
                         f"({n_examples},).")
    if not np.all(np.isfinite(w)) or np.any(w < 0):
        raise ValueError("sample_weight must be finite and >= 0 (one weight per "
                         f"{what}); fix or drop the offending weights.")
    return np.ascontiguousarray(w)
