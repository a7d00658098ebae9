"""The defaults' floor: what their row must do beyond the plain pass's, measured two ways.

Issue 38 asks that the defaults (fobos, the normalized schedule, the invariant step)
run within 1.5x of the plain pass (fobos, invsqrt, l1). Two measurements bound what an
exact kernel could reach, each beside the library's defaults and plain passes
(``bench.default_speed``'s learners), on each set's real rows:

- **normalized gradient / plain**: the library's normalized schedule with the gradient
  step (``ProxClassifier(step="gradient")``). The defaults' row does all of its work (the
  rescale, N_t, G, the step factors' square root and division, the update) and the
  invariant step's besides (a pass for the step norm, sigma): this is the defaults'
  ratio were the invariant step free, with the library's normalized row.
- **floor**: ``bench/_default_floor.pyx``, the contract's least work of a defaults' row
  and of a plain row, in their dependency order, one feature at a time, written alike
  (its docstring lists the work). floor / floor plain is the ratio of the two rows'
  mandated work when both are written the same way; floor / plain sets the defaults'
  least work against the library's plain pass (the library's passes, in lanes, can run
  faster than these scalar floors: a floor above the library's own pass bounds nothing
  alone). The sigma-free floor replaces sigma by the gradient step's l'(p), outside
  the contract: the invariant step's own chain.

Each pass is timed as a slope a row: the median CPU seconds of passes over all the
training rows less those over the first quarter, over the rows between (the fixed part
of a fit cancels), all interleaved in a new random order each run in one process.
Writes bench/results/default_floor.md.

    python -m bench.default_floor [--runs 25] [--data ../shared/data] [--sets 'a9a;w8a'] [--out ...]
"""
import statistics
import time

import numpy as np

from fastprox import ProxClassifier
from bench._compiled import compiled
from bench.default_decompose import Prefix, suite_arguments
from bench.default_speed import LEARNERS, interleaved, load, write_report
from bench.papers._common import md_table

DEFAULTS, PLAIN = "defaults", "plain fobos+invsqrt+l1"
#: The timed passes, each made from (problem, rows, eta0 of the defaults, alpha) into a function.
PASSES = {
    "defaults": lambda p, rows, eta0, alpha: LEARNERS[DEFAULTS](Prefix(p, rows), alpha),
    "plain": lambda p, rows, eta0, alpha: LEARNERS[PLAIN](Prefix(p, rows), alpha),
    "normalized gradient": lambda p, rows, eta0, alpha: lambda: ProxClassifier(step="gradient", shuffle=False).fit(
        p.X_train[:rows], p.y_train[:rows]),
    "floor defaults": lambda p, rows, eta0, alpha: floor_pass(p, rows, "defaults_pass", eta0),
    "floor defaults, sigma-free": lambda p, rows, eta0, alpha: floor_pass(
        p, rows, "defaults_pass", eta0, sigma_free=True),
    "floor plain": lambda p, rows, eta0, alpha: floor_pass(p, rows, "plain_pass", eta0, alpha),
}


def floor_pass(problem, rows, kernel, *args, **kwargs):
    """A function that runs `bench/_default_floor.pyx`'s `kernel` (its name; the module
    built on first use) over the first `rows` training rows (labels +-1, the larger
    class +1, as the learners map them)."""
    kernel = getattr(compiled("bench._default_floor"), kernel)
    X = problem.X_train[:rows].tocsr()
    data, indices = np.ascontiguousarray(X.data, dtype=np.float64), np.ascontiguousarray(X.indices, dtype=np.int32)
    indptr = np.ascontiguousarray(X.indptr, dtype=np.int64)
    y = np.where(problem.y_train[:rows] == np.max(problem.y_train), 1.0, -1.0)
    return lambda: kernel(data, indices, indptr, y, X.shape[1], *args, **kwargs)


def slopes(problem, runs):
    """{pass: CPU seconds a row}: (median over all rows - median over the first quarter) / rows between."""
    n = problem.X_train.shape[0]
    alpha, head = 1.0 / n, n // 4
    eta0 = LEARNERS[DEFAULTS](Prefix(problem, min(n, 1000)), alpha)()._learner.eta0
    fits = [((name, rows), make(problem, rows, eta0, alpha)) for name, make in PASSES.items() for rows in (head, n)]
    medians = {key: statistics.median(v) for key, v in interleaved(fits, runs, time.process_time).items()}
    return {name: (medians[name, n] - medians[name, head]) / (n - head) for name in PASSES}


def main():
    args, problems = suite_arguments(__doc__, "default_floor.md", 25)
    started, before = time.perf_counter(), load()
    rows = []
    for p in problems:
        s = slopes(p, args.runs)
        rows.append([p.name, f"{p.X_train.nnz / p.X_train.shape[0]:.1f}"]
                    + [f"{s[name] * 1e9:.1f}" for name in PASSES]
                    + [f"{s[a] / s[b]:.2f}" for a, b in (("defaults", "plain"), ("normalized gradient", "plain"),
                                                         ("floor defaults", "plain"),
                                                         ("floor defaults, sigma-free", "plain"),
                                                         ("floor defaults", "floor plain"))])
    header = (["set", "nnz/row"] + [f"{name} ns/row" for name in PASSES]
              + ["defaults / plain", "**normalized gradient / plain**", "floor / plain", "sigma-free floor / plain", "floor / floor plain"])
    method = ("Median CPU seconds of passes over all the training rows and over their first quarter "
              f"({args.runs} runs, interleaved in a new random order each run, one process); a row: the "
              "difference over the rows between. defaults, plain: the library's passes as in "
              "`bench.default_speed`; normalized gradient: `ProxClassifier(step=\"gradient\")`, the "
              "defaults' work less the invariant step's; floor: `bench/_default_floor.pyx`, the "
              "contract's least work a row, one feature at a time (`bench.default_floor`'s docstring).")
    write_report(args.out, "The defaults' floor: the contract's least work a row", "bench.default_floor",
                 started, before, method, md_table(header, rows))


if __name__ == "__main__":
    main()
