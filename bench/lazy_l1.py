"""``LazyL1``, the lazy FOBOS l1 step of Table 1 (``bench/_lazy_l1.pyx``), compiled
by pyximport on first import (`bench._compiled`: Cython and a C compiler needed, the
build cached in ``bench/_pyxbld/`` of this checkout until the .pyx changes). It serves
the benchmark only: the library's learners have their own kernels.
"""
from bench._compiled import compiled

LazyL1 = compiled("bench._lazy_l1").LazyL1

__all__ = ["LazyL1"]
