"""Models that grow with the features they meet (`Learner.grow`, the estimators'
grow_features): a feature met for the first time at step t joins in the state the
contract gives a coordinate never touched since step 1, so a learner widened as it
goes equals, bit for bit, one built with the final width from the start."""
import pickle

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings, strategies as st

from fastprox import ProxClassifier, ProxRegressor, dump_libsvm, iter_libsvm, load_model, save_model
from fastprox._kernels import Learner
from fastprox._registry import RULES as ALL_RULES



def rules():
    """Every supported (update, schedule, penalty): group penalties over W's rows."""
    for r in ALL_RULES:
        yield r.update, r.schedule, r.penalty


RULES = list(rules())


def widening_stream(rng, n, d):
    """n rows over d features, each feature first met around row j * n / d: the
    width a chunk needs grows as the stream goes."""
    rows = []
    for i in range(n):
        seen = max(1, (i + 1) * d // n)
        k = int(rng.integers(0, min(6, seen) + 1))
        rows.append(np.sort(rng.choice(seen, size=k, replace=False)))
    indptr = np.r_[0, np.cumsum([len(r) for r in rows])]
    indices = np.concatenate(rows).astype(np.int32)
    return sp.csr_matrix((rng.uniform(-2, 2, len(indices)), indices, indptr), shape=(n, d))


def targets(rng, X, K, multinomial):
    if K == 1:
        return np.where(X @ rng.normal(size=X.shape[1]) > 0, 1.0, -1.0)
    return rng.integers(0, K, X.shape[0]).astype(np.float64)


def state(learner):
    return learner.coef().tobytes() + learner.intercept().tobytes(), learner.t


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow],
          derandomize=True)
@given(rule=st.sampled_from(RULES), K=st.sampled_from([1, 3]), multinomial=st.booleans(),
       seed=st.integers(0, 2**32 - 1), chunk=st.integers(1, 40), batch=st.sampled_from([1, 3]),
       pickled=st.booleans(), invariant=st.booleans())
def test_a_learner_grown_chunk_by_chunk_equals_one_built_wide(rule, K, multinomial, seed, chunk, batch,
                                                              pickled, invariant):
    """For every rule, one or K outputs (one-vs-rest or multinomial), batches, the
    invariant step, and a pickle taken mid-stream: the grown learner's model is the
    wide one's, bit for bit."""
    update, schedule, penalty = rule
    multinomial = multinomial and K > 1 and schedule != "normalized"
    step = "invariant" if invariant and update == "fobos" and not multinomial else "gradient"
    if step == "invariant" or schedule == "normalized":
        batch = 1       # (one row per step)
    rng = np.random.default_rng(seed)
    n, d = 120, 30
    X = widening_stream(rng, n, d)
    y = targets(rng, X, K, multinomial)
    args = (update, schedule, penalty, "log")
    kw = dict(alpha=1e-2, eta0=0.2, delta=1.0, berhu_gamma=0.3, ovr=K > 1 and not multinomial,
              multinomial=multinomial, step=step)
    wide, grown = Learner(d, K, *args, **kw), Learner(1, K, *args, **kw)
    for lo in range(0, n, chunk):
        part = X[lo:lo + chunk]
        width = int(part.indices.max(initial=-1)) + 1
        grown.grow(width)
        assert grown.n_features == max(width, grown.n_features) and grown.capacity >= grown.n_features
        for learner, Z in ((wide, part), (grown, part[:, :grown.n_features])):
            Z = sp.csr_matrix(Z)
            learner.fit_rows(Z.data, Z.indices, Z.indptr, y[lo:lo + chunk], None, None, batch)
        if pickled and lo == chunk:
            grown = pickle.loads(pickle.dumps(grown))
    grown.grow(d)
    assert state(grown) == state(wide)


def test_ftrl_drops_its_roots_when_it_outgrows_them():
    """FTRL keeps sqrt(n) beside n only for models of up to 2^19 weights: a learner
    grown past it changes layout, with the wide learner's bits."""
    rng = np.random.default_rng(0)
    d, half = (1 << 19) + 1000, 1500
    first = rng.integers(0, 1 << 18, half)          # the first half within 2^18 features
    indices = np.r_[first, rng.integers(0, d, half)].astype(np.int32)
    X = sp.csr_matrix((rng.uniform(-1, 1, 2 * half), indices, np.arange(2 * half + 1)), shape=(2 * half, d))
    y = np.where(rng.random(2 * half) < 0.5, 1.0, -1.0)
    kw = dict(alpha=1e-3, eta0=0.3, delta=1.0)
    wide = Learner(d, 1, "ftrl", "adagrad", "l1", "log", **kw)
    grown = Learner(10, 1, "ftrl", "adagrad", "l1", "log", **kw)
    grown.grow(1 << 18)
    for learner, Z in ((wide, X[:half]), (grown, sp.csr_matrix(X[:half][:, :1 << 18]))):
        learner.fit_rows(Z.data, Z.indices, Z.indptr, y[:half], None, None, 1)
    assert grown.saved_arrays()["state"][1] == (1 << 18, 3)     # (z, n, sqrt n) still
    grown.grow(d)
    assert grown.saved_arrays()["state"][1] == (d, 2)
    rest = X[half:]
    for learner in (wide, grown):
        learner.fit_rows(rest.data, rest.indices, rest.indptr, y[half:], None, None, 1)
    assert state(grown) == state(wide)


def growing_chunks(directory, rows=100, n=1000):
    """iter_libsvm's chunks of ``rows`` rows of a LIBSVM file whose rows reach ever
    higher feature ids, as a text stream meets new words: each chunk's width is the
    largest id met so far, unknown before it is read."""
    rng = np.random.default_rng(5)
    ids = [np.unique(rng.integers(0, 50 + 5 * i, size=12)) for i in range(n)]
    X = sp.csr_matrix((rng.uniform(0.5, 2, sum(map(len, ids))), np.concatenate(ids),
                       np.r_[0, np.cumsum([len(r) for r in ids])]), shape=(n, 50 + 5 * n))
    y = np.where(X @ rng.normal(size=X.shape[1]) > 0, 1, -1)
    dump_libsvm(X, y, directory / "stream.svm")
    return list(iter_libsvm(directory / "stream.svm", chunk_rows=rows))


@pytest.mark.parametrize("est", [ProxClassifier(grow_features=True),
                                 ProxClassifier(grow_features=True, update="ftrl"),
                                 ProxClassifier(grow_features=True, schedule="invsqrt", penalty="l1_l2"),
                                 ProxRegressor(grow_features=True, update="rda")],
                         ids=["defaults", "ftrl", "l1_l2", "regressor-rda"])
def test_iter_libsvm_chunks_into_partial_fit_without_the_width(est, tmp_path):
    """The user guide's stream (docs/guide/first_model.md): chunks of unknown width
    into partial_fit (it used to fail at the second chunk: 'X has 47009 features, but
    ProxClassifier is expecting 46891'), equal to the stream trained with the width
    known, bit for bit; the grown model saves, loads and predicts rows of any width."""
    chunks = growing_chunks(tmp_path)
    d = max(X.shape[1] for X, _ in chunks)
    assert len({X.shape[1] for X, _ in chunks}) > 1
    known = ProxClassifier if isinstance(est, ProxClassifier) else ProxRegressor
    known = known(**{k: v for k, v in est.get_params().items() if k != "grow_features"})
    kwargs = {"classes": [-1, 1]} if isinstance(est, ProxClassifier) else {}
    for X, y in chunks:
        est.partial_fit(X, y, **kwargs)
        known.partial_fit(sp.csr_matrix((X.data, X.indices, X.indptr), shape=(X.shape[0], d)), y, **kwargs)
    assert est.n_features_in_ == d and est.t_ == known.t_
    assert est.coef_.tobytes() == known.coef_.tobytes()
    assert est.intercept_.tobytes() == known.intercept_.tobytes()
    save_model(est, tmp_path / "m.npz")
    loaded = load_model(tmp_path / "m.npz")
    narrow = chunks[0][0]
    np.testing.assert_array_equal(loaded.predict(narrow), known.predict(
        sp.csr_matrix((narrow.data, narrow.indices, narrow.indptr), shape=(narrow.shape[0], d))))


def test_without_grow_features_the_width_is_checked(tmp_path):
    """The default keeps scikit-learn's check: a chunk of another width is refused."""
    (X1, y1), (X2, y2) = growing_chunks(tmp_path)[:2]
    est = ProxClassifier().partial_fit(X1, y1, classes=[-1, 1])
    if X2.shape[1] == X1.shape[1]:
        X2 = sp.csr_matrix((X2.data, X2.indices, X2.indptr), shape=(X2.shape[0], X1.shape[1] + 1))
    with pytest.raises(ValueError, match="features, but ProxClassifier is expecting"):
        est.partial_fit(X2, y2)


def test_groups_fix_the_width():
    """User groups give every feature an id: a model with them does not grow."""
    X = sp.random(20, 5, density=0.5, format="csr", random_state=0)
    y = np.r_[0, 1].repeat(10)
    est = ProxClassifier(penalty="l1_l2", schedule="invsqrt", groups=np.arange(5) % 2, grow_features=True)
    est.fit(X, y)
    with pytest.raises(ValueError, match="groups or group_weights has 5 features"):
        est.partial_fit(sp.random(20, 8, density=0.5, format="csr", random_state=1), y)


def test_outputs_count_in_the_memory_check():
    """A model of no features and 2^31 - 1 outputs is refused before allocation too."""
    from fastprox._validation import ModelTooLarge
    with pytest.raises(ModelTooLarge, match="2147483647 output"):
        Learner(0, 2**31 - 1, "fobos", "invsqrt", "l1", "log")


def test_a_state_too_large_for_its_group_ids_names_the_groups(monkeypatch):
    """Group ids are numbered 0..G-1: ids that run far past the features (labels
    rather than numbers) make G groups of state, which the refusal names."""
    from fastprox import _validation
    from fastprox._validation import ModelTooLarge
    monkeypatch.setattr(_validation, "available_memory", lambda: 1 << 20)
    groups = np.zeros(20, np.int64)
    groups[-1] = 10**9
    with pytest.raises(ModelTooLarge, match="20 features x 1 output[(]s[)] in 1000000001 groups"):
        Learner(20, 1, "fobos", "invsqrt", "l1_l2", "log", groups=groups)


def test_only_states_past_checked_bytes_ask_the_memory_available(monkeypatch):
    """A small state is allocated without reading /proc/meminfo (a tenth of a
    millisecond a fit); a larger one is still refused where it would not fit."""
    from fastprox import _validation
    from fastprox._validation import CHECKED_BYTES, ModelTooLarge

    def unasked():
        raise AssertionError("asked")
    monkeypatch.setattr(_validation, "available_memory", unasked)
    Learner(CHECKED_BYTES // 64, 1, "fobos", "invsqrt", "l1", "log")
    monkeypatch.setattr(_validation, "available_memory", lambda: CHECKED_BYTES)
    with pytest.raises(ModelTooLarge, match=f"{CHECKED_BYTES // 8} features x 1 output"):
        Learner(CHECKED_BYTES // 8, 1, "fobos", "invsqrt", "l1", "log")


@pytest.mark.parametrize("params", [dict(grow_features=True), dict(hash_bits=6)], ids=["grow", "hash"])
def test_a_dataframe_s_names_are_checked_by_position_on_a_model_of_any_width(params, tmp_path):
    """Under grow_features or hashing (X of any width), a DataFrame's column names are
    kept (feature_names_in_) and checked as scikit-learn checks them at a fixed
    width, on the columns the model and X both have: a reordered DataFrame, which
    would meet the wrong weights, is refused; a narrower one agreeing on its columns
    is read, a training call's wider one extends the names; X without names warns.
    (Before, the names were neither kept nor checked: the reordered DataFrame was
    predicted silently.)"""
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 3))
    y = (X[:, 0] > 0).astype(int)
    frame = pd.DataFrame(X, columns=["a", "b", "c"])
    model = ProxClassifier(random_state=0, **params).fit(frame, y)
    assert list(model.feature_names_in_) == ["a", "b", "c"]
    for call in (lambda Z: model.predict(Z), lambda Z: model.partial_fit(Z, y)):
        with pytest.raises(ValueError, match="The feature names should match those that were passed during "
                                             "fit: column 0 is 'c' where the model's is 'a'"):
            call(frame[["c", "b", "a"]])
    model.predict(frame[["a", "b"]])
    model.partial_fit(frame.assign(d=X[:, 0]), y)
    assert list(model.feature_names_in_) == ["a", "b", "c", "d"]
    with pytest.warns(UserWarning, match="X does not have valid feature names"):
        model.predict(X)
    # a model file keeps one name a column: grow_features' 4 names for its 4 columns, but
    # none of hashing's 4 names for 64 columns (before, save_model wrote them, and
    # load_model refused the file)
    wide = frame.assign(d=X[:, 0])
    save_model(model, tmp_path / "model")
    loaded = load_model(tmp_path / "model")
    kept = "grow_features" in params
    assert hasattr(loaded, "feature_names_in_") == kept
    assert np.array_equal(loaded.predict(wide if kept else wide.to_numpy()), model.predict(wide))
