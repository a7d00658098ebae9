"""Vowpal Wabbit's training workflow in `fastprox train`: continuing a saved model
(``-i``), several passes with a holdout (``--passes``, ``--holdout-off``,
``--holdout-period``, ``--holdout-after``, ``--early-terminate``), the model as text
(``--readable-model``, ``--invert-hash``), the predictions made while training
(``-p``) and the table's interval (``-P``).

``-i MODEL`` continues the model of a file that ``fastprox train`` (or
``save_model``) wrote as one run over both streams would have gone on, bit for
bit: its kernel, classes and hashing as saved, its width growing as the first
run's did, and (files of ``fastprox train``) the progressive table's counters,
the features and the label statistics, as VW's saved state continues its
table. The estimator options not given are the model's; one given that
differs from it is refused, naming both values: the kernel's state holds sums
taken with the model's own.
"""
import argparse
import math

from .._core import CLASSIFIER_DEFAULTS, REGRESSOR_DEFAULTS
from .._validation import kernel_loss
from ..stream.holdout import EARLY_TERMINATE, HOLDOUT_PERIOD, Holdout
from ..stream.model import StreamModel
from ..stream.sources import MODEL_WIDTH
from ..stream.progress import decimal
from .options import OptionError, path, take_indexing, take_recorded


def add_workflow_options(parser):
    """The options of VW's workflow (the module's docstring)."""
    parser.add_argument("-i", "--initial-model", metavar="MODEL", type=path,
                        help="continue training this model file (written by 'fastprox train --model' "
                             "or save_model) as one run over both data would; the options not given "
                             "are the model's (default: a new model)")
    parser.add_argument("--passes", type=int, default=1,
                        help="passes over the data; from 2 on, every --holdout-period-th example is "
                             "held out of training and scores each pass (VW's holdout; not on a cluster, "
                             "--scheduler)")
    parser.add_argument("--holdout-off", action="store_true",
                        help="with --passes: train on every example, no holdout (default: off)")
    parser.add_argument("--holdout-period", type=int, metavar="K",
                        help=f"with --passes: hold out the K-th, 2K-th, ... example of each pass "
                             f"(default: {HOLDOUT_PERIOD})")
    parser.add_argument("--holdout-after", type=int, metavar="N",
                        help="with --passes: hold out the examples after the first N of each pass "
                             "instead of every K-th (VW's --holdout_after; default: off)")
    parser.add_argument("--early-terminate", type=int, metavar="K",
                        help=f"with --passes: stop once the holdout loss has not improved for K passes; "
                             f"the model is then the best pass's (default: {EARLY_TERMINATE})")
    parser.add_argument("--readable-model", metavar="FILE", type=path,
                        help="write the model as text: a line COLUMN:WEIGHT per non-zero weight "
                             "(default: not written)")
    parser.add_argument("--invert-hash", metavar="FILE", type=path,
                        help="as --readable-model, with the features' names as the input wrote them: "
                             "NAME:COLUMN:WEIGHT (default: not written)")
    parser.add_argument("-p", "--predictions", metavar="FILE", type=path,
                        help="write each example's prediction made before learning from it, a line "
                             "per example and pass, as VW's -p: a binary classifier's raw score (the "
                             "margin, positive for the larger class), a regressor's value, a "
                             "multiclass model's class, then the example's tag (default: not written)")
    parser.add_argument("-P", "--progress", type=_interval, metavar="N",
                        help="the table's lines: an integer N every N examples, a number with a dot "
                             "multiplies the count of the last line (default: 2.0: 1, 2, 4, 8, ...)")


def _interval(text):
    """-P: an integer >= 1 (additive) or a number with a dot > 1 (multiplicative), as VW's."""
    try:
        value = float(text) if "." in text or "e" in text.lower() else int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be an integer (every N examples) or a number with a dot "
                                         f"(a factor), not {text!r}") from None
    if isinstance(value, int) and value < 1:
        raise argparse.ArgumentTypeError(f"an integer interval must be at least 1, not {value}")
    if isinstance(value, float) and not (value > 1 and math.isfinite(value)):
        raise argparse.ArgumentTypeError(f"a factor must be a number above 1, such as 2.0, not {text}")
    return value


def check_workflow(args):
    """Refuse workflow options out of range or given without what they act on."""
    for name in ("holdout_period", "holdout_after", "early_terminate"):
        value = getattr(args, name)
        if value is not None and value < 1:
            raise ValueError(f"--{name.replace('_', '-')} must be at least 1, not {value}")
    if args.holdout_period == 1:
        raise ValueError("--holdout-period 1 holds out every example, leaving none to train on: give K >= 2 "
                         "(every K-th held out), or --holdout-off")
    holdout = ("holdout_off", "holdout_period", "holdout_after", "early_terminate")
    if args.holdout_off and (args.holdout_period or args.holdout_after or args.early_terminate):
        raise ValueError("--holdout-off trains on every example: drop --holdout-period, --holdout-after and "
                         "--early-terminate")
    if args.holdout_period and args.holdout_after:
        raise ValueError("--holdout-after N holds out the examples after the first N of each pass, "
                         "--holdout-period K every K-th: give one of them")
    if args.passes == 1 and any(getattr(args, name) not in (None, False) for name in holdout):
        raise ValueError("the holdout is for several passes: give --passes N (N >= 2), or drop "
                         "--holdout-off, --holdout-period, --holdout-after and --early-terminate")
    if args.scheduler and any(getattr(args, name) for name in ("initial_model", "predictions", "invert_hash")):
        raise ValueError("-i, --predictions and --invert-hash train on this machine: drop --scheduler")


def holdout_of(args):
    """The run's `Holdout`, or None (one pass, or --holdout-off)."""
    if args.passes < 2 or args.holdout_off:
        return None
    return Holdout(args.holdout_period or HOLDOUT_PERIOD, args.early_terminate or EARLY_TERMINATE,
                   args.holdout_after, args.passes)


def initial_model(args, estimator_options):
    """The StreamModel of -i's file, the options given checked against it: one that
    differs raises OptionError naming the option, its value and the model's."""
    path = args.initial_model
    est = StreamModel.from_file(path)
    est.quiet = args.quiet
    take_recorded(args, est, f"-i {path}")     # (VW text's --hash-bits is the recorded -b)
    take_indexing(args, est.zero_based)
    defaults = REGRESSOR_DEFAULTS if est.regression else CLASSIFIER_DEFAULTS
    est.params = {**{key: est.params[key] for key in defaults if key in est.params}, **est.params}
    differ = []
    if args.regression and not est.regression:
        differ.append("--regression (the model is a ProxClassifier)")
    args.regression = est.regression
    for option, param in estimator_options.items():
        given = getattr(args, option, None)
        if given is None or param not in est.params or (param == "hash_bits" and est.input is not None):
            continue
        saved = est.params[param]
        if param == "loss" and kernel_loss(given) == kernel_loss(saved):
            continue
        if given != saved:
            differ.append(f"--{option.replace('_', '-')} {given} (the model's: {saved})")
    if args.no_intercept and est.params["fit_intercept"]:
        differ.append("--no-intercept (the model fits an intercept)")
    if args.classes is not None and list(args.classes) != list(est.classes):
        differ.append(f"--classes {','.join(map(_label, args.classes))} (the model's: "
                      f"{','.join(map(_label, est.classes))})")
    if args.n_features is not None and args.n_features != est.n_features:
        differ.append(f"--n-features {args.n_features} (the model has {est.n_features})")
    if args.groups or args.group_weights:
        differ.append("--groups/--group-weights (the model keeps its own)")
    if differ:
        raise OptionError(f"-i {path}: " + "; ".join(differ) + ": drop these options to continue the "
                         "model with its own, or train a new model without -i")
    return est


def holdout_line(holdout):
    """The report's line on the holdout: the best pass's mean holdout loss (VW's
    "average loss ... h"), each pass's, and which pass's model the run kept."""
    if holdout.best_pass is None:
        return "holdout loss: n/a (no example held out: fewer rows than --holdout-period)"
    each = ", ".join("n/a" if loss is None else decimal(loss) for loss in holdout.losses)
    if holdout.stopped:
        kept = (f"stopped after pass {holdout.stopped}, {holdout.early_terminate} without improvement: "
                f"the model is pass {holdout.best_pass}'s")
    else:
        kept = f"the model is the last pass's ({len(holdout.losses)})"
    return f"holdout loss: {decimal(holdout.best_loss)} (best, pass {holdout.best_pass}; each pass: {each}; {kept})"


def _label(value):
    return str(int(value)) if float(value).is_integer() else repr(value)


def model_width(est):
    """(the width the continued model reads: None to grow as its first run did, or
    its own; what sets it, for messages): a model saved growing (fastprox train
    without --n-features or --groups: grow_features) grows, a hashing one has 2^B."""
    if est.params.get("hash_bits") is not None:
        return None, f"--hash-bits {est.params['hash_bits']} (the model's)"
    if est.params.get("grow_features"):
        return None, "the largest feature index of the model and the data"
    return est.n_features, (f"{MODEL_WIDTH}, which does not grow (grow_features=False): to let it, "
                            f"save fastprox.load_model(MODEL).set_params(grow_features=True) and give that")


def auto_or(names):
    """An option's type and metavar (``add_argument``'s keywords): one of ``names``,
    or "auto", read as None (the estimator's automatic choice, its default), so that
    the readable model's options line can say "auto" for a value left to the estimator."""
    choices = ("auto",) + tuple(names)

    def read(text):
        if text == "auto":
            return None
        if text not in choices:
            raise argparse.ArgumentTypeError(f"invalid choice: {text!r} (choose from {', '.join(choices)})")
        return text
    return dict(type=read, metavar="{" + ",".join(choices) + "}")


def options_line(actions, values):
    """The options, as a command line the parser reads back (the readable model's
    ``options:`` line): for each of the parser's ``actions`` (argparse's) whose dest
    ``values`` holds, the words that give it that value: a flag when set, "auto" for
    None where the option reads "auto" as None, nothing for an option not set."""
    return " ".join(word for action in actions if action.dest in values
                    for word in _option_words(action, values[action.dest]))


def _option_words(action, value):
    """The words that make the parser read ``value`` for ``action``'s option."""
    flag = max(action.option_strings, key=len)
    if action.nargs == 0:
        return [flag] if value else []
    if value is None or value is False:
        return [flag, "auto"] if _reads_auto(action) else []
    if value is True and action.nargs == "?":
        return [flag]
    if isinstance(value, (list, tuple)):
        if action.nargs == "+":                 # (--classes: one word, comma-separated)
            return [flag, ",".join(map(_word, value))]
        return [word for item in value for word in (flag, _word(item))]    # (an appended option)
    return [flag, _word(value)]


def _reads_auto(action):
    """Whether the option reads "auto" as None (`auto_or`)."""
    try:
        return callable(action.type) and action.type("auto") is None
    except (argparse.ArgumentTypeError, ValueError, TypeError):
        return False


def _word(value):
    """A value as the parser reads it back: numbers exactly (an integral float as an integer)."""
    if isinstance(value, float):
        return str(int(value)) if value.is_integer() and abs(value) < 2**53 else repr(value)
    return str(value)
