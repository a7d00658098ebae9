"""Scores of structured outputs (fastprox.structured.metrics): conlleval's chunk
precision, recall and F1 on hand-made cases with known answers and on outputs
of the conlleval script itself, the chunk-set definition on valid IOB2 tags
(hypothesis), per-item accuracy and UAS with and without punctuation."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fastprox.structured.io import read_conll
from fastprox.structured.metrics import accuracy, chunk_scores, conlleval_report, uas


def counts(scores):
    return scores.correct, scores.found_true, scores.found_predicted


@pytest.mark.parametrize("true,pred,expected", [
    # (correct, chunks in the truth, chunks predicted)
    ([["B-NP", "I-NP", "O", "B-VP"]], [["B-NP", "I-NP", "O", "B-VP"]], (2, 2, 2)),
    ([["B-NP", "I-NP", "O", "B-VP"]], [["B-NP", "O", "O", "B-VP"]], (1, 2, 2)),        # NP's end wrong
    ([["O", "I-NP", "I-NP"]], [["O", "B-NP", "I-NP"]], (1, 1, 1)),                  # I- after O starts a chunk
    ([["B-NP", "I-VP"]], [["B-NP", "B-VP"]], (2, 2, 2)),                             # a type change starts one
    ([["I-NP", "I-NP", "B-NP"]], [["I-NP", "I-NP", "I-NP"]], (0, 2, 1)),             # IOB1: B splits NP NP
    ([["B-NP", "I-NP"], ["I-NP"]], [["B-NP", "I-NP"], ["I-NP"]], (2, 2, 2)),         # no chunk across sequences
    ([["B-NP"], ["I-NP", "O"]], [["B-NP"], ["I-NP", "O"]], (2, 2, 2)),
    ([["B-NP", "I-NP", "I-NP"]], [["B-NP", "I-NP", "B-NP"]], (0, 1, 2)),
    ([["B-NP", "B-PP"]], [["B-PP", "B-NP"]], (0, 2, 2)),                             # boundaries right, types not
    ([["O", "O"]], [["O", "O"]], (0, 0, 0)),
    ([[]], [[]], (0, 0, 0)),
])
def test_known_answers(true, pred, expected):
    assert counts(chunk_scores(true, pred)) == expected


# What the conlleval script (version 2004-01-26) prints for these inputs.
SCRIPT = [
    ([["S-NP", "B-VP", "E-VP", "O"], ["I-NP", "I-NP", "B-NP", "I-PP"]],
     [["B-NP", "B-VP", "I-VP", "E-VP"], ["I-NP", "B-NP", "I-NP", "I-PP"]],
     "processed 8 tokens with 5 phrases; found: 5 phrases; correct: 2.\n"
     "accuracy:  37.50%; precision:  40.00%; recall:  40.00%; FB1:  40.00\n"
     "               NP: precision:  33.33%; recall:  33.33%; FB1:  33.33  3\n"
     "               PP: precision: 100.00%; recall: 100.00%; FB1: 100.00  1\n"
     "               VP: precision:   0.00%; recall:   0.00%; FB1:   0.00  1\n"),
    ([["B-NP", "I-NP"], ["I-NP", "O"]], [["B-NP", "I-NP"], ["I-NP", "O"]],
     "processed 4 tokens with 2 phrases; found: 2 phrases; correct: 2.\n"
     "accuracy: 100.00%; precision: 100.00%; recall: 100.00%; FB1: 100.00\n"
     "               NP: precision: 100.00%; recall: 100.00%; FB1: 100.00  2\n"),
]


@pytest.mark.parametrize("true,pred,printed", SCRIPT)
def test_report_as_the_script_prints_it(true, pred, printed):
    assert conlleval_report(chunk_scores(true, pred)) == printed


def test_stacked_with_lengths_and_fractions():
    true, pred = SCRIPT[0][0], SCRIPT[0][1]
    stacked = chunk_scores(np.concatenate(true), np.concatenate(pred), lengths=[4, 4])
    scores = chunk_scores(true, pred)
    assert counts(stacked) == counts(scores) and stacked.per_type == scores.per_type
    assert scores.precision == scores.recall == 0.4 and scores.f1 == pytest.approx(0.4)
    assert scores.accuracy == 3 / 8 and scores.type_scores("PP") == (1.0, 1.0, 1.0)
    assert scores.type_scores("ADJP") == (0.0, 0.0, 0.0)


@pytest.mark.parametrize("call,match", [
    (lambda: chunk_scores([["O"]], [["O"], ["O"]]), "1 true sequences but 2 predicted"),
    (lambda: chunk_scores([["O", "O"]], [["O"]]), "2 true items but 1 predicted"),
    (lambda: chunk_scores(["B-NP", "O"], ["B-NP", "O"]), "lengths="),
    (lambda: chunk_scores(["B-NP", "O"], ["B-NP", "O"], lengths=[3]), "summing to the 2 items"),
])
def test_chunk_scores_input_errors(call, match):
    with pytest.raises(ValueError, match=match):
        call()


@st.composite
def tagged(draw):
    """A valid IOB2 sequence and its chunks (type, start, end)."""
    tags, chunks = [], set()
    for _ in range(draw(st.integers(0, 6))):
        if draw(st.booleans()):
            tags.append("O")
            continue
        kind, size = draw(st.sampled_from(["NP", "VP", "A-B"])), draw(st.integers(1, 3))
        chunks.add((kind, len(tags), len(tags) + size))
        tags += [f"B-{kind}"] + [f"I-{kind}"] * (size - 1)
    return tags, chunks


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(tagged(), tagged()), min_size=1, max_size=4))
def test_valid_iob2_scores_are_chunk_set_overlaps(pairs):
    true = [t[0] for t, _ in pairs]
    pred = [(p[0] + ["O"] * len(t[0]))[:len(t[0])] for t, p in pairs]
    true_chunks = {(i,) + c for i, (t, _) in enumerate(pairs) for c in t[1]}
    pred_chunks = set()
    for i, tags in enumerate(pred):         # the predicted tags' chunks, read by hand
        for start, tag in enumerate(tags):
            if tag.startswith("B-"):
                end = start + 1
                while end < len(tags) and tags[end] == "I-" + tag[2:]:
                    end += 1
                pred_chunks.add((i, tag[2:], start, end))
    scores = chunk_scores(true, pred)
    assert counts(scores) == (len(true_chunks & pred_chunks), len(true_chunks), len(pred_chunks))
    assert scores.correct_tags == sum(a == b for t, p in zip(true, pred) for a, b in zip(t, p))


def test_conll2000_test_gold_against_itself(shared_structured):
    (test,) = shared_structured("conll2000/test.txt")
    tags = [s.labels for s in read_conll(test, ("w", "pos", "y"), "y")]
    scores = chunk_scores(tags, tags)
    assert counts(scores) == (23852, 23852, 23852) and scores.tokens == 47377 and scores.f1 == 1.0


# --- accuracy and UAS ------------------------------------------------------------------

def test_accuracy_stacked_or_per_sequence():
    assert accuracy(["a", "b", "c", "d"], np.array(["a", "x", "c", "d"])) == 0.75
    assert accuracy([["a", "b"], ["c"]], [["a", "x"], ["c"]]) == pytest.approx(2 / 3)
    with pytest.raises(ValueError, match="3 true items but 2 predicted"):
        accuracy(["a", "b", "c"], ["a", "b"])
    with pytest.raises(ValueError, match="no items"):
        accuracy([], [])


def test_uas_with_and_without_punctuation():
    gold = [np.array([2, 0, 2]), np.array([0, 1])]
    pred = [np.array([2, 0, 1]), np.array([0, 0])]
    upos = [["NOUN", "VERB", "PUNCT"], ["INTJ", "PUNCT"]]
    assert uas(gold, pred) == 3 / 5
    assert uas(gold, pred, upos=upos) == 1.0
    assert uas(np.concatenate(gold), np.concatenate(pred), upos=np.concatenate(upos)) == 1.0
    with pytest.raises(ValueError, match="no words"):
        uas([1], [1], upos=["PUNCT"])
    with pytest.raises(ValueError, match="uas \\(upos\\)"):
        uas([1, 0], [1, 0], upos=["X"])
