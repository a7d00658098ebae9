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

Before Cython runs, the declarations of the kernel's out-of-line functions are
generated from the markers of its .pxd files (src/fastprox/_kernel/out_of_line.py)
into build/generated/fastprox_out_of_line.h, which _kernel/out_of_line.h includes,
and the code enums from the registry into _kernel/base/codes.pxi and
_kernel/losses/codes.pxi (src/fastprox/_kernel/codes.py), which the .pxd include.
"""
import os
from glob import glob

import importlib.util

import numpy as np
from Cython.Build import cythonize
from setuptools import Extension, setup


def kernel_tool(src, name):
    """The module ``src/fastprox/_kernel/<name>.py``, read from its file (the package is
    not built yet)."""
    spec = importlib.util.spec_from_file_location(name, os.path.join(src, "fastprox", "_kernel", f"{name}.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def generate_out_of_line(src, out_dir):
    """Write the out-of-line declarations (src/fastprox/_kernel/out_of_line.py) to
    out_dir, if they changed."""
    text = kernel_tool(src, "out_of_line").header(src)
    os.makedirs(out_dir, exist_ok=True)
    path = os.path.join(out_dir, "fastprox_out_of_line.h")
    if not os.path.exists(path) or open(path).read() != text:
        with open(path, "w") as f:
            f.write(text)


GENERATED = os.path.join("build", "generated")
generate_out_of_line("src", GENERATED)
kernel_tool("src", "codes").write("src")   # the code enums from the registry

flags = ["-O3", "-fno-math-errno", "-ffp-contract=off"]
if os.environ.get("FASTPROX_NATIVE") == "1":
    flags.append("-march=native")

extensions = [
    Extension(
        os.path.splitext(os.path.relpath(path, "src"))[0].replace(os.sep, "."),
        [path],
        include_dirs=[np.get_include(), os.path.join("src", "fastprox"), GENERATED],
        define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")],
        extra_compile_args=flags,
        libraries=["m"],
    )
    for path in sorted(glob(os.path.join("src", "fastprox", "**", "*.pyx"), recursive=True))
]

# Every core for Cython and the C compiler, also in pip's build of the wheel (which
# passes no -j): the kernels are a dozen large modules, compiled one at a time otherwise.
CORES = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1

setup(
    ext_modules=cythonize(
        extensions,
        nthreads=CORES,
        compiler_directives={"language_level": "3", "cdivision": True, "initializedcheck": False},
    ),
    options={"build_ext": {"parallel": CORES}},
)
