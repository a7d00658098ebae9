"""Predict with a saved model: a line per row of LIBSVM or VW text.

Lines hold the predicted label (classifiers, written as in LIBSVM files) or
value (regressors, shortest exact float), or with ``--raw`` a binary
classifier's margin (its raw score, as VW's -t -p writes it without --binary
or --link) and a multiclass model's margin of each class, ``class:margin``
separated by spaces in the order of its classes (as VW's -r with --oaa), then
the row's tag where VW text gives it one ('tag|...), as VW's -t -p writes it. With ``--proba`` the output is
LIBSVM's ``svm-predict -b 1`` format: a first line ``labels C1 C2 ...`` (the
model's classes), then per row the predicted label and the probability of
each class in that order. ``--out`` is written to a temporary file and
renamed when complete (a symbolic link's target is replaced, a device or a
FIFO written directly: fastprox._writes); an ``--out`` that is the model or the
data, or that cannot be written, is refused before any prediction.

The file's labels score the model, on standard error: its mean loss (the
loss it was trained with), accuracy or RMSE, log-loss (models with
probabilities) and AUC. One-line warnings name features beyond the model's
width (their weights are zero) and labels the model does not know (those
rows are left out of the metrics; a file of placeholder labels gives none).
A model trained with --hash-bits B hashes the file's ids as it was trained (its
file records the hashing); --hash-bits, if given, must be that B. (Model files
written before fastprox recorded the hashing need the --hash-bits they were
trained with.) VW text (--format vw, or a '|' in its first line) is hashed into the
model's 2^B columns with the model's interactions: a model file of fastprox train
records how its data were read (the format, -q, --cubic and --interactions, -b) and
the file is read that way; a reading option given must be the model's, and data of
the other format are refused (--format set to the model's reads them as told). Model
files written before that record take the -q, --cubic and --interactions given. Lines
of VW text without a label are predicted, not scored.
"""
import sys

from .._libsvm import format_predictions
from .._numpy import np
from .._writes import atomic_write, check_output, naming
from ..libsvm import STDIN, source_name
from ..stream.files import CHUNK_ROWS, check_readable, labelled_chunks
from ..stream.labels import format_label, label_texts
from ..stream.model import StreamModel
from .metrics import Metrics, metric_lines
from .options import OptionError, add_reader_options, path, reading, take_indexing, take_recorded


def add_arguments(parser):
    parser.add_argument("model", metavar="MODEL", type=path, help="a model file written by 'fastprox train --model'")
    parser.add_argument("data", metavar="DATA", type=path, help="LIBSVM file to predict; - for standard input")
    parser.add_argument("-p", "--out", metavar="FILE", type=path, help="write here (VW's -p; default: standard output)")
    parser.add_argument("--proba", action="store_true", help="also write class probabilities (default: off)")
    parser.add_argument("--raw", action="store_true",
                        help="write each row's margin instead of its label: a binary classifier's raw score "
                             "(scikit-learn's decision_function; what VW's -t -p writes without --binary or "
                             "--link); a multiclass model's CLASS:MARGIN for each class, as VW's -r with --oaa "
                             "(default: off)")
    parser.add_argument("--chunk-rows", type=int, default=CHUNK_ROWS, help="rows predicted at a time")
    add_reader_options(parser, "hash feature ids into 2^B buckets, as the model was trained "
                               "(default: the model's own hashing, which its file records)")
    parser.add_argument("--quiet", action="store_true",
                        help="no metrics or warnings on standard error (default: off)")


def run(args):
    check_readable([args.data])
    if args.out is not None:
        check_output(args.out, "-p/--out", [args.model] + [args.data] * (args.data != STDIN))
    if args.chunk_rows < 1:
        raise OptionError(f"--chunk-rows must be at least 1, not {args.chunk_rows}")
    est = StreamModel.from_file(args.model)
    if args.raw and args.proba:
        raise OptionError("--raw writes margins, --proba probabilities: give --proba or --raw, not both")
    if args.proba and not est.has_proba():
        name = "ProxRegressor" if est.regression else "ProxClassifier"
        raise OptionError(f"--proba needs a classifier with loss 'log' or 'modified_huber'; "
                         f"{args.model} holds a {name}(loss={est.loss!r})")
    take_recorded(args, est, args.model)
    take_indexing(args, est.zero_based)
    read = reading(args)
    if read.get("format") == "vw":      # VW's hashes are the columns: the model's width gives -b
        bits = est.n_features.bit_length() - 1
        if est.n_features != 1 << bits:
            raise ValueError(f"{args.model} has {est.n_features} features, not 2^B: it was not trained on VW "
                             f"text; predict VW text with a model trained on VW text")
        if args.hash_bits not in (None, bits):
            raise OptionError(f"--hash-bits {args.hash_bits}, but {args.model} has 2^{bits} features (trained with "
                             f"--hash-bits {bits}): drop --hash-bits, or give {bits}")
        read.update(vw_bits=bits, unlabelled=True)
        bits = None
    else:
        bits = _hashing(est, args.hash_bits, args.model)
    metrics = Metrics(est)
    chunks = labelled_chunks(args.data, bits=bits, **read)
    lines = _lines(est, chunks, metrics, args.proba, args.raw)
    if args.out is None:
        for text in lines:
            sys.stdout.write(text)
    else:
        with naming(args.out, f"-p/--out {args.out}"):
            atomic_write(args.out, lambda f: f.writelines(text.encode() for text in lines))
    if not args.quiet:
        _report(est, metrics, source_name(args.data))
    return 0


def _hashing(est, bits, model):
    """The hash bits the data's ids take: the model's (its file records them), which
    --hash-bits (``bits``) must agree with; a model file that records none takes
    --hash-bits if its width is 2^bits (files written before the hashing was
    recorded)."""
    if est.hash_bits is not None:
        if bits is not None and bits != est.hash_bits:
            raise OptionError(f"--hash-bits {bits}, but {model} was trained with --hash-bits {est.hash_bits} "
                             f"(which predict applies): drop --hash-bits, or give {est.hash_bits}")
        return est.hash_bits
    if bits is not None and est.n_features != 1 << bits:
        raise OptionError(f"--hash-bits {bits} gives {1 << bits} features, but {model} has "
                         f"{est.n_features} and was trained without hashing: drop --hash-bits")
    return bits


def _lines(est, chunks, metrics, proba, raw=False):
    """The output text, one chunk of rows at a time, each chunk scored by ``metrics``.
    Without ``--proba``, a chunk's lines in one call of `format_predictions` (as train's
    -p writes them): the class of the largest output, a binary model's margin m taken
    as the two outputs (0, m), the larger class where m > 0 as `predictions` decides
    (``raw``: the margin itself; a multiclass model's ``class:margin`` of each
    class); a regressor's value; then the row's tag."""
    fmt = repr if est.regression else format_label
    if proba:
        yield "labels " + " ".join(map(format_label, est.classes)) + "\n"
    labels = None if est.regression or raw and len(est.classes) == 2 else label_texts(est.classes)
    for X, y, where in chunks:
        scores = est.scores(X, where)
        predicted = metrics.add(X.shape[1], y, scores, getattr(X, "weights", None))
        if proba:
            rows = est.proba_of(scores).tolist()
            yield "".join(f"{fmt(p)} {' '.join(map(repr, r))}\n" for p, r in zip(predicted.tolist(), rows))
            continue
        if labels is not None and scores.ndim == 1:
            scores = np.column_stack((np.zeros(len(scores)), scores))
        outputs = 1 if scores.ndim == 1 else scores.shape[1]
        text = format_predictions(np.ascontiguousarray(scores, dtype=np.float64).reshape(-1), outputs, labels,
                                  getattr(X, "tags", None), 0, raw)
        yield text.decode()


def _report(est, metrics, name):
    """The warnings and the metrics, on standard error."""
    if metrics.width > est.n_features:
        print(f"fastprox: warning: {name} has features beyond the model's {est.n_features} (up to "
              f"{metrics.width}); they weigh 0", file=sys.stderr)
    if metrics.unknown:
        shown = ", ".join(map(format_label, sorted(metrics.unknown)[:5]))
        more = ", ..." if len(metrics.unknown) > 5 else ""
        print(f"fastprox: warning: {name} has {sum(metrics.unknown.values())} rows with labels the "
              f"model does not know ({shown}{more}; its classes: "
              f"{', '.join(map(format_label, est.classes))}); they are left out of the metrics",
              file=sys.stderr)
    if metrics.rows:
        print("\n".join(metric_lines(metrics, name)), file=sys.stderr)
