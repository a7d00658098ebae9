"""``LazyL1``, the lazy FOBOS l1 step of Table 1 (``bench/_lazy_l1.pyx``), compiled
by pyximport on first import (Cython and a C compiler needed; the build, with
setup.py's flags, is in ``bench/_lazy_l1.pyxbld``, and is cached in
``bench/_pyxbld/`` of this checkout until the .pyx changes). It serves the benchmark only: the
library's learners have their own kernels.
"""
import os

import pyximport

_importers = pyximport.install(language_level=3,
                               build_dir=os.path.join(os.path.dirname(os.path.abspath(__file__)), "_pyxbld"))
try:
    from bench._lazy_l1 import LazyL1
finally:
    pyximport.uninstall(*_importers)

__all__ = ["LazyL1"]
