"""The words of sentences as the arc kernel reads them: one row of stable 64-bit
hashes per position, one column per attribute.

A sentence of ``n`` words becomes an ``(n + 3) x 5`` uint64 array: row 0 is
position -1 (:data:`~fastprox.structured.arcs.templates.START`), row 1 the
root (:data:`~fastprox.structured.arcs.templates.ROOT`), rows 2..n+1 the words
1..n, row n+2 position n+1 (:data:`~fastprox.structured.arcs.templates.END`);
the columns are :data:`~fastprox.structured.arcs.templates.KINDS`: the word
(FORM, lowercased if asked), its LEMMA, the word's first five characters, its
POS (UPOS or XPOS), its UPOS and FEATS joined (``UPOS|FEATS``). Each value is the string's stable hash
(`fastprox.structured.features.stable_hash.string_hashes`), the same on every
run and machine, so no vocabulary is needed and a corpus can be encoded in
pieces. The encoder remembers the hashes of the strings it met, up to
:data:`CACHE_STRINGS` of them (then it starts afresh), so that memory stays
bounded over endless text.

A corpus is the sentences' arrays stacked, with ``starts`` (int64, one more
than the sentences): sentence s is rows ``starts[s]`` to ``starts[s + 1]``.
It costs 40 bytes a position, far less than the sentences' arcs.
"""
from itertools import chain

import numpy as np

from ..features.stable_hash import string_hashes
from .templates import END, KINDS, ROOT, START

__all__ = ["TokenEncoder", "POS_FIELDS", "PREFIX", "CACHE_STRINGS"]

#: What the POS atoms may read: a CoNLL-U field, or the UPOS joined to the word's
#: morphological features (FEATS, ``UPOS|FEATS``: "VERB|Tense=Past|VerbForm=Part"),
#: a finer tag made of gold UD columns (the distinctions XPOS draws, in UD's terms).
POS_FIELDS = ("UPOS", "XPOS", "UPOS+FEATS")
#: The length of the word prefixes (``f`` atoms), McDonald et al.'s 5.
PREFIX = 5
#: The most strings whose hashes an encoder keeps.
CACHE_STRINGS = 1 << 20


class TokenEncoder:
    """Sentences to token codes.

    Parameters
    ----------
    lowercase : bool, default=False
        Lowercase the word (and so its prefix) before hashing.
    pos : {"UPOS", "XPOS", "UPOS+FEATS"}, default="UPOS"
        What ``p`` atoms read: a CoNLL-U field, or UPOS and FEATS joined by ``|``.
    """

    def __init__(self, lowercase=False, pos="UPOS"):
        if pos not in POS_FIELDS:
            raise ValueError(f"pos={pos!r}: the POS atoms read one of {', '.join(POS_FIELDS)}")
        self.lowercase, self.pos = bool(lowercase), pos
        self._hashes = {}

    def strings(self, sentence):
        """The sentence's attributes as strings: a list of ``n + 3`` rows, each
        the :data:`KINDS` of a position, placeholders included. ``sentence`` is a
        `Sequence` from `read_conllu` or a mapping of the fields FORM, LEMMA and
        the POS field to sequences of strings."""
        try:
            forms, lemmas = sentence["FORM"], sentence["LEMMA"]
            tags = ([u + "|" + f for u, f in zip(sentence["UPOS"], sentence["FEATS"])]
                    if self.pos == "UPOS+FEATS" else sentence[self.pos])
        except KeyError as e:
            raise ValueError(f"a sentence without the field {e.args[0]!r}; arc features read FORM, "
                             f"LEMMA and {self.pos} (CoNLL-U sentences have them)") from None
        if not len(forms) == len(lemmas) == len(tags) >= 1:
            raise ValueError(f"a sentence needs at least one word and as many FORM, LEMMA and "
                             f"{self.pos} values ({len(forms)}, {len(lemmas)}, {len(tags)})")
        if self.lowercase:
            forms = [w.lower() for w in forms]
        words = [(w, lemma, w[:PREFIX], tag, u + "|" + f)
                 for w, lemma, tag, u, f in zip(forms, lemmas, tags, *self._upos_feats(sentence, len(forms)))]
        return [(START,) * len(KINDS), (ROOT,) * len(KINDS)] + words + [(END,) * len(KINDS)]

    @staticmethod
    def _upos_feats(sentence, n):
        """The UPOS and FEATS the ``x`` atoms join (``_`` where a sentence has neither
        field: a mapping of FORM, LEMMA and XPOS alone)."""
        fields = []
        for field in ("UPOS", "FEATS"):
            try:
                fields.append(sentence[field])
            except KeyError:
                fields.append(("_",) * n)
            if len(fields[-1]) != n:
                raise ValueError(f"a sentence of {n} words with {len(fields[-1])} {field} values; give one a word")
        return fields

    def sentence(self, sentence):
        """The sentence's token codes, an ``(n + 3) x 5`` uint64 array."""
        return self._codes(self.strings(sentence))

    def corpus(self, sentences):
        """``(tokens, starts)`` of all ``sentences`` (an iterable read once):
        their token codes stacked, and where each begins (int64, one more
        than the sentences)."""
        rows, lengths = [], []
        for sentence in sentences:
            strings = self.strings(sentence)
            rows.append(strings)
            lengths.append(len(strings))
        starts = np.zeros(len(lengths) + 1, np.int64)
        np.cumsum(lengths, out=starts[1:])
        return self._codes(list(chain.from_iterable(rows))), starts

    def _codes(self, rows):
        flat = list(chain.from_iterable(rows))
        known = self._hashes
        new = list(dict.fromkeys(s for s in flat if s not in known))
        if len(known) + len(new) > CACHE_STRINGS:
            known.clear()
            new = list(dict.fromkeys(flat))
        if new:
            known.update(zip(new, string_hashes(new).tolist()))
        codes = np.fromiter(map(known.__getitem__, flat), np.uint64, len(flat))
        return codes.reshape(len(rows), len(KINDS))
