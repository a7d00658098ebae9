"""Train a model on LIBSVM files, streamed chunk by chunk, or on the embedded default data.

The files are read --chunk-rows rows at a time and learned with partial_fit,
in the order given, never loaded whole; --passes repeats the stream (rows
are not shuffled). The estimator fixes its width and, for classifiers, its
classes at the first chunk, so unless --n-features and (classifiers)
--classes are both given, a first streaming pass over the files finds them,
the numbers 'fastprox info' prints: the width is the largest of the files',
the classes every label seen. Give both to skip that pass. Files whose
parsed rows fit in 64 MB are kept from that pass and trained on, not read
again; larger ones are streamed again, so memory stays bounded. Data that
can be read only once (standard input, '-', or a pipe such as /dev/stdin or
<(zcat f.gz)) needs both options, and one pass.

The model's memory grows with its width: a model that would not fit is
refused in one line giving its size and what set the width (the largest
feature index of the files, or --n-features); one of over 1 GiB trains, with
a one-line note on stderr saying so.

While it runs, a progress bar (on a terminal only) shows rows/s and the
progressive validation loss: the mean loss of each row under the model
before that row's update, as Vowpal Wabbit reports it. At the end it prints
the progressive loss of the first pass (later passes have seen the rows),
the test metrics (--test: accuracy, log-loss when the loss gives
probabilities, AUC; RMSE with --regression), the non-zero weights and the
times. Test features beyond the model's width are ignored (zero weights).

Without DATA it trains on the embedded default, so that 'fastprox train'
works with no files: a seeded, generated text-like set of --rows rows
(default 100,000) and --n-features features (default 2^18), Zipf word
frequencies, 20% held out as the test set (fastprox.cli.synthetic).
"""
import argparse
import itertools
import os
import sys
import time
from array import array
from types import SimpleNamespace

from .._core import (AUTO_ROWS, CLASSIFIER_DEFAULTS, REGRESSOR_DEFAULTS, auto_steps, check_classes,
                     encode_labels, margins, new_learner, probabilities, run_passes)
from .._kernels import NonFiniteMargin
from .._numpy import np
from .._validation import (CLASSIFICATION_LOSSES, GROUP_PENALTIES, PENALTIES, REGRESSION_LOSSES,
                           SCHEDULES, UPDATES, ModelTooLarge, _size, as_float_array, available_memory,
                           check_params, kernel_loss)
from ..libsvm import MAX_INDEX, Chunk, iter_chunks, read_once, source_name
from ..model_io import read_model, write_model
from .stream import CHUNK_ROWS, KEEP_BYTES, check_readable, labelled_chunks, read_ahead, scan

DEFAULT_ROWS = 100_000
DEFAULT_FEATURES = 1 << 18

#: A model state larger than this (bytes) is announced on stderr with its size and
#: what set its width: one stray large index in a file otherwise takes gigabytes
#: without a word.
NOTE_BYTES = 1 << 30

#: Bytes generating the embedded default data holds at its peak, per feature and
#: per row (measured with tracemalloc: 17 and 1,370; rounded up): a width or a
#: number of rows that cannot be generated is refused before NumPy tries.
DEFAULT_DATA_BYTES = (24, 1536)

#: Largest values of the integer options: the C sizes the reader and the kernel
#: take (beyond them, an OverflowError), the width the reader's largest index.
_INT_LIMITS = {"passes": sys.maxsize, "chunk_rows": sys.maxsize, "n_features": MAX_INDEX,
               "batch_size": 2**31 - 1, "rows": sys.maxsize}     # batch_size: the kernel's C int

# Command-line option -> estimator parameter, for the options passed through.
_ESTIMATOR_OPTIONS = {"loss": "loss", "update": "update", "schedule": "schedule",
                      "penalty": "penalty", "alpha": "alpha", "l1_ratio": "l1_ratio",
                      "eta0": "eta0", "delta": "delta", "rda_rho": "rda_rho",
                      "berhu_gamma": "berhu_gamma", "batch_size": "batch_size",
                      "epsilon": "epsilon", "seed": "random_state", "multi_class": "multi_class"}


def add_arguments(parser):
    parser.add_argument("data", nargs="*", metavar="DATA",
                        help="LIBSVM training files (plain, .gz, .bz2, .xz; - for standard input); "
                             "none: the embedded default")
    parser.add_argument("--test", metavar="DATA", help="LIBSVM file to evaluate the model on")
    parser.add_argument("--model", metavar="OUT", help="save the model here (fastprox.load_model reads it)")
    parser.add_argument("--passes", type=int, default=1, help="passes over the data (default 1)")
    parser.add_argument("--chunk-rows", type=int, default=CHUNK_ROWS,
                        help=f"rows parsed and learned at a time (default {CHUNK_ROWS})")
    parser.add_argument("--n-features", type=int, metavar="N",
                        help="model width (default: found by a first pass; 2^18 for the default data)")
    parser.add_argument("--classes", type=float, nargs="+", metavar="LABEL",
                        help="every label of the stream (default: found by a first pass)")
    parser.add_argument("--regression", action="store_true", help="train a ProxRegressor")
    parser.add_argument("--rows", type=int, default=DEFAULT_ROWS,
                        help=f"rows of the embedded default data (default {DEFAULT_ROWS})")
    parser.add_argument("--seed", type=int, default=0, help="seed of the default data and random_state")
    est = parser.add_argument_group("estimator options (see help(fastprox.ProxClassifier))")
    est.add_argument("--loss", choices=CLASSIFICATION_LOSSES + REGRESSION_LOSSES)
    est.add_argument("--update", choices=UPDATES)
    est.add_argument("--schedule", choices=SCHEDULES)
    est.add_argument("--penalty", choices=PENALTIES + GROUP_PENALTIES)
    est.add_argument("--multi-class", choices=("ovr", "multinomial"))
    for name in ("alpha", "l1-ratio", "rda-rho", "berhu-gamma", "epsilon"):
        est.add_argument(f"--{name}", type=float)
    for name in ("eta0", "delta"):
        est.add_argument(f"--{name}", type=_number_or_auto, metavar="{auto,NUMBER}",
                         help="default auto: set by the first 10,000 rows' scale (AdaGrad)")
    est.add_argument("--batch-size", type=int)
    est.add_argument("--no-intercept", action="store_true", help="fit no intercept")
    est.add_argument("--groups", metavar="FILE",
                     help="group penalties: a text file of one integer group id per feature, in "
                          "feature order (-1: unpenalized); default: each feature a group")
    est.add_argument("--group-weights", metavar="FILE",
                     help="group penalties: a text file of one weight d_G >= 0 per group (default 1)")


def run(args):
    """Train, evaluate, save; the report is printed once everything succeeded."""
    started = time.perf_counter()
    _check_options(args)            # first: its errors name the flags
    est = StreamModel(args)
    stream = FileStream(args, est) if args.data else DefaultStream(args)
    est.width_origin = stream.width_origin
    scanned = time.perf_counter()
    with _progress_bar(stream.rows * args.passes if stream.rows else None) as bar:
        losses, rows = zip(*(_one_pass(est, stream, bar, p) for p in range(args.passes)))
    trained = time.perf_counter()
    test = stream.test_chunks()
    test_lines = [] if test is None else _evaluate(est, test, stream.test_name)
    tested = time.perf_counter()
    if args.model:
        est.save(args.model, args.passes, losses[-1])
    report = [f"data: {stream.name} ({rows[0]} rows x {stream.n_features} features, "
              f"{args.passes} pass{'es' if args.passes > 1 else ''})",
              f"model: {_describe(est)}",
              f"progressive loss: {losses[0]:.6f} ({est.loss} loss, first pass)"]
    if args.passes > 1:
        report.append(f"last pass mean loss: {losses[-1]:.6f} (pass {args.passes})")
    report += test_lines
    report += [f"non-zero weights: {est.learner.count_nonzero()} of "
               f"{est.learner.n_features * est.learner.n_outputs}",
               f"time: {tested - started:.2f} s ({stream.preparation} {scanned - started:.2f} s, "
               f"train {trained - scanned:.2f} s = {sum(rows) / max(trained - scanned, 1e-9):,.0f} "
               f"rows/s, test {tested - trained:.2f} s)"]
    if args.model:
        report.append(f"model saved: {args.model}")
    print("\n".join(report))
    return 0


class StreamModel:
    """The estimator the options describe, trained chunk by chunk as its partial_fit
    would, on the shared core (no scikit-learn import: start-up stays short). Its
    parameters are checked now, not after a scan."""

    def __init__(self, args):
        self.regression = args.regression
        defaults = REGRESSOR_DEFAULTS if args.regression else CLASSIFIER_DEFAULTS
        self.params = {**defaults, **{param: getattr(args, option)
                                      for option, param in _ESTIMATOR_OPTIONS.items()
                                      if getattr(args, option, None) is not None}}
        if args.regression:
            self.params.pop("multi_class", None)
        self.params["fit_intercept"] = not args.no_intercept
        self.groups_file = args.groups
        if args.groups:
            self.params["groups"] = read_vector(args.groups, "--groups", int)
        if args.group_weights:
            self.params["group_weights"] = read_vector(args.group_weights, "--group-weights", float)
        losses = REGRESSION_LOSSES if args.regression else CLASSIFICATION_LOSSES
        check_params(SimpleNamespace(**self.params), losses)
        self.loss = self.params["loss"]
        self.learner = self.classes = self.head = None
        #: What sets the model's width, for messages about its size (set by run).
        self.width_origin = None

    def settle(self, chunks):
        """The stream's chunks (X, y), its first AUTO_ROWS rows read ahead and held
        when "auto" steps need their scale before the first step: the estimator's
        fit on the same rows sees them all at once, whatever --chunk-rows."""
        if self.learner is not None or not auto_steps(self.params):
            return chunks
        held, rows, chunks = [], 0, iter(chunks)
        for X, y in chunks:
            held.append((X, y))
            rows += X.shape[0]
            if rows >= AUTO_ROWS:
                break
        self.head = [X for X, _ in held]
        return itertools.chain(held, chunks)

    @classmethod
    def from_file(cls, path):
        """The model in a file written by save_model or 'train --model', ready to
        predict, read without scikit-learn (fastprox.model_io.read_model)."""
        saved = read_model(path)
        model = cls.__new__(cls)
        model.regression = saved.name == "ProxRegressor"
        model.params, model.loss = saved.params, saved.params["loss"]
        model.learner, model.classes = saved.learner, saved.classes
        model.n_features = saved.fitted["n_features_in_"]
        return model

    def partial_fit(self, X, y, classes=None):
        """One pass over a chunk (a CSR matrix or a :class:`~fastprox.libsvm.Chunk`);
        the progressive loss (mean over its rows)."""
        if self.regression:
            # a file's labels are finite float64 already (the reader refuses NaN, inf)
            shape = (y if isinstance(y, array) else as_float_array("y", y, len(y)), 1, False, False)
        else:
            if self.classes is None:
                self.classes = check_classes(classes if classes is not None else y)
            shape = encode_labels(y, self.classes, self.params["multi_class"], self.loss)
        if self.learner is None:
            groups = self.params["groups"]
            if groups is not None and len(groups) != X.shape[1]:
                raise ValueError(f"--groups {self.groups_file}: {len(groups)} group ids for "
                                 f"{X.shape[1]} features; give one id per feature (--n-features "
                                 f"sets the width)")
            self.n_features = X.shape[1]
            self.learner = self._new_learner(X.shape[1], shape[1:], self.head or [X])
            self.head = None
        self.progressive_loss_ = run_passes(self.learner, X, shape[0], None,
                                            self.params["batch_size"]) / max(1, X.shape[0])

    def _new_learner(self, n_features, outputs, head):
        """The kernel for ``n_features`` columns. A state too large for memory, and
        (past NOTE_BYTES) a large one, is reported in one line with its size and
        what set the width (``width_origin``), for the user to see the fix: fewer
        features, hashed into fewer buckets."""
        why = f"the width comes from {self.width_origin}"
        try:
            learner = new_learner(self.params, n_features, *outputs, head)
        except ModelTooLarge as e:
            raise ModelTooLarge(f"{e} The width comes from {self.width_origin}.") from None
        except MemoryError:     # the memory reported available was not (a limit, a race)
            raise MemoryError(f"out of memory allocating the model's state for {n_features} "
                              f"features ({why}); use fewer features (hash them into fewer "
                              f"buckets, or drop rare ones)") from None
        size = sum(len(a) * a.itemsize for a, _ in learner.saved_arrays().values())
        if size > NOTE_BYTES:
            print(f"fastprox: note: the model's state for {n_features} features takes {_size(size)} "
                  f"of memory ({why}); hash the features into fewer buckets to shrink it",
                  file=sys.stderr)
        return learner

    def scores(self, X):
        return margins(self.learner, X)

    def predict(self, X):
        scores = self.scores(X)
        if self.regression:
            return scores
        classes = np.asarray(self.classes)
        return classes[(scores > 0).astype(int) if scores.ndim == 1 else np.argmax(scores, axis=1)]

    def has_proba(self):
        return not self.regression and kernel_loss(self.loss) in ("log", "modified_huber")

    def predict_proba(self, X):
        return probabilities(self.scores(X), self.learner.loss, self.learner.multinomial)

    def save(self, path, passes, progressive_loss):
        """Write the model file that the estimator's partial_fit would have written."""
        fitted = {"n_features_in_": self.n_features, "t_": self.learner.t, "n_iter_": passes,
                  "progressive_loss_": float(progressive_loss), "sparse_coef": False}
        write_model(path, "ProxRegressor" if self.regression else "ProxClassifier", self.params,
                    self.learner, fitted, self.classes)


def read_vector(path, option, kind):
    """The numbers of a text file (whitespace-separated, '#' starts a comment) as a
    NumPy vector of int64 (kind int) or float64 (kind float)."""
    values = []
    with open(path) as f:
        for line_number, line in enumerate(f, 1):
            for token in line.split("#", 1)[0].split():
                try:
                    values.append(kind(token))
                except ValueError:
                    what = "an integer" if kind is int else "a number"
                    raise ValueError(f"{option} {path}:{line_number}: {token!r} is not {what}") from None
    return np.array(values, dtype=np.int64 if kind is int else np.float64)


def _check_options(args):
    for name, high in _INT_LIMITS.items():
        value, option = getattr(args, name), "--" + name.replace("_", "-")
        if value is not None and value > high:
            raise ValueError(f"{option} must be at most {high}, not {value}")
    for name in ("passes", "chunk_rows", "n_features"):
        value = getattr(args, name)
        if value is not None and value < 1:
            raise ValueError(f"--{name.replace('_', '-')} must be at least 1, not {value}")
    if args.regression and args.classes:
        raise ValueError("--classes is for classification; drop it or --regression")
    if args.model:
        directory = os.path.dirname(os.path.abspath(args.model))
        if not os.path.isdir(directory):
            raise ValueError(f"--model {args.model}: directory {directory} does not exist; create it first")


def _progress_bar(total):
    """tqdm's bar on a terminal; elsewhere (tqdm would show nothing) a stand-in,
    which spares the import."""
    if not sys.stderr.isatty():
        return _NoBar()
    from tqdm import tqdm
    return tqdm(total=total, unit=" rows", unit_scale=True, desc="train")


class _NoBar:
    """What _one_pass calls on a progress bar, doing nothing."""

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def update(self, n):
        pass

    def set_postfix_str(self, text, refresh=True):
        pass


def _one_pass(est, stream, bar, index):
    """partial_fit over one pass of the stream; (mean progressive loss, rows) of the pass."""
    total = rows = 0
    for X, y in est.settle(stream.chunks()):
        if not X.shape[0]:
            continue
        try:
            est.partial_fit(X, y, classes=stream.classes)
        except NonFiniteMargin as e:
            raise ValueError(f"{stream.name}: data row {rows + e.row + 1}: {e.detail}") from None
        total += est.progressive_loss_ * X.shape[0]
        rows += X.shape[0]
        bar.update(X.shape[0])
        bar.set_postfix_str(f"pass {index + 1}, progressive loss {total / rows:.4f}", refresh=False)
    if not rows:
        raise ValueError(f"{stream.name}: no rows to train on")
    return total / rows, rows


def _number_or_auto(text):
    """--eta0 and --delta: "auto" or a number."""
    if text == "auto":
        return text
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be auto or a number, not {text!r}") from None


def _describe(est):
    """The estimator's call with its main parameters, "auto" steps with the values chosen."""
    params = ("loss", "update", "schedule", "penalty", "alpha", "eta0", "delta", "batch_size")
    chosen = {"eta0": est.learner.eta0, "delta": est.learner.delta}
    shown = [f"{p}={est.params[p]!r}" + (f" ({chosen[p]:.4g})" if est.params[p] == "auto" else "")
             for p in params]
    name = "ProxRegressor" if est.regression else "ProxClassifier"
    return f"{name}(" + ", ".join(shown) + ")"


def _evaluate(est, chunks, name):
    """The test-metric lines for the model on ``chunks`` (one streaming pass)."""
    from .metrics import log_loss, roc_auc
    y, pred, scores, proba = [], [], [], []
    for X, y_chunk in chunks:
        y.append(y_chunk)
        pred.append(est.predict(X))
        if not est.regression:
            scores.append(est.scores(X))
            if est.has_proba():
                proba.append(est.predict_proba(X))
    y, pred = np.concatenate(y), np.concatenate(pred)
    if not len(y):
        raise ValueError(f"--test {name}: no rows")
    if est.regression:
        return [f"test RMSE: {np.sqrt(np.mean((pred - y) ** 2)):.6f} ({len(y)} rows of {name})"]
    classes = np.asarray(est.classes)
    unknown = np.setdiff1d(np.unique(y), classes)
    if len(unknown):
        raise ValueError(f"--test {name} has labels {unknown.tolist()} the training data did not; "
                         f"the classes are {classes.tolist()}")
    lines = [f"test accuracy: {np.mean(pred == y):.6f} ({len(y)} rows of {name})"]
    proba = np.concatenate(proba) if proba else None
    if proba is not None:
        lines.append(f"test log-loss: {log_loss(np.searchsorted(classes, y), proba):.6f}")
    if len(np.unique(y)) < len(classes):
        lines.append("test AUC: n/a (some class has no test rows)")
    elif len(classes) == 2:
        lines.append(f"test AUC: {roc_auc(y == classes[1], np.concatenate(scores)):.6f}")
    elif proba is not None:
        auc = np.mean([roc_auc(y == c, proba[:, k]) for k, c in enumerate(classes)])
        lines.append(f"test AUC: {auc:.6f} (one-vs-rest mean)")
    return lines


class FileStream:
    """The training files as chunks, width and classes settled before the first chunk."""

    def __init__(self, args, est):
        check_readable(args.data + ([args.test] if args.test else []))
        self.paths, self.chunk_rows = args.data, args.chunk_rows
        self.test_path = args.test
        self.test_name = args.test and source_name(args.test)
        self.name = ", ".join(map(source_name, args.data))
        self.n_features, self.classes, self.rows = args.n_features, args.classes, None
        self.preparation, self.kept = "no scan", None
        self.width_origin = ("--n-features" if args.n_features is not None else
                             f"the largest feature index in {self.name}")
        classifier = not est.regression
        needs_scan = self.n_features is None or (classifier and self.classes is None)
        _check_read_once(args.data, needs_scan, args.passes)
        if needs_scan:
            summary = scan(self.paths, self.chunk_rows, KEEP_BYTES)
            self.preparation = "scan"
            self.rows = summary.rows
            if self.n_features is None or summary.n_features <= self.n_features:
                self.kept = summary.chunks      # else reading again reports the wide index
            self.n_features = self.n_features or summary.n_features
            if classifier and self.classes is None:
                if summary.labels is None:
                    raise ValueError(f"{self.name}: more than 1000 distinct labels; for regression "
                                     f"targets pass --regression, else list them with --classes")
                self.classes = sorted(summary.labels)

    def chunks(self):
        if self.kept is not None:       # the scan's chunks, at the stream's width
            return ((Chunk(c.data, c.indices, c.indptr, c.y, c.qids, self.n_features), c.y)
                    for c in self.kept)
        return read_ahead((chunk, chunk.y) for path in self.paths
                          for chunk in iter_chunks(path, chunk_rows=self.chunk_rows,
                                                   n_features=self.n_features))

    def test_chunks(self):
        if self.test_path is None:
            return None
        return labelled_chunks(self.test_path, self.chunk_rows)


def _check_read_once(paths, needs_scan, passes):
    """Refuse, before reading anything, training data that can be read only once
    (standard input, a pipe: fastprox.libsvm.read_once) when train would read it
    again: after the first pass that finds the width and classes, or in a second
    pass. Its rows are not spooled to a temporary file: a stream's width and
    classes are given instead."""
    once = ", ".join(source_name(path) for path in paths if read_once(path))
    if not once:
        return
    if needs_scan:
        raise ValueError(f"{once} can be read only once (standard input, a pipe), but train "
                         f"would read it twice, first to find the width and classes: give "
                         f"--n-features and, for a classifier, --classes to train in one pass")
    if passes > 1:
        raise ValueError(f"{once} can be read only once (standard input, a pipe), but "
                         f"--passes {passes} reads it {passes} times: save it to a file, "
                         f"or train with --passes 1")


class DefaultStream:
    """The embedded default data (fastprox.cli.synthetic), in memory, as chunks."""

    def __init__(self, args):
        if args.test:
            check_readable([args.test])
        from .synthetic import text_like   # numpy and scipy work, only for this data
        self.n_features = args.n_features or DEFAULT_FEATURES
        self.width_origin = "--n-features" if args.n_features else "the default data's width"
        if args.rows < 2:
            raise ValueError(f"--rows must be at least 2 (one to train, one to test), not {args.rows}")
        _check_default_size(args.rows, self.n_features)
        self.X, self.y, self.X_test, self.y_test = text_like(args.rows, self.n_features, args.seed)
        self.classes = None if args.regression else (args.classes or [-1.0, 1.0])
        self.chunk_rows, self.rows = args.chunk_rows, self.X.shape[0]
        self.test_path = args.test
        self.test_name = source_name(args.test) if args.test else "the held-out part"
        self.name = f"embedded default (text-like, seed {args.seed})"
        self.preparation = "generate"

    def chunks(self):
        for start in range(0, self.X.shape[0], self.chunk_rows):
            yield self.X[start:start + self.chunk_rows], self.y[start:start + self.chunk_rows]

    def test_chunks(self):
        if self.test_path is not None:
            return labelled_chunks(self.test_path, self.chunk_rows)
        return iter([(self.X_test, self.y_test)])


def _check_default_size(rows, n_features):
    """Refuse, in one line, default data that would not fit in the memory available
    now (DEFAULT_DATA_BYTES): NumPy would fail with a MemoryError, or fill the
    memory for minutes before the model's own check refuses it."""
    per_feature, per_row = DEFAULT_DATA_BYTES
    need, free = per_feature * n_features + per_row * rows, available_memory()
    if free is not None and need > free:
        raise ValueError(f"the embedded default data of {rows} rows x {n_features} features needs "
                         f"about {_size(need)} of memory to generate, but only {_size(free)} is "
                         f"available; pass a smaller --n-features or --rows")
