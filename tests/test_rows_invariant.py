"""AdaGrad's row kernel with the importance-invariant step (`_kernel/steps/rows_invariant.pxd`,
the defaults' rule under penalty l2 or elastic net) computes the general path's bits: a
learner on it and one forced through the general `step` (`Learner._use_general_step`)
end with the same state, byte for byte, the averaged sums included: every separable
penalty, every loss the invariant step takes, several passes, sample weights, empty
rows, averaging off and from several steps, float32 values and int64 indices
(hypothesis); and penalty="l2" takes it by default."""
import numpy as np
import pytest
from hypothesis import given, settings, HealthCheck, strategies as st

from fastprox import ProxClassifier
from fastprox._kernels import Learner
from fastprox._registry import LOSSES, penalties_of
from test_average_rows import rows, fit, state

PENALTIES = penalties_of("separable")
INVARIANT_LOSSES = sorted(name for name in LOSSES if LOSSES[name].invariant)


def pair(d, penalty, loss, average, alpha):
    """A learner on the invariant AdaGrad rows and one on the general step, built alike."""
    learners = [Learner(d, 1, "fobos", "adagrad", penalty, loss, alpha=alpha, l1_ratio=0.5, eta0=0.3, delta=1.0,
                        average=average, step="invariant") for _ in range(2)]
    learners[1]._use_general_step()
    assert learners[0].fast_rows == "adagrad" and learners[1].fast_rows is None
    return learners


def test_the_defaults_under_l2_take_the_invariant_adagrad_rows():
    est = ProxClassifier(penalty="l2", alpha=1e-4)
    X, y, _ = rows(50, 10, 0.3, 0)
    est.fit(X, y)
    assert est._learner.fast_rows == "adagrad"


@pytest.mark.parametrize("penalty", PENALTIES)
@pytest.mark.parametrize("weighted", [False, True])
def test_invariant_adagrad_rows_compute_the_general_paths_bits(penalty, weighted):
    X, y, sw = rows(1500, 300, 0.03, 0)
    for loss in INVARIANT_LOSSES:
        for average in (0, 1, 700):
            learners = pair(X.shape[1], penalty, loss, average, 1e-3)
            orders = (None, np.random.default_rng(1).permutation(X.shape[0]).astype(np.int64), None)
            refusals = [[fit(learner, X, y, sw if weighted else None, order) for order in orders]
                        for learner in learners]
            assert refusals[0] == refusals[1]
            assert state(learners[0]) == state(learners[1]), (loss, average)


@pytest.mark.parametrize("penalty", PENALTIES)
@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**31), n=st.integers(1, 120), d=st.integers(1, 30),
       density=st.floats(0.0, 0.6), average=st.sampled_from([0, 1, 5, 60]), passes=st.integers(1, 3),
       weighted=st.booleans(), loss=st.sampled_from(INVARIANT_LOSSES),
       alpha=st.sampled_from([0.0, 1e-3, 0.05]), dtype=st.sampled_from([np.float64, np.float32]),
       itype=st.sampled_from([np.int32, np.int64]))
def test_invariant_adagrad_rows_bits_hypothesis(penalty, seed, n, d, density, average, passes, weighted, loss,
                                                alpha, dtype, itype):
    X, y, sw = rows(n, d, density, seed, empty=0.2)
    X.data, X.indices, X.indptr = X.data.astype(dtype), X.indices.astype(itype), X.indptr.astype(itype)
    learners = pair(d, penalty, loss, average, alpha)
    orders = [np.random.default_rng(seed + p).permutation(n).astype(np.int64) for p in range(passes)]
    refusals = [[fit(learner, X, y, sw if weighted else None, order) for order in orders] for learner in learners]
    assert refusals[0] == refusals[1]
    assert state(learners[0]) == state(learners[1])
