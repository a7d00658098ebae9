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
from math import exp, expm1, inf

from .._core import AUTO_ROWS
from .._kernels import NonFiniteMargin
from .._libsvm import format_predictions
from .._validation import kernel_arrays, kernel_loss
from .labels import LABEL_BUFFER_BYTES, Classes, label_texts
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
        ``predictions``: a function taking the examples' lines of progressive
        predictions (each made before its step), UTF-8 ``bytes`` of a run of whole
        lines at a time (a kernel's call's, `_write`), or None."""
        self.est, self.source, self.table, self.bar = est, source, table, bar
        self.classes = None if est.regression else Classes(
            est.classes, est.params["multi_class"], est.loss, est.spelling)
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
        """Train on one chunk, the kernel's calls split at the table's lines; the rows held
        out (`Holdout`) are scored instead, and with predictions every row is, before its
        step (`_run`)."""
        rows, held = self._chunk(X, y, origin)
        n, start = X.shape[0], 0
        scores = array("d", bytes(8 * (n if self.predictions else len(held)) * self.est.learner.n_outputs))
        batch = self.est.params["batch_size"]
        while start < n:
            due = _line_row(held, start, n, self.table.next - self.table.rows - 1)
            if due is None:
                self._run(rows, held, start, n, scores)
                break
            first = max(start, _before(held, due) + 1)      # the run of trained rows holding it
            step = first + (due - first) // batch * batch    # the step holding it
            end = min(step + batch, n, _after(held, due))
            self._run(rows, held, start, step, scores)
            prediction = None if self.from_loss else self._prediction(rows, end - 1)
            loss = self._run(rows, held, step, end, scores)
            self._line(rows, y, end, loss, prediction)
            start = end
        self._count(rows, held)

    def _chunk(self, X, y, origin):
        """Meet a chunk of the pass before training on it: its labels encoded, the model
        widened to its columns, its labels counted; its rows (`_Rows`) and the range of
        them held out (`Holdout`; empty without one)."""
        where = self.source.locator(origin)
        target = y if self.classes is None else self.classes.targets(y, where)
        if X.shape[1] > self.est.learner.n_features:
            self.est.widen(X.shape[1])
        self.stats.add(y, 1 if self.classes is None else self.classes.n_outputs + 1)
        rows = _Rows(*kernel_arrays(X), X.shape[1], target, where, getattr(X, "tags", None),
                     getattr(X, "weights", None))
        n = X.shape[0]
        held = self.holdout.rows(self.pass_seen, n) if self.holdout is not None else range(0)
        self.pass_seen += n
        return rows, held

    def _count(self, rows, held):
        """After a chunk: its stored values and rows trained on (those ``held`` out not
        counted, as VW), and the progress bar moved past it."""
        n, ends = rows.n, memoryview(rows.indptr)
        # (the held-out rows' stored values: the sum of their rows' ends less that of their starts)
        held_values = (sum(ends[held.start + 1:held.stop + 1:held.step]) - sum(ends[held.start:held.stop:held.step])
                       if held else 0)
        self.features += rows.indptr[n] - rows.indptr[0] - held_values
        self.pass_rows += n - len(held)
        self.bar.update(n)

    def _run(self, rows, held, start, stop, scores):
        """Train on rows [start, stop) of a chunk but those ``held`` out, which are scored
        and counted in the holdout; with predictions, every row's line written (its
        margins before its step); the summed loss of the rows trained. ``scores`` holds
        the margins: K a row of the chunk with predictions, else K a held-out row. The
        kernel's one call (`Learner.fit_rows`' stream; a grouped model's rows too, which
        the kernel scores through `score_grouped_row`)."""
        if start == stop:
            return 0.0
        K = self.est.learner.n_outputs
        first, last = _index(held, start), _index(held, stop)
        inside = held[first:last]
        part = rows.part(start, stop)
        sums = array("d", [self.table.total, self.pass_loss, self.table.weight, self.pass_weight])
        held_sums = array("d", [*self.held_out, self.table.held_total, self.table.held_rows]) if inside else None
        try:
            loss = self.est.learner.fit_rows(
                *part, None, self.est.params["batch_size"], held=(inside[0] - start, inside.step) if inside
                else None, scores=memoryview(scores)[start * K:stop * K] if self.predictions
                else memoryview(scores)[first * K:last * K],
                each_step=self.predictions is not None, sums=sums, held_sums=held_sums)
        except NonFiniteMargin as e:
            raise ValueError(f"{rows.where(start + e.row)}: {e.detail}") from None
        self.table.rows += stop - start - len(inside)
        self.table.total, self.pass_loss, self.table.weight = sums[0], sums[1], sums[2]
        if rows.weights is None:
            self.pass_weight += stop - start - len(inside)
        else:
            self.pass_weight = sums[3]
        if inside:
            self.held_out = (held_sums[0], held_sums[1])
            self.table.held_total, self.table.held_rows = held_sums[2], held_sums[3]
        if self.predictions is not None:
            self._write(rows, start, stop, scores)
        return loss

    def _write(self, rows, start, stop, scores):
        """The lines of predictions of rows [start, stop) of a chunk, from their margins in
        ``scores``, in one call of ``predictions`` (`format_predictions`, as VW's -p: a
        binary classifier's raw score, the margin, positive for the larger class: VW's
        prediction before any --link; a regressor's value; a multiclass model's class;
        then the row's tag, if it has one). Floats are written exactly (the shortest
        repr), where VW rounds to 6 decimals."""
        K = self.est.learner.n_outputs
        labels = None if self.est.regression or K == 1 else label_texts(self.est.classes)
        self.predictions(format_predictions(memoryview(scores)[start * K:stop * K], K, labels, rows.tags, start))

    def _line(self, rows, y, end, loss, prediction):
        """The table's line after the step ending at row ``end`` - 1, of summed loss
        ``loss``: its prediction given, or P(positive) from the row's own loss."""
        if prediction is None:
            prediction = exp(-loss) if rows.target[end - 1] > 0 else -expm1(-loss)
        self.table.line(y[end - 1], prediction, rows.indptr[end] - rows.indptr[end - 1])

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

    def _prediction(self, rows, i):
        """The model's prediction for row i of a chunk, before its step: the margin, the
        class for several classes."""
        return self._shown(self._margins(rows, i))


def _index(held, x):
    """How many rows of ``held`` (a range of step >= 1) lie below row x."""
    return min(len(held), max(0, -((held.start - x) // held.step))) if held else 0


def _line_row(held, start, n, t):
    """The chunk's row of the table's next line: the row after ``t`` rows trained from
    row ``start`` on, rows ``held`` out not counted; None where it lies past the chunk's
    ``n`` rows. (The least fixed point of x = start + t + the held rows in [start, x].)"""
    if start + t >= n:
        return None
    x = start + t
    while True:
        moved = start + t + _index(held, x + 1) - _index(held, start)
        if moved == x:
            return x
        if moved >= n:
            return None
        x = moved


def _before(held, row):
    """The last row of ``held`` before ``row``, or -1."""
    i = _index(held, row)
    return held[i - 1] if i else -1


def _after(held, row):
    """The first row of ``held`` after ``row`` (not held itself), or infinity."""
    i = _index(held, row)
    return held[i] if i < len(held) else inf


class _Rows:
    """A chunk's CSR buffers and width, its kernel targets, ``where(i)`` naming
    row i's line, its rows' tags (VW's input has them: a chunk's ``tags``, ``bytes`` or
    None a row; None: no row has one) and sample weights (None: all 1; VW's
    importance weights)."""

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
