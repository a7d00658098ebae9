"""Readers and the writer of sequence data.

| format | reader | gives |
|---|---|---|
| CoNLL columns (CoNLL-2000, CoNLL-2003, CRF++) | :func:`read_conll` | :class:`Sequence` |
| CoNLL-U (Universal Dependencies) | :func:`read_conllu` | :class:`Sequence` (``heads``) |
| CRFsuite attributes | :func:`read_crfsuite` | :class:`AttributeSequence` |
| LIBSVM with ``qid:`` | :func:`load_libsvm_sequences`, :func:`iter_libsvm_sequences` | ``X, y, lengths, qids`` |

Every reader takes a path (plain, gzip, bzip2 or xz), ``-`` for standard
input or a binary file object, streams (one sequence in memory at a time,
or one chunk for LIBSVM) and stops at malformed input with a ``ValueError``
whose message starts ``NAME:LINE:`` and says how to fix it.
:func:`write_sequences` writes CoNLL and CoNLL-U sequences back, with a
column replaced or appended; :func:`parsed` gives a CoNLL-U sentence a
parser's heads (and the relations an unlabelled parse has) to write;
:func:`labels_and_lengths` stacks labels.
"""
from .conll import read_conll
from .conllu import FIELDS, parsed, read_conllu
from .crfsuite import AttributeSequence, read_crfsuite
from .libsvm_qid import iter_libsvm_sequences, load_libsvm_sequences
from .sequence import Layout, Sequence, labels_and_lengths
from .writer import write_sequences

__all__ = ["read_conll", "read_conllu", "FIELDS", "parsed", "read_crfsuite", "AttributeSequence",
           "load_libsvm_sequences", "iter_libsvm_sequences", "Sequence", "Layout",
           "labels_and_lengths", "write_sequences"]
