"""Structured outputs: sequences of items and dependency trees.

- :mod:`fastprox.structured.io`: readers of the field's text formats (CoNLL
  columns, CoNLL-U, CRFsuite attributes, LIBSVM with ``qid:``) and the writer
  that gives a file back with predictions in it;
- :mod:`fastprox.structured.features`: feature templates (CRF++'s files and a
  named mini-language) turned into one CSR row per item;
- :mod:`fastprox.structured.metrics`: per-item accuracy, ``conlleval``'s chunk
  scores and attachment scores.
"""
