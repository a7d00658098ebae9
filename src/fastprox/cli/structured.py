"""What the structured commands share (``fastprox tag``; a parser's command): the
learner's options, the progressive validation table of structured learners, and
the scores of labelled items.

The table is Vowpal Wabbit's, as `fastprox train` prints it on standard error
(fastprox.stream.progress), with an example being a whole structure (a sentence): a
line at example counts 1, 2, 4, 8, ... with the mean progressive loss so far and
since the line before (each example's loss at the model before its step), the
example counter, and the current example's items, how many of them the model got
wrong before its step (plain decoding) and its stored values. Passes continue the
count, as VW's do.
"""
import sys

from ..stream.progress import decimal
from .options import OptionError, path, seed

#: The table's columns: header lines and the width of each field.
_HEADER = (("average", "since", "example", "current", "current", "current"),
           ("loss", "last", "counter", "items", "errors", "features"))
_WIDTHS = (10, 10, 12, 10, 10, 9)


def add_learner_options(parser, estimator, defaults, losses, intercept=True):
    """The learner's options (``defaults``: those of the estimator class named
    ``estimator``, as a dict) in a group of their own, --no-intercept unless
    ``intercept`` is False (a parser's arcs have none); `learner_params` gives them
    back as the estimator's parameters."""
    from .._registry import PENALTIES, SCHEDULES, UPDATES
    group = parser.add_argument_group(f"learner options (see help(fastprox.structured.{estimator}))")
    group.add_argument("--loss", choices=losses, default=defaults["loss"], help="the structured loss")
    group.add_argument("--update", choices=UPDATES, default=defaults["update"], help="update rule")
    group.add_argument("--schedule", choices=[s for s in SCHEDULES if s != "normalized"],
                       default=defaults["schedule"], help="step schedule")
    group.add_argument("--penalty", choices=PENALTIES, default=defaults["penalty"],
                       help="penalty on the feature weights; the group penalties take the feature "
                            "templates as groups")
    for name, meaning in (("alpha", "penalty strength"), ("l1-ratio", "elastic net's l1 share"),
                          ("eta0", "initial step size"), ("delta", "AdaGrad's delta"),
                          ("rda-rho", "enhanced l1-RDA's rho"), ("berhu-gamma", "Berhu's gamma")):
        group.add_argument(f"--{name}", type=float, default=defaults[name.replace("-", "_")], help=meaning)
    group.add_argument("--passes", type=int, default=defaults["max_iter"], help="passes over the training data")
    group.add_argument("--no-shuffle", action="store_true", help="visit the examples in the files' order")
    group.add_argument("--seed", type=seed, default=0, help="seed of the passes' shuffling")
    group.add_argument("--average", type=int, nargs="?", const=1, default=defaults["average"], metavar="A",
                       help="keep the averaged iterate from step A on (a step is an example; alone: 1; 0: "
                            "off) and save and test it, as the estimator's average"
                            + ("; default: 1, from the first example" if defaults["average"] is True else ""))
    if intercept:
        group.add_argument("--no-intercept", action="store_true", help="fit no label biases")


def add_train_action(parser, doc, noun, what):
    """The sub-parsers of a structured command's actions, and its ``train`` action
    (of a ``noun``) with its training files (``what``) given; (actions, train)."""
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True, parser_class=type(parser))
    train = actions.add_parser("train", help=f"train a {noun}", description=doc,
                               formatter_class=parser.formatter_class)
    train.add_argument("data", nargs="+", metavar="FILE", type=path, help=what)
    return actions, train


def add_predict_action(actions, parser, doc, command, run, what):
    """The ``predict`` action of a structured command: MODEL FILE [--out PRED]
    [--quiet]; ``what`` names the file to predict on. Returns the action's parser
    (for options of the command's own)."""
    predict = actions.add_parser("predict", help=f"{command} a file with a model", description=doc,
                                 formatter_class=parser.formatter_class)
    predict.add_argument("model", metavar="MODEL", type=path, help=f"a model written by 'fastprox {command} train --model'")
    predict.add_argument("data", metavar="FILE", type=path, help=what)
    predict.add_argument("--out", metavar="PRED", default="-", type=path, help="write here (- : standard output)")
    predict.add_argument("--quiet", action="store_true", help="no scores on standard error")
    predict.set_defaults(**{f"{command}_run": run})
    return predict


#: The learner's options (their ``args`` names) -> the estimator's parameters, as
#: `learner_params` passes them and the estimator's errors are reworded
#: (fastprox.cli.errors), with the commands' options read by their feature extractors.
LEARNER_OPTIONS = {"loss": "loss", "update": "update", "schedule": "schedule", "penalty": "penalty",
                   "alpha": "alpha", "l1_ratio": "l1_ratio", "eta0": "eta0", "delta": "delta",
                   "rda_rho": "rda_rho", "berhu_gamma": "berhu_gamma", "passes": "max_iter",
                   "seed": "random_state", "average": "average", "bits": "bits", "min_count": "min_count",
                   "columns": "columns"}
#: The options of LEARNER_OPTIONS that the readers and feature extractors take, not the learner.
_EXTRACTOR_OPTIONS = ("bits", "min_count", "columns")


def learner_params(args, groups=lambda: None):
    """The estimator's parameters from the learner's options; ``groups()`` gives
    the features' groups, called for a group penalty only (a hashed width's
    groups are one int64 a column: 5 GB at 2^30, built for nothing otherwise)."""
    from .._registry import PENALTIES
    group_penalty = PENALTIES[args.penalty].family == "group"
    return dict({param: getattr(args, option) for option, param in LEARNER_OPTIONS.items()
                 if option not in _EXTRACTOR_OPTIONS},
                shuffle=not args.no_shuffle, groups=groups() if group_penalty else None,
                **({"fit_intercept": not args.no_intercept} if "no_intercept" in args else {}))


def check_learner(args, estimator, features=lambda: None, **params):
    """Refuse (OptionError: exit status 2), before any data is read, the options that
    the ``estimator`` class would refuse once given data: of its learner's options
    (`learner_params`, groups left out) and ``params``, its own checks
    (``check_params``) and its rule's (a StructuredLearner of one feature, made for
    nothing else); then ``features()``, the feature extractor's checks."""
    from ..structured._estimator import RULE_PARAMS
    from ..structured.learner import StructuredLearner
    try:
        model = estimator(**learner_params(args), **params)
        model.check_params()
        StructuredLearner(1, 2, **{key: getattr(model, key) for key in RULE_PARAMS})
        features()
    except ValueError as e:
        raise OptionError(str(e)) from None


class StructuredTable:
    """The progressive validation table of a structured learner (the module's
    docstring), its lines given to ``write`` (none when ``write`` is None)."""

    def __init__(self, write):
        self.write = write
        self.examples, self.items, self.total = 0, 0, 0.0
        self.next = 1 if write else float("inf")
        self.last_examples, self.last_total = 0, 0.0

    def report(self, order, losses, errors, starts, indptr):
        """A training call's report of a chunk of examples (SequenceTagger's): their
        ids ``order``, losses and errors; ``starts`` their first items, ``indptr``
        the items' first values."""
        if self.examples + len(order) < self.next:       # no line in this chunk
            self.examples += len(order)
            self.total += float(losses.sum())
            self.items += int(starts[order + 1].sum() - starts[order].sum())
            return
        for r, loss, wrong in zip(order, losses, errors):
            first, last = starts[r], starts[r + 1]
            self.examples += 1
            self.items += int(last - first)
            self.total += float(loss)
            if self.examples == self.next:
                self.line(int(last - first), int(wrong), int(indptr[last] - indptr[first]))

    def line(self, items, errors, features):
        if not self.last_examples:
            for words in _HEADER:
                self.write(" ".join(w.ljust(n) for w, n in zip(words, _WIDTHS)).rstrip())
        since = (self.total - self.last_total) / (self.examples - self.last_examples)
        fields = (decimal(self.total / self.examples), decimal(since), str(self.examples), str(items),
                  str(errors), str(features))
        self.write(" ".join(f.ljust(n) for f, n in zip(fields, _WIDTHS)).rstrip())
        self.last_examples, self.last_total = self.examples, self.total
        self.next = 2 * self.examples

    def summary(self, n_features, seconds):
        """VW's closing lines."""
        self.write(f"\nfinished run\nnumber of examples = {self.examples}\nnumber of items = {self.items}\n"
                   f"average loss = {decimal(self.total / max(self.examples, 1))}\n"
                   f"total feature number = {n_features}\ntraining time = {seconds:.2f} s")


def stderr_line(text):
    print(text, file=sys.stderr, flush=True)


def is_iob(labels):
    """Whether every label is an IOB chunk tag (O, or B-TYPE / I-TYPE; also IOBES's
    E- and S-), so that conlleval's chunk scores mean something."""
    return len(labels) > 0 and all(label == "O" or (len(label) > 2 and label[1] == "-" and label[0] in "BIES")
                                   for label in map(str, labels))


def score_lines(y_true, y_pred, lengths, what):
    """The scores of predictions of labelled items: per-item accuracy, and conlleval's
    chunk precision, recall and F1 for IOB tags; lines to print."""
    import numpy as np
    from ..structured.metrics import chunk_scores
    y_true, y_pred = np.asarray(y_true).astype(str), np.asarray(y_pred).astype(str)
    accuracy = f"{100 * float(np.mean(y_true == y_pred)):.2f}%" if len(y_true) else "n/a"
    lines = [f"{what}: {len(lengths)} sequences, {len(y_true)} items, per-item accuracy {accuracy}"]
    if is_iob(np.unique(y_true)):
        s = chunk_scores(y_true, y_pred, lengths)
        lines.append(f"{what}: chunks (conlleval): precision {100 * s.precision:.2f}%, recall "
                     f"{100 * s.recall:.2f}%, F1 {100 * s.f1:.2f} ({s.found_true} chunks, {s.found_predicted} "
                     f"found, {s.correct} correct)")
    return lines
