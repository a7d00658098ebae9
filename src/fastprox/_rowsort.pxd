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


cdef inline void insertion_sort_pairs(long long* k, double* v, Py_ssize_t n) noexcept nogil:
    """Sort the pairs (k, v) by k by insertion: for short or nearly sorted rows."""
    cdef Py_ssize_t i, j
    cdef long long key
    cdef double val
    for i in range(1, n):
        key, val = k[i], v[i]
        j = i - 1
        while j >= 0 and k[j] > key:
            k[j + 1], v[j + 1] = k[j], v[j]
            j -= 1
        k[j + 1], v[j + 1] = key, val


cdef inline void sort_pairs(long long* k, double* v, Py_ssize_t n) noexcept nogil:
    """Sort the pairs (k, v) by k: insertion sort for the short rows of sparse data,
    a heap sort beyond (n log n, no recursion, no allocation)."""
    cdef Py_ssize_t i
    if n <= 32:
        insertion_sort_pairs(k, v, n)
        return
    for i in range(n // 2 - 1, -1, -1):
        sift_pair(k, v, i, n)
    for i in range(n - 1, 0, -1):
        k[0], k[i] = k[i], k[0]
        v[0], v[i] = v[i], v[0]
        sift_pair(k, v, 0, i)


cdef inline void digit_pass(long long* k, double* v, long long* dk, double* dv, Py_ssize_t n,
                            int shift, int width) noexcept nogil:
    """The pairs (k, v) into (dk, dv), stably ordered by the ``width`` bits (at most 12)
    of their keys at ``shift``."""
    cdef Py_ssize_t count[4096]
    cdef Py_ssize_t i, total = 0, c, digits = <Py_ssize_t>1 << width, digit_mask = digits - 1
    for i in range(digits):
        count[i] = 0
    for i in range(n):
        count[(k[i] >> shift) & digit_mask] += 1
    for i in range(digits):
        c = count[i]
        count[i] = total
        total += c
    for i in range(n):
        c = (k[i] >> shift) & digit_mask
        dk[count[c]] = k[i]
        dv[count[c]] = v[i]
        count[c] += 1


cdef inline void radix_sort_pairs(long long* k, double* v, long long* tk, double* tv,
                                  Py_ssize_t n) noexcept nogil:
    """Sort the pairs (k, v) by k (keys >= 0) through the scratch (tk, tv) of n pairs:
    the long rows of crossed namespaces, whose keys are hashes, which insertion sort
    would take in quadratic time and heap sort with a mispredicted branch per
    comparison. Up to 2048 pairs: keys of at most 24 bits with at most 4 pairs per
    bucket of half their bits take two passes of half the bits each (no insertion
    sort, whose moves cost more than the second pass); else one pass on
    the keys' top bits (found from their bits; twice as many buckets as pairs, 128 to
    4096), then insertion sort, which finds each key at or next to its place; beyond,
    8 bits at a time from the least significant. Short rows go to `sort_pairs`."""
    cdef Py_ssize_t i
    cdef long long bits = 0
    cdef int top = 0, width = 5, shift
    if n <= 32:
        sort_pairs(k, v, n)
        return
    for i in range(n):
        bits |= k[i]
    while top < 63 and (bits >> top) != 0:
        top += 1
    width = (top + 1) // 2 if top > 1 else 1
    if n <= 2048 and top <= 24 and (<Py_ssize_t>1 << width) <= 4 * n:
        # two passes of half the bits each: sorted (stably) and back in (k, v), no insertion sort
        digit_pass(k, v, tk, tv, n, 0, width)
        digit_pass(tk, tv, k, v, n, width, width)
        return
    if n <= 2048:
        width = 5
        while width < 12 and (<Py_ssize_t>1 << width) < 2 * n:
            width += 1
        width = min(width, top) if top > 0 else 1
        digit_pass(k, v, tk, tv, n, top - width, width)
        for i in range(n):
            k[i], v[i] = tk[i], tv[i]
        insertion_sort_pairs(k, v, n)
        return
    for shift in range(0, top, 8):
        digit_pass(k, v, tk, tv, n, shift, 8)
        for i in range(n):
            k[i], v[i] = tk[i], tv[i]
