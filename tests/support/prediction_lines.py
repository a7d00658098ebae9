"""``train -p``'s lines as the trainer of 6fc0e44 wrote them, a Python string a row: the
reference of `fastprox._libsvm.format_predictions`, which writes a run of rows' lines in
one call (tests/test_stream_pass.py compares the two, and the trainers)."""
from fastprox.stream.labels import format_label


def prediction_line(est, scores, tag=None):
    """An example's line of progressive predictions, as VW's -p writes it: a binary
    classifier's raw score (the margin), a regressor's value, a multiclass model's
    class (``est.classes``' of the largest margin, the first of equal ones); then its
    tag if the input has one (`row_tag`)."""
    if est.regression or len(scores) == 1:
        text = repr(scores[0])
    else:
        text = format_label(est.classes[max(range(len(scores)), key=scores.__getitem__)])
    return f"{text} {tag}\n" if tag is not None else text + "\n"


def row_tag(tags, i):
    """Row i's tag in a chunk's ``tags`` (None: no row has one; ``bytes`` read as UTF-8,
    invalid bytes as "\\xNN"), or None where the row has none (None or empty)."""
    tag = None if tags is None else tags[i]
    if isinstance(tag, bytes):
        tag = tag.decode("utf-8", "backslashreplace")
    return tag or None
