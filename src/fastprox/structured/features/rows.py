"""Assemble the extractors' columns into one CSR matrix, one row per item.

Indices are int32 while the width and the number of stored values fit,
int64 beyond, as scipy and the LIBSVM reader choose; values are float64 or
float32 as asked.
"""
import numpy as np
import scipy.sparse as sp

__all__ = ["by_template", "assemble"]

_INT32_MAX = np.iinfo(np.int32).max


def by_template(columns):
    """``(indices, counts)`` of items whose features are ``columns``: one int64
    array per template (a column per item, -1 for none), in template order.
    The templates' columns increase with the template (one block each), so
    each row's indices come out sorted."""
    if not columns:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    table = np.stack(columns, axis=1)
    present = table >= 0
    return table[present], present.sum(axis=1)


def assemble(parts, n_items, n_features, dtype, sorted_rows):
    """The CSR matrix of ``parts``, a list of ``(indices, counts, data or None)``
    for consecutive items (data None: every value 1). ``sorted_rows``: each
    row's indices are sorted and unique already; otherwise values of a
    repeated index are summed (as the contract sums them)."""
    indices = np.concatenate([p[0] for p in parts]) if parts else np.zeros(0, np.int64)
    counts = np.concatenate([p[1] for p in parts]) if parts else np.zeros(0, np.int64)
    if any(p[2] is not None for p in parts):
        data = np.concatenate([np.ones(len(p[0]), dtype) if p[2] is None else np.asarray(p[2], dtype)
                               for p in parts])
    else:
        data = np.ones(len(indices), dtype)
    wide = max(n_features, len(indices)) > _INT32_MAX
    itype = np.int64 if wide else np.int32
    indptr = np.zeros(n_items + 1, itype)
    np.cumsum(counts, out=indptr[1:])
    X = sp.csr_matrix((data, indices.astype(itype, copy=False), indptr), shape=(n_items, n_features))
    if X.indices.dtype != itype:    # scipy narrows the indices of a matrix without rows
        X.indices, X.indptr = X.indices.astype(itype), X.indptr.astype(itype)
    if sorted_rows:
        X.has_sorted_indices = True
    else:
        X.sum_duplicates()
    return X
