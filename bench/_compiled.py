"""The benchmarks' own Cython modules (bench/_*.pyx), compiled by pyximport on first
import with setup.py's flags against the imported fastprox's .pxd and .h files
(`make_ext`, which each module's .pyxbld names), and cached in ``bench/_pyxbld/`` of this
checkout until the .pyx changes. Cython and a C compiler are needed; the library's
learners have their own kernels.

The build holds a lock on ``bench/_pyxbld/.lock``: processes importing a module at once
(pytest-xdist's workers on a fresh checkout) would otherwise write the same .c file
together, and one of them compile it half-written.
"""
import fcntl
import importlib
import os

import numpy as np
import pyximport
from setuptools import Extension

import fastprox

_build_dir = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_pyxbld")


def make_ext(modname, pyxfilename):
    """pyximport's Extension for a bench module: setup.py's flags, the installed
    fastprox's .pxd and .h files on the include path (the modules cimport its kernels)."""
    package = os.path.dirname(os.path.abspath(fastprox.__file__))
    return Extension(
        modname,
        [pyxfilename],
        include_dirs=[np.get_include(), os.path.dirname(package), package],
        define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")],
        extra_compile_args=["-O3", "-fno-math-errno", "-ffp-contract=off"],
        libraries=["m"],
    )


def compiled(module):
    """The bench module ``module`` (``"bench._lazy_l1"``), built first if needed."""
    os.makedirs(_build_dir, exist_ok=True)
    with open(os.path.join(_build_dir, ".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        importers = pyximport.install(language_level=3, build_dir=_build_dir)
        try:
            return importlib.import_module(module)
        finally:
            pyximport.uninstall(*importers)
