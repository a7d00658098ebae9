"""The stream's pass in the kernel (`Learner.fit_rows`' held, scores, each_step, sums;
`fastprox.stream.trainer.Trainer._run`): VW's holdout and ``train -p`` give the bits of
the per-row definition they replace, where the kernel's calls were split at every
held-out row (scored from Python) and, with predictions, at every step (each row's
margins read from Python before it). That definition is kept here as the reference
(`PerRowTrainer`, the trainer of 79f4da5): every table line, prediction line, holdout
loss, counter and weight of the model is compared."""
import copy
import math
import pickle
import struct
from array import array
from types import SimpleNamespace

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import example, given, settings
from hypothesis import strategies as st

from fastprox._core import CLASSIFIER_DEFAULTS, REGRESSOR_DEFAULTS
from fastprox._kernels import Learner, exact_sum, held_out_loss
from fastprox._libsvm import format_predictions
from fastprox._registry import LOSSES, RULES
from fastprox._validation import NonFiniteMargin
from fastprox.stream.holdout import Holdout
from fastprox.stream.model import StreamModel
from fastprox.stream.progress import NoBar, Table
from fastprox.stream.labels import format_label
from fastprox.stream.trainer import Trainer, predicts
from tests.support.prediction_lines import prediction_line, row_tag
from tests.support.reference import example_loss


class PerRowTrainer(Trainer):
    """The reference: 79f4da5's `Trainer`, held-out rows and predictions between calls."""

    def _fit(self, X, y, origin):
        rows, held = self._chunk(X, y, origin)      # (the chunk met as the trainer meets it)
        n, start = X.shape[0], 0
        for stop in list(held) + [n]:
            if self.predictions is None:
                self._segment(rows, y, start, stop)
            else:
                self._each_step(rows, y, start, stop)
            if stop < n:
                self._hold_out(rows, y, stop)
            start = stop + 1
        self._count(rows, held)

    def _segment(self, rows, y, start, stop):
        batch = self.est.params["batch_size"]
        while start < stop:
            due = start + self.table.next - self.table.rows - 1
            if due >= stop:
                self._steps(rows, start, stop)
                break
            step = start + (due - start) // batch * batch
            end = min(step + batch, stop)
            self._steps(rows, start, step)
            prediction = None if self.from_loss else self._prediction(rows, end - 1)
            loss = self._steps(rows, step, end)
            self._line(rows, y, end, loss, prediction)
            start = end

    def _each_step(self, rows, y, start, stop):
        batch = self.est.params["batch_size"]
        for i in range(start, stop, batch):
            end = min(i + batch, stop)
            scores = [self._margins(rows, r) for r in range(i, end)]
            line = self.table.rows + end - i >= self.table.next
            loss = self._steps(rows, i, end)
            for r, s in zip(range(i, end), scores):
                self.predictions(prediction_line(self.est, s, row_tag(rows.tags, r)).encode())
            if line:
                self._line(rows, y, end, loss, None if self.from_loss else self._shown(scores[-1]))

    def _steps(self, rows, start, stop):
        """The kernel's steps over rows [start, stop) of a chunk, a call of their own;
        their summed loss."""
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

    def _hold_out(self, rows, y, i):
        scores = self._margins(rows, i)
        weight = 1.0 if rows.weights is None else rows.weights[i]
        loss = weight * example_loss(self.est, scores, rows.target[i])
        self.held_out = (self.held_out[0] + loss, self.held_out[1] + weight)
        self.table.held_rows += weight
        self.table.held_total += loss
        if self.predictions:
            self.predictions(prediction_line(self.est, scores, row_tag(rows.tags, i)).encode())


class Source:
    name = "test rows"

    @staticmethod
    def locator(origin):
        return lambda i: f"test rows: chunk {origin}, row {i + 1}"


def chunks(n, d, labels, seed, weighted=False, tagged=False, sizes=(37, 200, 1, 90)):
    """(CSR chunk with weights and tags if asked, float64 labels, origin) triples."""
    rng = np.random.default_rng(seed)
    X = sp.random(n, d, density=0.15, format="csr", random_state=seed, dtype=np.float64)
    X.data = np.round(X.data * 4, 2)
    y = labels(rng, n)
    out, start, k = [], 0, 0
    while start < n:
        stop = min(n, start + sizes[k % len(sizes)])
        part = X[start:stop]
        if weighted:
            part.weights = array("d", rng.choice([0.5, 1.0, 2.0, 3.25], stop - start))
        if tagged:      # (VW's ASCII tags, none, empty ones, others not ASCII, not UTF-8)
            part.tags = [None if i % 3 == 0 else b"" if i % 7 == 0 else f"r{i}-\u00e9".encode() if i % 5 == 0
                         else f"r{i}\xff\xc3".encode("latin-1") if i % 11 == 0 else f"r{i}".encode()
                         for i in range(start, stop)]
        out.append((part, array("d", y[start:stop]), k))
        start, k = stop, k + 1
    return out


def binary(rng, n):
    return rng.choice([-1.0, 1.0], n)


def three(rng, n):
    return rng.choice([1.0, 2.0, 5.0], n).astype(float)


def values(rng, n):
    return np.round(rng.normal(size=n) * 3, 3)


def train(cls, params, regression, classes, items, passes, holdout, predict, interval=2.0):
    """Everything a run shows or keeps: the table's lines, the predictions, each pass's
    (mean loss, rows) and holdout loss, the counters saved, the model's arrays."""
    est = StreamModel(params, regression, classes)
    lines, written = [], []
    table = Table(lines.append, predicts(est), interval)
    trainer = cls(est, Source(), table, NoBar(), holdout, written.append if predict else None)
    passes_seen = []
    for _ in range(passes):
        passes_seen.append(trainer.one_pass(items))
        if holdout is not None and trainer.stops():
            break
    arrays = {k: bytes(memoryview(v).cast("B")) for k, (v, _) in est.learner.saved_arrays().items()}
    return (lines, b"".join(written), passes_seen, holdout and holdout.losses, trainer.progress(), trainer.held_out,
            trainer.features, arrays, est.learner.scalars())


CASES = [
    # (params, regression, classes, labels, weighted)
    (dict(CLASSIFIER_DEFAULTS), False, [-1.0, 1.0], binary, False),
    (dict(CLASSIFIER_DEFAULTS, batch_size=3), False, [-1.0, 1.0], binary, True),
    (dict(CLASSIFIER_DEFAULTS, update="ftrl", loss="hinge"), False, [-1.0, 1.0], binary, True),
    (dict(CLASSIFIER_DEFAULTS, update="rda", penalty="elasticnet", alpha=1e-3), False, [-1.0, 1.0], binary, False),
    (dict(CLASSIFIER_DEFAULTS, schedule="adagrad", alpha=1e-3, average=True), False, [-1.0, 1.0], binary, False),
    (dict(CLASSIFIER_DEFAULTS, loss="modified_huber", batch_size=4, alpha=1e-3), False, [-1.0, 1.0], binary, True),
    (dict(CLASSIFIER_DEFAULTS), False, [1.0, 2.0, 5.0], three, False),
    (dict(CLASSIFIER_DEFAULTS, multi_class="multinomial", batch_size=2), False, [1.0, 2.0, 5.0], three, True),
    (dict(CLASSIFIER_DEFAULTS, multi_class="multinomial", loss="hinge", update="ftrl"), False, [1.0, 2.0, 5.0],
     three, False),
    (dict(REGRESSOR_DEFAULTS), True, None, values, False),
    (dict(REGRESSOR_DEFAULTS, loss="huber", batch_size=3, schedule="adagrad"), True, None, values, True),
    (dict(CLASSIFIER_DEFAULTS, penalty="l1_l2", alpha=1e-3, groups=list(np.arange(40) % 5)), False, [-1.0, 1.0],
     binary, True),
    # Grouped models scored in the pass (`score_grouped_row`): rda, the other group penalties, features
    # of no group (-1), group weights, several outputs, mini-batches.
    (dict(CLASSIFIER_DEFAULTS, update="rda", penalty="l1_l2", alpha=1e-2, groups=list(np.arange(40) % 6 - 1)),
     False, [1.0, 2.0, 5.0], three, False),
    (dict(CLASSIFIER_DEFAULTS, penalty="sparse_group", alpha=1e-2, batch_size=3, groups=list(np.arange(40) // 8)),
     False, [-1.0, 1.0], binary, True),
    (dict(CLASSIFIER_DEFAULTS, penalty="squared_group", alpha=1e-2, groups=list(np.arange(40) % 4),
          group_weights=[0.5, 1.0, 2.0, 0.0]), False, [-1.0, 1.0], binary, False),
    (dict(CLASSIFIER_DEFAULTS, update="rda", schedule="adagrad", penalty="l1_linf", alpha=1e-2,
          multi_class="multinomial", groups=list(np.arange(40) % 3 - 1)), False, [1.0, 2.0, 5.0], three, True),
    (dict(REGRESSOR_DEFAULTS, penalty="l1_l2", alpha=1e-2), True, None, values, False),
    # The held-out rows' losses, the kernel's (`registry_loss`): every loss, weighted or not.
    (dict(CLASSIFIER_DEFAULTS, loss="squared_hinge", alpha=1e-3), False, [-1.0, 1.0], binary, True),
    (dict(CLASSIFIER_DEFAULTS, loss="perceptron", batch_size=2), False, [-1.0, 1.0], binary, False),
    (dict(CLASSIFIER_DEFAULTS, loss="modified_huber", alpha=1e-3), False, [1.0, 2.0, 5.0], three, True),
    (dict(CLASSIFIER_DEFAULTS, loss="hinge"), False, [1.0, 2.0, 5.0], three, False),
    (dict(CLASSIFIER_DEFAULTS, multi_class="multinomial", update="rda", alpha=1e-3), False, [1.0, 2.0, 5.0],
     three, False),
    (dict(REGRESSOR_DEFAULTS, loss="epsilon_insensitive", epsilon=0.25), True, None, values, True),
    (dict(REGRESSOR_DEFAULTS, loss="huber", epsilon=0.5), True, None, values, False),
    (dict(REGRESSOR_DEFAULTS, batch_size=2), True, None, values, True),
]


@pytest.mark.parametrize("case", range(len(CASES)))
@pytest.mark.parametrize("mode", ["holdout", "predict", "holdout and predict", "after", "neither"])
def test_the_kernels_pass_is_the_per_row_definition(case, mode):
    """Every figure the run shows or keeps equals the per-row definition's, bit for bit:
    rules, batch sizes, binary, multiclass (one-vs-rest, multinomial), regression,
    importance weights, tags, VW's holdout (every K-th row, or those after N), -p, the
    table's lines at a multiplying and an adding interval, grouped models."""
    params, regression, classes, labels, weighted = CASES[case]
    items = chunks(500, 40, labels, seed=case, weighted=weighted, tagged=case % 2 == 0)
    holdout = {"holdout": (7, None), "holdout and predict": (4, None), "after": (10, 300)}.get(mode)
    for interval in (2.0, 25):
        runs = [train(cls, params, regression, classes, items, 3,
                      None if holdout is None else Holdout(holdout[0], 9, holdout[1]),
                      "predict" in mode, interval) for cls in (Trainer, PerRowTrainer)]
        assert runs[0] == runs[1]
        assert runs[0][0] and ("predict" not in mode or runs[0][1].count(b"\n") == 1500)


def test_a_grouped_models_predictions_are_floats(tmp_path):
    """A grouped model's row margins (read through its materialized weights) are Python
    floats, as every model's: -p wrote "np.float64(...)" for them."""
    X = sp.random(50, 12, density=0.3, format="csr", random_state=1)
    y = np.where(np.arange(50) % 2, 1.0, -1.0)
    learner = Learner(12, 1, "fobos", "invsqrt", "l1_l2", "log", alpha=1e-3, groups=np.arange(12) % 3)
    learner.fit_rows(X.data, X.indices, X.indptr, y, None, None, 1)
    margins = learner.row_margins(X.data[:5], X.indices[:5])
    assert [type(m) for m in margins] == [float]
    assert prediction_line(StreamModel(CLASSIFIER_DEFAULTS, False, [-1.0, 1.0]), margins) == f"{margins[0]!r}\n"
    assert "np." not in repr(margins[0])


def _learner():
    X = sp.random(10, 6, density=0.5, format="csr", random_state=2)
    return Learner(6, 1, "fobos", "invsqrt", "l1", "log"), X, np.where(np.arange(10) % 2, 1.0, -1.0)


@pytest.mark.parametrize("held, period", [(4, 5), (4, 6), (9, 1), (0, 100), (10, 1)])
def test_held_rows_up_to_the_calls_end(held, period):
    """A held-out row at the call's last row, or the next one just past it, is scored and
    nothing past the rows is read (a held row at the end once read beyond them), the
    same bits as calls split at the held rows."""
    learner, X, y = _learner()
    reference = Learner(6, 1, "fobos", "invsqrt", "l1", "log")
    held_rows = list(range(held, 10, period))
    scores = array("d", bytes(8 * len(held_rows)))
    learner.fit_rows(X.data, X.indices, X.indptr, y, None, None, 1, held=(held, period), scores=scores)
    start = 0
    for stop in held_rows + [10]:
        if stop > start:
            reference.fit_rows(X.data, X.indices, X.indptr, y, None, np.arange(start, stop), 1)
        if stop < 10:
            a, b = X.indptr[stop], X.indptr[stop + 1]
            assert scores[held_rows.index(stop)] == reference.row_margins(X.data[a:b], X.indices[a:b])[0]
        start = stop + 1
    assert learner.coef().tobytes() == reference.coef().tobytes()


GROUPED_RULES = [("fobos", "invsqrt", "l1_l2"), ("fobos", "invsqrt", "l1_linf"), ("fobos", "invsqrt", "sparse_group"),
                 ("fobos", "invsqrt", "squared_group"), ("rda", "invsqrt", "l1_l2"), ("rda", "adagrad", "sparse_group"),
                 ("rda", "adagrad", "l1_linf")]


@pytest.mark.parametrize("rule", GROUPED_RULES)
@pytest.mark.parametrize("groups", ["rows", "user", "user weighted"])
@pytest.mark.parametrize("outputs", [1, 3])
@pytest.mark.parametrize("each_step", [False, True])
def test_a_grouped_models_rows_are_scored_in_the_pass(rule, groups, outputs, each_step):
    """A grouped model's held-out rows (and with each_step, -p's, every row before its
    step) are scored in the kernel's pass (`score_grouped_row`) with the bits of the
    margins of its materialized weights (`Learner.row_margins`, which the trainer read
    between calls before), and the model is that of calls split at them: each feature
    its own group, user groups with features of no group (-1), group weights, one output
    or three (one-vs-rest), mini-batches of 2."""
    rng = np.random.default_rng(5)
    d, n, batch = 14, 80, 2 if each_step else 1
    X = sp.random(n, d, density=0.4, format="csr", random_state=5)
    y = rng.integers(0, 3, n).astype(float) if outputs == 3 else np.where(rng.random(n) < 0.5, 1.0, -1.0)
    kwargs = dict(alpha=5e-2, eta0=0.5, ovr=outputs == 3)
    if groups != "rows":
        kwargs["groups"] = np.arange(d) % 5 - 1
    if groups == "user weighted" and rule[2] != "squared_group":
        kwargs["group_weights"] = np.array([0.5, 2.0, 0.0, 1.5])
    learner, reference = (Learner(d, outputs, *rule, "log", **kwargs) for _ in range(2))
    held_rows = list(range(3, n, 7))
    scores = array("d", bytes(8 * outputs * (n if each_step else len(held_rows))))
    learner.fit_rows(X.data, X.indices, X.indptr, y, None, None, batch, held=(3, 7), scores=scores,
                     each_step=each_step)
    expected, start = [], 0
    for stop in held_rows + [n]:
        for i in range(start, stop, batch):
            end = min(i + batch, stop)
            if each_step:
                expected += [reference.row_margins(X.data[X.indptr[r]:X.indptr[r + 1]],
                                                   X.indices[X.indptr[r]:X.indptr[r + 1]]) for r in range(i, end)]
            reference.fit_rows(X.data, X.indices, X.indptr, y, None, np.arange(i, end), batch)
        if stop < n:
            expected.append(reference.row_margins(X.data[X.indptr[stop]:X.indptr[stop + 1]],
                                                  X.indices[X.indptr[stop]:X.indptr[stop + 1]]))
        start = stop + 1
    assert list(scores) == [m for row in expected for m in row]
    assert learner.coef().tobytes() == reference.coef().tobytes()
    assert learner.t == reference.t
    # the groups' marks given back: the next steps are the reference's
    learner.fit_rows(X.data, X.indices, X.indptr, y, None, None, batch)
    reference.fit_rows(X.data, X.indices, X.indptr, y, None, None, batch)
    assert learner.coef().tobytes() == reference.coef().tobytes()


@pytest.mark.parametrize("rule, outputs, multinomial, batch", [
    (rule, *shape) for rule in sorted({(r.update, r.schedule, r.penalty) for r in RULES
                                       if r.penalty not in ("l1_l2", "l1_linf", "sparse_group", "squared_group")})
    for shape in [(1, False, 1), (3, False, 1), (3, True, 1), (3, True, 3)]
    if not (shape[1] and rule[1] == "normalized")])    # (normalized: binary and one-vs-rest only)
def test_each_steps_scores_are_the_row_margins_before_it(rule, outputs, multinomial, batch):
    """With each_step (-p), every row's scores are `Learner.row_margins` by the model
    before its step, bit for bit, whether the pass scores the rows before each step or
    the general step takes them from the weights its margins caught up
    (`steps_predict`): every rule, one output or three (one-vs-rest, multinomial),
    mini-batches; the model is that of one call per step."""
    rng = np.random.default_rng(7)
    d, n = 15, 60
    X = sp.random(n, d, density=0.4, format="csr", random_state=7)
    X.data = np.round(X.data * 6 - 2, 3)
    y = rng.integers(0, 3, n).astype(float) if outputs == 3 else np.where(rng.random(n) < 0.5, 1.0, -1.0)
    kwargs = dict(alpha=1e-2, eta0=0.3, delta=1.0, ovr=outputs == 3 and not multinomial, multinomial=multinomial)
    learner, reference = (Learner(d, outputs, *rule, "log", **kwargs) for _ in range(2))
    scores = array("d", bytes(8 * outputs * n))
    learner.fit_rows(X.data, X.indices, X.indptr, y, None, None, batch, scores=scores, each_step=True)
    expected = []
    for i in range(0, n, batch):
        expected += [reference.row_margins(X.data[X.indptr[r]:X.indptr[r + 1]], X.indices[X.indptr[r]:X.indptr[r + 1]])
                     for r in range(i, min(i + batch, n))]
        reference.fit_rows(X.data, X.indices, X.indptr, y, None, np.arange(i, min(i + batch, n)), batch)
    assert list(scores) == [m for row in expected for m in row]
    assert learner.coef().tobytes() == reference.coef().tobytes()


@pytest.mark.parametrize("rule, batch", [(rule, batch) for rule in [("fobos", "adagrad", "l1"), ("rda", "invsqrt", "l1"),
                                                                 ("ftrl", "adagrad", "l1"), ("fobos", "normalized", "l1")]
                                         for batch in [1, 2]
                                         if not (rule[1] == "normalized" and batch > 1)])    # (one row a step)
def test_a_predicted_rows_nonfinite_margin_names_its_row(rule, batch):
    """With each_step, a row whose score is not finite raises NonFiniteMargin naming it
    before its step (taken by the step itself or scored before it), the steps before
    it kept: the same error and model either way."""
    X = sp.random(10, 6, density=0.5, format="csr", random_state=2)
    data = X.data.copy()
    data[X.indptr[6]] = np.inf
    normalized = rule[1] == "normalized"
    learner = Learner(6, 3, *rule, "log", multinomial=not normalized, ovr=normalized)
    with pytest.raises(NonFiniteMargin, match="row 6: Input X contains NaN or infinity"):
        learner.fit_rows(data, X.indices, X.indptr, np.arange(10) % 3.0, None, None, batch,
                         scores=array("d", [0.0] * 30), each_step=True)
    assert learner.t == 6 // batch


def test_a_streams_arguments_are_checked():
    """Scores too short, an order, a bad period or sums of another length: a ValueError
    naming the fix, before any step."""
    learner, X, y = _learner()
    args = (X.data, X.indices, X.indptr, y, None)
    with pytest.raises(ValueError, match="scores must hold the 3 held-out rows' 1 margins"):
        learner.fit_rows(*args, None, 1, held=(2, 3), scores=array("d", [0.0] * 2))
    with pytest.raises(ValueError, match="scores must hold the 10 rows' 1 margins"):
        learner.fit_rows(*args, None, 1, held=(2, 3), scores=array("d", [0.0] * 9), each_step=True)
    with pytest.raises(ValueError, match="order=None"):
        learner.fit_rows(*args, np.arange(10), 1, held=(2, 3), scores=array("d", [0.0] * 10))
    with pytest.raises(ValueError, match="period >= 1"):
        learner.fit_rows(*args, None, 1, held=(2, 0), scores=array("d", [0.0] * 10))
    with pytest.raises(ValueError, match="sums must hold 4"):
        learner.fit_rows(*args, None, 1, sums=array("d", [0.0] * 3))
    with pytest.raises(ValueError, match="held_sums must hold 4"):
        learner.fit_rows(*args, None, 1, held=(2, 3), scores=array("d", [0.0] * 10), held_sums=array("d", [0.0] * 5))
    assert learner.t == 0


def test_a_held_rows_nonfinite_margin_names_its_row():
    """A held-out row whose margin is not finite raises NonFiniteMargin naming it, the
    steps before it kept."""
    learner, X, y = _learner()
    data = X.data.copy()
    data[X.indptr[6]] = np.inf
    with pytest.raises(NonFiniteMargin, match="row 6: Input X contains NaN or infinity"):
        learner.fit_rows(data, X.indices, X.indptr, y, None, None, 1, held=(6, 10), scores=array("d", [0.0] * 10))
    assert learner.t == 6


# Margins of every size a finite score can have: 0, -0, subnormals, |x| up to 1e308, and
# squares that are exact ties (27-bit odd significands), where a product and libm's pow
# round apart.
MARGINS = st.one_of(
    st.floats(allow_nan=False, allow_infinity=False),
    st.floats(-60, 60),
    st.sampled_from([0.0, -0.0, 5e-324, -5e-324, 2.2250738585072014e-308, 1e308, -1e308, 1.0, -1.0, 2.0, 3.0]),
    st.builds(lambda m, e, sign: sign * float(m | 1) * 2.0 ** e, st.integers(2 ** 26, 2 ** 27 - 1),
              st.integers(-60, 60), st.sampled_from([-1.0, 1.0])))


def _bits(x):
    return struct.pack("<d", x)


def _python_loss(loss, scores, target, epsilon, multinomial):
    """The registry's value (`example_loss`, as the reports compute it)."""
    est = SimpleNamespace(learner=SimpleNamespace(loss=loss, multinomial=multinomial),
                          regression=LOSSES[loss].kind == "regression", params={"epsilon": epsilon})
    return example_loss(est, list(scores), target)


@settings(max_examples=3000, deadline=None)
@given(st.sampled_from(sorted(LOSSES)), st.lists(MARGINS, min_size=1, max_size=6), st.data(),
       st.sampled_from([0.0, 0.1, 0.5, 3.0]), st.booleans())
@example("log", [1e308, -1e308, 0.0], None, 0.1, True)
@example("hinge", [-0.0, 5e-324, -1e308], None, 0.1, True)
@example("modified_huber", [-94906298.0], None, 0.1, False)    # u - 2 = 94906297, whose square is a tie
@example("huber", [94906298.5], None, 0.5, False)               # target 1: |r| - epsilon = 94906297
@example("modified_huber", [-1e160], None, 0.1, False)          # (u - 2) ** 2 raised OverflowError
@example("huber", [1e17], None, 0.1, False)                     # r^2 / 2 - (r - epsilon)^2 / 2 was 0
def test_the_kernels_held_out_loss_is_the_registrys(loss, scores, data, epsilon, multinomial):
    """A held-out row's loss in the kernel (`registry_loss`) is the registry's Python
    value bit for bit, for every loss and kind of model: one output (binary, regression),
    one-vs-rest, softmax (its exact sum) and Crammer-Singer over K margins."""
    regression = LOSSES[loss].kind == "regression"
    if regression:
        scores = scores[:1]
    multinomial = multinomial and len(scores) > 1 and LOSSES[loss].multinomial
    if data is None:
        target = 1.0
    elif regression:
        target = data.draw(MARGINS)
    elif len(scores) == 1:
        target = data.draw(st.sampled_from([-1.0, 1.0]))
    else:
        target = float(data.draw(st.integers(0, len(scores) - 1)))
    expected = _python_loss(loss, scores, target, epsilon, multinomial)
    assert _bits(held_out_loss(loss, array("d", scores), target, epsilon, multinomial)) == _bits(expected)


@settings(max_examples=3000, deadline=None)
@given(st.lists(st.one_of(st.floats(-1e300, 1e300), st.floats(0, 1), st.sampled_from([1e-16, 1.0, -0.0, 5e-324])),
                max_size=40))
@example([1e-16, 1.0, 1e16])
@example([-0.0])
@example([])
def test_the_kernels_exact_sum_is_math_fsum(values):
    """The softmax loss's sum of exponentials (`fsum_add`, `fsum_value`) is math.fsum's,
    bit for bit: the exact sum rounded once, half-even across its partials."""
    assert _bits(exact_sum(values)) == _bits(math.fsum(values))


@pytest.mark.parametrize("kwargs", [
    dict(), dict(update="ftrl", schedule="adagrad", penalty="l1", alpha=1e-3),
    dict(update="rda", penalty="elasticnet", alpha=1e-3),
    dict(schedule="adagrad", penalty="l1", alpha=1e-3, average=5), dict(penalty="berhu", alpha=1e-2),
    dict(penalty="l1_l2", alpha=1e-3, groups=np.arange(40) % 5), dict(penalty="sparse_group", alpha=1e-3,
                                                                     groups=np.arange(40) % 4),
    dict(penalty="l2", alpha=1e-3, schedule="invsqrt", step="gradient"), dict(n_features=1 << 24),
    dict(outputs=3, multinomial=True), dict(n_features=30, grow=40)])
def test_a_copy_is_the_pickles_round_trip(kwargs):
    """copy.copy of a learner (`Learner.__copy__`, the holdout's best pass: no NumPy) is
    what a pickle's round trip gives, bit for bit, and trains on as the original does:
    rules, averaging, group penalties, the berhu heap, a state taken page by page, a
    widened state, several outputs."""
    kwargs = dict(kwargs)
    d, K, grow = kwargs.pop("n_features", 40), kwargs.pop("outputs", 1), kwargs.pop("grow", None)
    args = (kwargs.pop("update", "fobos"), kwargs.pop("schedule", "invsqrt"), kwargs.pop("penalty", "none"))
    learner = Learner(d, K, *args, "log", **kwargs)
    X = sp.random(300, grow or min(d, 40), density=0.2, format="csr", random_state=5)
    y = np.arange(300) % K if K > 1 else np.where(np.arange(300) % 3, 1.0, -1.0)
    if grow:
        learner.grow(grow)
    learner.fit_rows(X.data, X.indices, X.indptr, y.astype(float), None, None, 1)
    twin, round_trip = copy.copy(learner), pickle.loads(pickle.dumps(learner))
    assert type(twin) is Learner and twin.state_on_touch == learner.state_on_touch
    assert pickle.dumps(twin) == pickle.dumps(round_trip) == pickle.dumps(learner)
    for model in (learner, twin):
        model.fit_rows(X.data, X.indices, X.indptr, y.astype(float), None, None, 2)
    assert pickle.dumps(twin) == pickle.dumps(learner)


#: A row's tag: none, VW's (ASCII), empty, long, any bytes (not UTF-8: written "\\xNN"), ASCII
#: but for one byte, a str.
ASCII = st.text(st.characters(max_codepoint=127), max_size=6).map(str.encode)
TAGS = st.one_of(st.none(), st.binary(max_size=8).map(lambda b: b"r" + b), st.just(b""), st.binary(max_size=400),
                 st.builds(lambda a, b, c: a + bytes([b]) + c, ASCII, st.integers(127, 255), ASCII),
                 st.text(max_size=12))
#: A class: as LIBSVM's labels (integral floats, others) or a name.
CLASS_LABELS = st.one_of(st.integers(-10 ** 6, 10 ** 6).map(float), st.floats(allow_nan=False, allow_infinity=False),
                         st.text(min_size=1, max_size=6))


@settings(max_examples=1000, deadline=None)
@given(st.data(), st.integers(1, 5), st.integers(0, 12), st.booleans(), st.integers(0, 3))
def test_the_lines_of_predictions_are_the_per_row_lines(data, outputs, rows, regression, first):
    """-p's lines (`format_predictions`, a run of rows in one call) are those the trainer
    wrote a row at a time (tests/support/prediction_lines.py), byte for byte: one output
    (the margin's repr: nan, inf, -0, subnormals) or several (the class of the largest,
    ties and NaN as max's), regressors, tags none, empty, long, not ASCII, not UTF-8."""
    value = st.one_of(st.floats(), MARGINS, st.sampled_from([0.0, -0.0, 1.0, float("nan")]))
    scores = data.draw(st.lists(value, min_size=rows * outputs, max_size=rows * outputs))
    tags = data.draw(st.one_of(st.none(), st.lists(TAGS, min_size=first + rows, max_size=first + rows + 2)))
    classes = data.draw(st.lists(CLASS_LABELS, min_size=outputs, max_size=outputs, unique_by=format_label))
    est = SimpleNamespace(regression=regression, classes=classes)
    labels = None if regression or outputs == 1 else tuple(format_label(c).encode() for c in classes)
    expected = "".join(prediction_line(est, scores[i * outputs:(i + 1) * outputs], row_tag(tags, first + i))
                       for i in range(rows)).encode()
    assert format_predictions(array("d", scores), outputs, labels, tags, first) == expected


def test_the_lines_of_predictions_named_cases():
    """`format_predictions`' cases by name: a tag not UTF-8, a str one, an empty one; a
    tie goes to the first class; and arguments that do not fit are refused, not read
    out of bounds."""
    classes = (b"1", b"2", b"10")
    scores = array("d", [0.5, 2.0, 2.0, -1.0, 0.0, -0.0])
    tags = [b"a\x80b", "\u00e9t\u00e9", b""]
    assert format_predictions(scores, 3, classes, tags, 0) == b"2 a\\x80b\n2 \xc3\xa9t\xc3\xa9\n"
    assert format_predictions(scores[:2], 1, None, tags, 1) == "0.5 \u00e9t\u00e9\n2.0\n".encode()
    for args in [(scores, 4, None, None, 0), (scores, 3, classes[:2], None, 0), (scores, 3, classes, tags, 2),
                 (scores, 3, classes, tags, -1), (scores, 0, None, None, 0)]:
        with pytest.raises(ValueError, match="format_predictions"):
            format_predictions(*args)
