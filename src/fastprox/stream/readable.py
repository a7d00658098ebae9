"""A model as text, as Vowpal Wabbit's --readable_model and --invert_hash write it:
a few header lines (VW's, adapted: the version, the label range, the hashing,
the width, the classes, the options that rebuild the model), then a line per
non-zero weight, ``COLUMN:WEIGHT`` (readable) or ``NAME:COLUMN:WEIGHT`` for each
name the input gave that column (invert hash: `FeatureNames`), and the
intercept as VW's ``Constant`` feature. A model of several outputs (multiclass:
one-vs-rest or multinomial) has a section per class, opened by
``class:LABEL``. Weights are written exactly (the shortest repr that reads back
the same float).

The names of a column are what the input wrote for the features read into it:
for LIBSVM files the indices as written (one-based files: the column plus one),
every id hashed into a bucket with --hash-bits (VW's invert hash keeps them
all too: memory grows with the distinct ids, which is why it is asked for);
a reader that knows names (Vowpal Wabbit's text format) fills a mapping,
column -> name, which `FeatureNames.add_named` takes instead.
"""
from array import array

from .._hashing import hash_indices
from .labels import format_label


class FeatureNames:
    """column -> the names of the features read into it, gathered chunk by chunk."""

    def __init__(self):
        self.names = {}

    def add(self, chunk, bits):
        """Take the names of a reader's ``chunk`` (before hashing), its ids hashed into
        2^bits columns if ``bits``."""
        ids = sorted(set(chunk.indices))
        columns = ids if bits is None else _buckets(ids, bits)
        offset = getattr(chunk, "offset", 0)
        for i, column in zip(ids, columns):
            self.names.setdefault(column, set()).add(str(i + offset))

    def add_named(self, names):
        """Take a reader's ``names`` (column -> the name it read there: Vowpal Wabbit's
        text format, `fastprox.vw.iter_vw_chunks`'s ``names``)."""
        for column, name in names.items():
            self.names.setdefault(column, set()).add(name)

    def of(self, column):
        """The names of ``column`` in order (numbers by value), or [] if it had none."""
        return sorted(self.names.get(column, ()), key=lambda name: (len(name), name))


def _buckets(ids, bits):
    """The columns the ids hash into (fastprox._hashing, one id per row)."""
    n = len(ids)
    _, columns, _, _ = hash_indices(array("d", [1.0]) * n, array("q", ids), array("q", range(n + 1)), bits)
    return list(columns)


def readable_lines(est, options, names=None):
    """The lines of the readable model (``names`` None) or of the invert hash
    (``names``: a `FeatureNames`) of the StreamModel ``est``; ``options``: the
    command-line options that rebuild it."""
    from .. import __version__
    learner = est.learner
    coef, intercept = learner.coef_zeros_unsigned(), learner.intercept()     # (non-zeros read)
    classes = est.classes
    yield f"Version fastprox {__version__}\n"
    if classes is not None:
        yield f"Min label:{format_label(classes[0])}\nMax label:{format_label(classes[-1])}\n"
    bits = est.params.get("hash_bits")
    if bits is None and est.input is not None:     # (VW text's -b, or crossed groups' blocks)
        bits = est.input["bits"]
    yield f"bits:{'none' if bits is None else bits}\nn_features:{learner.n_features}\n"
    if classes is not None:
        yield f"classes:{' '.join(map(format_label, classes))}\n"
    yield f"options:{options}\n"
    for k in range(learner.n_outputs):
        if learner.n_outputs > 1:
            yield f"class:{format_label(classes[k])}\n"
        row = coef[k]
        for j in row.nonzero()[0].tolist():
            weight = repr(float(row[j]))
            if names is None:
                yield f"{j}:{weight}\n"
            else:
                yield "".join(f"{name}:{j}:{weight}\n" for name in names.of(j) or [str(j)])
        if intercept[k] != 0.0:
            yield f"Constant:{float(intercept[k])!r}\n"
