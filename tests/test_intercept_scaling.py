"""intercept_scaling (docs/contract.md, "Model, margins, gradients"): the intercept is
the weight w0 of a constant feature of value s, and intercept_ is s w0. Without a
penalty every rule then trains the model that fit_intercept=False trains on X with a
constant column s appended (the intercept is an unpenalized coordinate under every
rule); scikit-learn's sparse SGDClassifier, which decays its intercept updates by
0.01, is s = 0.1 under its "optimal" schedule; the value is checked, saved, pickled,
given on the command line and refused by the structured estimators. The eager
reference's s (tests/support/reference.py) is drawn by the property tests of
test_exactness, test_exactness_groups, test_average and test_steps."""
import pickle

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import clone
from sklearn.linear_model import SGDClassifier

from fastprox import ProxClassifier, ProxRegressor, dump_libsvm
from fastprox._registry import RULES
from fastprox._sklearn_names import EQUIVALENTS, STRUCTURED_EQUIVALENTS, UnknownParameter
from fastprox._kernels import Learner
from fastprox.cli import main
from fastprox.model_io import load_model, save_model
from fastprox.structured import DependencyParser, SequenceTagger, StructuredLearner
from test_cli_one_pass import same_model
from test_fast_paths import fast_rules, state

SCALES = [0.1, 2.5]
#: The rules without a penalty, and whether they keep the averaged iterate.
UNPENALIZED = {(r.update, r.schedule): r.average for r in RULES if r.penalty == "none"}


def problem(n=120, d=12, seed=0, classes=2):
    """Sparse rows (values in [-2, 2]) and labels: +-1, or class indices 0..classes-1."""
    rng = np.random.default_rng(seed)
    X = sp.random(n, d, density=0.3, format="csr", random_state=rng, data_rvs=lambda k: rng.uniform(-2, 2, k))
    scores = X @ rng.normal(size=(d, classes)) + rng.normal(size=classes)
    y = np.where(scores[:, 0] > 0, 1, -1) if classes == 2 else np.argmax(scores, axis=1)
    return X, y


def with_column(X, s):
    """X with a last column of the constant s."""
    return sp.hstack([X, sp.csr_matrix(np.full((X.shape[0], 1), s))], format="csr")


def cases():
    """(rule, model kind, parameters) of every supported kind of flat model without a
    penalty: binary, averaged, invariant (fobos), one-vs-rest in batches, multinomial,
    regression."""
    for (update, schedule), average in UNPENALIZED.items():
        rule = dict(update=update, schedule=schedule)
        single = schedule == "normalized"       # one row per step, no multinomial model
        yield rule, "binary", dict(step="gradient")
        if average:
            yield rule, "binary", dict(step="gradient", average=True)
        if update == "fobos":
            yield rule, "binary", dict(step="invariant")
        yield rule, "ovr", dict(step="gradient", batch_size=1 if single else 3)
        if not single:
            yield rule, "multinomial", dict(step="gradient", multi_class="multinomial")
        yield rule, "regression", dict(step="gradient", loss="huber")


CASES = list(cases())


@pytest.mark.parametrize("s", SCALES)
@pytest.mark.parametrize("rule, kind, params", CASES,
                         ids=[f"{r['update']}-{r['schedule']}-{k}-{'-'.join(map(str, p.values()))}"
                              for r, k, p in CASES])
def test_a_constant_column_of_s(rule, kind, params, s):
    """Without a penalty, intercept_scaling=s trains the model of fit_intercept=False on
    X with a constant column s: coef_ equal to rounding, intercept_ = s times that
    column's weight, the averaged iterate's too."""
    X, y = problem(classes=2 if kind in ("binary", "regression") else 3)
    cls = ProxRegressor if kind == "regression" else ProxClassifier
    if kind == "regression":
        y = X @ np.linspace(-1, 1, X.shape[1]) + 0.5
    common = dict(rule, penalty=None, eta0=0.2, delta=0.1, shuffle=False, max_iter=2, random_state=0, **params)
    scaled = cls(intercept_scaling=s, **common).fit(X, y)
    column = cls(fit_intercept=False, **common).fit(with_column(X, s), y)
    np.testing.assert_allclose(scaled.coef_, column.coef_[:, :-1], rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(scaled.intercept_, s * column.coef_[:, -1], rtol=1e-9, atol=1e-12)
    assert np.all(scaled.intercept_ != 0)


@pytest.mark.parametrize("s", SCALES)
def test_auto_steps_count_the_constant_feature(s):
    """eta0="auto" under AdaGrad counts the constant feature's s^2 in the rows' mean
    squared norm, as it counts a constant column's."""
    X, y = problem()
    scaled = ProxClassifier(schedule="adagrad", delta=0.5, intercept_scaling=s).fit(X, y)
    column = ProxClassifier(schedule="adagrad", delta=0.5, fit_intercept=False).fit(with_column(X, s), y)
    assert scaled.eta0_ == pytest.approx(column.eta0_, rel=1e-14)


@pytest.mark.parametrize("loss", ["hinge", "log_loss", "modified_huber"])
@pytest.mark.parametrize("average", [False, True])
def test_sparse_sgd_classifier_is_a_tenth(loss, average):
    """scikit-learn's SGDClassifier multiplies its intercept updates by 0.01 on sparse X
    (SPARSE_INTERCEPT_DECAY): one pass in order of its "optimal" rate without penalty
    (alpha sets the steps) is intercept_scaling=0.1's model to rounding, the averaged one
    too; with the default 1 the intercepts differ."""
    rng = np.random.default_rng(0)
    X = sp.random(300, 10, density=0.3, format="csr", random_state=1, data_rvs=lambda k: rng.uniform(-1, 1, k))
    y = (X @ rng.normal(size=10) + 0.3 * rng.normal(size=300) > 0.2).astype(int)
    params = dict(loss=loss, penalty=None, alpha=1e-3, learning_rate="optimal", shuffle=False, average=average)
    sk = SGDClassifier(**params, max_iter=1, tol=None).fit(X, y)
    ours = ProxClassifier(**params, step="gradient", intercept_scaling=0.1).fit(X, y)
    np.testing.assert_allclose(ours.coef_, sk.coef_, rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(ours.intercept_, sk.intercept_, rtol=1e-8, atol=1e-10)
    plain = ProxClassifier(**params, step="gradient").fit(X, y)
    assert abs(plain.intercept_[0] - sk.intercept_[0]) > 0.1


@pytest.mark.parametrize("params", [dict(learning_rate="optimal", alpha=1e-3, penalty="l2", average=True),
                                    dict(update="ftrl", penalty="l1", alpha=1e-3),
                                    dict()])        # (the defaults: normalized, invariant step)
def test_files_and_pickles_continue_mid_stream(tmp_path, params):
    """A model of intercept_scaling=0.1 saved or pickled after one call continues as it
    would have, bit for bit, and keeps the parameter (get_params, clone)."""
    X, y = problem(n=200)
    est = ProxClassifier(intercept_scaling=0.1, **params).partial_fit(X[:100], y[:100], classes=[-1, 1])
    save_model(est, tmp_path / "m.npz")
    copies = [load_model(tmp_path / "m.npz"), pickle.loads(pickle.dumps(est))]
    est.partial_fit(X[100:], y[100:])
    for copy in copies:
        assert copy.get_params() == est.get_params() and clone(copy).intercept_scaling == 0.1
        assert copy._learner.intercept_scaling == 0.1
        copy.partial_fit(X[100:], y[100:])
        np.testing.assert_array_equal(copy.coef_, est.coef_)
        np.testing.assert_array_equal(copy.intercept_, est.intercept_)


def test_a_file_without_it_loads_as_one(tmp_path):
    """A file of format version 10 (no intercept_scaling) loads as the model of
    intercept_scaling=1, which trains on as the model saved; a file's value is checked."""
    from test_model_io import edited, refused, same_state
    X, y = problem(n=200)
    path = tmp_path / "m.npz"
    save_model(ProxClassifier(penalty="l2", alpha=1e-4).fit(X[:100], y[:100]), path)

    def as_version_10(h):
        h["version"] = 10
        del h["params"]["intercept_scaling"], h["learner"]["intercept_scaling"]

    before, after = load_model(path), load_model(edited(path, tmp_path / "v10.npz", as_version_10))
    same_state(before, after)
    assert after.intercept_scaling == after._learner.intercept_scaling == 1.0
    same_state(before.partial_fit(X[100:], y[100:]), after.partial_fit(X[100:], y[100:]))
    refused(edited(path, tmp_path / "a.npz", lambda h: h["learner"].pop("intercept_scaling")),
            "learner entry lacks ['intercept_scaling']")
    refused(edited(path, tmp_path / "b.npz", lambda h: h["learner"].update(intercept_scaling=0.0)),
            "intercept_scaling=0.0 is the value of the intercept's constant feature")
    refused(edited(path, tmp_path / "c.npz", lambda h: h["learner"].update(intercept_scaling=0.5)),
            "params.intercept_scaling=1.0 but the kernel was fitted with intercept_scaling=0.5")


@pytest.mark.parametrize("value", [0, 0.0, -1.0, float("nan"), float("inf"), "0.1", True, None])
def test_bad_values_are_refused(value):
    """Not a finite number > 0: a ValueError naming the parameter and the fix, from fit."""
    X, y = problem()
    with pytest.raises(ValueError, match=r"intercept_scaling=.* must be a finite number > 0: use 1.0"):
        ProxClassifier(intercept_scaling=value).fit(X, y)


@pytest.mark.parametrize("cls, args", [(SequenceTagger, {}), (DependencyParser, {}),
                                       (StructuredLearner, {"n_features": 3, "n_outputs": 2})])
def test_structured_estimators_refuse_it(cls, args):
    """The structured estimators' intercepts are unscaled: intercept_scaling is refused
    as an unknown parameter naming why; intercept_decay, which no scikit-learn estimator
    takes, is named by the flat estimators too."""
    with pytest.raises(UnknownParameter, match="nothing to set"):
        cls(intercept_scaling=0.1, **args)
    assert "intercept_scaling" in STRUCTURED_EQUIVALENTS
    with pytest.raises(UnknownParameter, match="intercept_scaling=0.1"):
        ProxClassifier(intercept_decay=0.01)
    assert "SPARSE_INTERCEPT_DECAY" in EQUIVALENTS["intercept_decay"]


def test_the_command_line_takes_it(tmp_path):
    """--intercept-scaling trains the estimator's model (saved with it, checked by
    train -i; test_cli's MISTAKES: a bad value, test_readable_options: the options line)."""
    X, y = problem(n=300)
    dump_libsvm(X, y, tmp_path / "train.svm")
    model = tmp_path / "m.npz"
    options = ["--intercept-scaling", "0.1", "--schedule", "inv", "--step", "gradient", "--penalty", "l2",
               "--alpha", "1e-4"]
    assert main(["train", str(tmp_path / "train.svm"), "--model", str(model), "--quiet", *options]) == 0
    saved = same_model(model, ProxClassifier(shuffle=False, schedule="inv", step="gradient", penalty="l2",
                                             alpha=1e-4, intercept_scaling=0.1).fit(X, y))
    assert saved.intercept_scaling == 0.1
    assert main(["train", "-i", str(model), str(tmp_path / "train.svm"), "--quiet",
                 "--intercept-scaling", "2"]) == 2


FAST = [(update, schedule, penalty, fast, step) for update, schedule, penalty, fast in fast_rules()
        for step in (("gradient", "invariant") if update == "fobos" else ("gradient",))]


@pytest.mark.parametrize("rule", FAST, ids=["/".join(r[:3] + r[4:]) for r in FAST])
def test_fast_rows_keep_the_general_paths_bits(rule):
    """With intercept_scaling=0.1 (average or not) every hand-fused row kernel still
    computes the general step's bits (test_fast_paths at s = 1): the same margin term,
    the same scaled gradient and steps of the intercept."""
    update, schedule, penalty, fast, step = rule
    rng = np.random.default_rng(0)
    X = sp.random(800, 60, density=0.05, format="csr", random_state=rng, data_rvs=lambda k: rng.uniform(-2, 2, k))
    y = np.where(X @ rng.normal(size=60) + 0.4 > 0, 1.0, -1.0)
    K = 3 if fast == "rows" else 1
    target = (np.abs(y) + (y > 0)).astype(np.float64) if K > 1 else y
    for average in (0, 5):
        kw = dict(alpha=1e-3, eta0=0.05 if schedule != "adagrad" else 0.3, delta=1.0, ovr=K > 1, step=step,
                  intercept_scaling=0.1, average=average)
        try:
            learners = [Learner(X.shape[1], K, update, schedule, penalty, "log", **kw) for _ in range(2)]
        except ValueError as e:         # no averaged iterate under this rule
            assert average and "average has no exact lazy form" in str(e)
            continue
        learners[1]._use_general_step()
        for learner in learners:
            learner.fit_rows(X.data, X.indices, X.indptr, target, None, None, 1)
        assert state(learners[0]) == state(learners[1])
