"""scikit-learn's SGD parameters with its meanings: the stopping rules (tol,
n_iter_no_change, early_stopping, validation_fraction), loss="perceptron",
learning_rate/power_t as schedules, n_jobs, and SGDClassifier's other names refused
with their fastprox equivalent."""
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings, strategies as st
from sklearn.base import clone
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import Perceptron, SGDClassifier, SGDRegressor
from sklearn.model_selection import StratifiedShuffleSplit

from fastprox import ProxClassifier, ProxRegressor, load_model, save_model
from fastprox._sklearn_names import EQUIVALENTS, UNMAPPED_RATES, UnknownParameter
from fastprox._core import margins, pass_order
from fastprox import _stopping
from fastprox._kernels import Learner
from fastprox._stopping import StoppingRule, held_out_margins, stratified_split, validation_split
from tests.support.shared import extra_module


def problem(n=600, d=40, classes=2, seed=0, noise=0.5):
    """Sparse rows and labels of a noisy linear model (K classes by argmax)."""
    rng = np.random.default_rng(seed)
    X = sp.random(n, d, density=0.2, format="csr", random_state=rng, data_rvs=lambda k: rng.normal(size=k))
    scores = X @ rng.normal(size=(d, classes)) + noise * rng.normal(size=(n, classes))
    return X, (scores[:, 1] > scores[:, 0]).astype(int) if classes == 2 else np.argmax(scores, axis=1)


def dense_problem(n=300, d=10, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    return X, (X @ rng.normal(size=d) + 0.5 * rng.normal(size=n) > 0).astype(int)


def assert_same_model(a, b):
    assert a.t_ == b.t_
    np.testing.assert_array_equal(a.coef_, b.coef_)
    np.testing.assert_array_equal(a.intercept_, b.intercept_)


# --- the stopping rule ------------------------------------------------------------

def sklearn_rule(values, tol, patience, n_rows, score):
    """scikit-learn's _plain_sgd loop over per-pass values, transcribed: the pass
    after which it stops (1-based), or None."""
    best = -np.inf if score else np.inf
    waited = 0
    for epoch, value in enumerate(values):
        if score:
            waited = waited + 1 if tol > -np.inf and value < best + tol else 0
            best = max(best, value)
        else:
            waited = waited + 1 if tol > -np.inf and value > best - tol * n_rows else 0
            best = min(best, value)
        if waited >= patience:
            return epoch + 1
    return None


class Params:
    def __init__(self, tol, n_iter_no_change):
        self.tol, self.n_iter_no_change = tol, n_iter_no_change


@settings(max_examples=200, deadline=None)
@given(values=st.lists(st.sampled_from([0.0, 0.5, 0.9, 0.95, 1.0, 1.001, 2.0]), min_size=1, max_size=20),
       tol=st.sampled_from([None, 0.0, 1e-3, 0.06]), patience=st.integers(1, 4), score=st.booleans(),
       n_rows=st.sampled_from([1, 10]))
def test_the_rule_is_sklearns(values, tol, patience, score, n_rows):
    """StoppingRule stops after the pass scikit-learn's loop stops after, on any sequence
    of pass losses (sums over n_rows rows) or held-out scores."""
    rule = StoppingRule(Params(tol, patience), n_rows, (lambda: None) if score else None)
    stopped = None
    for i, value in enumerate(values):
        if score:
            rule.score = lambda value=value: value
        if rule(i, value * n_rows if not score else None):
            stopped = i + 1
            break
    expected = sklearn_rule([v * n_rows for v in values] if not score else values,
                            -np.inf if tol is None else tol, patience, n_rows, score)
    assert stopped == expected


@pytest.mark.parametrize("cls", [ProxClassifier, ProxRegressor])
def test_a_stopped_fit_is_the_fit_of_its_passes(cls):
    """max_iter=1000 with the default tol stops (n_iter_ < max_iter) with the model of a
    fit of n_iter_ passes without a rule, bit for bit, and without a warning; the pass
    losses of that fit make scikit-learn's rule stop there."""
    X, y = problem()
    if cls is ProxRegressor:
        y = X @ np.linspace(-1, 1, X.shape[1])
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        est = cls(max_iter=1000, random_state=0).fit(X, y)
    assert 5 < est.n_iter_ < 1000
    assert_same_model(est, cls(max_iter=est.n_iter_, tol=None, random_state=0).fit(X, y))
    sums = [cls(max_iter=k, tol=None, random_state=0).fit(X, y).progressive_loss_ * k * len(y)
            for k in range(1, est.n_iter_ + 1)]
    losses = np.diff(np.concatenate([[0.0], sums]))
    assert sklearn_rule(losses, 1e-3, 5, len(y), score=False) == est.n_iter_


def test_tol_none_runs_every_pass_and_one_pass_is_unchanged():
    X, y = problem()
    assert ProxClassifier(max_iter=12, tol=None, random_state=0).fit(X, y).n_iter_ == 12
    assert_same_model(ProxClassifier(random_state=0).fit(X, y), ProxClassifier(tol=None, random_state=0).fit(X, y))


def test_convergence_warning_when_the_rule_could_have_stopped():
    """Warned when all max_iter passes ran with a rule that could stop them (max_iter >
    n_iter_no_change): scikit-learn's message. Not for fewer passes, nor tol=None."""
    X, y = problem()
    with pytest.warns(ConvergenceWarning, match="Maximum number of iteration reached before convergence"):
        est = ProxClassifier(max_iter=7, tol=0.0, n_iter_no_change=6, random_state=0).fit(X, y)
    assert est.n_iter_ == 7
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        ProxClassifier(max_iter=5, random_state=0).fit(X, y)
        ProxClassifier(max_iter=7, tol=None, random_state=0).fit(X, y)


def test_partial_fit_neither_stops_nor_holds_out():
    X, y = problem()
    a = ProxClassifier(early_stopping=True, random_state=0).partial_fit(X, y, classes=[0, 1])
    b = ProxClassifier(random_state=0).partial_fit(X, y, classes=[0, 1])
    assert_same_model(a, b)
    assert a.n_iter_ == 1


# --- early stopping --------------------------------------------------------------

@pytest.mark.parametrize("cls, sgd, classes", [(ProxClassifier, SGDClassifier, 2), (ProxClassifier, SGDClassifier, 3),
                                               (ProxRegressor, SGDRegressor, 2)])
@pytest.mark.parametrize("fraction", [0.1, 0.25])
def test_the_split_is_sklearns(cls, sgd, classes, fraction):
    """The held-out rows are those SGDClassifier (stratified) or SGDRegressor holds out
    for the same validation_fraction and random_state."""
    X, y = problem(classes=classes)
    if cls is ProxRegressor:
        y = y + 0.5
    est = cls(early_stopping=True, validation_fraction=fraction, random_state=3)
    train, held_out = validation_split(est, y, None, cls is ProxClassifier)
    mask = sgd(early_stopping=True, validation_fraction=fraction, random_state=3)._make_validation_split(
        y, sample_mask=np.ones(len(y), dtype=bool))
    np.testing.assert_array_equal(held_out, np.flatnonzero(mask))
    np.testing.assert_array_equal(train, np.flatnonzero(~mask))


@settings(max_examples=150, deadline=None)
@given(labels=st.lists(st.integers(0, 4), min_size=2, max_size=60), kind=st.sampled_from(["int", "float", "str"]),
       fraction=st.floats(0.05, 0.9), seed=st.integers(0, 2**31 - 1), shared=st.booleans())
def test_stratified_split_draws_as_sklearns_splitter(labels, kind, fraction, seed, shared):
    """`stratified_split` gives StratifiedShuffleSplit's first split, index for index
    and in its order, leaves a shared RandomState where the splitter leaves it, and
    gives None (the splitter's own error follows) where the splitter refuses y."""
    y = np.asarray(labels).astype({"int": np.int64, "float": np.float64, "str": str}[kind])
    ours_rng, theirs_rng = np.random.RandomState(seed), np.random.RandomState(seed)
    ours = stratified_split(y, fraction, ours_rng if shared else seed)
    splitter = StratifiedShuffleSplit(test_size=fraction, random_state=theirs_rng if shared else seed)
    try:
        theirs = next(splitter.split(np.zeros((len(y), 1)), y))
    except ValueError:
        assert ours is None
        return
    assert ours is not None
    for a, b in zip(ours, theirs):
        np.testing.assert_array_equal(a, b)
        assert a.dtype == b.dtype
    assert ours_rng.randint(2**31 - 1) == theirs_rng.randint(2**31 - 1)


@settings(max_examples=100, deadline=None)
@given(n=st.integers(0, 300), subset=st.booleans(), seed=st.integers(0, 2**31 - 1))
def test_pass_order_draws_as_the_permutation(n, subset, seed):
    """`pass_order` visits the rows in the order ``rows[rng.permutation(len(rows))]``
    gives (``rng.permutation(n)`` for all rows), as int64, leaves the generator where
    the permutation leaves it and the rows as they were: the shuffles, and so the
    models, are those of the permutation's gather. Without a generator, the rows as
    given."""
    rows = np.flatnonzero(np.random.RandomState(seed).rand(n) < 0.7).astype(np.int64) if subset else None
    kept = None if rows is None else rows.copy()
    ours_rng, theirs_rng = np.random.RandomState(seed), np.random.RandomState(seed)
    ours = pass_order(n, rows, ours_rng)
    theirs = theirs_rng.permutation(n) if rows is None else rows[theirs_rng.permutation(len(rows))]
    np.testing.assert_array_equal(ours, theirs)
    assert ours.dtype == np.int64 and ours.flags.c_contiguous
    assert ours_rng.randint(2**31 - 1) == theirs_rng.randint(2**31 - 1)
    if rows is not None:
        np.testing.assert_array_equal(rows, kept)
    assert pass_order(n, rows, None) is rows


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), classes=st.sampled_from([2, 3]), wide=st.booleans(), sort=st.booleans(),
       params=st.sampled_from([{}, dict(penalty="l2", alpha=1e-3), dict(penalty="l1", alpha=1e-3),
                               dict(average=True), dict(average=3, penalty="l2", alpha=1e-3, schedule="adagrad"),
                               dict(groups=np.repeat(np.arange(4), 3), penalty="l1_l2", alpha=1e-3, schedule="invsqrt", step="gradient")]))
def test_held_out_margins_are_the_models_bit_for_bit(seed, classes, wide, sort, params):
    """The held-out rows' margins read from their own columns' weights (`coef_at`)
    equal `_core.margins`' from the whole model, bit for bit, mid-training and after,
    averaged where the model averages, with columns the model never saw (weight 0),
    rows without entries, several outputs and a grouped model; the columns mapped by
    the O(d) table or (``sort``, as for a hashed width far above the entries) by a sort."""
    rng = np.random.default_rng(seed)
    X = sp.random(60, 12, density=0.2, format="csr", random_state=seed)
    y = rng.integers(0, classes, 60)
    est = ProxClassifier(random_state=0, **params).fit(X, y)
    learner = est._learner
    held = sp.random(15, 16 if wide else 12, density=0.3, format="csr", random_state=seed + 1)
    held.data[:] = rng.normal(size=held.nnz)
    read = held_out_margins(learner, held) if not sort else _sorted_held_out_margins(learner, held)
    for _ in range(2):
        np.testing.assert_array_equal(read(), margins(learner, held))
        est.partial_fit(X[:7], y[:7])


def _sorted_held_out_margins(learner, held):
    """`held_out_margins` mapping the columns by a sort (`_stopping.SPARSE_WIDTH` 0)."""
    width, _stopping.SPARSE_WIDTH = _stopping.SPARSE_WIDTH, 0
    try:
        return held_out_margins(learner, held)
    finally:
        _stopping.SPARSE_WIDTH = width


@pytest.mark.parametrize("classes, params", [(2, {}), (3, {}), (2, dict(average=True, schedule="adagrad")),
                                             (3, dict(average=True, schedule="adagrad"))])
def test_early_stopping_trains_on_the_other_rows_and_stops_on_their_score(classes, params):
    """With early_stopping the model is that of the same passes over the training rows
    alone (bit for bit: the same shuffles), and it stops after the pass where
    scikit-learn's rule, fed the held-out accuracy after each pass, stops (of the
    averaged model with average, the one fit returns)."""
    X, y = problem(n=800, classes=classes, noise=1.5)
    est = ProxClassifier(early_stopping=True, max_iter=200, tol=1e-3, random_state=0, **params).fit(X, y)
    train, held_out = validation_split(est, y, None, True)
    assert est.n_iter_ < 200
    alone = [ProxClassifier(max_iter=k, tol=None, random_state=0, **params).fit(X[train], y[train])
             for k in range(1, est.n_iter_ + 1)]
    assert_same_model(est, alone[-1])
    scores = [model.score(X[held_out], y[held_out]) for model in alone]
    assert sklearn_rule(scores, 1e-3, 5, len(train), score=True) == est.n_iter_


def test_early_stopping_errors_name_the_fix():
    X, y = problem(n=12)
    with pytest.raises(ValueError, match="validation_fraction=1.0 leaves no row"):
        ProxClassifier(early_stopping=True, validation_fraction=1.0).fit(X, y)
    with pytest.raises(ValueError, match="validation_fraction=0 must be > 0"):
        ProxClassifier(early_stopping=True, validation_fraction=0).fit(X, y)
    est = ProxClassifier(early_stopping=True, validation_fraction=0.5, random_state=0)
    weights = np.ones(12)
    weights[validation_split(est, y, None, True)[1]] = 0.0
    with pytest.raises(ValueError, match="The sample weights of the validation set are all zero"):
        est.fit(X, y, weights)
    for bad, message in [(dict(tol=-1.0), "tol=-1.0 must be >= 0"), (dict(n_iter_no_change=0), "must be >= 1"),
                         (dict(early_stopping="yes"), "early_stopping='yes' must be True or False")]:
        est = ProxClassifier(**bad)
        with pytest.raises(ValueError, match=message):
            est.fit(X, y)
        assert not hasattr(est, "t_")


def test_verbose_prints_the_stop_as_sgd(capsys):
    X, y = problem()
    est = ProxClassifier(max_iter=1000, verbose=1, random_state=0).fit(X, y)
    out = capsys.readouterr().out
    assert out.count("-- Epoch") == est.n_iter_
    assert f"Convergence after {est.n_iter_} epochs took" in out


# --- loss="perceptron" -----------------------------------------------------------

@pytest.mark.parametrize("classes", [2, 3])
def test_perceptron_is_sklearns(classes):
    """scikit-learn's Perceptron (SGD with loss "perceptron", constant eta0 = 1, no
    penalty) on dense rows, one pass in order: the same weights, bit for bit."""
    X, y = dense_problem()
    if classes == 3:
        y = np.digitize(X[:, 0], [-0.5, 0.5])
    sk = Perceptron(shuffle=False, max_iter=1, tol=None).fit(X, y)
    ours = ProxClassifier(loss="perceptron", penalty=None, learning_rate="constant", eta0=1.0,
                          shuffle=False).fit(X, y)
    np.testing.assert_array_equal(ours.coef_, sk.coef_)
    np.testing.assert_array_equal(ours.intercept_, sk.intercept_)


def test_perceptron_takes_the_gradient_step():
    X, y = problem()
    est = ProxClassifier(loss="perceptron").fit(X, y)
    assert est.step_ == "gradient" and est.score(X, y) > 0.8
    with pytest.raises(ValueError, match="step='invariant' is not defined for loss='perceptron'.*step='gradient'"):
        ProxClassifier(loss="perceptron", step="invariant").fit(X, y)
    with pytest.raises(ValueError, match="loss='perceptron' is not supported"):
        ProxRegressor(loss="perceptron").fit(X, y)
    assert not hasattr(est, "predict_proba")


# --- learning_rate, power_t, n_jobs ---------------------------------------------

@pytest.mark.parametrize("learning_rate, power_t, schedule", [
    ("constant", 0.5, "constant"), ("invscaling", 0.5, "invsqrt"), ("invscaling", 1, "inv"),
    ("invscaling", 0.0, "constant")])
def test_learning_rates_are_schedules(learning_rate, power_t, schedule):
    """learning_rate (with power_t) trains the model of its schedule, bit for bit, and
    keeps the value given (get_params, clone, model files)."""
    X, y = problem()
    a = ProxClassifier(learning_rate=learning_rate, power_t=power_t, eta0=0.2, max_iter=2, random_state=0).fit(X, y)
    b = ProxClassifier(schedule=schedule, eta0=0.2, max_iter=2, random_state=0).fit(X, y)
    assert_same_model(a, b)
    assert a.schedule_ == schedule and clone(a).get_params()["learning_rate"] == learning_rate
    a = ProxClassifier(learning_rate=learning_rate, power_t=power_t, schedule=schedule).fit(X, y)
    assert a.schedule_ == schedule


@pytest.mark.parametrize("loss", ["hinge", "log_loss", "perceptron", "modified_huber"])
@pytest.mark.parametrize("learning_rate, power_t", [("constant", 0.5), ("invscaling", 0.5), ("invscaling", 1.0)])
def test_learning_rates_step_as_sklearns(loss, learning_rate, power_t):
    """The same steps as SGDClassifier's (t counting rows from 1): one pass in order
    without penalty gives its weights to rounding."""
    X, y = dense_problem()
    params = dict(loss=loss, penalty=None, learning_rate=learning_rate, power_t=power_t, eta0=0.05,
                  shuffle=False)
    sk = SGDClassifier(**params, max_iter=1, tol=None).fit(X, y)
    ours = ProxClassifier(**params, step="gradient").fit(X, y)
    np.testing.assert_allclose(ours.coef_, sk.coef_, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(ours.intercept_, sk.intercept_, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("params, message", [
    (dict(learning_rate=name), f"learning_rate='{name}': .*use ") for name in UNMAPPED_RATES] + [
    (dict(learning_rate="invscaling", power_t=0.25), "power_t=0.25 has no fastprox schedule.*power_t=0.5"),
    (dict(learning_rate="invscaling", batch_size=4), "counts t in rows.*schedule='invsqrt'"),
    (dict(learning_rate="constant", schedule="adagrad"), "is schedule='constant', but schedule='adagrad'"),
    (dict(learning_rate="fast"), "learning_rate='fast' is not supported"),
    (dict(power_t=-0.5), "power_t=-0.5 must be >= 0"),
    (dict(n_jobs=0), "n_jobs=0 must be None or a non-zero integer"),
    (dict(n_jobs=1.5), "n_jobs=1.5 must be None"),
    (dict(learning_rate="optimal"), "alpha must be > 0 since learning_rate is 'optimal'.*use alpha > 0"),
    (dict(learning_rate="optimal", alpha=1e-4, eta0=0.1), "drop eta0=0.1.*learning_rate=None.*schedule='inv'"),
    (dict(learning_rate="optimal", alpha=1e-4, t0=5.0), "drop t0=5.0"),
    (dict(learning_rate="optimal", alpha=1e-4, schedule="inv"), "drop schedule='inv'"),
    (dict(learning_rate="optimal", alpha=1e-4, batch_size=4), "counts t in rows.*batch_size=1"),
    (dict(learning_rate="optimal", alpha=1e-4, update="rda"), "update='rda' is not defined with schedule='inv'"),
    (dict(schedule="inv", t0=-1.0), "t0=-1.0 must be >= 0"),
    (dict(schedule="inv", t0=float("nan")), "t0=nan must be a finite number"),
    (dict(schedule="inv", t0=True), "t0=True must be a finite number"),
    (dict(t0=2.0), "t0=2.0 offsets the decaying scalar schedules.*schedule='normalized' has none"),
    (dict(schedule="adagrad", t0=2.0), "schedule='adagrad' has none: use t0=0"),
    (dict(update="rda", schedule="invsqrt", t0=2.0), "update='rda' with schedule='invsqrt' has none"),
])
def test_learning_rates_without_a_schedule_are_refused(params, message):
    X, y = problem()
    est = ProxClassifier(**params)
    with pytest.raises(ValueError, match=message):
        est.fit(X, y)
    assert not hasattr(est, "t_")


@pytest.mark.parametrize("n_jobs", [1, 2, -1])
def test_n_jobs_gives_the_same_bits(n_jobs):
    """One-vs-rest trains its K outputs in one pass of one kernel: n_jobs changes nothing."""
    X, y = problem(classes=4)
    assert_same_model(ProxClassifier(n_jobs=n_jobs, max_iter=2, random_state=0).fit(X, y),
                      ProxClassifier(max_iter=2, random_state=0).fit(X, y))


# --- SGDClassifier's names ---------------------------------------------------------

@pytest.mark.parametrize("sgd, cls", [(SGDClassifier, ProxClassifier), (SGDRegressor, ProxRegressor)])
def test_every_sgd_parameter_is_taken_or_names_its_equivalent(sgd, cls):
    """Each of SGDClassifier's (SGDRegressor's) parameters, at its default: fastprox's
    estimator takes it under the same name, or refuses it (constructor, set_params
    or fit) with a ValueError naming what to use."""
    X, y = problem()
    if cls is ProxRegressor:
        y = y + 0.5
    ours = set(cls().get_params())
    for name, value in sgd().get_params().items():
        if name in ours:
            try:
                cls(**{"random_state": 0, name: value}).fit(X, y)
            except ValueError as e:          # taken, refusing only scikit-learn's default value
                assert "use " in str(e), (name, value, str(e))
            continue
        for make in (lambda: cls(**{name: value}), lambda: cls().set_params(**{name: value})):
            with pytest.raises(ValueError, match=f"does not take '{name}'; {name}: .*(use|train)"):
                make()
    with pytest.raises(ValueError, match=r"alpha must be > 0 since learning_rate is 'optimal'"):
        cls(learning_rate="optimal").fit(X, y)     # (scikit-learn's default, with fastprox's alpha=0)
    assert cls(learning_rate="optimal", alpha=1e-4).fit(X, y).schedule_ == "inv"


def test_fit_arguments_and_unknown_names_are_refused():
    X, y = problem()
    for name in ("coef_init", "intercept_init"):
        est = ProxClassifier()
        with pytest.raises(ValueError, match=f"does not take '{name}'; {name}: .*warm_start=True"):
            est.fit(X, y, **{name: np.zeros(X.shape[1])})
        assert not hasattr(est, "t_")
    with pytest.raises(UnknownParameter, match=r"does not take 'colour'.*its parameters: loss, penalty, alpha"):
        ProxRegressor(colour="blue")
    with pytest.raises(TypeError):           # what Python raises for an unknown keyword, too
        ProxClassifier(n_iter=5)
    assert "n_iter" in EQUIVALENTS


def test_new_parameters_round_trip_model_files(tmp_path):
    X, y = problem()
    params = dict(tol=None, n_iter_no_change=3, early_stopping=True, validation_fraction=0.2,
                  learning_rate="invscaling", power_t=1.0, n_jobs=2, loss="perceptron", random_state=0)
    est = ProxClassifier(**params, max_iter=4).fit(X, y)
    save_model(est, tmp_path / "m.npz")
    loaded = load_model(tmp_path / "m.npz")
    assert loaded.get_params() == est.get_params()
    np.testing.assert_array_equal(loaded.coef_, est.coef_)
    assert_same_model(loaded.partial_fit(X, y), est.partial_fit(X, y))


def test_eta0_of_zero_names_what_to_give():
    """SGDClassifier's eta0 defaulted to 0.0 in the scikit-learn releases fastprox
    supports, before it became 0.01 (its "optimal" rate does not read it): a script ported
    from them passes it, and was told only "must be > 0.0"."""
    X, y = problem()
    for cls in (ProxClassifier, ProxRegressor):
        with pytest.raises(ValueError, match=r"eta0=0.0 must be > 0.0; use eta0='auto' \(the default"):
            cls(eta0=0.0).fit(X, y)


def test_a_cluster_refuses_early_stopping():
    """fastprox.dask.fit runs its passes without a stopping rule: early_stopping is
    refused before any work (no rows held out there), naming what to do."""
    extra_module("distributed")
    from fastprox.dask import fit
    with pytest.raises(ValueError, match="early_stopping is not supported on a cluster.*give passes"):
        fit(ProxClassifier(early_stopping=True), "/nonexistent/rows.svm")


def test_the_warning_as_an_error_keeps_the_fit():
    """The ConvergenceWarning comes after the training call: with warnings as errors the
    fitted model stays (as scikit-learn's, which warns after fitting too)."""
    X, y = problem()
    est = ProxClassifier(max_iter=7, tol=0.0, n_iter_no_change=6, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        with pytest.raises(ConvergenceWarning):
            est.fit(X, y)
    assert est.n_iter_ == 7
    assert_same_model(est, ProxClassifier(max_iter=7, tol=None, random_state=0).fit(X, y))


def test_a_failed_fit_with_early_stopping_leaves_the_estimator(monkeypatch):
    """Restore-on-failure is the training call's: a warm-started fit with early_stopping
    that fails after some passes (here its held-out scoring, at the third pass) leaves
    the model, t_ and n_iter_ as they were."""
    import fastprox._stopping as stopping
    X, y = problem()
    est = ProxClassifier(max_iter=3, random_state=0, warm_start=True).fit(X, y)
    coef, t, n_iter = est.coef_, est.t_, est.n_iter_
    calls = []

    def failing(*args, **kwargs):
        calls.append(1)
        if len(calls) == 3:
            raise RuntimeError("scoring failed")
        return 0.5
    monkeypatch.setattr(stopping, "predictions", failing)
    est.set_params(early_stopping=True, max_iter=50)
    with pytest.raises(RuntimeError, match="scoring failed"):
        est.fit(X, y)
    np.testing.assert_array_equal(est.coef_, coef)
    assert (est.t_, est.n_iter_) == (t, n_iter)


def test_held_out_margins_take_no_table_of_a_hashed_width():
    """early_stopping on a hashed 2^26 width: the held-out columns are mapped by a sort
    of their entries, not through an O(d) table (256 MiB of int32 at 2^26; 512 MiB at
    2^27, where fit's peak was 716 MB against 348 MB without early stopping)."""
    import tracemalloc
    learner = Learner(1 << 26, 1, "fobos", "normalized", "none", "log", step="invariant")
    held = sp.csr_matrix((np.ones(40), np.arange(40) * (1 << 20), [0, 10, 10, 40]), shape=(3, 1 << 26))
    tracemalloc.start()
    try:
        read = held_out_margins(learner, held)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 1 << 20, peak
    assert read().tobytes() == np.zeros(3).tobytes()
