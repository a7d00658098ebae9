"""The averaged row kernels (`_kernel/steps/rows_average.pxd`) compute the general
path's bits: a learner keeping the averaged iterate on its fast rows and one forced
through the general `step` (`Learner._use_general_step`) end with the same state,
averaged sums, stamps and intercepts' sums included, byte for byte: every rule whose
single rows take a fast kernel and whose averaged iterate is kept, every loss, both
steps where the rule takes them, several passes, sample weights, empty rows, the
first averaged step before, at and after the start, the rebase, float32 values and
int64 indices (hypothesis)."""
import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings, HealthCheck, strategies as st

from fastprox._kernels import Learner
from fastprox._registry import LOSSES, RULES as ALL_RULES

#: (update, schedule, penalty) with fast rows and a kept averaged iterate.
RULES = [(r.update, r.schedule, r.penalty) for r in ALL_RULES if r.average and r.fast_rows in
         ("fobos", "adagrad", "normalized", "dual")]
IDS = ["-".join(r) for r in RULES]


def averaged_fast(rule):
    """Whether the rule's averaged single rows take a row kernel: all but the normalized
    schedule's l1 rows, whose row fields hold the stamp A between those its kernel reads."""
    return rule[1] != "normalized" or rule[2] == "none"


def state(learner):
    """Every array and scalar of the learner, as bytes."""
    arrays = [a for a, _ in learner.saved_arrays().values()] + list(learner.average_state().values())
    return b"".join(bytes(memoryview(a)) for a in arrays), learner.scalars()


def pair(rule, d, loss, average, step="gradient", alpha=1e-3, fit_intercept=True):
    """A learner on its fast rows and one on the general step, built alike."""
    update, schedule, penalty = rule
    kw = dict(alpha=alpha, l1_ratio=0.5, eta0=0.3 if schedule in ("adagrad", "normalized") else 0.05, delta=1.0,
              average=average, step=step, fit_intercept=fit_intercept,
              rda_rho=0.01 if update == "rda" and penalty in ("l1", "elasticnet") else 0.0)
    learners = [Learner(d, 1, update, schedule, penalty, loss, **kw) for _ in range(2)]
    learners[1]._use_general_step()
    return learners


def rows(n, d, density, seed, empty=0.1):
    """n sparse rows over d features (a share of them empty), labels +-1, weights."""
    rng = np.random.default_rng(seed)
    X = sp.random(n, d, density=density, format="csr", random_state=rng,
                  data_rvs=lambda k: rng.uniform(-2, 2, k))
    X = sp.diags((rng.random(n) >= empty).astype(float)) @ X
    X = sp.csr_matrix(X)
    X.eliminate_zeros()
    y = np.where(X @ rng.normal(size=d) + 0.3 * rng.normal(size=n) > 0, 1.0, -1.0)
    return X, y, rng.uniform(0.2, 2.0, n)


def fit(learner, X, y, sw, order):
    """One call of fit_rows; the refusal's message if a margin overflowed (both learners
    must refuse the same row, their models the ones before it)."""
    try:
        learner.fit_rows(X.data, X.indices, X.indptr, y, sw, order, 1)
    except ValueError as error:
        return str(error)
    return None


def losses_for(step):
    return [name for name in LOSSES if LOSSES[name].invariant or step == "gradient"]


def steps_of(rule):
    return ("gradient", "invariant") if rule[1] == "normalized" else ("gradient",)


@pytest.mark.parametrize("rule", RULES, ids=IDS)
def test_averaged_rows_take_a_row_kernel(rule):
    fast, general = pair(rule, 5, "log", 1)
    assert (fast.fast_rows is not None) == averaged_fast(rule) and general.fast_rows is None


@pytest.mark.parametrize("rule", RULES, ids=IDS)
@pytest.mark.parametrize("weighted", [False, True])
def test_averaged_rows_compute_the_general_paths_bits(rule, weighted):
    X, y, sw = rows(1500, 300, 0.03, 0)
    for step in steps_of(rule):
        for loss in losses_for(step):
            for average in (1, 700, 5000):
                learners = pair(rule, X.shape[1], loss, average, step)
                orders = (None, np.random.default_rng(1).permutation(X.shape[0]).astype(np.int64), None)
                assert [[fit(learner, X, y, sw if weighted else None, order) for order in orders]
                        for learner in learners] == [[None] * 3] * 2 or loss == "squared"
                assert state(learners[0]) == state(learners[1]), (step, loss, average)
                assert np.array_equal(learners[0].averaged_coef(), learners[1].averaged_coef())


@pytest.mark.parametrize("rule", [r for r in RULES if r[0] == "fobos" and r[1] != "adagrad"],
                         ids=[i for r, i in zip(RULES, IDS) if r[0] == "fobos" and r[1] != "adagrad"])
def test_averaged_rows_across_the_rebase(rule):
    """Past the rebase period (2^16 steps at least): the catch-up of every feature and
    the cumulants' history restarted, in the same bits."""
    X, y, _ = rows(2000, 40, 0.2, 3, empty=0.0)
    learners = pair(rule, X.shape[1], "log", 50)
    order = np.tile(np.arange(X.shape[0], dtype=np.int64), 34)       # 68,000 steps
    for learner in learners:
        assert fit(learner, X, y, None, order) is None
    assert learners[0].t > 1 << 16 and learners[0].since_rebase < learners[0].t
    assert state(learners[0]) == state(learners[1])


SCALAR = [r for r in RULES if r[0] == "fobos" and r[1] not in ("adagrad", "normalized")]


@pytest.mark.parametrize("rule", SCALAR, ids=["-".join(r) for r in SCALAR])
@pytest.mark.parametrize("fit_intercept", [False, True])
def test_averaged_scalar_rows_across_calls_growth_and_the_rebase(rule, fit_intercept):
    """Scalar fobos's averaged rows (every penalty, in line: rows met at the step before
    skip their catch-up) against the general step: calls of uneven lengths, the model
    grown between calls (the history resized), with and without an intercept; without
    one, a call ending inside a rebase period and the next crossing it (2^16 steps:
    `test_averaged_rows_across_the_rebase` crosses it in one call with an intercept)."""
    X, y, _ = rows(1000, 60, 0.15, 5, empty=0.05)
    learners = pair(rule, 40, "log", 300, fit_intercept=fit_intercept)
    rng = np.random.default_rng(7)
    scale = 1 if fit_intercept else 10
    calls = [(X[:, :40], rng.integers(0, 1000, 700)), (X[:, :40], rng.integers(0, 1000, 4_000 * scale)),
             (X, rng.integers(0, 1000, 3_000 * scale)), (X, rng.integers(0, 1000, 500))]
    for part, order in calls:
        part = sp.csr_matrix(part)
        for learner in learners:
            learner.grow(part.shape[1])
            assert fit(learner, part, y, None, order.astype(np.int64)) is None
        assert state(learners[0]) == state(learners[1])
    assert fit_intercept or learners[0].since_rebase == learners[0].t - (1 << 16) > 0     # one rebase, by period
    assert np.array_equal(learners[0].averaged_coef(), learners[1].averaged_coef())
    assert np.array_equal(learners[0].averaged_intercept(), learners[1].averaged_intercept())


@pytest.mark.parametrize("rule", RULES, ids=IDS)
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**31), n=st.integers(1, 120), d=st.integers(1, 30),
       density=st.floats(0.0, 0.6), average=st.integers(1, 150), passes=st.integers(1, 3),
       weighted=st.booleans(), invariant=st.booleans(), loss=st.sampled_from(sorted(LOSSES)),
       alpha=st.sampled_from([0.0, 1e-3, 0.05]), dtype=st.sampled_from([np.float64, np.float32]),
       itype=st.sampled_from([np.int32, np.int64]))
def test_averaged_rows_bits_hypothesis(rule, seed, n, d, density, average, passes, weighted, invariant, loss,
                                       alpha, dtype, itype):
    step = "invariant" if invariant and rule[1] == "normalized" and LOSSES[loss].invariant else "gradient"
    X, y, sw = rows(n, d, density, seed, empty=0.2)
    X.data, X.indices, X.indptr = X.data.astype(dtype), X.indices.astype(itype), X.indptr.astype(itype)
    learners = pair(rule, d, loss, average, step, alpha)
    orders = [np.random.default_rng(seed + p).permutation(n).astype(np.int64) for p in range(passes)]
    refusals = [[fit(learner, X, y, sw if weighted else None, order) for order in orders] for learner in learners]
    assert refusals[0] == refusals[1]
    assert state(learners[0]) == state(learners[1])


@pytest.mark.parametrize("rule", RULES, ids=IDS)
def test_averaged_rows_keep_the_general_paths_state_after_a_refused_row(rule):
    """A row of a huge value (refused under the normalized schedule, its margin
    overflowing) leaves the state the general step leaves: the normalized rows store
    their new scales and weights in the fields the layout gives them (A first), not
    one field further (the kernel's view is shifted by A: its row fields too). (The
    operation count, not the model, differs: the general step counts the refused
    margin's.)"""
    X = sp.csr_matrix(np.array([[1.0, 2.0, 0.0], [0.5, 0.0, 1.0], [1e300, 3.0, 0.0], [1.0, 1.0, 1.0]]))
    y = np.array([1.0, -1.0, 1.0, -1.0])
    for step in steps_of(rule):
        learners = pair(rule, 3, "log", 1, step)
        refusals = [fit(learner, X, y, None, np.arange(4, dtype=np.int64)) for learner in learners]
        assert refusals[0] == refusals[1] and (refusals[0] is not None or rule[1] != "normalized")
        (fast, fast_scalars), (general, general_scalars) = map(state, learners)
        assert fast == general and fast_scalars | {"n_ops": 0} == general_scalars | {"n_ops": 0}, step
