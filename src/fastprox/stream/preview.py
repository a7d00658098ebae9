"""The progress table's first lines as Vowpal Wabbit prints them, after examples
1, 2, 4, ..., while the first chunk is still being read.

The reader hands out its first chunk only once it is complete (--chunk-rows
rows: zero_based="auto" decides from all of them), so at 1,000 rows a second
the first line of the table waited 10 s. A `Preview` trains a model of its own
on the first chunk's rows as they are parsed (`fastprox.libsvm.iter_chunks`'s
``preview``) and prints the table's lines for them; the run's trainer then goes
on from the last line shown.

Those lines are the run's own, bit for bit: the preview reads the indices as
written, where the run may read them less one (a one-based file), and a model
trained on every column index shifted by one takes the same steps: each
feature's state is its own and the contract treats columns alike (the default
groups are the features), so every loss and margin is the same. Where columns
are not alike the preview is not made, unless --zero-based settles the indices
first: hashing (an id less one lands in another bucket) and user groups or group
weights (given per feature).
"""
from .model import StreamModel
from .progress import NoBar, Table
from .trainer import Trainer, predicts


def wanted(reading, bits, params):
    """Whether the first lines can be shown early: the indices settled (--zero-based, --one-based),
    or every column alike (`Preview`); never for LIBSVM groups crossed."""
    if reading.get("crossing") is not None:      # (the rows are crossed after the reader)
        return False
    return reading["zero_based"] in (True, False) or (bits is None and params["groups"] is None
                                             and params["group_weights"] is None)


class Preview:
    """``preview(chunk)`` for the reader (it returns whether it wants more), training
    a model of the run's parameters on the first chunk's rows of ``source`` (a
    FileSource: it names their lines), its lines written as the run's table writes
    them; `hand_over` makes the run's table go on from the last of them."""

    def __init__(self, est, source, table, hashed):
        model = StreamModel(est.params, est.regression, est.classes)
        model.width_origin = est.width_origin
        self.trainer = Trainer(model, source, Table(table.write, predicts(model), table.interval), NoBar())
        self.table, self.hashed, self.path, self.rows = table, hashed, source.paths[0], 0

    def __call__(self, chunk):
        """Train on the rows ``chunk`` (the next of the first chunk's); False, to be
        called no more, once anything fails: the run meets the same failure at the
        same row and reports it."""
        if self.trainer is None:
            return False
        try:
            self.trainer.feed([(self.hashed(chunk), chunk.y, (self.path, self.rows))])
        except Exception:
            self.trainer = None
            return False
        self.rows += chunk.shape[0]
        return True

    def hand_over(self):
        """The run's table goes on from the lines shown (which its trainer then does
        not show again); the preview's model is dropped."""
        if self.trainer is not None:
            self.table.go_on_from(self.trainer.table)
        self.trainer = None
