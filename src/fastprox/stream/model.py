"""The model of a stream: an estimator's parameters, classes and kernel, trained
on the shared core (`fastprox._core`) without scikit-learn, whose import would
outlast training a small file. `fastprox train` trains one, `fastprox predict`
reads one from a model file, `fastprox.dask` sends one from worker to worker; it
predicts as the estimators do (`fastprox._core.predictions`, `has_proba`,
`probabilities`) and saves the file their `save_model` would write.
"""
import sys
from types import SimpleNamespace

from .._core import auto_steps, check_multinomial_loss, has_proba, margins, new_learner, predictions, probabilities
from .._kernels import NonFiniteMargin
from .._validation import (CLASSIFICATION_LOSSES, REGRESSION_LOSSES, ModelTooLarge, check_params,
                           readable_size, schedule_and_step)
from ..model_io import read_model, write_model
from .spelling import COMMAND_LINE

#: A model state larger than this (bytes) is announced on stderr with its size and
#: what set its width: one stray large index in a file otherwise takes gigabytes
#: without a word.
NOTE_BYTES = 1 << 30


class StreamModel:
    """The model of an estimator's parameters ``params`` (a ``get_params()``: a
    ProxRegressor's if ``regression``, else a ProxClassifier's), checked now, before
    any reading; ``classes``: the sorted classes if known (else the stream's
    `Trainer` recognizes them); ``quiet``: no note on a large model (`start`).
    Its kernel (``learner``) is made by `start`, from the first rows."""

    def __init__(self, params, regression, classes=None, quiet=True):
        self.regression, self.params = regression, dict(params)
        losses = REGRESSION_LOSSES if regression else CLASSIFICATION_LOSSES
        check_params(SimpleNamespace(**self.params), losses)
        if classes is not None:     # (else checked once the stream shows its classes)
            check_multinomial_loss(self.params["loss"], len(classes), self.params.get("multi_class"))
        self.loss = self.params["loss"]
        self.classes = classes
        self.quiet = quiet
        self.learner = None
        #: The counters of the run that saved it (``fitted.progress_``), for the next to continue.
        self.progress = None
        #: What sets the model's width, for messages about its size (set by its user).
        self.width_origin = None
        #: How messages name the settings that fix them (the command's options unless set).
        self.spelling = COMMAND_LINE
        #: How the reader made the columns (fastprox._interactions.record: VW text, the
        #: interactions), saved as ``fitted.input_``; None: the file's columns as given.
        self.input = None
        #: Whether the LIBSVM training files' indices started at 0, saved as
        #: ``fitted.zero_based_``; None: not known (VW text, files read both ways).
        self.zero_based = None

    def auto_steps(self):
        """Whether the steps wait for the first AUTO_ROWS rows ("auto" under AdaGrad;
        a multinomial model's, which only its classes decide, is assumed)."""
        multinomial = self.params.get("multi_class") == "multinomial"
        return auto_steps(self.params, schedule_and_step(self.params, multinomial)[0])

    def start(self, n_features, n_outputs, head):
        """The kernel for ``n_features`` columns, its "auto" steps set by the CSR
        pieces ``head`` (the first AUTO_ROWS rows). A state too large for memory,
        and (past NOTE_BYTES) a large one, is reported in one line with its size
        and what set the width, for the user to see the fix."""
        multinomial = n_outputs > 1 and self.params["multi_class"] == "multinomial"
        with _Sizing(self, n_features):
            self.learner = new_learner(self.params, n_features, n_outputs,
                                       n_outputs > 1 and not multinomial, multinomial, head)

    def widen(self, n_features):
        """Grow the model to ``n_features`` columns (Learner.grow), reported as `start`."""
        with _Sizing(self, n_features):
            self.learner.grow(n_features)

    @classmethod
    def from_file(cls, path):
        """The model in a file written by save_model or 'train --model', ready to
        predict, read without scikit-learn (fastprox.model_io.read_model)."""
        saved = read_model(path)
        model = cls.__new__(cls)
        model.regression = saved.name == "ProxRegressor"
        model.params, model.loss = saved.params, saved.params["loss"]
        model.learner, model.classes = saved.learner, saved.classes
        model.hash_bits = saved.fitted["hash_bits_"]
        model.progress = saved.fitted.get("progress_")
        model.input = saved.fitted.get("input_")
        model.zero_based = saved.fitted.get("zero_based_")
        model.quiet, model.width_origin, model.spelling = True, None, COMMAND_LINE
        return model

    @property
    def n_features(self):
        return self.learner.n_features

    def scores(self, X, where):
        """The margins of the rows X; a margin that is not finite raises ValueError
        naming its place, ``where(i)`` for row i."""
        try:
            return margins(self.learner, X)
        except NonFiniteMargin as e:
            raise ValueError(f"{where(e.row)}: {e.detail}") from None

    def labels_of(self, scores):
        """The predictions for the margins ``scores``: values, or classes."""
        return predictions(scores, None if self.regression else self.classes)

    def has_proba(self):
        return not self.regression and has_proba(self.loss)

    def proba_of(self, scores):
        """The class probabilities for the margins ``scores``."""
        return probabilities(scores, self.learner.loss, self.learner.multinomial)

    def save(self, path, passes, progressive_loss, progress=None):
        """Write the model file that the estimator's partial_fit would have written,
        with the stream's counters ``progress`` (a Trainer's) for a run that continues
        it (``fitted.progress_``; left out where a loss overflowed to infinity)."""
        fitted = {"n_features_in_": self.learner.n_features, "t_": self.learner.t, "n_iter_": passes,
                  "progressive_loss_": float(progressive_loss), "sparse_coef": False,
                  "hash_bits_": self.params["hash_bits"]}
        if self.input is not None:
            fitted["input_"] = self.input
        if self.zero_based is not None:
            fitted["zero_based_"] = self.zero_based
        if progress is not None and all(x - x == 0 for x in (progress["loss_sum"], progress["last_loss_sum"])):
            fitted["progress_"] = progress
        write_model(path, "ProxRegressor" if self.regression else "ProxClassifier", self.params,
                    self.learner, fitted, self.classes)


class _Sizing:
    """Around making or growing the kernel: a state too large for memory becomes one
    line naming its size and what set the width; past NOTE_BYTES, a note."""

    def __init__(self, model, n_features):
        self.model, self.n_features = model, n_features

    def __enter__(self):
        return self

    def __exit__(self, kind, error, tb):
        why = f"the width comes from {self.model.width_origin}"
        if isinstance(error, ModelTooLarge):
            raise ModelTooLarge(f"{error} The width comes from {self.model.width_origin}.") from None
        if isinstance(error, MemoryError):  # the memory reported available was not (a limit, a race)
            raise MemoryError(f"out of memory allocating the model's state for {self.n_features} "
                              f"features ({why}); use fewer features ({self.model.spelling.hash_bits}, or drop "
                              f"rare ones)") from None
        if kind is None:
            learner = self.model.learner
            size = sum(len(a) * a.itemsize for a, _ in learner.saved_arrays().values())
            if size > NOTE_BYTES and not self.model.quiet:
                takes = (f"reserves {readable_size(size)} of memory, taken page by page as training touches "
                         f"its features" if learner.state_on_touch else f"takes {readable_size(size)} of memory")
                print(f"fastprox: note: the model's state for {learner.n_features} features {takes} ({why}); "
                      f"hash the features into fewer buckets ({self.model.spelling.hash_bits}) to shrink it",
                      file=sys.stderr)
        return False
