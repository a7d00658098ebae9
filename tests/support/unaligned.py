"""Arrays at unaligned addresses, as a message's buffers can hold them (Dask moves
blocks in messages): for the tests that such inputs read as their values."""
import numpy as np


def unaligned(a):
    """``a``'s values in an array at an odd address."""
    out = np.frombuffer(memoryview(bytearray(a.nbytes + 1))[1:], dtype=a.dtype)
    out[:] = a
    assert not out.flags.aligned
    return out
