"""The lazy kernels equal the eager multiclass contract (tests/support/reference_multiclass.py)
for every supported combination of group penalty, update rule, schedule and loss
(multinomial softmax, Crammer-Singer, one-vs-rest, single output), over feature
rows and over random user groups with unpenalized features, without and with
random group weights (zeros included); everything else with a group penalty is
refused; and a step's cost does not grow with d."""
import pickle

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import assume, given, settings, HealthCheck, strategies as st

from fastprox._kernels import Learner
from fastprox._registry import PENALTIES as PENALTY_TABLE, RULES as ALL_RULES, SCHEDULES, UPDATES, losses_of
from tests.support.reference import assert_contract_close, with_offset
from tests.support.reference_multiclass import (GROUP_PENALTIES, MULTINOMIAL_LOSSES, MulticlassReference,
                                  random_group_weights)

# from the table of rules: the group penalties' rules (rda's under adagrad are
# test_rda_adagrad_groups'), and the coordinate-wise ones for multinomial models
GROUP_RULES = [(r.update, r.schedule, r.penalty) for r in ALL_RULES
               if PENALTY_TABLE[r.penalty].family == "group" and r.schedule != "adagrad"]
# (the normalized schedule is refused for multinomial models: test_steps)
MULTINOMIAL_SCALAR_RULES = [(r.update, r.schedule, r.penalty) for r in ALL_RULES
                            if PENALTY_TABLE[r.penalty].family != "group" and r.schedule != "normalized"]
BINARY_LOSSES = losses_of("binary")
REGRESSION_LOSSES = losses_of("regression")


@st.composite
def problems(draw, modes=("multinomial", "multinomial", "ovr", "single"), max_rows=25, max_features=12,
             weighted=False):
    """A random sparse stream with labels for its mode, user groups or None, group
    weights if `weighted` (else None), and hyper-parameters. Returns a dict."""
    n = draw(st.integers(1, max_rows))
    d = draw(st.integers(1, max_features))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    density = draw(st.sampled_from([0.0, 0.15, 0.4, 1.0]))
    X = sp.random(n, d, density=density, format="csr", random_state=rng,
                  data_rvs=lambda k: rng.uniform(-3, 3, k))
    mode = draw(st.sampled_from(modes))
    if mode == "single":
        K, loss = 1, draw(st.sampled_from(BINARY_LOSSES + REGRESSION_LOSSES))
        y = rng.normal(0, 2, n) if loss in REGRESSION_LOSSES else rng.choice([-1.0, 1.0], n)
    else:
        K = draw(st.sampled_from([3, 4]))
        loss = draw(st.sampled_from(MULTINOMIAL_LOSSES if mode == "multinomial" else BINARY_LOSSES))
        y = rng.integers(0, K, n).astype(float)
    groups = None
    if draw(st.booleans()):
        groups = rng.integers(-1, draw(st.integers(1, 4)), d).astype(np.int64)
    n_groups = d if groups is None else int(groups.max(initial=-1)) + 1
    params = dict(
        alpha=draw(st.sampled_from([0.0, 1e-3, 0.05, 0.5])),
        l1_ratio=draw(st.sampled_from([0.0, 0.3, 0.85, 1.0])),
        eta0=draw(st.sampled_from([0.01, 0.3, 1.0, 2.0])),
        berhu_gamma=draw(st.sampled_from([0.05, 0.5, 2.0])),
        epsilon=draw(st.sampled_from([0.0, 0.1, 1.0])),
        fit_intercept=draw(st.booleans()),
        t0=draw(st.sampled_from([0.0, 2.5])),      # (kept by the rules that take it: `make`)
        intercept_scaling=draw(st.sampled_from([1.0, 0.1, 2.5])),     # the intercept's constant feature
        ovr=mode == "ovr",
        multinomial=mode == "multinomial",
        groups=groups,
        group_weights=random_group_weights(rng, n_groups) if weighted else None,
    )
    order = np.concatenate([rng.permutation(n) for _ in range(draw(st.integers(1, 3)))])
    return dict(X=X, y=y, sw=rng.uniform(0.2, 2.0, n) if draw(st.booleans()) else np.ones(n),
                K=K, loss=loss, params=params, order=order.astype(np.int64),
                batch=draw(st.sampled_from([1, 1, 2, 3])))


def make(cls, rule, pb):
    update, schedule, penalty = rule
    params = with_offset(rule, dict(pb["params"]))
    if penalty not in GROUP_PENALTIES:
        params["groups"] = params["group_weights"] = None
    return cls(pb["X"].shape[1], pb["K"], update, schedule, penalty, pb["loss"], **params)


def check_lazy_equals_eager(rule, pb, split, dtype, itype):
    """Two fit_rows calls with a pickle round trip between them give the eager
    model (coef and intercept) and the same progressive loss."""
    X = pb["X"].astype(dtype)
    X.indices, X.indptr = X.indices.astype(itype), X.indptr.astype(itype)
    y, sw, order, batch = pb["y"], pb["sw"], pb["order"], pb["batch"]
    lazy, eager = make(Learner, rule, pb), make(MulticlassReference, rule, pb)
    cut = int(split * len(order)) // batch * batch
    lazy_loss = lazy.fit_rows(X.data, X.indices, X.indptr, y, sw, order[:cut], batch)
    lazy = pickle.loads(pickle.dumps(lazy))
    lazy_loss += lazy.fit_rows(X.data, X.indices, X.indptr, y, sw, order[cut:], batch)
    eager_loss = eager.run(X.toarray().astype(np.float64), y, sw, order, batch)
    assume(eager.kink_gap > 1e-9)       # a perceptron step on its tie is decided by rounding (reference.TIES)
    assert lazy.t == eager.t
    assert_contract_close(lazy.coef(), eager.coef())
    assert_contract_close(lazy.intercept(), eager.intercept())
    assert lazy_loss == pytest.approx(eager_loss, rel=1e-9, abs=1e-12)


SETTINGS = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
DRAWS = dict(split=st.floats(0, 1), dtype=st.sampled_from([np.float64, np.float32]),
             itype=st.sampled_from([np.int32, np.int64]))


@pytest.mark.parametrize("rule", GROUP_RULES, ids=["-".join(r) for r in GROUP_RULES])
@SETTINGS
@given(pb=problems(), **DRAWS)
def test_group_penalties_lazy_equals_eager(rule, pb, split, dtype, itype):
    """Every group penalty and supported rule, every mode, row and user groups."""
    check_lazy_equals_eager(rule, pb, split, dtype, itype)


@pytest.mark.parametrize("rule", GROUP_RULES, ids=["-".join(r) for r in GROUP_RULES])
@SETTINGS
@given(pb=problems(weighted=True), **DRAWS)
def test_weighted_group_penalties_lazy_equals_eager(rule, pb, split, dtype, itype):
    """The same with random group weights d_G, zeros included (Martins et al.'s Alg. 4
    for squared_group; the l1_l2 / l1_linf rows leave the dedicated step)."""
    check_lazy_equals_eager(rule, pb, split, dtype, itype)


@pytest.mark.parametrize("rule", GROUP_RULES, ids=["-".join(r) for r in GROUP_RULES])
@settings(SETTINGS, max_examples=10)
@given(pb=problems(weighted=True))
def test_unit_group_weights_are_no_weights(rule, pb):
    """group_weights of ones give the unweighted model: bit for bit (the weighted
    arithmetic multiplies by 1.0), except for squared_group, whose Alg. 4 tests a
    group's activity in another rounding than Alg. 2: there to the contract's rounding."""
    X, y, sw, order, batch = pb["X"], pb["y"], pb["sw"], pb["order"], pb["batch"]
    coefs = []
    for weights in (None, np.ones_like(pb["params"]["group_weights"])):
        lazy = make(Learner, rule, dict(pb, params=dict(pb["params"], group_weights=weights)))
        lazy.fit_rows(X.data, X.indices, X.indptr, y, sw, order, batch)
        coefs.append(lazy.coef())
    if rule[2] == "squared_group":
        assert_contract_close(coefs[1], coefs[0])
    else:
        np.testing.assert_array_equal(coefs[0], coefs[1])


@pytest.mark.parametrize("rule", MULTINOMIAL_SCALAR_RULES, ids=["-".join(r) for r in MULTINOMIAL_SCALAR_RULES])
@settings(SETTINGS, max_examples=10)
@given(pb=problems(modes=("multinomial",)), **DRAWS)
def test_multinomial_scalar_penalties_lazy_equals_eager(rule, pb, split, dtype, itype):
    """The multinomial losses with the entry-wise penalties (fobos, rda)."""
    check_lazy_equals_eager(rule, pb, split, dtype, itype)


@pytest.mark.parametrize("weights", [None, [2.5, 0.3, 0.0, 1.0]], ids=["unweighted", "weighted"])
@pytest.mark.parametrize("penalty", ["l1_l2", "l1_linf", "squared_group"])
def test_group_untouched_for_thousands_of_steps(penalty, weights):
    """A group seen at step 1 only is caught up exactly 2000 steps later, next to
    busy groups and an unpenalized feature (and a group of weight 0)."""
    rng = np.random.default_rng(6)
    n, d, K = 2000, 9, 3
    X = sp.random(n, d, density=0.3, format="csr", random_state=rng).tolil()
    X[:, 0] = 0
    X[0, 0] = 2.5
    X = X.tocsr()
    y = rng.integers(0, K, n).astype(float)
    groups = np.array([0, 1, 1, 2, 2, 3, 3, -1, 1])
    pb = dict(X=X, y=y, K=K, loss="log", params=dict(alpha=1e-4, eta0=0.3, multinomial=True, groups=groups,
                                                     group_weights=weights))
    lazy, eager = make(Learner, ("fobos", "invsqrt", penalty), pb), make(MulticlassReference, ("fobos", "invsqrt", penalty), pb)
    order = np.arange(n, dtype=np.int64)
    lazy.fit_rows(X.data, X.indices, X.indptr, y, np.ones(n), order, 1)
    eager.run(X.toarray(), y, np.ones(n), order, 1)
    assert_contract_close(lazy.coef(), eager.coef())


# every (update, schedule) a group penalty is not in the table with
UNSUPPORTED = [(u, s, p) for u in UPDATES for s in SCHEDULES for p in GROUP_PENALTIES
               if (u, s, p) not in {(r.update, r.schedule, r.penalty) for r in ALL_RULES}]


@pytest.mark.parametrize("rule", UNSUPPORTED, ids=["-".join(r) for r in UNSUPPORTED])
@pytest.mark.parametrize("multinomial", [False, True])
def test_unsupported_combinations_are_refused(rule, multinomial):
    """What cannot be computed exactly at O(nnz) cost raises ValueError naming what is supported."""
    with pytest.raises(ValueError, match="fobos"):
        Learner(10, 3, *rule, "log", alpha=0.01, multinomial=multinomial)


@pytest.mark.parametrize("penalty", ["l1_l2", "l1_linf", "sparse_group"])
def test_rda_rho_with_group_penalty_is_refused(penalty):
    with pytest.raises(ValueError, match="fobos"):
        Learner(10, 3, "rda", "invsqrt", penalty, "log", alpha=0.01, rda_rho=0.1)


COST_RULES = [rule for rule in GROUP_RULES if rule[1] != "invsqrt" or rule[0] == "rda"]


@pytest.mark.parametrize("rule", COST_RULES, ids=["-".join(r) for r in COST_RULES])
@pytest.mark.parametrize("multinomial", [False, True])
@pytest.mark.parametrize("weighted", [False, True])
def test_cost_independent_of_d(rule, multinomial, weighted):
    """Entries visited (n_ops) do not depend on d: the same 300 rows over the first
    1000 features, in a space of 1000 or 100,000 features. Row groups, except for
    squared_group, whose every step needs all p group norms (O(p log p)): there the
    first 1000 features are row groups and the others unpenalized (-1). Weighted:
    every group weight 0.7."""
    rng = np.random.default_rng(5)
    n, K = 300, 4
    X0 = sp.random(n, 1000, density=0.005, format="csr", random_state=rng)
    y = rng.integers(0, K, n).astype(float)
    counts = []
    for d in (1_000, 100_000):
        X = sp.csr_matrix((X0.data, X0.indices, X0.indptr), shape=(n, d))
        groups = None
        if rule[2] == "squared_group":
            groups = np.where(np.arange(d) < 1000, np.arange(d), -1).astype(np.int64)
        n_groups = d if groups is None else 1000
        lazy = Learner(d, K, *rule, "log", alpha=0.01, eta0=0.5, ovr=not multinomial,
                       multinomial=multinomial, groups=groups,
                       group_weights=np.full(n_groups, 0.7) if weighted else None)
        lazy.fit_rows(X.data, X.indices, X.indptr, y, np.ones(n), np.arange(n, dtype=np.int64), 1)
        counts.append(lazy.n_ops)
    assert counts[0] == counts[1]
