"""Vowpal Wabbit's text format read into hashed CSR rows, as VW hashes them.

Format: one example per line, ``label [importance] ['tag]|namespace[:value]
feature[:value] ... |namespace ...``. Labels are numbers (binary -1/+1 or 0/1,
classes 1..K, regression targets), the importance weight a number >= 0 (a row's
sample weight), the tag the last word before the first ``|`` when it touches it or
starts with ``'``. A namespace is known by its first character; features are names
(strings or digits) with an optional ``:value`` (1 when absent; ``name:text``, a
string value, is hashed after the name, as VW does), the namespace's value
multiplying its features'. Columns are VW's hashes masked to ``hash_bits`` bits
(its ``-b``), so a feature lands in the column whose weight VW would use; ``-q``,
``--cubic`` and ``--interactions`` cross namespaces row by row, hashed as VW;
``ignore``, ``keep`` and ``ignore_linear`` select namespaces as VW's ``--ignore``,
``--keep`` and ``--ignore_linear`` do (`namespace_selection`). Blank lines are skipped; plain, gzip, bzip2 and xz sources are read alike.

Refused with a ``ValueError`` naming ``PATH:LINE`` and the fix: a label or
importance weight that is not a finite number (or a negative weight), more than
``label importance`` before the tag (VW's initial prediction, other label types),
no label, ``name:`` without a value, a value that starts as a number and is not
one, NaN and infinite values (VW reads NaN as 0 with a warning), a bad namespace
value, NUL bytes, a line longer than ``max_line_bytes``.

The package's module: `reader` (`load_vw`, `iter_vw_chunks`, `interaction_terms`,
`namespace_selection`);
the parser is fastprox._vw.
"""
from .reader import DEFAULT_BITS, VWChunk, interaction_terms, iter_vw_chunks, load_vw, namespace_selection

__all__ = ["load_vw", "iter_vw_chunks", "interaction_terms", "namespace_selection", "VWChunk", "DEFAULT_BITS"]
