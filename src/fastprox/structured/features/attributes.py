"""Features written out as attributes: CRFsuite's files, one CSR row per item.

:class:`AttributeFeatures` turns `fastprox.structured.io.AttributeSequence`
objects into the learner's ``X``: an item's attributes are its features and
their weights its values (an attribute written twice in an item sums). With
a vocabulary (``bits=None``) columns number attributes by first appearance
in training and unseen attributes are dropped; with ``bits`` an attribute
goes to one of ``2**bits`` columns by the stable hash of its name
(`stable_hash`, then `fastprox.hashing`'s buckets), so no state is learnt.
Attributes carry no templates: all columns form one group.
"""
from itertools import chain, repeat

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.utils.validation import check_is_fitted

from ..._hashing import hash_indices
from .params import check_shared
from .rows import assemble
from .stable_hash import string_hashes

__all__ = ["AttributeFeatures"]

#: to_dict's format name and version.
FORMAT, VERSION = "fastprox.AttributeFeatures", 1


class AttributeFeatures(BaseEstimator):
    """Features of items given as named, weighted attributes.

    Parameters
    ----------
    bits : int or None, default=None
        None: number attributes with a vocabulary made by ``fit``. An
        integer in 1..62: hash them into ``2**bits`` columns.
    dtype : {np.float64, np.float32}, default=np.float64
        The values' type.
    batch_items : int, default=65536
        Items processed at once.

    Attributes
    ----------
    n_features_ : int
        The number of columns of ``X``.
    groups_ : ndarray of int64
        Zeros: all columns form one group.
    """

    def __init__(self, *, bits=None, dtype=np.float64, batch_items=1 << 16):
        self.bits = bits
        self.dtype = dtype
        self.batch_items = batch_items

    def fit(self, sequences, y=None):
        """Learn the vocabulary (nothing when hashing) from ``sequences``."""
        self._fit(sequences, transform=False)
        return self

    def fit_transform(self, sequences, y=None):
        """``fit`` then ``transform`` in one pass over ``sequences``."""
        return self._fit(sequences, transform=True)

    def transform(self, sequences):
        """The rows of all items of ``sequences``, stacked in order: a CSR
        matrix of n_items x ``n_features_`` with canonical rows."""
        check_is_fitted(self, "n_features_")
        return self._rows(sequences, grow=False)

    def get_feature_names_out(self, input_features=None):
        """The attribute of each column (vocabulary only)."""
        check_is_fitted(self, "n_features_")
        if self.bits is not None:
            raise ValueError("hashed attributes have no names; use bits=None for a vocabulary")
        return np.array(list(self.vocabulary_), dtype=object)

    def check_params(self):
        """ValueError for ``bits``, ``dtype`` or ``batch_items`` out of range (the
        fastprox command checks them before reading data)."""
        check_shared(self.dtype, self.bits, self.batch_items)

    def _fit(self, sequences, transform):
        self.check_params()
        self.vocabulary_ = {}
        if self.bits is not None:
            self._sized(1 << self.bits)
            return self.transform(sequences) if transform else None
        X = self._rows(sequences, grow=True)
        self._sized(len(self.vocabulary_))
        return X if transform else None

    def _sized(self, n_features):
        self.n_features_ = n_features

    @property
    def groups_(self):
        """Zeros (int64, length ``n_features_``): all columns form one group."""
        check_is_fitted(self, "n_features_")
        return np.zeros(self.n_features_, np.int64)

    def _rows(self, sequences, grow):
        parts, n, batch, size = [], 0, [], 0
        for sequence in chain(sequences, [None]):
            if sequence is not None:
                batch.append(sequence)
                size += len(sequence)
            if batch and (sequence is None or size >= self.batch_items):
                parts.append(self._batch(batch, grow))
                n += size
                batch, size = [], 0
        width = len(self.vocabulary_) if grow else self.n_features_
        return assemble(parts, n, width, self.dtype, sorted_rows=self.bits is not None)

    def _batch(self, batch, grow):
        """(indices, counts, data) of one batch's items."""
        names = list(chain.from_iterable(s.attributes for s in batch))
        counts = np.fromiter(chain.from_iterable(s.counts for s in batch), np.int64)
        weights = np.fromiter(chain.from_iterable(repeat(1.0, len(s.attributes)) if s.weights is None
                                                  else s.weights for s in batch), np.float64, len(names))
        if self.bits is not None:
            distinct = dict.fromkeys(names)
            hashes = dict(zip(distinct, string_hashes(distinct).view(np.int64).tolist()))
            keys = np.fromiter(map(hashes.__getitem__, names), np.int64, len(names))
            indptr = np.zeros(len(counts) + 1, np.int64)
            np.cumsum(counts, out=indptr[1:])
            data, indices, indptr, _ = hash_indices(weights, keys, indptr, self.bits)
            itype = np.int32 if self.bits <= 31 else np.int64
            return (np.frombuffer(indices, itype).astype(np.int64), np.diff(np.frombuffer(indptr, itype)),
                    np.frombuffer(data, np.float64))
        index = self.vocabulary_
        if grow:
            for name in dict.fromkeys(names):
                if name not in index:
                    index[name] = len(index)
            columns = np.fromiter(map(index.__getitem__, names), np.int64, len(names))
            return columns, counts, weights
        columns = np.fromiter(map(index.get, names, repeat(-1, len(names))), np.int64, len(names))
        known = columns >= 0
        row = np.repeat(np.arange(len(counts)), counts)
        return columns[known], np.bincount(row[known], minlength=len(counts)), weights[known]

    def to_dict(self):
        """The fitted state as plain data (no pickle); :meth:`from_dict` rebuilds it."""
        check_is_fitted(self, "n_features_")
        return {"format": FORMAT, "version": VERSION,
                "params": {"bits": None if self.bits is None else int(self.bits),
                           "dtype": np.dtype(self.dtype).name, "batch_items": int(self.batch_items)},
                "vocabulary": list(self.vocabulary_)}

    @classmethod
    def from_dict(cls, state):
        """The fitted extractor whose :meth:`to_dict` gave ``state``."""
        try:
            if state["format"] != FORMAT or state["version"] != VERSION:
                raise ValueError(f"not a {FORMAT} version {VERSION} state")
            p = state["params"]
            self = cls(bits=p["bits"], dtype=np.dtype(p["dtype"]).type, batch_items=p["batch_items"])
            self.vocabulary_ = {name: i for i, name in enumerate(state["vocabulary"])}
        except (KeyError, TypeError) as e:
            raise ValueError(f"incomplete or malformed {FORMAT} state ({e!r}); it must come "
                             f"from AttributeFeatures.to_dict") from None
        self._sized(len(self.vocabulary_) if self.bits is None else 1 << self.bits)
        return self
