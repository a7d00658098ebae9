# The Learner's buffers: the standard library's arrays of zeros (on transparent huge
# pages when large), the threshold from which a state's zeros are left to the system
# to map at their first touch (`pages.ZeroPages`), and the C pointers the context
# keeps into them.
from cpython cimport array
from libc.string cimport memset

cdef extern from *:
    """
    #if defined(__linux__)
    #include <sys/mman.h>
    #endif
    /* Arrays from this size on are asked for huge pages (NumPy's threshold). */
    #define FASTPROX_HUGE_BYTES ((size_t)1 << 22)
    /* States from this size on are calloc'd (pages mapped at their first touch)
       rather than zeroed here: see LAZY_BYTES. */
    #define FASTPROX_LAZY_BYTES ((size_t)1 << 28)
    /* Advise transparent huge pages for the whole pages of [p, p + n), before the
       first touch; a no-op where the system has no such advice. */
    static void FASTPROX_HUGEPAGES(void *p, size_t n)
    {
    #if defined(__linux__) && defined(MADV_HUGEPAGE)
        uintptr_t lo = ((uintptr_t)p + 4095) & ~(uintptr_t)4095, hi = (uintptr_t)p + n;
        if (hi > lo)
            madvise((void *)lo, hi - lo, MADV_HUGEPAGE);
    #endif
    }
    """
    const size_t HUGE_BYTES "FASTPROX_HUGE_BYTES"
    # The size (256 MiB) from which a state whose untouched rows are all zeros is
    # calloc'd (`pages.ZeroPages`): zeroing it here would write, and hold, every page
    # of 2^26 features (1.5 GiB under the defaults) for a model that may touch a few
    # thousand; below it, zeroing on huge pages keeps a densely used state's
    # translations few (a random read over 400 MB took 16 ns on huge pages and 27 ns
    # on 4 KiB ones on this machine's Xeon).
    const size_t LAZY_BYTES "FASTPROX_LAZY_BYTES"
    void FASTPROX_HUGEPAGES(void* p, size_t n) noexcept nogil


cdef inline array.array zeros_of(Py_ssize_t n, array.array kind):
    """n zeros of kind's type; from HUGE_BYTES on, on transparent huge pages where
    the system offers them (as NumPy's large arrays are): a 16 MB state then faults in
    8 pages instead of 4096, which took 10-25 ms a fit on this machine."""
    cdef array.array a = array.clone(kind, n, zero=False)
    cdef size_t size = <size_t>n * kind.ob_descr.itemsize
    if size >= HUGE_BYTES:
        FASTPROX_HUGEPAGES(a.data.as_voidptr, size)
    if size:                    # (an empty array may have no buffer at all)
        memset(a.data.as_voidptr, 0, size)
    return a


cdef inline bint on_touch(size_t n) noexcept nogil:
    """Whether n float64 zeros are LAZY_BYTES or more: calloc'd (`pages.ZeroPages`), their
    pages left for the system to map at their first touch, rather than zeroed here."""
    return n * sizeof(double) >= LAZY_BYTES


cdef inline array.array zeros(Py_ssize_t n):
    """n float64 zeros (`zeros_of`)."""
    return zeros_of(n, array.array("d"))


cdef inline array.array zeros_int64(Py_ssize_t n):
    """n int64 zeros (`zeros_of`)."""
    return zeros_of(n, array.array("q"))


cdef inline double* double_ptr(a):
    """The first of a flat float64 buffer's values (NULL if it has none)."""
    cdef double[::1] flat = a
    return &flat[0] if flat.shape[0] else NULL


cdef inline long long* int64_ptr(a):
    """The first of a flat int64 buffer's values (NULL if it has none)."""
    cdef long long[::1] flat = a
    return &flat[0] if flat.shape[0] else NULL
