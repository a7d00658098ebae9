"""Structured outputs: sequences of items and dependency trees.

- :mod:`fastprox.structured.io`: readers of the field's text formats (CoNLL
  columns, CoNLL-U, CRFsuite attributes, LIBSVM with ``qid:``) and the writer
  that gives a file back with predictions in it;
- :mod:`fastprox.structured.features`: feature templates (CRF++'s files and a
  named mini-language) turned into one CSR row per item;
- :mod:`fastprox.structured.metrics`: per-item accuracy, ``conlleval``'s chunk
  scores and attachment scores;
- :class:`StructuredLearner` (:mod:`fastprox.structured.learner`): the low-level
  learner whose steps take the gradient a decoder gives, under every rule and
  penalty;
- :class:`SequenceTagger` (:mod:`fastprox.structured.tagger`): a linear-chain
  labeller (structured perceptron, structured SVM, CRF) on that learner, its
  training and decoding compiled;
- :class:`DependencyParser` (:mod:`fastprox.structured.parser`): an
  arc-factored dependency parser (Chu-Liu-Edmonds or Eisner; perceptron or
  structured SVM) on that learner, from arc rows or from CoNLL-U treebanks by
  the arc templates of :mod:`fastprox.structured.arcs`, its loop compiled.

(The classes are loaded on first use, as the package's other names.)
"""
from importlib import import_module

__all__ = ["StructuredLearner", "SequenceTagger", "DependencyParser"]

_MODULES = {"StructuredLearner": ".learner", "SequenceTagger": ".tagger", "DependencyParser": ".parser"}


def __getattr__(name):
    if name in _MODULES:
        return getattr(import_module(_MODULES[name], __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(__all__))
