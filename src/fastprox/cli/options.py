"""The reading options the commands share (``--hash-bits``, ``--zero-based``, ``--one-based``,
``--max-line-bytes``, with ``--chunk-rows``; the format, ``--format`` and VW's
interactions ``-q``, ``--cubic``, ``--interactions``) and the reader's arguments they give."""
from .._interactions import recorded_terms, spelled, terms_of
from ..stream.groups import GroupCrossing
from ..libsvm import MAX_LINE_BYTES
from ..vw.reader import DEFAULT_BITS, interaction_terms, looks_like_vw


def add_reader_options(parser, hashing=None):
    """The reading options the commands share: --hash-bits (``hashing``: what it
    does in this command; None: no such option), --zero-based or --one-based and --max-line-bytes,
    --format and VW's interactions."""
    if hashing:
        parser.add_argument("--hash-bits", type=int, metavar="B", help=hashing)
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
    parser.add_argument("--format", choices=("auto", "libsvm", "vw"), default="auto",
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


def reading(args):
    """The reader's keyword arguments (iter_chunks) that the commands' options give:
    --chunk-rows, --zero-based or --one-based, --max-line-bytes (each checked by the reader); for VW
    text, also ``format="vw"``, ``vw_bits`` (--hash-bits, default VW's 18) and
    ``terms``, the interactions; for LIBSVM groups crossed, ``crossing`` (the
    command's ``args.crossing``, fastprox.stream.groups.GroupCrossing)."""
    indexing = True if args.zero_based else (False if getattr(args, "one_based", False) else "auto")
    kwargs = dict(chunk_rows=args.chunk_rows, zero_based=indexing,
                  max_line_bytes=args.max_line_bytes)
    if is_vw(args):
        bits = getattr(args, "hash_bits", None)
        kwargs.update(format="vw", vw_bits=DEFAULT_BITS if bits is None else bits,
                      terms=interaction_terms(args.quadratic, args.cubic, args.interactions))
    elif getattr(args, "crossing", None) is not None:
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
        paths = args.data if isinstance(args.data, list) else [args.data]
        args.format = "vw" if paths and looks_like_vw(paths[0]) else "libsvm"
    return args.format == "vw"


def take_recorded(args, recorded, model, groups=None):
    """Read the data as the model file ``model`` records its training data was read
    (``recorded``: its ``fitted.input_``, fastprox._interactions.record; None: nothing
    recorded, the options as given): its format, interactions and hash bits become the
    options' (LIBSVM groups crossed: ``args.crossing``, from the model's ``groups``).
    One given that differs raises ValueError naming it, its value and the model's."""
    if recorded is None:
        return
    fmt, terms, bits = recorded["format"], recorded["interactions"], recorded["bits"]
    differ = []
    if args.format not in ("auto", fmt):
        differ.append(f"--format {args.format} (the model's: {fmt})")
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
    if differ:
        raise ValueError(f"{model} records how its data were read: " + "; ".join(differ)
                         + ": drop these options to read the data as the model was trained")
    args.format, args.quadratic, args.cubic, args.interactions = fmt, [], [], list(terms)
    if hasattr(args, "hash_bits"):      # (LIBSVM's ids are not hashed: the bits are the crossed blocks')
        args.hash_bits = bits if fmt == "vw" else None
    if fmt == "libsvm":
        crossed = recorded_terms(recorded)
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
