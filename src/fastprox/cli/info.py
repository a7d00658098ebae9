"""Describe LIBSVM files: rows, features, non-zeros, labels.

One streaming pass over each file.

The numbers are those of load_libsvm on the file: ``features`` is the width
of the matrix it returns (largest index + 1 for zero-based files, the largest
index for one-based ones). Labels are counted up to 1000 distinct values.
"""
from ..libsvm import source_name
from .stream import CHUNK_ROWS, MAX_LABELS, add_reader_options, check_readable, reading, scan


def add_arguments(parser):
    parser.add_argument("data", nargs="+", metavar="DATA",
                        help="LIBSVM files (plain, .gz, .bz2, .xz); - for standard input")
    parser.add_argument("--chunk-rows", type=int, default=CHUNK_ROWS, help="rows parsed at a time")
    add_reader_options(parser)


def run(args):
    check_readable(args.data)
    if args.chunk_rows < 1:
        raise ValueError(f"--chunk-rows must be at least 1, not {args.chunk_rows}")
    for path in args.data:
        print(describe(path, scan([path], **reading(args))))
    return 0


def describe(path, s):
    """The text block printed for one file (standard input named ``<stdin>``)."""
    per_row = s.nnz / s.rows if s.rows else 0.0
    if s.labels is None:
        labels = f"more than {MAX_LABELS} distinct values"
    else:
        labels = "  ".join(f"{format_label(k)}:{n}" for k, n in sorted(s.labels.items()))
    return (f"{source_name(path)}\n  rows       {s.rows}\n  features   {s.n_features}\n"
            f"  non-zeros  {s.nnz} ({per_row:.2f} per row)\n  labels     {labels}")


def format_label(value):
    """A label as written in LIBSVM files: integers without '.0' (strings as they are)."""
    if isinstance(value, str):
        return value
    value = float(value)
    return str(int(value)) if value.is_integer() else repr(value)
