"""The stream through the kernel: `Trainer` trains a `StreamModel` (fastprox.stream.model)
on a source's chunks, as `fastprox train` reads a file and fastprox.dask's
workers read their shares, and keeps the progressive validation table
(fastprox.stream.progress) exact: the kernel's calls are split at its lines.

A source is what the chunks come from: it has a ``name`` (for messages) and
``locator(origin)``, the function naming the place of a chunk's row i for errors
(fastprox.stream.sources, fastprox.dask's shares); the chunks are (rows, labels,
origin) triples, rows a CSR matrix or a reader's Chunk.
"""
from array import array
from math import exp, expm1

from .._core import AUTO_ROWS
from .._kernels import NonFiniteMargin
from .._validation import kernel_arrays, kernel_loss
from .labels import LABEL_BUFFER_BYTES, Classes, format_label
from .losses import example_loss
from .progress import LabelStats


def predicts(est):
    """What the table's "current predict" column holds (fastprox.stream.progress)."""
    if est.regression:
        return "the predicted value"
    if est.classes is not None and len(est.classes) > 2:
        return "the predicted class"
    if _probability_from_loss(est):
        return "P(label = the larger class), from the example's loss"
    return "the margin, positive for the larger class"


def _probability_from_loss(est):
    """Whether the table's prediction is the probability exp(-loss) of the example's
    label (binary log loss, a step per example), which costs nothing: else it is a
    margin, which reads every weight (Learner.margins)."""
    binary = est.classes is None or len(est.classes) == 2
    return not est.regression and binary and kernel_loss(est.loss) == "log" and est.params["batch_size"] == 1


class Trainer:
    """The stream through the kernel, a chunk at a time: its labels recognized or
    encoded (fastprox.stream.labels), the rows before the model can start held
    (those that "auto" steps read, and those whose classes are not yet known),
    the model widened to each chunk, the kernel's calls split where the table
    has a line (fastprox.stream.progress)."""

    def __init__(self, est, source, table, bar, holdout=None, predictions=None):
        """``holdout``: a `fastprox.stream.holdout.Holdout` (several passes), or None;
        ``predictions``: a function taking each example's line of progressive
        predictions (`prediction_line`: before its step), or None."""
        self.est, self.source, self.table, self.bar = est, source, table, bar
        self.classes = None if est.regression else Classes(
            est.classes, est.params["multi_class"], est.loss)
        self.stats = LabelStats(est.regression)
        self.held, self.held_rows, self.held_bytes = [], 0, 0
        self.features = 0           # stored values trained on (held-out rows' not counted, as VW)
        self.from_loss = _probability_from_loss(est)
        self.pass_rows = self.pass_loss = self.pass_weight = 0
        self.holdout, self.predictions = holdout, predictions
        self.passes = 0             # passes begun
        self.pass_seen = 0          # rows of the pass met, held out or not
        self.held_out = (0.0, 0.0)  # the pass's held-out rows' summed (weighted) loss, and their weight

    def go_on_from(self, progress):
        """Continue the counters a model file saved (``fitted.progress_``: the table's,
        the features', the labels' statistics), as one run over both streams would."""
        self.table.go_on_from_saved(progress)
        if self.classes is not None:
            self.classes.advice = Classes.CONTINUED
        self.features = progress["features"]
        self.stats.restore(progress["labels"])

    def progress(self):
        """The counters `go_on_from` takes back, for the model file."""
        return {**self.table.saved(), "features": self.features, "labels": self.stats.saved()}

    def one_pass(self, items):
        """Train on one pass of ``items`` ((rows, labels, origin) triples); the pass's
        (mean progressive loss, rows)."""
        self.begin_pass()
        self.feed(items)
        return self.end_pass()

    def begin_pass(self):
        self.pass_rows, self.pass_loss, self.pass_seen, self.pass_weight = 0, 0.0, 0, 0.0
        self.passes += 1
        self.held_out = (0.0, 0.0)  # the pass's held-out rows' summed (weighted) loss, and their weight
        if self.holdout is not None:
            self.table.holding_out = self.passes >= 2      # VW's "h" lines

    def feed(self, items):
        """Train on ``items`` of the pass (a pass may be fed in parts: fastprox.dask's
        sequential mode feeds each share's on the worker that holds it)."""
        for item in items:
            if item[0].shape[0]:
                self._add(*item)

    def end_pass(self):
        """Start a model on the rows still held, if any; the pass's (mean progressive
        loss, over the rows' importance weights as VW's, rows)."""
        if self.est.learner is None and self.held:
            self._start()
        if not self.pass_rows:
            raise ValueError(f"{self.source.name}: no rows to train on")
        if self.classes is not None:
            self.est.classes = self.classes.final()
        return self.pass_loss / self.pass_weight if self.pass_weight > 0 else 0.0, self.pass_rows

    def stops(self):
        """After `end_pass`, with a holdout: whether the holdout loss has not improved for
        its early_terminate passes; the model is then the best pass's (`Holdout`)."""
        if self.holdout.end_pass(self.passes, *self.held_out, self.est.learner):
            self.est.learner = self.holdout.best_learner
            return True
        return False

    def _add(self, X, y, origin):
        if self.classes is not None:
            self.classes.meet(y, self.source.locator(origin))
        if self.est.learner is not None:
            return self._fit(X, y, origin)
        self.held.append((X, y, origin))
        self.held_rows += X.shape[0]
        self.held_bytes += sum(memoryview(a).nbytes for a in kernel_arrays(X))
        known = self.classes is None or self.classes.settled or self.held_bytes >= LABEL_BUFFER_BYTES
        if known and (self.held_rows >= AUTO_ROWS or not self.est.auto_steps()):
            self._start()

    def _start(self):
        """Make the model from the rows held, then train on them."""
        if self.classes is not None and not self.classes.settled:
            self.classes.fall_back(self.source.name, self.held_rows)
        n_features = max(X.shape[1] for X, _, _ in self.held)
        outputs = 1 if self.classes is None else self.classes.n_outputs
        self.est.start(n_features, outputs, [X for X, _, _ in self.held])
        if self.classes is not None:        # (what predictions and held-out rows read)
            self.est.classes = self.classes.final()
        held, self.held = self.held, []
        for item in held:
            self._fit(*item)

    def _fit(self, X, y, origin):
        """Train on one chunk, the kernel's calls split at the table's lines and at the
        rows held out (`Holdout`), which are scored instead."""
        where = self.source.locator(origin)
        target = y if self.classes is None else self.classes.targets(y, where)
        if X.shape[1] > self.est.learner.n_features:
            self.est.widen(X.shape[1])
        self.stats.add(y, 1 if self.classes is None else self.classes.n_outputs + 1)
        rows = _Rows(*kernel_arrays(X), X.shape[1], target, where, getattr(X, "tags", None),
                     getattr(X, "weights", None))
        n, start = X.shape[0], 0
        held = self.holdout.rows(self.pass_seen, n) if self.holdout is not None else ()
        self.pass_seen += n
        for stop in list(held) + [n]:
            if self.predictions is None:
                self._segment(rows, y, start, stop)
            else:
                self._each_step(rows, y, start, stop)
            if stop < n:
                self._hold_out(rows, y, stop)
            start = stop + 1
        self.features += rows.indptr[n] - rows.indptr[0] - sum(rows.indptr[i + 1] - rows.indptr[i] for i in held)
        self.pass_rows += n - len(held)
        self.bar.update(n)

    def _segment(self, rows, y, start, stop):
        """Train on rows [start, stop) of a chunk, the kernel's calls split at the
        table's lines (with batch_size b, at the end of the step holding the line's row)."""
        batch = self.est.params["batch_size"]
        while start < stop:
            due = start + self.table.next - self.table.rows - 1    # the row of the next line
            if due >= stop:
                self._steps(rows, start, stop)
                break
            step = start + (due - start) // batch * batch          # the step holding it
            end = min(step + batch, stop)
            self._steps(rows, start, step)
            prediction = None if self.from_loss else self._prediction(rows, end - 1)
            loss = self._steps(rows, step, end)
            self._line(rows, y, end, loss, prediction)
            start = end

    def _each_step(self, rows, y, start, stop):
        """`_segment` a step at a time, each row's prediction written before its step."""
        batch = self.est.params["batch_size"]
        for i in range(start, stop, batch):
            end = min(i + batch, stop)
            scores = [self._margins(rows, r) for r in range(i, end)]
            line = self.table.rows + end - i >= self.table.next
            loss = self._steps(rows, i, end)
            for r, s in zip(range(i, end), scores):
                self.predictions(prediction_line(self.est, s, rows.tag(r)))
            if line:
                self._line(rows, y, end, loss, None if self.from_loss else self._shown(scores[-1]))

    def _line(self, rows, y, end, loss, prediction):
        """The table's line after the step ending at row ``end`` - 1, of summed loss
        ``loss``: its prediction given, or P(positive) from the row's own loss."""
        if prediction is None:
            prediction = exp(-loss) if rows.target[end - 1] > 0 else -expm1(-loss)
        self.table.line(y[end - 1], prediction, rows.indptr[end] - rows.indptr[end - 1])

    def _hold_out(self, rows, y, i):
        """Score row i of the chunk, held out: its loss into the pass's holdout and the
        table's holdout counts; its prediction written."""
        scores = self._margins(rows, i)
        weight = 1.0 if rows.weights is None else rows.weights[i]
        loss = weight * example_loss(self.est, scores, rows.target[i])
        self.held_out = (self.held_out[0] + loss, self.held_out[1] + weight)
        self.table.add_holdout(loss, weight)
        if self.predictions:
            self.predictions(prediction_line(self.est, scores, rows.tag(i)))

    def _margins(self, rows, i):
        """Row i's margins (a list of K floats) by the model of now, reading only its
        features (Learner.row_margins)."""
        a, b = rows.indptr[i], rows.indptr[i + 1]
        try:
            return self.est.learner.row_margins(memoryview(rows.data)[a:b], memoryview(rows.indices)[a:b])
        except NonFiniteMargin as e:
            raise ValueError(f"{rows.where(i)}: {e.detail}") from None

    def _shown(self, scores):
        """The table's prediction from a row's margins: the margin, or the class."""
        if len(scores) == 1:
            return scores[0]
        return self.est.classes[max(range(len(scores)), key=scores.__getitem__)]

    def _steps(self, rows, start, stop):
        """The kernel's steps over rows [start, stop) of a chunk; their summed loss."""
        if start == stop:
            return 0.0
        part = rows.part(start, stop)
        try:
            loss = self.est.learner.fit_rows(*part, None, self.est.params["batch_size"])
        except NonFiniteMargin as e:
            raise ValueError(f"{rows.where(start + e.row)}: {e.detail}") from None
        weight = stop - start if part[4] is None else sum(part[4])
        self.table.add(stop - start, loss, weight)
        self.pass_loss += loss
        self.pass_weight += weight
        return loss

    def _prediction(self, rows, i):
        """The model's prediction for row i of a chunk, before its step: the margin, the
        class for several classes."""
        return self._shown(self._margins(rows, i))


def prediction_line(est, scores, tag=None):
    """An example's line of progressive predictions (train --predictions), as VW's -p
    writes it: a binary classifier's raw score (the margin, positive for the larger
    class: VW's prediction before any --link), a regressor's value, a multiclass
    model's class; then its tag if the input has one. Floats are written exactly
    (the shortest repr), where VW rounds to 6 decimals."""
    if est.regression or len(scores) == 1:
        text = repr(scores[0])
    else:
        text = format_label(est.classes[max(range(len(scores)), key=scores.__getitem__)])
    return f"{text} {tag}\n" if tag is not None else text + "\n"


class _Rows:
    """A chunk's CSR buffers and width, its kernel targets, ``where(i)`` naming
    row i's line, and its rows' sample weights (None: all 1; VW's importance weights)."""

    def __init__(self, data, indices, indptr, width, target, where, tags=None, weights=None):
        self.data, self.indices, self.indptr, self.target, self.where = data, indices, indptr, target, where
        self.n, self.width, self.tags, self.weights = len(indptr) - 1, width, tags, weights

    def part(self, start, stop):
        """The CSR buffers, targets and sample weights of rows [start, stop) alone
        (views, the row pointers rebased): the kernel checks the rows it is given, so a
        call over a few rows of a chunk costs those rows, not the chunk."""
        if start == 0 and stop == self.n:
            return self.data, self.indices, self.indptr, self.target, self.weights
        a, b = self.indptr[start], self.indptr[stop]
        indptr = memoryview(self.indptr)
        weights = None if self.weights is None else memoryview(self.weights)[start:stop]
        return (memoryview(self.data)[a:b], memoryview(self.indices)[a:b],
                array(indptr.format, [p - a for p in indptr[start:stop + 1]]), memoryview(self.target)[start:stop],
                weights)

    def tag(self, i):
        """Row i's tag (VW's input has them: a chunk's ``tags``, bytes), or None where
        the row has none."""
        tag = None if self.tags is None else self.tags[i]
        if isinstance(tag, bytes):
            tag = tag.decode("utf-8", "backslashreplace")
        return tag or None
