"""The timeline of one pinned cluster run: ``python -m bench.dask --cores-per-machine 1 --timeline``.

Where a one-pass `fastprox.dask.fit` on 2 pinned one-core workers spends its
wall time outside the training (bench.dask_pinned times it from the client's
`fit` to its saved model). Every process stamps its phases with
``time.perf_counter`` (CLOCK_MONOTONIC on Linux: one clock for every process
of a host, so the client's and the workers' stamps share an origin) and its
CPU seconds there:

- this process (the scheduler's): the cluster's start, its workers ready,
  the workers pinned;
- each worker, by probes put around `fastprox.dask._tasks`' functions (the
  first probe imports fastprox on the worker: timed, as the import the first
  task of a fresh worker pays): every task's begin and end, and in a round the
  global model's copy, the first rows read, the end of the training and the
  contribution;
- the client (a process of its own, as in bench.dask_pinned): its imports and
  its connection (not in the timed run, as there), `fit` called, the rounds'
  futures waited for, the results fetched (the last round's mixed shards among
  them), the shards joined, `fit` returned, the model saved;
- Dask's task stream: each task's input transfers between the workers.

A cold run (the cluster just started, fastprox not yet imported by the
workers: the probes' import is stamped apart) then warm runs on the same
cluster, as a long-lived cluster serves its users. Written to
``dask_timeline.md`` beside ``--out`` (``bench/results/``).
"""
import json
import os
import subprocess
import sys
import time
from pathlib import Path

from bench.dask_workload import RULE_OPTIONS, USER_ENVIRON, generate, passes_options, uptime
from bench.dask_pinned import QUIET, pin
from bench.machine import describe_machine

#: `fastprox.dask._tasks`' task functions the worker probes stamp (begin and end).
TASKS = ("start", "train_group", "contribute", "_round_trainer", "cut", "add", "mix_shard", "join", "mix",
         "summary", "shell")
#: This worker's stamps: (what, begin, end, process CPU at begin, at end, thread CPU spent).
STAMPS = []


def _stamp(what, began, cpu, thread):
    STAMPS.append((what, began, time.perf_counter(), cpu, time.process_time(), time.thread_time() - thread))


def _timed(name, func):
    def probe(*args, **kwargs):
        began, cpu, thread = time.perf_counter(), time.process_time(), time.thread_time()
        try:
            return func(*args, **kwargs)
        finally:
            _stamp(name, began, cpu, thread)
    probe.probed = func
    return probe


def _marked(func):
    """`_tasks._marked` with stamps: its items' first triple (the first rows read:
    the share opened, its first chunk parsed) and the end of its rows (trained)."""
    def probe(items, trainer):
        began, cpu, thread = time.perf_counter(), time.process_time(), time.thread_time()
        first = [True]

        def read():
            for item in items:
                if first[0]:
                    _stamp("first rows read", began, cpu, thread)
                    first[0] = False
                yield item
        yield from func(read(), trainer)
        _stamp("share trained", began, cpu, thread)
    return probe


def install():
    """On a worker: import fastprox.dask's tasks (stamped: a fresh worker's first
    task pays it) and put the probes around them; the worker's pid."""
    began, cpu, thread = time.perf_counter(), time.process_time(), time.thread_time()
    from fastprox.dask import _tasks
    _stamp("import fastprox.dask", began, cpu, thread)
    for name in TASKS:
        func = getattr(_tasks, name)
        setattr(_tasks, name, _timed(name, getattr(func, "probed", func)))     # (the task as it is: lifted)
    if not hasattr(_tasks._marked, "original"):
        original = _tasks._marked
        _tasks._marked = _marked(original)
        _tasks._marked.original = original
    return os.getpid()


def collect():
    """On a worker: its stamps since the last call (and forget them)."""
    out = list(STAMPS)
    STAMPS.clear()
    return out


#: The client's side, stamped: bench.dask_workload.CLUSTER_RUN's fit and save with `_run`'s waits probed.
CLIENT_RUN = r"""
import time
stamps = [("client process started", time.perf_counter(), time.perf_counter(), 0.0, time.process_time())]
def stamp(what, began, cpu):
    stamps.append((what, began, time.perf_counter(), cpu, time.process_time()))
import sys, json
began, cpu = time.perf_counter(), time.process_time()
from distributed import Client
from fastprox import ProxClassifier, save_model
from fastprox.dask import fit, _run
stamp("client imports", began, cpu)
address, passes, model, files = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4:]
began, cpu = time.perf_counter(), time.process_time()
client = Client(address)
stamp("client connected", began, cpu)
def probed(name, func):
    def probe(*args, **kwargs):
        began, cpu = time.perf_counter(), time.process_time()
        try:
            return func(*args, **kwargs)
        finally:
            stamp(name, began, cpu)
    return probe
_run.Watch.done = probed("client waits (futures)", _run.Watch.done)
_run.Watch.result = probed("client fetches a result", _run.Watch.result)
_run._mix = probed("client submits the mix", _run._mix)
_run._tasks.joined = probed("client joins the last round's mixed shards", _run._tasks.joined)
began, cpu = time.perf_counter(), time.process_time()
est = fit(ProxClassifier(schedule="adagrad", step="gradient", alpha=1e-6), files, client=client, passes=passes)
stamp("fit", began, cpu)
saving, cpu_saving = time.perf_counter(), time.process_time()
save_model(est, model)
stamp("save_model", saving, cpu_saving)
print(json.dumps({"stamps": stamps, "seconds": time.perf_counter() - began}))
"""


def _scheduler_stamp(stamps, what, began, cpu):
    stamps.append(("scheduler", what, began, time.perf_counter(), cpu, time.process_time()))


def timed_run(client, files, passes, model, workers):
    """One fit to a saved model from a client process of its own: every stamp
    [(process, what, begin, end, CPU at begin, at end)] and the transfers of the
    task stream (converted to the perf_counter clock)."""
    from distributed import get_task_stream
    client.run(collect)
    with get_task_stream(client) as stream:
        done = subprocess.run([sys.executable, "-c", CLIENT_RUN, client.scheduler.address, str(passes), str(model),
                               *map(str, files)], capture_output=True, text=True, env=USER_ENVIRON)
    if done.returncode:
        raise SystemExit(f"error: the timed client failed: {(done.stderr.strip().splitlines() or ['?'])[-1]}")
    result = json.loads(done.stdout.strip().splitlines()[-1])
    stamps = [("client", *s) for s in result["stamps"]]
    for address, found in client.run(collect).items():
        stamps += [(f"worker {workers[address]}", what, b, e, c0, c1) for what, b, e, c0, c1, _ in found]
    shift = time.perf_counter() - time.time()     # task stream times are time.time()
    for task in stream.data:
        for part in task["startstops"]:
            if part["action"] == "transfer":
                key = task["key"][0] if isinstance(task["key"], tuple) else str(task["key"])
                where = workers.get(task.get("worker"), "?")
                stamps.append((f"worker {where}", f"fetch inputs of {key.split('-')[0]}",
                               part["start"] + shift, part["stop"] + shift, 0.0, 0.0))
    return stamps, result["seconds"]


def run(args):
    """A cold and ``args.runs`` warm timelines of a one-pass fit on the pinned
    cluster, and the one core's parts; written to dask_timeline.md."""
    import dask
    from distributed import Client, LocalCluster
    files, _ = generate(Path(args.dir), args.files, args.rows, test_rows=args.test_rows)
    out = Path(args.dir)
    load_before = uptime()
    cluster_stamps = []
    cpu = time.process_time()
    began = time.perf_counter()
    with dask.config.set({} if args.dask_defaults else QUIET), \
            LocalCluster(n_workers=2, processes=True, threads_per_worker=1, dashboard_address=None) as two, \
            Client(two) as client:
        _scheduler_stamp(cluster_stamps, "cluster started, workers ready", began, cpu)
        addresses = sorted(client.scheduler_info()["workers"])
        workers = {a: i for i, a in enumerate(addresses)}
        began, cpu = time.perf_counter(), time.process_time()
        for core, worker in enumerate(addresses):
            client.run(pin, core, workers=[worker])
        client.run(install)
        _scheduler_stamp(cluster_stamps, "workers pinned, probes installed (fastprox imported)", began, cpu)
        runs = []
        for k in range(1 + args.runs):
            stamps, seconds = timed_run(client, files, 1, out / "timeline-cluster.npz", workers)
            runs.append(dict(stamps=(cluster_stamps if k == 0 else []) + stamps, seconds=seconds,
                             cold=k == 0))
            print(f"timeline run {k}: {seconds:.2f} s", file=sys.stderr, flush=True)
    one = one_core(files, out)
    write(Path(args.out).with_name("dask_timeline.md"), files, runs, one, load_before, uptime(), args)
    return 0


#: One core's `fastprox train` with its parts stamped in its own process: the
#: interpreter's start to the imports' end, the training and the saved model.
ONE_CORE = r"""
import time
began = time.perf_counter()
import sys, json
from fastprox.cli import main
imported = time.perf_counter()
from fastprox.stream import model as stream_model
save = stream_model.write_model
spent = []
def timed(*args, **kwargs):
    b = time.perf_counter()
    try:
        return save(*args, **kwargs)
    finally:
        spent.append(time.perf_counter() - b)
stream_model.write_model = timed
code = main(sys.argv[1:])
print(json.dumps({"imports": imported - began, "main": time.perf_counter() - imported, "save": sum(spent)}))
sys.exit(code)
"""


def one_core(files, out, passes=1):
    """The one core's `fastprox train` (pinned to core 0): wall time from before the
    interpreter's start to its exit, and its parts."""
    began = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", ONE_CORE, "train", *map(str, files), *passes_options(passes),
                           *RULE_OPTIONS, "--model", str(out / "timeline-single.npz"), "--quiet"],
                          check=True, capture_output=True, text=True, preexec_fn=lambda: pin(0),
                          env=USER_ENVIRON)
    seconds = time.perf_counter() - began
    parts = json.loads(done.stdout.strip().splitlines()[-1])
    return dict(parts, seconds=seconds, interpreter=seconds - parts["imports"] - parts["main"])


def write(path, files, runs, one, load_before, load_after, args):
    total = sum(f.stat().st_size for f in files)
    lines = ["# The timeline of a one-pass pinned cluster run (bench.dask_timeline)", "",
             describe_machine(), f"- Load before: `{load_before}`", f"- Load after: `{load_after}`",
             f"- Data: {len(files)} files, {total / 1e9:.2f} GB; 2 workers pinned to a core each, Dask's "
             f"settings {'its defaults' if args.dask_defaults else '`bench.dask_pinned.QUIET`'}.",
             f"- Command: `PYTHONPATH=src python -m bench.dask --cores-per-machine 1 --timeline --dir {args.dir} "
             f"--files {args.files} --rows {args.rows} --runs {args.runs}`.",
             f"- One core (`fastprox train`, pinned, 1 pass, its process start included): {one['seconds']:.2f} s: "
             f"interpreter start {one['interpreter']:.2f}, imports {one['imports']:.2f}, the rest of `main` "
             f"{one['main']:.2f} of which the saved model {one['save']:.2f}.", ""]
    for k, r in enumerate(runs):
        stamps = sorted(r["stamps"], key=lambda s: s[2])
        zero = next(s[2] for s in stamps if s[1] == "fit")
        lines += [f"## Run {k} ({'cold: a fresh cluster' if r['cold'] else 'warm'}): fit to saved model "
                  f"{r['seconds']:.2f} s", "",
                  "| process | what | begin (s, from fit) | end (s) | wall (s) | CPU of the process (s) |",
                  "|---|---|---|---|---|---|"]
        for who, what, b, e, c0, c1 in stamps:
            lines.append(f"| {who} | {what} | {b - zero:+.3f} | {e - zero:+.3f} | {e - b:.3f} | {c1 - c0:.3f} |")
        lines.append("")
    path.write_text("\n".join(lines) + "\n")
