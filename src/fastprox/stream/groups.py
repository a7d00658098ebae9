"""LIBSVM groups crossed: ``-q``, ``--cubic`` and ``--interactions`` over the groups
of ``--groups`` (one group id per feature), computed a chunk of rows at a time
inside the reader, never for the whole file.

A term ``g_1,...,g_r`` crosses, in each row, every feature of group g_1 with every
one of g_2, ... as VW crosses namespaces (fastprox._vw): a group named twice gives
each unordered tuple once, diagonal included (the second index starts at the
first's place among the row's features of that group); the crossed feature's value
is the product of the values, its hash VW's chain over the features' zero-based
columns ``c``: ``h = 16777619 * c_1``, then ``h = 16777619 * (h ^ c_k)`` down the
middle, ``h ^ c_r`` for the last (mod 2^64), masked to its low ``bits`` bits.

The model's columns: the group file's n features as they are, then a block of
2^bits columns per term, in the terms' order: term k's crossed feature ``h`` is
column ``n + k * 2^bits + (h & (2^bits - 1))``. Each crossed column is a group of
its own for the group penalties, column ``n + j`` group ``G + j`` where
``G = max(groups) + 1`` (the file's groups first), weight 1: a hash bucket mixes
unrelated tuples, so the penalty acts on the crossed weights one by one (under
l1_l2 as l1 would), at O(1) a step, where a block of 2^bits columns as one group
would cost 2^bits a row. A row's entries that share a column are summed, in the
order: the row's own features, then each term's tuples in VW's order.
"""
from .._numpy import np
from .._vw import cross_groups
from ..libsvm import Chunk


class GroupCrossing:
    """The crossing of ``terms`` (tuples of group ids, fastprox._interactions.terms_of)
    over ``groups`` (the group file's ids, one per feature) into blocks of
    ``2**bits`` columns (the module's docstring)."""

    def __init__(self, groups, terms, bits):
        self.groups = np.asarray(groups, dtype=np.int64)
        self.terms, self.bits = [tuple(t) for t in terms], int(bits)
        self.n = len(self.groups)
        known = set(self.groups.tolist())
        for term in self.terms:
            missing = sorted(set(term) - known)
            if missing:
                raise ValueError(f"the interaction {','.join(map(str, term))} names group(s) "
                                 f"{','.join(map(str, missing))}, which no feature of --groups has; name "
                                 f"groups of the --groups file")
        # the groups the terms name as slots 0, 1, ... (in order of their ids), -1 for the others
        named = sorted({g for term in self.terms for g in term})
        self.slot = np.full(self.n, -1, dtype=np.int64)
        for s, g in enumerate(named):
            self.slot[self.groups == g] = s
        self.slot_terms = [tuple(named.index(g) for g in term) for term in self.terms]

    @property
    def width(self):
        """The model's columns: the features, then a block of 2^bits per term."""
        return self.n + len(self.terms) * (1 << self.bits)

    @property
    def file_groups(self):
        """The group file's number of groups, G = max(groups) + 1."""
        return int(self.groups.max(initial=-1)) + 1

    def model_groups(self):
        """The model's group ids: the file's, then each crossed column a group of its own."""
        crossed = self.file_groups + np.arange(self.width - self.n, dtype=np.int64)
        return np.concatenate([self.groups, crossed])

    def model_weights(self, weights):
        """The model's group weights: the file's ``weights`` (one per group of the file;
        None: all 1), then 1 for each crossed column."""
        if weights is None:
            return None
        if len(weights) != self.file_groups:
            raise ValueError(f"{len(weights)} group weights, but the groups have {self.file_groups} groups: "
                             f"give one per group of the groups file (each crossed column is a group of its "
                             f"own, of weight 1)")
        return np.concatenate([np.asarray(weights, dtype=np.float64), np.ones(self.width - self.n)])

    def crossed(self, chunk):
        """The chunk with its rows' interactions, ``width`` columns wide (canonical CSR;
        fastprox._vw.cross_groups)."""
        data, indices, indptr = cross_groups(
            np.asarray(chunk.data, dtype=np.float64), np.asarray(chunk.indices, dtype=np.int64),
            np.asarray(chunk.indptr, dtype=np.int64), self.slot, self.slot_terms, self.bits, self.n)
        itype = np.int64 if max(self.width, len(data)) > 2**31 - 1 else np.int32
        return Chunk(data, indices.astype(itype), indptr.astype(itype), chunk.y, chunk.qids, self.width,
                     chunk.offset)
