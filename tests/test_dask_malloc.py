"""fastprox.dask._malloc: the allocator's thresholds lifted while the run's tasks
work on a worker, put back when the last one ends; the same model either way."""
import os
import pickle
import subprocess
import sys
import threading

import numpy as np

from tests.support.shared import extra_module

extra_module("distributed", module_level=True)     # the dask extra: fastprox.dask imports it

from fastprox import dump_libsvm
from fastprox.dask import _malloc, _tasks
from fastprox.dask._malloc import LIFTED, M_MMAP_THRESHOLD, M_TRIM_THRESHOLD, Thresholds
from tests.support.cli_process import SRC



class FakeLibc:
    """mallopt and malloc_trim, recorded; ``trimmed`` is set at malloc_trim (the timer's
    last call)."""

    def __init__(self):
        self.calls, self.trimmed = [], threading.Event()

    def mallopt(self, param, value):
        self.calls.append(("mallopt", param, value))
        return 1

    def malloc_trim(self, pad):
        self.calls.append(("malloc_trim", pad))
        self.trimmed.set()
        return 1


RESTORE = {M_TRIM_THRESHOLD: 65536, M_MMAP_THRESHOLD: 131072}
LOWERED = [("mallopt", M_TRIM_THRESHOLD, 65536), ("mallopt", M_MMAP_THRESHOLD, 131072), ("malloc_trim", 0)]


def _lowered(libc):
    """Wait for the timer to have put the thresholds back and trimmed."""
    assert libc.trimmed.wait(timeout=60), "the timer never put the thresholds back"   # (a hang's guard)


def test_lifted_while_tasks_work_and_put_back_once_none_has_for_a_while():
    libc = FakeLibc()
    thresholds = Thresholds(libc, RESTORE, after=0.05)
    with thresholds:
        with thresholds:                # a task inside a task (train_group's contribute)
            pass
        assert libc.calls == [("mallopt", p, v) for p, v in LIFTED.items()]
    _lowered(libc)
    assert libc.calls[len(LIFTED):] == LOWERED and not thresholds.up


def test_a_task_soon_after_the_last_finds_them_still_lifted():
    libc = FakeLibc()
    thresholds = Thresholds(libc, RESTORE, after=60.0)
    for _ in range(3):                  # a round's training, then its mix's tasks
        with thresholds:
            pass
    assert libc.calls == [("mallopt", p, v) for p, v in LIFTED.items()] and thresholds.up
    thresholds.after = 0.0              # the last timer waits a minute: a new one, at once
    with thresholds:
        pass
    _lowered(libc)
    assert libc.calls[len(LIFTED):] == LOWERED


def test_tasks_of_several_threads_share_one_lift():
    libc = FakeLibc()
    thresholds = Thresholds(libc, RESTORE, after=0.0)
    inside, leave = threading.Barrier(3), threading.Event()

    def task():
        with thresholds:
            inside.wait()
            leave.wait()

    threads = [threading.Thread(target=task) for _ in range(2)]
    for t in threads:
        t.start()
    inside.wait()
    assert len(libc.calls) == len(LIFTED) and thresholds.working == 2 and thresholds.timer is None
    leave.set()
    for t in threads:
        t.join()
    _lowered(libc)
    assert thresholds.working == 0 and libc.calls[len(LIFTED):] == LOWERED


def test_nothing_changes_where_the_environment_fixes_no_threshold(monkeypatch):
    for name in _malloc.ENVIRON.values():
        monkeypatch.delenv(name, raising=False)
    assert Thresholds.of_process().libc is None
    monkeypatch.setenv("MALLOC_TRIM_THRESHOLD_", "65536")      # as Dask's nanny starts its workers
    found = Thresholds.of_process()
    assert found.restore == {M_TRIM_THRESHOLD: 65536, M_MMAP_THRESHOLD: _malloc.DEFAULT}


def test_an_exception_still_puts_the_thresholds_back():
    libc = FakeLibc()
    thresholds = Thresholds(libc, RESTORE, after=0.0)
    try:
        with thresholds:
            raise ValueError("a.svm:3: bad line")
    except ValueError:
        pass
    _lowered(libc)
    assert thresholds.working == 0 and libc.calls[len(LIFTED):] == LOWERED


def test_the_tasks_pickle_by_name():
    assert pickle.loads(pickle.dumps(_tasks.train_group)) is _tasks.train_group
    assert _tasks.train_group.__name__ == "train_group" and _tasks.add.__module__ == "fastprox.dask._tasks"


ROUND = r"""
import hashlib, sys
import numpy as np
from fastprox import ProxClassifier
from fastprox._mixing import mix_kind, parallel_params
from fastprox.dask import _tasks, _malloc
from fastprox.dask._shares import file_shares
from fastprox.stream.model import StreamModel
params = parallel_params(ProxClassifier(schedule="adagrad", step="gradient", alpha=1e-6).get_params())
est = StreamModel(params, False, None)
est.width_origin = "the largest feature index in the data"
shares = file_shares(sys.argv[1:])
kind = mix_kind(params["update"], params["schedule"], params["penalty"])
start = _tasks.start(est, shares)
part = _tasks.train_group(start, 0, shares, (0, 0), None, kind)
mixed = _tasks.mix(start, part, kind)
digest = hashlib.sha256()
for name, a in sorted(part.dense().arrays.items()):
    digest.update(name.encode() + np.ascontiguousarray(a).tobytes())
digest.update(mixed.learner.coef().tobytes())
print(_malloc._thresholds().libc is not None, digest.hexdigest())
"""


def test_a_round_has_the_same_bits_with_the_thresholds_lifted(tmp_path):
    rng = np.random.default_rng(0)
    paths = []
    for k in range(2):
        X = (rng.random((3000, 400)) < 0.05) * rng.random((3000, 400))
        y = np.where(X[:, :10].sum(axis=1) > 0.25, 1.0, -1.0)
        paths.append(str(tmp_path / f"part-{k}.svm"))
        dump_libsvm(X, y, paths[-1])
    env = {k: v for k, v in os.environ.items() if k not in _malloc.ENVIRON.values()}
    env["PYTHONPATH"] = os.pathsep.join([SRC, env.get("PYTHONPATH", "")])
    found = [subprocess.run([sys.executable, "-c", ROUND, *paths], env=dict(env, **extra), capture_output=True,
                            text=True, check=True).stdout.split()
             for extra in ({}, {"MALLOC_TRIM_THRESHOLD_": "65536"})]
    assert found[0][0] == "False" and found[1][0] == str(_malloc._glibc() is not None)
    assert found[0][1] == found[1][1]
