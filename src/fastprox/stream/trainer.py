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
from .labels import LABEL_BUFFER_BYTES, Classes
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

    def __init__(self, est, source, table, bar):
        self.est, self.source, self.table, self.bar = est, source, table, bar
        self.classes = None if est.regression else Classes(
            est.classes, est.params["multi_class"], est.loss)
        self.stats = LabelStats(est.regression)
        self.held, self.held_rows, self.held_bytes = [], 0, 0
        self.features = 0           # stored values trained on
        self.from_loss = _probability_from_loss(est)
        self.pass_rows = self.pass_loss = 0

    def one_pass(self, items):
        """Train on one pass of ``items`` ((rows, labels, origin) triples); the pass's
        (mean progressive loss, rows)."""
        self.begin_pass()
        self.feed(items)
        return self.end_pass()

    def begin_pass(self):
        self.pass_rows, self.pass_loss = 0, 0.0

    def feed(self, items):
        """Train on ``items`` of the pass (a pass may be fed in parts: fastprox.dask's
        sequential mode feeds each share's on the worker that holds it)."""
        for item in items:
            if item[0].shape[0]:
                self._add(*item)

    def end_pass(self):
        """Start a model on the rows still held, if any; the pass's (mean progressive
        loss, rows)."""
        if self.est.learner is None and self.held:
            self._start()
        if not self.pass_rows:
            raise ValueError(f"{self.source.name}: no rows to train on")
        if self.classes is not None:
            self.est.classes = self.classes.final()
        return self.pass_loss / self.pass_rows, self.pass_rows

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
        held, self.held = self.held, []
        for item in held:
            self._fit(*item)

    def _fit(self, X, y, origin):
        """Train on one chunk, the kernel's calls split at the table's lines."""
        where = self.source.locator(origin)
        target = y if self.classes is None else self.classes.targets(y, where)
        if X.shape[1] > self.est.learner.n_features:
            self.est.widen(X.shape[1])
        self.stats.add(y, 1 if self.classes is None else self.classes.n_outputs + 1)
        rows = _Rows(*kernel_arrays(X), X.shape[1], target, where, getattr(X, "weights", None))
        n, start, batch = X.shape[0], 0, self.est.params["batch_size"]
        while start < n:
            due = start + self.table.next - self.table.rows - 1    # the row of the next line
            if due >= n:
                self._steps(rows, start, n)
                break
            step = start + (due - start) // batch * batch          # the step holding it
            end = min(step + batch, n)
            self._steps(rows, start, step)
            prediction = None if self.from_loss else self._prediction(rows, end - 1)
            loss = self._steps(rows, step, end)
            if prediction is None:
                prediction = exp(-loss) if target[end - 1] > 0 else -expm1(-loss)
            self.table.line(y[end - 1], prediction, rows.indptr[end] - rows.indptr[end - 1])
            start = end
        self.features += rows.indptr[n] - rows.indptr[0]
        self.pass_rows += n
        self.bar.update(n)

    def _steps(self, rows, start, stop):
        """The kernel's steps over rows [start, stop) of a chunk; their summed loss."""
        if start == stop:
            return 0.0
        order = None if stop - start == rows.n else array("q", range(start, stop))
        try:
            loss = self.est.learner.fit_rows(rows.data, rows.indices, rows.indptr, rows.target,
                                             rows.weights, order, self.est.params["batch_size"])
        except NonFiniteMargin as e:
            raise ValueError(f"{rows.where(e.row)}: {e.detail}") from None
        self.table.add(stop - start, loss)
        self.pass_loss += loss
        return loss

    def _prediction(self, rows, i):
        """The model's prediction for row i of a chunk, before its step: the margin (a
        pass over the weights: Learner.margins), the class for several classes."""
        a, b = rows.indptr[i], rows.indptr[i + 1]
        one = array(memoryview(rows.indptr).format, [0, b - a])
        try:
            scores = self.est.learner.margins(memoryview(rows.data)[a:b], memoryview(rows.indices)[a:b], one,
                                              rows.width)[0]
        except NonFiniteMargin as e:
            raise ValueError(f"{rows.where(i)}: {e.detail}") from None
        if len(scores) == 1:
            return scores[0]
        return self.est.classes[max(range(len(scores)), key=scores.__getitem__)]


class _Rows:
    """A chunk's CSR buffers and width, its kernel targets, ``where(i)`` naming
    row i's line, and its rows' sample weights (None: all 1; VW's importance weights)."""

    def __init__(self, data, indices, indptr, width, target, where, weights=None):
        self.data, self.indices, self.indptr, self.target, self.where = data, indices, indptr, target, where
        self.weights = weights
        self.n, self.width = len(indptr) - 1, width
