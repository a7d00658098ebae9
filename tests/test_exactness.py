"""The lazy kernels equal the eager contract (tests/support/reference.py) for every
supported combination of update rule, schedule, penalty and loss."""
import pickle
import re

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import assume, given, settings, HealthCheck, strategies as st

from fastprox._kernels import Learner
from fastprox._registry import PENALTIES as PENALTY_TABLE, RULES as ALL_RULES, losses_of
from tests.support.reference import EagerReference, assert_contract_close, with_offset

# every supported rule whose penalty acts coordinate-wise (the table of rules');
# the group penalties are test_exactness_groups'
RULES = [(r.update, r.schedule, r.penalty) for r in ALL_RULES if PENALTY_TABLE[r.penalty].family != "group"]
CLASSIFICATION = losses_of("binary")
REGRESSION = losses_of("regression")


@st.composite
def problems(draw, max_rows=30, max_features=20):
    """A random sparse stream, labels, sample weights and hyper-parameters."""
    n = draw(st.integers(1, max_rows))
    d = draw(st.integers(1, max_features))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    density = draw(st.sampled_from([0.0, 0.1, 0.3, 0.7, 1.0]))
    X = sp.random(n, d, density=density, format="csr", random_state=rng,
                  data_rvs=lambda k: rng.uniform(-3, 3, k))
    K = draw(st.sampled_from([1, 1, 3]))
    loss = draw(st.sampled_from(CLASSIFICATION if K > 1 else CLASSIFICATION + REGRESSION))
    if K > 1:
        y = rng.integers(0, K, n).astype(float)
    elif loss in REGRESSION:
        y = rng.normal(0, 2, n)
    else:
        y = rng.choice([-1.0, 1.0], n)
    sw = rng.uniform(0.2, 2.0, n) if draw(st.booleans()) else np.ones(n)
    params = dict(
        alpha=draw(st.sampled_from([0.0, 1e-5, 1e-3, 0.05, 0.5])),
        l1_ratio=draw(st.sampled_from([0.0, 0.3, 0.85, 1.0])),
        eta0=draw(st.sampled_from([0.01, 0.3, 1.0, 2.0])),
        delta=draw(st.sampled_from([0.0, 1e-8, 0.5])),
        rda_rho=draw(st.sampled_from([0.0, 0.01, 0.5])),
        berhu_gamma=draw(st.sampled_from([0.05, 0.5, 2.0])),
        epsilon=draw(st.sampled_from([0.0, 0.1, 1.0])),
        fit_intercept=draw(st.booleans()),
        t0=draw(st.sampled_from([0.0, 2.5])),      # (kept by the rules that take it: `make`)
        intercept_scaling=draw(st.sampled_from([1.0, 0.1, 2.5])),     # the intercept's constant feature
    )
    epochs = draw(st.integers(1, 3))
    order = np.concatenate([rng.permutation(n) for _ in range(epochs)]).astype(np.int64)
    batch = draw(st.sampled_from([1, 1, 2, 4]))
    return X, y, sw, K, loss, params, order, batch


def make(cls, rule, X, K, loss, params):
    update, schedule, penalty = rule
    return cls(X.shape[1], K, update, schedule, penalty, loss, ovr=K > 1, **with_offset(rule, params))


def one_pass_both(rule, X, y, loss, params):
    """The lazy learner and the eager reference after one unweighted pass over X in order."""
    lazy = make(Learner, rule, X, 1, loss, params)
    eager = make(EagerReference, rule, X, 1, loss, params)
    order = np.arange(X.shape[0], dtype=np.int64)
    sw = np.ones(X.shape[0])
    lazy.fit_rows(X.data, X.indices, X.indptr, y, sw, order, 1)
    eager.run(X.toarray(), y, sw, order, 1)
    return lazy, eager


def check_equal(learner, eager):
    assert_contract_close(learner.coef(), eager.coef())
    assert_contract_close(learner.intercept(), eager.intercept())


@pytest.mark.parametrize("rule", RULES, ids=["-".join(r) for r in RULES])
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(problem=problems(), split=st.floats(0, 1), dtype=st.sampled_from([np.float64, np.float32]),
       itype=st.sampled_from([np.int32, np.int64]))
def test_lazy_equals_eager(rule, problem, split, dtype, itype):
    """Two fit_rows calls (a partial_fit split, a pickle round trip between them)
    give the eager model and the same progressive loss, for any dtype."""
    X, y, sw, K, loss, params, order, batch = problem
    if rule[1] == "normalized":     # one row per step (test_steps covers it further)
        batch = 1
    X = X.astype(dtype)
    X.indices, X.indptr = X.indices.astype(itype), X.indptr.astype(itype)
    Xd = X.toarray().astype(np.float64)
    lazy = make(Learner, rule, X, K, loss, params)
    eager = make(EagerReference, rule, X, K, loss, params)
    cut = int(split * len(order)) // batch * batch
    lazy_loss = lazy.fit_rows(X.data, X.indices, X.indptr, y, sw, order[:cut], batch)
    lazy = pickle.loads(pickle.dumps(lazy))
    lazy_loss += lazy.fit_rows(X.data, X.indices, X.indptr, y, sw, order[cut:], batch)
    eager_loss = eager.run(Xd, y, sw, order, batch)
    assume(eager.kink_gap > 1e-9)       # a perceptron step on its tie is decided by rounding (reference.TIES)
    assert lazy.t == eager.t
    check_equal(lazy, eager)
    assert lazy_loss == pytest.approx(eager_loss, rel=1e-9, abs=1e-12)


def test_a_batch_gradient_sums_its_rows_in_order():
    """A batch's gradient is the contract's sum over its rows in their order: two
    batches whose exact gradients cancel (rows 1, 0, 1, 0 then 1, 0) leave the kernel
    with 2^-55 on a feature, as that sum does; the reference's matmul summed in BLAS's
    order and gave an exact 0, which the exact-zero clause then asked of the kernel
    (hypothesis's example, found for fobos-constant-none with epsilon_insensitive)."""
    X = sp.csr_matrix([[0.0, -0.46935159987349007, 0.0, 2.45544486008116, 0.0, 2.948442964434366],
                       [-0.04899870578577392, 1.7458327954700046, -2.077156273154958, 0.0,
                        -0.5819482635407569, 1.4939502716921522]])
    y, sw = np.array([3.017720080666574, 0.5740190065467204]), np.array([1.8979176351899636, 1.2443658404070366])
    params = dict(alpha=0.0, l1_ratio=0.0, eta0=0.3, delta=0.0, rda_rho=0.0, berhu_gamma=0.05, epsilon=0.0,
                  fit_intercept=False, t0=0.0, intercept_scaling=1.0)
    rule, order = ("fobos", "constant", "none"), np.array([1, 0, 1, 0, 1, 0], dtype=np.int64)
    lazy = make(Learner, rule, X, 1, "epsilon_insensitive", params)
    eager = make(EagerReference, rule, X, 1, "epsilon_insensitive", params)
    lazy.fit_rows(X.data, X.indices, X.indptr, y, sw, order, 4)
    eager.run(X.toarray(), y, sw, order, 4)
    assert eager.coef()[0, 1] == lazy.coef()[0, 1] == 2.0 ** -55
    check_equal(lazy, eager)


@pytest.mark.parametrize("rule", RULES, ids=["-".join(r) for r in RULES])
def test_reading_does_not_change_later_steps(rule):
    """coef() between steps leaves the state as it was: same result bit for bit."""
    rng = np.random.default_rng(1)
    X = sp.random(300, 40, density=0.1, format="csr", random_state=rng)
    y = rng.choice([-1.0, 1.0], 300)
    sw = np.ones(300)
    params = dict(alpha=0.01, eta0=0.5, berhu_gamma=0.2)
    a, b = (make(Learner, rule, X, 1, "log", params) for _ in range(2))
    for start in range(0, 300, 7):
        order = np.arange(start, min(start + 7, 300), dtype=np.int64)
        a.fit_rows(X.data, X.indices, X.indptr, y, sw, order, 1)
        b.fit_rows(X.data, X.indices, X.indptr, y, sw, order, 1)
        b.coef()
    assert np.array_equal(a.coef(), b.coef())
    assert np.array_equal(a.intercept(), b.intercept())


def stream(n, d, rng, first_row_only=0):
    """n rows over d features; feature `first_row_only` appears in row 0 only."""
    X = sp.random(n, d, density=3.0 / d, format="csr", random_state=rng).tolil()
    X[:, first_row_only] = 0
    X[0, first_row_only] = 2.0
    return X.tocsr()


@pytest.mark.parametrize("rule", [r for r in RULES if r[2] != "none"], ids=lambda r: "-".join(r))
def test_feature_seen_once_read_much_later(rule):
    """A feature touched at step 1 and never again is caught up exactly thousands of steps later."""
    rng = np.random.default_rng(2)
    X = stream(3000, 30, rng)
    y = rng.choice([-1.0, 1.0], 3000)
    lazy, eager = one_pass_both(rule, X, y, "hinge", dict(alpha=1e-4, eta0=0.2, berhu_gamma=0.05))
    check_equal(lazy, eager)


LONG_RULES = [("fobos", "invsqrt", "l1"), ("fobos", "constant", "elasticnet"),
              ("fobos", "inv", "berhu"), ("fobos", "adagrad", "elasticnet"),
              ("rda", "adagrad", "l1"), ("ftrl", "adagrad", "elasticnet")]


@pytest.mark.parametrize("rule", LONG_RULES, ids=lambda r: "-".join(r))
@pytest.mark.slow
def test_long_stream_no_drift(rule):
    """10^5 steps (past the cumulants' rebase period): no drift from the contract."""
    rng = np.random.default_rng(3)
    n, d = 100_000, 12
    X = sp.random(n, d, density=0.15, format="csr", random_state=rng)
    y = rng.choice([-1.0, 1.0], n)
    lazy, eager = one_pass_both(rule, X, y, "log", dict(alpha=1e-4, eta0=0.1, l1_ratio=0.5, berhu_gamma=0.3))
    assert lazy.since_rebase < n
    check_equal(lazy, eager)


@pytest.mark.parametrize("penalty", ["l2", "elasticnet", "berhu"])
def test_shrink_product_rebases_before_underflow(penalty):
    """Strong l2 shrinkage drives the cumulative product below 1e-200 many times over."""
    rng = np.random.default_rng(4)
    n, d = 4000, 8
    X = sp.random(n, d, density=0.3, format="csr", random_state=rng)
    y = rng.choice([-1.0, 1.0], n)
    lazy, eager = one_pass_both(("fobos", "constant", penalty), X, y, "log",
                                dict(alpha=0.5, eta0=2.0, l1_ratio=0.1, berhu_gamma=0.01))
    assert lazy.since_rebase < n
    check_equal(lazy, eager)


@pytest.mark.parametrize("penalty, average, n", [("l2", 0, 4000), ("elasticnet", 0, 4000),
                                                 ("l1", 0, 140_000), ("l2", 1, 4000)])
def test_rebase_of_one_output_rows_gives_the_catch_ups_bits(penalty, average, n):
    """The rebase of rows with one output (`fobos.rebase_pairs`: two rows at a time, one
    loop per layout) gives the bits of the per-feature `catch_up` that rows of two outputs
    take: a binary model equals, bit for bit, output 1 of the one-vs-rest model with
    labels 0/1, weights and averaged weights, across many rebases (strong l2 shrinkage
    under the constant schedule: P under the floor or PREFIX_SHARE of its prefix sum;
    l1: the rebase period, 65,536 steps for both). An odd number of features: the last
    row's pair is itself."""
    rng = np.random.default_rng(4)
    d = 9
    X = sp.random(n, d, density=0.3, format="csr", random_state=rng)
    y = rng.choice([-1.0, 1.0], n)
    order, sw = np.arange(n, dtype=np.int64), np.ones(n)
    params = dict(alpha=0.5 if penalty != "l1" else 1e-3, eta0=2.0, l1_ratio=0.1, average=average)
    one = Learner(d, 1, "fobos", "constant", penalty, "log", **params)
    two = Learner(d, 2, "fobos", "constant", penalty, "log", ovr=True, **params)
    one.fit_rows(X.data, X.indices, X.indptr, y, sw, order, 1)
    two.fit_rows(X.data, X.indices, X.indptr, (y > 0).astype(float), sw, order, 1)
    assert one.rebase_period == two.rebase_period and one.since_rebase == two.since_rebase < n // 2
    for averaged in (False, True)[:1 + average]:
        assert one.coef(averaged).tobytes() == two.coef(averaged)[1:].tobytes()
    assert one.intercept().tobytes() == two.intercept()[1:].tobytes()


def check_cost_independent_of_d(rule, **kwargs):
    """Entries visited (n_ops) over 500 sparse rows are the same at d = 1,000 and
    100,000, and at most twice the non-zeros; ``kwargs`` go to the Learner."""
    rng = np.random.default_rng(5)
    X0 = sp.random(500, 1000, density=0.005, format="csr", random_state=rng)
    y = rng.choice([-1.0, 1.0], 500)
    counts = []
    for d in (1_000, 100_000):
        X = sp.csr_matrix((X0.data, X0.indices, X0.indptr), shape=(500, d))
        lazy = Learner(d, 1, *rule, "log", alpha=0.01, eta0=0.5, **kwargs)
        lazy.fit_rows(X.data, X.indices, X.indptr, y, np.ones(500), np.arange(500, dtype=np.int64), 1)
        counts.append(lazy.n_ops)
        assert lazy.n_ops <= 2 * X.nnz
    assert counts[0] == counts[1]


@pytest.mark.parametrize("rule", RULES, ids=["-".join(r) for r in RULES])
def test_cost_proportional_to_nonzeros_not_d(rule):
    """Entries visited per step depend on the rows' non-zeros, not on d
    (rebases, O(d) each, come at most every d steps)."""
    check_cost_independent_of_d(rule)


@pytest.mark.parametrize("case, message", [
    ("index", "column index lies outside"),
    ("order", "row order must list rows"),
    ("labels", "entries for 2 rows"),
    ("indptr", "row order must list rows"),
])
def test_kernel_refuses_arrays_it_would_read_outside(case, message):
    """The kernel's loops trust their bounds, so fit_rows checks them first (no crash)."""
    learner = Learner(5, 1, "fobos", "invsqrt", "l1", "log")
    data, indices, indptr = np.ones(3), np.array([0, 1, 1], dtype=np.int32), np.array([0, 2, 3], dtype=np.int32)
    y, sw, order = np.ones(2), np.ones(2), np.array([0, 1], dtype=np.int64)
    if case == "index":
        indices = np.array([0, 7, 1], dtype=np.int32)
    elif case == "order":
        order = np.array([0, 5], dtype=np.int64)
    elif case == "labels":
        y = np.ones(3)
    else:
        indptr = np.array([0, 3, 2], dtype=np.int32)
    with pytest.raises(ValueError, match=message):
        learner.fit_rows(data, indices, indptr, y, sw, order, 1)
    assert learner.t == 0


@pytest.mark.parametrize("rule", [("fobos", "normalized", "none"), ("fobos", "adagrad", "l2"),
                                  ("fobos", "invsqrt", "l1"), ("rda", "adagrad", "l1")])
def test_coef_at_reads_coefs_columns_bit_for_bit(rule):
    """`coef_at` gives `coef`'s columns, bit for bit (the averaged iterate's too), with
    the state untouched, and refuses a column outside the model."""
    X = sp.random(80, 30, density=0.2, format="csr", random_state=3)
    y = np.where(np.random.default_rng(3).normal(size=80) > 0, 1.0, -1.0)
    learner = Learner(30, 1, *rule, "log", alpha=0.01, average=5)
    learner.fit_rows(X.data, X.indices, X.indptr, y, None, None, 1)
    columns = np.array([29, 0, 7, 7, 12], dtype=np.int64)
    for averaged in (False, True):
        np.testing.assert_array_equal(learner.coef_at(columns, averaged), learner.coef(averaged)[:, columns])
    assert learner.coef_at(np.zeros(0, dtype=np.int64)).shape == (1, 0)
    with pytest.raises(ValueError, match="lies outside the model"):
        learner.coef_at(np.array([30], dtype=np.int64))


@pytest.mark.parametrize("itype", [np.int32, np.int64])
@pytest.mark.parametrize("case, message", [
    ("decreasing", "inconsistent CSR arrays"),
    ("past the end", "inconsistent CSR arrays"),
    ("first not 0", "inconsistent CSR arrays"),
    ("short data", "inconsistent CSR arrays"),
    ("short indices", "inconsistent CSR arrays"),
    ("index", "column index lies outside"),
])
def test_margins_refuse_arrays_they_would_read_outside(itype, case, message):
    """`Learner.margins`' loop reads without bounds checks, so the arrays are checked
    first: malformed CSR arrays raise a ValueError (no crash, no read outside)."""
    learner = Learner(5, 1, "fobos", "invsqrt", "l1", "log")
    learner.fit_rows(np.ones(3), np.array([0, 1, 4], dtype=itype), np.array([0, 2, 3], dtype=itype), np.ones(2),
                     None, None, 1)
    data, indices, indptr = np.ones(3), np.array([0, 1, 4], dtype=itype), np.array([0, 2, 3], dtype=itype)
    np.testing.assert_allclose(learner.margins(data, indices, indptr, 5).ravel(),
                               [learner.row_margins(data[:2], indices[:2])[0], learner.row_margins(data[2:], indices[2:])[0]])
    if case == "decreasing":
        indptr = np.array([0, 3, 2], dtype=itype)
    elif case == "past the end":
        indptr = np.array([0, 2, 9], dtype=itype)
    elif case == "first not 0":
        indptr = np.array([1, 2, 3], dtype=itype)
    elif case == "short data":
        data = np.ones(2)
    elif case == "short indices":
        indices = indices[:2]
    else:
        indices = np.array([0, 7, 1], dtype=itype)
    with pytest.raises(ValueError, match=message):
        learner.margins(data, indices, indptr, 5)


@pytest.mark.parametrize("itype", [np.int32, np.int64])
@pytest.mark.parametrize("bad", [-1, 5, 2**31 - 1, -(2**31)])
def test_kernel_refuses_every_index_outside_the_model(itype, bad):
    """The index check compares unsigned, a negative index wrapping above d: negative
    indices, d itself and far beyond are refused in either index type, at any position
    (the vectorized body and its tail); d - 1 is taken."""
    learner = Learner(5, 1, "fobos", "invsqrt", "l1", "log")
    indptr, y, sw = np.array([0, 3, 6, 9], dtype=itype), np.ones(3), np.ones(3)
    for pos in range(9):
        indices = np.array([0, 1, 2, 3, 4, 0, 1, 2, 4], dtype=itype)
        indices[pos] = bad
        with pytest.raises(ValueError, match="column index lies outside"):
            learner.fit_rows(np.ones(9), indices, indptr, y, sw, None, 1)
    assert learner.t == 0
    learner.fit_rows(np.ones(9), np.array([4] * 9, dtype=itype), indptr, y, sw, None, 1)
    assert learner.t == 3


def test_progressive_log_loss_over_a_long_stream():
    """The kernel sums the log loss's log1p parts as one product, renormalized every
    512 rows: over 6000 rows of random labels (losses near log 2, whose product
    2**6000 would overflow a double) the progressive loss equals the eager sum to rounding."""
    rng = np.random.default_rng(7)
    n, d = 6000, 8
    X = sp.csr_matrix(rng.normal(0, 1, (n, d)))
    y = rng.choice([-1.0, 1.0], n)
    sw, order, params = np.ones(n), np.arange(n, dtype=np.int64), dict(alpha=1e-4, eta0=0.5)
    lazy = make(Learner, ("fobos", "adagrad", "l1"), X, 1, "log", params)
    eager = make(EagerReference, ("fobos", "adagrad", "l1"), X, 1, "log", params)
    lazy_loss = lazy.fit_rows(X.data, X.indices, X.indptr, y, sw, order, 1)
    eager_loss = eager.run(X.toarray(), y, sw, order, 1)
    check_equal(lazy, eager)
    assert eager_loss > 3000 and lazy_loss == pytest.approx(eager_loss, rel=1e-12, abs=0)


def test_progressive_log_loss_of_tiny_losses():
    """Losses near 1e-26 (every margin huge after the first step), where 1 + e would
    round e away, still sum to the eager value to rounding (log1p's series)."""
    rng = np.random.default_rng(3)
    n, d = 2000, 3
    X = sp.csr_matrix(rng.uniform(1, 2, (n, d)))
    y, sw = np.ones(n), np.ones(n)
    params = dict(alpha=1e-4, eta0=20.0)
    lazy = make(Learner, ("fobos", "constant", "l1"), X, 1, "log", params)
    eager = make(EagerReference, ("fobos", "constant", "l1"), X, 1, "log", params)
    first, rest = np.arange(1, dtype=np.int64), np.arange(1, n, dtype=np.int64)
    lazy.fit_rows(X.data, X.indices, X.indptr, y, sw, first, 1)
    eager.run(X.toarray(), y, sw, first, 1)
    lazy_loss = lazy.fit_rows(X.data, X.indices, X.indptr, y, sw, rest, 1)
    eager_loss = eager.run(X.toarray(), y, sw, rest, 1)
    check_equal(lazy, eager)
    assert 0 < eager_loss < 1e-15 and lazy_loss == pytest.approx(eager_loss, rel=1e-12, abs=0)


@pytest.mark.parametrize("shuffled", [False, True], ids=["in-order", "shuffled"])
def test_pass_beyond_the_prefetch_thresholds(shuffled):
    """A pass whose state (d = 2^17 features) and rows (240,000 non-zeros) both
    outgrow the kernel's prefetch threshold, in file order and shuffled (the row
    values and indices are then prefetched too), equals the eager reference."""
    rng = np.random.default_rng(5)
    n, d, per_row = 4000, 1 << 17, 60
    hot = rng.choice(d, 400, replace=False)              # features the eager model tracks
    indices = np.sort(np.stack([rng.choice(hot, per_row, replace=False) for _ in range(n)]), axis=1)
    X = sp.csr_matrix((rng.normal(0, 1, n * per_row), indices.ravel(),
                       np.arange(0, n * per_row + 1, per_row)), shape=(n, d))
    y = rng.choice([-1.0, 1.0], n)
    sw = np.ones(n)
    order = (rng.permutation(n) if shuffled else np.arange(n)).astype(np.int64)
    params = dict(alpha=1e-3, eta0=0.5)
    lazy = make(Learner, ("fobos", "adagrad", "l1"), X, 1, "log", params)
    lazy.fit_rows(X.data, X.indices, X.indptr, y, sw, order, 1)
    small = sp.csr_matrix(X[:, np.sort(hot)])               # the same rows over the hot columns
    eager = make(EagerReference, ("fobos", "adagrad", "l1"), small, 1, "log", params)
    eager.run(small.toarray(), y, sw, order, 1)
    coef = lazy.coef()
    assert not np.any(np.delete(coef, hot, axis=1))
    assert_contract_close(coef[:, np.sort(hot)], eager.coef())
    assert_contract_close(lazy.intercept(), eager.intercept())


@pytest.mark.parametrize("d, K, batch, roots", [
    (1 << 19, 1, 1, True), ((1 << 19) + 1, 1, 1, False), ((1 << 19) + 1, 1, 4, False),
    (1 << 17, 3, 1, True), (1 << 18, 3, 2, False)],
    ids=["kept", "recomputed", "recomputed-batches", "kept-3-outputs", "recomputed-3-outputs-batches"])
def test_ftrl_entries_with_and_without_square_roots(d, K, batch, roots):
    """FTRL entries keep sqrt(n) beside n up to 2^19 weights (d K) and recompute it
    beyond; both layouts, with one output or three, rows or batches, equal the eager
    reference."""
    rng = np.random.default_rng(7)
    n, per_row = 300, 12
    hot = np.sort(rng.choice(d, 40, replace=False))
    indices = np.sort(np.stack([rng.choice(hot, per_row, replace=False) for _ in range(n)]), axis=1)
    X = sp.csr_matrix((rng.normal(0, 1, n * per_row), indices.ravel(),
                       np.arange(0, n * per_row + 1, per_row)), shape=(n, d))
    y = rng.choice([-1.0, 1.0], n) if K == 1 else rng.integers(0, K, n).astype(float)
    sw, order = np.ones(n), np.arange(n, dtype=np.int64)
    rule, params = ("ftrl", "adagrad", "elasticnet"), dict(alpha=1e-2, l1_ratio=0.5, eta0=0.5)
    lazy = make(Learner, rule, X, K, "log", params)
    assert lazy.__getstate__()["arrays"]["state"].shape[1] == K * (3 if roots else 2)
    lazy.fit_rows(X.data, X.indices, X.indptr, y, sw, order, batch)
    small = sp.csr_matrix(X[:, hot])
    eager = make(EagerReference, rule, small, K, "log", params)
    eager.run(small.toarray(), y, sw, order, batch)
    coef = lazy.coef()
    assert not np.any(np.delete(coef, hot, axis=1))
    assert_contract_close(coef[:, hot], eager.coef())
    assert_contract_close(lazy.intercept(), eager.intercept())


@pytest.mark.parametrize("K", [1, 3])
@pytest.mark.parametrize("rule", [("ftrl", "adagrad", "l1"), ("ftrl", "adagrad", "elasticnet"),
                                  ("fobos", "invsqrt", "l1"), ("rda", "adagrad", "l2")],
                         ids=lambda r: "-".join(r))
def test_scratch_grows_between_calls(rule, K):
    """The scratch the steps write is allocated when first needed: ftrl's memo for the
    longest row so far, a batch's accumulator and marks at the first batch. Calls with
    ever longer rows, rows before batches and a pickle between them give the eager model."""
    rng = np.random.default_rng(5)
    d, params = 60, dict(alpha=1e-2, l1_ratio=0.5, eta0=0.5)
    lazy = eager = None
    for per_row, batch in [(1, 1), (6, 1), (25, 4), (60, 1), (40, 2)]:
        n = 24
        indices = np.sort(np.stack([rng.choice(d, per_row, replace=False) for _ in range(n)]), axis=1)
        X = sp.csr_matrix((rng.normal(0, 1, n * per_row), indices.ravel(),
                           np.arange(0, n * per_row + 1, per_row)), shape=(n, d))
        y = rng.choice([-1.0, 1.0], n) if K == 1 else rng.integers(0, K, n).astype(float)
        sw, order = np.ones(n), rng.permutation(n).astype(np.int64)
        if lazy is None:
            lazy, eager = make(Learner, rule, X, K, "log", params), make(EagerReference, rule, X, K, "log", params)
        lazy.fit_rows(X.data, X.indices, X.indptr, y, sw, order, batch)
        eager.run(X.toarray(), y, sw, order, batch)
        lazy = pickle.loads(pickle.dumps(lazy))
        check_equal(lazy, eager)


def test_learner_allocates_its_state_not_scratch_of_size_d():
    """A learner over 2^20 features holds its state and little else until batches ask
    for their d-sized accumulator (memory O(model), not O(model) times the scratch)."""
    import tracemalloc
    d, K = 1 << 20, 1
    X = sp.csr_matrix((np.ones(3), np.array([0, 7, d - 1]), np.array([0, 2, 3])), shape=(2, d))
    y, sw, order = np.array([-1.0, 1.0]), np.ones(2), np.arange(2, dtype=np.int64)
    for rule in [("ftrl", "adagrad", "l1"), ("fobos", "invsqrt", "l1")]:
        tracemalloc.start()
        lazy = make(Learner, rule, X, K, "log", dict(alpha=1e-3))
        lazy.fit_rows(X.data, X.indices, X.indptr, y, sw, order, 1)
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        state = lazy.__getstate__()["arrays"]["state"].nbytes
        assert state <= peak < 1.1 * state, (rule, peak, state)


def test_a_second_thread_cannot_train_a_learner_that_is_training():
    """fit_rows runs without the GIL and may grow the learner's scratch: a call from
    another thread meanwhile is refused (RuntimeError), not raced; the first call's
    model is the one a lone call gives."""
    import threading
    rng = np.random.default_rng(2)
    n, d, per_row = 400_000, 1 << 16, 20
    indices = rng.integers(0, d, (n, per_row)).astype(np.int32)
    indices.sort(axis=1)
    X = sp.csr_matrix((np.ones(n * per_row), indices.ravel(), np.arange(0, n * per_row + 1, per_row)),
                      shape=(n, d))
    X.sum_duplicates()
    y, sw, order = rng.choice([-1.0, 1.0], n), np.ones(n), np.arange(n, dtype=np.int64)
    rule, params = ("ftrl", "adagrad", "l1"), dict(alpha=1e-4)
    busy, alone = (make(Learner, rule, X, 1, "log", params) for _ in range(2))
    worker = threading.Thread(target=busy.fit_rows, args=(X.data, X.indices, X.indptr, y, sw, order, 1))
    worker.start()
    while not busy.training and worker.is_alive():
        pass
    with pytest.raises(RuntimeError, match="training in another thread"):
        busy.fit_rows(X.data, X.indices, X.indptr, y, sw, order[:10], 1)
    worker.join()
    assert not busy.training
    alone.fit_rows(X.data, X.indices, X.indptr, y, sw, order, 1)
    assert np.array_equal(busy.coef(), alone.coef())


@pytest.mark.parametrize("value_code, index_code", [("d", "i"), ("d", "q"), ("f", "i"), ("f", "q")])
def test_standard_library_buffers_train_as_numpy_arrays(value_code, index_code):
    """The command line hands the kernel the reader's array.array buffers (float64
    or float32 values, int32 or int64 indices; unit weights and file order as
    None); the state after a pass is bit for bit the one NumPy arrays give."""
    from array import array
    rng = np.random.default_rng(11)
    X = sp.random(200, 30, density=0.2, format="csr", random_state=rng,
                  data_rvs=lambda k: rng.uniform(-2, 2, k)).astype(np.float32 if value_code == "f" else np.float64)
    X.indices, X.indptr = (X.indices.astype(np.int64 if index_code == "q" else np.int32),
                           X.indptr.astype(np.int64 if index_code == "q" else np.int32))
    y = rng.choice([-1.0, 1.0], 200)
    rule, params = ("fobos", "adagrad", "l1"), dict(alpha=1e-2, eta0=0.5)
    with_numpy, with_arrays = (make(Learner, rule, X, 1, "log", params) for _ in range(2))
    loss = with_numpy.fit_rows(X.data, X.indices, X.indptr, y, np.ones(200), np.arange(200, dtype=np.int64), 1)
    assert loss == with_arrays.fit_rows(array(value_code, X.data.tolist()), array(index_code, X.indices.tolist()),
                                        array(index_code, X.indptr.tolist()), array("d", y), None, None, 1)
    np.testing.assert_array_equal(with_numpy.__getstate__()["arrays"]["state"],
                                  with_arrays.__getstate__()["arrays"]["state"])


@pytest.mark.parametrize("rule", RULES + [("fobos", "invsqrt", "l1_l2"), ("rda", "adagrad", "sparse_group")],
                         ids=lambda r: "-".join(r))
def test_count_nonzero_counts_the_eager_model(rule):
    """Learner.count_nonzero (the command line's report, without NumPy) equals
    the count of coef()'s non-zero weights."""
    rng = np.random.default_rng(3)
    X = sp.random(60, 25, density=0.15, format="csr", random_state=rng)
    lazy = make(Learner, rule, X, 3, "log", dict(alpha=0.002, eta0=0.5))
    lazy.fit_rows(X.data, X.indices, X.indptr, rng.integers(0, 3, 60).astype(float), None, None, 1)
    assert 0 < lazy.count_nonzero() == np.count_nonzero(lazy.coef())


def test_state_of_another_layout_is_refused():
    """A pickled state whose arrays do not have this learner's sizes (FTRL's
    entries before sqrt(n) was kept, say) is refused, not read out of bounds."""
    lazy = Learner(30, 1, "ftrl", "adagrad", "l1", "log")
    cls, args, state = lazy.__reduce__()
    state["arrays"]["state"] = state["arrays"]["state"][:, :2]
    with pytest.raises(ValueError, match="state holds 60 values where this fastprox keeps 90"):
        cls(*args).__setstate__(state)
    state = lazy.__getstate__()
    state["arrays"]["bstate"] = state["arrays"]["bstate"][:0]
    with pytest.raises(ValueError, match="bstate holds 0 values"):
        pickle.loads(pickle.dumps(lazy)).__setstate__(state)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(problem=problems(), extra=st.integers(0, 3), value_code=st.sampled_from(["d", "f"]),
       wide=st.booleans())
def test_margins_equal_the_dense_product(problem, extra, value_code, wide):
    """Learner.margins (what predict and the command line's test read) equals
    X w^T + b computed densely, for every buffer type, with columns beyond the
    model's width (features it never saw) weighing 0."""
    X, y, sw, K, loss, params, order, batch = problem
    lazy = make(Learner, ("fobos", "invsqrt", "l1"), X, K, loss, params)
    lazy.fit_rows(X.data, X.indices, X.indptr, y, sw, order, batch)
    rng = np.random.default_rng(extra)
    wider = sp.random(X.shape[0], X.shape[1] + extra, density=0.3, format="csr", random_state=rng,
                      dtype=np.float32 if value_code == "f" else np.float64)
    itype = np.int64 if wide else np.int32
    got = lazy.margins(wider.data, wider.indices.astype(itype), wider.indptr.astype(itype),
                       wider.shape[1])
    expected = wider[:, :X.shape[1]].toarray().astype(np.float64) @ lazy.coef().T + lazy.intercept()
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12)


@settings(deadline=None)       # (hypothesis's default, 200 ms an example: a timing, which load breaks)
@given(labels=st.lists(st.sampled_from([-3.0, 0.0, 2.5, 7.0, 1e300]), max_size=40),
       classes=st.sampled_from([[0.0, 7.0], [-3.0, 2.5, 7.0], [-3.0, 0.0, 2.5, 7.0, 1e300]]))
def test_encode_targets_equals_its_definition(labels, classes):
    """encode_targets gives +-1 (two classes) or the class index (three or more),
    and refuses the labels outside the classes, naming them."""
    from array import array
    from fastprox._arrays import encode_targets
    unknown = sorted(set(labels) - set(classes))
    if unknown:
        with pytest.raises(ValueError, match=re.escape(f"y has labels {unknown!r}")):
            encode_targets(array("d", labels), classes)
        return
    expected = [(1.0 if v == classes[1] else -1.0) if len(classes) == 2 else float(classes.index(v))
                for v in labels]
    assert list(encode_targets(array("d", labels), classes)) == expected


@pytest.mark.parametrize("batch", [1, 3])
def test_a_refused_step_leaves_berhu_entries_in_the_schedule(batch):
    """A refused step (its gradient too large) has caught its rows' features up before it
    stops: under Berhu's heap, entries current and out of the schedule until their
    update. They go back into it, so that the later steps' proxes still reach them
    (they were left current forever: a weight that should shrink to 0 stayed)."""
    X = sp.csr_matrix(np.array([[2.0, 1.0, 0.0, 0.0], [1e300, 1e300, 0.0, 0.0]] + [[0.0, 0.0, 1.0, 1.0]] * 200))
    y = np.array([1.0, -1.0] + [1.0] * 200)
    params = dict(alpha=0.1, eta0=1.0, berhu_gamma=0.01)
    lazy = make(Learner, ("fobos", "inv", "berhu"), X, 1, "log", params)
    eager = make(EagerReference, ("fobos", "inv", "berhu"), X, 1, "log", params)
    first, rest = np.zeros(5, dtype=np.int64), np.arange(2, 202)
    refused = np.array([1] if batch == 1 else [0, 1, 2], dtype=np.int64)     # row 1 overflows
    lazy.fit_rows(X.data, X.indices, X.indptr, y, None, first, 1)
    eager.run(X.toarray(), y, np.ones(len(y)), first, 1)
    with pytest.raises(ValueError, match="reached 2\\^480"):
        lazy.fit_rows(X.data, X.indices, X.indptr, y, None, refused, batch)
    lazy.fit_rows(X.data, X.indices, X.indptr, y, None, rest.astype(np.int64), 1)
    eager.run(X.toarray(), y, np.ones(len(y)), rest, 1)
    assert not np.any(eager.coef()[0, :2])
    check_equal(lazy, eager)
