"""Can one setting of the contract's AdaGrad beat Vowpal Wabbit's defaults everywhere?

Issues 2 and 6 ask that one pass of ``ProxClassifier()`` be at least as accurate
as VW's defaults (adaptive, normalized, importance-invariant updates) on every
data set of the peer suite. This sweeps what the contract lets a default choose
(update rule, ``eta0``, AdaGrad's ``delta``) over the suite's own problems and
splits, runs VW's defaults on the same rows, and marks each cell that is not
below VW. Accuracy is deterministic, so the machine's load does not matter.
Writes bench/results/defaults.md.

    python bench/defaults.py [--data ../shared/data] [--out bench/results/defaults.md]
"""
import argparse
import sys
import warnings
from pathlib import Path

from sklearn.exceptions import ConvergenceWarning

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH / "peers"))
sys.path.insert(0, str(BENCH))

from fastprox import ProxClassifier  # noqa: E402
from fastprox._core import CLASSIFIER_DEFAULTS  # noqa: E402
from fastprox.benchmarks.machine import describe_machine  # noqa: E402
from fastprox.benchmarks.peers import data  # noqa: E402
from fastprox.benchmarks.papers._common import md_table  # noqa: E402
from fastprox.benchmarks.peers.metrics import evaluate  # noqa: E402
from fastprox.benchmarks.peers.vw import VW  # noqa: E402
from run import synthetic  # noqa: E402

SETTINGS = [dict(update=u, eta0=e, delta=dl) for u in ("fobos", "rda", "ftrl")
            for dl in (1e-8, 0.1, 1.0) for e in (0.05, 0.1, 0.2, 0.5, 1.0)]


def vw_accuracy(problem):
    """VW's defaults, one pass over the same rows, scored as the peer suite scores them."""
    vw = VW("VW defaults", [])
    vw.prepare(problem)
    vw.fit(problem.X_train, problem.y_train)
    return evaluate(vw, problem, alpha=0.0)["test_accuracy"]


def accuracy(params, problem):
    clf = ProxClassifier(schedule="adagrad", shuffle=False, **params)
    return clf.fit(problem.X_train, problem.y_train).score(problem.X_test, problem.y_test)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default="../shared/data")
    parser.add_argument("--out", default=str(BENCH / "results" / "defaults.md"))
    args = parser.parse_args()
    warnings.simplefilter("ignore", ConvergenceWarning)
    problems = [synthetic(50_000, s) for s in (1.0, 0.8, 1.2)] + data.real_sets(args.data)
    reference = [vw_accuracy(p) for p in problems]
    rows, wins = [], []
    for params in SETTINGS:
        accs = [accuracy(params, p) for p in problems]
        won = sum(a >= r for a, r in zip(accs, reference))
        wins.append((won, params))
        rows.append([f"{params['update']}, eta0={params['eta0']:g}, delta={params['delta']:g}", str(won)]
                    + [f"**{a:.4f}**" if a >= r else f"{a:.4f}" for a, r in zip(accs, reference)])
        print(rows[-1][:2], flush=True)
    default = {k: CLASSIFIER_DEFAULTS[k] for k in ("update", "eta0", "delta")}
    best = max(wins, key=lambda w: w[0])
    header = ["setting (schedule='adagrad')", "sets not below VW"] + [p.name for p in problems]
    text = "\n".join([
        "# One-pass accuracy: the contract's AdaGrad settings vs Vowpal Wabbit's defaults", "",
        "`python bench/defaults.py`", "", describe_machine(), "",
        f"Test accuracy after one unshuffled pass, l1 alpha = {CLASSIFIER_DEFAULTS['alpha']:g} (fastprox's "
        "default), the peer suite's problems and splits. **Bold**: not below VW's defaults on that set. "
        f"fastprox's defaults are {default}.", "",
        md_table(header, [["VW defaults", ""] + [f"{r:.4f}" for r in reference]] + rows), "",
        f"Most sets not below VW with one setting: {best[0]} of {len(problems)} ({best[1]}). "
        "The best `eta0` follows the rows' scale (about 0.05 on the Zipf rows of 50 ones, 0.5-1 on "
        "unit-norm text), and a larger `delta` damps the first steps of rare features (the Zipf sets) "
        "but starves the small gradients of unit-norm rows (reuters, rcv1). VW's normalized updates "
        "divide each step by the features' scale and its invariant updates take the loss's exact "
        "importance-weighted step; neither is one of the contract's schedules, so no default within "
        "the contract meets the target on every set.", ""])
    Path(args.out).write_text(text)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
