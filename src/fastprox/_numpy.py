"""NumPy, imported the first time one of its names is used.

`fastprox train` and `fastprox info` on LIBSVM files use none of it: the
reader, the kernel and the model writer hold their numbers in the standard
library's ``array.array``. Importing NumPy is over half of those commands'
start-up (about 60 of 110 ms here; Vowpal Wabbit, the peer on small files,
pays none), so the modules on their path reach NumPy through ``np`` below
rather than importing it. Everywhere else the first use imports it as usual.
"""
from importlib import import_module


class _NumPy:
    """The numpy module, imported on first attribute access."""

    def __getattr__(self, name):
        return getattr(import_module("numpy"), name)


np = _NumPy()
