"""The kernel's layers, one subpackage each, of ``.pxd`` files of inline, ``nogil``
functions (and C headers) that the compiled modules ``cimport`` (``_kernels.pyx``, the
compiled entry, builds them into one unit): `base` (types, buffers, state and layout,
CSR rows), `losses`, `rules` (proxes, schedules, FOBOS, AdaGrad, normalized, Berhu, the
dual rules, the intercepts), `groups`, `lanes` (SIMD), `steps` (the general step, the
fast rows, the structured step), `decoders` and `structured` (structured outputs),
`text` (a double's repr, for the LIBSVM writers).
`out_of_line.py` generates the declarations of `out_of_line.h` from markers in the
.pxd files. Nothing here runs from Python at run time.
"""
