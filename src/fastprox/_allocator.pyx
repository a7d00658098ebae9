# cython: language_level=3
"""The C allocator's thresholds (glibc's ``mallopt`` and ``malloc_trim``), for the
processes that stream chunks: the command line's streaming commands
(`keep_freed_memory`) and the Dask workers while a run's tasks work
(`fastprox.dask._malloc`).

A stream's reader makes every chunk's arrays anew (values, indices, labels: a few
megabytes each at 10,000 rows) and the trainer frees them once it has learnt from
them. glibc's malloc hands such blocks back to the system: those above its mmap
threshold as soon as they are freed, the others when the free space at the top of
its heap passes its trim threshold. Its own rule raises both thresholds to the
blocks a program frees, but a stream with several chunks in flight (the reader's
read-ahead, the chunk being learnt) still frees more than it keeps, and a variable
in the environment (``MALLOC_TRIM_THRESHOLD_``, which Dask's nanny sets) turns the
rule off. The next chunk then takes fresh pages, which the system zeroes and maps one
fault at a time: a pass over a large file faults in pages in proportion to the bytes
it reads (docs/performance.md gives the figures). `LIFTED` keeps those blocks for
the next chunk. The calls change the whole process: the library itself never makes
them in a Python user's process.
"""

cdef extern from *:
    """
    #if defined(__GLIBC__)
    #include <malloc.h>
    #define FASTPROX_GLIBC 1
    #define FASTPROX_MALLOPT(param, value) mallopt((param), (value))
    #define FASTPROX_MALLOC_TRIM(pad) malloc_trim(pad)
    #else
    #define FASTPROX_GLIBC 0
    #define FASTPROX_MALLOPT(param, value) 0
    #define FASTPROX_MALLOC_TRIM(pad) 0
    #endif
    """
    const int FASTPROX_GLIBC
    int FASTPROX_MALLOPT(int param, int value) nogil
    int FASTPROX_MALLOC_TRIM(size_t pad) nogil

#: Whether the C library is glibc: without it every call here does nothing.
GLIBC = FASTPROX_GLIBC == 1
#: mallopt's parameters (malloc.h).
M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3
#: The thresholds that keep a stream's chunks: the most glibc's own rule reaches on
#: 64-bit (the mmap threshold's ceiling, 32 MiB, and twice it kept before a trim).
LIFTED = {M_TRIM_THRESHOLD: 64 << 20, M_MMAP_THRESHOLD: 32 << 20}


def mallopt(int param, int value):
    """glibc's ``mallopt(param, value)``: 1 if it took the setting, 0 if not (and
    always 0 elsewhere than glibc)."""
    return FASTPROX_MALLOPT(param, value)


def malloc_trim(size_t pad):
    """glibc's ``malloc_trim(pad)``: the free memory at the top of the heap (beyond
    ``pad`` bytes) given back to the system; 1 if any was (0 elsewhere than glibc)."""
    return FASTPROX_MALLOC_TRIM(pad)


def keep_freed_memory():
    """Set the `LIFTED` thresholds for the rest of the process.

    The arrays of a stream's next chunk then reuse the memory of the chunks before
    it: the process keeps at most what its chunks in flight already took, and their
    pages are not faulted in and zeroed again chunk after chunk. The model's bits do
    not depend on where its memory lies.

    Returns
    -------
    bool
        Whether malloc took both settings (False elsewhere than glibc).
    """
    return all(mallopt(param, value) == 1 for param, value in LIFTED.items())
