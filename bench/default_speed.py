"""One-pass time of the defaults against the former defaults and scikit-learn's SGD.

Issue 21 asks that the data-free defaults (fobos, the normalized schedule, the
invariant step, no penalty) run within 1.3x of the former default pass (fobos,
AdaGrad with "auto" steps, the gradient step, l1) on the peer suite's sets, and at least
1.5x as fast as scikit-learn's ``SGDClassifier(penalty="l1")``. Each learner makes
one unshuffled pass over the training rows of each set, the learners interleaved
run after run in one process; the table gives the median seconds over the runs
and the ratios of medians. A second table does the same on the multiclass sets of
../shared/data (one-vs-rest models; scikit-learn's SGD is one-vs-rest too).
Writes bench/results/default_speed.md.

    python -m bench.default_speed [--runs 7] [--data ../shared/data] [--out ...]
"""
import argparse
import statistics
import time
import warnings
from pathlib import Path

from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import SGDClassifier

from fastprox import ProxClassifier
from bench.defaults import FORMER_DEFAULTS, MULTICLASS, suite_sets
from bench.machine import describe_lanes, describe_machine
from bench.papers._common import md_table
from bench.peers import data

BENCH = Path(__file__).resolve().parent

#: name -> a factory of the learner; the first is the reference of the ratios.
LEARNERS = {
    "former defaults (fobos+adagrad+l1, gradient)": lambda: ProxClassifier(shuffle=False, **FORMER_DEFAULTS),
    "defaults (fobos+normalized, invariant)": lambda: ProxClassifier(shuffle=False),
    "defaults with l1 1e-6": lambda: ProxClassifier(alpha=1e-6, shuffle=False),
    "fobos+normalized, gradient": lambda: ProxClassifier(step="gradient", shuffle=False),
    "sklearn SGD l1": lambda: SGDClassifier(loss="log_loss", penalty="l1", alpha=1e-6,
                                            learning_rate="invscaling", eta0=0.5, max_iter=1,
                                            tol=None, shuffle=False),
}


def timings(problem, runs):
    """{learner: [seconds of one pass per run]}, the learners interleaved."""
    out = {name: [] for name in LEARNERS}
    for _ in range(runs):
        for name, make in LEARNERS.items():
            est = make()
            start = time.perf_counter()
            est.fit(problem.X_train, problem.y_train)
            out[name].append(time.perf_counter() - start)
    return out


def speed_rows(problems, runs):
    """A table row per problem: its non-zeros, each learner's median seconds with its
    ratio to the first learner's, and scikit-learn's median over the defaults'."""
    names = list(LEARNERS)
    rows = []
    for p in problems:
        medians = {k: statistics.median(v) for k, v in timings(p, runs).items()}
        first, sgd = medians[names[0]], medians["sklearn SGD l1"]
        rows.append([p.name, f"{p.X_train.nnz:,}"]
                    + [f"{medians[k]:.4f} ({medians[k] / first:.2f}x)" for k in names]
                    + [f"{sgd / medians[names[1]]:.2f}x"])
        print(rows[-1], flush=True)
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--data", default="../shared/data")
    parser.add_argument("--out", default=str(BENCH / "results" / "default_speed.md"))
    args = parser.parse_args()
    warnings.simplefilter("ignore", ConvergenceWarning)
    names = list(LEARNERS)
    header = ["set", "non-zeros"] + names + ["sklearn l1 / defaults"]
    binary = speed_rows(suite_sets(args.data), args.runs)
    multiclass = speed_rows(data.real_sets(args.data, sets=MULTICLASS, binary=False), args.runs)
    text = "\n".join([
        "# One-pass time of the defaults", "", f"`python -m bench.default_speed --runs {args.runs}`", "",
        describe_machine(), describe_lanes(), "",
        f"Median seconds of one unshuffled pass over the training rows ({args.runs} interleaved runs "
        "in one process), in brackets the ratio to the former defaults' median (issue 21's target for "
        "the defaults: at most 1.3x); the last column is scikit-learn's l1 pass over the defaults' "
        "(target: at least 1.5x).", "",
        md_table(header, binary), "",
        "## Multiclass sets (one-vs-rest)", "",
        "The same learners on the multiclass sets of `shared/data`: K one-vs-rest outputs in one pass "
        "(scikit-learn: K binary passes). Not part of issue 21's target, which names the peer suite's "
        "sets.", "",
        md_table(header, multiclass), "",
    ])
    Path(args.out).write_text(text)
    print(text)


if __name__ == "__main__":
    main()
