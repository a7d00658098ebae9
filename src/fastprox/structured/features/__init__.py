"""Features of the items of sequences: one CSR row per item.

- :class:`TemplateFeatures`: templates over a sequence's columns, from CRF++
  template files (:func:`read_crfpp`, :func:`parse_crfpp`; ``"conll2000"``
  is CRF++'s chunking template, ``"ud-pos"`` a CoNLL-U word's tags from
  FORM: `NAMED`) or feature expressions
  (``["w[0]", "w[-1]|w[0]", "lower(w[0])", "suffix3(w[0])"]``), numbered by a
  vocabulary or hashed, a block of columns per template (``groups_``);
- :class:`AttributeFeatures`: CRFsuite's attributes, features as written.

Both are scikit-learn-style transformers (``fit``, ``transform``,
``fit_transform``) over an iterable of sequences, picklable, with their state
as plain data (``to_dict`` / ``from_dict``) for pickle-free model files.
"""
from .attributes import AttributeFeatures
from .crfpp import parse_crfpp, read_crfpp
from .defaults import NAMED
from .expressions import parse_expressions
from .extractor import TemplateFeatures
from .functions import FUNCTIONS, shape
from .templates import Atom, Template, Templates

__all__ = ["TemplateFeatures", "AttributeFeatures", "parse_crfpp", "read_crfpp",
           "parse_expressions", "NAMED", "FUNCTIONS", "shape", "Atom", "Template", "Templates"]
