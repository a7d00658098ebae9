"""The defaults read no data (issue 21): `schedule=None` and `step=None` resolve to
the rule's data-free choice (`_registry.defaults_for`), so that a partial_fit stream in
any chunking, a first chunk of one row included, trains the model of one fit pass
over the same rows in the same order, bit for bit, and the model does not depend
on the scale of the first rows."""
import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings, strategies as st

from fastprox import ProxClassifier, ProxRegressor
from fastprox._registry import defaults_for

N_ROWS = 400


def rows(seed=11, n=N_ROWS, d=60):
    """Rows of raw, uneven scales (log-normal values), a binary, a 3-class and a real target."""
    rng = np.random.default_rng(seed)
    X = sp.random(n, d, density=0.1, format="csr", random_state=rng, data_rvs=lambda k: rng.lognormal(0, 2, k))
    score = X @ rng.normal(size=d)
    return X, np.where(score > 0, 1, -1), np.digitize(score, np.quantile(score, [1 / 3, 2 / 3])), score


X, BINARY, THREE, REAL = rows()
WEIGHTS = np.random.default_rng(3).uniform(0.2, 3.0, N_ROWS)
KINDS = {"binary": (ProxClassifier, BINARY, [-1, 1]), "ovr": (ProxClassifier, THREE, [0, 1, 2]),
         "regression": (ProxRegressor, REAL, None)}


def chunked(cls, y, classes, sizes, sample_weight=None):
    """partial_fit over consecutive chunks of the given sizes (the rest in one last chunk)."""
    est, start = cls(), 0
    for size in list(sizes) + [N_ROWS]:
        stop = min(start + size, N_ROWS)
        if stop > start:
            extra = {} if classes is None else {"classes": classes}
            weights = None if sample_weight is None else sample_weight[start:stop]
            est.partial_fit(X[start:stop], y[start:stop], sample_weight=weights, **extra)
        start = stop
    return est


def same_bits(a, b):
    assert a.coef_.tobytes() == b.coef_.tobytes()
    assert np.asarray(a.intercept_).tobytes() == np.asarray(b.intercept_).tobytes()
    assert a.t_ == b.t_


@pytest.mark.parametrize("kind", KINDS)
@settings(max_examples=15, deadline=None)
@given(sizes=st.lists(st.integers(1, 150), min_size=1, max_size=8), weighted=st.booleans())
def test_partial_fit_in_any_chunking_equals_one_fit_pass(kind, sizes, weighted):
    cls, y, classes = KINDS[kind]
    weights = WEIGHTS if weighted else None
    whole = cls(shuffle=False).fit(X, y, sample_weight=weights)
    same_bits(chunked(cls, y, classes, [1] + sizes, weights), whole)      # a first chunk of one row
    same_bits(chunked(cls, y, classes, sizes, weights), whole)


def test_the_defaults_are_the_normalized_invariant_rule_and_read_no_data():
    """The first rows' scale chooses nothing: eta0_ is 0.5 whatever it is, and scaling
    every feature by k divides the weights by k (no intercept, no penalty: the
    normalized schedule is scale-free, and the invariant step's flow is too)."""
    params = ProxClassifier().get_params()
    assert (params["schedule"], params["step"], params["eta0"]) == (None, None, "auto")
    plain = ProxClassifier(shuffle=False, penalty=None, fit_intercept=False).fit(X, BINARY)
    loud = ProxClassifier(shuffle=False, penalty=None, fit_intercept=False).fit(X * 1000.0, BINARY)
    assert (plain.schedule_, plain.step_, plain.eta0_) == ("normalized", "invariant", 0.5) == (
        loud.schedule_, loud.step_, loud.eta0_)
    np.testing.assert_allclose(loud.coef_ * 1000.0, plain.coef_, rtol=1e-9, atol=1e-15)


@pytest.mark.parametrize("kind", KINDS)
def test_the_defaults_are_scale_free_bit_for_bit(kind):
    """ProxClassifier() and ProxRegressor() as given, intercept and all (alpha = 0: no
    l1 threshold, which would not scale): columns scaled by powers of two (exact
    products) have their weights divided by the same powers, and every prediction
    is the same, bit for bit; with l1 (alpha > 0) they are not."""
    cls, y, _ = KINDS[kind]
    k = 2.0 ** np.random.default_rng(5).integers(-20, 21, X.shape[1])
    Xk = sp.csr_matrix(X @ sp.diags(k))
    plain, scaled = cls(random_state=0).fit(X, y), cls(random_state=0).fit(Xk, y)
    assert (plain.coef_ / k).tobytes() == scaled.coef_.tobytes()
    scores = [getattr(est, "decision_function", est.predict) for est in (plain, scaled)]
    assert scores[0](X).tobytes() == scores[1](Xk).tobytes()
    penalized = [cls(random_state=0, alpha=1e-3).fit(A, y) for A in (X, Xk)]
    assert not np.allclose(penalized[0].coef_ / k, penalized[1].coef_)


@pytest.mark.parametrize("params, schedule, step", [
    (dict(), "normalized", "invariant"),
    (dict(penalty="none"), "normalized", "invariant"),
    (dict(penalty="l2"), "adagrad", "invariant"),
    (dict(penalty="elasticnet"), "adagrad", "invariant"),
    (dict(update="rda"), "adagrad", "gradient"),
    (dict(update="ftrl"), "adagrad", "gradient"),
    (dict(batch_size=5), "adagrad", "gradient"),
    (dict(schedule="invsqrt"), "invsqrt", "invariant"),
    (dict(step="gradient"), "normalized", "gradient"),
])
def test_none_resolves_by_the_rule(params, schedule, step):
    """A choice the data-free rule does not take falls back to AdaGrad and the gradient
    step, so that changing the penalty or the update never needs a schedule too."""
    clf = ProxClassifier(**params).fit(X, BINARY)
    assert (clf.schedule_, clf.step_) == (schedule, step)
    assert clf.get_params()["schedule"] == params.get("schedule")


def test_multinomial_takes_adagrad_and_the_gradient_step():
    clf = ProxClassifier(multi_class="multinomial").fit(X, THREE)
    assert (clf.schedule_, clf.step_) == ("adagrad", "gradient")
    assert defaults_for("fobos", "l1", 1, True) == ("adagrad", "gradient")


@pytest.mark.parametrize("group_penalty", ["l1_l2", "l1_linf", "sparse_group", "squared_group"])
def test_group_penalties_under_fobos_default_to_the_invsqrt_schedule(group_penalty):
    """AdaGrad has no exact lazy form for the group penalties under fobos: schedule=None
    picks 1/sqrt(t) there (it refused), as if given, reading no data."""
    X = sp.random(40, 6, density=0.5, format="csr", random_state=0)
    y = np.arange(40) % 2
    given = dict(penalty=group_penalty, groups=np.arange(6) // 2, random_state=0)
    chosen = ProxClassifier(**given).fit(X, y)
    assert (chosen.schedule_, chosen.step_) == ("invsqrt", "invariant")
    assert chosen.coef_.tobytes() == ProxClassifier(**given, schedule="invsqrt").fit(X, y).coef_.tobytes()
    assert defaults_for("rda", group_penalty, 1, False)[0] == "adagrad"


@pytest.mark.parametrize("params, note", [
    (dict(penalty="squared_group", update="rda"), "(schedule=None chose 'adagrad' for these parameters.)"),
    (dict(penalty="l1_l2", schedule="adagrad"), None),
    (dict(penalty="l1_l2", average=True, learning_rate="invscaling"), None),
])
def test_a_refused_rule_names_the_schedule_the_defaults_chose(params, note):
    """A rule without an exact lazy form that the defaults chose (schedule=None, no
    learning_rate: squared_group under rda gets AdaGrad) is refused naming that
    choice, as the user named no schedule; a schedule the user gave, or one
    learning_rate mapped, is not called the defaults' choice."""
    X = sp.random(20, 6, density=0.5, format="csr", random_state=0)
    with pytest.raises(ValueError, match="no exact lazy form|no exact lazy average|keeps no") as error:
        ProxClassifier(**params).fit(X, np.arange(20) % 2)
    if note is None:
        assert "chose" not in str(error.value)
    else:
        assert str(error.value).endswith(note)
