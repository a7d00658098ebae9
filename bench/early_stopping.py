"""scikit-learn's stopping and averaging: fastprox against SGDClassifier with the same settings.

Issue 39's benchmark. On each of the peer suite's sets (its Zipf sets and the real
LIBSVM sets found under --data: a9a, w8a, ijcnn1, reuters, the rcv1 sample),
``ProxClassifier`` and ``SGDClassifier`` train with loss="log_loss", max_iter=1000,
tol=1e-3 (scikit-learn's defaults) and random_state=0, once with
``early_stopping=True`` and once with ``average=True``, each library's defaults
otherwise (fastprox: the normalized schedule, the invariant step, no penalty;
scikit-learn: the "optimal" rate, l2 with alpha 1e-4). The table gives the passes
each ran (n_iter_), the median seconds of ``fit`` over the runs (the learners
interleaved in one process) and the test accuracy of the same fits. The target
(issue 39): at each set, a fastprox setting as accurate as scikit-learn's best of its
two, in less time than that setting of scikit-learn's. Writes
bench/results/early_stopping.md.

    python -m bench.early_stopping [--runs 3] [--data ../shared/data] [--quick] [--out ...]
"""
import argparse
import statistics
import time
import warnings
from pathlib import Path

from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import SGDClassifier

from fastprox import ProxClassifier
from bench.defaults import suite_sets
from bench.machine import describe_lanes, describe_machine
from bench.papers._common import md_table
from bench.peers import data

BENCH = Path(__file__).resolve().parent
#: What both libraries are given: scikit-learn's max_iter and tol, a seed.
COMMON = dict(loss="log_loss", max_iter=1000, tol=1e-3, random_state=0)
SETTINGS = {"early_stopping": dict(early_stopping=True), "average": dict(average=True)}
LIBRARIES = {"fastprox": ProxClassifier, "sklearn": SGDClassifier}


def measure(problem, runs):
    """{(library, setting): dict(epochs, seconds (median), accuracy)} on one problem,
    the learners interleaved run after run."""
    out = {}
    times = {}
    for _ in range(runs):
        for library, cls in LIBRARIES.items():
            for setting, params in SETTINGS.items():
                est = cls(**COMMON, **params)
                start = time.perf_counter()
                est.fit(problem.X_train, problem.y_train)
                times.setdefault((library, setting), []).append(time.perf_counter() - start)
                out[library, setting] = dict(epochs=int(est.n_iter_),
                                             accuracy=est.score(problem.X_test, problem.y_test))
    for key, seconds in times.items():
        out[key]["seconds"] = statistics.median(seconds)
    return out


def rows_of(problem, results):
    """The table's rows of one problem, and its verdict: a fastprox setting at least
    as accurate as scikit-learn's best setting, and faster than it."""
    rows = [[problem.name, library, setting, r["epochs"], f"{r['seconds']:.3f}", f"{r['accuracy']:.4f}"]
            for (library, setting), r in results.items()]
    sk = max((r for (lib, _), r in results.items() if lib == "sklearn"), key=lambda r: r["accuracy"])
    ours = [r for (lib, _), r in results.items() if lib == "fastprox"]
    met = [r for r in ours if r["accuracy"] >= sk["accuracy"] and r["seconds"] < sk["seconds"]]
    best = max(ours, key=lambda r: r["accuracy"])
    verdict = [problem.name, f"{sk['accuracy']:.4f} in {sk['seconds']:.3f} s",
               f"{best['accuracy']:.4f} in {best['seconds']:.3f} s",
               f"{sk['seconds'] / best['seconds']:.1f}x", "met" if met else "not met"]
    return rows, verdict


def problems(args):
    """The sets: the peer suite's (--quick: one small synthetic set)."""
    if args.quick:
        return [data.text_like(2_000, 5_000, seed=1)]
    return suite_sets(args.data)


def report(args, table, verdicts):
    """The Markdown report."""
    return "\n".join([
        "# Stopping and averaging: fastprox against SGDClassifier", "",
        f"`python -m bench.early_stopping --runs {args.runs}" + (" --quick" if args.quick else "") + "`", "",
        describe_machine(), describe_lanes(), "",
        f"Both libraries: `{', '.join(f'{k}={v!r}' for k, v in COMMON.items())}`, with `early_stopping=True` "
        "or `average=True`, each library's defaults otherwise (fastprox: normalized schedule, invariant "
        "step, no penalty; scikit-learn: 'optimal' rate, l2 with alpha 1e-4). Epochs: n_iter_; seconds: "
        f"the median of {args.runs} interleaved fits; accuracy: on the test rows, of the same fits.", "",
        md_table(["set", "library", "setting", "epochs", "seconds", "test accuracy"], table), "",
        "## Target: a fastprox setting as accurate as scikit-learn's best, in less time", "",
        md_table(["set", "scikit-learn's best", "fastprox's most accurate", "speed-up", "target"], verdicts),
        "",
    ])


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3, help="timed fits per learner (median; default 3)")
    parser.add_argument("--data", default="../shared/data", help="folder of the LIBSVM sets")
    parser.add_argument("--quick", action="store_true", help="one small synthetic set, for a smoke test")
    parser.add_argument("--out", default=str(BENCH / "results" / "early_stopping.md"))
    args = parser.parse_args(argv)
    if args.runs < 1:
        parser.error(f"--runs must be at least 1, got {args.runs}")
    warnings.simplefilter("ignore", ConvergenceWarning)
    table, verdicts = [], []
    for problem in problems(args):
        try:
            rows, verdict = rows_of(problem, measure(problem, args.runs))
        finally:
            problem.close()
        table += rows
        verdicts.append(verdict)
        print(*rows, verdict, sep="\n", flush=True)
    text = report(args, table, verdicts)
    Path(args.out).write_text(text)
    print(text)
    return text


if __name__ == "__main__":
    main()
