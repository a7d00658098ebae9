# cython: boundscheck=False, wraparound=False, cdivision=True
"""Feature hashing: every index j of a row mapped into 2^bits buckets.

    h(j) = (j * 0x9E3779B97F4A7C15 mod 2^64) >> (64 - bits)

Knuth's multiplicative (Fibonacci) hashing of the index as an unsigned 64-bit
integer: one multiplication and one shift, the same bucket for the same index
on every machine and in every version. It spreads consecutive ids and ids that
differ in their high bits (already-hashed 64-bit ids) over all buckets. It is
not a cryptographic hash: ids chosen to collide collide.

Collisions are not hidden: two features of a row that land in one bucket become
one feature whose value is their sum (the contract sums a repeated index, as
scipy does), and two features of different rows that share a bucket share its
weight, as in Vowpal Wabbit's ``-b``. `collisions` counts the first kind.
The rows come back canonical (sorted, unique indices), as the kernel reads them.
"""
from cpython cimport array
import array as pyarray

from libc.stdint cimport uint64_t

from fastprox._rowsort cimport sort_pairs

cdef uint64_t GOLDEN = 0x9E3779B97F4A7C15ULL

ctypedef fused value_t:
    float
    double

ctypedef long long longlong

ctypedef fused index_t:
    int
    long long


cdef inline long long bucket(long long j, int shift) noexcept nogil:
    return <long long>((<uint64_t>j * GOLDEN) >> shift)


def hash_indices(data, indices, indptr, int bits):
    """(data, indices, indptr, collisions): CSR arrays whose indices are the hashed
    buckets of `indices`, each row sorted with the values of a bucket met twice
    summed; `collisions` counts the entries so merged. The arrays are the standard
    library's ``array.array`` (values of `data`'s type; int32 indices for bits <= 31,
    else int64), so the command line hashes without NumPy."""
    if not 1 <= bits <= 62:
        raise ValueError(f"hash bits={bits} must be in [1, 62] (2^bits buckets).")
    is_float = memoryview(data).itemsize == 4
    wide = memoryview(indices).itemsize == 8
    if is_float and wide:
        return _hash[float, longlong](data, indices, indptr, bits)
    if is_float:
        return _hash[float, int](data, indices, indptr, bits)
    if wide:
        return _hash[double, longlong](data, indices, indptr, bits)
    return _hash[double, int](data, indices, indptr, bits)


cdef _hash(const value_t[::1] data, const index_t[::1] indices, const index_t[::1] indptr, int bits):
    cdef Py_ssize_t n_rows = indptr.shape[0] - 1, i, lo, hi, nz, out = 0, start, longest = 0
    cdef int shift = 64 - bits
    cdef bint narrow = bits <= 31
    cdef long long collisions = 0
    cdef array.array new_data = array.clone(pyarray.array("f" if value_t is float else "d"),
                                            indices.shape[0], zero=False)
    cdef array.array new_indices = array.clone(pyarray.array("i" if narrow else "q"), indices.shape[0],
                                               zero=False)
    cdef array.array new_indptr = array.clone(pyarray.array("i" if narrow else "q"), n_rows + 1,
                                              zero=False)
    for i in range(n_rows):
        longest = max(longest, indptr[i + 1] - indptr[i])
    cdef array.array keys = array.clone(pyarray.array("q"), longest, zero=False)
    cdef array.array vals = array.clone(pyarray.array("d"), longest, zero=False)
    cdef long long* k = keys.data.as_longlongs
    cdef double* v = vals.data.as_doubles
    cdef value_t* values = <value_t*>new_data.data.as_voidptr
    cdef int* i32 = new_indices.data.as_ints
    cdef long long* i64 = new_indices.data.as_longlongs
    cdef int* p32 = new_indptr.data.as_ints
    cdef long long* p64 = new_indptr.data.as_longlongs
    with nogil:
        for i in range(n_rows + 1):
            if i:
                lo, hi = indptr[i - 1], indptr[i]
                for nz in range(lo, hi):
                    k[nz - lo] = bucket(indices[nz], shift)
                    v[nz - lo] = data[nz]
                sort_pairs(k, v, hi - lo)
                start = out
                for nz in range(hi - lo):
                    if out > start and k[nz] == (i32[out - 1] if narrow else i64[out - 1]):
                        values[out - 1] = <value_t>(values[out - 1] + v[nz])
                        collisions += 1
                        continue
                    if narrow:
                        i32[out] = <int>k[nz]
                    else:
                        i64[out] = k[nz]
                    values[out] = <value_t>v[nz]
                    out += 1
            if narrow:
                p32[i] = <int>out
            else:
                p64[i] = out
    array.resize(new_data, out)
    array.resize(new_indices, out)
    return new_data, new_indices, new_indptr, collisions
