"""``LazyL1``, the lazy FOBOS l1 step of Table 1 (``bench/_lazy_l1.pyx``), compiled
by pyximport on first import (Cython and a C compiler needed; the build, with
setup.py's flags, is in ``bench/_lazy_l1.pyxbld``, and is cached in
``bench/_pyxbld/`` of this checkout until the .pyx changes). It serves the benchmark only: the
library's learners have their own kernels.

The build holds a lock on ``bench/_pyxbld/.lock``: processes importing it at once
(pytest-xdist's workers on a fresh checkout) would otherwise write the same .c file
together, and one of them compile it half-written.
"""
import fcntl
import os

import pyximport

_build_dir = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_pyxbld")
os.makedirs(_build_dir, exist_ok=True)
with open(os.path.join(_build_dir, ".lock"), "w") as _lock:
    fcntl.flock(_lock, fcntl.LOCK_EX)
    _importers = pyximport.install(language_level=3, build_dir=_build_dir)
    try:
        from bench._lazy_l1 import LazyL1
    finally:
        pyximport.uninstall(*_importers)

__all__ = ["LazyL1"]
