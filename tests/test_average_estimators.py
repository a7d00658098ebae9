"""`average` on ProxClassifier and ProxRegressor (scikit-learn's meaning): coef_,
intercept_ and the predictions read the averaged iterate, training continues from
the last one (partial_fit, warm_start, pickles and model files keep the sums), and
the rules without an exact lazy average, the defaults' among them, are refused
with the schedule to give."""
import pickle

import joblib
import numpy as np
import pytest
import scipy.sparse as sp

from fastprox import ProxClassifier, ProxRegressor, load_model, save_model
from tests.support.average_reference import AveragedReference
from tests.support.reference import assert_contract_close
from tests.support.shared import extra_module


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


@pytest.mark.parametrize("how", ["partial_fit", "pickle", "read-only memmap", "model file", "warm_start"])
def test_training_continues_from_the_last_iterate(tmp_path, how):
    """Two calls (partial_fit, through a pickle or a model file between them, or a
    warm-started fit) give one fit's averaged model, bit for bit. A pickle loaded by
    joblib with mmap_mode="r" (its arrays read-only maps of the file, as scikit-learn's
    check_estimators_pickle loads them) continues too: its averaged sums are read, not
    written (a ValueError, "buffer source array is read-only", before)."""
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
        elif how == "read-only memmap":
            joblib.dump(first, tmp_path / "model.joblib")
            first = joblib.load(tmp_path / "model.joblib", mmap_mode="r")
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


def test_the_defaults_average_and_other_rules_are_refused(tmp_path):
    """The defaults (normalized schedule, invariant step) keep the average; a rule that
    keeps none is refused naming the schedule the defaults chose and those that keep one."""
    X, y = data()
    clf = ProxClassifier(average=True, shuffle=False).fit(X, y)
    assert clf.schedule_ == "normalized" and clf.step_ == "invariant"
    assert not np.array_equal(clf.coef_, clf._learner.coef())
    save_model(ProxClassifier(average=True, shuffle=False).partial_fit(X[:150], y[:150], classes=[0, 1]),
               tmp_path / "model")
    continued = load_model(tmp_path / "model").partial_fit(X[150:], y[150:])
    assert np.array_equal(continued.coef_, clf.coef_)
    with pytest.raises(ValueError, match="update='rda'.*schedule=None chose 'adagrad'"):
        ProxClassifier(average=True, update="rda", penalty="l2").fit(X, y)


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


def test_the_sequence_tagger_reads_the_averaged_model(tmp_path):
    """SequenceTagger(average=...) under fobos: coef_, transitions_ and predict read the
    averaged iterate (the averaged perceptron's), the kernel keeps the last one;
    the defaults' rda is refused, naming the rules that keep an average."""
    from fastprox.structured import SequenceTagger
    from test_sequence_tagger import random_sequences
    X, y, lengths = random_sequences(np.random.default_rng(3), 30, 12, 3)
    tagger = SequenceTagger(loss="perceptron", update="fobos", average=True, random_state=0).fit(X, y, lengths)
    learner = tagger._learner
    assert np.array_equal(tagger.coef_, learner.coef_.T)
    assert not np.array_equal(tagger.coef_, learner._learner.coef().T)
    u = learner._learner.averaged_unpenalized()[3:]
    assert np.array_equal(tagger.transitions_.ravel(), u[:9])
    again = pickle.loads(pickle.dumps(tagger))
    assert np.array_equal(again.predict(X, lengths), tagger.predict(X, lengths))
    joblib.dump(tagger, tmp_path / "tagger.joblib")
    mapped = joblib.load(tmp_path / "tagger.joblib", mmap_mode="r")
    assert np.array_equal(mapped.predict(X, lengths), tagger.predict(X, lengths))
    with pytest.raises(ValueError, match="average has no exact lazy form under update='rda'"):
        SequenceTagger(average=True).fit(X, y, lengths)


def test_the_parallel_cluster_mode_refuses_average():
    """Workers' sums are not mixed: fastprox.dask.fit's parallel mode refuses average
    before it looks for a cluster."""
    extra_module("distributed")
    from fastprox.dask import fit
    with pytest.raises(ValueError, match="average is not mixed across workers"):
        fit(ProxClassifier(average=True), "no-such-file.svm")


def test_the_averaged_perceptron_refusal_names_the_one_change_that_keeps_it():
    """SequenceTagger(loss="perceptron", average=True), Collins' averaged perceptron as
    a CRFsuite user asks for it, meets the tagger's default rda + l2, which keeps no
    average: the refusal led with every rule that keeps one, and the user had to find
    the parameter to change. It now names the changes of one parameter that keep it,
    and each of them trains."""
    import re
    from fastprox.structured import SequenceTagger
    from test_sequence_tagger import random_sequences
    X, y, lengths = random_sequences(np.random.default_rng(3), 30, 12, 3)
    with pytest.raises(ValueError, match=re.escape(
            "one change keeps it: update='fobos' or penalty in ('none', 'l1'); the rules that keep it: ")):
        SequenceTagger(loss="perceptron", average=True).fit(X, y, lengths)
    for change in (dict(update="fobos"), dict(penalty="none"), dict(penalty="l1")):
        tagger = SequenceTagger(loss="perceptron", average=True, random_state=0, **change).fit(X, y, lengths)
        assert not np.array_equal(tagger.coef_, tagger._learner._learner.coef().T)
    with pytest.raises(ValueError, match=re.escape("penalty='berhu'; one change keeps it: penalty in ('none', "
                                                   "'l1', 'l2', 'elasticnet'); the rules")):
        ProxClassifier(average=True, penalty="berhu", schedule="invsqrt").fit(*data())
