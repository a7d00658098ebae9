"""Features of candidate dependency arcs (the contract's "Trees"): McDonald,
Crammer & Pereira (2005)'s first-order templates, hashed, a block of columns
per template, every arc of a sentence at a time.

- :mod:`~fastprox.structured.arcs.templates`: the template table
  (:data:`TEMPLATES`, names like ``hw.hp.mw.mp`` and ``hp.bp.mp.dd``) and
  :func:`select`;
- :mod:`~fastprox.structured.arcs.tokens`: sentences to stable 64-bit codes
  (:class:`TokenEncoder`);
- :mod:`~fastprox.structured.arcs.plan`: the templates compiled for the
  kernel, and the hash that places a feature in its block;
- :mod:`~fastprox.structured.arcs.extractor`: :class:`ArcFeatures`, rows of a
  sentence's arcs, scores, passes over CoNLL-U files.
"""
from .extractor import ArcFeatures
from .templates import BASES, DISTANCE_BINS, KINDS, MKL_EWT, SETS, TEMPLATES, select
from .tokens import TokenEncoder

__all__ = ["ArcFeatures", "TokenEncoder", "TEMPLATES", "MKL_EWT", "SETS", "BASES", "KINDS", "DISTANCE_BINS",
           "select"]
