"""The arc feature templates: McDonald, Crammer & Pereira (2005)'s first-order set.

A candidate arc ``(h, m)`` joins a head ``h`` (0 the root, 1..n the words) to a
modifier ``m`` (1..n). A template is a conjunction of *atoms*, named by joining
them with dots (``hw.hp.mw.mp``: the head's word and POS with the modifier's
word and POS). The atoms:

- ``hX`` / ``mX``: attribute X of the head / the modifier, X one of
  ``w`` the word (FORM), ``l`` its LEMMA, ``f`` the first five characters of
  the word (McDonald's prefix "stem"; the whole word when shorter), ``p`` its
  POS (UPOS, or XPOS as asked), ``x`` its UPOS joined to its morphological
  features (``UPOS|FEATS``, "VERB|Tense=Past|VerbForm=Part": the distinctions
  XPOS draws, from UD's own columns);
- ``hX-1``, ``hX+1``, ``mX-1``, ``mX+1``: attribute X of the word before or
  after the head / the modifier (the surrounding words);
- ``bp``: the POS of a word strictly between head and modifier; the template
  gives one feature per *distinct* POS found there (none when they are
  adjacent);
- ``dd``: the direction of the arc (``R`` when the head is left of the
  modifier, the root included; ``L`` otherwise) with the distance ``|h - m|``
  binned as McDonald's MSTParser bins it: 1, 2, 3, 4, 5, 6-10, 11+
  (:data:`DISTANCE_BINS`).

Positions outside the sentence read placeholders: the root (position 0) reads
:data:`ROOT` for every attribute, position -1 (before the root) :data:`START`,
position n+1 :data:`END`.

:data:`TEMPLATES` is McDonald et al.'s Table 1, written out: the uni-gram and
bi-gram templates of words and POS, again with lemmas and with 5-character
prefixes in place of words, the four surrounding-POS templates, their 12
trigram back-offs (MSTParser's: a 4-gram without one of its POS,
:data:`SURROUNDING_BACKOFF`) and the in-between POS template; then templates of the
UPOS|FEATS tags (:data:`FEATS_TEMPLATES`, :data:`FEATS_CONTEXT`, and the in-between one
:data:`FEATS_BETWEEN`); and each of
them again conjoined with ``dd``
(the paper conjoins every feature with direction and distance; here the
conjunction is a template of its own, so that group selection can keep one
without the other). Every template is one group of columns for the group
penalties (MKL selects templates); :func:`select` keeps a subset by name.
"""
import re
from typing import NamedTuple

from ..features.templates import placeholder

__all__ = ["TEMPLATES", "BASES", "SURROUNDING_BACKOFF", "KINDS", "DISTANCE_BINS", "DIRECTION_DISTANCES",
           "ROOT", "START", "END", "MKL_EWT", "FEATS_TEMPLATES", "TABLE_1", "MKL_EWT_FEATS",
           "FEATS_CONTEXT", "FEATS_BETWEEN", "MKL_EWT_FEATS_CONTEXT", "EWT_NO_PREFIX", "SETS", "ArcAtom", "ArcTemplate", "parse", "select", "direction_distance"]

#: The attributes of a word an atom may read (``w``, ``l``, ``f``, ``p``, ``x``), in the
#: order of the token codes' columns (`fastprox.structured.arcs.tokens`).
KINDS = ("w", "l", "f", "p", "x")

#: What every attribute of the root, of position -1 and of position n+1 reads.
ROOT, START, END = "_ROOT", placeholder(-1), placeholder(+1)

#: The distance bins, as (lowest, highest, name); the last bin has no end.
DISTANCE_BINS = ((1, 1, "1"), (2, 2, "2"), (3, 3, "3"), (4, 4, "4"), (5, 5, "5"),
                 (6, 10, "6-10"), (11, None, "11+"))

#: The texts of ``dd``: rightward arcs (``h < m``) by distance bin, then leftward.
DIRECTION_DISTANCES = tuple(direction + name for direction in "RL" for _, _, name in DISTANCE_BINS)

# McDonald et al. (2005), Table 1. The templates with a word (w) are repeated
# with the lemma (l) and the 5-character prefix (f) in its place.
_UNIGRAM = ("hw.hp", "hw", "hp", "hl.hp", "hl", "hf.hp", "hf",
            "mw.mp", "mw", "mp", "ml.mp", "ml", "mf.mp", "mf")
_BIGRAM = ("hw.hp.mw.mp", "hp.mw.mp", "hw.mw.mp", "hw.hp.mp", "hw.hp.mw", "hw.mw",
           "hl.hp.ml.mp", "hp.ml.mp", "hl.ml.mp", "hl.hp.mp", "hl.hp.ml", "hl.ml",
           "hf.hp.mf.mp", "hp.mf.mp", "hf.mf.mp", "hf.hp.mp", "hf.hp.mf", "hf.mf",
           "hp.mp")
_SURROUNDING = ("hp.hp+1.mp-1.mp", "hp-1.hp.mp-1.mp", "hp.hp+1.mp.mp+1", "hp-1.hp.mp.mp+1")
#: MSTParser's back-offs of the surrounding-POS templates: each of the four
#: 4-grams without one of its POS, the 12 distinct trigrams so made.
SURROUNDING_BACKOFF = ("hp+1.mp-1.mp", "hp.mp-1.mp", "hp.hp+1.mp", "hp.hp+1.mp-1", "hp-1.mp-1.mp",
                        "hp-1.hp.mp", "hp-1.hp.mp-1", "hp+1.mp.mp+1", "hp.mp.mp+1", "hp.hp+1.mp+1",
                        "hp-1.mp.mp+1", "hp-1.hp.mp+1")
#: The in-between UPOS|FEATS template: the POS between with the head's and modifier's ``x``.
FEATS_BETWEEN = ("hx.bp.mx",)
#: The in-between templates: McDonald's (the POS between with the head's and modifier's POS), then
#: :data:`FEATS_BETWEEN`.
_BETWEEN = ("hp.bp.mp",) + FEATS_BETWEEN

#: The templates before the conjunction with ``dd``, in order.
#: The templates of the UPOS|FEATS tags (``x``): each side's, the pair, and each beside the other
#: side's POS or word.
FEATS_TEMPLATES = ("hx", "mx", "hx.mx", "hx.mp", "hp.mx", "hw.mx", "hx.mw")
#: The UPOS|FEATS templates of the context: each side's ``x`` beside the other side's lemma, the
#: pair beside one surrounding POS (MSTParser's trigram back-offs with ``x`` in place of the
#: head's and the modifier's ``p``), and each side's ``x`` beside its own neighbour's POS.
FEATS_CONTEXT = ("hl.mx", "hx.ml", "hx.mx.mp+1", "hp-1.hx.mx", "hx.mp-1.mx", "hx.hp+1.mx",
                 "hp-1.hx", "hx.hp+1", "mp-1.mx", "mx.mp+1")
BASES = _UNIGRAM + _BIGRAM + _SURROUNDING + SURROUNDING_BACKOFF + FEATS_TEMPLATES + FEATS_CONTEXT + _BETWEEN

#: Every template's name, in block order: each base, then the base conjoined
#: with direction and distance (``NAME.dd``). The in-between templates come
#: last, so that a row's columns increase with its templates' blocks.
TEMPLATES = tuple(name for base in BASES for name in (base, base + ".dd"))

#: The 46 templates (60% of :data:`TEMPLATES`, in its order) that online MKL (the squared
#: group norm, one group per template) ranks first on UD English EWT's training
#: sentences: the templates standard SVMs retrained on did best with
#: (bench/papers/template_selection.md); the base of DependencyParser's default. Mostly POS
#: templates: the word-pair ones are left out.
MKL_EWT = (
    "hw.hp", "hw.hp.dd", "hw", "hw.dd", "hp", "hp.dd", "hl.hp", "hl.hp.dd", "hl", "hl.dd", "hf.hp",
    "hf.hp.dd", "hf", "hf.dd", "mw.mp.dd", "mw.dd", "mp.dd", "ml.mp.dd", "ml.dd", "mf.mp.dd",
    "mf.dd", "hp.mw.mp", "hp.mw.mp.dd", "hw.hp.mp", "hw.hp.mp.dd", "hl.hp.ml.mp", "hp.ml.mp",
    "hp.ml.mp.dd", "hl.hp.mp", "hl.hp.mp.dd", "hp.mf.mp", "hp.mf.mp.dd", "hf.hp.mp", "hf.hp.mp.dd",
    "hp.mp", "hp.mp.dd", "hp.hp+1.mp-1.mp", "hp.hp+1.mp-1.mp.dd", "hp-1.hp.mp-1.mp",
    "hp-1.hp.mp-1.mp.dd", "hp.hp+1.mp.mp+1", "hp.hp+1.mp.mp+1.dd", "hp-1.hp.mp.mp+1",
    "hp-1.hp.mp.mp+1.dd", "hp.bp.mp", "hp.bp.mp.dd",
)

#: McDonald et al.'s Table 1 (76 templates): all but MSTParser's back-offs and the UPOS|FEATS
#: templates, in :data:`TEMPLATES`' order.
TABLE_1 = tuple(name for name in TEMPLATES
                if name.removesuffix(".dd") not in SURROUNDING_BACKOFF + FEATS_TEMPLATES + FEATS_CONTEXT
                + FEATS_BETWEEN)

#: :data:`MKL_EWT` and the :data:`FEATS_TEMPLATES` with their conjunctions with ``dd`` (60
#: templates).
MKL_EWT_FEATS = tuple(name for name in TEMPLATES
                      if name in MKL_EWT or name.removesuffix(".dd") in FEATS_TEMPLATES)

#: :data:`MKL_EWT_FEATS` and the :data:`FEATS_CONTEXT` with their conjunctions with ``dd`` (80
#: templates): DependencyParser's default until the sixth session (bench/results/dependency_parsing.md).
MKL_EWT_FEATS_CONTEXT = tuple(name for name in TEMPLATES
                              if name in MKL_EWT_FEATS or name.removesuffix(".dd") in FEATS_CONTEXT)

#: :data:`MKL_EWT_FEATS_CONTEXT` without the 10 templates of McDonald's 5-character prefixes (``f``
#: atoms: hf, hf.hp, hf.hp.mp, hp.mf.mp with ``dd`` and without, mf and mf.mp with ``dd``; 70
#: templates): DependencyParser's default (with eta0 0.012 and 6 passes): on UD English EWT the
#: prefixes add nothing the words, lemmas and UPOS|FEATS tags do not already give, and cost about
#: 8% of a pass (bench/results/dependency_parsing.md).
EWT_NO_PREFIX = tuple(name for name in MKL_EWT_FEATS_CONTEXT if "f" not in name)     # (only hf, mf have an f)

#: Named template sets :func:`select` takes in place of a list of names.
SETS = {"all": TEMPLATES, "table-1": TABLE_1, "mkl-ewt": MKL_EWT, "mkl-ewt-feats": MKL_EWT_FEATS,
        "mkl-ewt-feats-ctx": MKL_EWT_FEATS_CONTEXT, "ewt-no-prefix": EWT_NO_PREFIX}

_ATOM = re.compile(r"([hm])([wlfpx])([+-]1)?|(bp)|(dd)")


class ArcAtom(NamedTuple):
    """One atom: ``side`` "h", "m" (the head's or modifier's attribute),
    "b" (a word between them) or "d" (direction and distance); ``kind`` the
    attribute's index in :data:`KINDS` (-1 for ``dd``); ``offset`` -1, 0 or +1
    from the head or modifier."""
    side: str
    kind: int
    offset: int


class ArcTemplate(NamedTuple):
    """A parsed template: its ``name``, the ``base`` it conjoins with ``dd`` (its
    own name when it has no ``dd``), its head-side and modifier-side atoms in
    written order, whether it reads the words in between, whether it has ``dd``."""
    name: str
    base: str
    head: tuple
    modifier: tuple
    between: bool
    conjoined: bool


def parse(name):
    """The :class:`ArcTemplate` called ``name`` (atoms as the module says, at
    most one ``bp`` and one ``dd``, ``dd`` last, at least one head or
    modifier atom); ValueError saying what is wrong."""
    atoms = []
    for text in name.split("."):
        match = _ATOM.fullmatch(text)
        if match is None:
            raise ValueError(f"template {name!r}: {text!r} is not an atom (hw, hl, hf, hp, hx, the same "
                             f"with m, any of them with -1 or +1, bp, dd)")
        side, kind, offset, between, dd = match.groups()
        atoms.append(ArcAtom("b", KINDS.index("p"), 0) if between else ArcAtom("d", -1, 0) if dd else
                     ArcAtom(side, KINDS.index(kind), int(offset or 0)))
    sides = [a.side for a in atoms]
    if sides.count("b") > 1 or sides.count("d") > 1 or ("d" in sides and sides[-1] != "d"):
        raise ValueError(f"template {name!r}: bp and dd may occur once each, dd last")
    if not {"h", "m"} & set(sides):
        raise ValueError(f"template {name!r} reads neither the head nor the modifier")
    conjoined = sides[-1] == "d"
    return ArcTemplate(name, name[:-len(".dd")] if conjoined else name,
                       tuple(a for a in atoms if a.side == "h"),
                       tuple(a for a in atoms if a.side == "m"), "b" in sides, conjoined)


def select(names=None):
    """The templates called ``names`` (an iterable of names from
    :data:`TEMPLATES`, or the name of a set of :data:`SETS`; None for all),
    parsed, in :data:`TEMPLATES`' order whatever the order given; ValueError for
    an unknown or repeated name or an empty selection."""
    if names is None:
        return tuple(map(parse, TEMPLATES))
    if isinstance(names, str):
        names = SETS.get(names, (names,))
    names = list(names)
    unknown = [n for n in names if n not in _ORDER]
    if unknown:
        raise ValueError(f"unknown arc template{'s' * (len(unknown) > 1)} {', '.join(map(repr, unknown))}; "
                         f"the templates are fastprox.structured.arcs.TEMPLATES ({TEMPLATES[0]}, "
                         f"{TEMPLATES[1]}, ..., {TEMPLATES[-1]})")
    if len(set(names)) != len(names):
        raise ValueError(f"templates={names!r} names a template twice")
    if not names:
        raise ValueError("templates=[] selects no template; pass None for all of them")
    return tuple(parse(n) for n in sorted(names, key=_ORDER.__getitem__))


def direction_distance(h, m):
    """The text of ``dd`` for the arc ``h -> m`` (``h != m``): ``R`` or ``L``, then
    the distance bin's name (``R1``, ``L6-10``, ``R11+``)."""
    distance = abs(h - m)
    at = next(i for i, (_, high, _) in enumerate(DISTANCE_BINS) if high is None or distance <= high)
    return DIRECTION_DISTANCES[(h > m) * len(DISTANCE_BINS) + at]


_ORDER = {name: i for i, name in enumerate(TEMPLATES)}
