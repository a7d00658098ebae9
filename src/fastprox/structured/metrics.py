"""Scores of sequence labelling and dependency parsing.

- :func:`accuracy`: the share of items labelled right.
- :func:`chunk_scores`: chunk precision, recall and F1 exactly as the
  CoNLL-2000 ``conlleval`` script (version 2004-01-26) computes them, with
  its per-type scores and token accuracy; :func:`conlleval_report` prints
  them as the script does.
- :func:`uas`: the unlabelled attachment score of dependency trees, with or
  without punctuation.

Labels and heads are given either stacked, one per item with ``lengths``
(items per sequence, as the learner takes them), or as a list of
sequences (one list or array per sequence).
"""
from dataclasses import dataclass, field

import numpy as np

__all__ = ["accuracy", "chunk_scores", "ChunkScores", "conlleval_report", "uas", "PUNCT"]

#: The UPOS tag of punctuation, which :func:`uas` can leave out.
PUNCT = "PUNCT"


def _split(values, lengths):
    """``values`` as a list of sequences: as given, or the stacked array cut by
    ``lengths``."""
    if lengths is None:
        values = list(values)
        if any(isinstance(s, str) or not hasattr(s, "__len__") for s in values):
            raise ValueError("give a list of sequences of tags, or the stacked tags with lengths=")
        return [list(s) for s in values]
    values = list(values)
    lengths = np.asarray(lengths, dtype=np.int64)
    if lengths.ndim != 1 or (lengths < 0).any() or lengths.sum() != len(values):
        raise ValueError(f"lengths must be counts of items per sequence summing to the "
                         f"{len(values)} items given, not {lengths.sum()} in all")
    ends = np.cumsum(lengths)
    return [values[e - n:e] for n, e in zip(lengths.tolist(), ends.tolist())]


def _stacked(values):
    """One flat array of ``values``: stacked already, or a list of sequences."""
    values = list(values)
    if values and all(hasattr(v, "__len__") and not isinstance(v, (str, bytes)) for v in values):
        return np.concatenate([np.asarray(v) for v in values])
    return np.asarray(values)


def _same_lengths(a, b, what):
    if len(a) != len(b):
        raise ValueError(f"{what}: {len(a)} true items but {len(b)} predicted; give one "
                         f"prediction per item")


def accuracy(y_true, y_pred):
    """The share of items whose predicted label equals the true one.

    ``y_true`` and ``y_pred`` are stacked (one label per item) or lists of
    sequences. NaN-free: raises ValueError when there is no item.
    """
    t, p = _stacked(y_true), _stacked(y_pred)
    _same_lengths(t, p, "accuracy")
    if not len(t):
        raise ValueError("accuracy: no items to score")
    return float(np.mean(t == p))


# --- conlleval ---------------------------------------------------------------------

@dataclass
class ChunkScores:
    """What conlleval counts: chunks and tokens, overall and per chunk type.

    Attributes
    ----------
    correct, found_true, found_predicted : int
        Chunks right (type and both boundaries), in the truth, predicted.
    correct_tags, tokens : int
        Items whose tag (prefix and type) is right; items in all.
    per_type : dict
        type -> (correct, found_true, found_predicted).
    """
    correct: int = 0
    found_true: int = 0
    found_predicted: int = 0
    correct_tags: int = 0
    tokens: int = 0
    per_type: dict = field(default_factory=dict)

    @property
    def precision(self):
        """correct / found_predicted (0 when nothing was predicted)."""
        return self.correct / self.found_predicted if self.found_predicted else 0.0

    @property
    def recall(self):
        """correct / found_true (0 when the truth has no chunk)."""
        return self.correct / self.found_true if self.found_true else 0.0

    @property
    def f1(self):
        """2 P R / (P + R), 0 when both are 0 (conlleval's FB1, as a fraction)."""
        p, r = self.precision, self.recall
        return 2 * p * r / (p + r) if p + r > 0 else 0.0

    @property
    def accuracy(self):
        """correct_tags / tokens."""
        return self.correct_tags / self.tokens if self.tokens else 0.0

    def type_scores(self, chunk_type):
        """(precision, recall, f1) of one chunk type."""
        correct, found_true, found_predicted = self.per_type.get(chunk_type, (0, 0, 0))
        p = correct / found_predicted if found_predicted else 0.0
        r = correct / found_true if found_true else 0.0
        return p, r, (2 * p * r / (p + r) if p + r > 0 else 0.0)


def _tag(label):
    """(prefix, type) as conlleval splits a tag: at its first '-' (``B-NP`` ->
    ``B``, ``NP``; ``O`` -> ``O``, ""). A type that Perl deems false ("0")
    becomes "", as in the script."""
    prefix, dash, chunk_type = str(label).partition("-")
    if not dash or chunk_type == "0":
        chunk_type = ""
    return prefix, chunk_type


def _end_of_chunk(prev_tag, tag, prev_type, chunk_type):
    """conlleval's endOfChunk: a chunk ended between the previous item and this one."""
    end = ((prev_tag, tag) in {("B", "B"), ("B", "O"), ("I", "B"), ("I", "O"),
                               ("E", "E"), ("E", "I"), ("E", "O")}
           or (prev_tag not in ("O", ".") and prev_type != chunk_type))
    return end or prev_tag in ("]", "[")


def _start_of_chunk(prev_tag, tag, prev_type, chunk_type):
    """conlleval's startOfChunk: a chunk started between the previous item and this one."""
    start = ((prev_tag, tag) in {("B", "B"), ("I", "B"), ("O", "B"), ("O", "I"),
                                 ("E", "E"), ("E", "I"), ("O", "E")}
             or (tag not in ("O", ".") and prev_type != chunk_type))
    return start or tag in ("[", "]")


def chunk_scores(y_true, y_pred, lengths=None):
    """Chunk precision, recall and F1 of predicted tags, as conlleval computes them.

    A chunk is right when its type and both its boundaries are right. Tags
    are ``PREFIX-TYPE`` (``B-NP``, ``I-NP``) or ``O``; chunks start and end as
    conlleval's ``startOfChunk`` and ``endOfChunk`` say, for IOB1, IOB2 and
    the E (end) tags it knows: among others, ``I-`` after ``O`` or after
    another type starts a chunk, and a change of type ends one. Each
    sequence is followed by conlleval's sentence boundary, as in a CoNLL
    file whose sentences all end with a blank line (the last one too, as
    `write_sequences` writes them): a chunk never runs across sequences.

    Parameters
    ----------
    y_true, y_pred : lists of sequences of str, or stacked arrays
        The true and the predicted tags.
    lengths : array of int, optional
        Items per sequence when the tags are stacked.

    Returns
    -------
    ChunkScores
    """
    true, pred = _split(y_true, lengths), _split(y_pred, lengths)
    if len(true) != len(pred):
        raise ValueError(f"chunk_scores: {len(true)} true sequences but {len(pred)} predicted")
    scores = ChunkScores()
    per_type = {}

    def count(chunk_type, slot):
        counts = per_type.setdefault(chunk_type, [0, 0, 0])
        counts[slot] += 1

    in_correct = False
    last_true, last_pred = ("O", ""), ("O", "")
    for number, (t_seq, p_seq) in enumerate(zip(true, pred)):
        _same_lengths(t_seq, p_seq, f"chunk_scores, sequence {number}")
        # each sequence is followed by conlleval's boundary line (tags O, O)
        for item, (t, p) in enumerate(list(zip(t_seq, p_seq)) + [("O", "O")]):
            boundary = item == len(t_seq)
            ct, cty = _tag(t)
            gt, gty = ("O", "") if boundary else _tag(p)
            if in_correct:
                end_true = _end_of_chunk(last_true[0], ct, last_true[1], cty)
                end_pred = _end_of_chunk(last_pred[0], gt, last_pred[1], gty)
                if end_true and end_pred and last_pred[1] == last_true[1]:
                    in_correct = False
                    scores.correct += 1
                    count(last_true[1], 0)
                elif end_true != end_pred or gty != cty:
                    in_correct = False
            start_true = _start_of_chunk(last_true[0], ct, last_true[1], cty)
            start_pred = _start_of_chunk(last_pred[0], gt, last_pred[1], gty)
            if start_true and start_pred and gty == cty:
                in_correct = True
            if start_true:
                scores.found_true += 1
                count(cty, 1)
            if start_pred:
                scores.found_predicted += 1
                count(gty, 2)
            if not boundary:
                scores.correct_tags += (ct, cty) == (gt, gty)
                scores.tokens += 1
            last_true, last_pred = (ct, cty), (gt, gty)
    if in_correct:
        scores.correct += 1
        count(last_true[1], 0)
    scores.per_type = {k: tuple(v) for k, v in sorted(per_type.items())}
    return scores


def conlleval_report(scores):
    """``scores`` as conlleval prints them (percentages with two decimals)."""
    s = scores
    lines = [f"processed {s.tokens} tokens with {s.found_true} phrases; found: "
             f"{s.found_predicted} phrases; correct: {s.correct}."]
    if s.tokens:
        lines.append(f"accuracy: {100 * s.accuracy:6.2f}%; precision: {100 * s.precision:6.2f}%; "
                     f"recall: {100 * s.recall:6.2f}%; FB1: {100 * s.f1:6.2f}")
    for chunk_type, (_, _, found_predicted) in s.per_type.items():
        p, r, f = s.type_scores(chunk_type)
        lines.append(f"{chunk_type:>17}: precision: {100 * p:6.2f}%; recall: {100 * r:6.2f}%; "
                     f"FB1: {100 * f:6.2f}  {found_predicted}")
    return "\n".join(lines) + "\n"


# --- trees ---------------------------------------------------------------------------

def uas(gold_heads, predicted_heads, upos=None):
    """The unlabelled attachment score: the share of words given their gold head.

    Parameters
    ----------
    gold_heads, predicted_heads : lists of per-sentence arrays, or stacked arrays
        Each word's head (0 the root), sentences in the same order.
    upos : same layout, optional
        The words' UPOS tags. When given, punctuation (UPOS ``PUNCT``) is
        left out of the score, as is common in reports; without it every
        word counts. Say which in a report.

    Returns
    -------
    float
    """
    gold, pred = _stacked(gold_heads), _stacked(predicted_heads)
    _same_lengths(gold, pred, "uas")
    counted = np.ones(len(gold), bool)
    if upos is not None:
        tags = _stacked(upos)
        _same_lengths(gold, tags, "uas (upos)")
        counted = tags != PUNCT
    if not counted.any():
        raise ValueError("uas: no words to score")
    return float(np.mean(gold[counted] == pred[counted]))
