"""Describe LIBSVM or VW files, and model files.

Data files: rows, features, non-zeros, labels. Model files (written by ``fastprox
train --model`` or save_model): their class, width, classes and how their data were
read (the hashing, VW text's interactions); those of ``fastprox tag train`` and
``parse train`` likewise (their reader and templates).

One streaming pass over each data file.

The numbers are those of load_libsvm on the file: ``features`` is the width
of the matrix it returns (largest index + 1 for zero-based files, the largest
index for one-based ones). Labels are counted up to 1000 distinct values.
"""
from .._interactions import describe as describe_input
from .._libsvm import count_labels
from .._registry import OtherModelFile
from ..libsvm import MAX_LINE_BYTES, half_readers, read_halves, read_once, source_name
from ..libsvm.sources import named
from ..stream.model import StreamModel
from ..stream.files import CHUNK_ROWS, check_readable, chunks_of, pumped
from ..stream.labels import format_label
from .options import OptionError, add_reader_options, path, reading

#: The first bytes of a model file (a zip archive, fastprox.model_io.format).
ZIP_MAGIC = b"PK\x03\x04"

#: Distinct labels counted by `scan`; beyond this the file is taken as
#: regression targets and only the number of rows is kept.
MAX_LABELS = 1000


def add_arguments(parser):
    parser.add_argument("data", nargs="+", metavar="DATA", type=path,
                        help="LIBSVM or VW files (plain, .gz, .bz2, .xz; - for standard input), or "
                             "model files")
    parser.add_argument("--chunk-rows", type=int, default=CHUNK_ROWS, help="rows parsed at a time")
    add_reader_options(parser)


def run(args):
    check_readable(args.data)
    if args.chunk_rows < 1:
        raise OptionError(f"--chunk-rows must be at least 1, not {args.chunk_rows}")
    for path in args.data:
        print(describe_model(path) if is_model(path) else describe(path, scan([path], **reading(args))))
    return 0


def is_model(path):
    """Whether ``path`` is a regular file that starts as a model file does (a zip); a
    read error names ``path``."""
    if read_once(path):
        return False
    with open(path, "rb") as f:
        try:
            return f.read(4) == ZIP_MAGIC
        except OSError as e:
            raise named(e, path) from None


def describe_model(path):
    """The text block printed for a model file: its class and width, its classes,
    its hashing and how its data were read (``fitted.input_``, ``fitted.zero_based_``);
    a structured model's (`describe_structured`)."""
    try:
        est = StreamModel.from_file(path)
    except OtherModelFile:
        return describe_structured(path)
    lines = [path, f"  model      {'ProxRegressor' if est.regression else 'ProxClassifier'}"
                   f"(loss={est.loss!r}, penalty={est.params['penalty']!r})",
             f"  features   {est.n_features}"]
    if not est.regression:
        lines.append(f"  classes    {' '.join(map(format_label, est.classes))}")
    if est.hash_bits is not None:
        lines.append(f"  hashing    ids hashed into 2^{est.hash_bits} columns (--hash-bits {est.hash_bits})")
    read = [] if est.input is None else [describe_input(est.input)]
    if est.zero_based is not None:
        read.append(("LIBSVM, " if est.input is None else "")
                    + f"indices from {1 - est.zero_based} (--{'zero' if est.zero_based else 'one'}-based)")
    lines.append(f"  input      {', '.join(read) or 'as given (nothing recorded)'}")
    return "\n".join(lines)


def describe_structured(path):
    """The text block printed for a structured model file (fastprox tag train, parse
    train): its class and width, a tagger's labels, and how its input becomes rows."""
    from ..structured.model_file import read_structured_model
    m = read_structured_model(path)
    lines = [path, f"  model      {m.name}(loss={m.params['loss']!r}, penalty={m.params['penalty']!r})",
             f"  features   {m.fitted['n_features_in_']}"]
    if m.name == "SequenceTagger":
        lines.append(f"  classes    {' '.join(map(format_label, m.arrays['classes'].tolist()))}")
    reader, features = m.extras.get("reader", {}), m.extras.get("features") or {}
    read = {"conll": "CoNLL columns " + " ".join(reader.get("columns", ())) + f" (label {reader.get('label')})",
            "conllu": f"CoNLL-U (label {reader.get('label')})", "crfsuite": "CRFsuite attributes",
            "libsvm": "LIBSVM with qid"}.get(reader.get("format"), "CoNLL-U")
    templates = features.get("templates") or features.get("params", {}).get("templates")
    if templates:
        read += ", " + _templates(templates, features.get("params", {}).get("templates_kind"))
    lines.append(f"  input      {read if features or reader else 'rows (nothing recorded)'}")
    return "\n".join(lines)


def _templates(lines, kind):
    """How many feature templates a model reads, as CRF++'s users count them: a CRF++
    file's unigram (``U``) lines, its bigram ``B`` line (label transitions) said
    apart; feature expressions one a template."""
    if kind != "crfpp":
        return f"{len(lines)} templates"
    unigrams = sum(line.startswith("U") for line in lines)
    bigram = " and B (label bigrams)" if len(lines) > unigrams else ", no B (no label bigrams)"
    return f"{unigrams} CRF++ U template{'s' * (unigrams != 1)}{bigram}"


def describe(path, s):
    """The text block printed for one file (standard input named ``<stdin>``)."""
    per_row = s.nnz / s.rows if s.rows else 0.0
    if s.labels is None:
        labels = f"more than {MAX_LABELS} distinct values"
    else:
        labels = "  ".join(f"{format_label(k)}:{n}" for k, n in sorted(s.labels.items())) or "none (no rows)"
    return (f"{source_name(path)}\n  rows       {s.rows}\n  features   {s.n_features}\n"
            f"  non-zeros  {s.nnz} ({per_row:.2f} per row)\n  labels     {labels}")


class Summary:
    """What one streaming pass over LIBSVM files finds: rows, width, non-zeros and
    label -> rows (None past MAX_LABELS)."""

    def __init__(self):
        self.rows = self.n_features = self.nnz = 0
        self.labels = {}

    def add(self, chunk):
        self.rows += chunk.shape[0]
        self.n_features = max(self.n_features, chunk.shape[1])
        self.nnz += chunk.nnz
        if self.labels is not None and not count_labels(chunk.y, self.labels, MAX_LABELS):
            self.labels = None

    def merge(self, other, n_features):
        """Add another summary's counts, with the width of the two together."""
        self.rows += other.rows
        self.nnz += other.nnz
        self.n_features = max(self.n_features, n_features)
        if self.labels is not None and other.labels is not None:
            for label, rows in other.labels.items():
                self.labels[label] = self.labels.get(label, 0) + rows
        if other.labels is None or self.labels is not None and len(self.labels) > MAX_LABELS:
            self.labels = None


def scan(paths, chunk_rows, zero_based="auto", max_line_bytes=MAX_LINE_BYTES, **vw):
    """One streaming pass over ``paths``: rows, width (as load_libsvm gives it; 2^B for
    VW text, whose arguments ``vw`` are: fastprox.stream.files.chunks_of), non-zeros
    and label counts, all files together."""
    summary = Summary()
    for path in paths:
        halves = None if zero_based in (True, False) or vw else _scan_halves(path, chunk_rows, max_line_bytes)
        if halves is not None:
            summary.merge(*halves)
            continue
        with pumped(path) as source:
            for chunk in chunks_of(source, chunk_rows=chunk_rows, zero_based=zero_based,
                                   max_line_bytes=max_line_bytes, **vw):
                summary.add(chunk)
    return summary


def _scan_halves(path, chunk_rows, max_line_bytes=MAX_LINE_BYTES):
    """(summary, width) of a file that splits (fastprox.libsvm.split_point; on two
    cores its scan takes about half as long), its two halves read at once, as one
    pass would find them; None for other files, and whenever one pass could find
    otherwise or fail (no feature in the first half, an index 0 in the second
    half of a one-based file, a malformed line): the caller then reads the file
    in one pass, which raises the error at its line."""
    readers = half_readers(path, chunk_rows, max_line_bytes)
    if readers is None:
        return None
    first, second = readers
    summaries = [Summary(), Summary()]
    if not read_halves([first, second], lambda i, chunk: summaries[i].add(chunk)):
        return None
    offset = first.offset
    if offset is None or (offset == 1 and second.parser.min_index == 0):
        return None
    summaries[0].merge(summaries[1], second.parser.max_index - offset + 1)
    return summaries[0], summaries[0].n_features
