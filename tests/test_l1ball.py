"""L1BallClassifier: the weights never leave the l1-ball, and it learns."""
import numpy as np
import pytest
import scipy.sparse as sp

from fastprox.l1ball import L1BallClassifier


def separable(n=400, d=50, seed=0):
    """Sparse rows labelled by the sign of two features: separable with ||w||_1 = 2."""
    rng = np.random.default_rng(seed)
    X = sp.random(n, d, density=0.2, random_state=seed, format="lil", data_rvs=rng.standard_normal)
    X[:, 0] = rng.choice([-1.0, 1.0], n)[:, None]
    X[:, 1] = rng.uniform(0.2, 1.0, n)[:, None] * X[:, 0].toarray()
    y = np.where(X[:, 0].toarray().ravel() > 0, "spam", "ham")
    return sp.csr_matrix(X), y


@pytest.mark.parametrize("loss", ["hinge", "log"])
def test_weights_stay_in_the_ball_and_it_learns(loss):
    X, y = separable()
    radius = 3.0
    model = L1BallClassifier(radius=radius, loss=loss, eta0=1.0, random_state=0)
    model.partial_fit(X[:1], y[:1], classes=["ham", "spam"])
    for i in range(1, X.shape[0]):  # check the constraint after every step
        model.partial_fit(X[i:i + 1], y[i:i + 1])
        assert np.abs(model.coef_).sum() <= radius * (1 + 1e-9)
    model = L1BallClassifier(radius=radius, loss=loss, eta0=1.0, max_iter=5, random_state=0).fit(X, y)
    assert np.abs(model.coef_).sum() <= radius * (1 + 1e-9)
    assert list(model.classes_) == ["ham", "spam"]
    assert (model.predict(X) == y).mean() >= 0.97
    assert model.coef_.shape == (1, X.shape[1]) and model.intercept_.shape == (1,)


def test_small_radius_binds():
    X, y = separable()
    model = L1BallClassifier(radius=0.1, eta0=1.0, max_iter=3, random_state=0).fit(X.toarray(), y)
    assert np.abs(model.coef_).sum() == pytest.approx(0.1, rel=1e-9)


@pytest.mark.parametrize("params", [{"radius": 0}, {"loss": "squared"}, {"eta0": -1},
                                    {"schedule": "adagrad"}, {"max_iter": 0}, {"radius": "1"}, {"eta0": "1"},
                                    {"eta0": float("inf")}, {"max_iter": True}, {"max_iter": 2.0},
                                    {"fit_intercept": "no"}, {"shuffle": None}, {"random_state": "a"},
                                    {"random_state": 1.5}, {"random_state": -1}])
def test_bad_parameters(params):
    """Each refused with ValueError naming it (a string, an infinite step, a bool
    count or a truthy string flag was taken, or failed in Python's comparisons)."""
    X, y = separable(n=20)
    with pytest.raises(ValueError, match=next(iter(params))):
        L1BallClassifier(**params).fit(X, y)


@pytest.mark.parametrize("seed", range(5))
def test_fit_shuffles_as_numpy_default_rng_of_its_seed(seed):
    """A seed's shuffle is default_rng(seed)'s permutation (the order fit's models
    had before its seeds were checked): fit is one partial_fit pass in that order."""
    X, y = separable(n=40)
    fitted = L1BallClassifier(eta0=1.0, random_state=seed).fit(X, y)
    order = np.random.default_rng(seed).permutation(len(y))
    replayed = L1BallClassifier(eta0=1.0).partial_fit(X[order], y[order], classes=np.unique(y))
    assert fitted.coef_.tobytes() == replayed.coef_.tobytes()
    assert fitted.intercept_.tobytes() == replayed.intercept_.tobytes()


def test_needs_two_classes_and_fitting():
    X, y = separable(n=20)
    with pytest.raises(ValueError, match="2 classes"):
        L1BallClassifier().fit(X, np.zeros(20))
    with pytest.raises(ValueError, match="not fitted"):
        L1BallClassifier().predict(X)
    with pytest.raises(ValueError, match="classes"):
        L1BallClassifier().partial_fit(X, y)


def test_a_scikit_learn_estimator_in_a_grid_search():
    """get_params, clone and set_params (scikit-learn's BaseEstimator), score
    (ClassifierMixin): a pipeline's grid search over the radius fits, refits, scores
    and pickles it."""
    import pickle
    from sklearn.model_selection import GridSearchCV
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import MaxAbsScaler
    X, y = separable()
    search = GridSearchCV(make_pipeline(MaxAbsScaler(), L1BallClassifier(eta0=1.0, max_iter=3, random_state=0)),
                          {"l1ballclassifier__radius": [0.01, 3.0]}, cv=3).fit(X, y)
    assert search.best_params_ == {"l1ballclassifier__radius": 3.0}
    assert search.score(X, y) >= 0.97
    best = search.best_estimator_[-1]
    assert np.abs(best.coef_).sum() <= 3.0 * (1 + 1e-9)
    again = pickle.loads(pickle.dumps(search.best_estimator_))
    assert (again.predict(X) == search.predict(X)).all()


def test_every_scikit_learn_check_passes():
    """scikit-learn's estimator checks, as a binary-only classifier of sparse input
    (its tags): X validated as its peers validate it (NaN and infinity refused at
    prediction too, n_features_in_ and feature names checked), NotFittedError,
    continuous labels refused as such, n_iter_."""
    from sklearn.utils.estimator_checks import check_estimator
    results = check_estimator(L1BallClassifier(), on_fail=None)
    failed = [(r["check_name"], str(r["exception"])[:300]) for r in results if r["status"] == "failed"]
    assert not failed, failed


def test_a_non_canonical_input_is_left_as_given():
    """Unsorted indices are sorted in a copy: the caller's matrix is not changed."""
    X, y = separable(n=50)
    X = sp.csr_matrix(X)
    X.indices[X.indptr[0]:X.indptr[1]] = X.indices[X.indptr[0]:X.indptr[1]][::-1].copy()
    X.has_sorted_indices = False
    before = X.indices.copy()
    L1BallClassifier(random_state=0).fit(X, y).predict(X)
    np.testing.assert_array_equal(X.indices, before)


def test_pickled_mid_stream_it_continues_bit_for_bit():
    """A classifier pickled (or deep-copied) between partial_fit calls trains on as
    the original does, to the last bit (the ball's exact state is pickled)."""
    import copy
    import pickle
    X, y = separable()
    model = L1BallClassifier(radius=1.0, eta0=1.0, random_state=0).fit(X[:200], y[:200])
    twins = [pickle.loads(pickle.dumps(model)), copy.deepcopy(model)]
    for m in [model] + twins:
        m.partial_fit(X[200:], y[200:])
    for twin in twins:
        np.testing.assert_array_equal(twin.coef_, model.coef_)
        np.testing.assert_array_equal(twin.intercept_, model.intercept_)


def test_coef_is_the_state_training_continues_from():
    """coef_ is read from the ball: a write into it or an assignment raises, instead
    of changing the predictions until the next partial_fit silently undoes it."""
    X, y = separable(n=50)
    model = L1BallClassifier(random_state=0).fit(X, y)
    before = model.decision_function(X)
    with pytest.raises(ValueError, match="read-only"):
        model.coef_[0, 0] = 5.0
    with pytest.raises(AttributeError, match="coef_ is read from the ball's state"):
        model.coef_ = np.zeros((1, X.shape[1]))
    np.testing.assert_array_equal(model.decision_function(X), before)


def test_partial_fits_from_threads_take_turns_and_reads_see_whole_steps():
    """Four threads' partial_fit of the same rows at once, while a fifth pickles and
    predicts: each call must run alone (any order then gives the model of four calls
    in a row), and each read see a model between two steps. Before, the calls
    interleaved their rows (every row counted in t_, the model another's) and
    pickles could pair one step's ball with another's intercept."""
    import pickle
    import threading
    X, y = separable(n=200, d=30, seed=1)
    for repeat in range(2):
        shared = L1BallClassifier(radius=2.0).partial_fit(X[:10], y[:10], classes=["ham", "spam"])
        serial = L1BallClassifier(radius=2.0).partial_fit(X[:10], y[:10], classes=["ham", "spam"])
        for _ in range(4):
            serial.partial_fit(X, y)
        start, done, snapshots = threading.Barrier(5), threading.Event(), []

        def train():
            start.wait()
            shared.partial_fit(X, y)

        def read():
            start.wait()
            while not done.is_set():
                snapshots.append(pickle.loads(pickle.dumps(shared)))
                shared.predict(X[:5])

        threads = [threading.Thread(target=train) for _ in range(4)] + [threading.Thread(target=read)]
        for thread in threads:
            thread.start()
        for thread in threads[:4]:
            thread.join()
        done.set()
        threads[4].join()
        assert shared.t_ == serial.t_ == 10 + 4 * X.shape[0]
        np.testing.assert_array_equal(shared.coef_, serial.coef_)
        np.testing.assert_array_equal(shared.intercept_, serial.intercept_)
        for snapshot in snapshots[::max(1, len(snapshots) // 8)]:    # a step of the serial run
            replay = L1BallClassifier(radius=2.0).partial_fit(X[:10], y[:10], classes=["ham", "spam"])
            rows = snapshot.t_ - 10
            for _ in range(rows // X.shape[0]):
                replay.partial_fit(X, y)
            if rows % X.shape[0]:
                replay.partial_fit(X[:rows % X.shape[0]], y[:rows % X.shape[0]])
            np.testing.assert_array_equal(snapshot.coef_, replay.coef_)
            np.testing.assert_array_equal(snapshot.intercept_, replay.intercept_)


def test_a_radius_changed_between_partial_fits_is_refused():
    """set_params(radius=...) between partial_fit calls was silently ignored (the ball
    keeps the radius it was made with): the model went on in the old ball. It is refused
    now, as ProxClassifier refuses a changed kernel parameter, and fit takes the new one."""
    X, y = separable()
    model = L1BallClassifier(radius=1.0, random_state=0).partial_fit(X[:200], y[:200], classes=np.unique(y))
    before = model.coef_.copy()
    model.set_params(radius=0.5)
    with pytest.raises(ValueError, match=r"radius=0.5 but its ball was made with radius=1.0; fit anew, or "
                                         r"set_params\(radius=1.0\)"):
        model.partial_fit(X[200:], y[200:])
    np.testing.assert_array_equal(model.coef_, before)
    assert np.abs(model.fit(X, y).coef_).sum() <= 0.5 + 1e-12
    model.set_params(radius=0.5).partial_fit(X[200:], y[200:])
