"""Train a model on LIBSVM files read once, or on embedded data.

The files are read once, --chunk-rows rows at a time, in the order given,
and never loaded whole: the model starts with the width of the first rows
and grows with the features it meets (new ones join at weight 0, as if
there from the start: the model equals one built with the final width), and
a classifier recognizes its two classes as the labels come (the larger label
is the positive class; see fastprox.cli.labels: until the second label
appears the rows are held, up to 64 MB; a multiclass stream needs
--classes). So standard input and pipes ('-', /dev/stdin, <(zcat f.gz)) train
as files do. --n-features and --classes are hints: given, nothing is
inferred. Ids without a useful bound (already-hashed 64-bit ids) are mapped
into 2^B buckets by --hash-bits B (fastprox._hashing: Fibonacci hashing of
the id; ids of a row that share a bucket are summed, rows share a bucket's
weight, as Vowpal Wabbit's -b); the model then has 2^B features, and
the model file records the hashing, which 'fastprox predict' (and the
estimators of load_model) apply. --passes repeats the stream
(rows are not shuffled); data read once is trained in one pass. Memory holds
the model and a few chunks.

On standard error it prints Vowpal Wabbit's progressive validation table:
lines at examples 1, 2, 4, 8, ... with the mean loss so far and since the
line before, each row's loss taken before the model learns from it (see
fastprox.cli.progress; the first lines as soon as their rows are read, not
once the first chunk is: fastprox.cli.preview), and at the end the best constant predictor and its
loss, which one pass knows only then. A progress bar shows on a terminal;
--quiet prints nothing. Standard output then gets the report: the data, the
model, the progressive loss of the first pass, the test metrics (--test:
accuracy, log-loss when the loss gives probabilities, AUC; RMSE with
--regression), the non-zero weights and the times.

The model's memory grows with its width: one that would not fit is refused
in one line giving its size and what set the width (the largest feature
index, --n-features, --hash-bits); one of over 1 GiB trains, with a note.

Without DATA it trains on the embedded default, so that 'fastprox train'
works with no files: a seeded, generated text-like set of --rows rows and
--n-features features (default 2^18), Zipf word frequencies, 20% held out as
the test set (fastprox.cli.synthetic).
"""
import argparse
import re
import sys
import time
from array import array
from math import exp, expm1
from types import SimpleNamespace

from .._core import (AUTO_ROWS, CLASSIFIER_DEFAULTS, REGRESSOR_DEFAULTS, auto_steps, margins,
                     new_learner, probabilities)
from .._kernels import NonFiniteMargin
from .._numpy import np
from .._validation import (CLASSIFICATION_LOSSES, GROUP_PENALTIES, PENALTIES, REGRESSION_LOSSES,
                           SCHEDULES, STEPS, UPDATES, ModelTooLarge, _size, available_memory, check_params,
                           schedule_and_step,
                           kernel_arrays, kernel_loss)
from .._writes import check_output
from ..libsvm import MAX_INDEX, STDIN, iter_chunks, read_once, source_name
from ..model_io import read_model, write_model
from .labels import LABEL_BUFFER_BYTES, Classes
from . import preview
from .progress import LabelStats, Table, decimal, progress_bar, summary
from .stream import (CHUNK_ROWS, add_reader_options, check_readable, hashed, labelled_chunks, pumped,
                     read_ahead, reading, row_locator)

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
               "batch_size": 2**31 - 1, "rows": sys.maxsize, "hash_bits": 40, "sync_rows": sys.maxsize,
               "workers": sys.maxsize, "max_line_bytes": sys.maxsize}    # batch_size: the kernel's C int

# Command-line option -> estimator parameter, for the options passed through.
ESTIMATOR_OPTIONS = {"loss": "loss", "update": "update", "schedule": "schedule", "step": "step",
                     "penalty": "penalty", "alpha": "alpha", "l1_ratio": "l1_ratio",
                     "eta0": "eta0", "delta": "delta", "rda_rho": "rda_rho",
                     "berhu_gamma": "berhu_gamma", "batch_size": "batch_size",
                     "epsilon": "epsilon", "seed": "random_state", "multi_class": "multi_class",
                     "hash_bits": "hash_bits"}


def add_arguments(parser):
    # argparse takes "-1" for a value, not an option, by this pattern: "-1,1" too
    parser._negative_number_matcher = re.compile(r"^-\d[\d.,eE+-]*$")
    parser.add_argument("data", nargs="*", metavar="DATA",
                        help="LIBSVM training files (plain, .gz, .bz2, .xz; - for standard input); "
                             "none: the embedded default")
    parser.add_argument("--test", metavar="DATA", help="LIBSVM file to evaluate the model on "
                        "(default: none; the held-out part of the embedded default)")
    parser.add_argument("--model", metavar="OUT",
                        help="save the model here, for 'fastprox predict' and fastprox.load_model "
                             "(default: not saved)")
    parser.add_argument("--passes", type=int, default=1, help="passes over the data")
    parser.add_argument("--chunk-rows", type=int, default=CHUNK_ROWS, help="rows parsed and learned at a time")
    parser.add_argument("--n-features", type=int, metavar="N",
                        help="model width (default: grows with the largest index met; 2^18 for "
                             "the default data)")
    parser.add_argument("--classes", type=_labels, nargs="+", metavar="LABELS",
                        help="every label of the stream, as 1,2,3 or 1 2 3 (default: the two "
                             "labels met; needed for more than two)")
    add_reader_options(parser, "hash every feature id into 2^B buckets, as VW's -b (default: no "
                               "hashing; ids are columns)")
    parser.add_argument("--regression", action="store_true", help="train a ProxRegressor (default: "
                        "a ProxClassifier)")
    parser.add_argument("--rows", type=int, default=DEFAULT_ROWS, help="rows of the embedded data")
    parser.add_argument("--seed", type=int, help="seed of the default data (default: 0) and the "
                        "model's random_state (default: None, the estimator's)")
    parser.add_argument("--quiet", action="store_true",
                        help="print nothing but errors (default: off: the progress table on "
                             "stderr, the report on stdout)")
    est = parser.add_argument_group("estimator options (see help(fastprox.ProxClassifier))")
    d = CLASSIFIER_DEFAULTS
    est.add_argument("--loss", choices=CLASSIFICATION_LOSSES + REGRESSION_LOSSES,
                     help=f"loss (default: {d['loss']}; {REGRESSOR_DEFAULTS['loss']} with --regression)")
    est.add_argument("--update", choices=UPDATES, help=f"update rule (default: {d['update']})")
    est.add_argument("--schedule", choices=SCHEDULES, help="step schedule (default: normalized where "
                     "the rule takes it: fobos, penalty none or l1, batch size 1, no multinomial; else adagrad)")
    est.add_argument("--step", choices=STEPS, help="fobos's forward step: the gradient step, or the "
                     "importance-invariant flow along the row (default: invariant with fobos, batch "
                     "size 1 and no multinomial; else gradient)")
    est.add_argument("--penalty", choices=PENALTIES + GROUP_PENALTIES, help=f"penalty (default: {d['penalty']})")
    est.add_argument("--multi-class", choices=("ovr", "multinomial"),
                     help=f"three classes or more: one-vs-rest or one softmax/Crammer-Singer "
                          f"model (default: {d['multi_class']})")
    meanings = {"alpha": "penalty weight per example", "l1-ratio": "share of l1 in the elastic net",
                "rda-rho": "enhanced l1-RDA's extra sparsity (rda)",
                "berhu-gamma": "Berhu's switch point between l1 and squared l2",
                "epsilon": "width of the huber and epsilon_insensitive losses"}
    for name, meaning in meanings.items():
        est.add_argument(f"--{name}", type=float, help=f"{meaning} (default: {d[name.replace('-', '_')]})")
    for name, meaning in (("eta0", "base step"), ("delta", "AdaGrad's offset")):
        est.add_argument(f"--{name}", type=_number_or_auto, metavar="{auto,NUMBER}",
                         help=f"{meaning} (default: auto: 0.5 and unused; under adagrad set by "
                              "the first 10,000 rows' scale)")
    est.add_argument("--batch-size", type=int, help=f"rows per step (default: {d['batch_size']})")
    est.add_argument("--no-intercept", action="store_true", help="fit no intercept (default: off)")
    est.add_argument("--groups", metavar="FILE",
                     help="group penalties: a text file of one integer group id per feature, in "
                          "feature order (-1: unpenalized); it sets the width (default: each "
                          "feature a group)")
    est.add_argument("--group-weights", metavar="FILE",
                     help="group penalties: a text file of one weight d_G >= 0 per group (default: 1)")
    cluster = parser.add_argument_group("on a Dask cluster (pip install fastprox[dask]; docs/dask.md)")
    cluster.add_argument("--scheduler", metavar="ADDRESS",
                         help="train on the Dask cluster whose scheduler is at ADDRESS "
                              "(tcp://host:8786): its workers read the files (default: this machine)")
    cluster.add_argument("--sequential", action="store_true",
                         help="with --scheduler: the model visits the files in turn, the same model as "
                              "one machine's, bit for bit (default: off: the files are dealt to the "
                              "workers, which train in parallel, their models mixed each pass)")
    cluster.add_argument("--sync-rows", type=int, metavar="N",
                         help="with --scheduler: mix the workers' models every N rows per worker "
                              "(default: once per pass)")
    cluster.add_argument("--workers", type=int, metavar="N",
                         help="with --scheduler: deal the files to N groups (default: the cluster's workers)")
    cluster.add_argument("--timeout", type=float, metavar="S",
                         help="with --scheduler: end with an error once the cluster has had no workers for "
                              "S seconds (default: 60)")


def run(args):
    """Train, evaluate, save; the report is printed once everything succeeded."""
    started = time.perf_counter()
    _check_options(args)            # first: its errors name the flags
    est = StreamModel(args)
    if args.scheduler:
        from ..dask._cli import train_on_cluster     # imports Dask
        source, trainer, losses = train_on_cluster(args, est)
    else:
        source = FileSource(args, est) if args.data else DefaultSource(args)
        est.width_origin = source.width_origin
        with progress_bar(source.rows * args.passes if source.rows else None, args.quiet) as bar:
            trainer = Trainer(est, source, Table(None if args.quiet else bar.write_line, _predicts(est)), bar)
            source.show_first_lines(est, trainer.table, args.quiet)
            losses = [trainer.one_pass(source.chunks()) for _ in range(args.passes)]
    trained = time.perf_counter()
    if not args.quiet and trainer is not None:      # (a parallel run's table is a line per round)
        summary(trainer.table, trainer.stats, kernel_loss(est.loss), est.classes,
                est.learner.multinomial, trainer.features)
    test = source.test_chunks()
    test_lines = [] if test is None else _evaluate(est, test, source.test_name)
    tested = time.perf_counter()
    if args.model:
        est.save(args.model, args.passes, losses[-1][0])
    if args.quiet:
        return 0
    rows = losses[0][1]
    report = [f"data: {source.name} ({rows} rows x {est.learner.n_features} features, "
              f"{args.passes} pass{'es' if args.passes > 1 else ''})",
              f"model: {_describe(est)}",
              f"progressive loss: {decimal(losses[0][0])} ({est.loss} loss, first pass)"]
    if args.passes > 1:
        report.append(f"last pass mean loss: {decimal(losses[-1][0])} (pass {args.passes})")
    report += test_lines
    report += [f"non-zero weights: {est.learner.count_nonzero()} of "
               f"{est.learner.n_features * est.learner.n_outputs}",
               f"time: {tested - started:.2f} s (train {trained - started:.2f} s = "
               f"{rows * args.passes / max(trained - started, 1e-9):,.0f} rows/s, "
               f"test {tested - trained:.2f} s)"]
    if args.model:
        report.append(f"model saved: {args.model}")
    print("\n".join(report))
    return 0


def _predicts(est):
    """What the table's "current predict" column holds (fastprox.cli.progress)."""
    if est.regression:
        return "the predicted value"
    if est.classes is not None and len(est.classes) > 2:
        return "the predicted class"
    if _probability_from_loss(est):
        return "P(label = the larger class), from the example's loss"
    return "the margin, positive for the larger class"


def _probability_from_loss(est):
    """Whether the table's prediction is the probability exp(-loss) of the example's
    label (binary log loss, a step per example), which costs nothing: else it is a
    margin, which reads every weight (Learner.margins)."""
    binary = est.classes is None or len(est.classes) == 2
    return not est.regression and binary and kernel_loss(est.loss) == "log" and est.params["batch_size"] == 1


class StreamModel:
    """The estimator the options describe, trained on the shared core (no
    scikit-learn import: start-up stays short), or read from a model file to
    predict. Its parameters are checked now, before any reading."""

    def __init__(self, args):
        self.regression = args.regression
        defaults = REGRESSOR_DEFAULTS if args.regression else CLASSIFIER_DEFAULTS
        self.params = {**defaults, **{param: getattr(args, option)
                                      for option, param in ESTIMATOR_OPTIONS.items()
                                      if getattr(args, option, None) is not None}}
        if args.regression:
            self.params.pop("multi_class", None)
        self.params["fit_intercept"] = not args.no_intercept
        if args.groups:
            self.params["groups"] = read_vector(args.groups, "--groups", int)
        if args.group_weights:
            self.params["group_weights"] = read_vector(args.group_weights, "--group-weights", float)
        self._setup(args.classes, args.quiet)

    @classmethod
    def from_params(cls, params, regression, classes=None):
        """The model of an estimator's ``get_params()`` (fastprox.dask trains it
        as this command does), checked; ``classes`` as --classes gives them."""
        model = cls.__new__(cls)
        model.regression, model.params = regression, dict(params)
        model._setup(classes, True)
        return model

    def _setup(self, classes, quiet):
        losses = REGRESSION_LOSSES if self.regression else CLASSIFICATION_LOSSES
        check_params(SimpleNamespace(**self.params), losses)
        self.loss = self.params["loss"]
        self.classes = classes
        self.quiet = quiet
        self.learner = None
        #: What sets the model's width, for messages about its size (set by run).
        self.width_origin = None

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
        with self._sizing(n_features):
            self.learner = new_learner(self.params, n_features, n_outputs,
                                       n_outputs > 1 and not multinomial, multinomial, head)

    def widen(self, n_features):
        """Grow the model to ``n_features`` columns (Learner.grow), reported as `start`."""
        with self._sizing(n_features):
            self.learner.grow(n_features)

    def _sizing(self, n_features):
        return _Sizing(self, n_features)

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
        if self.regression:
            return scores
        classes = np.asarray(self.classes)
        return classes[(scores > 0).astype(int) if scores.ndim == 1 else np.argmax(scores, axis=1)]

    def has_proba(self):
        return not self.regression and kernel_loss(self.loss) in ("log", "modified_huber")

    def proba_of(self, scores):
        """The class probabilities for the margins ``scores``."""
        return probabilities(scores, self.learner.loss, self.learner.multinomial)

    def save(self, path, passes, progressive_loss):
        """Write the model file that the estimator's partial_fit would have written."""
        fitted = {"n_features_in_": self.learner.n_features, "t_": self.learner.t, "n_iter_": passes,
                  "progressive_loss_": float(progressive_loss), "sparse_coef": False,
                  "hash_bits_": self.params["hash_bits"]}
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
                              f"features ({why}); use fewer features (--hash-bits, or drop rare "
                              f"ones)") from None
        if kind is None:
            learner = self.model.learner
            size = sum(len(a) * a.itemsize for a, _ in learner.saved_arrays().values())
            if size > NOTE_BYTES and not self.model.quiet:
                print(f"fastprox: note: the model's state for {learner.n_features} features takes "
                      f"{_size(size)} of memory ({why}); hash the features into fewer buckets "
                      f"(--hash-bits) to shrink it", file=sys.stderr)
        return False


class Trainer:
    """The stream through the kernel, a chunk at a time: its labels recognized or
    encoded (fastprox.cli.labels), the rows before the model can start held
    (those that "auto" steps read, and those whose classes are not yet known),
    the model widened to each chunk, the kernel's calls split where the table
    has a line (fastprox.cli.progress)."""

    def __init__(self, est, source, table, bar):
        self.est, self.source, self.table, self.bar = est, source, table, bar
        self.classes = None if est.regression else Classes(
            est.classes, est.params["multi_class"], est.loss)
        self.stats = LabelStats(est.regression)
        self.held, self.held_rows, self.held_bytes = [], 0, 0
        self.features = 0           # stored values trained on
        self.from_loss = _probability_from_loss(est)
        self.pass_rows = self.pass_loss = 0

    def one_pass(self, items):
        """Train on one pass of ``items`` ((rows, labels, origin) triples); the pass's
        (mean progressive loss, rows)."""
        self.begin_pass()
        self.feed(items)
        return self.end_pass()

    def begin_pass(self):
        self.pass_rows, self.pass_loss = 0, 0.0

    def feed(self, items):
        """Train on ``items`` of the pass (a pass may be fed in parts: fastprox.dask's
        sequential mode feeds each share's on the worker that holds it)."""
        for item in items:
            if item[0].shape[0]:
                self._add(*item)

    def end_pass(self):
        """Start a model on the rows still held, if any; the pass's (mean progressive
        loss, rows)."""
        if self.est.learner is None and self.held:
            self._start()
        if not self.pass_rows:
            raise ValueError(f"{self.source.name}: no rows to train on")
        if self.classes is not None:
            self.est.classes = self.classes.final()
        return self.pass_loss / self.pass_rows, self.pass_rows

    def _add(self, X, y, origin):
        if self.classes is not None:
            self.classes.meet(y, self.source.locator(origin))
        if self.est.learner is not None:
            return self._fit(X, y, origin)
        self.held.append((X, y, origin))
        self.held_rows += X.shape[0]
        self.held_bytes += sum(memoryview(a).nbytes for a in kernel_arrays(X))
        known = self.classes is None or self.classes.settled or self.held_bytes >= LABEL_BUFFER_BYTES
        if known and (self.held_rows >= AUTO_ROWS or not self.est.auto_steps()):
            self._start()

    def _start(self):
        """Make the model from the rows held, then train on them."""
        if self.classes is not None and not self.classes.settled:
            self.classes.fall_back(self.source.name, self.held_rows)
        n_features = max(X.shape[1] for X, _, _ in self.held)
        outputs = 1 if self.classes is None else self.classes.n_outputs
        self.est.start(n_features, outputs, [X for X, _, _ in self.held])
        held, self.held = self.held, []
        for item in held:
            self._fit(*item)

    def _fit(self, X, y, origin):
        """Train on one chunk, the kernel's calls split at the table's lines."""
        where = self.source.locator(origin)
        target = y if self.classes is None else self.classes.targets(y, where)
        if X.shape[1] > self.est.learner.n_features:
            self.est.widen(X.shape[1])
        self.stats.add(y, 1 if self.classes is None else self.classes.n_outputs + 1)
        rows = _Rows(*kernel_arrays(X), X.shape[1], target, where)
        n, start, batch = X.shape[0], 0, self.est.params["batch_size"]
        while start < n:
            due = start + self.table.next - self.table.rows - 1    # the row of the next line
            if due >= n:
                self._steps(rows, start, n)
                break
            step = start + (due - start) // batch * batch          # the step holding it
            end = min(step + batch, n)
            self._steps(rows, start, step)
            prediction = None if self.from_loss else self._prediction(rows, end - 1)
            loss = self._steps(rows, step, end)
            if prediction is None:
                prediction = exp(-loss) if target[end - 1] > 0 else -expm1(-loss)
            self.table.line(y[end - 1], prediction, rows.indptr[end] - rows.indptr[end - 1])
            start = end
        self.features += rows.indptr[n] - rows.indptr[0]
        self.pass_rows += n
        self.bar.update(n)

    def _steps(self, rows, start, stop):
        """The kernel's steps over rows [start, stop) of a chunk; their summed loss."""
        if start == stop:
            return 0.0
        order = None if stop - start == rows.n else array("q", range(start, stop))
        try:
            loss = self.est.learner.fit_rows(rows.data, rows.indices, rows.indptr, rows.target,
                                             None, order, self.est.params["batch_size"])
        except NonFiniteMargin as e:
            raise ValueError(f"{rows.where(e.row)}: {e.detail}") from None
        self.table.add(stop - start, loss)
        self.pass_loss += loss
        return loss

    def _prediction(self, rows, i):
        """The model's prediction for row i of a chunk, before its step: the margin (a
        pass over the weights: Learner.margins), the class for several classes."""
        a, b = rows.indptr[i], rows.indptr[i + 1]
        one = array(memoryview(rows.indptr).format, [0, b - a])
        try:
            scores = self.est.learner.margins(memoryview(rows.data)[a:b], memoryview(rows.indices)[a:b], one,
                                              rows.width)[0]
        except NonFiniteMargin as e:
            raise ValueError(f"{rows.where(i)}: {e.detail}") from None
        if len(scores) == 1:
            return scores[0]
        return self.est.classes[max(range(len(scores)), key=scores.__getitem__)]


class _Rows:
    """A chunk's CSR buffers and width, its kernel targets, and ``where(i)`` naming
    row i's line."""

    def __init__(self, data, indices, indptr, width, target, where):
        self.data, self.indices, self.indptr, self.target, self.where = data, indices, indptr, target, where
        self.n, self.width = len(indptr) - 1, width


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


def _labels(text):
    """--classes: labels as numbers, comma- or space-separated."""
    try:
        return [float(part) for part in text.split(",") if part]
    except ValueError:
        raise argparse.ArgumentTypeError(f"labels are numbers, as 1,2,3 or 1 2 3, not {text!r}") from None


def _check_options(args):
    """Refuse option values out of range or that contradict one another, by name."""
    for name, high in _INT_LIMITS.items():
        value, option = getattr(args, name), "--" + name.replace("_", "-")
        if value is not None and value > high:
            raise ValueError(f"{option} must be at most {high}, not {value}")
    for name in ("sequential", "sync_rows", "workers", "timeout"):
        if getattr(args, name) not in (None, False) and not args.scheduler:
            raise ValueError(f"--{name.replace('_', '-')} is for training on a cluster: give --scheduler too")
    for name in ("passes", "chunk_rows", "n_features", "hash_bits", "sync_rows", "workers", "max_line_bytes"):
        value = getattr(args, name)
        if value is not None and value < 1:
            raise ValueError(f"--{name.replace('_', '-')} must be at least 1, not {value}")
    if args.timeout is not None and not args.timeout > 0:
        raise ValueError(f"--timeout must be a positive number of seconds, not {args.timeout}")
    if args.classes is not None:
        args.classes = sorted({label for labels in args.classes for label in labels})
        if args.regression:
            raise ValueError("--classes is for classification; drop it or --regression")
        if len(args.classes) < 2 or any(not c.is_integer() for c in args.classes):
            raise ValueError(f"--classes needs two integer labels or more, not "
                             f"{','.join(map(repr, args.classes))}; for real-valued targets give --regression")
    if args.hash_bits is not None and (args.n_features is not None or args.groups):
        raise ValueError("--hash-bits sets the width (2^B features): drop --n-features and --groups")
    if args.model:
        check_output(args.model, "--model", [path for path in args.data + [args.test, args.groups,
                                                                          args.group_weights]
                                             if path not in (None, STDIN)])


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
    params = ("loss", "update", "schedule", "step", "penalty", "alpha", "eta0", "delta", "batch_size")
    learner = est.learner
    chosen = {"eta0": f"{learner.eta0:.4g}", "delta": f"{learner.delta:.4g}",
              "schedule": learner.schedule, "step": learner.step}
    shown = [f"{p}={est.params[p]!r}" + (f" ({chosen[p]})" if est.params[p] in ("auto", None) else "")
             for p in params]
    name = "ProxRegressor" if est.regression else "ProxClassifier"
    return f"{name}(" + ", ".join(shown) + ")"


def _evaluate(est, chunks, name):
    """The test-metric lines for the model on ``chunks`` (one streaming pass,
    fastprox.cli.metrics); labels the training data did not have are refused."""
    from .metrics import Metrics
    metrics = Metrics(est)
    for X, y, where in chunks:
        metrics.add(X.shape[1], y, est.scores(X, where))
    if metrics.unknown:
        raise ValueError(f"--test {name} has labels {sorted(metrics.unknown)} the training data did "
                         f"not; the classes are {list(est.classes)}")
    if not metrics.rows:
        raise ValueError(f"--test {name}: no rows")
    return [f"test {line}" for line in metric_lines(metrics, name)]


def metric_lines(metrics, name):
    """"NAME: VALUE (NOTE)" lines of the metrics, the first naming the rows scored."""
    lines = [f"{what}: {note.strip()}" if value is None else f"{what}: {decimal(value)}{note}"
             for what, value, note in metrics.values()]
    lines[0] += f", {metrics.rows} rows of {name})"
    return lines


class FileSource:
    """The training files, read once each, as (chunk, labels, origin) triples: origin
    the file and the number of its rows before the chunk, for errors to name a line."""

    def __init__(self, args, est):
        check_readable(args.data + ([args.test] if args.test else []))
        once = ", ".join(source_name(path) for path in args.data if read_once(path))
        if once and args.passes > 1:
            raise ValueError(f"{once} can be read only once (standard input, a pipe), but "
                             f"--passes {args.passes} reads it {args.passes} times: save it to a "
                             f"file, or train with --passes 1")
        self.paths, self.bits, self.reading = args.data, args.hash_bits, reading(args)
        self.test_path = args.test
        self.test_name = args.test and source_name(args.test)
        self.name = ", ".join(map(source_name, args.data))
        self.rows = None
        self.n_features, self.width_origin = _fixed_width(args, est.params, self.name)
        self.width_file = args.groups or args.group_weights
        self.preview = None

    def show_first_lines(self, est, table, quiet):
        """Show the table's first lines as the first chunk's rows arrive (a Preview),
        where they can be known before the chunk is complete (fastprox.cli.preview)."""
        if not quiet and preview.wanted(self.reading, self.bits, est.params):
            self.preview = preview.Preview(est, self, table, lambda chunk: hashed(chunk, self.bits))

    def chunks(self):
        """The pass's (chunk, labels, origin) triples, read ahead; the first pass's
        first chunk is previewed (`show_first_lines`), and handed over before the
        run trains on it."""
        shown, self.preview = self.preview, None
        for item in read_ahead(self._read(shown)):
            if shown is not None:
                shown.hand_over()
                shown = None
            yield item

    def _read(self, shown):
        try:
            yield from self._chunks(shown)
        except ValueError as e:
            raise self._beyond_groups(e) from None

    def _beyond_groups(self, error):
        """The reader's error for an index beyond a width that --groups or
        --group-weights set, naming that file rather than --n-features."""
        found = re.match(r"(.*?: index '[^']*' is beyond) n_features=(\d+) ", str(error))
        if found is None or not self.width_origin.startswith("--group"):
            return error
        option = self.width_origin.split()[0]
        return ValueError(f"{found.group(1)} the {found.group(2)} features of {option} {self.width_file} "
                          f"(one entry per feature): give an entry for every feature")

    def _chunks(self, shown):
        for path in self.paths:
            row = 0
            with pumped(path) as source:
                for chunk in iter_chunks(source, n_features=self.n_features, preview=shown, **self.reading):
                    yield hashed(chunk, self.bits), chunk.y, (path, row)
                    row += chunk.shape[0]
            shown = None

    @staticmethod
    def locator(origin):
        """``where(i)``: the place of the chunk's row i, "FILE:LINE" (fastprox.cli.stream.locate)."""
        return row_locator(*origin)

    def test_chunks(self):
        if self.test_path is None:
            return None
        return labelled_chunks(self.test_path, bits=self.bits, **self.reading)


def _fixed_width(args, params, name):
    """(the model's width when the options fix it, else None: it grows; what sets
    the width, for messages about its size)."""
    if args.hash_bits is not None:
        return None, f"--hash-bits {args.hash_bits}"
    groups, weights = params["groups"], params["group_weights"]
    if groups is not None or weights is not None:
        option, n = ("--groups", len(groups)) if groups is not None else ("--group-weights", len(weights))
        if args.n_features is not None and args.n_features != n:
            raise ValueError(f"{option} {args.groups or args.group_weights}: {n} group ids or weights "
                             f"for --n-features {args.n_features}; give one per feature")
        return n, f"{option} (one entry per feature)"
    if args.n_features is not None:
        return args.n_features, "--n-features"
    return None, f"the largest feature index in {name}"


class DefaultSource:
    """The embedded default data (fastprox.cli.synthetic), in memory, as chunks."""

    def __init__(self, args):
        if args.test:
            check_readable([args.test])
        from .synthetic import text_like   # numpy and scipy work, only for this data
        n_features = args.n_features or DEFAULT_FEATURES
        self.width_origin = "--n-features" if args.n_features else "the default data's width"
        if args.rows < 2:
            raise ValueError(f"--rows must be at least 2 (one to train, one to test), not {args.rows}")
        _check_default_size(args.rows, n_features)
        seed = args.seed or 0
        self.X, self.y, self.X_test, self.y_test = text_like(args.rows, n_features, seed)
        self.chunk_rows, self.rows, self.reading = args.chunk_rows, self.X.shape[0], reading(args)
        self.test_path = args.test
        self.test_name = source_name(args.test) if args.test else "the held-out part"
        self.name = f"embedded default (text-like, seed {seed})"

    def show_first_lines(self, est, table, quiet):
        """(The data are in memory: its chunks come at once.)"""

    def chunks(self):
        for start in range(0, self.X.shape[0], self.chunk_rows):
            stop = start + self.chunk_rows
            yield self.X[start:stop], self.y[start:stop], start

    def locator(self, origin):
        """``where(i)``: the place of row i of the chunk starting at row ``origin``."""
        return lambda i: f"{self.name}: row {origin + i + 1}"

    def test_chunks(self):
        if self.test_path is not None:
            return labelled_chunks(self.test_path, **self.reading)
        return iter([(self.X_test, self.y_test, lambda i: f"{self.test_name}: row {i + 1}")])


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
