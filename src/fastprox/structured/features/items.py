"""The items of a batch of sequences, flattened for NumPy.

Each column needed is factorized once per batch: every item gets the code of
its string among the batch's distinct strings (one dict operation per item),
and the views then map the distinct strings only. An atom's value at offset
``o`` is the value of item ``i + o`` when that lies in the same sequence,
else the placeholder ``_B-k`` / ``_B+k`` for the distance ``k`` beyond its
first or last item (:meth:`Items.shifted`): shifted index arrays with the
sequence boundaries padded, no loop over items.
"""
from collections.abc import Mapping
from itertools import chain

import numpy as np

__all__ = ["Items", "item_count"]


def item_count(sequence):
    """The number of items of a sequence: its length, or for a mapping column
    name -> strings the length of its columns."""
    if isinstance(sequence, Mapping):
        return len(next(iter(sequence.values()), ()))
    return len(sequence)


class Items:
    """Flattened items of consecutive sequences of ``lengths`` items each.

    Attributes
    ----------
    lengths : ndarray of int64
        Items per sequence.
    n : int
        Items in all.
    local : dict
        column -> (int64 codes of the items' strings, the distinct strings
        in code order), filled by :meth:`of`.
    """

    def __init__(self, lengths):
        self.lengths = np.asarray(lengths, np.int64)
        self.n = int(self.lengths.sum())
        self.local = {}
        starts = np.cumsum(self.lengths) - self.lengths
        self._position = np.arange(self.n) - np.repeat(starts, self.lengths)
        self._size = np.repeat(self.lengths, self.lengths)

    @classmethod
    def of(cls, sequences, columns):
        """The items of ``sequences`` (each a mapping column name -> strings,
        such as a `fastprox.structured.io.Sequence`), ``columns`` factorized."""
        items = cls(np.fromiter(map(item_count, sequences), np.int64, len(sequences)))
        for column in columns:
            try:
                tokens = list(chain.from_iterable(s[column] for s in sequences))
            except KeyError:
                raise ValueError(f"a sequence has no column {column!r}, which the templates read; "
                                 f"give every sequence the columns it was fitted on") from None
            if len(tokens) != items.n:
                raise ValueError(f"the sequences' column {column!r} has {len(tokens)} values for "
                                 f"{items.n} items; every column needs one value per item")
            strings = dict.fromkeys(tokens)     # the distinct strings, in order of appearance
            for code, string in enumerate(strings):
                strings[string] = code
            codes = np.fromiter(map(strings.__getitem__, tokens), np.int64, items.n)
            items.local[column] = codes, list(strings)
        return items

    def shifted(self, values, offset, before, after):
        """``values`` (one per item) read at ``offset`` items from each item.

        ``before[k - 1]`` stands for the position ``k`` items before a
        sequence, ``after[k - 1]`` for ``k`` items after it (``k`` up to
        ``|offset|``).
        """
        if offset == 0 or self.n == 0:
            return values
        target = self._position + offset
        out = values[np.clip(np.arange(self.n) + offset, 0, self.n - 1)]
        if offset < 0:
            outside = target < 0
            out[outside] = before[-target[outside] - 1]
        else:
            outside = target >= self._size
            out[outside] = after[(target - self._size)[outside]]
        return out
