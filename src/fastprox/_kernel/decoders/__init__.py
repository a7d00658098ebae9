"""Decoders of structured outputs (the contract's "Structured outputs"): Viterbi and
forward-backward over label sequences, Chu-Liu-Edmonds and Eisner over dependency
trees. ``.pxd`` files of inline, ``nogil`` functions over raw buffers; the caller
owns every buffer (sizes in each function's docstring) and ``fastprox._decoders``
is their Python face."""
