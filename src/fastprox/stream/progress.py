"""What `fastprox train` prints while it learns: Vowpal Wabbit's progressive
validation table on standard error, a progress bar on a terminal, and the
summary that ends the table.

The table has a line at example counts 1, 2, 4, 8, ... (the kernel's calls are
split at those rows, so the numbers are exact, not those of the chunk that
happens to end nearby; with --batch-size b, at the end of the step that holds
the count): the mean progressive loss so far, the mean since the line before,
the example counter, and the current example's label, the model's prediction
for it before its update and its number of stored values.
The prediction is P(label = positive class) for a binary log-loss model (from
the example's own loss, exp(-loss): exact and free), else the margin (the
predicted value for regression, the predicted class for several classes),
which costs one pass over the model's weights at each line.

VW prints the best constant predictor and its loss first; one pass cannot
know them before reading the labels, so they end the table here, from running
label statistics kept in O(classes) memory: the label counts give the binary
losses' best constant margin by a 1-D minimization (one per class for
one-vs-rest; the class frequencies' entropy for the multinomial log loss),
the labels' running mean and variance the squared loss's (the mean; half the
variance). Huber, epsilon-insensitive and Crammer-Singer have none in O(1)
memory: their best constant is a quantile of the labels (a K-dimensional
problem for Crammer-Singer).
"""
import math
import sys

from .._arrays import sum_squares
from .._libsvm import count_labels
from .losses import BINARY, best_binary_constant

#: The table's columns: header lines and the width of each field.
_HEADER = (("average", "since", "example", "current", "current", "current"),
           ("loss", "last", "counter", "label", "predict", "features"))
_WIDTHS = (10, 10, 12, 10, 10, 9)


class Table:
    """The progressive validation table: the examples trained, their weight (the sum
    of their importance weights, VW's weighted example sum) and their summed loss
    (each example's weighted), whose means divide by the weight as VW's do,
    and lines given to ``write`` as they come (no lines when ``write`` is None:
    --quiet), at the example counts ``interval`` sets (VW's --progress): a float
    multiplies the count of the last line (2.0: 1, 2, 4, 8, ...), an int adds to it
    (10: 10, 20, 30, ...). With a holdout (`holding_out`: from the second pass on)
    the lines show the held-out rows' mean loss, marked "h", as VW's."""

    def __init__(self, write, predicts, interval=2.0):
        self.write, self.predicts, self.interval = write, predicts, interval
        self.rows, self.total = 0, 0.0          # examples trained, their summed loss
        self.weight = 0.0                       # their importance weights' sum
        self.next = self._first() if write else math.inf    # the example count of the next line
        self.last_rows, self.last_total, self.last_weight = 0, 0.0, 0.0
        self.holding_out = False
        self.held_rows, self.held_total = 0.0, 0.0          # held-out examples' weight, their summed loss
        self.held_last_rows, self.held_last_total = 0, 0.0

    def saved(self):
        """The counters a model file keeps (``fitted.progress_``) for `go_on_from_saved`."""
        return {"examples": self.rows, "loss_sum": self.total, "last_examples": self.last_rows,
                "last_loss_sum": self.last_total, "weight_sum": self.weight, "last_weight_sum": self.last_weight}

    def go_on_from_saved(self, saved):
        """Continue the counters of a run that saved them (`saved`): the next line at
        the count this table's interval sets after the saved table's last line (the
        first, for a table that printed none)."""
        self.rows, self.total, self.weight = saved["examples"], saved["loss_sum"], saved["weight_sum"]
        self.last_rows, self.last_total = saved["last_examples"], saved["last_loss_sum"]
        self.last_weight = saved["last_weight_sum"]
        if self.write is None:
            return
        self.next = self._after(self.last_rows) if self.last_rows else self._first()
        while self.next <= self.rows:       # lines the saved run did not print (it was --quiet)
            self.next = self._after(self.next)

    def _first(self):
        """The example count of the first line: 1, or an additive interval's N (VW's)."""
        return self.interval if isinstance(self.interval, int) else 1

    def _after(self, rows):
        """The example count of the line after one at ``rows``."""
        if isinstance(self.interval, int):
            return rows + self.interval
        return max(rows + 1, math.ceil(rows * self.interval))

    def go_on_from(self, shown):
        """Take the lines the table ``shown`` wrote as this one's (the same rows'
        lines: fastprox.stream.preview): the next line is its next."""
        if shown.last_rows:
            self.next, self.last_rows, self.last_total = shown.next, shown.last_rows, shown.last_total
            self.last_weight = shown.last_weight

    def add(self, rows, loss, weight):
        """Count ``rows`` examples of importance weights summing to ``weight`` whose
        summed (weighted) loss is ``loss`` (no line)."""
        self.rows += rows
        self.total += loss
        self.weight += weight

    def line(self, label, prediction, features):
        """The line at the current count, then the next count doubled."""
        if not self.last_rows:  # the header with the first line: an error before it is alone
            self.write(f"(current predict: {self.predicts})")
            for words in _HEADER:
                self.write(" ".join(w.ljust(n) for w, n in zip(words, _WIDTHS)).rstrip())
        if self.holding_out:
            mean, since = _holdout_mean(self.held_total, self.held_rows), _holdout_mean(
                self.held_total - self.held_last_total, self.held_rows - self.held_last_rows)
            self.held_last_rows, self.held_last_total = self.held_rows, self.held_total
        else:
            mean = _weighted_mean(self.total, self.weight)
            since = _weighted_mean(self.total - self.last_total, self.weight - self.last_weight)
        fields = (mean, since, str(self.rows), _number(label), _number(prediction), str(features))
        self.write(" ".join(f.ljust(n) for f, n in zip(fields, _WIDTHS)).rstrip()
                   + (" h" if self.holding_out else ""))
        self.last_rows, self.last_total, self.last_weight = self.rows, self.total, self.weight
        self.next = self._after(self.rows)


def _weighted_mean(total, weight):
    """A mean loss column: the summed loss over the examples' weight, as VW divides it;
    "n.a." when their weights are all 0."""
    return decimal(total / weight) if weight > 0 else "n.a."


def _holdout_mean(total, weight):
    """A holdout column: the mean loss over the held-out examples' weight, or "unknown"
    without held-out rows (or weight: VW's word)."""
    return decimal(total / weight) if weight > 0 else "unknown"


def decimal(x):
    """A loss or metric as the commands print it: six decimals, or six significant
    digits with an exponent from 1e15 on (finite values too large for their
    steps' scale, 1e308, would otherwise print as 300 digits)."""
    return f"{x:.6f}" if abs(x) < 1e15 else f"{x:.6e}"


def _number(x):
    """A label or prediction as the table shows it: integers without '.0', else 4 digits."""
    x = float(x)
    return str(int(x)) if x.is_integer() and abs(x) < 1e15 else f"{x:.4f}"


class LabelStats:
    """Running statistics of the labels trained on, for the best constant: counts
    per label (classification) or count, mean and sum of squared deviations
    (regression; chunks combined by Chan et al.'s formula)."""

    def __init__(self, regression):
        self.regression = regression
        self.counts = {}
        self.n, self.mean, self.m2 = 0, 0.0, 0.0

    def add(self, y, limit):
        """Add a chunk's labels ``y`` (float64 buffer), of at most ``limit`` distinct
        values for classification (the classes are checked before)."""
        if not self.regression:
            count_labels(y, self.counts, limit)
            return
        n = len(y)
        if not n:
            return
        mean = math.fsum(y) / n
        m2 = max(0.0, sum_squares(y) - n * mean * mean)
        total = self.n + n
        delta = mean - self.mean
        self.mean += delta * n / total
        self.m2 += m2 + delta * delta * self.n * n / total
        self.n = total

    def saved(self):
        """The statistics a model file keeps (``fitted.progress_.labels``): [[label,
        count], ...] of a classifier, [n, mean, m2] of a regressor."""
        if self.regression:
            return [self.n, self.mean, self.m2]
        return [[label, count] for label, count in self.counts.items()]

    def restore(self, saved):
        """Continue from statistics `saved` (a model file's, checked when read)."""
        if self.regression and len(saved) == 3 and not isinstance(saved[0], list):
            self.n, self.mean, self.m2 = saved
        elif not self.regression:
            self.counts = {float(label): count for label, count in saved}

    def best_constant(self, loss, classes, multinomial):
        """(the best constant as text, its mean loss as text): "n/a" with the reason
        where it cannot be had from these statistics."""
        if self.regression:
            if loss != "squared":
                return f"n/a ({loss} loss: a quantile of the labels, not kept in one pass)", "n/a"
            return f"{self.mean:.6g}", decimal(self.m2 / self.n / 2)
        n = sum(self.counts.values())
        counts = [self.counts.get(c, 0) for c in classes]
        if len(classes) == 2:
            c, value = best_binary_constant(loss, counts[1], counts[0])
            return f"{c:.6g} (margin)", decimal(value)
        if multinomial and loss == "log":
            entropy = -sum(k / n * math.log(k / n) for k in counts if k)
            return "log(class frequencies) (one score per class)", decimal(entropy)
        if multinomial or loss not in BINARY:
            return "n/a (Crammer-Singer: a K-dimensional problem)", "n/a"
        total = sum(best_binary_constant(loss, k, n - k)[1] for k in counts)
        return "one margin per class (one-vs-rest)", decimal(total)


def summary(table, stats, loss, classes, multinomial, features, passes=1, holdout=None):
    """VW's closing lines: examples (and ``passes``, when several), mean loss (with a
    `fastprox.stream.holdout.Holdout`, its best pass's holdout loss, marked h as VW
    marks it), the best constant and its loss (known only now: see the module's
    docstring), stored values in all."""
    constant, constant_loss = stats.best_constant(loss, classes, multinomial)
    mean = _weighted_mean(table.total, table.weight) if table.rows else decimal(0.0)
    if holdout is not None:
        mean = "undefined (no holdout)" if holdout.best_pass is None else decimal(holdout.best_loss) + " h"
    used = f"passes used = {passes}\n" if passes > 1 else ""
    table.write(f"\nfinished run\nnumber of examples = {table.rows}\n{used}"
                f"average loss = {mean}\n"
                f"best constant = {constant}\nbest constant's loss = {constant_loss}\n"
                f"total feature number = {features}")


def progress_bar(total, quiet):
    """tqdm's bar on a terminal (standard error); elsewhere, or ``quiet``, a stand-in
    that shows nothing and spares the import. Either writes the table's lines
    (``write_line``): tqdm's above its bar."""
    if quiet or not sys.stderr.isatty():
        return NoBar()
    from tqdm import tqdm

    class Bar(tqdm):
        def write_line(self, text):
            self.write(text, file=sys.stderr)

    return Bar(total=total, unit=" rows", unit_scale=True, desc="train", leave=False)


class NoBar:
    """What the trainer calls on a progress bar: the table's lines go straight to
    standard error, the rest does nothing."""

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def update(self, n):
        pass

    def write_line(self, text):
        print(text, file=sys.stderr, flush=True)
