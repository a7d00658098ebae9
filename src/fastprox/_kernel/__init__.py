"""Cython kernels grouped by job; each subpackage holds ``.pxd`` files of inline,
``nogil`` functions that compiled modules ``cimport`` (nothing here runs from Python)."""
