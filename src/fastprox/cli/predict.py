"""Predict with a saved model, streaming a LIBSVM file: one prediction per line.

Lines hold the predicted label (classifiers, written as in LIBSVM files) or
value (regressors, shortest exact float). With ``--proba`` the output is
LIBSVM's ``svm-predict -b 1`` format: a first line ``labels C1 C2 ...`` (the
model's classes), then per row the predicted label and the probability of
each class in that order. The file's labels are read but not used; features
beyond the model's width are ignored (their weights are zero). ``--out`` is
written to a temporary file and renamed when complete.
"""
import sys

from ..libsvm import _atomic_write
from .info import format_label
from .stream import CHUNK_ROWS, check_readable, labelled_chunks
from .train import StreamModel


def add_arguments(parser):
    parser.add_argument("model", metavar="MODEL", help="a model file written by 'fastprox train --model'")
    parser.add_argument("data", metavar="DATA",
                        help="LIBSVM file to predict (labels are ignored); - for standard input")
    parser.add_argument("--out", metavar="FILE", help="write here instead of to standard output")
    parser.add_argument("--proba", action="store_true", help="also write class probabilities")
    parser.add_argument("--chunk-rows", type=int, default=CHUNK_ROWS,
                        help=f"rows predicted at a time (default {CHUNK_ROWS})")


def run(args):
    check_readable([args.data])
    est = StreamModel.from_file(args.model)
    if args.proba and not est.has_proba():
        name = "ProxRegressor" if est.regression else "ProxClassifier"
        raise ValueError(f"--proba needs a classifier with loss 'log' or 'modified_huber'; "
                         f"{args.model} holds a {name}(loss={est.loss!r})")
    lines = _lines(est, args.data, args.chunk_rows, args.proba)
    if args.out is None:
        for text in lines:
            sys.stdout.write(text)
    else:
        _atomic_write(args.out, lambda f: f.writelines(text.encode() for text in lines))
    return 0


def _lines(est, path, chunk_rows, proba):
    """The output text, one chunk of rows at a time."""
    fmt = repr if est.regression else format_label
    if proba:
        yield "labels " + " ".join(map(format_label, est.classes)) + "\n"
    for X, _ in labelled_chunks(path, chunk_rows):
        predicted = est.predict(X).tolist()
        if proba:
            rows = est.predict_proba(X).tolist()
            yield "".join(f"{fmt(p)} {' '.join(map(repr, r))}\n" for p, r in zip(predicted, rows))
        else:
            yield "".join(f"{fmt(p)}\n" for p in predicted)
