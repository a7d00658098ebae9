"""Kernels of structured outputs' features: ``arcs.pxd``, the features of every
candidate arc of a sentence as CSR rows (inline, ``nogil``, over raw buffers;
`fastprox._arcs` is their Python face, `fastprox.structured.arcs` compiles the
templates they read)."""
