"""`average` on ProxClassifier and ProxRegressor (scikit-learn's meaning): coef_,
intercept_ and the predictions read the averaged iterate, training continues from
the last one (partial_fit, warm_start, pickles and model files keep the sums), and
the rules without an exact lazy average, the defaults' among them, are refused
with the schedule to give."""
import pickle

import numpy as np
import pytest
import scipy.sparse as sp

from fastprox import ProxClassifier, ProxRegressor, load_model, save_model
from tests.support.average_reference import AveragedReference
from tests.support.reference import assert_contract_close


def data(n=300, d=20, seed=0):
    rng = np.random.default_rng(seed)
    return sp.random(n, d, density=0.2, format="csr", random_state=rng), rng.choice([0, 1], n)


PARAMS = dict(average=10, schedule="invsqrt", step="gradient", penalty="elasticnet", alpha=1e-3, eta0=0.3,
              shuffle=False)


def test_the_estimator_reads_the_averaged_iterate():
    """coef_ and intercept_ are the eager definition's average (two classes: +-1 targets),
    decision_function and predict read them, and the last iterate stays the kernel's."""
    X, y = data()
    clf = ProxClassifier(**PARAMS).fit(X, y)
    eager = AveragedReference(20, 1, "fobos", "invsqrt", "elasticnet", "log", alpha=1e-3, eta0=0.3,
                              average=10)
    eager.run(X.toarray(), np.where(y == 1, 1.0, -1.0), np.ones(300), np.arange(300), 1)
    assert_contract_close(clf.coef_, eager.averaged_coef())
    assert_contract_close(clf.intercept_, eager.averaged_intercept())
    assert_contract_close(clf._learner.coef(), eager.coef())
    assert np.allclose(clf.decision_function(X), X @ clf.coef_.ravel() + clf.intercept_)
    assert np.array_equal(clf.predict(X), np.where(clf.decision_function(X) > 0, 1, 0))
    assert not np.array_equal(clf.coef_, clf._learner.coef())


@pytest.mark.parametrize("how", ["partial_fit", "pickle", "model file", "warm_start"])
def test_training_continues_from_the_last_iterate(tmp_path, how):
    """Two calls (partial_fit, through a pickle or a model file between them, or a
    warm-started fit) give one fit's averaged model, bit for bit."""
    X, y = data()
    whole = ProxClassifier(**PARAMS).fit(X, y)
    if how == "warm_start":
        whole = ProxClassifier(**PARAMS, max_iter=2).fit(X, y)
        first = ProxClassifier(**PARAMS, warm_start=True).fit(X, y)
        second = first.fit(X, y)
    else:
        first = ProxClassifier(**PARAMS).partial_fit(X[:100], y[:100], classes=[0, 1])
        if how == "pickle":
            first = pickle.loads(pickle.dumps(first))
        elif how == "model file":
            save_model(first, tmp_path / "model")
            first = load_model(tmp_path / "model")
        second = first.partial_fit(X[100:], y[100:])
    assert np.array_equal(second.coef_, whole.coef_)
    assert np.array_equal(second.intercept_, whole.intercept_)


@pytest.mark.parametrize("schedule", ["adagrad", "constant"])
def test_regressor_and_one_vs_rest(schedule):
    """The regressor and a 3-class one-vs-rest classifier average too (AdaGrad, a scalar step)."""
    X, _ = data(seed=1)
    rng = np.random.default_rng(1)
    reg = ProxRegressor(average=True, schedule=schedule, penalty="l1", alpha=1e-3).fit(X, rng.normal(size=300))
    assert reg.coef_.shape == (1, 20) and np.all(np.isfinite(reg.coef_))
    clf = ProxClassifier(average=True, schedule=schedule, penalty="l2", alpha=1e-3).fit(X, rng.integers(0, 3, 300))
    assert clf.coef_.shape == (3, 20)
    assert not np.array_equal(clf.coef_, clf._learner.coef())


def test_the_defaults_name_the_schedule_to_give():
    """The defaults' normalized schedule keeps no lazy average: the error says which to give."""
    X, y = data()
    with pytest.raises(ValueError, match="schedule=None chose 'normalized'.*schedule='adagrad'"):
        ProxClassifier(average=True).fit(X, y)


@pytest.mark.parametrize("value", [-1, 1.5, "yes"])
def test_bad_average_is_refused(value):
    X, y = data()
    with pytest.raises(ValueError, match="average=.* must be True, False or an integer >= 0"):
        ProxClassifier(average=value, schedule="adagrad").fit(X, y)


def test_average_changed_after_the_fit_is_refused():
    """set_params(average=...) after training would misdescribe the kernel: refused."""
    X, y = data()
    clf = ProxClassifier(**PARAMS).fit(X, y)
    clf.set_params(average=False)
    with pytest.raises(ValueError, match="average"):
        clf.partial_fit(X, y)
