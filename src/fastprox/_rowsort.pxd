"""A row's (index, value) pairs sorted by index in place, without allocation: what
the readers that make canonical CSR rows (fastprox._hashing's buckets, fastprox._vw's
hashed features) share before they merge the indices met twice."""


cdef inline void sift_pair(long long* k, double* v, Py_ssize_t root, Py_ssize_t n) noexcept nogil:
    cdef Py_ssize_t child
    while 2 * root + 1 < n:
        child = 2 * root + 1
        if child + 1 < n and k[child + 1] > k[child]:
            child += 1
        if k[root] >= k[child]:
            return
        k[root], k[child] = k[child], k[root]
        v[root], v[child] = v[child], v[root]
        root = child


cdef inline void sort_pairs(long long* k, double* v, Py_ssize_t n) noexcept nogil:
    """Sort the pairs (k, v) by k: insertion sort for the short rows of sparse data,
    a heap sort beyond (n log n, no recursion, no allocation)."""
    cdef Py_ssize_t i, j
    cdef long long key
    cdef double val
    if n <= 32:
        for i in range(1, n):
            key, val = k[i], v[i]
            j = i - 1
            while j >= 0 and k[j] > key:
                k[j + 1], v[j + 1] = k[j], v[j]
                j -= 1
            k[j + 1], v[j + 1] = key, val
        return
    for i in range(n // 2 - 1, -1, -1):
        sift_pair(k, v, i, n)
    for i in range(n - 1, 0, -1):
        k[0], k[i] = k[i], k[0]
        v[0], v[i] = v[i], v[0]
        sift_pair(k, v, 0, i)
