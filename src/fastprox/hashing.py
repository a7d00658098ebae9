"""Feature hashing for data whose ids have no useful bound (already-hashed 64-bit
ids, say): every column index j goes to bucket h(j) of 2^bits, Vowpal Wabbit's
``-b``. The hash and what happens on a collision are `fastprox._hashing`'s."""
from numbers import Integral

from ._hashing import hash_indices

__all__ = ["hash_features", "hash_indices"]


def hash_features(X, bits):
    """X with its column ids hashed into 2^bits buckets (Vowpal Wabbit's ``-b``).

    For ids without a useful bound (already-hashed 64-bit ids): the same id lands
    in the same bucket in every call, so that the chunks of a stream hashed one
    by one agree; values of one bucket in a row are summed.

    Parameters
    ----------
    X : {array-like, sparse matrix} or LIBSVM reader chunk
        The rows, with their raw column ids; values other than float32 are
        hashed as float64.
    bits : int in [1, 62]
        The buckets' number is 2^bits.

    Returns
    -------
    scipy.sparse.csr_matrix or chunk of shape (n_rows, 2^bits)
        The hashed rows (a chunk for a chunk), each row canonical.
    """
    from ._validation import MAX_HASH_BITS, float_csr, kernel_arrays
    from .libsvm import Chunk
    if isinstance(bits, bool) or not isinstance(bits, Integral) or not 1 <= bits <= MAX_HASH_BITS:
        raise ValueError(f"hash bits={bits!r} must be in [1, {MAX_HASH_BITS}] (2^bits buckets), an integer.")
    if isinstance(X, Chunk):
        data, indices, indptr, _ = hash_indices(*kernel_arrays(X), bits)
        return Chunk(data, indices, indptr, X.y, X.qids, 1 << bits)
    import numpy as np
    import scipy.sparse as sp
    X = float_csr(X)
    data, indices, indptr, _ = hash_indices(*kernel_arrays(X), bits)
    H = sp.csr_matrix((np.asarray(data), np.asarray(indices), np.asarray(indptr)), shape=(X.shape[0], 1 << bits))
    H.has_sorted_indices = True
    return H
