"""A row's (index, value) pairs sorted by index in place, without allocation (or its
columns packed with their places into words, sorted, the values gathered after): what
the readers that make canonical CSR rows (fastprox._hashing's buckets, fastprox._vw's
hashed features) share before they merge the indices met twice (`merge_sorted_words`)."""
from libc.stdint cimport int32_t, int64_t, uint32_t


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


ctypedef fused sortable:
    int32_t
    unsigned long long


cdef inline void insertion_sort(sortable* w, Py_ssize_t n) noexcept nogil:
    """Sort w[:n] by insertion: for short or nearly sorted rows (a row's packed words
    here, a parser arc's tags in fastprox._kernel.structured.arcs)."""
    cdef Py_ssize_t i, j
    cdef sortable word
    for i in range(1, n):
        word = w[i]
        j = i - 1
        while j >= 0 and w[j] > word:
            w[j + 1] = w[j]
            j -= 1
        w[j + 1] = word


cdef inline void digit_pass(unsigned long long* w, unsigned long long* d, Py_ssize_t n,
                            int shift, int width) noexcept nogil:
    """The words w[:n] into d, stably ordered by the ``width`` bits (at most 12) at ``shift``."""
    cdef Py_ssize_t count[4096]
    cdef Py_ssize_t i, total = 0, c, digits = <Py_ssize_t>1 << width, digit_mask = digits - 1
    for i in range(digits):
        count[i] = 0
    for i in range(n):
        count[(w[i] >> shift) & digit_mask] += 1
    for i in range(digits):
        c = count[i]
        count[i] = total
        total += c
    for i in range(n):
        c = (w[i] >> shift) & digit_mask
        d[count[c]] = w[i]
        count[c] += 1


cdef inline void two_digit_sort(unsigned long long* w, unsigned long long* t, Py_ssize_t n,
                                int low, int width) noexcept nogil:
    """Sort w[:n] (at most 2^32 words) by their key's two ``width``-bit digits (at most
    12 bits each) from bit ``low`` up, through t[:n]: `digit_pass` twice, with both
    digits counted in one read of the words and their starts summed in one loop."""
    cdef uint32_t first[4096]
    cdef uint32_t second[4096]
    cdef Py_ssize_t i, digits = <Py_ssize_t>1 << width
    cdef unsigned long long word, digit_mask = digits - 1
    cdef uint32_t c, d, total = 0, total2 = 0
    for i in range(digits):
        first[i] = 0
        second[i] = 0
    for i in range(n):
        word = w[i] >> low
        first[word & digit_mask] += 1
        second[(word >> width) & digit_mask] += 1
    for i in range(digits):
        c, d = first[i], second[i]
        first[i], second[i] = total, total2
        total, total2 = total + c, total2 + d
    for i in range(n):
        word = w[i]
        c = first[(word >> low) & digit_mask]
        first[(word >> low) & digit_mask] = c + 1
        t[c] = word
    for i in range(n):
        word = t[i]
        c = second[(word >> (low + width)) & digit_mask]
        second[(word >> (low + width)) & digit_mask] = c + 1
        w[c] = word


cdef inline void sort_packed(unsigned long long* w, unsigned long long* t, Py_ssize_t n,
                             int low) noexcept nogil:
    """Sort the words w[:n] through the scratch t[:n], each a key in its bits from ``low``
    up and its pair's position in the row below (so that the order of equal keys is the
    pairs': a stable sort of pairs moving one word each, their values gathered after):
    the rows of crossed namespaces, whose keys are hashes. Up to 32 words by insertion;
    up to 2048 with keys of at most 24 bits and at most 4 words per bucket of half
    their bits, two passes of half the bits each; else up to 2048, one pass on the
    keys' top bits (twice as many buckets as words, 128 to 4096) then insertion sort,
    which finds each word at or next to its place; beyond, 8 bits at a time from the
    key's least significant."""
    cdef Py_ssize_t i
    cdef unsigned long long bits = 0
    cdef int top = 0, width, shift
    if n <= 32:
        insertion_sort(w, n)
        return
    for i in range(n):
        bits |= w[i]
    bits >>= low
    while top < 64 - low and (bits >> top) != 0:
        top += 1
    width = (top + 1) // 2 if top > 1 else 1
    if n <= 2048 and top <= 24 and (<Py_ssize_t>1 << width) <= 4 * n:
        two_digit_sort(w, t, n, low, width)
        return
    if n <= 2048:
        width = 5
        while width < 12 and (<Py_ssize_t>1 << width) < 2 * n:
            width += 1
        width = min(width, top) if top > 0 else 1
        digit_pass(w, t, n, low + top - width, width)
        insertion_sort(t, n)
        for i in range(n):
            w[i] = t[i]
        return
    for shift in range(low, low + top, 8):
        digit_pass(w, t, n, shift, 8)
        for i in range(n):
            w[i] = t[i]


cdef inline Py_ssize_t merge_sorted_words(const unsigned long long* w, Py_ssize_t n, int low,
                                         const double* vals, int64_t* indices, double* data) noexcept nogil:
    """The words w[:n] sorted by `sort_packed` (a column in the bits from ``low`` up, a
    pair's place in ``vals`` below) into a canonical row: each column once in
    ``indices``, its pairs' values summed in order in ``data``; return the columns."""
    cdef unsigned long long place = (<unsigned long long>1 << low) - 1, word, last
    cdef Py_ssize_t i, out = 1
    if n == 0:
        return 0
    last = w[0] >> low
    indices[0], data[0] = <int64_t>last, vals[w[0] & place]
    for i in range(1, n):
        word = w[i]
        if word >> low == last:
            data[out - 1] += vals[word & place]
        else:
            last = word >> low
            indices[out] = <int64_t>last
            data[out] = vals[word & place]
            out += 1
    return out
