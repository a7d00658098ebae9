"""Feature hashing (`fastprox.hashing`): the documented hash, collisions summed
within a row, canonical rows, every value and index type."""
import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings, strategies as st

from fastprox import ProxClassifier
from fastprox.hashing import hash_features, hash_indices

GOLDEN = np.uint64(0x9E3779B97F4A7C15)


def reference(X, bits):
    """The documented map with NumPy: bucket = (j * golden mod 2^64) >> (64 - bits),
    then scipy's sum of duplicates."""
    with np.errstate(over="ignore"):
        buckets = (X.indices.astype(np.uint64) * GOLDEN) >> np.uint64(64 - bits)
    H = sp.csr_matrix((X.data.astype(np.float64), buckets.astype(np.int64), X.indptr.astype(np.int64)),
                      shape=(X.shape[0], 1 << bits))
    H.sum_duplicates()
    return H


@settings(max_examples=200, deadline=None, derandomize=True)
@given(seed=st.integers(0, 2**32 - 1), bits=st.integers(1, 40), wide=st.booleans(),
       single=st.booleans(), density=st.sampled_from([0.0, 0.01, 0.2, 1.0]))
def test_hashing_matches_the_documented_map(seed, bits, wide, single, density):
    rng = np.random.default_rng(seed)
    n, d = int(rng.integers(1, 30)), int(rng.integers(1, 80))
    X = sp.random(n, d, density=density, format="csr", random_state=rng, dtype=np.float32 if single else np.float64)
    if wide:        # 64-bit ids anywhere in [0, 2^63)
        ids = rng.integers(0, 2**63 - 1, d, dtype=np.int64)
        X = sp.csr_matrix((X.data, ids[X.indices], X.indptr.astype(np.int64)), shape=(n, 2**63 - 1))
    H = hash_features(X, bits)
    ref = reference(X, bits)
    assert H.shape == ref.shape and H.has_canonical_format
    assert np.array_equal(H.indptr, ref.indptr) and np.array_equal(H.indices, ref.indices)
    np.testing.assert_allclose(H.data, ref.data, rtol=1e-6 if single else 1e-15)
    assert H.data.dtype == X.data.dtype
    assert H.indices.dtype == (np.int32 if bits <= 30 else np.int64)   # scipy widens at 2^31 columns
    _, _, _, collisions = hash_indices(X.data, X.indices.astype(X.indptr.dtype), X.indptr, bits)
    assert collisions == X.nnz - ref.nnz


def test_bits_out_of_range_are_refused():
    X = sp.random(3, 10, density=0.5, format="csr", random_state=0)
    for bits in (0, 63, -1, 10**20):
        with pytest.raises(ValueError, match="must be in \\[1, 62\\]"):
            hash_features(X, bits)


def test_a_stream_hashed_chunk_by_chunk_trains_as_one_matrix():
    """The same id goes to the same bucket in every chunk: partial_fit over hashed
    chunks equals one fit pass over the hashed matrix."""
    rng = np.random.default_rng(0)
    ids = rng.integers(0, 2**62, 500, dtype=np.int64)
    X = sp.random(3000, 500, density=0.02, format="csr", random_state=1)
    X = sp.csr_matrix((X.data, ids[X.indices], X.indptr.astype(np.int64)), shape=(3000, 2**62))
    y = np.where(rng.random(3000) < 0.4, 1, -1)
    whole = ProxClassifier(shuffle=False, eta0=0.3, delta=1.0).fit(hash_features(X, 12), y)
    stream = ProxClassifier(eta0=0.3, delta=1.0)
    for lo in range(0, 3000, 700):
        stream.partial_fit(hash_features(X[lo:lo + 700], 12), y[lo:lo + 700], classes=[-1, 1])
    assert whole.coef_.tobytes() == stream.coef_.tobytes()


@pytest.mark.parametrize("bits", [2.0, True, None, "8"])
def test_hash_features_refuses_bits_it_cannot_take(bits):
    """bits that are not an integer raise ValueError naming them (a float,
    None or a string raised Python's TypeError from the kernel's arguments)."""
    with pytest.raises(ValueError, match=r"bits=.* must be in \[1, 62\].*an integer"):
        hash_features(sp.csr_matrix(np.eye(2)), bits)


@pytest.mark.parametrize("X", [[[1, 0], [0, 2]], np.array([[1, 0], [0, 2]]), sp.csr_matrix(np.eye(2, dtype=bool)),
                               sp.csr_matrix(np.array([[1, 0], [0, 2]], dtype=np.int32))],
                         ids=["lists", "int64", "bool csr", "int32 csr"])
def test_hash_features_takes_integer_and_bool_values(X):
    """Integer and bool values hash as their float64 values (the kernel read only
    floats: a Cython buffer-type error)."""
    dense = np.asarray(X.toarray() if sp.issparse(X) else X, dtype=np.float64)
    np.testing.assert_array_equal(hash_features(X, 5).toarray(), hash_features(sp.csr_matrix(dense), 5).toarray())
