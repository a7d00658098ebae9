"""eta0="auto" and delta="auto" (the defaults): AdaGrad's steps set by the scale
of the first rows a model trains on, computed here the slow way, and what that
buys: scaling the features by k scales the weights by 1/k, bit for bit."""
import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import assume, given, settings, HealthCheck, strategies as st
from sklearn.exceptions import NotFittedError

from fastprox import ProxClassifier, ProxRegressor
from fastprox._core import AUTO_ROWS, step_sizes


def expected_steps(X, fit_intercept=True, schedule="adagrad"):
    """eta0 and delta from the definition, over the first AUTO_ROWS rows of X (the
    schedules other than AdaGrad: 0.5 and the unused 1e-8)."""
    if schedule != "adagrad":
        return 0.5, 1e-8
    head = X[:AUTO_ROWS]
    squares = float(np.sum(head.data.astype(np.float64) ** 2))
    norm2 = fit_intercept + squares / head.shape[0]
    return 1.0 / np.sqrt(norm2), np.sqrt(squares / head.nnz) if squares > 0 else 1.0


def stream(n=300, d=40, scale=3.0, seed=0):
    rng = np.random.default_rng(seed)
    X = sp.random(n, d, density=0.2, format="csr", random_state=rng,
                  data_rvs=lambda k: rng.uniform(-scale, scale, k))
    return X, np.where(X @ rng.normal(size=d) > 0, 1, -1)


@pytest.mark.parametrize("fit_intercept", [True, False])
@pytest.mark.parametrize("schedule", ["adagrad", "invsqrt"])
def test_auto_is_the_first_rows_scale_and_the_model_for_those_numbers(fit_intercept, schedule):
    X, y = stream()
    auto = ProxClassifier(schedule=schedule, fit_intercept=fit_intercept, shuffle=False).fit(X, y)
    eta0, delta = expected_steps(X, fit_intercept, schedule)
    assert auto.eta0_ == pytest.approx(eta0, rel=1e-12) and auto.delta_ == pytest.approx(delta, rel=1e-12)
    assert auto.get_params()["eta0"] == "auto"      # the parameter stays what the user set
    given_numbers = ProxClassifier(schedule=schedule, fit_intercept=fit_intercept, shuffle=False,
                                   eta0=auto.eta0_, delta=auto.delta_).fit(X, y)
    np.testing.assert_array_equal(auto.coef_, given_numbers.coef_)
    np.testing.assert_array_equal(auto.intercept_, given_numbers.intercept_)


def test_numbers_given_are_kept_and_each_auto_is_separate():
    X, y = stream()
    eta0, delta = expected_steps(X)
    assert ProxClassifier(schedule="adagrad", eta0=0.3, delta=0.2).fit(X, y).eta0_ == 0.3
    one = ProxClassifier(schedule="adagrad", eta0=0.3).fit(X, y)
    assert (one.eta0_, one.delta_) == (0.3, pytest.approx(delta, rel=1e-12))
    other = ProxRegressor(schedule="adagrad", delta=0.2).fit(X, y.astype(float))
    assert (other.eta0_, other.delta_) == (pytest.approx(eta0, rel=1e-12), 0.2)


def test_only_the_first_rows_count_and_later_calls_keep_the_steps():
    """Rows beyond the first AUTO_ROWS, and later partial_fit calls, do not change the steps."""
    rng = np.random.default_rng(1)
    n = AUTO_ROWS + 500
    X = sp.random(n, 50, density=0.05, format="csr", random_state=rng, data_rvs=lambda k: rng.uniform(0, 2, k))
    y = rng.choice([-1, 1], n)
    loud = sp.vstack([X[:AUTO_ROWS], X[AUTO_ROWS:] * 100.0], format="csr")
    whole = ProxClassifier(schedule="adagrad").fit(loud, y)
    head = ProxClassifier(schedule="adagrad").fit(X[:AUTO_ROWS], y[:AUTO_ROWS])
    assert (whole.eta0_, whole.delta_) == (head.eta0_, head.delta_) == pytest.approx(expected_steps(X))
    inc = ProxClassifier(schedule="adagrad").partial_fit(X[:100], y[:100], classes=[-1, 1])
    steps = (inc.eta0_, inc.delta_)
    assert steps == pytest.approx(expected_steps(X[:100]), rel=1e-12)
    inc.partial_fit(X[100:200] * 50.0, y[100:200])
    assert (inc.eta0_, inc.delta_) == steps


def test_float32_and_int64_input_choose_the_same_steps():
    X, y = stream(scale=1.7)
    wide = sp.csr_matrix((X.data, X.indices.astype(np.int64), X.indptr.astype(np.int64)), shape=X.shape)
    single = X.astype(np.float32)
    exact = sp.csr_matrix(single, dtype=np.float64)     # the float32 values, held in float64
    fitted = (ProxClassifier(schedule="adagrad").fit(Z, y) for Z in (single, exact, wide, X))
    steps = [(m.eta0_, m.delta_) for m in fitted]
    assert steps[0] == steps[1]
    assert steps[2] == steps[3]


def test_pieces_of_float32_and_float64_choose_the_steps_of_their_values():
    """A first call's rows in pieces of both types (a Dask collection's blocks, read
    by `fastprox.dask`'s start): the steps of the same values held in float64 (their
    raw bytes joined read float64 values as pairs of float32: NaN, a ValueError)."""
    X, _ = stream(scale=1.7)
    single, double = X[:150].astype(np.float32), X[150:]
    exact = sp.csr_matrix(single, dtype=np.float64)
    params = dict(eta0="auto", delta="auto", fit_intercept=True, intercept_scaling=1.0)
    for pieces, held in (([single, double], [exact, double]), ([double, single], [double, exact])):
        assert step_sizes(params, "adagrad", pieces) == step_sizes(params, "adagrad", held)
        assert step_sizes(params, "adagrad", pieces) == pytest.approx(expected_steps(sp.vstack(held)), rel=1e-12)


def test_rows_without_values_give_unit_scale():
    X = sp.csr_matrix((4, 5))
    clf = ProxClassifier(schedule="adagrad", fit_intercept=False).fit(X, [0, 1, 0, 1])
    assert (clf.eta0_, clf.delta_) == (1.0, 1.0)
    zeros = sp.csr_matrix((np.zeros(3), [0, 1, 2], [0, 1, 2, 3]), shape=(3, 4))
    clf = ProxClassifier(schedule="adagrad").fit(zeros, [0, 1, 0])
    assert (clf.eta0_, clf.delta_) == (1.0, 1.0) and np.isfinite(clf.coef_).all()


def test_bad_values_and_reading_before_fit():
    X, y = stream()
    for bad in ("fast", "AUTO", None, [0.5], 0.0, -1.0, float("nan")):
        with pytest.raises(ValueError, match="eta0"):
            ProxClassifier(eta0=bad).fit(X, y)
    for bad in ("fast", -1.0, float("inf")):
        with pytest.raises(ValueError, match="delta"):
            ProxClassifier(delta=bad).fit(X, y)
    with pytest.raises(ValueError, match='"auto" or a finite number'):
        ProxClassifier(eta0="fast").fit(X, y)
    with pytest.raises(NotFittedError):
        ProxClassifier().eta0_


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rule=st.sampled_from([("fobos", "adagrad"), ("rda", "adagrad"), ("ftrl", "adagrad")]),
       power=st.integers(-6, 6), seed=st.integers(0, 2**32 - 1), batch=st.sampled_from([1, 3]),
       regression=st.booleans())
def test_scaling_the_features_by_k_scales_the_weights_by_1_over_k(rule, power, seed, batch, regression):
    """What "auto" is for: with k a power of two every step of the contract is the
    same computation in scaled numbers, so the margins are equal bit for bit (no
    intercept, whose feature is not scaled, and no penalty, whose weight is not)."""
    rng = np.random.default_rng(seed)
    n, d = int(rng.integers(2, 60)), int(rng.integers(1, 30))
    X = sp.random(n, d, density=float(rng.choice([0.1, 0.5, 1.0])), format="csr", random_state=rng,
                  data_rvs=lambda k: rng.uniform(-3, 3, k))
    assume(X.nnz > 0)       # no values, no scale: "auto" then gives eta0 = delta = 1 whatever k
    y = rng.normal(size=n) if regression else np.r_[-1, 1, rng.choice([-1, 1], n - 2)]
    k = 2.0 ** power
    cls = ProxRegressor if regression else ProxClassifier
    params = dict(update=rule[0], schedule=rule[1], penalty="none", fit_intercept=False,
                  batch_size=batch, max_iter=2, random_state=0)
    plain, scaled = cls(**params).fit(X, y), cls(**params).fit(X * k, y)
    assert (scaled.eta0_, scaled.delta_) == (plain.eta0_ / k, plain.delta_ * k)
    np.testing.assert_array_equal(scaled.coef_ * k, plain.coef_)
    np.testing.assert_array_equal(scaled.decision_function(X * k) if not regression else scaled.predict(X * k),
                                  plain.decision_function(X) if not regression else plain.predict(X))
