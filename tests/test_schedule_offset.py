"""The scalar schedules' offset t0 (eta0 / sqrt(t + t0), eta0 / (t + t0)) and
scikit-learn's learning_rate="optimal" on it: the steps are scikit-learn's, a fit
equals the explicit schedule's bit for bit, model files keep them, and the kernel
refuses an offset it has no schedule for (the estimators' refusals are
test_sgd_parameters'). The lazy kernels equal the eager contract with t0 in
test_exactness, test_average, test_steps and test_exactness_groups, whose problems
draw it."""
import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import clone
from sklearn.linear_model import SGDClassifier, SGDRegressor
from sklearn.linear_model._sgd_fast import Hinge, ModifiedHuber, SquaredHinge

from fastprox import ProxClassifier, ProxRegressor, load_model, save_model
from fastprox._kernels import Learner

#: A stored value whose products with the steps are exact (a power of two) and whose
#: margins stay 0 to double precision: each step moves the weight by eta_t times the
#: loss's derivative at margin 0, a constant.
TINY = 2.0 ** -500

#: scikit-learn's derivative at label 1 and prediction p, of its own loss objects where
#: they have one in Python (its ``_sgd_fast``), else its formula (log_loss: expit(p) - 1,
#: squared_error: p - 1); and fastprox's derivative at margin 0, the probe's constant.
SKLEARN_SLOPES = {"hinge": lambda p: Hinge(1.0).py_dloss(p, 1.0),
                  "squared_hinge": lambda p: SquaredHinge(1.0).py_dloss(p, 1.0),
                  "modified_huber": lambda p: ModifiedHuber().py_dloss(p, 1.0),
                  "log_loss": lambda p: 1.0 / (1.0 + np.exp(-p)) - 1.0,
                  "squared_error": lambda p: p - 1.0}
AT_ZERO = {"hinge": -1.0, "squared_hinge": -2.0, "modified_huber": -2.0, "log_loss": -0.5, "squared_error": 1.0}


def sklearn_etas(alpha, loss, n):
    """scikit-learn's steps of learning_rate="optimal" (1.9's ``_plain_sgd``):
    eta_t = 1 / (alpha (optimal_init + t - 1)), t = 1 .. n, with typw = sqrt(1 /
    sqrt(alpha)), initial_eta0 = typw / max(1, dloss(-typw, label 1)) and optimal_init
    = 1 / (initial_eta0 alpha)."""
    typw = np.sqrt(1.0 / np.sqrt(alpha))
    initial_eta0 = typw / max(1.0, SKLEARN_SLOPES[loss](-typw))
    optimal_init = 1.0 / (initial_eta0 * alpha)
    return np.array([1.0 / (alpha * (optimal_init + t - 1)) for t in range(1, n + 1)])


@pytest.mark.parametrize("loss", list(SKLEARN_SLOPES))
@pytest.mark.parametrize("alpha", [1e-6, 1e-4, 1e-2, 4.0])
def test_optimal_steps_are_sklearns(loss, alpha):
    """Each step's eta_t, read off the weight one row at a time (the step moves it by
    eta_t times a constant, exactly), is scikit-learn's "optimal" step to rounding, for
    each loss; alpha 4 gives a t0 below 0 (optimal_init < 1)."""
    regression = loss == "squared_error"
    cls = ProxRegressor if regression else ProxClassifier
    est = cls(loss=loss, learning_rate="optimal", alpha=alpha, penalty=None, step="gradient", fit_intercept=False)
    row = sp.csr_matrix(np.array([[TINY]]))
    label = np.array([-1.0 if regression else 1.0])
    weights = [0.0]
    for _ in range(40):
        est.partial_fit(row, label, **({} if regression else dict(classes=[-1.0, 1.0])))
        weights.append(est.coef_[0, 0])
    etas = np.diff(weights) / (-AT_ZERO[loss] * TINY)
    np.testing.assert_allclose(etas, sklearn_etas(alpha, loss, 40), rtol=1e-12)
    assert est.schedule_ == "inv" and est.eta0_ == 1.0 / alpha
    assert est.t0_ == pytest.approx(1.0 / (np.sqrt(1.0 / np.sqrt(alpha)) * alpha) - 1.0, rel=1e-15)


def dense_problem(n=300, d=10, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    return X, (X @ rng.normal(size=d) + 0.5 * rng.normal(size=n) > 0).astype(int)


REGRESSION = ("squared_error", "huber", "epsilon_insensitive", "squared_epsilon_insensitive")


@pytest.mark.parametrize("loss", ["hinge", "log_loss", "modified_huber", "squared_hinge", *REGRESSION])
@pytest.mark.parametrize("alpha", [1e-4, 1e-2])
def test_optimal_fits_as_sgd(loss, alpha):
    """One pass in order without penalty (alpha sets the steps only) on dense rows
    (scikit-learn's intercept then takes its whole step) gives SGDClassifier's
    (SGDRegressor's) weights to rounding: the same steps, the gradient step. (The
    rows are small, and the squared losses fit no intercept, whose first steps of up to
    10 would diverge: there, in both libraries.)"""
    X, y = dense_problem()
    squared = loss.startswith("squared")
    sgd, cls = (SGDRegressor, ProxRegressor) if loss in REGRESSION else (SGDClassifier, ProxClassifier)
    params = dict(loss=loss, penalty=None, alpha=alpha, learning_rate="optimal", shuffle=False,
                  fit_intercept=not squared)
    sk = sgd(**params, max_iter=1, tol=None).fit(X / 30, y)
    ours = cls(**params, step="gradient").fit(X / 30, y)
    np.testing.assert_allclose(ours.coef_.ravel(), sk.coef_.ravel(), rtol=1e-8, atol=1e-12)
    np.testing.assert_allclose(ours.intercept_, sk.intercept_, rtol=1e-8, atol=1e-12)


@pytest.mark.parametrize("params", [dict(penalty="l2"), dict(penalty="l1", average=True),
                                    dict(penalty="elasticnet", batch_size=1, step=None)])
def test_optimal_is_inv_with_its_eta0_and_t0(params):
    """learning_rate="optimal" trains the model of schedule="inv" with eta0=1/alpha and
    its t0 bit for bit (two shuffled passes, the averaged iterate too), keeps the value
    given (get_params, clone, model files) and continues from a model file as it would
    have."""
    X, y = dense_problem(seed=1)
    a = ProxClassifier(learning_rate="optimal", alpha=1e-3, max_iter=2, random_state=0, **params).fit(X, y)
    b = ProxClassifier(schedule="inv", eta0=a.eta0_, t0=a.t0_, alpha=1e-3, max_iter=2, random_state=0,
                       **params).fit(X, y)
    assert a.t_ == b.t_ and a.t0_ > 0
    np.testing.assert_array_equal(a.coef_, b.coef_)
    np.testing.assert_array_equal(a.intercept_, b.intercept_)
    assert clone(a).get_params()["learning_rate"] == "optimal" and a.t0 == 0.0


def test_offset_model_files_round_trip_and_continue(tmp_path):
    """t0 in model files, optimal's below 0 (alpha > 1) too: loaded, the model continues as it would have."""
    X, y = dense_problem(seed=2)
    for est in (ProxClassifier(learning_rate="optimal", alpha=1e-3, penalty="l2"),
                ProxClassifier(learning_rate="optimal", alpha=4.0, penalty="l2"),
                ProxClassifier(schedule="invsqrt", t0=7.5, alpha=1e-3, penalty="l1", step="gradient")):
        est.fit(X[:200], y[:200])
        save_model(est, tmp_path / "m.npz")
        loaded = load_model(tmp_path / "m.npz")
        assert loaded.get_params() == est.get_params() and loaded.t0_ == est.t0_
        more = est.partial_fit(X[200:], y[200:]), loaded.partial_fit(X[200:], y[200:])
        np.testing.assert_array_equal(more[0].coef_, more[1].coef_)
        np.testing.assert_array_equal(more[0].intercept_, more[1].intercept_)


@pytest.mark.parametrize("schedule", ["invsqrt", "inv"])
def test_the_offset_shifts_the_steps(schedule):
    """t0 = k is the steps of t0 = 0 from step k + 1 on: a learner with t0 = 3 trains on
    rows 4.. as a learner of t0 = 0 that took three steps on empty rows (which move
    neither weights nor, without intercept and penalty, anything else) first."""
    rng = np.random.default_rng(3)
    X = sp.random(50, 8, density=0.4, format="csr", random_state=rng)
    y = rng.choice([-1.0, 1.0], 50)
    empty = sp.csr_matrix((3, 8))
    shifted = Learner(8, 1, "fobos", schedule, "none", "log", eta0=0.4, t0=3.0, fit_intercept=False)
    plain = Learner(8, 1, "fobos", schedule, "none", "log", eta0=0.4, fit_intercept=False)
    Z = sp.vstack([empty, X]).tocsr()
    yz = np.concatenate([np.ones(3), y])
    plain.fit_rows(Z.data, Z.indices, Z.indptr, yz, np.ones(53), np.arange(53, dtype=np.int64), 1)
    shifted.fit_rows(X.data, X.indices, X.indptr, y, np.ones(50), np.arange(50, dtype=np.int64), 1)
    np.testing.assert_array_equal(shifted.coef(), plain.coef())


def test_the_kernel_refuses_an_offset_it_has_no_schedule_for():
    with pytest.raises(ValueError, match="t0=-1.0 must be > -1"):
        Learner(3, 1, "fobos", "inv", "l1", "log", t0=-1.0)
    with pytest.raises(ValueError, match="schedule='adagrad' has none"):
        Learner(3, 1, "fobos", "adagrad", "l1", "log", t0=1.0)
