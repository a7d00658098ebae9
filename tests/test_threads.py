"""The concurrency contract (`fastprox._concurrency`): an estimator shared between
threads never crashes, never corrupts its model and never drops rows. Training
calls take turns; reads (predict, coef_, pickling, save_model) see the model of a
sequential run stopped at some completed step: a call boundary, or a pause at a
multiple of 65,536 rows into a call."""
import copy
import io
import pickle
import threading
import time

import numpy as np
import pytest
import scipy.sparse as sp

from fastprox import ProxClassifier, ProxRegressor, load_model, save_model

SIGNAL_ROWS = 1 << 16
CHUNK = 100_000         # rows per partial_fit call: one pause inside each (at 65,536)
CHUNKS = 3
D = 40

GROUPS = np.arange(D) % 8 - 1           # user groups 0..6, and -1 (unpenalized)
RULES = {
    "fobos-l1": dict(update="fobos", schedule="invsqrt", penalty="l1", alpha=1e-5),
    "fobos-adagrad-elasticnet": dict(update="fobos", schedule="adagrad", penalty="elasticnet"),
    "rda-adagrad-l1": dict(update="rda", schedule="adagrad", penalty="l1", alpha=1e-5),
    "ftrl-l1": dict(update="ftrl", schedule="adagrad", penalty="l1", alpha=1e-5),
    "berhu": dict(update="fobos", schedule="invsqrt", penalty="berhu", alpha=1e-3, berhu_gamma=0.05),
    "fobos-groups": dict(update="fobos", schedule="invsqrt", penalty="l1_l2", alpha=1e-4, groups=GROUPS),
    "rda-groups": dict(update="rda", schedule="invsqrt", penalty="l1_l2", alpha=1e-4, groups=GROUPS),
    "squared-group": dict(update="fobos", schedule="constant", penalty="squared_group", alpha=1e-4,
                          groups=GROUPS),
    "multinomial-l1_l2": dict(update="fobos", schedule="invsqrt", penalty="l1_l2", alpha=1e-4,
                              multi_class="multinomial"),
    "regression-ftrl": dict(update="ftrl", schedule="adagrad", penalty="l1", alpha=1e-5),
}


def stream(rule, n=CHUNK * CHUNKS, seed=0):
    """n sparse rows (4 non-zeros over D columns) with labels of the rule's kind."""
    rng = np.random.default_rng(seed)
    indices = np.sort(rng.choice(D, size=(n, 4), replace=True), axis=1)
    cols = np.where(np.diff(indices, axis=1, prepend=-1) == 0, -1, indices)   # drop repeats
    keep = cols >= 0
    X = sp.csr_matrix((rng.uniform(0.5, 1.5, keep.sum()), cols[keep],
                       np.r_[0, np.cumsum(keep.sum(axis=1))]), shape=(n, D))
    w = rng.normal(size=D)
    score = X @ w
    if rule == "regression-ftrl":
        return X, score + rng.normal(size=n)
    if rule == "multinomial-l1_l2":
        return X, np.digitize(score, np.quantile(score, [0.25, 0.5, 0.75]))
    return X, np.where(score > np.median(score), 1, -1)


def estimator(rule):
    params = dict(RULES[rule], eta0=0.1, delta=1.0)
    return ProxRegressor(**params) if rule == "regression-ftrl" else ProxClassifier(**params)


def train(est, X, y, start=0, stop=None):
    """partial_fit over rows start..stop of X (stop: all) in the stream's calls, which
    end at the multiples of CHUNK."""
    classes = None if isinstance(est, ProxRegressor) else np.unique(y)
    stop = X.shape[0] if stop is None else stop
    bounds = [start] + [b for b in range(CHUNK, stop, CHUNK) if b > start] + [stop]
    for lo, hi in zip(bounds, bounds[1:]):
        if lo == hi:
            continue
        if classes is None:
            est.partial_fit(X[lo:hi], y[lo:hi])
        else:
            est.partial_fit(X[lo:hi], y[lo:hi], classes=classes)
    return est


def read_points():
    """The step counts at which reads may see the model: call boundaries and pauses."""
    points = set()
    for lo in range(0, CHUNK * CHUNKS, CHUNK):
        points.update(lo + p for p in range(SIGNAL_ROWS, CHUNK, SIGNAL_ROWS))
        points.add(lo + CHUNK)
    return sorted(points)


def model(est):
    return np.asarray(est.coef_).tobytes() + np.asarray(est.intercept_).tobytes()


@pytest.fixture(scope="module")
def references():
    """rule -> (X, y, {t: (model bytes, test scores)} of sequential runs stopped at t)."""
    out = {}
    for rule in RULES:
        X, y = stream(rule)
        X_test = X[:500]
        refs = {}
        for t in read_points():
            est = train(estimator(rule), X, y, stop=t)
            refs[t] = (model(est), _scores(est, X_test).tobytes())
        out[rule] = (X, y, refs)
    return out


def _scores(est, X):
    return est.predict(X) if isinstance(est, ProxRegressor) else est.decision_function(X)


@pytest.mark.parametrize("rule", list(RULES))
def test_reads_during_partial_fit_see_a_completed_step(rule, references):
    """Readers predicting, reading coef_ and pickling while another thread trains:
    every read matches a sequential run stopped at a read point, the pickles load
    with t_ equal to their kernel's steps, and the trained model is the sequential
    one bit for bit (no scratch space shared between a read and a step)."""
    X, y, refs = references[rule]
    X_test = X[:500]
    est = estimator(rule)
    train(est, X[:CHUNK], y[:CHUNK])           # a first call, so that reads have a model
    scores, pickles, coefs = [], [], []
    done = threading.Event()

    def reader(kind):
        while not done.is_set():
            if kind == 0:
                scores.append(_scores(est, X_test).tobytes())
            elif kind == 1:
                pickles.append(pickle.dumps(est))
            else:
                coefs.append(np.asarray(est.coef_).tobytes())   # a read each: coef_ alone

    readers = [threading.Thread(target=reader, args=(k,)) for k in range(3)]
    for r in readers:
        r.start()
    try:
        train(est, X, y, start=CHUNK)
    finally:
        done.set()
        for r in readers:
            r.join()
    assert est.t_ == CHUNK * CHUNKS
    assert model(est) == refs[CHUNK * CHUNKS][0]
    valid_scores = {s for _, s in refs.values()}
    valid_models = {m: t for t, (m, _) in refs.items()}
    valid_coefs = {m[:-8 * len(np.atleast_1d(est.intercept_))] for m in valid_models}
    assert scores and pickles and coefs
    assert all(s in valid_scores for s in scores)
    assert all(c in valid_coefs for c in coefs)
    for blob in pickles[:: max(1, len(pickles) // 20)]:
        snap = pickle.loads(blob)
        assert snap.t_ == snap._learner.t
        assert valid_models.get(model(snap)) == snap.t_


@pytest.mark.parametrize("rule", ["berhu", "fobos-groups", "ftrl-l1"])
def test_checkpoints_during_training_train_on_to_the_sequential_model(rule, references, tmp_path):
    """Pickles and model files taken while another thread trains (Berhu's heap
    included) are models of a completed step: trained on from there over the rest
    of the stream they give the sequential model, bit for bit."""
    X, y, refs = references[rule]
    est = estimator(rule)
    train(est, X[:CHUNK], y[:CHUNK])
    blobs, files = [], []
    done = threading.Event()

    def checkpoint():
        while not done.is_set():
            blobs.append(pickle.dumps(est))
            path = tmp_path / f"m{len(files)}.npz"
            save_model(est, path)
            files.append(path)

    thread = threading.Thread(target=checkpoint)
    thread.start()
    try:
        train(est, X, y, start=CHUNK)
    finally:
        done.set()
        thread.join()
    restored = [pickle.loads(b) for b in blobs[:: max(1, len(blobs) // 4)]]
    restored += [load_model(f) for f in files[:: max(1, len(files) // 4)]]
    for snap in restored:
        t = snap.t_
        assert t in refs and model(snap) == refs[t][0]
        train(snap, X, y, start=t)          # on to the end, in the stream's calls
        assert snap.t_ == CHUNK * CHUNKS
        assert model(snap) == model(est)


@pytest.mark.parametrize("rule", ["fobos-l1", "rda-groups"])
def test_two_first_partial_fits_from_two_threads_keep_every_row(rule):
    """Two threads each start a stream on the same fresh estimator: the calls take
    turns, so every row is trained and the model is one of the two orders'."""
    X, y = stream(rule, n=2 * CHUNK)
    halves = [(X[:CHUNK], y[:CHUNK]), (X[CHUNK:], y[CHUNK:])]
    classes = np.unique(y)
    for _ in range(3):
        est = estimator(rule)
        start = threading.Barrier(2)

        def fit(part):
            start.wait()
            est.partial_fit(*halves[part], classes=classes)

        threads = [threading.Thread(target=fit, args=(p,)) for p in (0, 1)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert est.t_ == 2 * CHUNK
        orders = []
        for first, second in ((0, 1), (1, 0)):
            ref = estimator(rule)
            ref.partial_fit(*halves[first], classes=classes)
            ref.partial_fit(*halves[second])
            orders.append(model(ref))
        assert model(est) in orders


def test_a_fit_inside_a_read_of_the_same_model_raises():
    """A training call from a thread that reads the same model would wait for
    itself: it raises RuntimeError instead of hanging."""
    from fastprox._concurrency import lock_of
    X, y = stream("fobos-l1", n=100)
    est = estimator("fobos-l1").fit(X, y)
    with lock_of(est).reading():
        with pytest.raises(RuntimeError, match="reads the same model"):
            est.partial_fit(X, y)
        assert est.predict(X).shape == (100,)        # a read inside a read runs at once


def test_a_shallow_copy_has_a_lock_of_its_own():
    """copy.copy kept the original's ModelLock in the copy's __dict__: the two models
    took turns with each other's calls, and fitting the copy inside a read of the
    original raised 'reads the same model'. A copy is another model, with its own
    lock (as a deep copy, a pickle and the structured estimators' copies are)."""
    import copy
    from fastprox._concurrency import lock_of
    X, y = stream("fobos-l1", n=100)
    for est in (estimator("fobos-l1").fit(X, y), estimator("fobos-l1").partial_fit(X, y, classes=[-1, 1])):
        lock_of(est)
        twin = copy.copy(est)
        with lock_of(est).reading():
            twin.partial_fit(X, y)
        assert lock_of(twin) is not lock_of(est) and twin.t_ == est.t_ + 100


def test_pickles_during_a_multi_pass_warm_fit_are_completed_steps(references):
    """Pickles taken during a warm-started fit of three passes are models of a pause
    (65,536 rows into a pass) or of a pass's end, with t_ their kernel's steps."""
    X, y, _ = references["fobos-l1"]
    est = ProxClassifier(**RULES["fobos-l1"], eta0=0.1, delta=1.0, max_iter=3, shuffle=False)
    est.fit(X[:CHUNK], y[:CHUNK])
    est.set_params(warm_start=True)
    base = est.t_
    saved = []
    done = threading.Event()

    def save():
        while not done.is_set():
            buf = io.BytesIO()
            pickle.dump(est, buf)
            saved.append(buf.getvalue())

    thread = threading.Thread(target=save)
    thread.start()
    try:
        est.fit(X, y)
    finally:
        done.set()
        thread.join()
    for blob in saved:
        snap = pickle.loads(blob)
        assert snap.t_ == snap._learner.t
        assert ((snap.t_ - base) % X.shape[0]) % SIGNAL_ROWS == 0      # a pause or a pass's end


SMALL = 50          # rows per call of the tight training loop: far from any pause
READERS = {
    "predict": lambda est, X, path: est.predict(X),
    "decision_function": lambda est, X, path: est.decision_function(X),
    "predict_proba": lambda est, X, path: est.predict_proba(X),
    "coef_": lambda est, X, path: est.coef_,
    "intercept_": lambda est, X, path: est.intercept_,
    "n_nonzero_rows_": lambda est, X, path: est.n_nonzero_rows_,
    "pickle": lambda est, X, path: pickle.dumps(est),
    "deepcopy": lambda est, X, path: copy.deepcopy(est),
    "save_model": lambda est, X, path: save_model(est, path),
}


def test_reads_wait_for_one_call_however_training_calls_follow_each_other(tmp_path):
    """A thread calls partial_fit on small chunks (no pause inside a call) in a
    tight loop while a reader of every kind reads over and over: each read waits
    for the call in progress at most (counted in steps, from the read's arrival
    to its start), and each training call for at most one read per reader (those
    that arrived before it), so that both make progress however the calls follow
    each other."""
    from fastprox._concurrency import lock_of
    X, y = stream("fobos-l1", n=200 * SMALL)
    chunks = [(X[i:i + SMALL], y[i:i + SMALL]) for i in range(0, X.shape[0], SMALL)]
    est = ProxClassifier(loss="log", eta0=0.1)
    est.partial_fit(*chunks[0], classes=np.unique(y))
    lock, local = lock_of(est), threading.local()
    admitted = []                       # a mark per read started (append is atomic)
    read_waits = {name: [] for name in READERS}
    call_waits = []
    ticket, begin_reading, begin_training = lock._ticket, lock._begin_reading, lock._begin_training

    def arrive():                       # inside the lock: the arrival's step count and reads
        local.steps, local.reads = est._learner.t, len(admitted)
        return ticket()

    def read():
        begin_reading()
        read_waits[local.name].append(est._learner.t - local.steps)
        admitted.append(None)

    def train():
        begin_training()
        call_waits.append(len(admitted) - local.reads)

    lock._ticket, lock._begin_reading, lock._begin_training = arrive, read, train
    reading = threading.Barrier(len(READERS) + 1)
    stop = threading.Event()

    def reader(name):
        local.name = name
        reading.wait()
        for _ in range(20):
            READERS[name](est, X[:20], tmp_path / f"{name}.npz")

    def trainer():
        reading.wait()
        for k in range(20_000):         # bounded: starved readers fail the test, not hang it
            if stop.is_set():
                return
            est.partial_fit(*chunks[k % len(chunks)])

    threads = [threading.Thread(target=reader, args=(name,)) for name in READERS]
    training = threading.Thread(target=trainer)
    for thread in threads + [training]:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)            # a guard against a hang, not a timing
    stop.set()
    training.join(timeout=120)
    assert not any(thread.is_alive() for thread in threads + [training])
    worst = max(max(waits) for waits in read_waits.values())
    print(f"worst read wait: {worst} steps (a call is {SMALL}); worst call wait: {max(call_waits)} reads")
    assert all(len(waits) == 20 for waits in read_waits.values())
    assert worst <= SMALL
    assert len(call_waits) > 1 and max(call_waits) <= len(READERS)


@pytest.mark.usefixtures("ctrl_c")
def test_ctrl_c_at_a_pause_ends_the_call_after_the_reads_it_let_run():
    """Ctrl-C while a fit pauses for a read ends the fit once that read has ended: the
    interrupted fit puts the estimator back as it was, which the read must not see
    half done (the fit used to go on at once, and the read saw the previous learner
    put back under it). The fit has passes enough to pause until the read arrives.
    The read presses Ctrl-C (interrupt_main) and wakes the pause's wait, so the
    KeyboardInterrupt is raised there: a real SIGINT wakes it too, but one that
    lands just before the wait blocks is left pending until the wait ends."""
    import _thread
    from fastprox._concurrency import lock_of
    X, y = stream("fobos-l1", n=1000)
    est = ProxClassifier().fit(X, y).set_params(max_iter=10**6, tol=None)
    old = est._learner
    lock = lock_of(est)
    seen = []

    def reader():
        while est.__dict__.get("_learner", old) is old:     # the fit has its learner
            time.sleep(1e-4)
        with lock.reading():                                # at the fit's next pause
            learner = est._learner
            _thread.interrupt_main()
            with lock._cond:
                lock._cond.notify_all()
            while not lock._stepping and est.__dict__.get("_learner") is learner:
                time.sleep(1e-4)
            seen.append(est.__dict__.get("_learner") is learner)

    thread = threading.Thread(target=reader)
    thread.start()
    with pytest.raises(KeyboardInterrupt):
        est.fit(X, y)
    thread.join()
    assert seen == [True]
    assert est._learner.t == old.t and np.array_equal(est.coef_, old.coef())


@pytest.mark.usefixtures("ctrl_c")
@pytest.mark.parametrize("train", [False, True], ids=["read", "training call"])
def test_ctrl_c_while_waiting_for_the_model_leaves_no_ticket_behind(train):
    """A read or a training call interrupted (Ctrl-C) while it waits for the model held
    by another thread's training call leaves the queue: that call pauses and ends, and
    the calls after are served. Its ticket, left behind, had the pause (for a read),
    or every later call (for a training call), wait for it for ever. Ctrl-C is
    pressed once the waiter sleeps in the wait (the presser holds the lock it
    releases there), and wakes it, as a real SIGINT does."""
    import _thread
    from fastprox._concurrency import ModelLock
    lock = ModelLock()
    held, go = threading.Event(), threading.Event()

    def trainer():
        with lock.training():
            held.set()
            go.wait()
            lock.pause()

    def press():
        while not (lock._queued if train else lock._waiting):
            time.sleep(1e-4)
        with lock._cond:                # the waiter is in the wait, which released it
            _thread.interrupt_main()
            lock._cond.notify_all()

    def later():
        with lock.training():
            pass
        with lock.reading():
            pass

    threads = [threading.Thread(target=trainer, daemon=True), threading.Thread(target=press, daemon=True)]
    for thread in threads:
        thread.start()
    held.wait()
    with pytest.raises(KeyboardInterrupt):
        with lock.training() if train else lock.reading():
            pass
    go.set()
    threads.append(threading.Thread(target=later, daemon=True))
    threads[-1].start()
    for thread in threads:
        thread.join(timeout=60)         # a guard against a hang, not a timing
    assert not [thread for thread in threads if thread.is_alive()], "a call waits for the interrupted one"
    assert not lock._queued and not lock._waiting and lock._trainer is None
