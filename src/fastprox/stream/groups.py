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
from ..libsvm import Chunk

#: VW's prime of its interactions' hashing.
FNV_PRIME = 16777619


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
        """The chunk with its rows' interactions, ``width`` columns wide (canonical CSR)."""
        indptr = np.asarray(chunk.indptr, dtype=np.int64)
        indices = np.asarray(chunk.indices, dtype=np.int64)
        data = np.asarray(chunk.data, dtype=np.float64)
        rows = np.repeat(np.arange(len(indptr) - 1), np.diff(indptr))
        parts = [(rows, indices, data)]
        for k, term in enumerate(self.terms):
            r, h, v = self._term(term, rows, indices, data)
            parts.append((r, self.n + (k << self.bits) + (h & np.uint64((1 << self.bits) - 1)).astype(np.int64), v))
        r, c, v = (np.concatenate(column) for column in zip(*parts))
        order = np.lexsort((c, r))          # stable: a shared column's entries summed in the order above
        r, c, v = r[order], c[order], v[order]
        first = np.ones(len(r), dtype=bool)
        first[1:] = (r[1:] != r[:-1]) | (c[1:] != c[:-1])
        starts = np.flatnonzero(first)
        values = v[starts]                  # then the others added one by one, in order
        np.add.at(values, np.cumsum(first)[~first] - 1, v[~first])
        out_rows = r[starts]
        new_indptr = np.zeros(len(indptr), dtype=np.int64)
        np.cumsum(np.bincount(out_rows, minlength=len(indptr) - 1), out=new_indptr[1:])
        itype = np.int64 if max(self.width, len(starts)) > 2**31 - 1 else np.int32
        return Chunk(values, c[starts].astype(itype), new_indptr.astype(itype), chunk.y, chunk.qids, self.width)

    def _term(self, term, rows, indices, data):
        """(row, hash, value) of each tuple of ``term`` in the chunk, in VW's order."""
        member = [np.flatnonzero(self.groups[indices] == g) for g in term]   # entries per group, CSR order
        # a group's entries of a row: [lo, hi) in member[k] by the row's number
        r0 = rows[member[0]]
        tuples = member[0]                           # the entry of each tuple's last position
        h = np.uint64(FNV_PRIME) * indices[member[0]].astype(np.uint64)
        v = data[member[0]]
        t_rows = r0
        for k in range(1, len(term)):
            entries, entry_rows = member[k], rows[member[k]]
            lo = np.searchsorted(entry_rows, t_rows, "left")
            hi = np.searchsorted(entry_rows, t_rows, "right")
            if term[k] == term[k - 1]:               # a repeated group: from the place before on
                lo = np.searchsorted(entries, tuples, "left")
            counts = hi - lo
            parent = np.repeat(np.arange(len(t_rows)), counts)
            offsets = np.arange(len(parent)) - np.repeat(np.cumsum(counts) - counts, counts)
            chosen = entries[np.repeat(lo, counts) + offsets]
            c = indices[chosen].astype(np.uint64)
            h = h[parent] ^ c if k == len(term) - 1 else np.uint64(FNV_PRIME) * (h[parent] ^ c)
            v = v[parent] * data[chosen]
            t_rows, tuples = t_rows[parent], chosen
        return t_rows, h, v
