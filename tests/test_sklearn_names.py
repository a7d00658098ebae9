"""Code written for scikit-learn's SGDClassifier / SGDRegressor runs: its loss and
penalty spellings, class_weight, verbose and n_iter_."""
import re

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV
from sklearn.utils.estimator_checks import check_estimator

from fastprox import ProxClassifier, ProxRegressor, dump_libsvm, load_libsvm
from fastprox.cli import main
from fastprox.model_io import load_model, save_model
from test_cli import a9a  # noqa: F401  (the shared data fixture)
from test_estimators import ORDER_DEPENDENT


def imbalanced(n=600, d=80, classes=2, seed=0):
    """Sparse rows whose labels are mostly class 0 (about 80%), from a sparse linear model."""
    rng = np.random.default_rng(seed)
    X = sp.random(n, d, density=0.1, format="csr", random_state=rng)
    scores = X @ rng.normal(size=(d, classes)) + rng.normal(scale=0.3, size=(n, classes))
    scores[:, 0] += np.quantile(scores[:, 0], 0.8) - np.quantile(scores[:, 0], 0.2)
    if classes > 2:
        return X, np.argmax(scores, axis=1)
    return X, (scores[:, 1] > np.quantile(scores[:, 1], 0.8)).astype(int)


def targets(cls, classes=2):
    """(X, y): imbalanced labels for a classifier, a noisy linear target for a regressor."""
    X, y = imbalanced(classes=classes)
    if cls is ProxRegressor:
        y = np.asarray(X.sum(axis=1)).ravel() + 0.1 * y
    return X, y


def assert_same_model(a, b):
    """Bit for bit: weights, intercepts, step count, progressive loss."""
    assert a.t_ == b.t_
    np.testing.assert_array_equal(a.coef_, b.coef_)
    np.testing.assert_array_equal(a.intercept_, b.intercept_)
    assert a.progressive_loss_ == b.progressive_loss_


# --- loss and penalty spellings -------------------------------------------------

ALIASES = [  # (estimator, scikit-learn's spelling, the kernel's name, classes)
    (ProxClassifier, dict(loss="log_loss"), dict(loss="log"), 2),
    (ProxClassifier, dict(penalty=None), dict(penalty="none"), 2),
    (ProxClassifier, dict(loss="log_loss", penalty=None, update="ftrl"),
     dict(loss="log", penalty="none", update="ftrl"), 3),
    (ProxClassifier, dict(loss="log_loss", multi_class="multinomial", update="rda", schedule="invsqrt"),
     dict(loss="log", multi_class="multinomial", update="rda", schedule="invsqrt"), 3),
    (ProxRegressor, dict(loss="squared_error"), dict(loss="squared"), 2),
    (ProxRegressor, dict(loss="squared_error", penalty=None, update="rda"),
     dict(loss="squared", penalty="none", update="rda"), 2),
]


def alias_id(value):
    """Test ids: the parameters, k=v joined by '-'."""
    return "-".join(f"{k}={v}" for k, v in value.items()) if isinstance(value, dict) else None


@pytest.mark.parametrize("cls, spelled, name, classes", ALIASES, ids=alias_id)
def test_sklearn_spellings_train_the_same_model(cls, spelled, name, classes):
    """loss="log_loss"/"squared_error" and penalty=None give the models of "log"/"squared"
    and "none" bit for bit, over two passes; get_params and clone keep what was given."""
    X, y = targets(cls, classes)
    a = cls(**spelled, max_iter=2, random_state=0).fit(X, y)
    b = cls(**name, max_iter=2, random_state=0).fit(X, y)
    assert_same_model(a, b)
    for key, given in spelled.items():
        assert a.get_params()[key] == given and clone(a).get_params()[key] == given
    if cls is ProxClassifier:
        np.testing.assert_array_equal(a.predict_proba(X), b.predict_proba(X))


def test_spellings_continue_partial_fit_and_round_trip_model_files(tmp_path):
    """A model file keeps the parameters as given (class_weight dict's keys too)
    and continues partial_fit exactly; `fastprox predict --proba` reads it."""
    X, y = imbalanced()
    params = dict(loss="log_loss", penalty=None, class_weight={0: 1, np.int64(1): 5.0},
                  eta0=0.3, delta=1.0)
    est = ProxClassifier(**params).partial_fit(X[:300], y[:300], classes=[0, 1])
    save_model(est, tmp_path / "m.npz")
    loaded = load_model(tmp_path / "m.npz")
    assert loaded.get_params() == est.get_params()
    assert_same_model(loaded.partial_fit(X[300:], y[300:]), est.partial_fit(X[300:], y[300:]))
    dump_libsvm(X, y, tmp_path / "x.svm")
    assert main(["predict", str(tmp_path / "m.npz"), str(tmp_path / "x.svm"), "--proba",
                 "--out", str(tmp_path / "p.txt")]) == 0
    proba = load_model(tmp_path / "m.npz").predict_proba(X)
    np.testing.assert_array_equal(np.loadtxt(tmp_path / "p.txt", skiprows=1)[:, 1:], proba)


def test_unknown_spellings_are_refused_with_the_accepted_ones():
    X, y = targets(ProxRegressor)
    with pytest.raises(ValueError, match="loss='log_loss' is not supported.*'squared_error'"):
        ProxRegressor(loss="log_loss").fit(X, y)
    with pytest.raises(ValueError, match="penalty='None' is not supported.*None"):
        ProxRegressor(penalty="None").fit(X, y)


@pytest.mark.parametrize("est", [
    ProxClassifier(loss="log_loss", penalty=None),
    ProxRegressor(loss="squared_error", penalty=None),
], ids=["classifier-sklearn-names", "regressor-sklearn-names"])
def test_check_estimator_with_sklearn_names(est):
    """scikit-learn's checks pass with its spellings (the same two expected failures).
    (class_weight="balanced" fails the checks that call partial_fit, which refuses it,
    as SGDClassifier's does.)"""
    results = check_estimator(est, expected_failed_checks=ORDER_DEPENDENT, on_fail=None)
    assert not [(r["check_name"], str(r["exception"])[:300]) for r in results if r["status"] == "failed"]


# --- class_weight ---------------------------------------------------------------

@pytest.mark.parametrize("classes", [2, 3])
@pytest.mark.parametrize("with_sample_weight", [False, True])
def test_balanced_equals_its_sample_weights(classes, with_sample_weight):
    """class_weight="balanced" trains the model of sample_weight = n / (K * count of the
    row's class) [times the sample weight given], bit for bit, over shuffled passes."""
    X, y = imbalanced(classes=classes)
    sample_weight = np.random.default_rng(1).uniform(0.5, 2, len(y)) if with_sample_weight else None
    per_class = len(y) / (classes * np.bincount(y))
    explicit = per_class[y] if sample_weight is None else sample_weight * per_class[y]
    a = ProxClassifier(class_weight="balanced", max_iter=3, random_state=0).fit(X, y, sample_weight)
    b = ProxClassifier(max_iter=3, random_state=0).fit(X, y, sample_weight=explicit)
    assert_same_model(a, b)


def test_balanced_counts_the_y_of_each_fit_call():
    """A warm-started fit weighs its rows by its own y's class counts."""
    X, y = imbalanced()
    a = ProxClassifier(class_weight="balanced", warm_start=True, random_state=0).fit(X, y)
    a.fit(X[:200], y[:200])
    b = ProxClassifier(warm_start=True, random_state=0)
    for n in (len(y), 200):
        b.fit(X[:n], y[:n], sample_weight=(n / (2 * np.bincount(y[:n])))[y[:n]])
    assert_same_model(a, b)


@pytest.mark.parametrize("labels", [np.array([0, 1, 2]), np.array(["ham", "promo", "spam"])])
def test_dict_equals_its_sample_weights(labels):
    """A dict multiplies each row's sample weight by its class's (missing classes: 1)."""
    X, codes = imbalanced(classes=3)
    y = labels[codes]
    class_weight = {labels[1]: 5.0, labels[2]: 0.25}
    sample_weight = np.random.default_rng(2).uniform(0.5, 2, len(y))
    a = ProxClassifier(class_weight=class_weight, max_iter=2, random_state=0).fit(X, y, sample_weight)
    explicit = sample_weight * np.array([1, 5.0, 0.25])[codes]
    b = ProxClassifier(max_iter=2, random_state=0).fit(X, y, sample_weight=explicit)
    assert_same_model(a, b)


def test_partial_fit_with_a_dict_equals_explicit_weights():
    """partial_fit in pieces multiplies by the dict too: the same stream as the explicit
    weights, and as one unshuffled fit pass with the dict."""
    X, y = imbalanced()
    steps = dict(eta0=0.3, delta=1.0)
    weighted = ProxClassifier(class_weight={0: 1, 1: 5}, **steps)
    explicit = ProxClassifier(**steps)
    for lo, hi in [(0, 100), (100, 450), (450, 600)]:
        weighted.partial_fit(X[lo:hi], y[lo:hi], classes=[0, 1])
        explicit.partial_fit(X[lo:hi], y[lo:hi], classes=[0, 1],
                             sample_weight=np.where(y[lo:hi] == 1, 5.0, 1.0))
    assert_same_model(weighted, explicit)
    one = ProxClassifier(class_weight={0: 1, 1: 5}, shuffle=False, **steps).fit(X, y)
    np.testing.assert_array_equal(weighted.coef_, one.coef_)


@pytest.mark.parametrize("fitted_first", [False, True])
def test_partial_fit_refuses_balanced(fitted_first):
    """As SGDClassifier: a batch's class counts are not the stream's. The message says
    what to do; the estimator is left as it was."""
    X, y = imbalanced()
    est = ProxClassifier(class_weight="balanced")
    if fitted_first:
        est.fit(X, y)
        coef = est.coef_
    refused = r"class_weight='balanced' is not supported by partial_fit.*compute_class_weight"
    with pytest.raises(ValueError, match=refused):
        est.partial_fit(X, y, classes=[0, 1])
    if fitted_first:
        np.testing.assert_array_equal(est.coef_, coef)
    else:
        assert not hasattr(est, "t_")


@pytest.mark.parametrize("class_weight, message", [
    ({0: 1, 7: 2}, r"The classes, \[1\], are not in class_weight"),
    ({0: -1.0}, r"class_weight\[0\]=-1.0 must be >= 0"),
    ({0: float("nan")}, r"class_weight\[0\]=nan must be a finite number"),
    ("balance", "class_weight='balance' is not supported; use None, 'balanced' or a dict"),
])
def test_bad_class_weights_raise_and_leave_the_estimator(class_weight, message):
    X, y = imbalanced()
    est = ProxClassifier(class_weight=class_weight)
    with pytest.raises(ValueError, match=message):
        est.fit(X, y)
    assert not hasattr(est, "t_")


def test_grid_search_picks_a_class_weight(a9a):  # noqa: F811
    """On a9a's first 5,000 rows (24% positive), a class weight beats none in balanced accuracy."""
    X, y = load_libsvm(a9a[0])
    X, y = X[:5000], (y[:5000] > 0).astype(int)
    grid = GridSearchCV(ProxClassifier(random_state=0),
                        {"class_weight": [None, "balanced", {0: 1, 1: 5}]},
                        scoring="balanced_accuracy", error_score="raise").fit(X, y)
    results = grid.cv_results_
    scores = dict(zip(map(str, results["param_class_weight"]), results["mean_test_score"]))
    assert grid.best_params_["class_weight"] is not None
    assert min(scores["balanced"], scores["{0: 1, 1: 5}"]) > scores["None"] + 0.03, scores


# --- verbose and n_iter_ --------------------------------------------------------

BLOCK = re.compile(r"-- Epoch (\d+)\n"
                   r"Norm: (\d+\.\d\d), NNZs: (\d+), Bias: (\S+|\[[^]]+\]), T: (\d+), "
                   r"Avg\. loss: (\d+\.\d{6})\n"
                   r"Total training time: \d+\.\d\d seconds\.\n")


def blocks(out):
    """The verbose blocks printed, which must be all of `out`."""
    found = BLOCK.findall(out)
    assert "".join(m.group(0) for m in BLOCK.finditer(out)) == out
    return found


@pytest.mark.parametrize("cls, classes", [(ProxClassifier, 2), (ProxClassifier, 3), (ProxRegressor, 2)])
def test_verbose_prints_each_pass_as_sgd(cls, classes, capsys):
    """One SGD-style block per fit pass (and per partial_fit call): the pass number,
    ||coef_||, its non-zeros, intercept_, t_, the pass's progressive loss. The
    model is verbose=0's, and verbose=0 prints nothing."""
    X, y = targets(cls, classes)
    est = cls(verbose=1, max_iter=3, random_state=0).fit(X, y)
    found = blocks(capsys.readouterr().out)
    assert [(int(epoch), int(t)) for epoch, _, _, _, t, _ in found] == [(1, 600), (2, 1200), (3, 1800)]
    epoch, norm, nnz, bias, t, loss = found[-1]
    coef, intercept = est.coef_, est.intercept_
    assert (norm, int(nnz)) == (f"{np.linalg.norm(coef):.2f}", np.count_nonzero(coef))
    each = " ".join(f"{b:.6f}" for b in intercept)
    assert bias == (each if len(intercept) == 1 else f"[{each}]")
    assert np.mean([float(f[5]) for f in found]) == pytest.approx(est.progressive_loss_, abs=1e-6)
    assert_same_model(est, cls(max_iter=3, random_state=0).fit(X, y))
    assert capsys.readouterr().out == ""
    est.partial_fit(X[:50], y[:50])
    (epoch, _, _, _, t, loss), = blocks(capsys.readouterr().out)
    assert (epoch, int(t), loss) == ("1", est.t_, f"{est.progressive_loss_:f}")


def test_n_iter_counts_the_passes_of_the_last_call():
    """n_iter_: max_iter after fit, 1 after partial_fit (SGDClassifier's convention)."""
    X, y = imbalanced()
    est = ProxClassifier(max_iter=4, class_weight={0: 1, 1: 5}).fit(X, y)
    assert est.n_iter_ == 4
    assert est.partial_fit(X, y).n_iter_ == 1
    assert est.fit(X, y).n_iter_ == 4
    assert ProxRegressor(verbose=0).partial_fit(X, y).n_iter_ == 1


def test_new_parameters_in_get_set_params_and_clone():
    est = ProxClassifier().set_params(class_weight={0: 2.0}, verbose=2)
    assert {"class_weight": {0: 2.0}, "verbose": 2}.items() <= clone(est).get_params().items()
    assert ProxClassifier().get_params()["class_weight"] is None
    assert ProxRegressor().get_params()["verbose"] == 0 and "class_weight" not in ProxRegressor().get_params()
