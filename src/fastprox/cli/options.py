"""The reading options the commands share (``--hash-bits``, ``--zero-based``, ``--one-based``,
``--max-line-bytes``, with ``--chunk-rows``; the format, ``--format``, VW's
interactions ``-q``, ``--cubic``, ``--interactions`` and its namespaces selected
``--ignore``, ``--keep``, ``--ignore-linear``) and the reader's arguments they give;
the type of the training commands' ``--seed``, and of every path (`path`); the
error of an option's value (`OptionError`)."""
import argparse

from .._interactions import FORMATS, recorded_selection, recorded_terms, selection_options, spelled, terms_of
from ..stream.groups import GroupCrossing
from ..libsvm import MAX_LINE_BYTES
from ..vw.reader import DEFAULT_BITS, SELECTIONS, interaction_terms, namespace_selection, sniffed_format

#: The largest seed: NumPy's legacy seeds, which the estimators' random_state takes, are 32-bit.
MAX_SEED = 2**32 - 1


def seed(text):
    """The training commands' --seed: an integer from 0 to MAX_SEED (scikit-learn's
    check_random_state refuses others, in words that name no option)."""
    try:
        value = int(text)
    except ValueError:
        value = -1
    if not 0 <= value <= MAX_SEED:
        raise argparse.ArgumentTypeError(f"must be an integer from 0 to {MAX_SEED}, not {text!r}")
    return value


class OptionError(ValueError):
    """An option's value refused once the command line is parsed (out of range, or at
    odds with another option or with the estimator's parameters): the command line is
    at fault, as in argparse's own refusals, and the command exits with their status,
    ``exit_status``; the files' and the data's errors exit with 1."""

    exit_status = 2


def path(text):
    """A path option's or argument's type: the path as given, unless empty. An empty
    path (``--model "$OUT"`` with OUT unset) would otherwise read as no option at
    all: no model saved, no test, a new model for ``-i``, all without a word."""
    if not text:
        raise argparse.ArgumentTypeError("an empty path: give a file path (is a shell variable unset?)")
    return text


def add_reader_options(parser, hashing=None):
    """The reading options the commands share: --hash-bits (``hashing``: what it
    does in this command; None: no such option), --zero-based or --one-based and --max-line-bytes,
    --format and VW's interactions."""
    if hashing:
        parser.add_argument("-b", "--hash-bits", type=int, metavar="B", help=hashing)
    indexing = parser.add_mutually_exclusive_group()
    indexing.add_argument("--zero-based", action="store_true",
                          help="the LIBSVM indices start at 0 (default: as the model file records its "
                               "training files were read, else decided by the first rows: zero-based "
                               "if they hold an index 0)")
    indexing.add_argument("--one-based", action="store_true",
                          help="the LIBSVM indices start at 1: an index 0 is an error (default: as "
                               "for --zero-based)")
    parser.add_argument("--max-line-bytes", type=int, default=MAX_LINE_BYTES, metavar="N",
                        help="the longest line read: a longer one (binary data, an endless stream "
                             "such as /dev/zero) stops the command once N bytes of it are read")
    parser.add_argument("--format", choices=("auto", *sorted(FORMATS)), default="auto",
                        help="the data's format: LIBSVM or Vowpal Wabbit's text (default: auto: VW "
                             "when the first data line of the first file holds a '|'; LIBSVM for "
                             "standard input and pipes)")
    vw = parser.add_argument_group("interactions: Vowpal Wabbit's text (--format vw), or LIBSVM groups "
                                   "(--groups FILE; docs/guide/vw_format.md)")
    vw.add_argument("-q", "--quadratic", action="append", default=[], metavar="AB",
                    help="cross namespaces A and B (first characters), as VW's -q; in LIBSVM data "
                         "with --groups, two group ids joined by a comma (-q 0,1); repeatable")
    vw.add_argument("--cubic", action="append", default=[], metavar="ABC",
                    help="cross three namespaces (or group ids: 0,1,2), as VW's --cubic; repeatable")
    vw.add_argument("--interactions", action="append", default=[], metavar="ABC",
                    help="cross 2 to 8 namespaces (or group ids), as VW's --interactions; repeatable")
    select = parser.add_argument_group("namespaces read: Vowpal Wabbit's text (--format vw), as VW's "
                                       "options; each character names a namespace by its first character "
                                       "(' ' or \\x20: the default namespace); repeatable")
    select.add_argument("--ignore", action="append", default=[], metavar="NS", type=_namespaces_arg("ignore"),
                        help="drop the namespaces' features, from the interactions too")
    select.add_argument("--keep", action="append", default=[], metavar="NS", type=_namespaces_arg("keep"),
                        help="drop every namespace but these (as VW, --keep replaces --ignore)")
    select.add_argument("--ignore-linear", action="append", default=[], metavar="NS",
                        type=_namespaces_arg("ignore_linear"),
                        help="drop the namespaces' own features, keep them in the interactions "
                             "(-q ab --ignore-linear a: a's features crossed only)")


def _namespaces_arg(option):
    """argparse's type of a selection option: the argument, once namespace_selection
    reads it (an empty one, a character outside ASCII: a usage error)."""
    def checked(text):
        try:
            namespace_selection(**{option: text})
        except ValueError as e:
            raise argparse.ArgumentTypeError(str(e).partition(": ")[2]) from None
        return text
    return checked


def selection(args):
    """The namespaces the options --ignore, --keep and --ignore-linear select
    (namespace_selection's dict; empty: all read)."""
    return namespace_selection(*(getattr(args, option, []) for option in SELECTIONS))


def reading(args):
    """The reader's keyword arguments (iter_chunks) that the commands' options give:
    --chunk-rows, --zero-based or --one-based, --max-line-bytes (each checked by the reader); for VW
    text, also ``format="vw"``, ``vw_bits`` (--hash-bits, default VW's 18),
    ``terms``, the interactions, and ``selection``, the namespaces read (`selection`);
    for LIBSVM groups crossed, ``crossing`` (the command's ``args.crossing``,
    fastprox.stream.groups.GroupCrossing). The namespaces' options over LIBSVM data
    raise ValueError, as -q's without --groups."""
    indexing = True if args.zero_based else (False if getattr(args, "one_based", False) else "auto")
    kwargs = dict(chunk_rows=args.chunk_rows, zero_based=indexing,
                  max_line_bytes=args.max_line_bytes)
    if is_vw(args):
        bits = getattr(args, "hash_bits", None)
        kwargs.update(format="vw", vw_bits=DEFAULT_BITS if bits is None else bits,
                      terms=interaction_terms(args.quadratic, args.cubic, args.interactions),
                      selection=selection(args))
        return kwargs
    if selection(args):
        raise ValueError("--ignore, --keep and --ignore-linear select the namespaces of VW's text format; "
                         "LIBSVM data have none: give data in VW's text format (--format vw), or drop them")
    if getattr(args, "crossing", None) is not None:
        kwargs["crossing"] = args.crossing
    elif args.quadratic or args.cubic or args.interactions:
        raise ValueError("-q, --cubic and --interactions cross VW's namespaces, or the groups of --groups "
                         "FILE in LIBSVM data (-q 0,1): give data in VW's text format (--format vw), or "
                         "the groups (fastprox train --groups FILE)")
    return kwargs


def is_vw(args):
    """Whether the commands' data are VW text: --format vw, or (auto) the first file's
    first data line holds a '|'."""
    if args.format == "auto":
        args.format = content_format(args) or "libsvm"
    return args.format == "vw"


def first_data(args):
    """The commands' first data file (None: none given)."""
    paths = args.data if isinstance(args.data, list) else [args.data]
    return paths[0] if paths else None


def content_format(args):
    """The format of the commands' first data file as its content says
    (`vw.reader.sniffed_format`; None: no file, no data line, or a source read once),
    read once a command: `is_vw` and the checks of the test file and of ``-i``'s model
    each ask."""
    if "content_format" not in vars(args):
        first = first_data(args)
        args.content_format = None if first is None else sniffed_format(first)
    return args.content_format


def trained_format(est):
    """The format of the StreamModel ``est``'s training data as its file records it: its
    ``fitted.input_``'s (fastprox._interactions.record); LIBSVM where only its indexing
    is recorded (``fitted.zero_based_``: fastprox train of LIBSVM files); else None."""
    if est.input is not None:
        return est.input["format"]
    return "libsvm" if est.zero_based is not None else None


def check_content(args, fmt, model):
    """Under --format auto, refuse (ValueError) a first data file whose content reads
    as another format than ``fmt``, the model file ``model``'s: a LIBSVM file given to
    a VW model would read as rows without features, VW text given to a LIBSVM model as
    hashed columns beside its features."""
    seen = content_format(args) if args.format == "auto" else None
    if seen not in (None, fmt):
        raise ValueError(f"{_reads_as(first_data(args), seen)}, but {model} was trained on "
                         f"{FORMATS[fmt]} text: give data in the model's format, or --format {fmt} "
                         f"to read this file as {FORMATS[fmt]} text")


def check_test_content(args):
    """Under --format auto, refuse (ValueError) a --test file whose content reads as
    another format than the first data file's (each would be read as the training
    data's format, and the test file's first line found malformed, in words that do
    not say why)."""
    if args.format != "auto" or not args.data or args.test is None:
        return
    trained, tested = content_format(args), sniffed_format(args.test)
    if None not in (trained, tested) and trained != tested:
        raise ValueError(f"--test {_reads_as(args.test, tested)}, but {first_data(args)} as {FORMATS[trained]} "
                         f"text: give a test file in the training data's format")


def _reads_as(path, fmt):
    """The words saying that ``path`` reads as ``fmt`` text, and why."""
    return (f"{path} reads as {FORMATS[fmt]} text (its first data line {'holds' if fmt == 'vw' else 'has no'} "
            f"'|')")


def differing(args, fmt, recorded):
    """The reading options given that differ from a model's: its format ``fmt`` and,
    where it records them (``recorded``, its ``fitted.input_``), its interactions,
    hash bits and namespaces selected; each as the option given and the model's value."""
    differ = []
    if args.format not in ("auto", fmt):
        differ.append(f"--format {args.format} (the model's: {fmt})")
    if recorded is None:
        return differ
    terms, bits = recorded["interactions"], recorded["bits"]
    if args.quadratic or args.cubic or args.interactions:
        words = [f"{option} {text}" for option, given in (("-q", args.quadratic), ("--cubic", args.cubic),
                                                            ("--interactions", args.interactions))
                 for text in given]
        try:
            same = spelled(terms_of(fmt, args.quadratic, args.cubic, args.interactions)) == terms
        except ValueError:
            same = False
        if not same:
            differ.append(f"{' '.join(words)} (the model's: "
                          f"{' '.join('--interactions ' + t for t in terms) or 'none'})")
    if getattr(args, "hash_bits", None) not in (None, bits):
        differ.append(f"--hash-bits {args.hash_bits} (the model's: {bits})")
    given, kept = selection(args), recorded_selection(recorded)
    if given and given != kept:
        words = selection_options((option, text) for option in SELECTIONS for text in getattr(args, option))
        differ.append(f"{words} (the model's: {selection_options(kept.items()) or 'all namespaces read'})")
    return differ


def take_recorded(args, est, model):
    """Read the data as the model file ``model`` (the StreamModel ``est``) records its
    training data was read (`trained_format`; nothing recorded: the options as given):
    its format, interactions, hash bits and namespaces selected become the options'
    (LIBSVM groups crossed:
    ``args.crossing``, from the model's ``groups``). Data of the other format
    (`check_content`) raise ValueError, each option given that differs (`differing`)
    OptionError, naming the model's."""
    recorded, fmt = est.input, trained_format(est)
    if fmt is None:
        return
    check_content(args, fmt, model)
    differ = differing(args, fmt, recorded)
    if differ:
        raise OptionError(f"{model} records how its data were read: " + "; ".join(differ)
                         + ": drop these options to read the data as the model was trained")
    args.format = fmt
    if recorded is None:
        return
    terms, bits = recorded["interactions"], recorded["bits"]
    args.quadratic, args.cubic, args.interactions = [], [], list(terms)
    kept = recorded_selection(recorded)
    for option in SELECTIONS:
        setattr(args, option, [kept[option]] if option in kept else [])
    if hasattr(args, "hash_bits"):      # (LIBSVM's ids are not hashed: the bits are the crossed blocks')
        args.hash_bits = bits if fmt == "vw" else None
    if fmt == "libsvm":
        groups, crossed = est.params.get("groups"), recorded_terms(recorded)
        n = -1 if groups is None else len(groups) - (len(crossed) << bits)
        args.crossing = GroupCrossing(groups[:n], crossed, bits) if n >= 0 else None
        if args.crossing is None or list(args.crossing.model_groups()) != list(groups):
            raise ValueError(f"{model} records LIBSVM groups crossed, but its groups are not the group file's "
                             f"followed by a block per interaction: it was not written by fastprox train")


def take_indexing(args, recorded):
    """Read LIBSVM files with the indexing the model file records for its training
    files (``recorded``: its ``fitted.zero_based_``; None: nothing recorded, each file's
    first rows decide), unless --zero-based or --one-based is given: that says how
    this file is written, and wins."""
    if recorded is not None and not args.zero_based and not args.one_based:
        args.zero_based, args.one_based = recorded, not recorded
