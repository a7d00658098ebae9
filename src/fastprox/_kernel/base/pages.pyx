# cython: language_level=3
"""Float64 zeros whose pages the system maps at their first touch: the state of a
large model (`buffers.LAZY_BYTES` and more), such as the 2^26 to 2^28 hashed
features that Vowpal Wabbit's users ask for with ``-b``.

``calloc`` takes a block that large from fresh anonymous pages, which the system
zeroes and maps only where they are first written: a model whose training touches a
few thousand of 2^28 features holds their pages, not gigabytes, as Vowpal Wabbit's
own calloc'd weights do. Reading an untouched page maps the system's shared page of
zeros and takes no memory. The values are those of any other buffer of zeros, so the
models' bits do not depend on where their state lies.
"""
from cpython.buffer cimport PyBUF_FORMAT, PyBUF_ND, PyBUF_STRIDES
from libc.stdlib cimport calloc, free
import array

cdef char* FORMAT = b"d"          # (the buffer's format: one C double)


cdef class ZeroPages:
    """``n`` float64 zeros, allocated by ``calloc``, exported through the buffer
    protocol as a writable one-dimensional buffer of format ``"d"`` (what the
    Learner's arrays are read through: typed memoryviews, ``memoryview``,
    ``np.frombuffer``); ``len`` and ``itemsize`` as an ``array.array`` of doubles has
    them, and a pickle of one is an ``array.array``.

    Parameters
    ----------
    n : int
        The number of values (0 or more).
    """
    cdef double* data
    cdef Py_ssize_t n
    cdef Py_ssize_t shape[1]
    cdef Py_ssize_t strides[1]

    def __cinit__(self, Py_ssize_t n):
        if n < 0:
            raise ValueError(f"n={n} must be >= 0.")
        self.data = <double*>calloc(n if n else 1, sizeof(double))
        if self.data == NULL:
            raise MemoryError(f"no room for {n} float64 values ({8 * n} bytes)")
        self.n = n
        self.shape[0] = n
        self.strides[0] = sizeof(double)

    def __dealloc__(self):
        free(self.data)

    def __getbuffer__(self, Py_buffer* view, int flags):
        view.buf = self.data
        view.obj = self
        view.len = self.n * sizeof(double)
        view.readonly = 0
        view.itemsize = sizeof(double)
        view.format = NULL
        if flags & PyBUF_FORMAT:
            view.format = FORMAT
        view.ndim = 1
        view.shape = self.shape if flags & PyBUF_ND else NULL
        view.strides = self.strides if flags & PyBUF_STRIDES == PyBUF_STRIDES else NULL
        view.suboffsets = NULL
        view.internal = NULL

    def __releasebuffer__(self, Py_buffer* view):
        pass

    def __len__(self):
        return self.n

    @property
    def itemsize(self):
        """The bytes of one value (8)."""
        return sizeof(double)

    def __reduce__(self):
        return array.array, ("d", bytes(memoryview(self)))
