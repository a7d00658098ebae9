"""Arc features for dependency parsing: every candidate arc of a sentence, one CSR
row each, hashed by templates (`templates`), a block of columns per template.

The parser's layout: a sentence of ``n`` words has ``(n + 1) * n`` rows, the
arc ``h -> m`` (``h = 0..n``, 0 the root; ``m = 1..n``) in row ``h * n + m - 1``;
rows with ``h == m`` are empty. Values are 1. Rows are made one sentence at a
time in reused buffers by the compiled kernel (`fastprox._arcs`), so a pass
over a corpus holds one sentence's arcs; the training loop can call the
kernel from C per sentence (`fastprox._arcs.ArcKernel`, ``kernel``).
"""
import numpy as np
import scipy.sparse as sp

from ..._arcs import ArcKernel
from ..io import read_conllu
from .plan import compile_plan
from .templates import select
from .tokens import TokenEncoder

__all__ = ["ArcFeatures"]

#: to_dict's format name and version.
FORMAT, VERSION = "fastprox.ArcFeatures", 1


class ArcFeatures:
    """The features of candidate dependency arcs.

    Parameters
    ----------
    templates : iterable of str, str or None, default=None
        The templates to use, by name (see
        `fastprox.structured.arcs.TEMPLATES`), or a named set of
        `fastprox.structured.arcs.SETS` ("all", "mkl-ewt", "mkl-ewt-feats",
        "mkl-ewt-feats-ctx", "ewt-no-prefix"); None for all 136.
        Their blocks follow the table's order whatever the order given.
    bits : int, default=24
        Hash into at most ``2**bits`` columns (1..31), a block of
        ``2**(bits - ceil(log2 T))`` per template for ``T`` templates.
    lowercase : bool, default=False
        Lowercase words (and their prefixes) before hashing.
    pos : {"UPOS", "XPOS", "UPOS+FEATS"}, default="UPOS"
        What the POS atoms read: a CoNLL-U field, or UPOS and FEATS joined by
        ``|`` (a finer tag from UD's own columns).

    Attributes
    ----------
    template_names : tuple of str
        The templates, in block order.
    n_features : int
        The number of columns.
    offsets : ndarray of int64
        Each template's first column, then ``n_features``.
    kernel : fastprox._arcs.ArcKernel
        The compiled templates and one sentence's buffers.
    """

    def __init__(self, templates=None, *, bits=24, lowercase=False, pos="UPOS"):
        self.templates = select(templates)
        self.template_names = tuple(t.name for t in self.templates)
        self.bits, self.lowercase, self.pos = bits, bool(lowercase), pos
        self.encoder = TokenEncoder(lowercase, pos)
        plan = compile_plan(self.templates, bits)
        self.offsets = plan["offsets"]
        self.n_features = int(self.offsets[-1])
        self.kernel = ArcKernel(plan)

    @property
    def groups(self):
        """The template of each column (int64, ``n_features`` long), made when
        read: the group ids of the group penalties."""
        return np.repeat(np.arange(len(self.templates), dtype=np.int64), np.diff(self.offsets))

    def tokens(self, sentence):
        """The token codes of ``sentence`` (a `Sequence` from `read_conllu`, or a
        mapping of FORM, LEMMA and the POS field to strings)."""
        return self.encoder.sentence(sentence)

    def corpus(self, sentences):
        """``(tokens, starts)``: the token codes of all ``sentences`` stacked and
        where each begins, to run passes from without reading the text again
        (`TokenEncoder.corpus`)."""
        return self.encoder.corpus(sentences)

    def _codes(self, sentence):
        return sentence if isinstance(sentence, np.ndarray) else self.tokens(sentence)

    def rows(self, sentence):
        """``(indices, indptr)`` of the sentence's arcs (a sentence, or its token
        codes as `tokens` gives them): int32 columns, int64 row starts."""
        return self.kernel.rows(self._codes(sentence))

    def transform(self, sentence):
        """The sentence's arcs as a CSR matrix of ``(n + 1) * n`` rows and
        ``n_features`` columns, values 1 (float64)."""
        indices, indptr = self.rows(sentence)
        X = sp.csr_matrix((np.ones(len(indices)), indices, indptr), shape=(len(indptr) - 1, self.n_features))
        X.has_sorted_indices = True
        return X

    def scores(self, sentence, w):
        """The arc scores of the sentence under the weights ``w`` (float64,
        ``n_features`` long): ``S[h, m] = <w, phi_hm>`` in an ``(n + 1) x (n + 1)``
        array, 0 on the diagonal and in column 0 (the decoders' input)."""
        return self.kernel.scores(self._codes(sentence), np.ascontiguousarray(w, np.float64))

    def iter_rows(self, sentences):
        """``(sentence, indices, indptr)`` for each of ``sentences``, lazily: one
        sentence's arcs at a time."""
        for sentence in sentences:
            yield (sentence,) + self.rows(sentence)

    def iter_conllu(self, source):
        """`iter_rows` over the sentences of a CoNLL-U file (gold heads read and
        checked: `read_conllu` with ``heads=True``), read lazily."""
        return self.iter_rows(read_conllu(source, heads=True))

    @staticmethod
    def settings(templates, bits, lowercase, pos):
        """The extractor's parameters as it keeps them (templates by name), to compare
        two settings: equal settings make the same columns."""
        return {"templates": tuple(t.name for t in select(templates)), "bits": bits,
                "lowercase": bool(lowercase), "pos": pos}

    def to_dict(self):
        """The parameters as plain data; :meth:`from_dict` rebuilds the extractor."""
        return {"format": FORMAT, "version": VERSION, "templates": list(self.template_names),
                "bits": int(self.bits), "lowercase": self.lowercase, "pos": self.pos}

    @classmethod
    def from_dict(cls, state):
        """The extractor whose :meth:`to_dict` gave ``state``."""
        if not isinstance(state, dict) or (state.get("format"), state.get("version")) != (FORMAT, VERSION):
            raise ValueError(f"not a {FORMAT} version {VERSION} state")
        try:
            return cls(state["templates"], bits=state["bits"], lowercase=state["lowercase"], pos=state["pos"])
        except KeyError as e:
            raise ValueError(f"incomplete {FORMAT} state: no {e.args[0]!r}") from None

    def __reduce__(self):
        return type(self).from_dict, (self.to_dict(),)

    def __repr__(self):
        return f"ArcFeatures({len(self.templates)} templates, bits={self.bits})"
