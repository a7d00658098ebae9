"""The measurements on one problem, as a plain dict the report and the plots read.

- one pass from memory: every peer `runs` times, interleaved run by run
  (so that a busy moment of the shared machine hits all alike), median
  seconds; quality from the last run's model (the passes are deterministic);
- one pass from the training file to a model, for the peers with a file
  path (fastprox: `load_libsvm` + fit; VW: its text format);
- LIBLINEAR's optimum of the objective, then every peer's objective after
  each of `passes` passes, with cumulative training seconds.

River trains on a subset (see river_peers) and is timed once.
"""
import os
import statistics
import time

import numpy as np

from .metrics import evaluate, objective

#: Relative objective gap a learner must reach in the passes experiment.
GAP = 0.01


def _timed(call, *args):
    start = time.perf_counter()
    call(*args)
    return time.perf_counter() - start


def one_pass(problem, peers, alpha, runs, log):
    """{peer name: seconds (median), runs, trained rows/nonzeros, quality}."""
    X, y = problem.X_train, problem.y_train
    times = {peer.name: [] for peer in peers}
    for r in range(runs):
        for peer in peers:
            if peer.subset_rows is not None and r > 0:
                continue
            times[peer.name].append(_timed(peer.fit_one_pass, X, y))
        log(f"    run {r + 1}/{runs} done")
    out = {}
    for peer in peers:
        rows = min(X.shape[0], peer.subset_rows or X.shape[0])
        out[peer.name] = {"library": peer.library, "seconds": statistics.median(times[peer.name]),
                          "all_seconds": times[peer.name], "rows": rows,
                          "nnz": int(X.indptr[rows]), **evaluate(peer, problem, alpha)}
    return out


def from_file(problem, peers, runs):
    """{peer name: median seconds from the training file to a model, file bytes}."""
    out = {}
    for peer in peers:
        if peer.subset_rows is not None or peer.fit_file(problem) is None:
            continue
        path = problem.vw_path() if peer.library == "Vowpal Wabbit" else problem.libsvm_path()
        seconds = [_timed(peer.fit_file, problem) for _ in range(runs)]
        out[peer.name] = {"library": peer.library, "seconds": statistics.median(seconds),
                          "all_seconds": seconds, "bytes": os.path.getsize(path)}
    return out


def passes_to_optimum(problem, peers, reference, alpha, passes, log):
    """LIBLINEAR's optimum, and each peer's curve: [(pass, seconds, objective)],
    with the first pass (and its seconds) within GAP of the optimum, if any."""
    X, y = problem.X_train, problem.y_train
    seconds = _timed(reference.fit, X, y)
    best = objective(reference, X, y, alpha)
    out = {"optimum": {"seconds": seconds, **evaluate(reference, problem, alpha)}, "curves": {}}
    log(f"    LIBLINEAR optimum {best:.6g} in {seconds:.2f} s")
    for peer in peers:
        if peer.subset_rows is not None:
            continue
        curve = [(p, t, objective(peer, X, y, alpha)) for p, t in peer.pass_curve(X, y, passes)]
        reached = next(((p, t) for p, t, f in curve if f <= best * (1 + GAP)), (None, None))
        out["curves"][peer.name] = {"library": peer.library, "curve": curve,
                                    "passes_to_gap": reached[0], "seconds_to_gap": reached[1]}
    return out


def measure(problem, peers, reference, alpha, runs, file_runs, passes, log=print):
    """Everything the report says about `problem`."""
    X = problem.X_train
    log(f"  {problem.name}: {X.shape[0]:,} rows, d = {X.shape[1]:,}, {X.nnz:,} non-zeros")
    for peer in peers:
        peer.prepare(problem)
    result = {"name": problem.name, "description": problem.description, "alpha": alpha, "rows": X.shape[0],
              "n_features": X.shape[1], "nnz": int(X.nnz), "test_rows": problem.X_test.shape[0],
              "positive_share": float(np.mean(problem.y_train > 0))}
    result["one_pass"] = one_pass(problem, peers, alpha, runs, log)
    result["file"] = from_file(problem, peers, file_runs)
    if reference is not None and passes > 0:
        result.update(passes_to_optimum(problem, peers, reference, alpha, passes, log))
    return result
