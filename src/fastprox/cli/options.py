"""The reading options the commands share (``--hash-bits``, ``--zero-based``,
``--max-line-bytes``, with ``--chunk-rows``) and the reader's arguments they give."""
from ..libsvm import MAX_LINE_BYTES


def add_reader_options(parser, hashing=None):
    """The reading options the commands share: --hash-bits (``hashing``: what it
    does in this command; None: no such option), --zero-based and --max-line-bytes."""
    if hashing:
        parser.add_argument("--hash-bits", type=int, metavar="B", help=hashing)
    parser.add_argument("--zero-based", action="store_true",
                        help="the indices start at 0 (default: off, decided by the first rows: "
                             "zero-based if they hold an index 0)")
    parser.add_argument("--max-line-bytes", type=int, default=MAX_LINE_BYTES, metavar="N",
                        help="the longest line read: a longer one (binary data, an endless stream "
                             "such as /dev/zero) stops the command once N bytes of it are read")


def reading(args):
    """The reader's keyword arguments (iter_chunks) that the commands' options give:
    --chunk-rows, --zero-based, --max-line-bytes (each checked by the reader)."""
    return dict(chunk_rows=args.chunk_rows, zero_based=True if args.zero_based else "auto",
                max_line_bytes=args.max_line_bytes)
