"""Build the Cython kernels: every ``src/fastprox/**/*.pyx`` becomes an extension
(``src/fastprox/a/b.pyx`` the module ``fastprox.a.b``).

Optimised with ``-O3`` (and ``-fno-math-errno``: sqrt compiles to one
instruction, no errno branch; libm linked by name, so that exp and log bind to
glibc's current versions rather than the errno-setting compatibility wrappers) and
portable by default; set ``FASTPROX_NATIVE=1`` to
add ``-march=native`` for a build tuned to (and only valid on) this CPU.
``-ffp-contract=off``: no product and sum fused into one FMA where the CPU has it
(a native build), which would skip a rounding the code relies on: a soft
threshold |w| - P (Q - Q_s) of a weight caught up to zero must give exactly 0.
"""
import os
from glob import glob

import numpy as np
from Cython.Build import cythonize
from setuptools import Extension, setup

flags = ["-O3", "-fno-math-errno", "-ffp-contract=off"]
if os.environ.get("FASTPROX_NATIVE") == "1":
    flags.append("-march=native")

extensions = [
    Extension(
        os.path.splitext(os.path.relpath(path, "src"))[0].replace(os.sep, "."),
        [path],
        include_dirs=[np.get_include()],
        define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")],
        extra_compile_args=flags,
        libraries=["m"],
    )
    for path in sorted(glob(os.path.join("src", "fastprox", "**", "*.pyx"), recursive=True))
]

setup(
    ext_modules=cythonize(
        extensions,
        compiler_directives={"language_level": "3", "cdivision": True, "initializedcheck": False},
    )
)
