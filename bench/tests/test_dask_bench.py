"""Smoke tests of the cluster benchmarks on small data: the simulated cluster
(bench.dask_cluster: its parts, network model, accuracy and plot) and machines
as pinned cores (bench.dask --cores-per-machine 1). Each runs in a process of
its own: they pin threads to cores. Slow (a minute each on a loaded 2-core
machine: models of 2^20 features, a cluster's start)."""
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _run(*args):
    """``python -m args`` from the repository's root, with the fastprox this test
    imports (the installed package in CI, a checkout's src/ when given on PYTHONPATH)."""
    import fastprox
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(Path(fastprox.__file__).parents[1]), str(ROOT)]))
    return subprocess.run([sys.executable, "-m", *args], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=600)


@pytest.mark.slow
def test_simulated_cluster_writes_its_tables_and_plot(tmp_path):
    out = tmp_path / "cluster.md"
    core = str(min(os.sched_getaffinity(0)))
    done = _run("bench.dask_cluster", "--dir", str(tmp_path / "data"), "--rows", "3000", "--shares", "4",
                "--test-rows", "2000", "--workers", "2", "4", "--core", core, "--out", str(out))
    assert done.returncode == 0, done.stderr
    text = out.read_text()
    assert "| 4 | " in text and "critical path" in text and "| one machine |" in text
    assert out.with_suffix(".png").stat().st_size > 0
    again = _run("bench.dask_cluster", "--dir", str(tmp_path / "data"), "--shares", "4", "--workers", "8",
                 "--out", str(out))
    assert again.returncode == 2 or "needs at least as many --shares" in again.stderr
    assert "Traceback" not in again.stderr


@pytest.mark.slow
@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="pins 2 workers to 2 cores")
def test_pinned_cores_compare_one_core_with_two(tmp_path):
    out = tmp_path / "dask.md"
    done = _run("bench.dask", "--cores-per-machine", "1", "--dir", str(tmp_path / "data"), "--files", "2",
                "--rows", "3000", "--test-rows", "2000", "--runs", "1", "--out", str(out))
    assert done.returncode == 0, done.stderr
    text = (tmp_path / "dask_pinned.md").read_text()
    assert "| one core (fastprox train) | 3 |" in text and "| 2 workers, a core each | 1 |" in text
    assert "| two halves at once, a core each (no Dask) | 1 |" in text and "The two halves at once" in text
    assert "the target is stated at >= 2 GB" in text
    assert "The cores themselves" in text and "(steal, `/proc/stat`)" in text
    assert "speed, median of the runs' own (each run's)" in text and "the median of the runs' own ratios" in text
    assert "minor page faults, thousands" in text and "`bench.dask_workload.USER_ENVIRON`" in text
    assert "| passes | worker | all | event loop |" in text and "| `train_group` |" in text and "`distributed.worker.profile.enabled: False`" in text
    wrong = _run("bench.dask", "--cores-per-machine", "2", "--dir", str(tmp_path / "data"))
    assert "takes 1" in wrong.stderr and "Traceback" not in wrong.stderr


@pytest.mark.slow
@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="pins 2 workers to 2 cores")
def test_pinned_timeline_stamps_every_process(tmp_path):
    out = tmp_path / "dask.md"
    done = _run("bench.dask", "--cores-per-machine", "1", "--timeline", "--dir", str(tmp_path / "data"), "--files",
                "2", "--rows", "3000", "--test-rows", "2000", "--runs", "1", "--out", str(out))
    assert done.returncode == 0, done.stderr
    text = (tmp_path / "dask_timeline.md").read_text()
    assert "## Run 0 (cold" in text and "## Run 1 (warm)" in text and "| worker 1 | train_group |" in text
    assert "| client | save_model |" in text and "| worker 0 | first rows read |" in text
    assert "| client | client joins the last round's mixed shards |" in text


def test_per_run_speed_is_the_median_of_each_runs_own_ratio():
    """Each run's one core over the cluster timed beside it, then their median (the
    upper one of an even count, as the benchmark's medians of times)."""
    from bench.dask_pinned import per_run
    assert per_run([8.0, 9.0, 10.0], [4.0, 6.0, 4.0]) == (2.0, [2.0, 1.5, 2.5])
    assert per_run([8.0, 6.0], [4.0, 4.0])[0] == 2.0


def test_threads_that_end_while_they_are_read_are_skipped(monkeypatch):
    """A thread listed in /proc/self/task may end before it is read or pinned (a Dask
    worker's threads come and go): `_cpu` counts it among the threads that ended and
    `pin` passes over it, where both raised (FileNotFoundError, ProcessLookupError)."""
    import bench.dask_pinned as pinned
    listed = os.listdir
    gone = str(2**22 + 1)       # (above the largest thread id Linux gives: no such thread)
    monkeypatch.setattr(pinned.os, "listdir", lambda path: [gone])     # (no live thread pinned)
    pinned.pin(min(os.sched_getaffinity(0)))
    monkeypatch.setattr(pinned.os, "listdir", lambda path: listed(path) + [gone])
    used = pinned._cpu()
    assert 0 < used["main"] <= used["live"]

USER_ENVIRON = r"""
import os
if __name__ == "__main__":
    import bench.dask_workload
    from distributed import LocalCluster
    with LocalCluster(n_workers=1, processes=True, threads_per_worker=1, dashboard_address=None):
        print("MALLOC_TRIM_THRESHOLD_" in os.environ, "MALLOC_TRIM_THRESHOLD_" in bench.dask_workload.USER_ENVIRON)
"""


def test_the_one_core_runs_without_the_nannys_environment(tmp_path):
    """Dask's nanny writes its workers' MALLOC_TRIM_THRESHOLD_ into the environment of
    the process that starts them (the benchmark's); `fastprox train` and the client run in
    the environment read before (bench.dask_workload.USER_ENVIRON), as from a user's shell."""
    script = tmp_path / "environ.py"
    script.write_text(USER_ENVIRON)
    import fastprox
    env = {k: v for k, v in os.environ.items() if k != "MALLOC_TRIM_THRESHOLD_"}
    env["PYTHONPATH"] = os.pathsep.join([str(Path(fastprox.__file__).parents[1]), str(ROOT)])
    done = subprocess.run([sys.executable, str(script)], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["True", "False"]
