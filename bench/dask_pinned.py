"""Machines as pinned cores: ``python -m bench.dask --cores-per-machine 1``.

On a machine whose cores are few, "2 workers against one machine" compares 2
cores with 2 cores (one ``fastprox train`` keeps 1.4 to 1.6 of them busy: its
parser thread overlaps its kernel). Here a machine is one core:

- the single machine: one ``fastprox train FILES --model M`` process pinned to
  core 0 (``os.sched_setaffinity`` before it starts: its parser thread and its
  kernel share that core);
- the cluster: a ``LocalCluster`` of 2 worker processes (one thread each), every
  thread of worker i pinned to core i (the reader threads they start inherit
  it); the scheduler (in this process) and the client (a process of its own,
  as in ``bench.dask``) are not pinned, and their CPU seconds are reported.

The cluster runs with Dask's periodic work relaxed (`QUIET`: no stack
profiler, the event loops' ticks and monitors once a second or two), which
the parallel mode does not need (``--dask-defaults``: Dask's own settings).
Each worker's CPU seconds are split by thread: its event loop (Dask's
messages, heartbeats, the transfers' (de)serialization), its task thread
(the rounds' training, contributions, sums and mixes) and the rest (the
reader threads each round starts and ends: the parsing).

Beside them, two halves at once (`halves`): each half of the files trained by
a ``fastprox train`` of its own, pinned to its own core, both at once: the most
2 one-core workers can make of this machine, with nothing between them. And
the cores themselves (`cores`): a loop that touches no memory, alone and two at
once, which says how much of what the halves lose is the cores' and how much
what they share; with the host's steal over the whole run.

What is timed, and why. The one core is a fresh ``fastprox train`` process each
run, as a user runs it: its interpreter's start and its imports are in its
time. The cluster is long-lived, as a user's is: started, pinned and warmed
by an untimed fit over `WARM_FILES` files before the clock (the workers have
imported fastprox and run a fit, as after any earlier one; ``--cold`` times
its first fit instead). Its time runs
from the client's `fit` to its saved model; the client process's whole time
(its interpreter, imports and connection included), like for like with the
one core's process, is reported beside it.

Wall time from the files to a saved model, one pass and three, ``--runs``
interleaved runs (each run times the one core, the cluster and the halves in
turn): the speed is the ratio of the medians (the verdict), and beside it the
median of the runs' own ratios (`per_run`: a run's one core over the cluster
timed beside it, which leaves out the virtual machine's drift from run to run);
and the test accuracy of every saved model
against the single machine's; the load (``uptime``) before and after. Writes
``bench/results/dask_pinned.md``.
"""
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

from bench.dask_workload import CLUSTER_RUN, USER_ENVIRON, accuracy, generate, train_command, uptime
from bench.machine import describe_machine

RESULTS = Path(__file__).resolve().parent / "results"
#: Dask's periodic work relaxed for the pinned cluster (docs/dask.md, "Faults, memory,
#: progress"): no stack sampling of the running task every 10 ms (the profiler), the
#: event loops' tick and the memory and system monitors once a second or two instead of
#: every 20, 100 and 500 ms. Idle, they cut a worker's CPU tenfold (docs/dask.md).
QUIET = {"distributed.worker.profile.enabled": False, "distributed.admin.tick.interval": "1s",
         "distributed.worker.memory.monitor-interval": "1s", "distributed.admin.system-monitor.interval": "2s"}


def pin(core):
    """Every thread of this process on ``core`` (threads started later inherit it)."""
    for tid in os.listdir(f"/proc/{os.getpid()}/task"):
        try:
            os.sched_setaffinity(int(tid), {core})
        except ProcessLookupError:      # (a thread that ended since the listing)
            pass


def _children_cpu():
    """(CPU seconds, minor page faults) of this process's waited-for children."""
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime, used.ru_minflt


def single(files, passes, model, core=0):
    """(seconds, CPU seconds, minor page faults) of one `fastprox train` pinned to
    ``core``, to a saved model."""
    cpu, faults = _children_cpu()
    began = time.perf_counter()
    subprocess.run(train_command(files, passes, model), check=True, preexec_fn=lambda: pin(core),
                   env=USER_ENVIRON)
    after, faulted = _children_cpu()
    return time.perf_counter() - began, after - cpu, faulted - faults


def halves(files, passes, out):
    """(seconds, each process's CPU seconds, each one's minor page faults) of two `fastprox train` at once, each on
    one group's files (fastprox.dask's deal: equal bytes) and pinned to its own core:
    two one-core machines with nothing between them (no Dask, no mix), the most
    that 2 one-core workers can make of this machine (both cores busy at once)."""
    from fastprox.dask._shares import deal, file_shares
    groups = deal(file_shares(files), 2)
    began = time.perf_counter()
    running = [subprocess.Popen(train_command([files[i] for i in group], passes, out / f"half-{core}.npz"),
                                preexec_fn=lambda core=core: pin(core), env=USER_ENVIRON)
               for core, group in enumerate(groups)]
    cpu, faults = [], []
    for process in running:             # (each its own: the cluster's processes are children too)
        _, status, used = os.wait4(process.pid, 0)
        process.returncode = os.waitstatus_to_exitcode(status)
        if status:
            raise SystemExit(f"error: a half's fastprox train ended with status {process.returncode}")
        cpu.append(used.ru_utime + used.ru_stime)
        faults.append(used.ru_minflt)
    return time.perf_counter() - began, cpu, faults


#: The cores probe's work: a loop of the interpreter's own over a few cache lines (about
#: a second on one core), which neither memory nor the caches the cores share slow down.
PROBE = "total = 0\nfor i in range(25_000_000):\n    total += i"


def cores(runs):
    """(median, each run's) speed of the cores themselves: `PROBE` pinned to core 0
    alone, then two of it at once on cores 0 and 1; a run's speed is twice the one
    alone's seconds over the two's (2.00x: the cores give 2 processes all they give
    one). What the halves lose beyond it, two processes of fastprox's work lose to
    what the cores share (caches, memory, the host)."""
    def at_once(on):
        began = time.perf_counter()
        running = [subprocess.Popen([sys.executable, "-c", PROBE], preexec_fn=lambda core=core: pin(core))
                   for core in on]
        if any(process.wait() for process in running):
            raise SystemExit("error: the cores probe's loop failed")
        return time.perf_counter() - began
    ratios = [2 * at_once([0]) / at_once([0, 1]) for _ in range(runs)]
    return sorted(ratios)[len(ratios) // 2], ratios


def steal():
    """Seconds the host took this machine's cores for other guests (steal, /proc/stat), so far."""
    fields = Path("/proc/stat").read_text().split("\n", 1)[0].split()
    return int(fields[8]) / os.sysconf("SC_CLK_TCK") if len(fields) > 8 else 0.0


def _cpu():
    """This process's CPU seconds: in all, its main thread's (a worker's event loop),
    and its live threads' (the rest ran in threads that ended: the readers)."""
    tick, own = os.sysconf("SC_CLK_TCK"), os.getpid()
    main, live = 0.0, 0.0
    for tid in os.listdir(f"/proc/{own}/task"):
        try:
            fields = Path(f"/proc/{own}/task/{tid}/stat").read_text().rsplit(")", 1)[1].split()
        except (FileNotFoundError, ProcessLookupError):     # ended since the listing: among those that ended
            continue
        seconds = (int(fields[11]) + int(fields[12])) / tick
        live += seconds
        main += seconds if int(tid) == own else 0.0
    return dict(all=time.process_time(), main=main, live=live,
                faults=resource.getrusage(resource.RUSAGE_SELF).ru_minflt)


def _parts(before, after):
    """A worker's CPU seconds between two `_cpu` readings: all, event loop, task
    thread (the live threads but the main one), the threads that ended."""
    total = after["all"] - before["all"]
    loop = after["main"] - before["main"]
    task = after["live"] - before["live"] - loop
    return dict(all=total, loop=loop, task=task, ended=total - loop - task, faults=after["faults"] - before["faults"])


def cluster(client, files, passes, model):
    """(seconds, each worker's CPU seconds (in the workers' order), the client's
    from fit to the saved model, the scheduler's (this process), the rounds and the tasks: `tasks`) of
    fastprox.dask.fit to a saved model, from a client process of its own (its
    start-up excluded from the seconds and the CPU seconds)."""
    from distributed import get_task_stream
    before, own = client.run(_cpu), time.process_time()
    began = time.perf_counter()
    with get_task_stream(client) as stream:
        done = subprocess.run([sys.executable, "-c", CLUSTER_RUN, client.scheduler.address, str(passes), str(model),
                               *map(str, files)], capture_output=True, text=True, env=USER_ENVIRON)
    whole = time.perf_counter() - began
    if done.returncode:
        raise SystemExit(f"error: the cluster's client failed: {(done.stderr.strip().splitlines() or ['?'])[-1]}")
    after = client.run(_cpu)
    result = json.loads(done.stdout.strip().splitlines()[-1])
    return (result["seconds"], [_parts(before[w], after[w]) for w in sorted(after)], result["cpu"],
            time.process_time() - own, dict(rounds=result["rounds"], tasks=tasks(stream.data), whole=whole))


def tasks(stream):
    """Per kind of task of a run (`_tasks`' function names), from Dask's task stream:
    [how many, wall seconds computing, wall seconds fetching their inputs from
    another worker] (summed over the tasks)."""
    found = {}
    for task in stream:
        key = task["key"][0] if isinstance(task["key"], tuple) else str(task["key"])
        kind = found.setdefault(key.split("-")[0], [0, 0.0, 0.0])
        kind[0] += 1
        for part in task["startstops"]:
            kind[1 if part["action"] == "compute" else 2] += part["stop"] - part["start"]
    return found


#: Files of the untimed fit that warms the cluster before the timed runs (unless
#: ``--cold``): the workers have imported fastprox and run a fit, as after any earlier one.
WARM_FILES = 2


def run(args):
    """The pinned-core comparison over bench.dask's files (``args``: its options)."""
    import dask
    from distributed import Client, LocalCluster
    if len(os.sched_getaffinity(0)) < 2:
        raise SystemExit("error: --cores-per-machine 1 needs 2 cores to pin the 2 workers to")
    files, test = generate(Path(args.dir), args.files, args.rows, test_rows=args.test_rows)
    total = sum(f.stat().st_size for f in files)
    out = Path(args.dir)
    load_before, stolen = uptime(), steal()
    rows = []
    with dask.config.set({} if args.dask_defaults else QUIET), \
            LocalCluster(n_workers=2, processes=True, threads_per_worker=1, dashboard_address=None) as two, \
            Client(two) as client:
        for core, worker in enumerate(sorted(client.scheduler_info()["workers"])):
            client.run(pin, core, workers=[worker])
        if not args.cold:           # a long-lived cluster has served fits before (WARM_FILES: untimed)
            cluster(client, files[:WARM_FILES], 1, out / "pinned-warm.npz")
        for passes in (1, 3):
            found = {"one core (fastprox train)": [], "2 workers, a core each": [],
                     "two halves at once, a core each (no Dask)": []}
            for _ in range(args.runs):
                model = out / f"pinned-{passes}-single.npz"
                seconds, cpu, faults = single(files, passes, model)
                found["one core (fastprox train)"].append(dict(seconds=seconds, cpu=cpu, faults=[faults],
                                                               accuracy=accuracy(model, test)))
                model = out / f"pinned-{passes}-cluster.npz"
                seconds, cpu, client_cpu, scheduler_cpu, ran = cluster(client, files, passes, model)
                found["2 workers, a core each"].append(dict(seconds=seconds, cpu=sum(c["all"] for c in cpu),
                                                            workers_cpu=cpu, faults=[c["faults"] for c in cpu],
                                                            client_cpu=client_cpu,
                                                            scheduler_cpu=scheduler_cpu, **ran,
                                                            accuracy=accuracy(model, test)))
                seconds, cpu, faults = halves(files, passes, out)
                found["two halves at once, a core each (no Dask)"].append(
                    dict(seconds=seconds, cpu=sum(cpu), workers_cpu=[dict(all=c) for c in cpu], faults=faults,
                         accuracy=None))
                for name, runs in found.items():
                    print(name, passes, f"{runs[-1]['seconds']:.2f} s", runs[-1]["accuracy"], file=sys.stderr, flush=True)
            for name, runs in found.items():
                ranked = sorted(runs, key=lambda r: r["seconds"])
                rows.append(dict(ranked[len(ranked) // 2], name=name, passes=passes, times=[r["seconds"] for r in runs]))
    probe = cores(args.runs)
    write(Path(args.out).with_name("dask_pinned.md"), files, total, rows, load_before, uptime(), args,
          probe=probe, stolen=steal() - stolen)
    return 0


def per_run(base, times):
    """(median, each run's) speed of the runs ``times`` against the one core's ``base``
    of the same runs (in order: each run times the one core, the cluster and the
    halves one after another), a ratio the machine's drift between runs leaves out."""
    ratios = [b / t for b, t in zip(base, times)]
    return sorted(ratios)[len(ratios) // 2], ratios


#: The 1-minute load average before the run above which it is marked as measured under
#: load (the load after it counts the run's own two workers, scheduler and client).
BUSY = 1.5


def _load(line):
    """The 1-minute load average of an ``uptime`` line (0 if not found)."""
    try:
        return float(line.rsplit("load average:", 1)[1].split(",")[0])
    except (IndexError, ValueError):
        return 0.0


def write(path, files, total, rows, load_before, load_after, args, probe, stolen):
    base = {r["passes"]: r for r in rows if r["name"].startswith("one core")}
    lines = ["# Machines as pinned cores: one `fastprox train` on one core against 2 one-core workers", "",
             describe_machine(), f"- Load before: `{load_before}`", f"- Load after: `{load_after}`",
             f"- Data: {len(files)} LIBSVM files of `bench.dask`, {total / 1e9:.2f} GB in all, in the page "
             "cache; rule `bench.dask_workload.RULE` (FOBOS + AdaGrad, l1 1e-6); the cluster in parallel mode, a mix "
             "per pass.",
             "- One core: `fastprox train FILES --model M` (with `--holdout-off` from 2 passes: every row "
             "trained, as on the cluster) pinned to core 0, a fresh process each run, as a user runs it: its "
             "interpreter's start and its imports are in its time. Cluster: `fastprox.dask.fit` then "
             "`save_model` from a client process, every thread of worker i pinned to core i; scheduler (the "
             "benchmark's process) and client not pinned, their CPU seconds given (the client's from `fit` to "
             "the saved model). The cluster is long-lived, as a user's is: started before the clock, and "
             + ("its first fit timed (`--cold`: the workers import fastprox in it)." if args.cold else
                f"warmed by an untimed fit over {WARM_FILES} files before the timed runs (the workers' imports, "
                "a fit run), as a cluster that has served fits before.")
             + " Its wall time is from `fit` to the saved model (the client's interpreter, imports and "
             "connection excluded); the column 'with the client's start' times the client's process from its "
             "start to its exit, like for like with the one core's process. The one core, the halves and the "
             "client run in the environment the benchmark was started in (`bench.dask_workload.USER_ENVIRON`), as a "
             "user's shell gives it, not in the one Dask's nanny writes into the process that starts the "
             "workers (`MALLOC_TRIM_THRESHOLD_=65536`: docs/dask.md, the allocator's thresholds); the workers "
             "have the nanny's, as a user's workers do.",
             f"- Command: `PYTHONPATH=src python -m bench.dask --cores-per-machine 1 --dir {args.dir} --files "
             f"{args.files} --rows {args.rows} --runs {args.runs}{' --dask-defaults' if args.dask_defaults else ''}` "
             "(the files are made once and reused).",
             "- Dask's settings: " + ("its defaults (`--dask-defaults`)." if args.dask_defaults else
                                      "`bench.dask_pinned.QUIET`: " + ", ".join(f"`{k}: {v}`" for k, v in QUIET.items())
                                      + " (docs/dask.md, §7)."), "",
             "| run | passes | wall time, files -> saved model (s) | speed vs one core | speed, median of the "
             "runs' own (each run's) | with the client's start "
             "(s, speed) | CPU s of the workers "
             "(each) or of the process | minor page faults, thousands (each process) | client / scheduler CPU s | "
             "test accuracy | vs one core (points) | every run (s) |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        b = base[r["passes"]]
        side = f"{r['client_cpu']:.1f} / {r['scheduler_cpu']:.1f}" if "client_cpu" in r else "-"
        workers = " (" + " + ".join(f"{c['all']:.1f}" for c in r["workers_cpu"]) + ")" if "workers_cpu" in r else ""
        scored = (f"{r['accuracy']:.4f} | {100 * (r['accuracy'] - b['accuracy']):+.2f}" if r["accuracy"] is not None
                  else "- (half the rows each) | -")
        whole = f"{r['whole']:.2f}, {b['seconds'] / r['whole']:.2f}x" if "whole" in r else "-"
        own = per_run(b["times"], r["times"])
        each = f"{own[0]:.2f}x ({', '.join(f'{x:.2f}' for x in own[1])})"
        lines.append(f"| {r['name']} | {r['passes']} | {r['seconds']:.2f} | {b['seconds'] / r['seconds']:.2f}x | {each} | {whole} | "
                     f"{r['cpu']:.1f}{workers} | {' + '.join(f'{f / 1e3:.0f}' for f in r['faults'])} | {side} | {scored} | {', '.join(f'{t:.2f}' for t in r['times'])} |")
    lines += ["", "Each worker's CPU seconds by thread (the median run): its event loop (Dask's messages, "
              "heartbeats, the transfers), its task thread (training, the contribution, the sums and the mix), "
              "the threads that ended (the readers: parsing):", "",
              "| passes | worker | all | event loop | task thread | ended threads (readers) |", "|---|---|---|---|---|---|"]
    for r in rows:
        for i, c in enumerate(r["workers_cpu"] if r["name"].startswith("2 workers") else ()):
            lines.append(f"| {r['passes']} | {i} | {c['all']:.2f} | {c['loop']:.2f} | {c['task']:.2f} | {c['ended']:.2f} |")
    lines += ["", "The cluster's tasks (the median run; Dask's task stream, wall seconds summed over the tasks "
              "of a kind: `start` reads the first rows on one worker, `train_group` is a group's round, `add` "
              "sums two contributions, `mix` makes the next model, or, a round's mix sharded (reduce-scatter), `cut` "
              "takes a range of the features of a contribution, `add` sums a range's slices and `mix_shard` mixes "
              "it on each worker, `join` puts the ranges together):", "",
              "| passes | task | how many | computing (s) | fetching inputs from the other worker (s) |",
              "|---|---|---|---|---|"]
    for r in rows:
        for name, (count, computing, fetching) in sorted(r.get("tasks", {}).items()):
            lines.append(f"| {r['passes']} | `{name}` | {count} | {computing:.2f} | {fetching:.2f} |")
    one = {r["passes"]: r for r in rows if r["name"].startswith("2 workers")}
    ceiling = {r["passes"]: r for r in rows if r["name"].startswith("two halves")}
    speed = base[1]["seconds"] / one[1]["seconds"]
    own = per_run(base[1]["times"], one[1]["times"])[0]
    gap = 100 * (one[3]["accuracy"] - base[3]["accuracy"])
    if _load(load_before) > BUSY:
        lines += ["", f"**Measured under load** (load average {_load(load_before):.1f} before the run on "
                  f"{os.cpu_count()} cores: other jobs "
                  "shared the pinned cores): the wall times and their ratios below say nothing of the speed; "
                  "compare the CPU seconds, and rerun the command on a quiet machine for the targets."]
    lines += ["", f"The two halves at once (each half of the files, dealt by bytes as the cluster deals them, "
              f"trained by its own `fastprox train` pinned to its own core, both started together; wall time to "
              f"the later of the two models) are what 2 one-core workers can make of this machine with nothing "
              f"between them: {base[1]['seconds'] / ceiling[1]['seconds']:.2f}x for one pass, "
              f"{base[3]['seconds'] / ceiling[3]['seconds']:.2f}x for three. Their CPU seconds against the one "
              f"core's say what running both cores at once costs each (the same code, half the bytes each)."]
    lines += ["", f"The cores themselves (`PROBE`, a loop of the interpreter's own that neither memory nor the "
              f"shared caches slow: one alone on core 0, then two at once on cores 0 and 1, {len(probe[1])} "
              f"runs after the timed ones): {probe[0]:.2f}x, each run's "
              f"{', '.join(f'{x:.2f}' for x in probe[1])}. The host took {stolen:.1f} s of this machine's "
              f"cores for other guests during the whole run (steal, `/proc/stat`)."]
    lines += ["", f"Targets: at least 1.7x the one-core machine with two one-core workers, one pass from "
              f"{'>= 2 GB' if total >= 2e9 else f'{total / 1e9:.2f} GB (the target is stated at >= 2 GB)'}: "
              f"**{'met' if speed >= 1.7 else 'not met'}** ({speed:.2f}x, the ratio of the medians: the verdict; "
              f"the median of the runs' own ratios, each run's one core over its cluster timed beside it, "
              f"{own:.2f}x); accuracy within 0.2 points after "
              f"3 passes: **{'met' if abs(gap) <= 0.2 else 'not met'}** ({gap:+.2f} points). The scheduler "
              "and the client run on the same 2 cores as the workers, and so do other jobs of the machine "
              "(the load lines above)."]
    path.write_text("\n".join(lines) + "\n")
