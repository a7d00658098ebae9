"""Train on LIBSVM or VW text files read once, or on embedded data.

The files are read once, --chunk-rows rows at a time, in the order given,
and never loaded whole: the model starts with the width of the first rows
and grows with the features it meets (new ones join at weight 0, as if
there from the start: the model equals one built with the final width), and
a classifier recognizes its two classes as the labels come (the larger label
is the positive class; see fastprox.stream.labels: until the second label
appears the rows are held, up to 64 MB; a multiclass stream needs
--classes). So standard input and pipes ('-', /dev/stdin, <(zcat f.gz)) train
as files do. --n-features and --classes are hints: given, nothing is
inferred. Ids without a useful bound (already-hashed 64-bit ids) are mapped
into 2^B buckets by --hash-bits B (fastprox._hashing: Fibonacci hashing of
the id; ids of a row that share a bucket are summed, rows share a bucket's
weight, as Vowpal Wabbit's -b); the model then has 2^B features, and
the model file records the hashing, which 'fastprox predict' (and the
estimators of load_model) apply. --passes repeats the stream
(rows are not shuffled), holding out every 10th example of each pass and
stopping when their loss stops improving, as Vowpal Wabbit does
(fastprox.stream.holdout); data read once is trained in one pass. Memory holds
the model and a few chunks. -i continues a saved model as one run over both
data would, and -p, -P, --readable-model and --invert-hash are VW's
(fastprox.cli.workflow). -q, --cubic and --interactions cross VW text's namespaces
or, in LIBSVM data, the groups of --groups (-q 0,1: fastprox.stream.groups); the
model file records them, with VW text's -b, for predict and -i.

On standard error it prints Vowpal Wabbit's progressive validation table:
lines at examples 1, 2, 4, 8, ... with the mean loss so far and since the
line before, each row's loss taken before the model learns from it (see
fastprox.stream.progress; the first lines as soon as their rows are read, not
once the first chunk is: fastprox.stream.preview), and at the end the best constant predictor and its
loss, which one pass knows only then. A progress bar shows on a terminal;
--quiet shows none of this, and of the report only the final figures (the
holdout loss, the test metrics). Standard output then gets the report: the data, the
model, the progressive loss of the first pass, the test metrics (--test:
accuracy, log-loss when the loss gives probabilities, AUC; RMSE with
--regression), the non-zero weights and the times.

The model's memory grows with its width: one that would not fit is refused
in one line giving its size and what set the width (the largest feature
index, --n-features, --hash-bits); one of over 1 GiB trains, with a note.

Without DATA it trains on the embedded default, so that 'fastprox train'
works with no files: a seeded, generated text-like set of --rows rows and
--n-features features (default 2^18), Zipf word frequencies, 20% held out as
the test set (fastprox.stream.synthetic).
"""
import argparse
import re
import sys
import time

from .._core import CLASSIFIER_DEFAULTS, REGRESSOR_DEFAULTS
from .._interactions import record, terms_of
from .._libsvm import MAX_INDEX
from .._numpy import np
from .._registry import SCHEDULES, STEPS, UPDATES
from .._validation import (CLASSIFICATION_LOSSES, COORDINATE_PENALTIES, GROUP_PENALTIES, REGRESSION_LOSSES,
                           kernel_loss)
from .._writes import atomic_write, check_distinct, check_output, naming
from ..libsvm import STDIN, source_name
from ..stream.files import CHUNK_ROWS
from ..stream.model import StreamModel
from ..stream.progress import Table, decimal, progress_bar, summary
from ..stream.readable import FeatureNames, readable_lines
from ..stream.groups import GroupCrossing
from ..stream.sources import DefaultSource, FileSource
from ..vw.reader import DEFAULT_BITS
from ..stream.trainer import Trainer, predicts
from .metrics import Metrics, metric_lines
from .options import OptionError, add_reader_options, check_test_content, is_vw, path, reading, seed
from .workflow import (add_workflow_options, auto_or, check_workflow, holdout_line, holdout_of, initial_model,
                       model_width, options_line)

#: Rows of the embedded default data (--rows).
DEFAULT_ROWS = 100_000

#: Largest values of the integer options: the C sizes the reader and the kernel
#: take (beyond them, an OverflowError), the width the reader's largest index.
_INT_LIMITS = {"passes": sys.maxsize, "chunk_rows": sys.maxsize, "n_features": MAX_INDEX,
               "batch_size": 2**31 - 1, "rows": sys.maxsize, "hash_bits": 40, "sync_rows": sys.maxsize,
               "workers": sys.maxsize, "max_line_bytes": sys.maxsize}    # batch_size: the kernel's C int

# Command-line option -> estimator parameter, for the options passed through.
ESTIMATOR_OPTIONS = {"loss": "loss", "update": "update", "schedule": "schedule", "step": "step",
                     "penalty": "penalty", "alpha": "alpha", "l1_ratio": "l1_ratio",
                     "eta0": "eta0", "t0": "t0", "delta": "delta", "rda_rho": "rda_rho",
                     "berhu_gamma": "berhu_gamma", "batch_size": "batch_size",
                     "epsilon": "epsilon", "seed": "random_state", "multi_class": "multi_class",
                     "hash_bits": "hash_bits", "average": "average", "intercept_scaling": "intercept_scaling"}


def add_arguments(parser):
    # argparse takes "-1" for a value, not an option, by this pattern: "-1,1" too
    parser._negative_number_matcher = re.compile(r"^-\d[\d.,eE+-]*$")
    parser.add_argument("data", nargs="*", metavar="DATA", type=path,
                        help="LIBSVM or VW text training files (plain, .gz, .bz2, .xz; - for standard input); "
                             "none: the embedded default")
    parser.add_argument("-d", "--data", dest="more_data", action="append", default=[], metavar="DATA", type=path,
                        help="a training file, as DATA (VW's -d; repeatable; default: none)")
    parser.add_argument("--test", metavar="DATA", type=path, help="file to evaluate the model on, in DATA's format "
                        "(default: none; the held-out part of the embedded default)")
    parser.add_argument("-f", "--model", metavar="OUT", type=path,
                        help="save the model here, for 'fastprox predict' and fastprox.load_model "
                             "(default: not saved)")
    add_workflow_options(parser)
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
    parser.add_argument("--rows", type=int, help=f"rows of the embedded data, trained on without DATA "
                                                 f"(default: {DEFAULT_ROWS})")
    parser.add_argument("--seed", type=seed, help="seed of the default data (default: 0) and the "
                        "model's random_state (default: None, the estimator's)")
    parser.add_argument("--quiet", action="store_true",
                        help="no progress table, summary or report: only the final figures on stdout "
                             "(holdout loss, test metrics) and errors (default: off: the table on "
                             "stderr, the report on stdout)")
    est = parser.add_argument_group("estimator options (see help(fastprox.ProxClassifier))")
    d = CLASSIFIER_DEFAULTS
    est.add_argument("--loss", choices=CLASSIFICATION_LOSSES + REGRESSION_LOSSES,
                     help=f"loss (default: {d['loss']}; {REGRESSOR_DEFAULTS['loss']} with --regression)")
    est.add_argument("--update", choices=tuple(UPDATES), help=f"update rule (default: {d['update']})")
    est.add_argument("--schedule", **auto_or(SCHEDULES),
                     help="step schedule (default: auto: normalized where the rule takes it: fobos, penalty "
                          "none or l1, batch size 1, no multinomial; else adagrad)")
    est.add_argument("--step", **auto_or(STEPS), help="fobos's forward step: the gradient step, or the "
                     "importance-invariant flow along the row (default: auto: invariant with fobos, batch "
                     "size 1 and no multinomial; else gradient)")
    est.add_argument("--penalty", choices=COORDINATE_PENALTIES + GROUP_PENALTIES, help=f"penalty (default: {d['penalty']})")
    est.add_argument("--multi-class", choices=("ovr", "multinomial"),
                     help=f"three classes or more: one-vs-rest or one softmax/Crammer-Singer "
                          f"model (default: {d['multi_class']})")
    meanings = {"alpha": "penalty weight per example", "l1-ratio": "share of l1 in the elastic net",
                "rda-rho": "enhanced l1-RDA's extra sparsity (rda)",
                "berhu-gamma": "Berhu's switch point between l1 and squared l2",
                "epsilon": "width of the huber and (squared_)epsilon_insensitive losses",
                "t0": "offset of the invsqrt and inv schedules, eta0 / sqrt(t + t0) and eta0 / (t + t0) "
                      "(fobos)",
                "intercept-scaling": "value of the intercept's constant feature, the intercept being it times "
                                     "the feature's weight (0.1: sparse SGDClassifier's decay of its intercept "
                                     "updates, under the scalar schedules)"}
    for name, meaning in meanings.items():
        est.add_argument(f"--{name}", type=float, help=f"{meaning} (default: {d[name.replace('-', '_')]})")
    est.add_argument("--eta0", type=_number_or_auto, metavar="{auto,NUMBER}",
                     help="base step size (default: auto: 0.5; under adagrad 1/sqrt of the mean "
                          "squared norm of the first 10,000 rows, intercept included)")
    est.add_argument("--delta", type=_number_or_auto, metavar="{auto,NUMBER}",
                     help="AdaGrad's offset added to the root of the squared gradients' sum (default: "
                          "auto: under adagrad the root mean square of the first 10,000 rows' stored "
                          "values; 1e-8, unused, under the other schedules)")
    est.add_argument("--batch-size", type=int, help=f"rows per step (default: {d['batch_size']})")
    est.add_argument("--average", type=int, nargs="?", const=1, metavar="A",
                     help="keep the averaged iterate from step A on (alone: 1) and save and test it, as "
                          "scikit-learn's average (docs/contract.md, 'Averaged iterate'; default: off)")
    est.add_argument("--no-intercept", action="store_true", help="fit no intercept (default: off)")
    est.add_argument("--groups", metavar="FILE", type=path,
                     help="group penalties: a text file of one integer group id per feature, in "
                          "feature order (-1: unpenalized); it sets the width (default: each "
                          "feature a group)")
    est.add_argument("--group-weights", metavar="FILE", type=path,
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
    args.data = args.data + args.more_data
    _check_options(args)            # first: its errors name the flags
    est = initial_model(args, ESTIMATOR_OPTIONS) if args.initial_model else model_of(args)
    holdout = None if args.scheduler else holdout_of(args)     # (a cluster's passes hold nothing out)
    if args.scheduler:
        from .cluster import train_on_cluster     # imports Dask
        source, trainer, losses = train_on_cluster(args, est, *_fixed_width(args, est.params))
    else:
        source = _source(args, est)
        est.width_origin = source.width_origin
        if args.invert_hash and source.names is None and args.data:
            source.names = FeatureNames()
        if args.predictions:
            trained = []
            with naming(args.predictions, f"--predictions {args.predictions}"):
                atomic_write(args.predictions, lambda f: trained.append(
                    _train(args, est, source, holdout, f.write)))
            trainer, losses = trained[0]
        else:
            trainer, losses = _train(args, est, source, holdout, None)
    if getattr(source, "zero_based", None) is not None:     # (the file records it, for predict and -i)
        est.zero_based = source.zero_based
    trained = time.perf_counter()
    if not args.quiet and trainer is not None:      # (a parallel run's table is a line per round)
        summary(trainer.table, trainer.stats, kernel_loss(est.loss), est.classes,
                est.learner.multinomial, trainer.features, len(losses), holdout)
    test = source.test_chunks()
    test_lines = [] if test is None else _evaluate(est, test, source.test_name)
    tested = time.perf_counter()
    _write_outputs(args, est, trainer, losses, source)
    if args.quiet:          # the final figures only: those scripts read
        final = ([holdout_line(holdout)] if holdout is not None else []) + test_lines
        if final:
            print("\n".join(final))
        return 0
    rows, passes = losses[0][1], len(losses)
    read = rows if holdout is None else trainer.pass_seen
    held = "" if holdout is None else f", {read - rows} held out per pass"
    report = [f"data: {source.name} ({read} rows x {est.learner.n_features} features, "
              f"{passes} pass{'es' if passes > 1 else ''}{held})",
              f"model: {_describe(est)}",
              f"progressive loss: {decimal(losses[0][0])} ({est.loss} loss, first pass)"]
    if passes > 1:
        report.append(f"last pass mean loss: {decimal(losses[-1][0])} (pass {passes})")
    if holdout is not None:
        report.append(holdout_line(holdout))
    report += test_lines
    report += [f"non-zero weights: {est.learner.count_nonzero()} of "
               f"{est.learner.n_features * est.learner.n_outputs}",
               f"time: {tested - started:.2f} s (train {trained - started:.2f} s = "
               f"{rows * passes / max(trained - started, 1e-9):,.0f} rows/s, "
               f"test {tested - trained:.2f} s)"]
    saved = (("model", args.model), ("readable model", args.readable_model), ("invert hash", args.invert_hash),
             ("predictions", args.predictions))
    report += [f"{what} saved: {path}" for what, path in saved if path]
    print("\n".join(report))
    return 0


def _train(args, est, source, holdout, predictions):
    """The passes over ``source`` (fewer if the holdout stops them): (the trainer,
    each pass's (mean progressive loss, rows))."""
    with progress_bar(source.rows * args.passes if source.rows else None, args.quiet) as bar:
        table = Table(None if args.quiet else bar.write_line, predicts(est), args.progress or 2.0)
        trainer = Trainer(est, source, table, bar, holdout, predictions)
        if est.progress is not None:
            trainer.go_on_from(est.progress)
        elif holdout is None:           # (the preview's lines are a run's without holdout)
            source.show_first_lines(est, trainer.table, args.quiet)
        losses = []
        for _ in range(args.passes):
            losses.append(trainer.one_pass(source.chunks()))
            if holdout is not None and trainer.stops():
                break
    return trainer, losses


def _write_outputs(args, est, trainer, losses, source):
    """The model file (-f), the readable model and the invert hash, atomically; a
    failed write names its option."""
    if args.model:
        progress = None if trainer is None else trainer.progress()
        mean = losses[-1][0] if len(losses) > 1 or progress is None else progress["loss_sum"] / max(
            progress["examples"], 1)
        with naming(args.model, f"--model {args.model}"):
            est.save(args.model, len(losses), mean, progress)
    gathered = getattr(source, "names", None) or FeatureNames()      # (a cluster's source keeps none)
    outputs = [(option, path, names) for option, path, names in (
        ("--readable-model", args.readable_model, None), ("--invert-hash", args.invert_hash, gathered)) if path]
    options = options_line(_parser_actions(), model_options(est)) if outputs else None    # (one parser for both)
    for option, path, names in outputs:
        lines = readable_lines(est, options, names)
        with naming(path, f"{option} {path}"):
            atomic_write(path, lambda f: f.writelines(line.encode() for line in lines))


def model_options(est):
    """{option's dest: value}: the values of train's options that rebuild the
    learner of the StreamModel ``est`` on the same data (the readable model's
    ``options:`` line, `options_line`): the estimator's (`ESTIMATOR_OPTIONS`), the
    kind of model, its classes, and how the data were read where that sets the
    width: VW text's bits and interactions, or --n-features when the width was fixed."""
    values = {option: est.params.get(param) for option, param in ESTIMATOR_OPTIONS.items()}
    values.update(regression=est.regression, no_intercept=not est.params.get("fit_intercept", True),
                  classes=None if est.regression else list(est.classes))
    if est.input is not None and est.input["format"] == "vw":
        values.update(format="vw", hash_bits=est.input["bits"], interactions=list(est.input["interactions"]))
    elif est.input is None and not est.params.get("grow_features") and est.params.get("hash_bits") is None \
            and est.params.get("groups") is None and est.params.get("group_weights") is None:
        values["n_features"] = est.learner.n_features
    return values


def _parser_actions():
    """train's options, as its parser reads them."""
    parser = argparse.ArgumentParser(add_help=False)
    add_arguments(parser)
    return parser._actions


def model_of(args):
    """The StreamModel the options describe (their estimator parameters, the
    --groups and --group-weights files read), checked before any data is read.
    A model whose width grows with the data (no --n-features, --groups or
    --hash-bits) is saved with grow_features=True, so that
    ``load_model(path).partial_fit`` on wider rows grows it as train -i does."""
    defaults = REGRESSOR_DEFAULTS if args.regression else CLASSIFIER_DEFAULTS
    params = {**defaults, **{param: getattr(args, option) for option, param in ESTIMATOR_OPTIONS.items()
                             if getattr(args, option, None) is not None}}
    if args.regression:
        params.pop("multi_class", None)
    if args.data and is_vw(args):
        params["hash_bits"] = None          # VW text's columns are VW's hashes already
    params["fit_intercept"] = not args.no_intercept
    params["grow_features"] = bool(args.data) and not (args.n_features or args.groups or args.group_weights
                                                       or args.hash_bits is not None or args.format == "vw")
    if args.groups:
        params["groups"] = read_vector(args.groups, "--groups", int)
    if args.group_weights:
        params["group_weights"] = read_vector(args.group_weights, "--group-weights", float)
    terms = args.quadratic or args.cubic or args.interactions
    if args.data and args.format == "libsvm" and terms:
        if not args.groups:
            raise ValueError("-q, --cubic and --interactions over LIBSVM data cross the groups of --groups "
                             "FILE (-q 0,1): give --groups, or data in VW's text format (--format vw)")
        terms = terms_of("libsvm", args.quadratic, args.cubic, args.interactions)
        bits = DEFAULT_BITS if args.hash_bits is None else args.hash_bits
        args.crossing = GroupCrossing(params["groups"], terms, bits)
        params["groups"], params["hash_bits"] = args.crossing.model_groups(), None
        try:
            params["group_weights"] = args.crossing.model_weights(params["group_weights"])
        except ValueError as e:
            raise ValueError(f"--group-weights {args.group_weights} for --groups {args.groups}: {e}") from None
    try:
        est = StreamModel(params, args.regression, args.classes, args.quiet)
    except ValueError as e:     # the estimator's parameters, checked: the options'
        raise OptionError(str(e)) from None
    if args.data and args.format == "vw":       # (the file records the reading, for predict and -i)
        read = reading(args)
        est.input = record("vw", read["terms"], read["vw_bits"], read["selection"])
    elif getattr(args, "crossing", None) is not None:
        est.input = record("libsvm", args.crossing.terms, args.crossing.bits)
    return est


def _source(args, est):
    """The training data the options name: the files, or the embedded default."""
    if not args.data:
        if args.initial_model:
            raise ValueError("-i continues a model on data: give the training files (DATA or -d)")
        return DefaultSource(DEFAULT_ROWS if args.rows is None else args.rows, reading(args), args.n_features,
                             args.seed, args.test)
    n_features, origin = model_width(est) if args.initial_model else _fixed_width(args, est.params)
    return FileSource(args.data, reading(args), args.passes, est.params.get("hash_bits"), args.test, n_features,
                      origin, args.groups or args.group_weights)


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
        raise argparse.ArgumentTypeError(f"labels are numbers, as 1,2,3 or 1 2 3, not {text!r} (--classes takes "
                                         f"the words up to the next option: give DATA before it, or "
                                         f"with -d)") from None


def _check_options(args):
    """Refuse option values out of range or that contradict one another, by name
    (OptionError: exit status 2), then a --test of the other format and outputs that
    could not be written (`check_output`)."""
    try:
        _check_values(args)
    except ValueError as e:
        raise OptionError(str(e)) from None
    check_test_content(args)
    inputs = [path for path in args.data + [args.test, args.groups, args.group_weights, args.initial_model]
              if path not in (None, STDIN)]
    outputs = [(option, getattr(args, name)) for option, name in (
        ("--model", "model"), ("--readable-model", "readable_model"), ("--invert-hash", "invert_hash"),
        ("--predictions", "predictions")) if getattr(args, name)]
    for option, path in outputs:
        read = [p for p in inputs if not (option == "--model" and p == args.initial_model)]  # (VW's -i m -f m)
        check_output(path, option, read)
    check_distinct(outputs)


def _check_values(args):
    """`_check_options`' checks of the options' values alone."""
    for name, high in _INT_LIMITS.items():
        value, option = getattr(args, name), "--" + name.replace("_", "-")
        if value is not None and value > high:
            raise ValueError(f"{option} must be at most {high}, not {value}")
    if args.rows is not None and args.rows < 2:
        raise ValueError(f"--rows must be at least 2 (one to train, one to test), not {args.rows}")
    if args.rows is not None and args.data:
        raise ValueError("--rows sets the size of the embedded data, which DATA replaces: drop it (to train on "
                         "a file's first N rows: head -n N FILE | fastprox train -)")
    if args.scheduler and args.data and is_vw(args):
        raise ValueError("--scheduler reads LIBSVM files; VW text trains on this machine: drop --scheduler")
    if args.scheduler and (args.quadratic or args.cubic or args.interactions):
        raise ValueError("-q, --cubic and --interactions cross groups on this machine: drop --scheduler")
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
    crossing = args.groups and (args.quadratic or args.cubic or args.interactions)
    if args.hash_bits is not None and (args.n_features is not None or args.groups and not crossing):
        raise ValueError("--hash-bits sets the width (2^B features): drop --n-features and --groups (with "
                         "--groups, --hash-bits is the bits of the crossed groups' columns, -q 0,1)")
    check_workflow(args)


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
    metrics = Metrics(est)
    for X, y, where in chunks:
        metrics.add(X.shape[1], y, est.scores(X, where), getattr(X, "weights", None))
    if metrics.unknown:
        raise ValueError(f"--test {name} has labels {sorted(metrics.unknown)} the training data did "
                         f"not; the classes are {list(est.classes)}")
    if not metrics.rows:
        raise ValueError(f"--test {name}: no rows")
    return [f"test {line}" for line in metric_lines(metrics, name)]


def _fixed_width(args, params):
    """(the model's width when the options fix it, else None: it grows; what sets
    the width, for messages about its size) for the files DATA."""
    if args.format == "vw":
        bits = reading(args)["vw_bits"]
        return 1 << bits, f"--hash-bits {bits} (VW text)"
    groups, weights = params["groups"], params["group_weights"]
    if args.hash_bits is not None and groups is None:   # (with --groups: the crossed groups' bits)
        return None, f"--hash-bits {args.hash_bits}"
    if groups is not None or weights is not None:
        option, n = ("--groups", len(groups)) if groups is not None else ("--group-weights", len(weights))
        if args.n_features is not None and args.n_features != n:
            raise ValueError(f"{option} {args.groups or args.group_weights}: {n} group ids or weights "
                             f"for --n-features {args.n_features}; give one per feature")
        return n, f"{option} (one entry per feature)"
    if args.n_features is not None:
        return args.n_features, "--n-features"
    return None, f"the largest feature index in {', '.join(map(source_name, args.data))}"
