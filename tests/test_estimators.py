"""The estimators as scikit-learn sees them, and the estimator-level promises."""
import pickle

import joblib
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
import scipy.sparse as sp
from sklearn.base import clone
from sklearn.utils.estimator_checks import check_estimator

from fastprox import ProxClassifier, ProxRegressor
from fastprox.l1ball import L1BallClassifier
from fastprox._core import LATER_PARAMS
from tests.support.unaligned import unaligned

# An online learner's model depends on the order of its rows, and the contract
# makes a weighted row one step (t counts it; a zero weight still shrinks), so
# weights are not repetitions. scikit-learn's own SGDClassifier/SGDRegressor
# are listed as failing these two checks for the same reason.
ORDER_DEPENDENT = {
    "check_sample_weight_equivalence_on_dense_data":
        "online steps depend on row order; a weight scales a step, it does not repeat it",
    "check_sample_weight_equivalence_on_sparse_data":
        "online steps depend on row order; a weight scales a step, it does not repeat it",
}


@pytest.mark.parametrize("est", [
    ProxClassifier(), ProxRegressor(),
    ProxClassifier(multi_class="multinomial", penalty="l1_l2", schedule="invsqrt", alpha=1e-4),
    ProxClassifier(update="rda", penalty="elasticnet"),
    ProxRegressor(update="ftrl", loss="huber"),
    ProxClassifier(average=True),
], ids=["classifier", "regressor", "multinomial-l1_l2", "classifier-rda", "regressor-ftrl", "classifier-average"])
def test_check_estimator(est):
    """Every other scikit-learn check passes."""
    results = check_estimator(est, expected_failed_checks=ORDER_DEPENDENT, on_fail=None)
    failed = [(r["check_name"], str(r["exception"])[:300]) for r in results if r["status"] == "failed"]
    skipped = [r["check_name"] for r in results if r["status"] == "skipped"]
    assert not failed, failed
    assert not skipped, skipped


def text_like(n=400, d=300, seed=0, classes=2):
    rng = np.random.default_rng(seed)
    X = sp.random(n, d, density=0.03, format="csr", random_state=rng, data_rvs=lambda k: np.ones(k))
    w = rng.normal(size=(classes, d)) * (rng.random((classes, d)) < 0.2)
    y = np.argmax(X @ w.T + 0.1 * rng.normal(size=(n, classes)), axis=1) if classes > 2 \
        else (X @ w[0] > 0).astype(int)
    return X, y


RULES = [dict(update="fobos", schedule="invsqrt", penalty="l1"),
         dict(update="fobos", schedule="adagrad", penalty="berhu"),
         dict(update="fobos", schedule="inv", penalty="berhu"),
         dict(update="rda", schedule="adagrad", penalty="elasticnet", rda_rho=0.01),
         dict(update="ftrl", schedule="adagrad", penalty="l1")]


@pytest.mark.parametrize("classes", [2, 4])
@pytest.mark.parametrize("params", RULES, ids=lambda p: "-".join(map(str, p.values())))
def test_partial_fit_calls_and_pickles_equal_one_pass(params, classes):
    """partial_fit in pieces, pickled between calls, equals one unshuffled fit pass bit for bit."""
    X, y = text_like(classes=classes)
    one = ProxClassifier(alpha=1e-3, shuffle=False, batch_size=2, **params).fit(X, y)
    # "auto" steps come from a first call's rows: the pieces take the whole's
    inc = ProxClassifier(**{**params, "alpha": 1e-3, "batch_size": 2, "eta0": one.eta0_, "delta": one.delta_})
    for lo, hi in [(0, 10), (10, 150), (150, 152)]:
        inc.partial_fit(X[lo:hi], y[lo:hi], classes=np.unique(y))
        inc = pickle.loads(pickle.dumps(inc))
    inc.partial_fit(X[152:], y[152:])
    assert inc.t_ == one.t_
    assert np.array_equal(inc.coef_, one.coef_)
    assert np.array_equal(inc.intercept_, one.intercept_)
    assert np.array_equal(inc.predict(X), one.predict(X))


@pytest.mark.parametrize("est", [
    ProxClassifier(penalty="l1_l2", alpha=1e-3, groups=np.arange(300) // 3, group_weights=np.ones(100)),
    ProxRegressor(penalty="sparse_group", alpha=1e-3, groups=np.arange(300) % 7 - 1),
    L1BallClassifier(random_state=0),
], ids=["groups", "regressor-groups", "l1ball"])
def test_a_read_only_memory_mapped_pickle_predicts_and_trains_on(tmp_path, est):
    """A model loaded by joblib with mmap_mode="r" (its arrays read-only maps of the
    file, as scikit-learn's check_estimators_pickle loads them) predicts as the model
    and continues as it does: the kernel's group ids and the l1-ball's intercept,
    which training writes, are the model's own (before, the load raised "buffer
    source array is read-only", and the ball's partial_fit "assignment destination
    is read-only")."""
    X, y = text_like()
    est.fit(X, y)
    joblib.dump(est, tmp_path / "model.joblib")
    mapped = joblib.load(tmp_path / "model.joblib", mmap_mode="r")
    assert np.array_equal(mapped.predict(X), est.predict(X))
    mapped.partial_fit(X, y)
    est.partial_fit(X, y)
    assert np.array_equal(mapped.coef_, est.coef_)
    assert np.array_equal(mapped.intercept_, est.intercept_)


@pytest.mark.parametrize("cls", [ProxClassifier, ProxRegressor])
def test_a_pickle_older_than_its_parameters_reads_them_as_old_files_do(cls):
    """An estimator pickled before some of its parameters existed (those of
    `LATER_PARAMS`, dropped from its state here) unpickles with them at the values
    model files of that age load with: get_params, clone and repr read them, and
    partial_fit continues bit for bit as the estimator that had them all along."""
    X, y = text_like()
    if cls is ProxRegressor:
        y = y.astype(float)
    params = cls().get_params()
    later = {name: value for name, value in LATER_PARAMS.items() if name in params}
    whole = cls(**later).partial_fit(X[:100], y[:100], **({"classes": np.unique(y)} if cls is ProxClassifier else {}))
    old = pickle.loads(pickle.dumps(whole))
    for name in later:
        del old.__dict__[name]
    old = pickle.loads(pickle.dumps(old))
    assert old.get_params() == whole.get_params()
    assert clone(old).get_params() == whole.get_params() and repr(old) == repr(whole)
    whole.partial_fit(X[100:], y[100:])
    old.partial_fit(X[100:], y[100:])
    assert np.array_equal(old.coef_, whole.coef_) and np.array_equal(old.intercept_, whole.intercept_)

def test_coef_shapes_and_sparsify():
    X, y = text_like()
    clf = ProxClassifier(alpha=1e-3).fit(X, y)
    assert clf.coef_.shape == (1, X.shape[1]) and clf.intercept_.shape == (1,)
    dense = clf.coef_
    assert sp.issparse(clf.sparsify().coef_)
    assert np.array_equal(clf.coef_.toarray(), dense)
    assert not sp.issparse(clf.densify().coef_)
    X4, y4 = text_like(classes=4)
    clf4 = ProxClassifier().fit(X4, y4)
    assert clf4.coef_.shape == (4, X4.shape[1]) and clf4.decision_function(X4).shape == (400, 4)


@pytest.mark.parametrize("loss", ["log", "modified_huber"])
@pytest.mark.parametrize("classes", [2, 3])
def test_predict_proba(loss, classes):
    X, y = text_like(classes=classes)
    clf = ProxClassifier(loss=loss).fit(X, y)
    P = clf.predict_proba(X)
    assert P.shape == (400, classes)
    assert np.allclose(P.sum(axis=1), 1) and np.all(P >= 0)
    assert np.array_equal(clf.classes_[P.argmax(axis=1)], clf.predict(X)) or loss == "modified_huber"


def test_no_predict_proba_for_hinge():
    assert not hasattr(ProxClassifier(loss="hinge"), "predict_proba")


@pytest.mark.parametrize("params, message", [
    (dict(update="rda", schedule="constant"), "with 'rda' use schedule in"),
    (dict(update="ftrl", schedule="invsqrt"), "with 'ftrl' use schedule in"),
    (dict(update="rda", penalty="berhu"), "has no exact lazy form under update='rda'.*it has one with "
                                          "update='fobos' with schedule='constant'"),
    (dict(update="ftrl", penalty="berhu"), "has no exact lazy form under update='ftrl'"),
    (dict(update="sgd"), "use one of 'fobos', 'rda', 'ftrl'"),
    (dict(loss="squared"), "loss='squared' is not supported"),
    (dict(penalty="l0"), "penalty='l0'"),
    (dict(alpha=-1.0), "alpha=-1.0 must be >= 0"),
    (dict(alpha=float("nan")), "must be a finite number"),
    (dict(eta0=0.0), "eta0=0.0 must be > 0"),
    (dict(l1_ratio=1.5), "l1_ratio=1.5 must be >= 0.0 and <= 1.0"),
    (dict(batch_size=0), "batch_size=0 must be >= 1"),
    (dict(batch_size=2**40), "batch_size=1099511627776 must be >= 1 and <= 2147483647"),
    (dict(alpha=10**400), "must be a finite number"),
    (dict(max_iter=2.5), "must be a finite integer"),
    (dict(random_state="x"), "random_state='x' cannot seed the shuffles: give None, an int in"),
    (dict(random_state=-1, shuffle=False), "random_state=-1 cannot seed"),
    (dict(random_state=2**32), "random_state=4294967296 cannot seed"),
    (dict(multi_class="crammer"), "multi_class='crammer' is not supported"),
    (dict(multi_class="multinomial", loss="squared_hinge"), "multi_class='multinomial' takes loss in"),
    (dict(penalty="l1_l2", schedule="adagrad"), "penalty='l1_l2' has no exact lazy form under update='fobos' with "
                            "schedule='adagrad'.*it has one with update='fobos' with schedule='constant'"),
    (dict(penalty="l1_linf", update="ftrl"), "has no exact lazy form under update='ftrl'"),
    (dict(penalty="l1_l2", update="rda", schedule="invsqrt", rda_rho=0.1), "use rda_rho=0"),
    (dict(penalty="squared_group", update="rda"), "it has one with update='fobos' with schedule='constant', "
                                                  "update='fobos' with schedule='invsqrt'"),
    (dict(penalty="l1", groups=np.zeros(300, dtype=int)), "groups= is used by the group penalties"),
    (dict(penalty="l1_l2", schedule="invsqrt", groups=np.zeros(7, dtype=int)),
     "groups must be a vector of length n_features=300"),
    (dict(penalty="l1_l2", schedule="invsqrt", groups=np.full(300, -2)), "ids must be >= -1"),
    (dict(penalty="elasticnet", group_weights=np.ones(300)), "group_weights= is used by the group penalties"),
    (dict(penalty="l1_l2", schedule="invsqrt", group_weights=np.ones(7)), "one weight per group, 300 here"),
    (dict(penalty="squared_group", schedule="invsqrt", groups=np.arange(300) % 5, group_weights=np.ones(300)),
     "one weight per group, 5 here (n_features with groups=None, else max(groups)"),
    (dict(penalty="l1_linf", schedule="inv", group_weights=np.full(300, -1.0)), "must be finite and >= 0"),
    (dict(penalty="squared_group", schedule="inv", group_weights=np.full(300, 1e160)), "multiply alpha by it"),
    (dict(penalty="sparse_group", schedule="inv", group_weights=np.full(300, np.nan)), "must be finite"),
    (dict(penalty="l1_l2", update="rda", schedule="invsqrt", group_weights=np.full(300, np.inf)),
     "replace the negative, NaN or infinite entries"),
])
def test_bad_parameters_say_what_is_supported(params, message):
    X, y = text_like(classes=3)
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        ProxClassifier(**params).fit(X, y)


def test_regressor_refuses_classification_loss():
    X, y = text_like()
    with pytest.raises(ValueError, match="loss='log' is not supported"):
        ProxRegressor(loss="log").fit(X, y.astype(float))


@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_non_finite_input_is_refused(bad):
    X, y = text_like()
    X = X.copy()
    X.data[3] = bad
    with pytest.raises(ValueError, match="NaN|infinity"):
        ProxClassifier().fit(X, y)
    with pytest.raises(ValueError, match="NaN|infinity"):
        ProxRegressor().fit(text_like()[0], np.where(np.arange(400) == 5, bad, 1.0))


REFUSING = [dict(eta0=0.1, delta=1.0),                            # the defaults' rule, steps given
             dict(schedule="invsqrt", batch_size=3),
             dict(update="rda", eta0=0.1, delta=1.0),
             dict(update="ftrl", eta0=0.1, delta=1.0, penalty="elasticnet"),
             dict(schedule="inv", penalty="berhu"),
             dict(schedule="invsqrt", penalty="l1_l2"),
             dict(multi_class="multinomial", eta0=0.1, delta=1.0),
             dict(multi_class="ovr", schedule="constant")]


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("params", REFUSING, ids=lambda p: "-".join(map(str, p.values())))
def test_first_fit_refuses_a_non_finite_value_and_keeps_the_model(params, dtype, bad):
    """A first fit leaves X's values to the kernel (a pass saved): a NaN or infinity
    gives its row a non-finite margin, the kernel stops there and names the row, and
    the estimator keeps the model of its previous fit, every attribute equal."""
    X, y = text_like(classes=3 if "multi_class" in params else 2)
    X = X.astype(dtype)
    clf = ProxClassifier(random_state=0, **params).fit(X, y)
    before = {k: pickle.dumps(v) for k, v in vars(clf).items()}
    coef, intercept = clf.coef_.copy(), clf.intercept_.copy()
    bad_X = X.copy()
    row = 271
    bad_X.data[bad_X.indptr[row] + 1] = bad
    for shuffle in (False, True):
        clf.set_params(shuffle=shuffle)
        with pytest.raises(ValueError, match=rf"row {row}: Input X contains NaN or infinity \(-?(nan|inf)\)"):
            clf.fit(bad_X, y)
        clf.set_params(shuffle=True)
        assert {k: pickle.dumps(v) for k, v in vars(clf).items()} == before
        assert np.array_equal(clf.coef_, coef) and np.array_equal(clf.intercept_, intercept)
    assert np.array_equal(clf.predict(X), ProxClassifier(random_state=0, **params).fit(X, y).predict(X))


def test_auto_steps_refuse_a_non_finite_first_row():
    """"auto" steps read the first rows' values before the kernel does: a NaN there, or
    values whose squares overflow, is refused by name, not turned into eta0 = NaN."""
    X, y = text_like()
    for bad in (np.nan, np.inf, 1e200):
        bad_X = X.copy()
        bad_X.data[0] = bad
        with pytest.raises(ValueError, match="NaN or infinity in its first rows"):
            ProxClassifier(schedule="adagrad").fit(bad_X, y)


def test_partial_fit_refuses_a_non_finite_value_before_any_step():
    """A call that continues a model checks X first: refused, the model is unchanged."""
    X, y = text_like()
    clf = ProxClassifier(eta0=0.1, delta=1.0).partial_fit(X, y, classes=[0, 1])
    coef, t = clf.coef_.copy(), clf.t_
    bad_X = X.copy()
    bad_X.data[-1] = np.nan
    for call in (lambda: clf.partial_fit(bad_X, y), lambda: clf.set_params(warm_start=True).fit(bad_X, y)):
        with pytest.raises(ValueError, match="NaN"):
            call()
        assert np.array_equal(clf.coef_, coef) and clf.t_ == t


@pytest.mark.parametrize("first", [True, False])
def test_overflowing_margins_are_refused(first):
    """Finite values too large for the steps overflow the margin: refused with the
    row and the fix, where the model used to turn NaN silently."""
    X, y = text_like()
    clf = ProxRegressor(schedule="invsqrt", shuffle=False)
    if not first:
        clf.partial_fit(X, y)
    with pytest.raises(ValueError, match=r"row \d+: (the margin overflowed|its gradient .* reached 2\^480)"
                                         r".*scale them"):
        clf.partial_fit(X * 1e200, y * 1e200) if not first else clf.fit(X * 1e200, y * 1e200)


PREDICTIONS = ("predict", "decision_function", "predict_proba", "predict_log_proba")


@pytest.mark.parametrize("classes", [2, 3])
def test_predictions_refuse_margins_that_overflow(classes):
    """Finite rows whose margin overflows (inf - inf) raise the row's ValueError in
    every prediction, where they gave class 0 and NaN probabilities; the rows
    before and after predict as they do alone."""
    rng = np.random.default_rng(0)
    X = sp.csr_matrix(rng.uniform(0, 0.01, (2000, 2)))
    y = np.argmax(np.c_[X.toarray(), np.full(2000, 0.005)][:, :classes], axis=1)
    clf = ProxClassifier(random_state=0).fit(X, y)
    assert np.abs(clf.coef_).max() > 1         # weights that 1e308 overflows
    rows = sp.csr_matrix(np.array([[0.01, 0.0], [1e308, 1e308], [0.0, 0.01]]))
    for name in PREDICTIONS:
        with pytest.raises(ValueError, match=r"^row 1: the margin overflowed: the values are finite but "
                                             r"too large for the model's weights; scale them"):
            getattr(clf, name)(rows)
        both = getattr(clf, name)(rows[[0, 2]])
        assert np.all(np.isfinite(both) | (name == "predict_log_proba"))
        assert np.array_equal(both[:1], getattr(clf, name)(rows[[0]]))
    regressor = ProxRegressor(random_state=0).fit(X, X @ np.array([500.0, -500.0]))
    with pytest.raises(ValueError, match="^row 1: the margin overflowed"):
        regressor.predict(rows)


@pytest.mark.parametrize("index", [-1, 2, 7])
def test_predictions_refuse_a_malformed_csr_matrix_as_partial_fit_does(index):
    """A column index below 0 or at or beyond X's width is refused by every
    prediction, as partial_fit refuses it (the entry used to be skipped)."""
    X, y = text_like()
    X, y = X[:, :2].tocsr(), np.arange(X.shape[0]) % 2
    clf = ProxClassifier().fit(X, y)
    bad = sp.csr_matrix((np.array([1.0, 2.0]), np.array([0, index]), np.array([0, 2])), shape=(1, 2))
    for call in [getattr(clf, name) for name in PREDICTIONS] + [lambda X: clf.partial_fit(X, [1])]:
        with pytest.raises(ValueError, match=r"a column index lies outside \[0, 2\): the matrix is malformed"):
            call(bad)
    wide = ProxClassifier(grow_features=True).fit(X, y)     # columns beyond the model's weigh 0
    assert np.array_equal(wide.decision_function(sp.hstack([X, X]).tocsr()), wide.decision_function(X))


def test_kernel_names_the_row_of_x_not_its_position_in_the_order():
    """Learner.fit_rows visiting rows in a given order reports the bad row's number in X."""
    from fastprox._kernels import Learner
    X, y = text_like()
    X = X.copy()
    X.data[X.indptr[5]] = np.inf
    learner = Learner(X.shape[1], 1, "fobos", "invsqrt", "l1", "log", alpha=1e-3, eta0=0.5, delta=1e-8)
    order = np.array([3, 2, 5, 1, 0], dtype=np.int64)
    with pytest.raises(ValueError, match=r"row 5: .*NaN or infinity \(inf\)"):
        learner.fit_rows(X.data, X.indices, X.indptr, np.where(y > 0, 1.0, -1.0), None, order, 1)
    assert learner.t == 2 and not learner.training      # rows 3 and 2 stepped; 5 stopped before its update


SIGNAL_ROWS = 1 << 16      # rows between two looks of the kernel at the signals (_kernels.pyx)


def long_stream(n=5 * SIGNAL_ROWS):
    """n one-feature rows over 7 columns, labels +1 on every third: a pass that looks
    at the signals several times."""
    X = sp.csr_matrix((np.ones(n), np.arange(n) % 7, np.arange(n + 1)), shape=(n, 7))
    return X, np.where(np.arange(n) % 3 == 0, 1.0, -1.0)


def interrupt_at_a_pause(stepped):
    """Ctrl-C pressed by a started thread while a pass runs, the pass held at its
    first pause until then: returns the pause to give the pass, and the thread.

    The thread holds a re-entrant lock, waits until ``stepped()`` (the pass has
    reached its first look at the signals), presses Ctrl-C (interrupt_main) and
    releases the lock. The pause takes the lock: it waits there for the thread, so
    the pass cannot end before Ctrl-C however late the thread runs; its later
    pauses pass at once (the lock is then the pass's thread's). The pause is the
    lock's C method: Python code run in it would raise the KeyboardInterrupt there,
    where the kernel's next look at the signals should."""
    import _thread
    import threading
    import time

    gate, held = threading.RLock(), threading.Event()

    def interrupt():
        with gate:
            held.set()
            while not stepped():
                time.sleep(1e-4)
            _thread.interrupt_main()

    thread = threading.Thread(target=interrupt)
    thread.start()
    held.wait()
    return gate.acquire, thread


@pytest.mark.usefixtures("ctrl_c")
def test_ctrl_c_stops_a_pass_between_rows_and_keeps_the_steps_taken():
    """A pass is one kernel call (X checked once) that looks at Python's signals every
    SIGNAL_ROWS rows: Ctrl-C (interrupt_main from a thread while the pass waits at its
    first look) raises KeyboardInterrupt at that look or the next, and the learner
    equals one trained on the rows stepped."""
    from fastprox._kernels import Learner
    X, y = long_stream()

    def learner():
        return Learner(7, 1, "fobos", "invsqrt", "l1", "log", alpha=1e-4, eta0=0.5, delta=1e-8)

    stopped = learner()
    pause, thread = interrupt_at_a_pause(lambda: stopped.t > 0)
    with pytest.raises(KeyboardInterrupt):
        stopped.fit_rows(X.data, X.indices, X.indptr, y, None, None, 1, pause)
    thread.join()
    t = stopped.t
    assert t in (SIGNAL_ROWS, 2 * SIGNAL_ROWS) and not stopped.training
    same = learner()
    same.fit_rows(X.data, X.indices, X.indptr[:t + 1], y[:t], None, None, 1)
    assert same.t == t
    assert np.array_equal(stopped.coef(), same.coef()) and np.array_equal(stopped.intercept(), same.intercept())


def test_an_exception_of_the_pause_stops_the_pass_as_ctrl_c_does():
    """An exception raised by the pause (Ctrl-C landing in an estimator's pause, which
    runs Python code) ends the pass as Ctrl-C seen by the kernel does: the learner is
    that of the rows stepped, and its next call's progressive loss is of that call's
    rows alone (the interrupted call's deferred log losses used to stay in the learner
    and be counted there)."""
    from fastprox._kernels import Learner
    X, y = long_stream()

    def learner():
        return Learner(7, 1, "fobos", "invsqrt", "l1", "log", alpha=1e-4, eta0=0.5, delta=1e-8)

    def pause():
        raise KeyboardInterrupt

    stopped, same = learner(), learner()
    with pytest.raises(KeyboardInterrupt):
        stopped.fit_rows(X.data, X.indices, X.indptr, y, None, None, 1, pause)
    t = stopped.t
    assert t == SIGNAL_ROWS and not stopped.training
    same.fit_rows(X.data, X.indices, X.indptr[:t + 1], y[:t], None, None, 1)
    rest = X[t:]
    loss = stopped.fit_rows(rest.data, rest.indices, rest.indptr, y[t:], None, None, 1)
    assert loss == same.fit_rows(rest.data, rest.indices, rest.indptr, y[t:], None, None, 1)
    assert np.array_equal(stopped.coef(), same.coef()) and np.array_equal(stopped.intercept(), same.intercept())


def interrupt_the_estimators_pass(monkeypatch, stepped):
    """`interrupt_at_a_pause` for an estimator's training call: its pause (which
    otherwise serves the reads waiting) replaced by the one given."""
    pause, thread = interrupt_at_a_pause(stepped)
    monkeypatch.setattr(ProxClassifier, "_pause", pause)
    return thread


@pytest.mark.usefixtures("ctrl_c")
def test_ctrl_c_during_a_first_fit_keeps_the_previous_model(monkeypatch):
    """An interrupted fit (from scratch) leaves the estimator's previous model, every
    attribute equal, as a refused one does."""
    X, y = long_stream()
    clf = ProxClassifier(schedule="invsqrt", shuffle=False).fit(X[:1000], y[:1000])
    old = clf._learner
    before = {k: pickle.dumps(v) for k, v in vars(clf).items()}
    thread = interrupt_the_estimators_pass(monkeypatch, lambda: getattr(clf, "_learner", old) is not old
                                           and clf._learner.t > 0)
    with pytest.raises(KeyboardInterrupt):
        clf.fit(X, y)
    thread.join()
    assert clf._learner is old
    assert {k: pickle.dumps(v) for k, v in vars(clf).items()} == before


@pytest.mark.usefixtures("ctrl_c")
def test_ctrl_c_during_a_warm_start_fit_keeps_the_previous_model(monkeypatch):
    """An interrupted warm-started fit leaves the previous model (the learner used to
    stay advanced by the rows stepped while t_ kept the old count)."""
    X, y = long_stream()
    clf = ProxClassifier(schedule="invsqrt", shuffle=False, warm_start=True).fit(X[:200_000], y[:200_000])
    learner = clf._learner
    before = {k: pickle.dumps(v) for k, v in vars(clf).items()}
    thread = interrupt_the_estimators_pass(monkeypatch, lambda: learner.t > 200_000)
    with pytest.raises(KeyboardInterrupt):
        clf.fit(X, y)
    thread.join()
    assert clf.t_ == clf._learner.t == 200_000
    assert {k: pickle.dumps(v) for k, v in vars(clf).items()} == before


@pytest.mark.usefixtures("ctrl_c")
def test_ctrl_c_during_partial_fit_keeps_the_steps_taken_and_counts_them(tmp_path, monkeypatch):
    """An interrupted partial_fit keeps its completed steps; t_ counts them, and a
    model saved then is the model of those steps."""
    from fastprox import load_model, save_model
    X, y = long_stream()
    clf = ProxClassifier(schedule="invsqrt").partial_fit(X[:1000], y[:1000], classes=[-1, 1])
    thread = interrupt_the_estimators_pass(monkeypatch, lambda: clf._learner.t > 1000)
    with pytest.raises(KeyboardInterrupt):
        clf.partial_fit(X[1000:], y[1000:])
    thread.join()
    monkeypatch.undo()
    t = clf.t_
    assert t == clf._learner.t and t - 1000 in (SIGNAL_ROWS, 2 * SIGNAL_ROWS)
    save_model(clf, tmp_path / "m.npz")
    loaded = load_model(tmp_path / "m.npz")
    same = ProxClassifier(schedule="invsqrt").partial_fit(X[:1000], y[:1000], classes=[-1, 1])
    same.partial_fit(X[1000:t], y[1000:t])
    assert loaded.t_ == same.t_ == t
    assert np.array_equal(loaded.coef_, same.coef_) and np.array_equal(clf.coef_, same.coef_)


@pytest.mark.parametrize("classes", [[-1.0, 1.0], (-1, 1), [-1, 1], np.array([-1, 1], dtype=np.int8),
                                     np.array([1.0, -1.0], dtype=np.float32)])
def test_classes_of_any_sequence_and_numeric_type(classes):
    """classes as a list, tuple or array of any numeric type gives an array classes_
    (a list of floats used to stay a list, and predict raised TypeError)."""
    X, y = text_like()
    y = np.where(y == y.max(), 1.0, -1.0)
    clf = ProxClassifier().partial_fit(X, y, classes=classes)
    assert isinstance(clf.classes_, np.ndarray) and clf.classes_.tolist() == [-1, 1]
    assert set(clf.predict(X)) <= {-1, 1}
    clf.partial_fit(X, y, classes=classes)


@pytest.mark.parametrize("params", [dict(), dict(update="rda"), dict(update="ftrl"),
                                    dict(schedule="invsqrt"), dict(penalty="berhu", schedule="inv"),
                                    dict(penalty="l1_l2", schedule="invsqrt", batch_size=3),
                                    dict(multi_class="multinomial", penalty="l1_l2", schedule="constant")])
def test_values_that_would_overflow_the_state_stop_with_the_row(params):
    """Values so large that a gradient's square overflows (AdaGrad's and FTRL's
    accumulators, used to give an all-zero model silently) stop with a ValueError
    naming the row, before that row's update: a partial_fit keeps the model of the
    steps before it, finite, with t_ counting them."""
    X, y = text_like(classes=3 if "multi_class" in params else 2)
    est = ProxClassifier(eta0=0.1, delta=1.0, **params)
    with pytest.raises(ValueError, match="row .*: its gradient .* reached 2\\^480"):
        est.fit(X * 1e200, y)
    assert not hasattr(est, "t_")
    est.partial_fit(X, y, classes=np.unique(y))
    t, coef = est.t_, est.coef_
    big = X[:50].copy()
    big.data[:] = 1e200
    with pytest.raises(ValueError, match="its gradient") as refused:
        est.partial_fit(big, y[:50])
    row = refused.value.row         # the rows before it took their steps (gradients ~0)
    assert est.t_ == est._learner.t == t + row // est.batch_size   # the steps before its own
    if row == 0:
        assert np.array_equal(est.coef_, coef)
    assert np.isfinite(est.coef_).all() and np.isfinite(est.intercept_).all()


def test_huge_regression_targets_stop_with_the_row():
    """Targets so large that the squared loss's gradient overflows stop the same way."""
    X, _ = text_like()
    y = np.ones(X.shape[0])
    y[7] = 1e300
    est = ProxRegressor(eta0=0.1, delta=1.0, shuffle=False)
    with pytest.raises(ValueError, match="row 7: its gradient"):
        est.fit(X, y)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("n", [1, 7, 8, 9, 17])
def test_all_finite_finds_every_bad_value(dtype, n):
    """The one-pass check of the fit's input (eight partial sums, then a tail) sees a
    NaN or an infinity wherever it is, and passes the largest and smallest numbers."""
    from fastprox._arrays import all_finite
    info = np.finfo(dtype)
    ok = np.array([info.max, -info.max, info.tiny, info.smallest_subnormal, 0.0, -0.0, 1.0] * 3, dtype)[:n]
    assert all_finite(ok) and all_finite(ok[:0])
    for i in range(n):
        for bad in (np.nan, np.inf, -np.inf):
            a = ok.copy()
            a[i] = bad
            assert not all_finite(a)


@pytest.mark.parametrize("labels", [[-1.0, 1.0], [0.0, 1.0], [7.0, 3.0], [-5.0, 2.0**52], [1.0, 1.0, 2.0],
                                    [0.5, 1.0], [1.0, 2.0, 3.0], [1.0, 1.0], [1.0, np.nan], [np.nan, 1.0],
                                    [0.0, 2.0**53], [1.0, np.inf]])
def test_two_labels_fast_path_equals_the_general_one(labels, monkeypatch):
    """fit's one-pass encoding of two integer float64 labels gives the classes and the
    model the general path gives, and whatever it does not take (fractions, three
    classes, one, NaN, 2^53) the general path handles or refuses with its own error."""
    from fastprox import linear_model
    X, _ = text_like()
    y = np.resize(np.array(labels), X.shape[0])

    def outcome():
        try:
            clf = ProxClassifier(shuffle=False).fit(X, y)
        except ValueError as e:
            return str(e)
        return clf.classes_.tolist(), clf.classes_.dtype, clf.coef_.tobytes(), clf.intercept_.tobytes()

    fast = outcome()
    monkeypatch.setattr(linear_model, "two_labels", lambda y: None)
    assert fast == outcome()


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from([-1.0, 1.0, 0.0, 3.0, 0.5, 2.0**53, np.nan, np.inf]), max_size=60))
def test_two_labels_equals_its_definition(labels):
    """two_labels (fit's fast path) gives (lo, hi, -1 for lo and +1 for hi) exactly
    when the labels hold two distinct integers below 2^53 in magnitude, wherever a
    third value, a NaN or a fraction lies, and None otherwise."""
    from fastprox._arrays import two_labels
    y = np.array(labels, dtype=np.float64)
    got = two_labels(y)
    values = set(labels)
    if len(values) == 2 and all(v == v and abs(v) < 2.0**53 and v == np.floor(v) for v in values):
        lo, hi = sorted(values)
        assert got is not None and got[:2] == (lo, hi)
        np.testing.assert_array_equal(np.asarray(got[2]), np.where(y == hi, 1.0, -1.0))
    else:
        assert got is None


def test_wrong_number_of_features_and_unknown_labels():
    X, y = text_like()
    clf = ProxClassifier().fit(X, y)
    with pytest.raises(ValueError, match="features"):
        clf.predict(X[:, :10])
    with pytest.raises(ValueError, match="not in classes_"):
        clf.partial_fit(X[:5], np.array([0, 1, 7, 0, 1]))
    with pytest.raises(ValueError, match="classes must be passed"):
        ProxClassifier().partial_fit(X, y)
    with pytest.raises(ValueError, match="at least 2 classes"):
        ProxClassifier().fit(X, np.zeros(400))


@pytest.mark.parametrize("labels", [[2**60, 2**60 + 1], [2**60, 2**60 + 1, 2**60 + 2], ["ham", "spam"]],
                         ids=["binary", "three", "strings"])
def test_labels_float64_cannot_tell_apart(labels):
    """Integer labels 2^53 and beyond (which float64 rounds together) and string
    labels train and predict as themselves, and an unknown one is refused."""
    X, y = text_like()
    y = np.array(labels, dtype=object if isinstance(labels[0], str) else np.int64)[np.arange(400) % len(labels)]
    clf = ProxClassifier().fit(X, y)
    assert clf.classes_.tolist() == labels and set(clf.predict(X).tolist()) <= set(labels)
    assert len(set(clf.predict(X).tolist())) > 1
    unknown = np.array([labels[0] + ("x" if isinstance(labels[0], str) else 3)], dtype=y.dtype)
    with pytest.raises(ValueError, match="not in classes_"):
        clf.partial_fit(X[:1], unknown)


@pytest.mark.parametrize("given", ["object", "str", "list"])
@pytest.mark.parametrize("n_classes", [2, 3])
def test_string_classes_are_a_string_array_as_sgdclassifiers(given, n_classes):
    """String labels give classes_ of NumPy's string dtype (``<U4``), as SGDClassifier's
    (scikit-learn's unique_labels), from fit and from partial_fit's classes, whether
    the labels come as an object array, a string array or a list; predict's labels
    are of that dtype too. (An object array was kept as one.)"""
    from sklearn.linear_model import SGDClassifier
    X, _ = text_like()
    names = ["ham", "spam", "eggs"][:n_classes]
    y = np.array(names, dtype=object)[np.arange(400) % n_classes]
    y = {"object": y, "str": y.astype(str), "list": y.tolist()}[given]
    classes = {"object": np.array(names, dtype=object), "str": np.array(names), "list": names}[given]
    for ours, theirs in ((ProxClassifier().fit(X, y), SGDClassifier().fit(X, y)),
                         (ProxClassifier().partial_fit(X, y, classes=classes),
                          SGDClassifier().partial_fit(X, y, classes=classes))):
        assert ours.classes_.dtype == theirs.classes_.dtype == np.dtype("<U4")
        assert ours.classes_.tolist() == theirs.classes_.tolist() == sorted(names)
        assert ours.predict(X).dtype == theirs.predict(X).dtype


def test_plain_csr_input_keeps_validate_data_rules():
    """The shortcut past validate_data for finite float CSR input keeps its rules:
    the width check and message, feature names remembered from a DataFrame, lists
    as labels, empty input."""
    import pandas as pd
    X, y = text_like()
    clf = ProxClassifier().fit(X, y)
    with pytest.raises(ValueError, match=f"X has 10 features, but ProxClassifier is expecting {X.shape[1]} "
                                         "features as input"):
        clf.partial_fit(X[:5, :10], y[:5])
    assert np.array_equal(ProxClassifier(shuffle=False).fit(X, list(y)).coef_,
                          ProxClassifier(shuffle=False).fit(X, y).coef_)
    with pytest.raises(ValueError, match="0 sample"):
        ProxClassifier().fit(X[:0], y[:0])
    named = ProxClassifier().fit(pd.DataFrame(X[:, :5].toarray(), columns=list("abcde")), y)
    with pytest.warns(UserWarning, match="feature names"):
        named.partial_fit(X[:5, :5], y[:5])


def test_unsorted_and_duplicate_indices_are_summed():
    """A row with a repeated index means the sum of its values, as in scipy."""
    X, y = text_like()
    indices, data = [], []
    for i in range(X.shape[0]):
        cols, vals = X.indices[X.indptr[i]:X.indptr[i + 1]], X.data[X.indptr[i]:X.indptr[i + 1]]
        indices.append(np.r_[cols, cols][::-1])
        data.append(np.r_[vals, vals][::-1] / 2)
    indptr = np.r_[0, np.cumsum([len(c) for c in indices])]
    messy = sp.csr_matrix((np.concatenate(data), np.concatenate(indices), indptr), shape=X.shape)
    assert not messy.has_canonical_format
    a = ProxClassifier(shuffle=False).fit(X, y)
    b = ProxClassifier(shuffle=False).fit(messy, y)
    assert np.allclose(a.coef_, b.coef_, rtol=1e-12, atol=0)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("itype", [np.int32, np.int64])
def test_dtypes_are_read_without_copy(dtype, itype):
    from fastprox._validation import kernel_arrays
    X, y = text_like()
    X = X.astype(dtype)
    X.indices, X.indptr = X.indices.astype(itype), X.indptr.astype(itype)
    data, indices, indptr = kernel_arrays(X)
    assert data is X.data and indices is X.indices and indptr is X.indptr
    clf = ProxClassifier(shuffle=False).fit(X, y)
    ref = ProxClassifier(shuffle=False).fit(X.astype(np.float64), y)
    assert np.allclose(clf.coef_, ref.coef_, rtol=1e-12, atol=1e-15)


def test_dense_and_other_formats_give_the_same_model():
    X, y = text_like()
    coefs = [ProxClassifier(shuffle=False).fit(Z, y).coef_ for Z in (X, X.toarray(), X.tocsc(), X.tocoo())]
    for c in coefs[1:]:
        assert np.array_equal(c, coefs[0])


def test_memory_does_not_grow_with_rows_seen():
    X, y = text_like()
    clf = ProxClassifier()
    clf.partial_fit(X, y, classes=[0, 1])

    def state_bytes():
        return sum(v.nbytes for v in clf._learner.__getstate__()["arrays"].values())

    size = state_bytes()
    for _ in range(20):
        clf.partial_fit(X, y)
    assert clf.t_ == 21 * 400
    # the default normalized schedule without a penalty: the scale per feature, then w and
    # G per entry; 2 intercept fields
    assert state_bytes() == size == (X.shape[1] * 3 + 2) * 8


def test_warm_start_continues_the_step_count():
    X, y = text_like()
    clf = ProxClassifier(warm_start=True, shuffle=False).fit(X, y)
    clf.fit(X, y)
    assert clf.t_ == 800
    cold = ProxClassifier(shuffle=False, max_iter=2).fit(X, y)
    assert np.array_equal(clf.coef_, cold.coef_)



# set_params after training, of a parameter the kernel is built with: refused by
# partial_fit and a warm start (before, the steps went on with the old value).
KERNEL_CHANGES = {
    "loss": dict(loss="hinge"), "alpha": dict(alpha=1e-3), "eta0": dict(eta0=0.3),
    "update": dict(update="rda"), "schedule": dict(schedule="invsqrt"), "step": dict(step="gradient"),
    "penalty": dict(penalty="l2", alpha=1e-3), "fit_intercept": dict(fit_intercept=False),
    "epsilon": dict(epsilon=0.2), "l1_ratio": dict(l1_ratio=0.5), "rda_rho": dict(rda_rho=0.1),
    "berhu_gamma": dict(berhu_gamma=2.0),
}


@pytest.mark.parametrize("change", KERNEL_CHANGES.values(), ids=KERNEL_CHANGES.keys())
def test_continuing_refuses_a_changed_kernel_parameter(change):
    """partial_fit and a warm-start fit refuse a kernel parameter changed since
    training, name it, and change nothing; set back, the stream goes on as if
    nothing happened (bit for bit). The first key of `change` is the one named."""
    X, y = text_like()
    whole = ProxClassifier(shuffle=False).partial_fit(X[:200], y[:200], classes=[0, 1])
    whole.partial_fit(X[200:], y[200:])
    for warm in (False, True):
        clf = ProxClassifier(shuffle=False, warm_start=warm).partial_fit(X[:200], y[:200], classes=[0, 1])
        coef, before = clf.coef_.copy(), clf.get_params()
        clf.set_params(**change)
        key = next(iter(change))
        with pytest.raises(ValueError, match=rf"^cannot continue training the model: params\.{key}="
                                             rf".* but the kernel was fitted with {key}="):
            clf.partial_fit(X[200:], y[200:]) if not warm else clf.fit(X[200:], y[200:])
        assert clf.t_ == 200 and np.array_equal(clf.coef_, coef)
        clf.set_params(**before)
        clf.partial_fit(X[200:], y[200:]) if not warm else clf.fit(X[200:], y[200:])
        assert np.array_equal(clf.coef_, whole.coef_)


def test_continuing_accepts_what_the_kernel_does_not_hold():
    """Parameters each call reads (passes, shuffling, batches, class weights,
    verbosity), an equal value spelled otherwise (a number for a data-free "auto", an
    alias of the loss) and an "auto" AdaGrad resolved from the data are no change."""
    X, y = text_like()
    clf = ProxClassifier(shuffle=False).partial_fit(X[:100], y[:100], classes=[0, 1])
    clf.set_params(max_iter=3, shuffle=True, class_weight={0: 2.0}, verbose=0,
                   random_state=1, eta0=0.5, delta=1e-8, loss="log_loss", grow_features=True)
    clf.partial_fit(X[100:200], y[100:200])
    with pytest.raises(ValueError, match=r"params.schedule=None \('adagrad' with the other parameters\) but "
                                         "the kernel was fitted with schedule='normalized'"):
        clf.set_params(batch_size=2).partial_fit(X[100:200], y[100:200])   # the defaults for batches
    ada = ProxClassifier(schedule="adagrad", alpha=1e-6).partial_fit(X[:100], y[:100], classes=[0, 1])
    ada.set_params(eta0="auto", delta=ada.delta_).partial_fit(X[100:200], y[100:200])
    with pytest.raises(ValueError, match="params.eta0=0.5 but the kernel was fitted with eta0="):
        ada.set_params(eta0=0.5).partial_fit(X[100:200], y[100:200])
    assert ada.t_ == 200


def test_continuing_refuses_changed_groups():
    X, y = text_like()
    groups = np.arange(300) % 7
    clf = ProxClassifier(penalty="l1_l2", schedule="invsqrt", groups=groups).fit(X, y)
    clf.set_params(groups=groups.tolist()).partial_fit(X, y)         # the same ids
    with pytest.raises(ValueError, match="params.groups differs from the kernel's groups"):
        clf.set_params(groups=np.arange(300) % 5).partial_fit(X, y)
    with pytest.raises(ValueError, match="params.group_weights differs"):
        clf.set_params(groups=groups, group_weights=np.ones(7)).partial_fit(X, y)

GROUP_WEIGHT_RULES = {
    "fobos-rows-l1_l2": dict(schedule="invsqrt", penalty="l1_l2"),
    "fobos-users-squared_group": dict(schedule="constant", penalty="squared_group", eta0=0.1,
                                      groups=np.arange(300) % 7 - 1),
    "rda-adagrad-users-sparse_group": dict(update="rda", schedule="adagrad", penalty="sparse_group",
                                           groups=np.arange(300) % 7 - 1),
}


@pytest.mark.parametrize("params", GROUP_WEIGHT_RULES.values(), ids=GROUP_WEIGHT_RULES.keys())
def test_group_weights_partial_fit_pickled_equals_one_pass(params):
    """With group weights (zeros included), partial_fit in pieces, pickled between calls,
    equals one unshuffled pass bit for bit; the weights change the model."""
    X, y = text_like(classes=4)
    n_groups = 300 if "groups" not in params else 6
    weights = np.linspace(0.0, 3.0, n_groups)
    common = dict(multi_class="multinomial", alpha=1e-2, group_weights=weights, **params)
    one = ProxClassifier(shuffle=False, **common).fit(X, y)
    inc = ProxClassifier(**{**common, "eta0": one.eta0_, "delta": one.delta_})
    for lo, hi in [(0, 10), (10, 150)]:
        inc.partial_fit(X[lo:hi], y[lo:hi], classes=np.unique(y))
        inc = pickle.loads(pickle.dumps(inc))
    inc.partial_fit(X[150:], y[150:])
    assert np.array_equal(inc.coef_, one.coef_)
    assert np.array_equal(inc.intercept_, one.intercept_)
    unweighted = ProxClassifier(shuffle=False, **dict(common, group_weights=None)).fit(X, y)
    assert not np.array_equal(unweighted.coef_, one.coef_)


def test_beta_weighs_group_norms():
    """squared_group's beta_ = d_G ||W_G|| / sum_H d_H ||W_H||: on the simplex, 0 for a
    group of weight 0, ||W_G|| / sum ||W_H|| without weights."""
    X, y = text_like(classes=3)
    groups = np.arange(300) % 4
    weights = np.array([0.0, 0.5, 1.0, 2.0])
    params = dict(penalty="squared_group", schedule="invsqrt", alpha=1e-3, multi_class="multinomial",
                  groups=groups)
    weighted = ProxClassifier(group_weights=weights, **params).fit(X, y)
    norms = weighted.group_norms_
    assert np.all(norms > 0)
    np.testing.assert_allclose(weighted.beta_, weights * norms / np.sum(weights * norms), rtol=1e-12)
    assert weighted.beta_[0] == 0 and weighted.beta_.sum() == pytest.approx(1.0)
    plain = ProxClassifier(**params).fit(X, y)
    np.testing.assert_allclose(plain.beta_, plain.group_norms_ / plain.group_norms_.sum(), rtol=1e-12)


def test_regressor_learns_a_linear_target():
    rng = np.random.default_rng(0)
    X = sp.random(3000, 50, density=0.2, format="csr", random_state=rng)
    w = rng.normal(size=50)
    y = X @ w + 0.5
    reg = ProxRegressor(alpha=0.0, max_iter=5).fit(X, y)
    assert reg.score(X, y) > 0.95


@pytest.mark.parametrize("fmt", ["csr", "coo"])
def test_a_wider_chunk_names_grow_features(fmt):
    """A stream's later chunk wider than its first is refused naming the fix (the
    message was scikit-learn's, without it)."""
    model = ProxClassifier().partial_fit(sp.random(20, 6, density=0.5, format="csr", random_state=0),
                                         np.arange(20) % 2, classes=[0, 1])
    with pytest.raises(ValueError, match="X has 8 features, but ProxClassifier is expecting 6 .*grow_features=True"):
        model.partial_fit(sp.random(20, 8, density=0.5, format=fmt, random_state=0), np.arange(20) % 2)
    grown = ProxClassifier(grow_features=True).partial_fit(sp.random(20, 6, density=0.5, format="csr", random_state=0),
                                                          np.arange(20) % 2, classes=[0, 1])
    assert grown.partial_fit(sp.random(20, 8, density=0.5, format=fmt, random_state=0), np.arange(20) % 2).t_ == 40


@pytest.mark.parametrize("Est", [ProxClassifier, ProxRegressor])
@pytest.mark.parametrize("call", ["fit", "partial_fit"])
def test_labels_of_none_are_refused_as_scikit_learn_refuses_them(Est, call):
    """y=None raised AttributeError ('NoneType' object has no attribute 'dtype') or
    TypeError; scikit-learn's estimators raise this ValueError."""
    X = sp.random(20, 6, density=0.5, format="csr", random_state=0)
    with pytest.raises(ValueError, match=f"This {Est.__name__} estimator requires y to be passed, but the target"):
        getattr(Est(), call)(X, None, **({"classes": [0, 1]} if call == "partial_fit" and Est is ProxClassifier
                                          else {}))


@pytest.mark.parametrize("Est", [ProxClassifier, ProxRegressor])
def test_writes_to_coef_and_intercept_raise_instead_of_being_lost(Est):
    """coef_ (dense or sparsified) and intercept_ are copies of the kernel's state:
    writing into them, or assigning them (scikit-learn's SGD habit), raises, and
    the model is unchanged."""
    X = sp.random(60, 8, density=0.4, format="csr", random_state=0)
    model = Est(random_state=0).fit(X, np.arange(60) % 2)
    before = model.decision_function(X) if Est is ProxClassifier else model.predict(X)
    with pytest.raises(ValueError, match="read-only"):
        model.coef_[0, 0] = 1.0
    with pytest.raises(ValueError, match="read-only"):
        model.intercept_[0] = 1.0
    with pytest.raises(AttributeError, match="coef_ is read from the model's state.*warm_start"):
        model.coef_ = np.zeros((1, 8))
    with pytest.raises(AttributeError, match="intercept_ is read from the model's state.*warm_start"):
        model.intercept_ = np.zeros(1)
    with pytest.raises(ValueError, match="read-only"):
        model.sparsify().coef_[0, 0] = 1.0      # a CSR copy too
    after = model.densify().decision_function(X) if Est is ProxClassifier else model.densify().predict(X)
    np.testing.assert_array_equal(after, before)
    model.coef_.copy()[0, 0] = 1.0              # a copy is the caller's own


@pytest.mark.parametrize("first, later, named", [
    ([0, 1], [0, 7], r"\[7\] not in classes_ \[0, 1\]"),
    (["ham", "spam"], ["ham", "eggs"], r"\['eggs'\] not in classes_ \['ham', 'spam'\]"),
    ([0, 1, 2], [5, 0], r"\[5\] not in classes_ \[0, 1, 2\]"),
])
def test_an_unknown_label_is_named_as_given_with_the_fix(first, later, named):
    """A label outside the model's classes (partial_fit, a warm start) is named as
    the caller wrote it (7, not 7.0) beside the classes, with how to train on it."""
    X = sp.random(30, 5, density=0.5, format="csr", random_state=0)
    model = ProxClassifier().partial_fit(X, np.array(first)[np.arange(30) % len(first)], classes=first)
    with pytest.raises(ValueError, match=named + r": .*first partial_fit's classes.*warm_start=False"):
        model.partial_fit(X[:2], np.array(later))
    with pytest.raises(ValueError, match=named):
        model.set_params(warm_start=True).fit(X[:2], np.array(later))


@pytest.mark.parametrize("name", ["coef_", "intercept_", "n_nonzero_rows_", "group_norms_", "eta0_", "t0_", "delta_",
                                  "schedule_", "step_"])
def test_every_fitted_attribute_of_an_unfitted_estimator_raises_not_fitted(name):
    """Reading a fitted attribute before fit raises NotFittedError, which hasattr
    reads as absent (n_nonzero_rows_ raised AttributeError naming the private
    _learner)."""
    from sklearn.exceptions import NotFittedError
    with pytest.raises(NotFittedError):
        getattr(ProxClassifier(), name)


@pytest.mark.parametrize("name", ["fit_intercept", "shuffle", "warm_start", "grow_features", "early_stopping"])
@pytest.mark.parametrize("value", ["no", 0, None])
def test_a_flag_is_true_or_false(name, value):
    """A flag that is not a bool raises ValueError naming it: fit_intercept="no",
    shuffle="no" and warm_start="no" were truthy, and trained as True."""
    X = sp.random(20, 4, density=0.5, format="csr", random_state=0)
    for Est in (ProxClassifier, ProxRegressor):
        with pytest.raises(ValueError, match=f"{name}={value!r} must be True or False"):
            Est(**{name: value}).fit(X, np.arange(20) % 2)
    ProxClassifier(**{name: np.bool_(False)}).fit(X, np.arange(20) % 2)     # NumPy's bools are bools


@pytest.mark.parametrize("batch_size", [1, 7])
def test_csr_arrays_at_unaligned_addresses_train_and_predict_as_aligned(batch_size):
    """The streaming trainer could not rebuild row pointers from unaligned buffers
    (fastprox.dask copies its blocks'); the flat estimators' fit, partial_fit and
    predict take such a CSR as the same rows aligned, bit for bit."""
    X = sp.random(60, 8, density=0.4, format="csr", random_state=0)
    y = np.arange(60) % 3
    odd = sp.csr_matrix((unaligned(X.data), unaligned(X.indices), unaligned(X.indptr)), shape=X.shape)
    for make in (lambda: ProxClassifier(batch_size=batch_size, random_state=0, max_iter=2),
                 lambda: ProxRegressor(batch_size=batch_size, random_state=0, max_iter=2)):
        fitted = [make().fit(rows, y) for rows in (X, odd)]
        streamed = [make().partial_fit(rows, y, **({} if isinstance(fitted[0], ProxRegressor) else
                                                    {"classes": [0, 1, 2]})) for rows in (X, odd)]
        for a, b in (fitted, streamed):
            assert a.coef_.tobytes() == b.coef_.tobytes() and a.intercept_.tobytes() == b.intercept_.tobytes()
            assert a.predict(odd).tobytes() == a.predict(X).tobytes()
