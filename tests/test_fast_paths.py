"""Every hand-fused row kernel computes the general path's bits: a learner forced
through the general `step` (`Learner._use_general_step`) and one on its fast rows
end with the same state, bit for bit, on several data sets (issue: the fast rows
said "operation for operation, the same bits" and nothing checked it)."""
import numpy as np
import pytest
import scipy.sparse as sp

from fastprox import load_libsvm
from fastprox._kernels import Learner
from fastprox._registry import LOSSES, RULES as ALL_RULES, losses_of, penalties_of


def fast_rules():
    """(update, schedule, penalty) whose single-output rows take a fast kernel, with its name."""
    for r in ALL_RULES:
        if r.fast_rows is not None:
            assert Learner(3, 1, r.update, r.schedule, r.penalty, "log").fast_rows == r.fast_rows
            yield r.update, r.schedule, r.penalty, r.fast_rows


RULES = list(fast_rules())


def data_sets(shared_data):
    rng = np.random.default_rng(0)
    X = sp.random(3000, 400, density=0.02, format="csr", random_state=rng,
                  data_rvs=lambda k: rng.uniform(-2, 2, k))
    y = np.where(X @ rng.normal(size=400) > 0, 1.0, -1.0)
    sets = {"synthetic": (X, y)}
    for name, path in (("a9a", "a9a/a9a"), ("ijcnn1", "ijcnn1/ijcnn1.trn")):
        Xr, yr = load_libsvm(*shared_data(path))
        sets[name] = (Xr[:4000], np.where(yr[:4000] > 0, 1.0, -1.0))
    return sets


@pytest.fixture(scope="module")
def sets(shared_data):
    return data_sets(shared_data)


def state(learner):
    arrays = learner.saved_arrays()
    return b"".join(bytes(memoryview(a).cast("B")) for a, _ in arrays.values()), learner.scalars()


def test_every_fast_kernel_is_covered():
    assert {fast for *_, fast in RULES} == {"fobos", "adagrad", "normalized", "dual", "rows"}


@pytest.mark.parametrize("rule", RULES, ids=["/".join(r[:3]) for r in RULES])
@pytest.mark.parametrize("name", ["synthetic", "a9a", "ijcnn1"])
def test_fast_rows_compute_the_general_paths_bits(rule, name, sets):
    update, schedule, penalty, fast = rule
    X, y = sets[name]
    K = 3 if fast == "rows" else 1
    target = (np.abs(y) + (y > 0)).astype(np.float64) if K > 1 else y      # 3 classes from the sign and more
    for loss in (losses_of("binary", multinomial=True) if K > 1 else LOSSES):
        kw = dict(alpha=1e-3, eta0=0.05 if schedule != "adagrad" else 0.3, delta=1.0, ovr=K > 1,
                  rda_rho=0.01 if update == "rda" and penalty in ("l1", "elasticnet") else 0.0)
        learners = [Learner(X.shape[1], K, update, schedule, penalty, loss, **kw) for _ in range(2)]
        learners[1]._use_general_step()
        assert learners[0].fast_rows == fast and learners[1].fast_rows is None
        for learner in learners:
            for order in (None, np.random.default_rng(1).permutation(X.shape[0]).astype(np.int64)):
                learner.fit_rows(X.data, X.indices, X.indptr, target, None, order, 1)
        assert state(learners[0]) == state(learners[1]), (loss, name)


@pytest.mark.parametrize("rule", [r for r in RULES if r[2] in ("l1", "l2", "elasticnet")],
                         ids=["/".join(r[:3]) for r in RULES if r[2] in ("l1", "l2", "elasticnet")])
def test_fast_rows_at_alpha_zero_compute_the_general_paths_bits(rule, sets):
    """alpha = 0 leaves every prox the identity, and the kernel takes the l1 forms
    (`Learner`: l1_share = 1, AdaGrad's `adagrad_l1_row`): the general path's bits."""
    update, schedule, penalty, fast = rule
    X, y = sets["ijcnn1"]
    for loss in ("log", "hinge"):
        learners = [Learner(X.shape[1], 1, update, schedule, penalty, loss, alpha=0.0, l1_ratio=0.5,
                            eta0=0.05 if schedule != "adagrad" else 0.3, delta=1.0) for _ in range(2)]
        learners[1]._use_general_step()
        for learner in learners:
            learner.fit_rows(X.data, X.indices, X.indptr, y, None, None, 1)
        assert state(learners[0]) == state(learners[1]), loss

@pytest.mark.parametrize("penalty", penalties_of("separable"))
def test_ftrl_without_its_roots_memo_too(penalty, sets):
    """FTRL models of over 2^19 weights keep (z, n) without sqrt(n): that layout's
    fast rows (`dual_row` with roots off) are the general path's too."""
    X, y = sets["synthetic"]
    learners = [Learner((1 << 19) + 1, 1, "ftrl", "adagrad", penalty, "log", alpha=1e-3, eta0=0.3, delta=1.0)
                for _ in range(2)]
    learners[1]._use_general_step()
    assert learners[0].saved_arrays()["state"][1][1] == 2       # (z, n): no roots
    for learner in learners:
        learner.fit_rows(X.data, X.indices, X.indptr, y, None, None, 1)
    assert state(learners[0]) == state(learners[1])


@pytest.mark.parametrize("penalty", ["none", "l1"])
@pytest.mark.parametrize("step", ["gradient", "invariant"])
@pytest.mark.parametrize("name", ["synthetic", "a9a", "ijcnn1"])
@pytest.mark.parametrize("weighted", [False, True])
def test_normalized_rows_with_either_step_and_weights(penalty, step, name, weighted, sets):
    """The normalized schedule's fast rows (`plain_normalized_step`) with the gradient
    and the invariant step, weighted rows or not (unweighted, the log loss's invariant
    step takes the gradient's e^-|z|), every loss (the invariant step's: not the perceptron):
    the general path's bits."""
    X, y = sets[name]
    sw = np.random.default_rng(2).uniform(0.2, 2.0, X.shape[0]) if weighted else None
    for loss in (name for name in LOSSES if LOSSES[name].invariant or step == "gradient"):
        learners = [Learner(X.shape[1], 1, "fobos", "normalized", penalty, loss, alpha=1e-3, eta0=0.5,
                            step=step) for _ in range(2)]
        learners[1]._use_general_step()
        assert learners[0].fast_rows == "normalized" and learners[1].fast_rows is None
        for learner in learners:
            for order in (None, np.random.default_rng(1).permutation(X.shape[0]).astype(np.int64)):
                learner.fit_rows(X.data, X.indices, X.indptr, y, sw, order, 1)
        assert state(learners[0]) == state(learners[1]), (loss, name)


@pytest.mark.parametrize("rule", [("normalized", "none", "invariant"), ("normalized", "l1", "invariant"),
                                  ("normalized", "none", "gradient"), ("adagrad", "l1", "gradient"),
                                  ("adagrad", "elasticnet", "gradient")], ids="/".join)
def test_rows_in_lanes_on_prefetched_state_rows(rule):
    """A state over the prefetching's threshold (1 MB): the rows in lanes take their
    state rows from the slots the prefetching filled two steps before (`_state.lane_slot`),
    in file order and shuffled, over two calls whose rows differ at the same offsets (a
    slot left from the first call must not serve the second): the general path's bits."""
    schedule, penalty, step = rule
    rng = np.random.default_rng(5)
    d = 1 << 17
    calls = []
    for _ in range(2):
        X = sp.random(600, d, density=25 / d, format="csr", random_state=rng, data_rvs=lambda k: rng.uniform(-2, 2, k))
        calls.append((X, np.where(rng.random(600) < 0.5, 1.0, -1.0)))
    learners = [Learner(d, 1, "fobos", schedule, penalty, "log", alpha=1e-3, l1_ratio=0.5, eta0=0.5, delta=1.0,
                        step=step) for _ in range(2)]
    learners[1]._use_general_step()
    assert learners[0].fast_rows is not None and learners[1].fast_rows is None
    for learner in learners:
        for X, y in calls:
            for order in (None, np.random.default_rng(1).permutation(X.shape[0]).astype(np.int64)):
                learner.fit_rows(X.data, X.indices, X.indptr, y, None, order, 1)
    assert state(learners[0]) == state(learners[1])


@pytest.mark.parametrize("penalty", ["none", "l1"])
@pytest.mark.parametrize("step", ["gradient", "invariant"])
def test_normalized_rows_refused_after_a_rescale(penalty, step, sets):
    """A row refused for its gradient (a value of 1e200) after its first pass rescaled
    its features: the fast rows store its scales and weights as the general path's
    margins do (without a penalty their first pass leaves them to the step, which a
    refused row does not take: `_rows.keep_scales`), and stop at the same row."""
    X, y = sets["a9a"]
    X, y = X[:300].copy(), y[:300]
    X.data[X.indptr[200]:X.indptr[201]] = 1e200
    learners = [Learner(X.shape[1], 1, "fobos", "normalized", penalty, "log", alpha=1e-3, eta0=0.5, step=step)
                for _ in range(2)]
    learners[1]._use_general_step()
    for learner in learners:
        with pytest.raises(ValueError, match="200"):
            learner.fit_rows(X.data, X.indices, X.indptr, y, None, None, 1)
    assert state(learners[0])[0] == state(learners[1])[0]      # (the scalars count the refused row's ops apart)
    scales = np.frombuffer(memoryview(learners[0].saved_arrays()["state"][0]).cast("B"), dtype=np.float64)
    assert np.count_nonzero(scales == 1e200) == X.indptr[201] - X.indptr[200]


@pytest.mark.parametrize("penalty", ["l1", "l2", "elasticnet"])
@pytest.mark.parametrize("schedule", ["constant", "inv"])
def test_scalar_fobos_rows_refused_stamp_what_they_caught_up(penalty, schedule):
    """A row refused for its gradient (values of 1e250, the hinge loss's derivative -1)
    after the fast rows caught its features up: they are stamped with the cumulants as
    the general path's catch-up stamps them (the fast rows used to store the caught-up
    weights under their old stamps, which the next catch-up applied again: the model
    moved off the general path's after the refused call), and the calls that follow
    keep both models equal."""
    rng = np.random.default_rng(0)
    X = sp.random(300, 20, density=0.3, format="csr", random_state=rng, data_rvs=lambda k: rng.uniform(-2, 2, k))
    y = np.where(rng.random(300) < 0.5, 1.0, -1.0)
    big = X.copy()
    big.data[big.indptr[150]:big.indptr[151]] = 1e250
    learners = [Learner(20, 1, "fobos", schedule, penalty, "hinge", alpha=1e-2, l1_ratio=0.5, eta0=0.1)
                for _ in range(2)]
    learners[1]._use_general_step()
    assert learners[0].fast_rows == "fobos"
    for learner in learners:
        learner.fit_rows(X.data, X.indices, X.indptr, y, None, None, 1)
        with pytest.raises(ValueError, match="row 150: its gradient"):
            learner.fit_rows(big.data, big.indices, big.indptr, y, None, None, 1)
    assert state(learners[0])[0] == state(learners[1])[0]      # (the scalars count the refused row's ops apart)
    for learner in learners:
        learner.fit_rows(X.data, X.indices, X.indptr, y, None, None, 1)
    assert state(learners[0])[0] == state(learners[1])[0]
