"""A column seen through functions (``w``, ``lower(w)``): its values and their
codes or hashes.

A view maps strings to what keys are made of: in vocabulary mode a code,
the string's rank of first appearance in the training data (the vocabulary
grows while fitting and is frozen after; an unseen string has no code, -1);
in hashing mode a stable 64-bit hash (`stable_hash`). Strings are mapped once
per batch of items, each distinct string once, never once per item.
"""
from itertools import repeat

import numpy as np

from .functions import resolve
from .stable_hash import string_hashes

__all__ = ["View"]


class View:
    """The column ``column`` through ``functions`` (names, innermost first).

    Attributes
    ----------
    index : dict
        The vocabulary, string -> code (vocabulary mode; empty in hashing mode).
    """
    __slots__ = ("column", "functions", "index")

    def __init__(self, column, functions=(), vocabulary=()):
        self.column, self.functions = column, tuple(functions)
        self.index = {s: code for code, s in enumerate(vocabulary)}

    @property
    def key(self):
        return self.column, self.functions

    def values(self, strings):
        """The view's values of column strings: the functions applied in turn."""
        for name in self.functions:
            f = resolve(name)
            strings = [f(s) for s in strings]
        return strings

    def codes(self, values, grow):
        """The codes of ``values`` (int64), new values added when ``grow``, else
        coded -1."""
        index = self.index
        if grow:
            for v in values:
                if v not in index:
                    index[v] = len(index)
            return np.fromiter(map(index.__getitem__, values), np.int64, len(values))
        return np.fromiter(map(index.get, values, repeat(-1, len(values))), np.int64, len(values))

    @staticmethod
    def hashes(values):
        """The stable hashes of ``values`` (uint64)."""
        return string_hashes(values)

    @property
    def vocabulary(self):
        """The known values, in code order."""
        return list(self.index)

    def __repr__(self):
        inner = self.column
        for name in self.functions:
            inner = f"{name}({inner})"
        return f"View({inner})"
