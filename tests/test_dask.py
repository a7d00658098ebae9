"""fastprox.dask on a real cluster: a distributed.LocalCluster of two worker
processes (one thread each), made once for the module; small data, each test
a few seconds at most."""
import importlib
import logging
import os
import pickle
import socket
import subprocess
import sys
import threading
import time
import warnings
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

from tests.support.shared import extra_module

extra_module("distributed", module_level=True)     # the dask extra: this module's tests need a cluster

import cloudpickle
import dask
import dask.array as da
import dask.bag as db
import dask.dataframe as dd
import pandas as pd
from distributed import Client, LocalCluster
from sklearn.exceptions import DataConversionWarning
from distributed.diagnostics.plugin import SchedulerPlugin
from distributed.utils import key_split

from fastprox import ProxClassifier, ProxRegressor, dump_libsvm, load_libsvm, load_model, save_model
from fastprox._core import run_passes
from fastprox._mixing import parallel_params, MOST_MOVES, MOST_STEADY_MOVES, SQUARED_FROM, Midpoint, copied, _fields, contribution, mix_kind, mixed, total
from fastprox._registry import RULES
from fastprox.cli import main
from fastprox.stream.trainer import Trainer
from fastprox.dask import ClusterError, fit
from fastprox.dask._open import OpenReaders
from tests.support.clusters import DASHBOARD, within
from tests.support.unaligned import unaligned

#: Test accuracy of the parallel mode (2 workers) after 3 passes against one
#: machine's 3 passes over the same rows, on the small sets below (10,000 rows a
#: pass): at most this many points lower. Rules with AdaGrad's steps (fobos +
#: adagrad, rda + adagrad, ftrl) reach one machine's accuracy in a few passes;
#: under a scalar schedule (invsqrt) a mix of W models moves about as far as one
#: model on 1/W of the rows, so their passes count less (docs/dask.md).
PARALLEL_MARGIN = {"adagrad": 1.5, "invsqrt": 8.0}

cloudpickle.register_pickle_by_value(sys.modules[__name__])    # client.run's functions, by value


@pytest.fixture(scope="module")
def client():
    """The module's cluster. A killed worker's nanny restarts it; the LocalCluster
    closes that nanny for good if the new worker has not joined within
    ``distributed.deploy.lost-worker-timeout`` (15 s), which a restart (a Python
    importing distributed, NumPy, SciPy and fastprox) can exceed under load: the
    later tests then had one worker (and the killed-worker tests' wait for two
    failed). Raised here so that the cluster keeps its two workers."""
    with dask.config.set({"distributed.deploy.lost-worker-timeout": "10 minutes"}), \
            LocalCluster(n_workers=2, processes=True, threads_per_worker=1, dashboard_address=DASHBOARD) as cluster, \
            Client(cluster) as c:
        yield c


def _problem(n=12_000, d=300, seed=0, classes=2):
    rng = np.random.default_rng(seed)
    X = sp.random(n, d, density=0.03, format="csr", random_state=rng)
    scores = X @ rng.normal(size=(d, classes))
    y = np.where(scores[:, 0] > 0, 1, -1) if classes == 2 else np.argmax(scores, axis=1) + 1
    return X, y


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """Four training files (the last gzip-compressed) and a test file."""
    d = tmp_path_factory.mktemp("dask")
    X, y = _problem()
    paths = []
    for i in range(4):
        path = d / (f"part{i}.svm" + (".gz" if i == 3 else ""))
        dump_libsvm(X[i * 2500:(i + 1) * 2500], y[i * 2500:(i + 1) * 2500], path)
        paths.append(str(path))
    dump_libsvm(X[10_000:], y[10_000:], d / "test.svm")
    return paths, str(d / "test.svm")


@pytest.fixture(scope="module")
def multiclass_files(tmp_path_factory):
    d = tmp_path_factory.mktemp("dask3")
    X, y = _problem(seed=1, classes=3)
    paths = []
    for i in range(2):
        paths.append(str(d / f"m{i}.svm"))
        dump_libsvm(X[i * 5000:(i + 1) * 5000], y[i * 5000:(i + 1) * 5000], paths[-1])
    dump_libsvm(X[10_000:], y[10_000:], d / "test.svm")
    return paths, str(d / "test.svm")


def _single(tmp_path, paths, *options):
    """One machine's `fastprox train` on the files: the model it saves (without the
    holdout of several passes, which a cluster's passes do not keep)."""
    model = tmp_path / "single.npz"
    holdout = ["--holdout-off"] if "--passes" in options else []
    assert main(["train", *paths, "--model", str(model), "--quiet", *holdout, *options]) == 0
    return load_model(model)


def _same_bits(a, b):
    return a.coef_.tobytes() == b.coef_.tobytes() and a.intercept_.tobytes() == b.intercept_.tobytes()


def _score(est, test):
    X, y = load_libsvm(test, n_features=est.n_features_in_)
    return est.score(X, y)


# --- import ------------------------------------------------------------------------

def test_import_fastprox_imports_no_dask():
    code = ("import sys, fastprox; fastprox.ProxClassifier; import fastprox.cli.train, fastprox.stream.trainer, fastprox.model_io; "
            "assert not {'dask', 'distributed'} & set(sys.modules), sorted(sys.modules)")
    subprocess.run([sys.executable, "-c", code], check=True)


# --- sequential mode: the single-machine model, bit for bit ---------------------------

@pytest.mark.parametrize("options", [
    {}, {"update": "rda"}, {"update": "ftrl", "alpha": 1e-4},
    {"schedule": "invsqrt", "penalty": "elasticnet"}, {"schedule": "normalized"},
    {"schedule": "inv", "t0": 40.5, "penalty": "l2", "alpha": 1e-4},
], ids=lambda o: "-".join(map(str, o.values())) or "defaults")
def test_sequential_is_the_single_machine_model(client, files, tmp_path, options):
    paths, _ = files
    est = fit(ProxClassifier(**options), paths, client=client, sequential=True, passes=2)
    cli = [x for k, v in options.items() for x in (f"--{k.replace('_', '-')}", str(v))]
    single = _single(tmp_path, paths, "--passes", "2", *cli)
    assert _same_bits(est, single)
    assert est.t_ == single.t_ == 20_000


def test_sequential_multiclass_and_regression(client, multiclass_files, files, tmp_path):
    paths, _ = multiclass_files
    est = fit(ProxClassifier(multi_class="multinomial", penalty="l1_l2", schedule="invsqrt"), paths,
              client=client, sequential=True, classes=[1, 2, 3])
    assert _same_bits(est, _single(tmp_path, paths, "--classes", "1,2,3", "--multi-class", "multinomial",
                                   "--penalty", "l1_l2", "--schedule", "invsqrt"))
    assert list(est.classes_) == [1, 2, 3]
    reg = fit(ProxRegressor(), files[0], client=client, sequential=True)
    assert _same_bits(reg, _single(tmp_path, files[0], "--regression"))


class _HeldModels(SchedulerPlugin):
    """Counts, on the scheduler, the results of the tasks of a chain that hands a
    trainer on (``task``: train_in_turn in sequential mode, train_block in a parallel
    group over a Dask collection: model-sized each) held in cluster memory at once;
    ``most`` is the largest count seen."""

    name = "held-models"

    def __init__(self, task="train_in_turn"):
        self.task, self.held, self.most, self.tasks = task, set(), 0, 0

    def transition(self, key, start, finish, *args, **kwargs):
        if key_split(key) != self.task:
            return
        if finish == "memory":
            self.held.add(key)
            self.tasks += 1
        elif start == "memory":
            self.held.discard(key)
        self.most = max(self.most, len(self.held))


def _held_models(dask_scheduler):
    plugin = dask_scheduler.plugins.pop(_HeldModels.name)
    return plugin.tasks, plugin.most


@pytest.fixture
def releases_held_back(client):
    """Hold back the client's releases of keys until the test ends (then sent): what a
    loaded client does to them. A dropped future's release takes two turns of the
    client's event loop behind the tasks submitted meanwhile, and can reach the
    scheduler after later tasks have ended (under load, after several shares')."""
    held, send = [], client._send_to_scheduler

    def deferred(msg):
        (held.append if msg.get("op") == "client-releases-keys" else send)(msg)
    client._send_to_scheduler = deferred        # (the instance's attribute, over the method)
    try:
        yield
    finally:
        del client._send_to_scheduler
        for msg in held:
            send(msg)


def test_sequential_holds_one_model_at_a_time(client, files, releases_held_back):
    """The client wants only the last trainer: each share's model is released once the
    next share's task has read it, so the cluster holds O(1) models (at most two: the
    one just made and the one it came from), whatever the number of shares and however
    late the client's own messages reach the scheduler (without progress reports, which
    hold a model until they have read it)."""
    paths, _ = files
    client.register_plugin(_HeldModels())
    try:
        fit(ProxClassifier(), paths, client=client, sequential=True, passes=3)
    finally:
        tasks, most = client.run_on_scheduler(_held_models)
    assert tasks == 12 and most <= 2


# --- parallel mode ----------------------------------------------------------------------

def test_a_group_over_a_collection_holds_one_model_at_a_time(client, releases_held_back):
    """A parallel group's chain over a Dask collection's blocks (a task per block,
    handing the group's trainer on) is wanted by the client only at its contribution:
    each block's trainer is released once the next block's task has read it, whatever
    the number of blocks and however late the client's own messages arrive."""
    X, y = _problem(6000, 100, 4)
    bag = db.from_sequence([(X[i:i + 500], y[i:i + 500]) for i in range(0, 6000, 500)], npartitions=12)
    client.register_plugin(_HeldModels("train_block"))
    try:
        est = fit(ProxClassifier(), bag, client=client, n_workers=1, passes=2)
    finally:
        tasks, most = client.run_on_scheduler(_held_models)
    assert tasks == 24 and most <= 2 and est.t_ == 12_000


@pytest.mark.parametrize("options", [
    {}, {"schedule": "invsqrt"}, {"update": "rda"}, {"update": "rda", "schedule": "invsqrt"},
    {"update": "ftrl"}, {"schedule": "invsqrt", "penalty": "l1_l2", "alpha": 1e-5},
], ids=lambda o: "-".join(map(str, o.values())) or "defaults")
def test_parallel_accuracy_within_the_margin(client, files, tmp_path, options):
    paths, test = files
    est = fit(ProxClassifier(**options), paths, client=client, passes=3, n_workers=2)
    cli = [x for k, v in options.items() for x in (f"--{k.replace('_', '-')}", str(v))]
    single = _single(tmp_path, paths, "--passes", "3", *cli)
    assert sum(r["rows"] for r in est.cluster_rounds_) == single.t_ == 30_000   # no share missing
    margin = PARALLEL_MARGIN[options.get("schedule", "adagrad")]
    assert 100 * (_score(est, test) - _score(single, test)) >= -margin
    assert [r["workers"] for r in est.cluster_rounds_] == [2, 2, 2]


def test_parallel_model_depends_on_the_groups_not_on_the_cluster(client, files):
    """The parallel model is a function of the data, the parameters and n_workers (the
    groups): the same bits when one worker process runs both groups' tasks (sharing
    the global model's object in memory) as when two do, and whatever the load. The
    default n_workers is the number of workers connected at the call: the tests that
    count groups give it."""
    paths, _ = files
    est = fit(ProxClassifier(), paths, client=client, passes=2, n_workers=2)
    with LocalCluster(n_workers=1, processes=True, threads_per_worker=1, dashboard_address=DASHBOARD) as cluster, \
            Client(cluster) as one:
        alone = fit(ProxClassifier(), paths, client=one, passes=2, n_workers=2)
    assert _same_bits(est, alone) and [r["workers"] for r in alone.cluster_rounds_] == [2, 2]


def test_the_default_groups_are_the_workers_connected_whatever_the_clients_refresh(client, files, monkeypatch, capsys):
    """fit's default n_workers, and `fastprox train --scheduler`'s, is the number of
    workers connected at the call, asked of the scheduler. Client.scheduler_info()
    returns the client's copy of the scheduler's identity, which the client's periodic
    refresh (every 2 s, with no worker listed) can overwrite between the call's own
    refresh and its return: then one group instead of two (seen under load). The
    refresh is made to land there every time."""
    refresh = Client._update_scheduler_info

    async def raced(self, *args, **kwargs):
        await refresh(self, *args, **kwargs)
        if args or kwargs:              # a call's (n_workers=...: distributed 2025 and later)
            await refresh(self)         # the periodic refresh's copy, before the call returns
    monkeypatch.setattr(Client, "_update_scheduler_info", raced)
    paths, _ = files
    est = fit(ProxClassifier(), paths, client=client)
    assert [r["workers"] for r in est.cluster_rounds_] == [2]
    assert main(["train", *paths, "--scheduler", client.scheduler.address, "--model", os.devnull]) == 0
    assert "pass 1/1, round 1: 2 worker(s), 10,000 rows" in capsys.readouterr().err


@pytest.mark.parametrize("n_workers", [2, 3])
def test_parallel_sharded_mix_is_the_unsharded_mix(client, files, monkeypatch, n_workers):
    """A round's contributions cut into ranges of features, each range added and mixed
    on its own worker (reduce-scatter), then joined: the same model, bit for bit, as
    the contributions tree-added and mixed whole on one worker."""
    from fastprox.dask import _run
    paths, _ = files
    sharded = fit(ProxClassifier(), paths, client=client, passes=2, n_workers=n_workers)
    monkeypatch.setattr(_run, "shardable", lambda penalty: False)
    whole = fit(ProxClassifier(), paths, client=client, passes=2, n_workers=n_workers)
    assert _same_bits(sharded, whole) and sharded.t_ == whole.t_


def test_parallel_multiclass(client, multiclass_files, tmp_path):
    paths, test = multiclass_files
    for options in ([], ["--multi-class", "multinomial"]):
        est = fit(ProxClassifier(multi_class=options[1] if options else "ovr"), paths, client=client,
                  passes=3, classes=[1, 2, 3])
        single = _single(tmp_path, paths, "--passes", "3", "--classes", "1,2,3", *options)
        assert 100 * (_score(est, test) - _score(single, test)) >= -PARALLEL_MARGIN["adagrad"]


def test_parallel_sync_rows(client, files):
    paths, test = files
    est = fit(ProxClassifier(), paths, client=client, passes=1, sync_rows=1000)
    rounds = est.cluster_rounds_
    assert len(rounds) == 5 and sum(r["rows"] for r in rounds) == 10_000 and est.t_ == 10_000
    assert _score(est, test) > 0.8


def _count_opens():
    _shares = importlib.import_module("fastprox.dask._shares")     # (fastprox.dask._shares is a function)
    chunks = _shares.FileShare.chunks
    _shares.opened = []

    def counted(self, data=None, ahead=True):
        _shares.opened.append(self.name)
        return chunks(self, data, ahead)
    counted.uncounted = chunks
    _shares.FileShare.chunks = counted


def _opens():
    _shares = importlib.import_module("fastprox.dask._shares")
    _shares.FileShare.chunks = _shares.FileShare.chunks.uncounted
    return _shares.opened


def _never_resume(on=True, take=OpenReaders.take):
    from fastprox.dask import _open
    _open.OPEN.take = (lambda *key: None) if on else take.__get__(_open.OPEN)


def test_sync_rows_rounds_resume_inside_open_files(client, files):
    """A group's next round runs where its last one did and goes on reading the file it
    stopped inside: each file is opened once a pass (files of 2,500 rows, rounds of
    1,000), and once by each worker's start (the first rows read where each copy
    of the model is made). Opening it again and skipping the rows read gives the
    same bits."""
    paths, _ = files
    client.run(_count_opens)
    try:
        est = fit(ProxClassifier(), paths, client=client, passes=2, sync_rows=1000)
    finally:
        opened = sum(client.run(_opens).values(), [])
    assert sorted(opened) == sorted(4 * paths)        # the 2 workers' starts, then a pass each
    client.run(_never_resume)
    try:
        reopened = fit(ProxClassifier(), paths, client=client, passes=2, sync_rows=1000)
    finally:
        client.run(_never_resume, False)
    assert _same_bits(est, reopened) and est.t_ == 20_000


def test_parallel_refuses_what_it_cannot_mix(client, files):
    for params in ({"schedule": "normalized"}, {"schedule": "invsqrt", "penalty": "berhu"}):
        with pytest.raises(ValueError, match="cannot be trained in parallel.*sequential mode"):
            fit(ProxClassifier(**params), files[0], client=client)


def test_parallel_defaults_train_adagrad_and_say_so(client, files, tmp_path):
    """schedule=None, the estimators' data-free default (normalized where the rule takes
    it), has no sound mix: the parallel mode trains with "adagrad", and the fitted model's
    params say so, so that it saves and loads as what it is; the sequential mode keeps it."""
    est = fit(ProxClassifier(), files[0], client=client)
    assert est.get_params()["schedule"] == est.schedule_ == "adagrad"
    save_model(est, tmp_path / "m.npz")
    assert load_model(tmp_path / "m.npz").schedule_ == "adagrad"
    assert fit(ProxClassifier(), files[0], client=client, sequential=True).schedule_ == "normalized"


@pytest.mark.parametrize("rate", [dict(learning_rate="optimal", alpha=1e-4), dict(learning_rate="invscaling")])
def test_parallel_takes_the_schedule_a_learning_rate_names(client, files, rate):
    """scikit-learn's learning_rate names the schedule (and "optimal" its eta0 and t0):
    the parallel mode trains with it rather than with its own default, "adagrad"."""
    est = fit(ProxClassifier(**rate, penalty="l2", step="gradient"), files[0], client=client)
    alone = ProxClassifier(**rate, penalty="l2", step="gradient").fit(*load_libsvm(files[0][0]))
    assert (est.schedule_, est.eta0_, est.t0_) == (alone.schedule_, alone.eta0_, alone.t0_)
    assert est.get_params()["schedule"] is None


def test_one_worker_is_the_single_machine_model_to_rounding(client, files, tmp_path):
    """A mix of one worker is that worker's model: with n_workers=1 the parallel mode
    is one machine's training, the state rebuilt each pass."""
    paths, _ = files
    est = fit(ProxClassifier(update="ftrl"), paths, client=client, passes=2, n_workers=1)
    single = _single(tmp_path, paths, "--passes", "2", "--update", "ftrl")
    np.testing.assert_allclose(est.coef_, single.coef_, rtol=1e-9, atol=1e-12)


# --- mixing, without a cluster ----------------------------------------------------------

def _learners(rule, classes=2, seed=0):
    X, y = _problem(2000, 60, seed, classes)
    est = ProxClassifier(update=rule.update, schedule=rule.schedule, penalty=rule.penalty, alpha=1e-3)
    est.partial_fit(X[:1000], y[:1000], classes=np.unique(y))
    return est, X[1000:], y[1000:]


@pytest.mark.parametrize("rule", [r for r in RULES if r.schedule != "normalized" and not (
    r.penalty == "berhu" and r.schedule != "adagrad")], ids=lambda r: f"{r.update}-{r.schedule}-{r.penalty}")
def test_mixing_two_workers(rule):
    """Two copies of one model trained on two halves: the mix is the rows-weighted mean
    of their weights (scalar fobos), or sums the dual states' increments (rda, ftrl),
    and continues training as a learner of that state would."""
    est, X, y = _learners(rule)
    kind = mix_kind(rule.update, rule.schedule, rule.penalty)
    start = est._learner
    target = est._encode(y, None, False)[0]
    workers = []
    for part in (slice(0, 300), slice(300, 1000)):
        learner = copied(start)
        run_passes(learner, X[part], target[part], None, 1)
        workers.append(learner)
    contributions = [contribution(start, w, 300 if i == 0 else 700, 0.0, kind) for i, w in enumerate(workers)]
    m = mixed(start, total(contributions), kind)
    assert m.t == start.t + (500 if kind == "average" else 1000)     # the mean steps, or all of them
    if kind == "average":
        expected = (300 * workers[0].coef() + 700 * workers[1].coef()) / 1000
        np.testing.assert_allclose(m.coef(), expected, rtol=1e-12, atol=1e-15)
    if kind == "dual":     # without part-way sums: where both met a coordinate, at most sqrt(2) increments
        state, s0 = (a.__getstate__()["arrays"]["state"] for a in (m, start))
        moves = [w.__getstate__()["arrays"]["state"][:, 0] - s0[:, 0] for w in workers]
        both = (moves[0] != 0) & (moves[1] != 0)
        assert both.any()
        expected = s0[:, 0] + (moves[0] + moves[1]) * np.where(both, MOST_MOVES / 2, 1.0)
        np.testing.assert_allclose(state[:, 0], expected, atol=1e-12)
    run_passes(m, X[:100], target[:100], None, 1)        # a state the kernel trains on
    assert np.all(np.isfinite(m.coef()))


@pytest.mark.parametrize("params", [dict(schedule="inv", penalty="l2", step="gradient"),
                                    dict(schedule="adagrad", penalty="l1", step="gradient"),
                                    dict(update="ftrl", schedule="adagrad", penalty="l1")],
                         ids=lambda p: "-".join(p.values()))
def test_mixing_keeps_the_intercept_scaling(params):
    """The mix moves the weights of the intercepts' constant feature, not the intercepts
    (intercept_scaling s times them): workers that took no step mix back to their start's
    intercept, and scalar fobos's mix of trained workers is the rows-weighted mean of
    their intercepts, as of their weights."""
    X, y = _problem(2000, 60, 0)
    est = ProxClassifier(**params, alpha=1e-3, intercept_scaling=0.1)
    est.partial_fit(X[:1000], y[:1000], classes=[-1, 1])
    start, target = est._learner, est._encode(y[1000:], None, False)[0]
    kind = mix_kind(start.update, start.schedule, start.penalty)
    idle = mixed(start, total([contribution(start, copied(start), 1, 0.0, kind) for _ in range(2)]), kind)
    np.testing.assert_allclose(idle.intercept(), start.intercept(), rtol=1e-12)
    if kind == "average":
        workers = [_trained(start, X[1000 + a:1000 + b], target[a:b]) for a, b in ((0, 300), (300, 1000))]
        m = mixed(start, total([contribution(start, w, n, 0.0, kind) for w, n in zip(workers, (300, 700))]), kind)
        expected = (300 * workers[0].intercept() + 700 * workers[1].intercept()) / 1000
        np.testing.assert_allclose(m.intercept(), expected, rtol=1e-12)


def _adagrad_start(seed=0):
    """A FOBOS + AdaGrad + l1 model after 1,000 rows, its kernel targets, and 1,000 more rows."""
    X, y = _problem(2000, 60, seed)
    est = ProxClassifier(schedule="adagrad", step="gradient", penalty="l1", alpha=1e-5)
    est.partial_fit(X[:1000], y[:1000], classes=[-1, 1])
    return est._learner, X[1000:], est._encode(y[1000:], None, False)[0]


def _trained(start, X, target):
    learner = copied(start)
    run_passes(learner, X, target, None, 1)
    return learner


def _mix(start, workers, kind="adagrad"):
    return mixed(start, total([contribution(start, w, 1, 0.0, kind) for w in workers]), kind)


def test_adagrad_mix_of_disjoint_features_is_one_machine_in_turn():
    """Workers whose rows share no feature: on the features only worker A met, the mix
    is one machine's model over A's rows then B's (B's rows only shrink them, by l1,
    at the steps of A's accumulator: B's catch-up rescaled to them), to rounding; but
    for the features new in the round, which B, holding no weight there, did not
    shrink, and those B's shrinking stopped at zero."""
    start, X, target = _adagrad_start()
    a_rows, b_rows = X[:500].tocsc(), X[500:].tocsc()
    a_rows[:, 30:], b_rows[:, :30] = 0, 0
    a_rows, b_rows = a_rows.tocsr(), b_rows.tocsr()
    a_rows.eliminate_zeros()
    b_rows.eliminate_zeros()
    A, B = _trained(start, a_rows, target[:500]), _trained(start, b_rows, target[500:])
    in_turn = copied(A)
    run_passes(in_turn, b_rows, target[500:], None, 1)
    m = _mix(start, [A, B])
    old = (np.array(_fields(start)[3]["G"]) > 0) & (B.coef() != 0)     # met before, not shrunk to 0 by B
    old[:, 30:] = False
    assert old.sum() >= 20
    np.testing.assert_allclose(m.coef()[old], in_turn.coef()[old], rtol=1e-9, atol=1e-15)
    assert m.t == in_turn.t


def test_adagrad_mix_moves_at_most_sqrt2_workers():
    """Workers that met a coordinate have their moves rescaled to the summed accumulator's
    steps and capped: two workers trained on the same rows move the mix by
    min(2 (delta + sqrt(G_i)) / (delta + sqrt(G)), sqrt(2)) times one worker's move; one
    worker's mix is that worker's model."""
    start, X, target = _adagrad_start(1)
    A = _trained(start, X, target)
    np.testing.assert_allclose(_mix(start, [A]).coef(), A.coef(), rtol=1e-12, atol=1e-15)
    W0, W = start.coef(), A.coef()
    G0, G = (np.array(_fields(x)[3]["G"]) for x in (start, A))
    kappa = np.minimum(2 * (start.delta + np.sqrt(G)) / (start.delta + np.sqrt(2 * G - G0)), 2 ** 0.5)
    expected = W0 + np.where(G > G0, kappa, 2.0) * (W - W0)        # unmet: both workers' l1 shrink
    expected = np.where((np.sign(expected) == -np.sign(W0)) & (np.sign(W) != -np.sign(W0)), 0.0, expected)
    np.testing.assert_allclose(_mix(start, [A, A]).coef(), expected, rtol=1e-9, atol=1e-15)


def _mix_with_midpoint(start, A, f, W_f, b_f, workers=2):
    parts = [contribution(start, A, 1, 0.0, "adagrad", (f, W_f, b_f)) for _ in range(workers)]
    return mixed(start, total(parts), "adagrad")


def test_adagrad_mix_adds_steady_moves_and_averages_settled_ones():
    """With the workers' weights part-way through their rows: where they moved at a
    steady rate (the fraction f of the rows made f of the move) their rescaled moves
    add up (at most MOST_STEADY_MOVES of one worker's); where they had settled by then
    (the whole move made) the mix is their average: two identical workers give that
    worker's model."""
    start, X, target = _adagrad_start(2)
    A = _trained(start, X, target)
    W0, W, b0, b = start.coef(), A.coef(), start.intercept(), A.intercept()
    settled = _mix_with_midpoint(start, A, 0.25, W, b)
    np.testing.assert_allclose(settled.coef(), W, rtol=1e-9, atol=1e-15)
    np.testing.assert_allclose(settled.intercept(), b, rtol=1e-9, atol=1e-15)
    steady = _mix_with_midpoint(start, A, 0.25, W0 + 0.25 * (W - W0), b0 + 0.25 * (b - b0))
    G0, G = (np.array(_fields(x)[3]["G"]) for x in (start, A))
    kappa = 2 * (start.delta + np.sqrt(G)) / (start.delta + np.sqrt(2 * G - G0))
    expected = W0 + np.where(G > G0, np.minimum(kappa, MOST_STEADY_MOVES), 2.0) * (W - W0)
    expected = np.where((np.sign(expected) == -np.sign(W0)) & (np.sign(W) != -np.sign(W0)), 0.0, expected)
    np.testing.assert_allclose(steady.coef(), expected, rtol=1e-9, atol=1e-15)


@pytest.mark.parametrize("workers", [2, SQUARED_FROM, 4, 8])
def test_adagrad_mix_squares_the_steadiness_from_SQUARED_FROM_workers(workers):
    """Identical workers half-way between steady and settled (after a quarter of the rows,
    0.625 of the move made: u = 0.5) keep u + (1 - u) / kappa of their summed rescaled
    moves, u read as it is with fewer than SQUARED_FROM workers in the round and squared
    from SQUARED_FROM on (at most MOST_STEADY_MOVES of one worker's move)."""
    start, X, target = _adagrad_start(2)
    A = _trained(start, X, target)
    W0, W, b0, b = start.coef(), A.coef(), start.intercept(), A.intercept()
    m = _mix_with_midpoint(start, A, 0.25, W0 + 0.625 * (W - W0), b0 + 0.625 * (b - b0), workers)
    G0, G = (np.array(_fields(x)[3]["G"]) for x in (start, A))
    kappa = workers * (start.delta + np.sqrt(G)) / (start.delta + np.sqrt(workers * (G - G0) + G0))
    u = 0.5 ** (2 if workers >= SQUARED_FROM else 1)
    moves = np.minimum(u * kappa + (1 - u), MOST_STEADY_MOVES)
    expected = W0 + np.where((G > G0) & (W != W0), moves, np.where(G > G0, 0.0, workers)) * (W - W0)
    expected = np.where((np.sign(expected) == -np.sign(W0)) & (np.sign(W) != -np.sign(W0)), 0.0, expected)
    np.testing.assert_allclose(m.coef(), expected, rtol=1e-9, atol=1e-15)


def test_midpoint_keeps_the_last_point_at_most_half_way():
    """Midpoint keeps the weights at the first chunk boundaries past 1, 2, 4, ... rows
    (two at most) and gives the last one at most half-way through the round."""
    start, X, target = _adagrad_start(3)
    learner, point = copied(start), Midpoint()
    for a in range(0, 1000, 100):       # chunks of 100 rows
        point.note(learner, a)
        run_passes(learner, X[a:a + 100], target[a:a + 100], None, 1)
    assert [k[0] for k in point.kept] == [300, 600]     # kept at 100, 200, 300, 600: the last two
    f, W_f, b_f = point.early(1000)
    assert f == 0.3 and W_f.shape == learner.coef().shape and b_f.shape == learner.intercept().shape
    assert point.early(500) is None
    assert Midpoint().early(10) is None
    idle = Midpoint("average")      # the averages read no part-way weights: none kept
    idle.note(learner, 100)
    assert idle.kept == [] and idle.early(1000) is None


@pytest.mark.parametrize("params", [dict(schedule="adagrad", penalty="l1"), dict(update="rda", schedule="adagrad"),
                                    dict(update="ftrl")], ids=["fobos-adagrad", "rda-adagrad", "ftrl"])
def test_a_round_reading_ahead_copies_fewer_points_and_keeps_the_bits(files, params, monkeypatch):
    """A round that reads AHEAD_ROWS rows before it trains skips the part-way points
    those rows show cannot be read (1, 2, 4, ... up to a quarter of them): fewer
    copies, the same contribution, bit for bit, as a round that copies every point."""
    from fastprox.dask import _tasks
    from fastprox.dask._shares import file_shares
    from fastprox.stream.model import StreamModel
    from fastprox._mixing import parallel_params
    p = parallel_params(ProxClassifier(alpha=1e-5, **params).get_params())
    shares = file_shares(files[0][:3], chunk_rows=100)      # 7,500 rows in chunks of 100
    est = _tasks.start(StreamModel(p, False, None), shares)
    kind = mix_kind(p["update"], p["schedule"], p["penalty"])
    copies, note = [], Midpoint.note

    def counted(self, learner, rows, known=0):
        before = list(self.kept)
        note(self, learner, rows, known)
        copies[-1] += self.kept != before

    monkeypatch.setattr(Midpoint, "note", counted)
    found = []
    for ahead in (0, 1000, 100_000):
        monkeypatch.setattr(_tasks, "AHEAD_ROWS", ahead)
        copies.append(0)
        c = _tasks.train_group(est, 0, shares, (0, 0), None, kind)
        found.append((c.rows, c.steps, c.loss, {k: v.tobytes() for k, v in c.dense().arrays.items()}))
    assert found[0] == found[1] == found[2]
    # 1, 2, ..., 4096; from 256 (1000 rows ahead); from 1024 (a share's 2,500 rows ahead: no more is read at once)
    assert copies == [13, 5, 3]


@pytest.mark.parametrize("update", ["rda", "ftrl"])
def test_dual_mix_adds_steady_increments_and_averages_settled_ones(update):
    """The dual rules' main sums (s; z): two identical workers whose sums had settled
    part-way (the whole increment made by then) add one increment (their average);
    grown at a steady rate (a quarter of the increment after a quarter of the rows),
    their sum, at most MOST_STEADY_MOVES increments; the accumulators add whole.
    One worker's mix is that worker's state (to rounding); the part-way sums are noted."""
    X, y = _problem(2000, 60, 4)
    params = dict(schedule="adagrad") if update == "rda" else {}
    est = ProxClassifier(update=update, penalty="l1", alpha=1e-5, **params)
    est.partial_fit(X[:1000], y[:1000], classes=[-1, 1])
    start, target = est._learner, est._encode(y[1000:], None, False)[0]
    A = _trained(start, X[1000:], target)
    (s0, a0), (s, a) = ((f[e[0]], f[e[1]]) for f, e in (_fields(x)[3:] for x in (start, A)))
    one = mixed(start, contribution(start, A, 1000, 0.0, "dual"), "dual")
    np.testing.assert_allclose(one.__getstate__()["arrays"]["state"], A.__getstate__()["arrays"]["state"],
                               rtol=1e-12, atol=1e-15)

    def mix(f, S_f):
        m = mixed(start, total([contribution(start, A, 1000, 0.0, "dual", (f, S_f, None))] * 2), "dual")
        return _fields(m)[3]

    moved = s != s0
    settled = mix(0.25, s)
    np.testing.assert_allclose(settled[_fields(start)[4][0]], s, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(settled[_fields(start)[4][1]], 2 * a - a0, rtol=1e-12, atol=1e-15)
    steady = mix(0.25, s0 + 0.25 * (s - s0))[_fields(start)[4][0]]
    np.testing.assert_allclose(steady, s0 + np.where(moved, 2.0, 0.0) * (s - s0), rtol=1e-9, atol=1e-15)
    point = Midpoint("dual")
    point.note(A, 100)
    assert point.early(1000)[0] == 0.1 and point.early(1000)[1].tobytes() == np.array(s).tobytes()



@pytest.mark.parametrize("params", [dict(schedule="adagrad", penalty="l1"), dict(update="rda", schedule="adagrad"),
                                    dict(update="ftrl")], ids=["fobos-adagrad", "rda-adagrad", "ftrl"])
def test_sparse_contributions_add_and_mix_to_the_dense_bits(params, monkeypatch):
    """Workers that met few of the model's features send those only; their sums (the
    tree's, in any grouping) are dense, and they and the mix are the dense
    contributions' bits."""
    import pickle
    from fastprox import _mixing
    rng = np.random.default_rng(5)
    X = sp.random(2400, 4000, density=0.002, format="csr", random_state=rng)     # 8 features a row
    y = np.where(X @ rng.normal(size=4000) > 0, 1, -1)
    est = ProxClassifier(alpha=1e-5, **params)
    est.partial_fit(X[:400], y[:400], classes=[-1, 1])
    start, target = est._learner, est._encode(y, None, False)[0]
    workers = [_trained(start, X[a:a + 40], target[a:a + 40]) for a in range(400, 2400, 40)]
    kind = mix_kind(start.update, start.schedule, start.penalty)

    def mix(share):
        monkeypatch.setattr(_mixing, "SPARSE_SHARE", share)
        parts = [contribution(start, w, 40, 0.0, kind, None) for w in workers]
        summed = total([total(parts[:7]), total(parts[7:20]), total(parts[20:])])
        return parts, summed, mixed(start, summed, kind)

    sparse, summed, m = mix(0.25)
    dense, dense_sum, m_dense = mix(0.0)
    assert all(c.index is not None for c in sparse) and all(c.index is None for c in dense)
    assert max(c.nbytes for c in sparse) < min(c.nbytes for c in dense) / 2
    assert summed.index is None
    assert pickle.dumps(m) == pickle.dumps(m_dense)
    for name, a in dense[0].arrays.items():
        assert sparse[0].dense().arrays[name].tobytes() == a.tobytes()
    pair = sparse[0] + sparse[1]
    assert pair.index is None
    assert all(pair.dense().arrays[k].tobytes() == (dense[0] + dense[1]).arrays[k].tobytes() for k in pair.arrays)

@pytest.mark.parametrize("params", [dict(schedule="adagrad", penalty="l1"), dict(update="rda", schedule="adagrad"),
                                    dict(update="ftrl"), dict(schedule="invsqrt", penalty="elasticnet")],
                         ids=["fobos-adagrad", "rda-adagrad", "ftrl", "fobos-invsqrt"])
def test_sharded_mix_is_the_unsharded_mix_bit_for_bit(params):
    """The mix cut into n ranges of the start's features (the last one also holding
    the features the workers met first), each range's slices of the contributions
    added in the tree's order and mixed from that range of the start, then joined:
    the pickle of the unsharded mix, for 1 to 4 ranges."""
    import pickle
    from fastprox._mixing import joined, mixed_shard, shard, shard_bounds, shardable, sharded, unpacked
    rng = np.random.default_rng(6)
    X = sp.random(2400, 400, density=0.02, format="csr", random_state=rng)
    y = np.where(X @ rng.normal(size=400) > 0, 1, -1)
    est = ProxClassifier(alpha=1e-5, **params)
    est.partial_fit(X[:400, :300], y[:400], classes=[-1, 1])
    start, target = est._learner, est._encode(y, None, False)[0]
    kind = mix_kind(start.update, start.schedule, start.penalty)
    assert shardable(start.penalty) and not shardable("l1_l2") and not shardable("berhu")
    workers = []
    for a in range(400, 2400, 500):                 # 4 workers, each meeting features beyond the start's 300
        learner = copied(start)
        learner.grow(400)
        run_passes(learner, X[a:a + 500], target[a:a + 500], None, 1)
        workers.append(learner)
    parts = [contribution(start, w, 500, 0.0, kind) for w in workers]

    def tree(p):
        return p[0] + p[1] if len(p) == 2 else tree(p[:2]) + tree(p[2:])

    before = pickle.dumps(start)
    assert pickle.dumps(copied(start)) == before
    whole = pickle.dumps(mixed(start, tree(parts), kind))
    for n in (1, 2, 3, 4):
        bounds = shard_bounds(start.n_features, n)
        assert bounds[0][0] == 0 and bounds[-1][1] is None
        shards = [mixed(shard(start, lo, hi), tree([sharded(p, lo, hi) for p in parts]), kind) for lo, hi in bounds]
        assert pickle.dumps(joined(shards)) == whole
        in_place = [mixed_shard(start, tree([sharded(p, lo, hi) for p in parts]), lo, hi, kind) for lo, hi in bounds]
        assert pickle.dumps(joined(in_place)) == whole
        assert pickle.dumps(joined([pickle.loads(pickle.dumps(unpacked(x))) for x in in_place])) == whole
    assert pickle.dumps(start) == before            # (each shard mixed in a learner of its own)


# --- inputs: Dask collections -----------------------------------------------------------

def test_dask_array_sequential_equals_partial_fit(client):
    X, y = _problem(6000, 100, 3)
    dense = X.toarray()
    dX, dy = da.from_array(dense, chunks=(1500, 100)), da.from_array(y, chunks=1500)
    est = fit(ProxClassifier(), dX, dy, client=client, sequential=True, classes=[-1, 1])
    one = ProxClassifier().partial_fit(X, y, classes=[-1, 1])
    assert _same_bits(est, one)
    sparse = da.from_array(X, chunks=(1500, 100), asarray=False)
    par = fit(ProxClassifier(), sparse, dy, client=client, passes=2)
    assert par.t_ == 12_000 and par.score(X, y) > 0.8


def test_hashing_is_remembered_by_the_fitted_copy(client, files, tmp_path):
    """hash_bits from the estimator (or fit's argument) hashes files and arrays alike;
    the fitted copy is the single machine's hashing model, which predicts raw ids."""
    paths, test = files
    single = _single(tmp_path, paths, "--hash-bits", "8")
    for est in (fit(ProxClassifier(hash_bits=8), paths, client=client, sequential=True),
                fit(ProxClassifier(), paths, client=client, sequential=True, hash_bits=8)):
        assert est.hash_bits_ == single.hash_bits_ == 8 and _same_bits(est, single)
        X, y = load_libsvm(test)
        assert est.score(X, y) == single.score(X, y)
    X, y = _problem(6000, 100, 3)
    blocks = da.from_array(X, chunks=(1500, 100), asarray=False)
    est = fit(ProxClassifier(hash_bits=6), blocks, da.from_array(y, chunks=1500), client=client,
              sequential=True, classes=[-1, 1])
    assert _same_bits(est, ProxClassifier(hash_bits=6).partial_fit(X, y, classes=[-1, 1]))
    with pytest.raises(ValueError, match="hash_bits=7 but the estimator's hash_bits=6"):
        fit(ProxClassifier(hash_bits=6), paths, client=client, hash_bits=7)


def test_dask_bag_of_blocks(client):
    X, y = _problem(6000, 100, 4)
    blocks = [(X[i:i + 1000], y[i:i + 1000]) for i in range(0, 6000, 1000)]
    bag = db.from_sequence(blocks, npartitions=3)
    est = fit(ProxClassifier(), bag, client=client, passes=2)
    assert est.t_ == 12_000 and est.score(X, y) > 0.8
    seq = fit(ProxClassifier(), bag, client=client, sequential=True)
    assert _same_bits(seq, ProxClassifier().partial_fit(X, y, classes=[-1, 1]))
    with pytest.raises(ValueError, match="sync_rows is for files"):
        fit(ProxClassifier(), bag, client=client, sync_rows=1000)


def test_blocks_of_float32_and_float64_train_as_their_values(client):
    """A collection whose blocks hold float32 and float64 rows trains, in either mode,
    as the same values held in float64 (the parallel mode's start joined the first
    blocks' raw bytes as one type: "Input X contains NaN or infinity")."""
    X, y = _problem(4000, 100, 5)
    single = X[:2000].astype(np.float32)
    held = sp.csr_matrix(single, dtype=np.float64)
    for sequential in (False, True):
        mixed, same = (fit(ProxClassifier(), db.from_sequence([(first, y[:2000]), (X[2000:], y[2000:])], npartitions=2),
                           client=client, sequential=sequential, n_workers=2) for first in (single, held))
        assert mixed.t_ == 4000 and _same_bits(mixed, same)


def test_blocks_of_unknown_sizes_and_dataframes_train_as_known_blocks(client):
    """Row blocks of unknown sizes (a boolean selection, a DataFrame's values), with
    labels in blocks known or not, and a dask DataFrame with its labels' Series, train
    as the same rows in blocks of known sizes, in either mode (the parallel mode dealt
    NaN sizes, leaving a group without blocks: AttributeError; a DataFrame was taken
    for a list of files: "y is read from the files' labels")."""
    X, y = _problem(4000, 50, 6)
    dX, dy = da.from_array(X.toarray(), chunks=(1000, 50)), da.from_array(y, chunks=1000)
    every = dy != 0
    for sequential in (False, True):
        known = fit(ProxClassifier(), dX, dy, client=client, sequential=sequential, n_workers=2)
        for rows, labels in ((dX[every], dy[every]), (dX[every], dy), (dd.from_dask_array(dX), dd.from_dask_array(dy)),
                             (dd.from_dask_array(dX).values, dy[:, None])):
            assert np.isnan(rows.shape[0]) or isinstance(rows, dd.DataFrame)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", DataConversionWarning)     # (dy[:, None]: its own test)
                est = fit(ProxClassifier(), rows, labels, client=client, sequential=sequential, n_workers=2)
            assert est.t_ == 4000 and _same_bits(est, known)


def test_a_dataframe_fit_keeps_its_names_and_a_column_of_labels_warns_as_the_flat_fit(client):
    """A model fitted on a dask DataFrame had no feature_names_in_, and an (n, 1) y no
    DataConversionWarning, where ProxClassifier.fit on the same pandas data has both:
    the names are kept when all are strings (predict then checks them, as scikit-learn
    does), and the column of labels warns."""
    X, y = _problem(400, 3, 8)
    frame = pd.DataFrame(X.toarray(), columns=["a", "b", "c"])
    flat = ProxClassifier().fit(frame, y)
    dX, dy = dd.from_pandas(frame, npartitions=2), dd.from_pandas(pd.Series(y), npartitions=2)
    with warnings.catch_warnings():
        warnings.simplefilter("error")                  # a Series of labels: no warning
        est = fit(ProxClassifier(), dX, dy, client=client, sequential=True)
    assert list(est.feature_names_in_) == list(flat.feature_names_in_) == ["a", "b", "c"]
    with pytest.raises(ValueError, match="The feature names should match those that were passed during fit"):
        est.predict(frame.rename(columns={"a": "z"}))
    with pytest.warns(UserWarning, match="X does not have valid feature names"):
        est.predict(X.toarray())
    unnamed = fit(ProxClassifier(), dd.from_pandas(pd.DataFrame(X.toarray()), npartitions=2), dy, client=client)
    assert not hasattr(unnamed, "feature_names_in_") and not hasattr(ProxClassifier().fit(pd.DataFrame(X.toarray()), y),
                                                                      "feature_names_in_")
    column = da.from_array(y[:, None], chunks=(200, 1))
    with pytest.warns(DataConversionWarning, match="A column-vector y was passed when a 1d array was expected"):
        fit(ProxClassifier(), dX.to_dask_array(lengths=True), column, client=client)


def test_collections_refused_with_the_reason(client):
    """What fit cannot train on is named before any task runs (the lengths' mismatch was
    Dask's "Chunks do not add up to shape"; an array in memory was taken for a list of
    files; n_workers 0 and -1 trained with the default and one group, 2.5 raised a
    TypeError)."""
    X, y = _problem(2000, 20, 7)
    dense = X.toarray()
    dX, dy = da.from_array(dense, chunks=(500, 20)), da.from_array(y, chunks=500)
    refused = [((dX, dy[:1500]), "X has 2000 rows but y has 1500 labels"),
               ((dense, y), "data must be a path.*not numpy.ndarray .*dask.array.from_array"),
               ((dense,), "not numpy.ndarray"),
               ((X,), "not scipy.sparse"),
               ((dX[dy != 0], dy.rechunk(1000)), "unknown sizes, X 4 and y 2 of them"),
               ((dX, da.stack([dy, dy], axis=1)), r"one label per row of X, not an array of shape \(2000, 2\)"),
               ((dX[:, 0], dy), "a matrix of rows"),
               ((dd.from_pandas(pd.DataFrame({"a": dense[:, 0], "b": "text"}), npartitions=2), dy),
                "X's values must be numbers, not object"),
               ((db.from_sequence([(X, y)]), dy), "a dask.bag's items hold their labels")]
    for args, message in refused:
        with pytest.raises(ValueError, match=message):
            fit(ProxClassifier(), *args, client=client)
    for n_workers in (0, -1, 2.5, True, "2"):
        with pytest.raises(ValueError, match="n_workers must be None .* or a positive integer"):
            fit(ProxClassifier(), dX, dy, client=client, n_workers=n_workers)
    assert fit(ProxClassifier(), dX, dy, client=client, n_workers=np.int64(3)).t_ == 2000


def test_sample_weight_of_a_dask_array_weighs_the_rows_as_partial_fit(client):
    """sample_weight= (a dask.array, or a Series beside a DataFrame) weighs the rows as
    partial_fit's sample_weight: the sequential model is its bits (fit took no
    sample_weight: a TypeError; only a bag's triples carried weights)."""
    X, y = _problem(2000, 20, 12)
    dense = X.toarray()
    w = np.random.default_rng(12).uniform(0, 3, 2000)
    flat = ProxClassifier().partial_fit(X, y, classes=[-1, 1], sample_weight=w)
    dX = da.from_array(dense, chunks=(500, 20))
    frame = dd.from_pandas(pd.DataFrame(dense), npartitions=4)
    for rows, labels, weights in ((dX, da.from_array(y, chunks=700), da.from_array(w, chunks=300)),
                                  (frame, dd.from_pandas(pd.Series(y), npartitions=4),
                                   dd.from_pandas(pd.Series(w), npartitions=4))):
        est = fit(ProxClassifier(), rows, labels, client=client, sequential=True, sample_weight=weights)
        assert _same_bits(est, flat) and not _same_bits(est, ProxClassifier().partial_fit(X, y, classes=[-1, 1]))
    assert fit(ProxClassifier(), dX, da.from_array(y, chunks=500), client=client,
               sample_weight=da.from_array(w, chunks=500)).t_ == 2000
    refused = [((dX, da.from_array(y, chunks=500)), da.from_array(w[:1500], chunks=500),
                "X has 2000 rows but sample_weight has 1500 weights"),
               ((dX, da.from_array(y, chunks=500)), da.from_array(np.stack([w, w], axis=1), chunks=500),
                r"sample_weight must hold one weight per row of X, not an array of shape \(2000, 2\)"),
               ((dX, da.from_array(y, chunks=500)), da.from_array(-w, chunks=500),
                "sample_weight must be finite and >= 0"),
               ((db.from_sequence([(X, y)]),), da.from_array(w, chunks=500),
                "sample_weight is for a dask.array's or a DataFrame's rows: a dask.bag's items carry theirs")]
    for args, weights, message in refused:
        with pytest.raises(ValueError, match=message):
            fit(ProxClassifier(), *args, client=client, sample_weight=weights)


def test_labels_of_any_kind_train_as_the_flat_fit_takes_them(client):
    """Labels that a flat fit takes train on a cluster too, and the fitted classes_ are
    theirs, as the flat fit's: strings (an array, a Series, a categorical Series, a
    bag's blocks with classes=) were "could not convert string to float"; integer and
    boolean labels came back as classes_ of floats ([0., 1.]). The sequential model
    is the flat fit's over the same rows, bit for bit."""
    X, y = _problem(2000, 20, 9)
    words = np.where(y > 0, "spam", "ham")
    dense = X.toarray()
    flat = ProxClassifier().partial_fit(X, words, classes=["ham", "spam"])
    dX = da.from_array(dense, chunks=(500, 20))
    frame = dd.from_pandas(pd.DataFrame(dense), npartitions=4)
    given = [(dX, da.from_array(words, chunks=500), None), (dX, da.from_array(words.astype(object), chunks=500), None),
             (frame, dd.from_pandas(pd.Series(words), npartitions=4), None),
             (frame, dd.from_pandas(pd.Series(pd.Categorical(words)), npartitions=4), None),
             (dX, da.from_array(words, chunks=500), ["spam", "ham"]),
             (db.from_sequence([(X[i:i + 500], words[i:i + 500]) for i in range(0, 2000, 500)], npartitions=4),
              None, ["ham", "spam"])]
    for rows, labels, classes in given:
        with warnings.catch_warnings():
            warnings.simplefilter("error")                  # (Dask warned converting pandas' strings)
            est = fit(ProxClassifier(), rows, labels, client=client, sequential=True, classes=classes)
        assert list(est.classes_) == ["ham", "spam"] and _same_bits(est, flat)
        assert list(est.predict(dense[:4])) == list(flat.predict(dense[:4]))
    three = np.array(["a", "b", "c"])[np.arange(2000) % 3]
    assert list(fit(ProxClassifier(), dX, da.from_array(three, chunks=500), client=client).classes_) == ["a", "b", "c"]
    for labels in (y, y > 0, (y > 0).astype(np.uint8), pd.array(y, dtype="Int64")):
        flat = ProxClassifier().fit(dense, labels)
        column = dd.from_pandas(pd.Series(labels), npartitions=4) if isinstance(labels, pd.api.extensions.ExtensionArray) \
            else da.from_array(labels, chunks=500)
        est = fit(ProxClassifier(), dX if isinstance(column, da.Array) else frame, column, client=client)
        assert est.classes_.tolist() == flat.classes_.tolist() and est.classes_.dtype.kind == flat.classes_.dtype.kind


def test_labels_that_cannot_train_are_named_with_the_argument_to_give(client):
    """A label outside classes=, a bag's strings without classes=, classes of strings for
    files' numeric labels, classes for a regressor: each a ValueError naming the block
    and row where there is one, and the Python argument to give (the messages named
    the command line's --classes)."""
    X, y = _problem(1000, 20, 10)
    dX = da.from_array(X.toarray(), chunks=(250, 20))
    words, three = np.where(y > 0, "spam", "ham"), np.arange(1000) % 3
    refused = [((dX, da.from_array(words, chunks=250)), dict(classes=["spam", "eggs"]),
                r"block 0: row \d+: label 'ham' is not among the classes 'eggs', 'spam': give classes= with every"),
               ((db.from_sequence([(X, words)]),), {},
                r"block 0: row 1: label '(ham|spam)' is not a number: a regressor's targets are numbers, and a "
                r"classifier's labels of other kinds in a bag need classes= with every label"),
               ((dX, da.from_array(three, chunks=250)), {},
                r"a third label, 2, after 0 and 1: this looks like a multiclass stream: give classes=\[0, 1, 2\]"),
               ((dX, da.from_array(three, chunks=250)), dict(classes=[0, 1]),
                r"row \d+: label 2 is not among the classes 0,1: give classes= with every label of the stream")]
    for args, options, message in refused:
        with pytest.raises(ValueError, match=message) as info:
            fit(ProxClassifier(), *args, client=client, **options)
        assert "--" not in str(info.value)
    with pytest.raises(ValueError, match="the files' labels are numbers: classes must be numbers too, not 'a', 'b'"):
        fit(ProxClassifier(), "no-such-file.svm", client=client, classes=["a", "b"])
    with pytest.raises(ValueError, match="row 1: label 'ham' is not a number: a regressor's targets are numbers"):
        fit(ProxRegressor(), dX, da.from_array(np.full(1000, "ham"), chunks=250), client=client)
    with pytest.raises(ValueError, match="classes are a classifier's: a ProxRegressor takes none"):
        fit(ProxRegressor(), dX, da.from_array(y, chunks=250), client=client, classes=[0, 1])


def test_integers_of_numpy_count_as_integers_and_a_failed_run_logs_no_cluster_error(client, files):
    """passes and sync_rows of NumPy's integer types (a grid search's) were refused
    ("passes must be a positive integer, not np.int64(2)") and True taken for one
    pass; a run that failed on a bad label made the scheduler log an AssertionError
    traceback while the run's futures were cancelled (distributed's cancel walks the
    keys' dependents): they are released, and the cluster keeps no task of the run."""
    paths, _ = files
    est = fit(ProxClassifier(), paths, client=client, passes=np.int64(2), sync_rows=np.int64(2000))
    assert est.n_iter_ == 2 and type(est.n_iter_) is int
    for passes in (True, 0, 2.0):
        with pytest.raises(ValueError, match="passes must be a positive integer"):
            fit(ProxClassifier(), paths, client=client, passes=passes)
    records = []
    handler = logging.Handler()
    handler.emit = records.append
    logger = logging.getLogger("distributed")
    logger.addHandler(handler)
    try:
        X, _ = _problem(4000, 20, 11)
        dX = da.from_array(X.toarray(), chunks=(100, 20))
        for sequential in (False, True):
            before = _tasks(client)
            with pytest.raises(ValueError, match="label 2 is not among the classes 0,1"):
                fit(ProxClassifier(), dX, da.from_array(np.arange(4000) % 3, chunks=100), client=client,
                    classes=[0, 1], passes=3, sequential=sequential)
            within(60, _no_tasks_left, client, before)
    finally:
        logger.removeHandler(handler)
    assert not [r for r in records if r.exc_info and r.exc_info[0] is AssertionError]


def _tasks(client):
    return client.run_on_scheduler(lambda dask_scheduler: set(dask_scheduler.tasks))


def _no_tasks_left(client, before):
    """Wait until the scheduler holds no task that it did not hold ``before``."""
    while _tasks(client) - before:
        time.sleep(0.05)


def test_a_block_of_unaligned_arrays_trains_as_its_values():
    """A block whose CSR arrays lie at unaligned addresses (seen once in the suite, a bag's
    block moved between workers: "NotImplementedError: memoryview: unsupported format
    =i", the trainer rebuilding a part's row pointers) trains as the same block aligned,
    in both modes' tasks (run here, in process)."""
    from fastprox.dask import _tasks
    from fastprox.dask._shares import BlockShare
    from fastprox.stream.model import StreamModel
    X, y = _problem(3000, 40, 8)
    odd = sp.csr_matrix((unaligned(X.data), unaligned(X.indices), unaligned(X.indptr)), shape=X.shape)
    params = parallel_params(ProxClassifier().get_params())
    est = _tasks.start(StreamModel(params, False, None), [BlockShare("b", 0)], (X, y))
    def fresh():        # (as a task receives it: its own copy)
        return pickle.loads(pickle.dumps(est))
    models = [(_tasks.train_in_turn(None, fresh(), BlockShare("b", 0), True, True, (rows, unaligned(y))).est,
               _tasks.train_block(fresh(), None, BlockShare("b", 0), (rows, y)).est) for rows in (odd, X)]
    for one, other in zip(*models):
        assert one.learner.t == 3000 and pickle.dumps(one.learner) == pickle.dumps(other.learner)


def test_dask_bag_sample_weights_weigh_steps_and_the_pass_mean(client):
    """A bag's (X, y, sample_weight) items weigh the rows as partial_fit's sample_weight
    (sequential mode: its bits), and a pass's progressive loss is the weighted losses'
    sum over the weights' sum, as fastprox train's (VW's): in parallel mode too (with
    one group its pass is the sequential one, so the same mean; with two, the rounds'
    weights add up)."""
    X, y = _problem(6000, 100, 5)
    w = np.random.default_rng(5).uniform(0.05, 4.0, size=len(y))
    w[::7] = 0.0
    bag = db.from_sequence([(X[i:i + 1000], y[i:i + 1000], w[i:i + 1000]) for i in range(0, 6000, 1000)],
                           npartitions=3)
    rule = dict(schedule="adagrad")
    seq = fit(ProxClassifier(**rule), bag, client=client, sequential=True)
    assert _same_bits(seq, ProxClassifier(**rule).partial_fit(X, y, classes=[-1, 1], sample_weight=w))
    one = fit(ProxClassifier(**rule), bag, client=client, n_workers=1)
    assert one.progressive_loss_ == pytest.approx(seq.progressive_loss_, rel=1e-9)
    unweighted = fit(ProxClassifier(**rule), db.from_sequence([(X[i:i + 1000], y[i:i + 1000]) for i in
                                                                range(0, 6000, 1000)], npartitions=3),
                     client=client, n_workers=1)
    assert not _same_bits(one, unweighted)
    two = fit(ProxClassifier(**rule), bag, client=client, n_workers=2, passes=2)
    assert 0 < two.progressive_loss_ < 1 and two.t_ == 2 * 6000
    bad = db.from_sequence([(X[:1000], y[:1000], w[:999])], npartitions=1)
    with pytest.raises(ValueError, match="block 0: X has 1000 rows but sample_weight has 999"):
        fit(ProxClassifier(**rule), bad, client=client, sequential=True)


# --- faults -----------------------------------------------------------------------------

@pytest.mark.parametrize("sequential", [False, True])
def test_a_corrupt_share_names_file_and_line(client, files, tmp_path, sequential):
    paths, _ = files
    lines = Path(paths[1]).read_text().splitlines()
    lines[1499] = "1 3:abc"
    bad = tmp_path / "bad.svm"
    bad.write_text("\n".join(lines) + "\n")
    with pytest.raises(ValueError, match=r"bad\.svm:1500: .*'abc'"):
        fit(ProxClassifier(), [paths[0], str(bad), paths[2]], client=client, sequential=sequential)
    truncated = tmp_path / "cut.svm.gz"
    truncated.write_bytes(Path(paths[3]).read_bytes()[:5000])
    with pytest.raises(ValueError, match=r"cut\.svm\.gz:\d+: corrupt or truncated"):
        fit(ProxClassifier(), [paths[0], str(truncated)], client=client, sequential=sequential)
    with pytest.raises(FileNotFoundError):
        fit(ProxClassifier(), [paths[0], str(tmp_path / "missing.svm")], client=client)


def _die_once(marker):
    """In a worker: make the next share's training kill this worker's process, once
    across the cluster (the marker file says it happened)."""
    from fastprox.stream import trainer

    feed = trainer.Trainer.feed

    def dying(self, items):
        try:
            fd = os.open(marker, os.O_CREAT | os.O_EXCL)
        except FileExistsError:
            return feed(self, items)
        os.close(fd)
        os._exit(1)
    trainer.Trainer.feed = dying


@pytest.mark.parametrize("sequential", [False, True])
def test_a_killed_worker_is_replaced_and_no_share_is_missing(client, files, tmp_path, sequential):
    paths, _ = files
    clean = fit(ProxClassifier(), paths, client=client, sequential=sequential, passes=2)
    marker = str(tmp_path / "killed")
    client.run(_die_once, marker)
    try:
        est = within(180, fit, ProxClassifier(), paths, client=client, sequential=sequential, passes=2)
    finally:
        client.run(_restore)
    assert os.path.exists(marker)               # a worker did die
    assert est.t_ == clean.t_ == 20_000         # its share was trained on again, elsewhere
    assert _same_bits(est, clean)
    client.wait_for_workers(2, timeout=60)


def _die_together(marker, workers):
    """In a worker: make its next share's training kill this worker's process once
    ``workers`` processes are in that training (files named after their pids in
    the directory ``marker``; 60 s at most): every worker lost at once, the cluster
    left without a running worker until its nannies have restarted them."""
    from fastprox.stream import trainer

    def dying(self, items):
        Path(marker, str(os.getpid())).touch()
        deadline = time.monotonic() + 60
        while len(os.listdir(marker)) < workers and time.monotonic() < deadline:
            time.sleep(0.01)
        os._exit(1)
    trainer.Trainer.feed = dying


def test_every_worker_killed_at_once_is_replaced_and_the_run_ends(client, files, tmp_path):
    """The parallel mode asks for its tasks where their inputs lie (``workers=``,
    ``allow_other_workers=True``). A task Dask decides while no worker runs waits in
    "no-worker", and Dask gives a joining worker only the waiting tasks its
    restrictions allow: those naming lost workers waited for ever (the run hung in
    `Watch.done`), though they allow other workers. The guard turns that hang into
    a failure."""
    paths, _ = files
    clean = fit(ProxClassifier(), paths, client=client, passes=2)
    marker = tmp_path / "dying"
    marker.mkdir()
    client.run(_die_together, str(marker), 2)        # (the restarted workers train as usual)
    try:
        est = within(180, fit, ProxClassifier(), paths, client=client, passes=2)
    finally:
        client.wait_for_workers(2, timeout=120)
    assert len(os.listdir(marker)) == 2               # both workers died
    assert est.t_ == clean.t_ == 20_000
    assert _same_bits(est, clean)


def _restore(feed=Trainer.feed):
    from fastprox.stream import trainer
    trainer.Trainer.feed = feed


def _die_always():
    from fastprox.stream import trainer
    trainer.Trainer.feed = lambda self, items: os._exit(1)


def test_a_share_that_kills_every_worker_is_a_clear_error(files, tmp_path):
    """Past Dask's allowed failures (0 here: one death) the call raises ClusterError, a
    ConnectionError that the command line prints as one line; no model."""
    paths, _ = files
    with dask.config.set({"distributed.scheduler.allowed-failures": 0}), \
            LocalCluster(n_workers=1, processes=True, threads_per_worker=1, dashboard_address=DASHBOARD) as cluster, \
            Client(cluster) as c:
        c.run(_die_always)
        with pytest.raises(ClusterError, match="no model was returned"):
            fit(ProxClassifier(), paths, client=c, sequential=True)
    assert issubclass(ClusterError, ConnectionError)


@pytest.mark.parametrize("sequential", [False, True])
def test_a_cluster_without_workers_ends_with_the_timeout(files, sequential):
    """A cluster that has lost all its workers: Dask's tasks would wait for ever (its
    no-workers timeout is off by default); fit ends with ClusterError once it has had
    no worker for ``timeout`` seconds, and the command line likewise."""
    paths, _ = files
    with LocalCluster(n_workers=1, processes=False, dashboard_address=DASHBOARD) as cluster, Client(cluster) as c:
        cluster.scale(0)
        while c.nthreads():
            time.sleep(0.05)
        with pytest.raises(ClusterError, match=r"no workers for 1\.5 s \(timeout\).*no model was returned"):
            fit(ProxClassifier(), paths, client=c, sequential=sequential, n_workers=2, timeout=1.5)
        if not sequential:
            status = main(["train", *paths, "--scheduler", cluster.scheduler_address, "--timeout", "1",
                           "--quiet"])
            assert status == 1
    with pytest.raises(ValueError, match="timeout must be a positive number of seconds"):
        fit(ProxClassifier(), paths, client=None, timeout=0)


@pytest.mark.parametrize("sequential", [False, True])
def test_a_client_closed_during_the_run_is_a_clear_error(client, files, sequential):
    """A client closed during a run (here by the progress callback, at the first line)
    ends it with ClusterError saying so (it was Dask's ClosedClientError "Can't send
    cancel-keys message", from the run's clean-up, hiding the cancelled futures'
    error); a closed client is refused before any work (AttributeError on NoneType)."""
    paths, _ = files
    other = Client(client.scheduler.address)
    with pytest.raises(ClusterError, match="the Dask client was closed during the run; no model"):
        within(120, fit, ProxClassifier(), paths, client=other, passes=3, sequential=sequential,
               progress=lambda line: other.close())
    with pytest.raises(ValueError, match="the Dask client is closed: pass an open one"):
        fit(ProxClassifier(), paths, client=other)


def test_a_directory_among_the_files_is_named(client, files, tmp_path):
    paths, _ = files
    (tmp_path / "part-dir.svm").mkdir()
    for given in ([paths[0], str(tmp_path / "part-dir.svm")], str(tmp_path / "part-*.svm")):
        with pytest.raises(IsADirectoryError, match="is a directory, not a data file") as info:
            fit(ProxClassifier(), given, client=client)
        assert info.value.filename == str(tmp_path / "part-dir.svm")


def test_sync_rows_below_the_floor_is_refused_with_the_reason(client, files, capsys):
    """sync_rows=3 made 2,667 rounds of 16,000 rows (97 s), each a trip through the
    scheduler longer than its rows: refused at once, saying why."""
    paths, _ = files
    with pytest.raises(ValueError, match=r"^sync_rows=3 would mix the models every 3 rows per group: .* "
                                         r"give at least 1000$"):
        fit(ProxClassifier(), paths, client=client, sync_rows=3)
    status = main(["train", *paths, "--scheduler", client.scheduler.address, "--sync-rows", "3"])
    err = capsys.readouterr().err
    assert status == 1 and err.startswith("fastprox: error: --sync-rows 3 would mix the models every 3 rows")
    assert main(["train", *paths, "--timeout", "5"]) == 2       # (an option's value)
    assert "--timeout is for training on a cluster: give --scheduler too" in capsys.readouterr().err


def test_a_scheduler_address_that_refuses_fails_at_once(files, capsys):
    """Nothing listening at --scheduler's address: Dask's client retried the refused
    connection for its 20 s timeout; the probe fails at once, in one line."""
    paths, _ = files
    with socket.socket() as s:              # a port that was free a moment ago: now refused
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    assert main(["train", *paths, "--scheduler", f"tcp://127.0.0.1:{port}", "--quiet"]) == 1
    err = capsys.readouterr().err
    assert err == (f"fastprox: error: --scheduler tcp://127.0.0.1:{port}: nothing listens there (connection "
                   f"refused); start the scheduler (dask scheduler) or give its address\n")


def test_a_scheduler_address_where_a_listener_stays_silent_fails_in_one_line(files, capsys, monkeypatch):
    """A listener that accepts and never writes at --scheduler's address: Dask's client
    waits for the scheduler's handshake without a timeout (the command hung until the
    listener closed); the probe reads for CONNECT_SECONDS (0.5 here) and names it."""
    from fastprox.cli import cluster
    monkeypatch.setattr(cluster, "CONNECT_SECONDS", 0.5)
    paths, _ = files
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen(4)
        port = server.getsockname()[1]
        assert main(["train", *paths, "--scheduler", f"tcp://127.0.0.1:{port}", "--quiet"]) == 1
    assert capsys.readouterr().err == (f"fastprox: error: --scheduler tcp://127.0.0.1:{port}: what listens there "
                                       f"sent nothing for 0.5 s, where a Dask scheduler sends its handshake at once; "
                                       f"give the scheduler's address (8786 by default)\n")


def test_a_scheduler_address_where_another_service_answers_is_named(files, capsys):
    """A web server at --scheduler's address (a dashboard's port given for the
    scheduler's): Dask read its reply as a message of exabytes, and the MemoryError was
    worded as training's ('use fewer features ...'); now one line naming the address."""
    paths, _ = files
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen(4)
        server.settimeout(0.1)
        port = server.getsockname()[1]
        done = threading.Event()

        def answer():                           # every connection: the probe's, the client's
            while not done.is_set():
                try:
                    conn, _ = server.accept()
                except TimeoutError:
                    continue
                with conn:
                    conn.sendall(b"HTTP/1.1 400 Bad Request\r\nconnection: close\r\ncontent-length: 0\r\n\r\n")

        web = threading.Thread(target=answer, daemon=True)
        web.start()
        try:
            status = main(["train", *paths, "--scheduler", f"tcp://127.0.0.1:{port}", "--quiet"])
        finally:
            done.set()
            web.join()
    assert status == 1
    assert capsys.readouterr().err == (f"fastprox: error: --scheduler tcp://127.0.0.1:{port}: what answers there is "
                                       f"not a Dask scheduler (its reply is not Dask's protocol; the dashboard's "
                                       f"port is not the scheduler's, 8786 by default)\n")


# --- dask-ml's wrappers --------------------------------------------------------------------

def test_parallel_post_fit_predicts_over_a_dask_array(client, files):
    from dask_ml.wrappers import ParallelPostFit
    paths, test = files
    est = fit(ProxClassifier(), paths, client=client, n_features=300)
    X, y = load_libsvm(test, n_features=300)
    dX = da.from_array(X.toarray(), chunks=(500, 300))
    wrapped = ParallelPostFit(estimator=est)
    np.testing.assert_array_equal(wrapped.predict(dX).compute(), est.predict(X))
    np.testing.assert_allclose(wrapped.predict_proba(dX).compute(), est.predict_proba(X))


def test_incremental_trains_block_after_block(client):
    from dask_ml.wrappers import Incremental
    X, y = _problem(4000, 50, 5)
    dense = X.toarray()
    dX, dy = da.from_array(dense, chunks=(1000, 50)), da.from_array(y, chunks=1000)
    inc = Incremental(ProxClassifier(eta0=0.5, delta=1.0), shuffle_blocks=False).fit(dX, dy, classes=[-1, 1])
    one = ProxClassifier(eta0=0.5, delta=1.0)
    for i in range(0, 4000, 1000):
        one.partial_fit(dense[i:i + 1000], y[i:i + 1000], classes=[-1, 1])
    assert _same_bits(inc.estimator_, one)


# --- the command line --------------------------------------------------------------------

def test_train_scheduler(client, files, tmp_path, capsys):
    paths, test = files
    address = client.scheduler.address
    model = tmp_path / "m.npz"
    assert main(["train", *paths, "--scheduler", address, "--sequential", "--model", str(model)]) == 0
    out, err = capsys.readouterr()
    assert "counter" in err and "finished run" in err and "model saved" in out
    assert _same_bits(load_model(model), _single(tmp_path, paths))
    assert main(["train", *paths, "--scheduler", address, "--passes", "2", "--test", test]) == 0
    out, err = capsys.readouterr()
    assert "pass 2/2, round 1: 2 worker(s), 10,000 rows" in err and "test accuracy" in out
    bad = tmp_path / "bad.svm"
    bad.write_text("1 1:1\n-1 2:x\n")
    assert main(["train", str(bad), "--scheduler", address]) == 1
    out, err = capsys.readouterr()
    assert err.startswith(f"fastprox: error: {bad}:2: ") and "Traceback" not in err
    assert main(["train", *paths, "--scheduler", address, "--schedule", "normalized"]) == 1
    assert "cannot be trained in parallel" in capsys.readouterr().err
    assert main(["train", *paths, "--sequential"]) == 2
    assert "give --scheduler too" in capsys.readouterr().err


# --- shared data ---------------------------------------------------------------------------

@pytest.fixture(scope="module")
def a9a_parts(tmp_path_factory, shared_data):
    train, test = shared_data("a9a/a9a", "a9a/a9a.t")
    X, y = load_libsvm(train, n_features=123)
    d = tmp_path_factory.mktemp("a9a")
    paths = []
    for i, start in enumerate(range(0, X.shape[0], 8200)):
        paths.append(str(d / f"a9a-{i}.svm.gz"))
        dump_libsvm(X[start:start + 8200], y[start:start + 8200], paths[-1])
    return paths, str(test)


def test_a9a_parallel_within_the_margin(client, a9a_parts, tmp_path):
    paths, test = a9a_parts
    est = fit(ProxClassifier(), paths, client=client, passes=3, n_features=123, n_workers=2)
    single = _single(tmp_path, paths, "--passes", "3", "--n-features", "123")
    assert abs(_score(est, test) - _score(single, test)) <= 0.005      # half a point
