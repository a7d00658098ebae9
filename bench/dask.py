"""Training on a Dask cluster (fastprox.dask) against one machine's `fastprox train`.

Data: ``--files`` synthetic LIBSVM files under ``--dir`` (default 40 files of
125,000 rows, about 2.1 GB in all) of text-like rows: 60 distinct features
per row drawn by Zipf rank (exponent 1) from d = 2^20 ids (bench.throughput's
generator, every file with the same rank -> id map, so that all files come
from one distribution), values 1, labels the sign of a fixed sparse random
weight vector (10% of the ids non-zero) with 10% of them flipped; a test file
of 100,000 rows from the same distribution. Generated once, reused.

Timed, each from the files to a saved model, a subprocess each (start-up and
the cluster's start excluded for the cluster: it is up before the clock
starts, as a user's cluster is): one machine's ``fastprox train FILES --model
M`` (its parser thread overlapping its kernel, as always), and
``fastprox.dask.fit`` in parallel mode on a ``LocalCluster`` of 2 workers and
of 1 worker (processes, one thread each; each worker also runs its reader
thread), one pass and three passes, FOBOS + AdaGrad with the gradient step and
l1 (RULE: the defaults before issue 21; the normalized schedule has no parallel
mix). Test accuracy of every saved model. The machine's load (``uptime``) is
recorded before and after.

Then the plan beyond this machine: the bytes one mix moves (a contribution is
a few arrays of the model's size, sent up a binary tree of depth
ceil(log2 workers), the mixed model sent back down), the time one mix takes on
this cluster as d grows to 2^24 (measured: contributions of d features added
and mixed, the model returned), and the speedup predicted for 8, 32 and 128
workers on 1 TB from the measured per-worker throughput and mix times.

Run: ``python -m bench.dask [--dir /tmp/fastprox_dask] [--quick]``; writes
``bench/results/dask.md`` and ``bench/results/dask.png``.
"""
import argparse
import math
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from bench.dask_workload import CLUSTER_RUN, D, PER_ROW, RULE, USER_ENVIRON, accuracy, generate, train_command, uptime
from bench.machine import describe_machine

BENCH = Path(__file__).resolve().parent
RESULTS = BENCH / "results"
MARKER = Path("/tmp/dask_bench_running")


def cpu():
    model, cores = "unknown", os.cpu_count()
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            model = line.split(":", 1)[1].strip()
            break
    vendor = "Intel" if "Intel" in model else "AMD" if "AMD" in model else "other"
    return vendor, model, cores


def single(files, passes, model):
    """(seconds, CPU seconds) of one machine's `fastprox train` to a saved model."""
    import resource
    cpu = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(train_command(files, passes, model), check=True, env=USER_ENVIRON)
    seconds = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return seconds, after.ru_utime + after.ru_stime - cpu.ru_utime - cpu.ru_stime, None


def _cpu():
    """This process's CPU seconds (all its threads): run on each worker."""
    return time.process_time()


def cluster(client, files, passes, model):
    """(seconds, the workers' CPU seconds, rounds) of fastprox.dask.fit to a saved
    model on the cluster of ``client`` (run by a client process of its own, its
    start-up excluded; ``client`` only reads the workers' CPU times)."""
    import json
    before = client.run(_cpu)
    out = subprocess.run([sys.executable, "-c", CLUSTER_RUN, client.scheduler.address, str(passes), str(model),
                          *map(str, files)], check=True, capture_output=True, text=True,
                         env=USER_ENVIRON).stdout
    after = client.run(_cpu)
    result = json.loads(out.strip().splitlines()[-1])
    return result["seconds"], sum(after[w] - before[w] for w in after), result["rounds"]


#: The accuracy-by-groups table of the former FOBOS + AdaGrad mix (moves rescaled to the summed
#: accumulators' steps, capped at sqrt(2) moves; commit 6be59f3), as `by_workers` measured it on the
#: 2-worker LocalCluster of the Intel Xeon (family 6, model 207) of bench/results/dask.md at commit
#: c66bba1: test accuracy after 1 and 3 passes, for the "before" columns of the regenerated file.
FORMER_MIX = {"sequential (one machine's model)": (0.7602, 0.7648),
              "1 group(s), a mix per pass": (0.7602, 0.7648),
              "2 group(s), a mix per pass": (0.7557, 0.7643),
              "4 group(s), a mix per pass": (0.7482, 0.7619),
              "8 group(s), a mix per pass": (0.7381, 0.7545),
              "2 groups, a mix per file (sync_rows=125,000)": (0.7582, 0.7656)}


def by_workers(client, files, test, groups=(1, 2, 4, 8), passes=(1, 3)):
    """Test accuracy after one and three passes over ``files`` with the shares dealt to
    each number of groups (a mix per pass), and with 2 groups mixed after every file
    (sync_rows): rows (name, accuracy after each of ``passes``)."""
    from fastprox import ProxClassifier, load_libsvm
    from fastprox.dask import fit
    X, y = load_libsvm(test, n_features=D)
    runs = [("sequential (one machine's model)", dict(sequential=True))]
    runs += [(f"{g} group(s), a mix per pass", dict(n_workers=g)) for g in groups]
    runs += [("2 groups, a mix per file (sync_rows=125,000)", dict(n_workers=2, sync_rows=125_000))]
    return [(name, [fit(ProxClassifier(**RULE), files, client=client, n_features=D, passes=p, **options)
                    .score(X, y) for p in passes]) for name, options in runs]


def mix_times(client, exponents, repeats=3):
    """Seconds of one mix of the default model (fobos + adagrad, K = 1) at d = 2^e on
    the cluster: every worker's contribution (made on its worker; not timed), their
    tree addition and the mix (the mixed model stays on the cluster, as between
    rounds); and the bytes of one contribution. Median of ``repeats``."""
    from distributed import wait
    from fastprox.dask import _tasks
    from fastprox.dask._run import _tree
    workers = list(client.scheduler_info()["workers"])
    out = []
    for e in exponents:
        d = 1 << e
        model = client.submit(_fake_model, d, pure=False)
        wait(model)
        times, nbytes = [], 0
        for _ in range(repeats):
            parts = [client.submit(_fake_contribution, model, i, workers=[w], pure=False)
                     for i, w in enumerate(workers)]
            wait(parts)
            began = time.perf_counter()
            summed = _tree(client, parts, [])
            mixed = client.submit(_tasks.mix, model, summed, "adagrad", pure=False)
            wait(mixed)
            times.append(time.perf_counter() - began)
            if mixed.status == "error":
                mixed.result()              # raises the mix's error: no time of a failed mix
            nbytes = client.submit(lambda s: s.nbytes, parts[0], pure=False).result()
        out.append((e, sorted(times)[len(times) // 2], nbytes))
        del model
    return out


def _fake_model(d):
    """A StreamModel of the benchmark's classifier (RULE) at d features, its steps set
    by a few rows."""
    from fastprox.stream.model import StreamModel
    from fastprox._core import CLASSIFIER_DEFAULTS
    est = StreamModel(dict(CLASSIFIER_DEFAULTS, **RULE), False, [-1.0, 1.0])
    est.start(d, 1, [_rows(d, 0)])
    return est


def _rows(d, seed, n=1000, per_row=50):
    """n random CSR rows of about per_row features of d (scipy's sp.random draws from
    all n x d cells: too slow for d = 2^24)."""
    import scipy.sparse as sp
    rng = np.random.default_rng(seed)
    cols = np.sort(rng.integers(0, d, size=(n, per_row)), axis=1)
    X = sp.csr_matrix((rng.random(n * per_row), cols.ravel(), np.arange(0, n * per_row + 1, per_row)),
                      shape=(n, d))
    X.sum_duplicates()
    return X


def _fake_contribution(est, seed):
    """A worker's contribution after some rows (1000 rows of 50 features)."""
    import copy
    from fastprox._core import run_passes
    from fastprox._mixing import contribution
    learner = copy.copy(est.learner)
    y = np.where(np.arange(1000) % 2, 1.0, -1.0)
    loss = run_passes(learner, _rows(learner.n_features, seed + 1), y, None, 1)
    result = contribution(est.learner, learner, 1000, loss, "adagrad")
    result.cursors, result.seconds = {}, 0.0
    return result


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dir", default="/tmp/fastprox_dask", help="where the data files are made")
    parser.add_argument("--files", type=int, default=40)
    parser.add_argument("--rows", type=int, default=125_000, help="rows per training file")
    parser.add_argument("--quick", action="store_true", help="4 small files, d up to 2^20 for the mixes")
    parser.add_argument("--runs", type=int, default=3, help="interleaved runs of each command (the median)")
    parser.add_argument("--test-rows", type=int, default=100_000, help="rows of the test file")
    parser.add_argument("--generate-only", action="store_true")
    parser.add_argument("--out", default=str(RESULTS / "dask.md"))
    parser.add_argument("--cores-per-machine", type=int, default=None,
                        help="1: machines as pinned cores (bench.dask_pinned: one core against 2 one-core "
                             "workers), written to dask_pinned.md beside --out")
    parser.add_argument("--dask-defaults", action="store_true",
                        help="with --cores-per-machine 1: run the cluster with Dask's own settings (its "
                             "profiler, ticks and monitors) instead of bench.dask_pinned.QUIET")
    parser.add_argument("--cold", action="store_true",
                        help="with --cores-per-machine 1: time the cluster's first fit too (by default an "
                             "untimed fit over 2 files warms it first, as a long-lived cluster is warm)")
    timeline = "with --cores-per-machine 1: one-pass runs' phases stamped in every process (bench.dask_timeline)"
    parser.add_argument("--timeline", action="store_true", help=timeline + ", to dask_timeline.md beside --out")
    args = parser.parse_args(argv)
    if args.cores_per_machine not in (None, 1):
        raise SystemExit(f"error: --cores-per-machine takes 1 (a machine is one pinned core), "
                         f"not {args.cores_per_machine}")
    if args.quick:
        args.files, args.rows = 4, 20_000
    files, test = generate(Path(args.dir), args.files, args.rows, test_rows=args.test_rows)
    if args.generate_only:
        return 0
    if args.cores_per_machine == 1 and args.timeline:
        from bench import dask_timeline
        return dask_timeline.run(args)
    if args.cores_per_machine == 1:
        from bench import dask_pinned
        return dask_pinned.run(args)
    total = sum(f.stat().st_size for f in files)
    from distributed import Client, LocalCluster
    MARKER.touch()
    try:
        load_before = uptime()
        rows = []
        out = Path(args.dir)
        with LocalCluster(n_workers=2, processes=True, threads_per_worker=1) as two, \
                LocalCluster(n_workers=1, processes=True, threads_per_worker=1) as one, \
                Client(two) as client2, Client(one) as client1:
            runs = [("one machine (fastprox train)", None), ("cluster, 2 workers", client2),
                    ("cluster, 1 worker", client1)]
            for passes in (1, 3):
                found = {name: [] for name, _ in runs}
                for _ in range(args.runs):          # interleaved: each round runs every command once
                    for name, client in runs:
                        model = out / f"model-{passes}-{name[:3]}.npz"
                        if client is None:
                            seconds, cpu, rounds = single(files, passes, model)
                        else:
                            seconds, cpu, rounds = cluster(client, files, passes, model)
                        found[name].append(dict(name=name, passes=passes, seconds=seconds, cpu=cpu,
                                                rounds=rounds, accuracy=accuracy(model, test)))
                        print(name, passes, f"{seconds:.2f} s", f"{cpu:.2f} s CPU",
                              f"{found[name][-1]['accuracy']:.4f}", file=sys.stderr, flush=True)
                for name, _ in runs:                # the median run by wall time, and every time
                    ranked = sorted(found[name], key=lambda r: r["seconds"])
                    rows.append(dict(ranked[len(ranked) // 2], times=[r["seconds"] for r in found[name]]))
            mixes = mix_times(client2, range(10, 21 if args.quick else 25, 2))
            load_after = uptime()
            groups = by_workers(client2, [str(f) for f in files[:8]], test)
    finally:
        MARKER.unlink(missing_ok=True)
    write(args.out, files, total, test, rows, mixes, groups, load_before, load_after)
    return 0


def write(path, files, total, test, rows, mixes, groups, load_before, load_after):
    vendor, model, cores = cpu()
    base = {r["passes"]: r for r in rows if r["name"].startswith("one machine")}
    lines = ["# Training on a Dask cluster: `fastprox.dask` against one machine", "",
             "Machines as pinned cores (`--cores-per-machine 1`): `dask_pinned.md`; a simulated "
             "cluster of 8 to 128 workers measured in parts: `dask_cluster.md` (`python -m "
             "bench.dask_cluster`).", "", describe_machine(), f"- CPU: {vendor} ({model}), {cores} cores, shared with other "
             "engineers' jobs (their load: the load lines below). The 2-worker cluster has a core per worker, "
             "each worker's reader thread sharing it with its kernel; the one-machine run uses both "
             "cores too (its parser thread overlaps its kernel: `fastprox train`'s read-ahead).",
             f"- Load before: `{load_before}`", f"- Load after: `{load_after}`",
             f"- Data: {len(files)} LIBSVM files, {total / 1e9:.2f} GB in all, under /tmp (rows of "
             f"{PER_ROW} distinct Zipf-ranked features of d = 2^20, values 1, labels the sign of a fixed "
             "sparse random linear rule with 10% flipped; `python -m bench.dask` describes them); a test "
             f"file of {test.stat().st_size / 1e6:.0f} MB, 100,000 rows. All in the page cache (read from "
             "memory, not disk).",
             "- Model: `ProxClassifier(schedule='adagrad', step='gradient', alpha=1e-6)` (FOBOS + AdaGrad, l1, log loss). One machine: `fastprox "
             "train FILES --model M` (a process, start-up included). Cluster: `fastprox.dask.fit` then "
             "`save_model`, from a client process (its start-up and the cluster's excluded, as for a user's "
             "running cluster), parallel mode, a mix per pass; LocalCluster of worker processes with one "
             "thread each.",
             "- CPU seconds: the one-machine process's, or the workers' (all their threads); cores busy = "
             "CPU seconds / wall time. Each command ran `--runs` times, interleaved (a round runs each "
             "once); the table gives the run of median wall time, and every time.", "",
             "| run | passes | wall time, files -> saved model (s) | speed vs one machine | CPU s (cores busy) "
             "| of which training / mixing (s) | test accuracy | vs one machine (points) | every run's time (s) |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        b = base[r["passes"]]
        parts = ("-" if not r["rounds"] else
                 f"{sum(x['train_seconds'] for x in r['rounds']):.2f} / {sum(x['mix_seconds'] for x in r['rounds']):.2f}")
        lines.append(f"| {r['name']} | {r['passes']} | {r['seconds']:.2f} | {b['seconds'] / r['seconds']:.2f}x | "
                     f"{r['cpu']:.1f} ({r['cpu'] / r['seconds']:.2f}) | {parts} | "
                     f"{r['accuracy']:.4f} | {100 * (r['accuracy'] - b['accuracy']):+.2f} | "
                     f"{', '.join(f'{t:.2f}' for t in r['times'])} |")
    two1 = next(r for r in rows if r["name"] == "cluster, 2 workers" and r["passes"] == 1)
    two3 = next(r for r in rows if r["name"] == "cluster, 2 workers" and r["passes"] == 3)
    speed = base[1]["seconds"] / two1["seconds"]
    gap = 100 * (two3["accuracy"] - base[3]["accuracy"])
    bound = 2 / (base[1]["cpu"] / base[1]["seconds"])
    lines += ["", f"Targets: at least 1.6x one machine's speed with 2 workers on one pass: "
              f"**{'met' if speed >= 1.6 else 'not met'}** ({speed:.2f}x). Accuracy within 0.2 points of "
              f"one machine after 3 passes: **{'met' if abs(gap) <= 0.2 else 'not met'}** ({gap:+.2f} points).",
              "", f"Why not faster: one machine already keeps {base[1]['cpu'] / base[1]['seconds']:.2f} of "
              f"the 2 cores busy (parsing in one thread, learning in another), so on these 2 cores no "
              f"split of the same work can run more than {bound:.2f}x faster; the cluster also does more "
              "work (each worker parses and learns, then the contributions are made and mixed). The target "
              "needs cores the one machine does not have: the 2-worker figures are a floor for 2 machines. "
              "(Cores busy count this run's CPU time: on cores that other jobs load (the load lines "
              "above), every process gets less of them, and the times and the bound say less.)",
              "", "Accuracy by the number of groups: the mix (docs/dask.md §4) adds the workers' moves "
              "rescaled to the summed accumulators' steps where several met a coordinate, adding the part "
              "still moving at a steady rate and averaging the part settled part-way through the round; "
              "each worker's gradients are still taken at a model that has not seen the "
              "other groups' rows since the last mix, and more groups lose more (one and three passes over "
              "the first 8 files, 1.0 M rows a pass, on the 2-worker cluster). Before: the former mix "
              "(capped at sqrt(2) moves, `FORMER_MIX`, measured on the machine of c66bba1's file):", "",
              "| training | test accuracy, 1 pass | vs one machine | 3 passes | vs one machine (points) "
              "| before: 1 pass, 3 passes (points) |",
              "|---|---|---|---|---|---|"]
    first = FORMER_MIX[groups[0][0]] if groups[0][0] in FORMER_MIX else None
    for name, (acc1, acc3) in groups:
        was = FORMER_MIX.get(name)
        before = "-" if was is None or first is None else \
            f"{100 * (was[0] - first[0]):+.2f}, {100 * (was[1] - first[1]):+.2f}"
        lines.append(f"| {name} | {acc1:.4f} | {100 * (acc1 - groups[0][1][0]):+.2f} | {acc3:.4f} | "
                     f"{100 * (acc3 - groups[0][1][1]):+.2f} | {before} |")
    lines += [""] + plan(rows, mixes, total)
    Path(path).write_text("\n".join(lines) + "\n")
    plot(Path(path).with_suffix(".png"), rows, mixes)


def plan(rows, mixes, total):
    """The scaling section: bytes per mix, measured mix times, predicted speedups."""
    one = next(r for r in rows if r["name"] == "cluster, 1 worker" and r["passes"] == 1)
    train = sum(x["train_seconds"] for x in one["rounds"])
    rate = total / train                                        # bytes/s of one worker (2 cores)
    overhead = one["seconds"] - train - sum(x["mix_seconds"] for x in one["rounds"])
    lines = ["## Beyond this machine", "",
             "Bytes: a mix moves each worker's contribution up a binary tree (depth ceil(log2 W)) and the "
             "mixed model to the next round's tasks. For the default rule (FOBOS + AdaGrad) a "
             "contribution is 7 arrays of d·K float64 (the rescaled moves, their part made part-way and "
             "its steady share, the step denominators where the worker met a coordinate, the zero "
             "crossings, the rescaled shrinking where it did not, and G's increments; the intercept's are "
             "K numbers each), 56·d·K bytes; RDA + AdaGrad and "
             "FTRL send 5 (40·d·K: the dual sums' increments, and of the main sum, where the worker met a "
             "coordinate, the part made part-way and its steady share), RDA + invsqrt 4, scalar FOBOS 1 "
             "(8·d·K). The "
             "model the workers receive is its state, 32·d·K bytes for FOBOS + AdaGrad. A mix of W workers "
             "thus moves W x 56·d·K bytes up (each tree level halves the number of contributions in flight; "
             "the critical path carries ceil(log2 W) of them) and W x 32·d·K down.", "",
             "| d | contribution (MB) | one mix, 2 workers, measured (s) | a mix of 128 workers moves (GB, up + "
             "down) | tree depth at 128 |", "|---|---|---|---|---|"]
    for e, seconds, nbytes in mixes:
        lines.append(f"| 2^{e} | {nbytes / 1e6:.1f} | {seconds:.3f} | "
                     f"{128 * (nbytes + 32 * (1 << e)) / 1e9:.1f} | 7 |")
    mix_by_e = {e: s for e, s, _ in mixes}
    top = max(mix_by_e)
    top_bytes = next(b for e, _, b in mixes if e == top)
    lines += ["", "The measured mix is the tree's addition, the mix and its hand-over on this machine's 2 "
              "workers (one level); the time of a mix grows as d (the arrays' size) and, on a network, "
              "as the tree's depth times one contribution's transfer.", "",
              f"Prediction for 1 TB, one pass, a mix per pass. Measured here: a worker (2 cores: kernel and "
              f"reader) trains at {rate / 1e6:.0f} MB/s of LIBSVM text; a run costs {overhead:.1f} s besides "
              "training and mixing (the start task, scheduling, the model's download and writing). Each "
              "worker is taken to be such a machine reading its own disks, the data spread evenly, a mix "
              "taking the measured time x the tree's depth (this ignores the network: at 1 GB/s a 2^24 "
              f"contribution, {top_bytes / 1e9:.1f} GB, adds {top_bytes / 1e9:.1f} s per level). One machine: "
              "1 TB / the same rate.", "",
              "| workers | d | train (s) | mix (s) | predicted speedup vs one machine |", "|---|---|---|---|---|"]
    t_single = 1e12 / rate + overhead
    for w in (8, 32, 128):
        for e in sorted({20, top}):
            m = mix_by_e.get(e, mix_by_e[top]) * math.ceil(math.log2(w))
            t = 1e12 / (w * rate)
            lines.append(f"| {w} | 2^{e} | {t:.0f} | {m:.1f} | {t_single / (t + m + overhead):.1f}x |")
    lines += ["", "The time scales; the accuracy of one pass does not: with W groups each model sees 1/W of "
              "the rows before the average (the table above), so a "
              "cluster of many workers needs more passes, and the speedup per pass overstates the speedup "
              "to a given accuracy. The rules with AdaGrad's steps lose least (docs/dask.md, Accuracy)."]
    return lines


def plot(path, rows, mixes):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, (a, b) = plt.subplots(1, 2, figsize=(10, 4))
    names = [r["name"] for r in rows if r["passes"] == 1]
    for passes, offset in ((1, -0.2), (3, 0.2)):
        values = [r["seconds"] for r in rows if r["passes"] == passes]
        a.bar(np.arange(len(values)) + offset, values, width=0.4, label=f"{passes} pass(es)")
    a.set_xticks(range(len(names)), [n.replace(" (fastprox train)", "").replace("cluster, ", "")
                                     for n in names])
    a.set_ylabel("seconds, files -> saved model")
    a.legend()
    b.loglog([1 << e for e, _, _ in mixes], [s for _, s, _ in mixes], "o-")
    b.set_xlabel("d (features)")
    b.set_ylabel("one mix, 2 workers (s)")
    fig.tight_layout()
    fig.savefig(path, dpi=100)


if __name__ == "__main__":
    sys.exit(main())
