"""Read CoNLL-U files (Universal Dependencies): words with ten fields, for
tagging and dependency parsing.

Format (universaldependencies.org/format.html): one word per line with ten
tab-separated fields ``ID FORM LEMMA UPOS XPOS FEATS HEAD DEPREL DEPS MISC``
(:data:`FIELDS`, the column names here; ``_`` for an empty field), ``#``
comment lines before a sentence's words, a blank line after each sentence.
Multiword-token lines (``ID`` like ``3-4``) and empty nodes (``5.1``) are not
words of the tree: they are skipped, and kept in the sequence's ``extra`` for
the writer, as comments are in ``comments``.

For tagging, ``label`` names the field to predict (``"UPOS"``, say); every
word must have one (not ``_``), but in FEATS, where ``_`` is the empty set of
features (the value of most punctuation and function words, which the
UD scorer's UFeats scores as any other). For parsing, ``heads=True`` reads HEAD as an
integer and checks that the sentence is a tree with one word on the root
(`fastprox.structured.trees`).
"""
import numpy as np

from ..trees import find_cycle
from .lines import located, numbered_lines, source_name
from .sequence import Layout, Sequence

__all__ = ["read_conllu", "gold_heads", "word_lines", "parsed", "FIELDS"]

#: CoNLL-U's ten fields, in order: the column names of its sequences.
FIELDS = ("ID", "FORM", "LEMMA", "UPOS", "XPOS", "FEATS", "HEAD", "DEPREL", "DEPS", "MISC")
_HEAD, _DEPREL, _DEPS = (FIELDS.index(name) for name in ("HEAD", "DEPREL", "DEPS"))
_ROOT_OR_WORD = "HEAD is 0 for the root or the ID of a word of the same sentence"


def read_conllu(source, label=None, *, heads=False):
    """Iterate over the sentences of a CoNLL-U file, one at a time.

    Parameters
    ----------
    source : str, path, file object or "-"
        The file (plain, gzip, bzip2 or xz), ``-`` for standard input, or a
        binary file object.
    label : str or None, default=None
        The field that tagging predicts (one of :data:`FIELDS`, e.g. "UPOS"),
        which every word must fill (FEATS's ``_``, no feature, is a value);
        None for none.
    heads : bool, default=False
        Read each word's HEAD as an integer into the sequence's ``heads``
        (int32, 0 the root) and check that the sentence is a tree.

    Returns
    -------
    iterator of Sequence
        Read lazily: memory holds one sentence at a time.

    Raises
    ------
    ValueError
        At iteration, ``NAME:LINE: ...``: a line without ten tab-separated
        fields; word IDs out of order; a comment among a sentence's words; a
        sentence without words; a missing label (``_``, but in FEATS); with ``heads``, a
        HEAD that is not an integer or outside ``0..n`` (the word's line), a
        second word with HEAD 0 (its line: CoNLL-U's tree has one root word),
        or heads that form a cycle (the sentence's first line).
    """
    if label is not None and label not in FIELDS:
        raise ValueError(f"label={label!r} is not a CoNLL-U field; choose one of {', '.join(FIELDS)}")
    return _sentences(source, Layout(FIELDS, label, "\t"), bool(heads))


def _sentences(source, layout, want_heads):
    name = source_name(source)
    needed_at = None if layout.label in (None, "FEATS") else layout.index[layout.label]   # (a "_" refused)
    block = _Block()
    for number, text in numbered_lines(source):
        if not text.strip():
            if block.first:
                yield block.sentence(layout, name, want_heads)
                block = _Block()
            continue
        block.first = block.first or number
        if text.startswith("#"):
            if block.rows or block.extra:
                raise located(name, number, "comment line among a sentence's words; comments go "
                                            "before the first word (is a blank line missing "
                                            "after the previous sentence?)")
            block.comments.append(text)
            continue
        fields = text.split("\t")
        if len(fields) != 10:
            raise located(name, number, f"{len(fields)} tab-separated field{'s' * (len(fields) != 1)}, "
                                        f"expected 10 ({' '.join(FIELDS)}); separate fields by tabs "
                                        f"(spaces may occur inside FORM and LEMMA) and write _ for "
                                        f"an empty one")
        word_id = fields[0]
        is_word = word_id.isascii() and word_id.isdigit()
        if not is_word and (_is_range(word_id, "-") or _is_range(word_id, ".")):
            block.extra.append((len(block.rows), text))
            continue
        if not is_word or int(word_id) != len(block.rows) + 1:
            raise located(name, number, f"word ID {word_id!r} where {len(block.rows) + 1} was expected: "
                                        f"the words of a sentence are numbered 1, 2, 3, ... in order "
                                        f"(multiword tokens like 3-4, empty nodes like 5.1), and a "
                                        f"blank line ends each sentence")
        if needed_at is not None and fields[needed_at] == "_":
            raise located(name, number, f"word {word_id} has no {layout.label} ('_'); every word of "
                                        f"labelled data needs its label: fill it in, or pass "
                                        f"label=None to read unlabelled data")
        block.rows.append(fields)
        block.lines.append(number)
    if block.first:
        yield block.sentence(layout, name, want_heads)


def _is_range(word_id, mark):
    """Whether ``word_id`` is two integers joined by ``mark`` ("3-4", "5.1")."""
    a, found, b = word_id.partition(mark)
    return bool(found) and a.isascii() and a.isdigit() and b.isascii() and b.isdigit()


class _Block:
    """The lines of the sentence being read."""
    __slots__ = ("first", "comments", "extra", "rows", "lines")

    def __init__(self):
        self.first, self.comments, self.extra, self.rows, self.lines = 0, [], [], [], []

    def sentence(self, layout, name, want_heads):
        if not self.rows:
            raise located(name, self.first, "sentence without words (only comments, multiword "
                                             "tokens or empty nodes before the blank line); every "
                                             "sentence needs at least one word line")
        heads = _checked_heads([fields[_HEAD] for fields in self.rows], self.lines, name, self.first,
                               self.comments) if want_heads else None
        return Sequence(layout, tuple(zip(*self.rows)), name, self.first, self.comments,
                        self.extra, heads)


def gold_heads(sentence):
    """The HEAD of each word of a sentence read without ``heads`` (int32, 0 the
    root), checked as ``read_conllu(..., heads=True)`` checks them: what a
    command reads once to parse and, if the heads are all there, to score.

    Raises
    ------
    ValueError
        As `read_conllu` with ``heads=True``: the word's line for a HEAD that is
        not an integer in ``0..n`` or a second root word, the sentence's first
        line for a cycle.
    """
    return _checked_heads(sentence["HEAD"], word_lines(sentence), sentence.source, sentence.line,
                          sentence.comments)


def word_lines(sentence):
    """The line of each word of a sentence read by `read_conllu`, in its file: after
    the sentence's comments, with its multiword-token and empty-node lines."""
    words = len(sentence)
    before = [0] * (words + 1)          # multiword tokens and empty nodes before each word
    for position, _ in sentence.extra:
        before[position] += 1
    first_word = sentence.line + len(sentence.comments)
    lines, extra = [], 0
    for m in range(words):
        extra += before[m]
        lines.append(first_word + m + extra)
    return lines


def parsed(sentence, heads):
    """``sentence`` (read by `read_conllu`) as an unlabelled parser's output: HEAD the
    given ``heads`` (one per word, 0 the root), DEPREL ``root`` for a word on the
    root and ``dep`` (UD's unspecified relation) for the others, DEPS ``_``; every
    other field, and every comment, multiword-token and empty-node line, as it was.

    Not the input's DEPREL and DEPS: beside other heads, a scorer would take the
    gold relations for the parser's (conll18_ud_eval's LAS, CLAS, MLAS and BLEX
    would count every relation right) and the gold enhanced graph for its graph.

    Returns
    -------
    Sequence
    """
    heads = [str(int(h)) for h in heads]
    if len(heads) != len(sentence):
        raise ValueError(f"{len(heads)} heads for the {len(sentence)} words of the sentence at "
                         f"{sentence.source}:{sentence.line}; give one head per word")
    columns = list(sentence.columns)
    columns[_HEAD] = tuple(heads)
    columns[_DEPREL] = tuple("root" if h == "0" else "dep" for h in heads)
    columns[_DEPS] = ("_",) * len(heads)
    return Sequence(sentence.layout, tuple(columns), sentence.source, sentence.line, sentence.comments,
                    sentence.extra)


def _checked_heads(heads_text, lines, name, first, comments):
    """The words' HEAD fields ``heads_text`` (on ``lines`` of ``name``; the
    sentence's first line ``first`` and ``comments``) as int32, checked:
    integers in 0..n, a tree, one word on the root."""
    n = len(heads_text)
    heads = np.empty(n, dtype=np.int32)
    for m, (head, line) in enumerate(zip(heads_text, lines), 1):
        digits = head[1:] if head.startswith("-") else head
        if not (digits.isascii() and digits.isdigit()):
            raise located(name, line, f"HEAD {head!r} of word {m} is not an integer; {_ROOT_OR_WORD}")
        if not 0 <= int(head) <= n:
            raise located(name, line, f"HEAD {int(head)} of word {m} is outside 0..{n} (the "
                                      f"sentence has {n} word{'s' * (n != 1)}); {_ROOT_OR_WORD}")
        heads[m - 1] = int(head)
    roots = np.flatnonzero(heads == 0)
    if len(roots) > 1:
        raise located(name, lines[roots[1]], f"words {roots[0] + 1} and {roots[1] + 1} both have HEAD 0"
                                             f"{_sent_id(comments)}: a CoNLL-U tree has one word on the "
                                             f"root 0 (the UD scorer refuses a file with more); attach "
                                             f"the others to a word of the sentence")
    cycle = find_cycle(heads)
    if cycle is not None:
        arcs = " -> ".join(map(str, cycle + cycle[:1]))
        raise located(name, first, f"the gold heads of the sentence starting here{_sent_id(comments)} form "
                                   f"a cycle: {arcs} (each word is followed by its head); every word's "
                                   f"chain of heads must reach the root 0")
    return heads


def _sent_id(comments):
    """`` (sent_id = ...)`` from a sentence's comments, or nothing."""
    for comment in comments:
        key, _, value = comment[1:].partition("=")
        if key.strip() == "sent_id":
            return f" (sent_id = {value.strip()})"
    return ""
