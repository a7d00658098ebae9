"""One template's vocabulary: its atoms' codes packed into int64 keys, keys
mapped to columns.

A feature of a template is the tuple of its atoms' codes; the tuple is
packed exactly, in mixed radix, into one int64 key: ``key = (c_1 * R_2 +
c_2) * R_3 + c_3 ...`` with ``R_a`` the number of values of atom a's view
when fitting ended. Where the product of the radices would pass
``KEY_LIMIT`` (word trigrams over a vast vocabulary), the partial key is
first replaced by its rank among the partial keys seen in training (a
*fold*), so that keys stay exact whatever the vocabulary. The keys kept are
sorted, and a feature's column within the template's block is its key's
rank: features are in the order of their atoms' codes (codes number values
by first appearance), found by binary search.
"""
import numpy as np

__all__ = ["KeyTable", "KEY_LIMIT"]

#: The largest product of radices packed without a fold (below 2^63).
KEY_LIMIT = 1 << 62
#: Keys below this bound are counted in an array when fitting (no sort).
_COUNTED = 1 << 22


class KeyTable:
    """The keys of one template and their columns.

    Parameters
    ----------
    radices : list of int
        Each atom's number of codes.
    folds : dict, optional
        atom position -> sorted int64 partial keys (made by :meth:`pack`).
    keys : ndarray of int64, optional
        The sorted keys of the features kept (made by :meth:`fit`).
    """
    __slots__ = ("radices", "folds", "keys", "bound")

    def __init__(self, radices, folds=None, keys=None):
        self.radices = [int(r) for r in radices]
        self.folds = {int(a): np.asarray(k, np.int64) for a, k in (folds or {}).items()}
        self.keys = np.zeros(0, np.int64) if keys is None else np.asarray(keys, np.int64)
        self.bound = None       # every key is below it (set by pack)

    def pack(self, codes, n, fitting=False):
        """The keys of ``n`` items whose atoms have ``codes`` (one int64 array per
        atom, -1 for a value unseen in training), and which are valid (no
        unseen value, no partial key unseen in training). With ``fitting``
        the folds are made from these items."""
        key = np.zeros(n, np.int64)
        valid = np.ones(n, bool)
        bound = 1
        for a, (code, radix) in enumerate(zip(codes, self.radices)):
            valid &= code >= 0
            if bound * radix > KEY_LIMIT:
                if fitting:
                    self.folds[a] = np.unique(key[valid])
                key, found = _find(self.folds[a], key)
                valid &= found
                bound = len(self.folds[a])
            key = key * radix + code
            bound *= radix
        self.bound = bound
        return key, valid

    def fit(self, key, valid, min_count):
        """Keep the features of the valid keys (packed last) seen at least
        ``min_count`` times; returns the column of each of these items (-1
        for none). Keys below a small bound are counted in an array (linear
        time), others sorted."""
        seen = key[valid]
        if self.bound <= max(_COUNTED, 2 * len(seen)):
            counts = np.bincount(seen, minlength=self.bound)
            kept = counts >= max(min_count, 1)
            self.keys = np.flatnonzero(kept).astype(np.int64)
            rank = np.where(kept, np.cumsum(kept) - 1, -1)[seen]
        else:
            keys, inverse, counts = np.unique(seen, return_inverse=True, return_counts=True)
            kept = counts >= min_count
            self.keys = keys[kept]
            rank = np.where(kept, np.cumsum(kept) - 1, -1)[inverse.reshape(-1)]
        columns = np.full(len(key), -1, np.int64)
        columns[valid] = rank
        return columns

    def lookup(self, key, valid):
        """The column of each key (-1 where invalid or not kept)."""
        at, found = _find(self.keys, key)
        return np.where(valid & found, at, -1)

    def check(self):
        """ValueError unless the folds and keys are what :meth:`pack` and
        :meth:`fit` can make from these radices: folds exactly where the
        packing would pass KEY_LIMIT, every array strictly increasing and
        within its bound (a table read from a file is checked so)."""
        bound = 1
        for a, radix in enumerate(self.radices):
            if radix < 1:
                raise ValueError(f"radix {radix} of atom {a} is not positive")
            if (bound * radix > KEY_LIMIT) != (a in self.folds):
                raise ValueError(f"the folds do not match the radices at atom {a}")
            if a in self.folds:
                _check_sorted(self.folds[a], bound, f"the partial keys before atom {a}")
                bound = len(self.folds[a])
            bound *= radix
        _check_sorted(self.keys, bound, "the keys")

    def unpack(self, columns):
        """The atoms' codes of the features at ``columns`` (for their names):
        one int64 array per atom."""
        key = self.keys[columns]
        codes = []
        for a in reversed(range(len(self.radices))):
            key, code = np.divmod(key, self.radices[a])
            codes.append(code)
            if a in self.folds:
                key = self.folds[a][key]
        return codes[::-1]


def _check_sorted(keys, bound, what):
    if keys.ndim != 1 or (len(keys) and (keys[0] < 0 or keys[-1] >= bound or (np.diff(keys) <= 0).any())):
        raise ValueError(f"{what} are not strictly increasing integers in 0..{bound - 1}")


def _find(sorted_keys, key):
    """(positions of ``key`` in ``sorted_keys``, whether each was found)."""
    if not len(sorted_keys):
        return np.zeros(len(key), np.int64), np.zeros(len(key), bool)
    at = np.searchsorted(sorted_keys, key)
    clipped = np.minimum(at, len(sorted_keys) - 1)
    return clipped, sorted_keys[clipped] == key
