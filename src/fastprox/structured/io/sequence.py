"""The in-memory form of one sequence read from a column file (a sentence).

A :class:`Sequence` holds its items column by column: ``seq["w"]`` is the
tuple of the words, ``seq.labels`` the label column's values. What the
readers skip but the writer must give back (CoNLL-U comments, multiword-token
and empty-node lines; CoNLL ``-DOCSTART-`` lines) travels with it, so that
:func:`fastprox.structured.io.write_sequences` reproduces the input.

The learner takes all sequences stacked: one CSR row per item (the feature
extractors), the items' labels and ``lengths``, the number of items of each
sequence in order (:func:`labels_and_lengths`), as seqlearn and hmmlearn do.
"""
from itertools import chain

import numpy as np

__all__ = ["Layout", "Sequence", "labels_and_lengths", "without_labels"]


class Layout:
    """The columns of a file's items, shared by all its sequences.

    Parameters
    ----------
    names : tuple of str
        The columns' names, in the file's order.
    label : str or None
        The name of the label column (None for unlabelled data).
    separator : str
        What the writer puts between columns (a space for CoNLL files, a tab
        for CoNLL-U).
    """
    __slots__ = ("names", "label", "separator", "index")

    def __init__(self, names, label, separator):
        self.names, self.label, self.separator = tuple(names), label, separator
        self.index = {name: i for i, name in enumerate(self.names)}

    @property
    def features(self):
        """The names of the columns that are not the label, in order: the columns
        a CRF++ template's ``%x[row,col]`` numbers (col 0 is the first)."""
        return tuple(name for name in self.names if name != self.label)


class Sequence:
    """One sequence of items (a sentence) with its columns.

    Attributes
    ----------
    layout : Layout
        The columns' names and the label's.
    columns : tuple of tuple of str
        One tuple per column, one string per item.
    source : str
        The file it was read from, as messages name it.
    line : int
        The sequence's first line in that file (its first comment for CoNLL-U).
    comments : tuple of str
        Lines kept verbatim before the items: CoNLL-U comments, CoNLL
        ``-DOCSTART-`` lines (and the blank lines after them).
    closing : tuple of str
        Lines kept verbatim after the blank line that ends the file's last
        sequence: CoNLL ``-DOCSTART-`` lines with no sequence after them.
    extra : tuple of (int, str)
        CoNLL-U multiword-token and empty-node lines, each with the number of
        words before it, written back where they stood.
    heads : ndarray of int32 or None
        The gold HEAD of each word (0 the root), when the reader checked them.
    """
    __slots__ = ("layout", "columns", "source", "line", "comments", "extra", "heads", "closing")

    def __init__(self, layout, columns, source, line, comments=(), extra=(), heads=None, closing=()):
        self.layout, self.columns, self.source, self.line = layout, columns, source, line
        self.comments, self.extra, self.heads, self.closing = tuple(comments), tuple(extra), heads, tuple(closing)

    def __len__(self):
        return len(self.columns[0]) if self.columns else 0

    def __getitem__(self, name):
        """The column ``name`` (a tuple of strings, one per item)."""
        try:
            return self.columns[self.layout.index[name]]
        except KeyError:
            raise KeyError(f"no column {name!r}; the columns are {', '.join(self.layout.names)}") from None

    @property
    def names(self):
        return self.layout.names

    @property
    def labels(self):
        """The label column's values (ValueError when the data has no label)."""
        if self.layout.label is None:
            raise ValueError(f"{self.source}:{self.line}: this data was read without a label "
                             f"column; pass label= to the reader")
        return self[self.layout.label]

    def __repr__(self):
        return f"<Sequence of {len(self)} items from {self.source}:{self.line}>"


def labels_and_lengths(sequences):
    """``(y, lengths)`` of a list of sequences: every item's label, stacked in order
    (an array of str), and the number of items of each sequence (int64).

    A sequence is a :class:`Sequence` or any object with ``labels`` and a
    length (`fastprox.structured.io.AttributeSequence` too).
    """
    sequences = list(sequences)
    lengths = np.fromiter((len(s) for s in sequences), dtype=np.int64, count=len(sequences))
    y = np.array(list(chain.from_iterable(s.labels for s in sequences)), dtype=str)
    return y, lengths


def without_labels(sequences):
    """``sequences`` (a list of :class:`Sequence` of one layout) as read without a
    label: the same columns and kept lines, the layout's label None, what the reader
    gives with ``label=None`` for a file whose labels turn out absent (CoNLL-U's
    FEATS all ``_``), without reading the file again."""
    if not sequences:
        return []
    layout = sequences[0].layout
    layout = Layout(layout.names, None, layout.separator)
    return [Sequence(layout, s.columns, s.source, s.line, s.comments, s.extra, s.heads, s.closing)
            for s in sequences]
