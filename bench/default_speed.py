"""One-pass time of the defaults against the plain FOBOS pass, scikit-learn's SGD and VW.

Issue 38 asks that the defaults (``ProxClassifier()``: fobos, the normalized schedule,
the invariant step, no penalty) run within 1.5x of the plain gradient pass (``fobos``,
``invsqrt``, ``l1``) and at least as fast as ``SGDClassifier(penalty="l2")``'s pass on
every set of the peer suite, and that the plain pass run at least 2x scikit-learn's l1
pass. Each learner makes one unshuffled pass over the training rows of each set (the
suite shuffled them once), the learners interleaved run after run in one process, in a
new random order each run (`timings` says why); the table gives the median seconds over the
runs and the ratios of medians.

The learners: fastprox's defaults and its plain pass (alpha = 1/n, the suite's);
scikit-learn's ``SGDClassifier(loss="log_loss", penalty=..., alpha=1/n, max_iter=1,
tol=None, shuffle=False)`` under l1 and l2 (its schedule the default, "optimal");
Vowpal Wabbit's defaults (``--loss_function logistic``, adaptive, normalized,
invariant) in process (``vowpalwabbit.Workspace``, the code path of the ``vw``
command), from its text format (parsing included) and from its binary cache (written
once, untimed: the closest VW comes to training from memory), and VW's setup alone
(the same workspace over no rows: its 2^b weights allocated and freed), which both
VW times include.

The clock is the process's CPU time by default (all its threads: VW parses on a
second one), which other jobs on the machine disturb least; ``--clock wall`` takes
wall-clock time, for a quiet machine. On a loaded machine, run it with
``OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1``: each pass is sequential, but the BLAS and
OpenMP pools' idle threads spun inside scikit-learn's fit (its rcv1 sample fit took 8 ms
of CPU with them, 1.2 ms without; threadpoolctl's limits, set after the import, left 3
ms); the report's command names them. Writes bench/results/default_speed.md.

    python -m bench.default_speed [--runs 9] [--clock process|wall] [--data ../shared/data] [--out ...]
"""
import argparse
import math
import os
import random
import shlex
import statistics
import sys
import time
import warnings
from pathlib import Path

import vowpalwabbit
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import SGDClassifier

from fastprox import ProxClassifier
from bench.defaults import suite_sets
from bench.machine import describe_lanes, describe_machine
from bench.papers._common import md_table

BENCH = Path(__file__).resolve().parent
CLOCKS = {"process": time.process_time, "wall": time.perf_counter}
VW_OPTIONS = ["--loss_function", "logistic", "--quiet"]


def vw_bits(problem):
    """VW's -b for a problem: every column its own weight (as bench/peers/vw.py)."""
    return str(max(18, math.ceil(math.log2(problem.n_features + 1))))


def vw_run(*args):
    """One VW workspace over `args`, run to its end."""
    vowpalwabbit.Workspace(arg_list=[*VW_OPTIONS, *args]).finish()


def sgd(penalty, alpha):
    """scikit-learn's one unshuffled pass under `penalty`."""
    return SGDClassifier(loss="log_loss", penalty=penalty, alpha=alpha, max_iter=1, tol=None, shuffle=False)


#: name -> a factory of one pass over a problem (alpha = 1/n): a function that runs it.
LEARNERS = {
    "defaults": lambda p, alpha: lambda: ProxClassifier(shuffle=False).fit(p.X_train, p.y_train),
    "plain fobos+invsqrt+l1": lambda p, alpha: lambda: ProxClassifier(
        schedule="invsqrt", step="gradient", penalty="l1", alpha=alpha, shuffle=False).fit(p.X_train, p.y_train),
    "sklearn l1": lambda p, alpha: lambda: sgd("l1", alpha).fit(p.X_train, p.y_train),
    "sklearn l2": lambda p, alpha: lambda: sgd("l2", alpha).fit(p.X_train, p.y_train),
    "VW text": lambda p, alpha: lambda: vw_run("-b", vw_bits(p), "-d", p.vw_path()),
    "VW cache": lambda p, alpha: lambda: vw_run("-b", vw_bits(p), "-d", p.vw_path(),
                                                "--cache_file", p.vw_cache_path(int(vw_bits(p)))),
    "VW setup": lambda p, alpha: lambda: vw_run("-b", vw_bits(p)),
}
#: The ratios of medians: (column, numerator, denominator).
RATIOS = (("defaults / plain", "defaults", "plain fobos+invsqrt+l1"),
          ("sklearn l2 / defaults", "sklearn l2", "defaults"),
          ("sklearn l1 / plain", "sklearn l1", "plain fobos+invsqrt+l1"),
          ("VW cache / defaults", "VW cache", "defaults"))


def timings(problem, runs, clock):
    """{learner: [seconds of one pass per run]}, the learners interleaved, in a new
    seeded random order each run (VW's files written and its cache filled first,
    untimed). A fit runs with the caches its predecessor left: after another library's
    work they are cold (a hundred to a few hundred microseconds more, whatever the
    learner), after a fit of the same library warm. In a fixed order each learner
    would have the same predecessor every run: the plain pass always followed the
    defaults and the defaults VW, a third of the defaults' fit on the rcv1 sample."""
    alpha = 1.0 / problem.X_train.shape[0]
    problem.vw_cache_path(int(vw_bits(problem)))
    return interleaved([(name, make(problem, alpha)) for name, make in LEARNERS.items()], runs, clock)


def interleaved(fits, runs, clock):
    """{key: [seconds by ``clock`` of each run]} of the (key, fit) pairs of ``fits``, the
    fits run one after another, in a new seeded random order each run (`timings` says why)."""
    out = {key: [] for key, _ in fits}
    order = random.Random(0)
    for _ in range(runs):
        for key, fit in order.sample(fits, len(fits)):
            start = clock()
            fit()
            out[key].append(clock() - start)
    return out


def speed_rows(problems, runs, clock):
    """A table row per problem: its non-zeros, each learner's median seconds, the ratios."""
    rows = []
    for p in problems:
        medians = {k: statistics.median(v) for k, v in timings(p, runs, clock).items()}
        p.close()
        rows.append([p.name, f"{p.X_train.nnz:,}"] + [f"{medians[k]:.4f}" for k in LEARNERS]
                    + [f"{medians[a] / medians[b]:.2f}" for _, a, b in RATIOS])
        print(" | ".join(rows[-1]), flush=True)
    return rows


def load():
    """The load average (1, 5, 15 min), formatted."""
    return "{:.2f}, {:.2f}, {:.2f}".format(*os.getloadavg())


def write_report(out, title, module, started, before, method, table):
    """Write and print the markdown report `title` of `module`'s run: its command (with the
    thread pools' sizes set in the environment), the machine, the lanes, the load average
    at the start (`before`, `started` by perf_counter) and now, `method` and `table`."""
    pools = "".join(f"{name}={os.environ[name]} " for name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS")
                    if name in os.environ)
    text = "\n".join([
        f"# {title}", "", f"`{pools}python -m {module} {shlex.join(sys.argv[1:])}`".replace(" `", "`"), "",
        describe_machine(), describe_lanes(),
        f"- Load average (1, 5, 15 min): {before} at the start, {load()} at the end "
        f"({time.perf_counter() - started:.0f} s)", "", method, "", table, ""])
    Path(out).write_text(text)
    print(text)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument("--clock", choices=sorted(CLOCKS), default="process")
    parser.add_argument("--data", default="../shared/data")
    parser.add_argument("--out", default=str(BENCH / "results" / "default_speed.md"))
    args = parser.parse_args()
    warnings.simplefilter("ignore", ConvergenceWarning)
    started, before = time.perf_counter(), load()
    rows = speed_rows(suite_sets(args.data), args.runs, CLOCKS[args.clock])
    header = ["set", "non-zeros"] + list(LEARNERS) + [name for name, _, _ in RATIOS]
    clock = ("CPU seconds of the process (all its threads)" if args.clock == "process"
             else "wall-clock seconds")
    method = (
        f"Median {clock} of one unshuffled pass over the training rows ({args.runs} interleaved runs "
        "in one process, each in a new seeded random order). The defaults: `ProxClassifier()`; plain: "
        "`ProxClassifier(schedule=\"invsqrt\", step=\"gradient\", penalty=\"l1\", alpha=1/n)`; sklearn: "
        "`SGDClassifier(loss=\"log_loss\", penalty=..., alpha=1/n, max_iter=1, tol=None, shuffle=False)`; "
        "each a `fit`, so with its checks and label encoding. VW: its defaults with the logistic loss, in "
        "process, from its text format (parsing included), from its binary cache (reading it included), "
        "and its setup over no rows (the 2^b weights' allocation, included in both). Issue 38's targets: "
        "defaults / plain at most 1.5, sklearn l2 / defaults at least 1, sklearn l1 / plain at least 2.")
    write_report(args.out, "One-pass time of the defaults", "bench.default_speed", started, before, method,
                 md_table(header, rows))


if __name__ == "__main__":
    main()
