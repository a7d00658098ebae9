"""Read CoNLL column files: one item per line, a blank line between sequences.

The format of CoNLL-2000 chunking (``word POS chunk``), CoNLL-2003 named
entities and the files CRF++ and Bottou's crfsgd read: columns separated by
spaces or tabs (any run of ASCII whitespace), the same number on every item
line; a line of whitespace only ends a sequence. Other spaces are a token's
characters, as CRF++ and conlleval read them: a no-break space (U+00A0) in
"100 000", an ideographic space (U+3000). ``-DOCSTART-`` lines (CoNLL-2003's
document breaks, with all the columns or bare) are skipped by default; they
end the sequence in progress and are kept as they were read, with the blank
lines after them, in the next sequence's ``comments`` (after the last one: in
its ``closing``) so that the writer gives them back (`docstart_columns`).

The caller names the columns (``columns=("w", "pos", "y")``) and which one
is the label (``label="y"``); unlabelled data (a test file without its last
column) is read with the label left out of ``columns`` and ``label=None``.
"""
import re

from .lines import located, numbered_lines, source_name
from .sequence import Layout, Sequence

__all__ = ["read_conll", "docstart_columns", "DOCSTART"]

#: The first field of CoNLL-2003's document-break lines.
DOCSTART = "-DOCSTART-"
#: What separates columns: ASCII whitespace, the characters str.split() breaks an
#: ASCII line at (its Unicode spaces belong to tokens).
_SEPARATOR = re.compile("[\t\n\x0b\x0c\r\x1c-\x1f ]+")


def read_conll(source, columns, label=None, *, docstart=True):
    """Iterate over the sequences of a CoNLL column file, one at a time.

    Parameters
    ----------
    source : str, path, file object or "-"
        The file (plain, gzip, bzip2 or xz), ``-`` for standard input, or a
        binary file object.
    columns : sequence of str
        The columns' names, in the file's order, e.g. ``("w", "pos", "y")``.
    label : str or None, default=None
        The label column's name (one of ``columns``), or None for unlabelled
        data.
    docstart : bool, default=True
        Skip ``-DOCSTART-`` lines (keeping them for the writer); False reads
        them as items.

    Returns
    -------
    iterator of Sequence
        Read lazily: memory holds one sequence at a time.

    Raises
    ------
    ValueError
        At iteration, ``NAME:LINE: ...`` for an item line with another number
        of columns than ``columns`` (naming a missing label column as such),
        text that is not UTF-8, or binary data; at the call, for bad
        arguments.
    """
    names = tuple(columns) if not isinstance(columns, str) else (columns,)
    if not names or not all(isinstance(n, str) and n and not n.isspace() for n in names):
        raise ValueError(f"columns must name each column with a non-empty string, not {columns!r}")
    if len(set(names)) != len(names):
        raise ValueError(f"columns must not repeat a name: {columns!r}")
    if label is not None and label not in names:
        raise ValueError(f"label={label!r} is not one of the columns {names}; name the label "
                         f"column, or pass label=None for unlabelled data")
    return _sequences(source, Layout(names, label, " "), bool(docstart))


def docstart_columns(line, width):
    """The columns of ``line``, kept by the reader before a sequence, if it is a
    ``-DOCSTART-`` line with the ``width`` columns of its file's items
    (``-DOCSTART- -X- -X- O``); else None.

    Such a line takes an appended column of predictions too (its own last field,
    O in CoNLL-2003, as the CoNLL-2003 evaluation files have it) and conlleval
    counts it as an item tagged right: conlleval stops at a line with another
    number of columns than the first. Any other kept line, a bare one-field
    ``-DOCSTART-`` among them, is written back as it was read.
    """
    fields = _fields(line)
    return fields if len(fields) == width and fields[0] == DOCSTART else None


def _fields(text):
    """The columns of a line: split at runs of ASCII whitespace."""
    return text.split() if text.isascii() else [f for f in _SEPARATOR.split(text) if f]


def _sequences(source, layout, docstart):
    name = source_name(source)
    width = len(layout.names)
    rows, first, kept = [], 0, []
    held = None         # the last sequence read, given once the next one starts (or the file ends)
    for number, text in numbered_lines(source):
        fields = _fields(text)
        if not fields:
            if rows:
                if held:
                    yield held
                held, rows, kept = Sequence(layout, tuple(zip(*rows)), name, first, kept), [], []
            elif kept:
                kept.append(text)       # a blank line after -DOCSTART-, written back
            continue
        if docstart and fields[0] == DOCSTART:
            if rows:
                if held:
                    yield held
                held, rows, kept = Sequence(layout, tuple(zip(*rows)), name, first, kept), [], []
            kept.append(text)
            continue
        if len(fields) != width:
            raise located(name, number, _width_problem(layout, len(fields)))
        if not rows:
            first = number
        rows.append(fields)
    if rows:
        if held:
            yield held
        held, kept = Sequence(layout, tuple(zip(*rows)), name, first, kept), []
    if held:
        # (-DOCSTART- lines after the last sequence: written back after it)
        yield Sequence(layout, held.columns, name, held.line, held.comments, closing=kept) if kept else held


def _width_problem(layout, found):
    """What is wrong with an item line of ``found`` columns, and the fix."""
    names = layout.names
    expected = f"{found} column{'s' * (found != 1)}, expected {len(names)} ({' '.join(names)})"
    if found == len(names) - 1 and layout.label == names[-1]:
        return (f"{expected}: the label column {layout.label!r} is missing. Every item of "
                f"labelled data needs its label; to read unlabelled data, leave the label "
                f"out of columns and pass label=None")
    return (f"{expected}. Every item line needs the same columns, separated by spaces or "
            f"tabs (a token cannot contain a space); a blank line ends a sequence")
