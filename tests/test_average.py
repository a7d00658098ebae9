"""The averaged iterate (docs/contract.md, "Averaged iterate") kept lazily by the kernel
equals the eager definition (tests/support/average_reference.py): every rule that keeps
it (the registry's `Rule.average`), both forward steps, every loss, one output,
one-vs-rest and mini-batches, sample weights, empty rows, float32 and int64 input,
repeated calls with a pickle between them, features read thousands of steps later,
streams past the rebase; its cost per step does not grow with d; elsewhere it is
refused with the supported rules named."""
import math
import pickle

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import assume, given, settings, HealthCheck, strategies as st

from fastprox._kernels import Learner, crossings
from fastprox._registry import LOSSES, RULES as ALL_RULES
from fastprox.structured import StructuredLearner
from tests.support.average_reference import AveragedReference, AveragedStructuredReference
from tests.support.reference import assert_contract_close, with_offset
from test_exactness import check_cost_independent_of_d, problems, stream
from test_structured_step import streams as structured_streams, take

RULES = [(r.update, r.schedule, r.penalty) for r in ALL_RULES if r.average]
IDS = ["-".join(r) for r in RULES]


def binary_rows(n, d, density, seed):
    """n random sparse rows over d features and labels +-1."""
    rng = np.random.default_rng(seed)
    return sp.random(n, d, density=density, format="csr", random_state=rng), rng.choice([-1.0, 1.0], n)


def build(cls, rule, d, K, loss, params, average, step="gradient"):
    return cls(d, K, *rule, loss, ovr=K > 1, average=average, step=step, **with_offset(rule, params))


def check_average(lazy, eager):
    """The last iterate and the averaged one, weights and intercepts, to the contract's tolerance."""
    assert_contract_close(lazy.coef(), eager.coef())
    assert_contract_close(lazy.intercept(), eager.intercept())
    assert_contract_close(lazy.averaged_coef(), eager.averaged_coef())
    assert_contract_close(lazy.averaged_intercept(), eager.averaged_intercept())


def run_both(rule, X, y, sw, K, loss, params, order, batch, average, cuts=(), step="gradient", walks=None):
    """The lazy learner (a call per piece of `order` between `cuts`, pickled between
    them) and the eager reference over the same steps; each call's Fenwick walks
    (`Learner.history_walks`, not pickled) join the list `walks` if one is given."""
    lazy = build(Learner, rule, X.shape[1], K, loss, params, average, step)
    eager = build(AveragedReference, rule, X.shape[1], K, loss, params, average, step)
    bounds = [0] + [c // batch * batch for c in cuts] + [len(order)]
    for lo, hi in zip(bounds, bounds[1:]):
        lazy.fit_rows(X.data, X.indices, X.indptr, y, sw, order[lo:hi], batch)
        if walks is not None:
            walks.append(lazy.history_walks)
        lazy = pickle.loads(pickle.dumps(lazy))
    eager.run(X.toarray().astype(np.float64), y, sw, order, batch)
    assert lazy.t == eager.t
    return lazy, eager


@pytest.mark.parametrize("rule", RULES, ids=IDS)
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(problem=problems(), average=st.sampled_from([1, 1, 2, 7, 40]),
       cuts=st.lists(st.floats(0, 1), max_size=3), dtype=st.sampled_from([np.float64, np.float32]),
       itype=st.sampled_from([np.int32, np.int64]), invariant=st.booleans())
def test_lazy_average_equals_eager(rule, problem, average, cuts, dtype, itype, invariant):
    """Any stream, sample weights, batch size, pass count, first averaged step, and up
    to three calls with a pickle between each: the eager model and its average."""
    X, y, sw, K, loss, params, order, batch = problem
    if rule[1] == "normalized":     # one row per step
        batch = 1
    step = ("invariant" if invariant and batch == 1 and K == 1 and rule[0] == "fobos" and LOSSES[loss].invariant
            else "gradient")
    X = X.astype(dtype)
    X.indices, X.indptr = X.indices.astype(itype), X.indptr.astype(itype)
    lazy, eager = run_both(rule, X, y, sw, K, loss, params, order, batch, average,
                           sorted(int(c * len(order)) for c in cuts), step)
    assume(eager.kink_gap > 1e-9)       # a step on a loss's kink is decided by rounding (reference.KINKS)
    check_average(lazy, eager)


@pytest.mark.parametrize("rule", [r for r in RULES if r[2] != "none"], ids=lambda r: "-".join(r))
@pytest.mark.parametrize("average", [1, 1500])
def test_feature_seen_once_read_much_later(rule, average):
    """A feature touched at step 1 and never again: its skipped iterates summed
    exactly 3000 steps later, averaging from the start or from mid-stream, from the
    history's prefix sums (no Fenwick walk: P stays near 1)."""
    rng = np.random.default_rng(2)
    n, d = 3000, 30
    X = stream(n, d, rng)
    y = rng.choice([-1.0, 1.0], n)
    walks = []
    lazy, eager = run_both(rule, X, y, np.ones(n), 1, "hinge", dict(alpha=1e-4, eta0=0.2, l1_ratio=0.5),
                           np.arange(n, dtype=np.int64), 1, average, walks=walks)
    assert eager.averaged_coef()[0, 0] != 0
    check_average(lazy, eager)
    assert walks == [0] and lazy.history_walks == 0


#: The scalar-FOBOS rules whose catch-ups sum the skipped iterates from the history (l2's: from
#: the prefix sums of P its rows keep, `Layout.avg_prefix`).
HISTORY_RULES = [r for r in RULES if r[0] == "fobos" and r[1] != "adagrad" and (r[2] != "none" or
                                                                                 r[1] == "normalized")]


def geometric_decay(rule, dtype, itype):
    """`run_both` over 3000 steps of a constant schedule with alpha eta0 = 0.05 (P decays
    as 1.05^-t), three calls with a pickle between each, and each call's walks."""
    rng = np.random.default_rng(5)
    n, d = 3000, 30
    X = stream(n, d, rng).astype(dtype)
    X.indices, X.indptr = X.indices.astype(itype), X.indptr.astype(itype)
    y = rng.choice([-1.0, 1.0], n)
    walks = []
    lazy, eager = run_both(rule, X, y, np.ones(n), 1, "log", dict(alpha=0.05, eta0=1.0, l1_ratio=0.3),
                           np.arange(n, dtype=np.int64), 1, 1, cuts=(400, 1700), walks=walks)
    return lazy, eager, walks


@pytest.mark.parametrize("dtype, itype", [(np.float64, np.int32), (np.float32, np.int64)])
def test_geometric_decay_takes_the_walk(dtype, itype):
    """Elastic net under P = 1.05^-t: past step 600 or so a feature's skipped steps are
    less than 2^-40 of the prefix sums (their difference would lose them): those
    catch-ups take the Fenwick walk, the earlier ones the difference, and the sums
    match the eager ones."""
    lazy, eager, walks = geometric_decay(("fobos", "constant", "elasticnet"), dtype, itype)
    assert walks[0] == 0 and walks[1] > 0 and walks[2] > 0
    check_average(lazy, eager)


@pytest.mark.parametrize("dtype, itype", [(np.float64, np.int32), (np.float32, np.int64)])
def test_geometric_decay_rebases_at_the_prefix_share(dtype, itype):
    """l2 under P = 1.05^-t: its rows keep the prefix sum of P at their stamp
    (`Layout.avg_prefix`, no history), so the cumulants rebase once P falls under
    2^-40 of its prefix sum (about every 630 steps, long before P's floor 1e-200 at
    step 9400): no walk, and the skipped sums, whose prefix sums reach 2^40 times a
    last step's P, match the eager ones (a prefix sum in one double would lose
    2^-12 of them)."""
    lazy, eager, walks = geometric_decay(("fobos", "constant", "l2"), dtype, itype)
    assert lazy.avg_prefix and not lazy.keeps_history
    assert walks == [0, 0, 0] and lazy.since_rebase < 700
    check_average(lazy, eager)


def eager_l2_average(X, y, alpha, eta0, t0):
    """The averaged weights of fobos + inv + l2 under the log loss without an intercept,
    eager over the dense rows X (few columns), each iterate summed without rounding
    (`math.fsum`)."""
    n, d = X.shape
    w, iterates = [0.0] * d, [[] for _ in range(d)]
    rows = X.tolist()
    touched = [[j for j in range(d) if row[j] != 0.0] for row in rows]
    for i, row in enumerate(rows):
        eta = eta0 / (i + 1 + t0)
        margin = sum(w[j] * row[j] for j in touched[i])
        g = -y[i] / (1.0 + math.exp(y[i] * margin))
        for j in touched[i]:
            w[j] -= eta * g * row[j]
        shrink = 1.0 + alpha * eta
        for j in range(d):
            w[j] /= shrink
            iterates[j].append(w[j])
    return np.array([[math.fsum(s) / n for s in iterates]])


@pytest.mark.slow
def test_long_stream_of_steps_cancelling_prefix_sums():
    """10^6 steps of fobos + inv + l2 with alpha eta0 = 1.5 (P falls as t^-1.5, to 1e-9,
    its prefix sum stays near 1) over 2^20 features (no rebase: its period is d), of
    which five are met: one first met at steps n - 10 and n - 5, whose catch-ups (the
    second's, the read's) sum five steps each from prefix sums 10^9 times their P (in
    one double they would lose 10^-7 of them, and of its average), one met at steps 1 and n/2 (ranges of
    half the stream), others at every, every other or every seventh step: the averaged
    weights against the eager iterates' exact sums."""
    n, d, m = 1_000_000, 1 << 20, 5
    rng = np.random.default_rng(11)
    dense = np.zeros((n, m))
    dense[:, 1] = rng.uniform(0.5, 1.5, n)
    dense[::2, 2] = rng.uniform(-1.0, 1.0, (n + 1) // 2)
    dense[[0, n // 2], 0] = [1.0, -0.5]
    dense[::7, 3] = 0.25
    dense[[n - 11, n - 6], 4] = [100.0, -50.0]
    y = rng.choice([-1.0, 1.0], n)
    X = sp.csr_matrix(dense, shape=(n, m))
    X = sp.csr_matrix((X.data, X.indices, X.indptr), shape=(n, d))
    lazy = Learner(d, 1, "fobos", "inv", "l2", "log", alpha=1.5, eta0=1.0, t0=1.0, fit_intercept=False,
                   average=1)
    lazy.fit_rows(X.data, X.indices, X.indptr, y, np.ones(n), np.arange(n, dtype=np.int64), 1)
    assert lazy.avg_prefix and lazy.since_rebase == n
    eager = eager_l2_average(dense, y, 1.5, 1.0, 1.0)
    for j in range(m):      # (each on its own: the last one's average is 10^-9 of the others')
        assert_contract_close(lazy.averaged_coef()[:, j], eager[:, j])
    assert np.all(lazy.averaged_coef()[:, m:] == 0)


@pytest.mark.parametrize("rule, alpha", [(("fobos", "invsqrt", "l1"), 0.03), (("fobos", "inv", "elasticnet"), 0.1),
                                         (("fobos", "normalized", "l1"), 0.03)],
                         ids=["fobos-invsqrt-l1", "fobos-inv-elasticnet", "fobos-normalized-l1"])
def test_l1_crossings_in_the_gaps(rule, alpha):
    """A strong l1 share: features whose weight reaches 0 while untouched (their sums
    stop at the crossing, found only where the weight is 0 at the catch-up) and
    others that stay non-zero, over two calls."""
    rng = np.random.default_rng(8)
    n, d = 2000, 40
    X = stream(n, d, rng)
    y = rng.choice([-1.0, 1.0], n)
    lazy, eager = run_both(rule, X, y, np.ones(n), 1, "hinge", dict(alpha=alpha, eta0=0.5, l1_ratio=0.9),
                           np.arange(n, dtype=np.int64), 1, 1, cuts=(900,))
    crossed = (eager.coef() == 0) & (eager.averaged_coef() != 0)
    assert crossed.sum() >= 10 and (eager.coef() != 0).sum() >= 10
    check_average(lazy, eager)


@settings(max_examples=300, deadline=None)
@given(steps=st.lists(st.one_of(st.just(0.0), st.floats(1e-12, 1e-6), st.floats(0.0, 1e3)), min_size=2,
                      max_size=300),
       start=st.floats(-10.0, 10.0), aw=st.floats(1e-9, 1e4), f=st.floats(1e-6, 1e3), data=st.data())
def test_unit_crossing_finds_the_binary_searchs_entry(steps, start, aw, f, data):
    """In a history of P = 1 (l1's rows, the normalized schedule's), the interpolating
    search of an entry's crossing (`average.unit_crossing`) finds the entry the binary
    search finds, the last positive one, over any Q that does not fall: plateaus, jumps
    and steps of every scale, any stamp and magnitude (the bits of the averaged l1
    models rest on it)."""
    Q = start + np.cumsum(steps)
    Qs = data.draw(st.floats(float(Q[0]) - 10.0, float(Q[-1])))
    positive = aw - f * (Q - Qs) > 0.0
    assume(positive.any() and not positive.all())
    first = data.draw(st.sampled_from(np.flatnonzero(positive).tolist()))
    assume(not positive[first + 1:].all())
    last = data.draw(st.sampled_from((first + 1 + np.flatnonzero(~positive[first + 1:])).tolist()))
    unit, bisect = crossings(Q, aw, Qs, f, first, last)
    assert unit == bisect == first + np.flatnonzero(~positive[first:last + 1])[0] - 1


def test_unit_crossing_over_a_long_history():
    """A schedule's Q (the sum of 1 / t, as the "optimal" rate's alpha eta_t) over 10^5
    entries: every magnitude's crossing as the binary search finds it, and out-of-range
    entries refused."""
    Q = np.cumsum(1.0 / np.arange(100.0, 100_100.0))
    for aw in np.geomspace(1e-6, float(Q[-1] - Q[0]) * 0.999, 200):
        unit, bisect = crossings(Q, aw, float(Q[0]), 1.0, 0, len(Q) - 1)
        assert unit == bisect
    with pytest.raises(ValueError, match="not inside the history"):
        crossings(Q, 1.0, 0.0, 1.0, 5, len(Q))


@pytest.mark.slow
@pytest.mark.parametrize("rule", HISTORY_RULES, ids=lambda r: "-".join(r))
def test_feature_read_at_step_one_hundred_thousand(rule):
    """A feature met at step 1 and next at step 10^5 (its catch-up in that step; the
    rebase at step 2^16, the shortest rebase period, catches it up once between):
    its sums of tens of thousands of skipped iterates within the contract."""
    rng = np.random.default_rng(9)
    n, d = 100_000, 6
    X = stream(n, d, rng).tolil()
    X[n - 1, 0] = -1.0
    X = X.tocsr()
    y = rng.choice([-1.0, 1.0], n)
    lazy, eager = run_both(rule, X, y, np.ones(n), 1, "log", dict(alpha=1e-5, eta0=0.1, l1_ratio=0.5),
                           np.arange(n, dtype=np.int64), 1, 1)
    assert eager.averaged_coef()[0, 0] != 0
    check_average(lazy, eager)


@pytest.mark.parametrize("rule", [("fobos", "constant", "elasticnet"), ("fobos", "constant", "l2")],
                         ids=lambda r: "-".join(r))
def test_sums_survive_the_rebase(rule):
    """Strong shrinkage rebases the cumulants many times (P under 1e-200), the history
    restarting each time: the sums fold the skipped iterates in before it does."""
    n = 4000
    X, y = binary_rows(n, 8, 0.3, 4)
    lazy, eager = run_both(rule, X, y, np.ones(n), 1, "log", dict(alpha=0.5, eta0=2.0, l1_ratio=0.1),
                           np.arange(n, dtype=np.int64), 1, 3, cuts=(1234,))
    assert lazy.since_rebase < n
    check_average(lazy, eager)


@pytest.mark.slow
@pytest.mark.parametrize("rule", [("fobos", "invsqrt", "l1"), ("fobos", "adagrad", "elasticnet")],
                         ids=lambda r: "-".join(r))
def test_long_stream_past_the_rebase_period(rule):
    """10^5 steps, past the rebase period: the history restarts, no drift."""
    n = 100_000
    X, y = binary_rows(n, 12, 0.15, 3)
    lazy, eager = run_both(rule, X, y, np.ones(n), 1, "log", dict(alpha=1e-4, eta0=0.1, l1_ratio=0.5),
                           np.arange(n, dtype=np.int64), 1, 1)
    assert lazy.since_rebase < n
    check_average(lazy, eager)


@pytest.mark.parametrize("rule", RULES, ids=IDS)
def test_cost_proportional_to_nonzeros_not_d(rule):
    """Entries visited per step depend on the rows' non-zeros, not on d, with the
    averaged sums kept (the catch-up's closed forms; rebases at most every d steps)."""
    check_cost_independent_of_d(rule, average=1)


@pytest.mark.parametrize("rule", RULES[:1] + RULES[-1:], ids=lambda r: "-".join(r))
def test_reading_does_not_change_later_steps(rule):
    """averaged_coef() between steps leaves the state as it was: the same bits after."""
    X, y = binary_rows(300, 40, 0.1, 1)
    a, b = (Learner(40, 1, *rule, "log", alpha=0.01, eta0=0.5, average=1) for _ in range(2))
    for start in range(0, 300, 7):
        order = np.arange(start, min(start + 7, 300), dtype=np.int64)
        a.fit_rows(X.data, X.indices, X.indptr, y, np.ones(300), order, 1)
        b.fit_rows(X.data, X.indices, X.indptr, y, np.ones(300), order, 1)
        b.averaged_coef()
        b.averaged_intercept()
    assert np.array_equal(a.averaged_coef(), b.averaged_coef())
    assert np.array_equal(a.averaged_intercept(), b.averaged_intercept())


def test_before_the_first_averaged_step_the_average_is_the_last_iterate():
    """average = a: until step a the averaged read is the model itself (scikit-learn's)."""
    X, y = binary_rows(10, 5, 0.5, 6)
    learner = Learner(5, 1, "fobos", "invsqrt", "l1", "log", alpha=0.01, average=20)
    learner.fit_rows(X.data, X.indices, X.indptr, y, None, None, 1)
    assert np.array_equal(learner.averaged_coef(), learner.coef())
    assert np.array_equal(learner.averaged_intercept(), learner.intercept())


def test_a_grown_learner_keeps_its_sums():
    """Features met later (grow) join with sums of 0, the others keep theirs."""
    X, y = binary_rows(200, 30, 0.2, 7)
    lazy = Learner(10, 1, "fobos", "constant", "elasticnet", "log", alpha=0.01, eta0=0.3, average=1)
    eager = AveragedReference(30, 1, "fobos", "constant", "elasticnet", "log", alpha=0.01, eta0=0.3, average=1)
    left = X[:100, :10].tocsr()
    lazy.fit_rows(left.data, left.indices, left.indptr, y[:100], None, None, 1)
    lazy.grow(30)
    lazy.fit_rows(X.data, X.indices, X.indptr, y, None, np.arange(100, 200, dtype=np.int64), 1)
    Xd = X.toarray()
    Xd[:100, 10:] = 0
    eager.run(Xd, y, np.ones(200), np.arange(200), 1)
    check_average(lazy, eager)


@pytest.mark.parametrize("rule", [("ftrl", "adagrad", "l2"), ("rda", "invsqrt", "l1"),
                                  ("fobos", "invsqrt", "berhu"), ("fobos", "invsqrt", "l1_l2")],
                         ids=lambda r: "-".join(r))
def test_rules_without_a_lazy_average_are_refused(rule):
    """Where no exact lazy sum is kept, a ValueError names the rules that keep one."""
    with pytest.raises(ValueError, match="average has no exact lazy form.*'normalized'"):
        Learner(5, 1, *rule, "log", alpha=0.01, average=1)
    with pytest.raises(ValueError, match="first step averaged"):
        Learner(5, 1, "fobos", "adagrad", "l1", "log", average=-1)


@pytest.mark.parametrize("rule", [r for r in RULES if r[1] != "normalized"], ids=lambda r: "-".join(r))
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), split=st.floats(0, 1), average=st.sampled_from([1, 3]),
       form=st.sampled_from(["items", "rows"]))
def test_structured_average_equals_eager(rule, data, split, average, form):
    """The structured step (StructuredLearner; no normalized schedule) keeps the same averaged iterate, its m
    unpenalized entries (transitions, starts, stops) averaged as the intercepts are,
    through a pickle mid-stream; what decoders read during training stays the last
    iterate."""
    s = data.draw(structured_streams(rule))
    update, schedule, penalty = rule
    lazy = StructuredLearner(s["d"], s["K"], s["m"], update=update, schedule=schedule, penalty=penalty,
                             average=average, **s["params"])
    eager = AveragedStructuredReference(s["d"], s["K"], s["m"], update, schedule, penalty, average=average,
                                       **s["params"])
    cut = int(split * len(s["examples"]))
    for i, (X, Q, u, h) in enumerate(s["examples"]):
        if i == cut:
            lazy = pickle.loads(pickle.dumps(lazy))
        take(lazy, X, Q, u, h, form)
        eager.step(X.toarray(), Q, u, h)
    assert_contract_close(lazy.weights(np.arange(s["d"])), eager.coef().T)
    assert_contract_close(lazy.coef_, eager.averaged_coef())
    assert_contract_close(lazy.intercept_, eager.averaged_intercept())
    assert_contract_close(lazy.unpenalized_, eager.averaged_unpenalized())
