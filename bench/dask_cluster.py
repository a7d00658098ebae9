"""A simulated cluster of 8, 32 and 128 workers measured in parts on one machine.

The same rows (``--rows``, the benchmark's Zipf text of ``bench.dask``, written
once as ``--shares`` LIBSVM files) are cut into W shares, W the number of
workers (the files dealt to W groups as ``fastprox.dask`` deals them). Then:

- **Each worker's share, timed pinned to one core** (``os.sched_setaffinity``;
  the reader thread inherits it: parsing and training on that core), one
  after another: the parallel mode's own task (``_tasks.train_group``) from
  the global start model to its contribution, on the files.
- **The mix of W contributions**, timed: the tree's additions (``_tasks.add``,
  pairs level by level as ``_run._tree`` adds them; a level's additions run at
  once on a cluster, so its slowest counts) and the mix (``_tasks.mix``).
- **A network model** (``--bandwidth-gbps``, ``--latency-ms`` per tree level;
  defaults for a 10 Gb/s cluster): each level moves one contribution per link
  up, the mixed model comes back down the same tree. The critical path of a
  pass is the slowest share + per level (slowest addition + transfer +
  latency) + the mix + the model's way down. One core's time for the whole
  pass is that of one group of every share, timed alike; the speedup is
  their ratio.
- **Accuracy after 1 and 3 passes with W shares**, trained in the parallel
  mode's semantics (`bench.dask_sim`: each group's learner starts every round
  from the same global model, then the mix): real, not predicted.

Run: ``python -m bench.dask_cluster [--part accuracy|timing|all]``; the parts'
figures are kept in ``--dir``/results.json (accuracy is not timing-sensitive
and can run while the machine is loaded); writes ``bench/results/dask_cluster.md``
and ``bench/results/dask_cluster.png``.
"""
import argparse
import json
import os
import pickle
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from bench import dask_sim
from bench.dask_workload import D
from bench.dask_pinned import pin
from bench.machine import describe_machine

RESULTS = Path(__file__).resolve().parent / "results"
TRAIN_SEEDS_ROWS = 125_000       # rows made per seed, as bench.dask's files


def make_files(directory, rows, shares, test_rows=100_000):
    """``rows`` rows of the benchmark's distribution (bench.dask's first files' rows)
    written as ``shares`` LIBSVM files, and a test file of ``test_rows`` rows; kept if
    already there. Their paths."""
    import scipy.sparse as sp
    from fastprox import dump_libsvm
    directory.mkdir(parents=True, exist_ok=True)
    paths = [directory / f"part-{i:03d}.svm" for i in range(shares)]
    test = directory / "test.svm"
    if all(p.exists() for p in paths + [test]):
        return paths, test
    pieces = [dask_sim.zipf_rows(min(TRAIN_SEEDS_ROWS, rows - a), 1 + k)
              for k, a in enumerate(range(0, rows, TRAIN_SEEDS_ROWS))]
    X, y = sp.vstack([p[0] for p in pieces]).tocsr(), np.concatenate([p[1] for p in pieces])
    for path, (Xi, yi) in zip(paths, dask_sim.blocks_of(X, y, shares)):
        dump_libsvm(Xi, yi, path)
    dump_libsvm(*dask_sim.zipf_rows(test_rows, 999), test)
    return paths, test


def accuracy_by_workers(paths, test, workers, passes=3):
    """{W: test accuracy after each pass} with the files as shares dealt to W groups
    (W = 1: one machine's model), in the parallel mode's semantics."""
    from fastprox import load_libsvm
    blocks = [load_libsvm(p, n_features=D) for p in paths]
    Xt, yt = load_libsvm(test, n_features=D)
    return {w: dask_sim.by_pass(blocks, (Xt, yt), w, passes) for w in (1, *workers)}


def timing(paths, workers, core):
    """{W: the parts of one pass}: each share's seconds pinned to ``core`` (from the
    global start model to its contribution), each tree level's slowest addition,
    the mix's seconds, the largest contribution's and the model's bytes. Seconds
    are this process's CPU seconds (its reader thread and kernel, on the one core:
    that core's wall time when no other job shares it), so that a loaded machine
    slows the figures less than it would wall-clock times."""
    from fastprox._mixing import mix_kind
    from fastprox.dask import _tasks
    from fastprox.dask._shares import FileShare, deal
    pin(core)
    shares = [FileShare(p) for p in paths]
    est = dask_sim.estimator()
    kind = mix_kind(est.params["update"], est.params["schedule"], est.params["penalty"])
    model = _tasks.start(est, shares)
    found = {}
    for w in workers:
        groups = deal(shares, w)
        seconds, tree, nbytes = [], dask_sim.TreeSum(), 0
        for g, members in enumerate(groups):
            began = time.process_time()
            part = _tasks.train_group(model, g, [shares[i] for i in members], (0, 0), None, kind)
            seconds.append(time.process_time() - began)
            nbytes = max(nbytes, part.nbytes)
            tree.add(part)
        summed, levels = tree.total(), tree.levels
        began = time.process_time()
        mixed = _tasks.mix(model, summed, kind)
        mix_seconds = time.process_time() - began
        found[w] = dict(shares=seconds, levels=levels, mix=mix_seconds, contribution_bytes=nbytes, sent=tree.sent,
                        model_bytes=len(pickle.dumps(mixed)))
        print(f"{w} workers: shares {sum(seconds):.2f} s (slowest {max(seconds):.3f}), "
              f"tree {sum(levels):.3f} s, mix {mix_seconds:.3f} s", file=sys.stderr, flush=True)
    return found


def critical_path(parts, bandwidth, latency):
    """(seconds of one pass on the cluster, its parts) under the network model:
    ``bandwidth`` bytes/s per link, ``latency`` seconds per tree level."""
    depth = len(parts["levels"])
    sent = parts.get("sent") or [parts["contribution_bytes"]] * depth    # bytes sent up to each level
    up = sum(parts["levels"]) + sum(sent) / bandwidth + depth * latency
    down = depth * (parts["model_bytes"] / bandwidth + latency)
    slowest = max(parts["shares"])
    return slowest + up + parts["mix"] + down, dict(slowest=slowest, up=up, mix=parts["mix"], down=down)


def uptime():
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dir", default="/tmp/fastprox_dask_cluster", help="where the files are made")
    parser.add_argument("--rows", type=int, default=1_000_000, help="training rows in all")
    parser.add_argument("--shares", type=int, default=128, help="files the rows are written as")
    parser.add_argument("--test-rows", type=int, default=100_000)
    parser.add_argument("--workers", type=int, nargs="+", default=[8, 32, 128])
    parser.add_argument("--part", choices=("accuracy", "timing", "all"), default="all")
    parser.add_argument("--core", type=int, default=1, help="the core the shares are timed on")
    parser.add_argument("--bandwidth-gbps", type=float, default=10.0, help="per link, Gb/s")
    parser.add_argument("--latency-ms", type=float, default=0.5, help="per tree level, ms")
    parser.add_argument("--out", default=str(RESULTS / "dask_cluster.md"))
    args = parser.parse_args(argv)
    if max(args.workers) > args.shares:
        raise SystemExit(f"error: --workers up to {max(args.workers)} needs at least as many --shares")
    if args.core not in os.sched_getaffinity(0):
        raise SystemExit(f"error: --core {args.core} is not among this machine's cores "
                         f"{sorted(os.sched_getaffinity(0))}")
    directory = Path(args.dir)
    paths, test = make_files(directory, args.rows, args.shares, args.test_rows)
    store = directory / "results.json"
    kept = json.loads(store.read_text()) if store.exists() else {}
    if args.part in ("accuracy", "all"):
        load = uptime()
        kept["accuracy"] = {str(w): a for w, a in accuracy_by_workers(paths, test, args.workers).items()}
        kept["accuracy_load"] = load
    if args.part in ("timing", "all"):
        load = uptime()
        kept["timing"] = {str(w): p for w, p in timing(paths, [1, *args.workers], args.core).items()}
        kept["timing_load"], kept["timing_load_after"] = load, uptime()
    store.write_text(json.dumps(kept))
    write(Path(args.out), kept, args, sum(p.stat().st_size for p in paths))
    return 0


def write(out, kept, args, nbytes):
    """The report (markdown) and its plot, from the parts measured so far."""
    bandwidth, latency = args.bandwidth_gbps * 1e9 / 8, args.latency_ms / 1e3
    lines = ["# A simulated cluster: 8 to 128 workers measured in parts", "", describe_machine(),
             f"- Data: {args.rows:,} rows of `bench.dask`'s Zipf text (60 features of d = 2^20 a row), "
             f"{nbytes / 1e6:.0f} MB as {args.shares} LIBSVM files under {args.dir}; W workers: the files "
             f"dealt to W groups as `fastprox.dask` deals them. Test: {args.test_rows:,} rows of the same "
             "distribution.",
             "- Rule: `bench.dask_workload.RULE` (FOBOS + AdaGrad, l1 1e-6) in the parallel mode, a mix per pass.",
             f"- Network model: {args.bandwidth_gbps:g} Gb/s per link, {args.latency_ms:g} ms per tree "
             "level; a contribution goes up each level of the binary tree, the mixed model down it.", ""]
    timing, acc = kept.get("timing"), kept.get("accuracy")
    if timing:
        lines += [f"Load while timing: before `{kept['timing_load']}`, after `{kept['timing_load_after']}`. "
                  f"Shares timed one after another, pinned to core {args.core} (parser thread and kernel on "
                  "it), each from the global start model to its contribution; a tree level's slowest "
                  "addition and the mix timed on the same core. Times are the process's CPU seconds (its "
                  "reader thread and kernel, on that one core: the core's wall time when nothing else runs "
                  "on it), so that the other jobs of a loaded machine slow the figures less.", "",
                  "| workers | all shares, one after another (s) | slowest share (s) | tree additions, levels (s) | "
                  "largest contribution (MB) | sent up to each level (MB) | model (MB) | up the tree, with network (s) | mix (s) | model down (s) "
                  "| critical path of a pass (s) | speedup vs one core |", "|---|---|---|---|---|---|---|---|---|---|---|---|"]
        one = timing["1"]["shares"][0] if "1" in timing else None
        for w, parts in sorted(timing.items(), key=lambda kv: int(kv[0])):
            path, p = critical_path(parts, bandwidth, latency)
            one = sum(parts["shares"]) if one is None else one
            lines.append(f"| {w} | {sum(parts['shares']):.2f} | {p['slowest']:.3f} | {sum(parts['levels']):.3f} "
                         f"({len(parts['levels'])}) | {parts['contribution_bytes'] / 1e6:.1f} | "
                         f"{', '.join(f'{b / 1e6:.1f}' for b in parts.get('sent', [])) or '-'} | "
                         f"{parts['model_bytes'] / 1e6:.1f} | {p['up']:.3f} | {p['mix']:.3f} | {p['down']:.3f} | "
                         f"{path:.3f} | {one / path:.1f}x |")
        lines += ["", "The speedup is against one core training on every row as one group (the row of 1 "
                  "worker: one share of all the files, its contribution made once); the shares of W workers "
                  "add up to more (each makes a contribution: the features its share met, sparse when they are at most "
                  "a quarter of the model's, and its shrinking of the others, of the model's size). A worker's "
                  "share shrinks as 1/W while the mix does not (the sums grow denser up the tree, the model is "
                  "of the model's size, d = 2^20 here, and the tree's "
                  "depth grows as log2 W), so the speedup falls away from W as W grows and the shares get "
                  "small: these shares are 1/W of 1 M rows, a cluster's would be larger.", ""]
    if acc:
        one = acc["1"]
        lines += [f"Accuracy (load while measured, not timing-sensitive: `{kept['accuracy_load']}`), "
                  "test accuracy with W groups in the parallel mode's semantics:", "",
                  "| workers | 1 pass | vs one machine (points) | 3 passes | vs one machine (points) |",
                  "|---|---|---|---|---|"]
        for w, a in sorted(acc.items(), key=lambda kv: int(kv[0])):
            lines.append(f"| {'one machine' if w == '1' else w} | {a[0]:.4f} | {100 * (a[0] - one[0]):+.2f} | "
                         f"{a[-1]:.4f} | {100 * (a[-1] - one[-1]):+.2f} |")
    out.write_text("\n".join(lines) + "\n")
    plot(out.with_suffix(".png"), timing, acc, bandwidth, latency)


def plot(path, timing, acc, bandwidth, latency):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, (a, b) = plt.subplots(1, 2, figsize=(10, 4))
    if timing:
        ws = sorted(int(w) for w in timing if w != "1")
        one = timing["1"]["shares"][0]
        speed = [one / critical_path(timing[str(w)], bandwidth, latency)[0] for w in ws]
        a.plot(ws, speed, "o-", label="measured parts + network model")
        a.plot(ws, ws, ":", color="grey", label="linear")
        a.set_xscale("log", base=2)
        a.set_yscale("log", base=2)
        a.legend()
    a.set_xlabel("workers")
    a.set_ylabel("speedup of a pass vs one core")
    if acc:
        ws = sorted(int(w) for w in acc if w != "1")
        for k, label in ((0, "1 pass"), (-1, "3 passes")):
            a_ = b.plot(ws, [100 * acc[str(w)][k] for w in ws], "o-", label=label)
            b.axhline(100 * acc["1"][k], color=a_[0].get_color(), ls=":")
        b.set_xscale("log", base=2)
        b.legend(title="dotted: one machine")
    b.set_xlabel("workers")
    b.set_ylabel("test accuracy (%)")
    fig.tight_layout()
    fig.savefig(path, dpi=100)


if __name__ == "__main__":
    sys.exit(main())
