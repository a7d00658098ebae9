# cython: boundscheck=False, wraparound=False, cdivision=True
"""One-pass scans of label and value buffers, without NumPy: the kernel's targets
from labels, the two-class fast path, finiteness, sums of squares and running sums
in double-double."""
from cpython cimport array
import array as pyarray

from libc.math cimport fabs, floor
from fastprox._kernel.base.types cimport value_t
from fastprox._kernel.rules.average cimport dd_add

cdef array.array DOUBLES = pyarray.array("d")


def encode_targets(const double[::1] y not None, classes):
    """The kernel's targets for labels ``y`` over the sorted numbers ``classes``:
    +1 for the larger of two classes and -1 for the smaller, else the class's
    index (0 to K - 1) for K >= 3; a float64 ``array.array``. Raises ValueError
    naming the labels that are not among the classes."""
    cdef Py_ssize_t i, n = y.shape[0], K = len(classes), lo, hi, mid, bad = -1
    cdef array.array sorted_classes = array.clone(DOUBLES, K, zero=False)
    cdef array.array out = array.clone(DOUBLES, n, zero=False)
    cdef double* c = sorted_classes.data.as_doubles
    cdef double* t = out.data.as_doubles
    cdef double v
    for i in range(K):
        c[i] = classes[i]
    with nogil:
        for i in range(n):
            v = y[i]
            if K == 2:
                if v == c[1]:
                    t[i] = 1.0
                elif v == c[0]:
                    t[i] = -1.0
                else:
                    bad = i
                    break
            else:
                lo, hi = 0, K - 1
                while lo < hi:
                    mid = (lo + hi) // 2
                    if c[mid] < v:
                        lo = mid + 1
                    else:
                        hi = mid
                if c[lo] != v:
                    bad = i
                    break
                t[i] = <double>lo
    if bad >= 0:
        known = {c[i] for i in range(K)}
        unknown = sorted({y[i] for i in range(bad, n)} - known)
        raise ValueError(f"y has labels {unknown!r} not in classes_ {classes!r}.")
    return out


def two_labels(const double[::1] y not None):
    """(lo, hi, targets) when the labels y hold exactly two distinct values, both
    integers below 2^53 in magnitude: the targets -1 for lo and +1 for hi (a float64
    ``array.array``), in one pass over y that GCC vectorizes (a label's test and its
    target without a branch: the labels are data, and their branches mispredicted),
    once a scan has met the second value. None otherwise (one class, three or more,
    NaN, fractions), for `fastprox._core`'s general path to encode or refuse."""
    cdef Py_ssize_t i, n = y.shape[0]
    cdef array.array out
    cdef double* t
    cdef double a, b, lo, hi, v, sign, other = 0.0
    if n == 0:
        return None
    a = b = y[0]
    for i in range(1, n):
        if y[i] != a:
            b = y[i]
            break
    lo, hi = min(a, b), max(a, b)
    if not (lo < hi and fabs(lo) < 2.0**53 and fabs(hi) < 2.0**53
            and lo == floor(lo) and hi == floor(hi)):
        return None
    out = array.clone(DOUBLES, n, zero=False)
    t = out.data.as_doubles
    with nogil:
        for i in range(n):
            v = y[i]
            sign = 1.0 if v == hi else -1.0
            t[i] = sign
            other = other if v == (hi if sign > 0.0 else lo) else 1.0     # (doubles vectorize)
    if other:
        return None
    return lo, hi, out


def all_finite(values):
    """Whether a float32 or float64 buffer holds no NaN or infinity: one pass and no
    temporary (x * 0 is 0 for every finite x, NaN otherwise)."""
    if memoryview(values).itemsize == 4:
        return _sum8[float](values, False) == 0.0
    return _sum8[double](values, False) == 0.0


def sum_squares(values):
    """The sum of the squares of a float32 or float64 buffer, in float64: what
    ``eta0='auto'`` and ``delta='auto'`` scale AdaGrad's steps by. The same values
    give the same figure, whatever their type."""
    if memoryview(values).itemsize == 4:
        return _sum8[float](values, True)
    return _sum8[double](values, True)


cdef double _sum8(const value_t[::1] v, bint squares) noexcept:
    """The sum of x * x (squares) or of x * 0 over v, in float64: eight partial sums
    in a fixed order (one sum would wait on each addition's latency)."""
    cdef double s[8]
    cdef double x
    cdef Py_ssize_t i, k, n = v.shape[0], body = n - n % 8
    with nogil:
        for k in range(8):
            s[k] = 0.0
        for i in range(0, body, 8):
            for k in range(8):
                x = v[i + k]
                s[k] += x * (x if squares else 0.0)
        for i in range(body, n):
            x = v[i]
            s[i - body] += x * (x if squares else 0.0)
        return ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]))


def running_sums(const double[::1] x not None):
    """The running sums of ``x`` in double-double, as the kernel keeps the prefix sum
    of P (`average.dd_add`, the same additions, so the same bits): (hi, lo), two
    float64 arrays of len(x) + 1, (0, 0) then the sum after each term. For the
    upgrade of version 11's averaged l2 rows (`model_io.upgrades.prefix_stamps`)."""
    cdef Py_ssize_t i, n = x.shape[0]
    cdef array.array hi = array.clone(DOUBLES, n + 1, zero=True), lo = array.clone(DOUBLES, n + 1, zero=True)
    cdef double* h = hi.data.as_doubles
    cdef double* l = lo.data.as_doubles
    with nogil:
        for i in range(n):
            h[i + 1], l[i + 1] = h[i], l[i]
            dd_add(h + i + 1, l + i + 1, x[i])
    return hi, lo
