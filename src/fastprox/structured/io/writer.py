"""Write sequences back as they were read, with predictions in them.

``predict`` writes the file it read with one column replaced (``column=``: every
other field, comment, multiword-token and empty-node line as it was; ``parse
predict`` writes its sentences `parsed` instead, HEAD, DEPREL and DEPS replaced)
or with the predictions appended as a last column
(``word POS gold predicted``, the input of ``conlleval``, which needs as many
columns on every line: a ``-DOCSTART-`` line with the items' columns repeats
its last field there, O in CoNLL-2003, as the CoNLL-2003 evaluation files do;
a bare one is written as it was read, `fastprox.structured.io.conll.docstart_columns`). What the readers
keep is written back: a CoNLL-U file read and written unchanged is the same
bytes, blank lines after each sentence; a CoNLL file is written with single
spaces between columns, as CoNLL-2000's files are.
"""
import os
import re
import sys

import numpy as np

from ..._writes import STANDARD_OUTPUT, Output, atomic_write
from ...libsvm import STDIN
from .conll import docstart_columns

__all__ = ["write_sequences"]

#: What no value written into a column may contain, per column separator.
_BREAKS = {" ": re.compile(r"\s"), "\t": re.compile(r"[\t\n\r]")}


def write_sequences(path, sequences, values=None, *, column=None):
    """Write ``sequences`` (as the readers give them) to ``path``.

    Parameters
    ----------
    path : str or path
        The file to write; ``-`` for standard output. The file appears
        whole or not at all (written to a temporary file, then renamed), and
        is compressed when its name ends in ``.gz``, ``.bz2`` or ``.xz``.
    sequences : iterable of Sequence
        Read by :func:`read_conll` or :func:`read_conllu`; consumed once, so a
        reader's iterator streams through.
    values : None, iterable of sequences, or 1-D array
        One value per item of each sequence (converted with ``str``), or all
        items' values stacked in one flat array (``predict``'s output); None
        writes the sequences unchanged.
    column : str or None, default=None
        The column that ``values`` replace ("HEAD", say); None appends them
        as a new last column (``_`` on CoNLL-U's multiword-token and
        empty-node lines; a CoNLL ``-DOCSTART-`` line's own last field when
        it has the items' columns).

    Raises
    ------
    ValueError
        When a sequence and its values differ in length, values run out or
        are left over, a value is empty or holds the column separator (any
        whitespace for CoNLL files; tab or newline for CoNLL-U), or
        ``column`` is not a column. Nothing is written then.
    """
    if values is None and column is not None:
        raise ValueError(f"column={column!r} names the column to replace, but no values were given")

    def write(out):
        for sequence, row_values in _paired(sequences, values):
            out.write(_text(sequence, row_values, column).encode("utf-8"))

    if os.fspath(path) == STDIN:
        stdout = Output(sys.stdout.buffer, STANDARD_OUTPUT)
        write(stdout)
        stdout.flush()
    else:
        atomic_write(os.fspath(path), write)


def _paired(sequences, values):
    """``(sequence, its values or None)`` in order, lengths checked."""
    if values is None:
        for sequence in sequences:
            yield sequence, None
        return
    if isinstance(values, np.ndarray) and values.ndim == 1:
        start = 0
        for sequence in sequences:
            stop = start + len(sequence)
            if stop > len(values):
                raise ValueError(f"values has {len(values)} entries, fewer than the items of the "
                                 f"sequences (it ran out at {_where(sequence)}); give one value per item")
            yield sequence, values[start:stop]
            start = stop
        if start != len(values):
            raise ValueError(f"values has {len(values)} entries but the sequences {start} items; "
                             f"give one value per item")
        return
    values = iter(values)
    for sequence in sequences:
        row_values = next(values, None)
        if row_values is None:
            raise ValueError(f"values ran out at the sequence at {_where(sequence)}; give one "
                             f"list of values per sequence")
        if len(row_values) != len(sequence):
            raise ValueError(f"{len(row_values)} values for the {len(sequence)} items of the "
                             f"sequence at {_where(sequence)}; give one value per item")
        yield sequence, row_values
    if next(values, None) is not None:
        raise ValueError("values has more entries than there are sequences; give one list of "
                         "values per sequence")


def _where(sequence):
    return f"{sequence.source}:{sequence.line}"


def _text(sequence, values, column):
    """The lines of one sequence, each ending in a newline, the blank line that
    ends it, and the lines kept after it."""
    layout = sequence.layout
    separator = layout.separator
    rows = [list(row) for row in zip(*sequence.columns)]
    if values is not None:
        texts = [str(v) for v in values]
        breaks = _BREAKS[separator]
        for text in texts:
            if not text or breaks.search(text):
                raise ValueError(f"value {text!r} for the sequence at {_where(sequence)} cannot be "
                                 f"written as a column: it is empty or holds whitespace that "
                                 f"separates columns (write _ for an empty value)")
        if column is None:
            for row, text in zip(rows, texts):
                row.append(text)
        else:
            if column not in layout.index:
                raise ValueError(f"column={column!r} is not one of {', '.join(layout.names)}")
            at = layout.index[column]
            for row, text in zip(rows, texts):
                row[at] = text
    appended = values is not None and column is None
    tail = separator + "_" if appended else ""
    lines, closing = list(sequence.comments), list(sequence.closing)
    if appended and separator == " ":
        width = len(layout.names)
        lines, closing = ([_widened(line, docstart_columns(line, width)) for line in kept] for kept in (lines, closing))
    extra = iter(sequence.extra)
    pending = next(extra, None)
    for i, row in enumerate(rows):
        while pending is not None and pending[0] == i:
            lines.append(pending[1] + tail)
            pending = next(extra, None)
        lines.append(separator.join(row))
    while pending is not None:
        lines.append(pending[1] + tail)
        pending = next(extra, None)
    lines.append("")
    return "\n".join(lines + closing) + "\n"


def _widened(line, columns):
    """A kept line as written with a column appended: a -DOCSTART- line of the
    items' ``columns`` gets its own last field again, with single spaces between
    its columns as the items' lines (conlleval reads a second space as an empty
    column); any other line (``columns`` None) as it was read."""
    return line if columns is None else " ".join(columns + columns[-1:])
