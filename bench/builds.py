"""One-pass kernel time of two builds of fastprox, against scikit-learn in the same run.

A change of the kernel's structure must keep its speed (issue 20: the split into
.pxd files, checked against the last commit before it). Each build is a source
tree with its extensions compiled in place (``git worktree add DIR COMMIT`` then
``python setup.py build_ext --inplace`` there); every measurement runs in a process
of its own, with that tree's ``src`` first on the path, the two builds alternating
process after process so that a busy machine slows both alike. A process times
``Learner.fit_rows`` alone (one unshuffled pass, the gradient step unless the
rule says ``+invariant``, l1 or l2 logistic loss, eta0 0.5, delta 1) for each
rule of ``--rules`` on ijcnn1 ten times over (499,900
rows of 13 non-zeros, float64: the per-row cost) and on the Zipf text problem of
``bench.throughput`` (200,000 rows of 50: the per-non-zero cost), and scikit-learn's
``SGDClassifier(penalty="l1")`` one-pass fit on the same rows. Reported: the median
over processes of each process's fastest of ``--repeats`` timings, the ratio
after / before, and scikit-learn's time over each build's. Writes
bench/results/builds.md.

    python -m bench.builds --before ../before/src --after src [--processes 5]
        [--rules fobos+normalized+l1,fobos+normalized+l1+invariant] [--out FILE]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time
import warnings
from pathlib import Path

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent

#: update+schedule+penalty[+step] of the rules timed by default: those with fast row
#: kernels that both builds of issue 20 have.
RULES = ("fobos+invsqrt+l1,fobos+adagrad+l1,fobos+constant+l2,rda+invsqrt+l1,rda+adagrad+l1,"
         "ftrl+adagrad+l1")


#: Rows of a --suite set repeated up to at least this many non-zeros a pass.
SUITE_NONZEROS = 400_000


def problems(data, suite=False):
    """name -> (X float64 CSR, y in {-1, 1}): ijcnn1 x10 and the Zipf text problem;
    with `suite`, the peer suite's training sets (`bench.defaults.suite_sets`), the
    small ones repeated up to SUITE_NONZEROS non-zeros."""
    import numpy as np
    import scipy.sparse as sp
    from sklearn.datasets import load_svmlight_file

    from bench.throughput import zipf_text
    if suite:
        from bench.defaults import suite_sets
        out = {}
        for p in suite_sets(data):
            times = max(1, -(-SUITE_NONZEROS // p.X_train.nnz))
            out[p.name if times == 1 else f"{p.name} x{times}"] = (
                sp.vstack([p.X_train] * times, format="csr").astype(np.float64),
                np.where(np.concatenate([np.asarray(p.y_train)] * times) > 0, 1.0, -1.0))
        return out
    X, y = load_svmlight_file(str(Path(data) / "ijcnn1" / "ijcnn1.trn"))
    X = sp.vstack([X] * 10, format="csr").astype(np.float64)
    y = np.where(np.concatenate([y] * 10) > 0, 1.0, -1.0)
    Z, z = zipf_text(200_000, 2**20, 50, seed=0)
    return {"ijcnn1 x10": (X, y), "Zipf 200k": (Z.astype(np.float64), np.asarray(z, dtype=np.float64))}


def measure(data, repeats, rules, suite):
    """{problem: {rule or "sklearn l1": fastest seconds of `repeats` passes}} in this
    process; `rules` as --rules gives them, the problems as `problems(data, suite)`."""
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.linear_model import SGDClassifier

    from fastprox._kernels import Learner
    warnings.simplefilter("ignore", ConvergenceWarning)
    out = {}
    for name, (X, y) in problems(data, suite).items():
        out[name] = {}
        for rule in rules.split(","):
            update, schedule, penalty, *step = rule.split("+")
            best = float("inf")
            for _ in range(repeats):
                learner = Learner(X.shape[1], 1, update, schedule, penalty, "log", alpha=1e-6,
                                  eta0=0.5, delta=1.0, step=step[0] if step else "gradient")
                start = time.perf_counter()
                learner.fit_rows(X.data, X.indices, X.indptr, y, None, None, 1)
                best = min(best, time.perf_counter() - start)
            out[name][rule] = best
        best = float("inf")
        for _ in range(repeats):
            sgd = SGDClassifier(loss="log_loss", penalty="l1", alpha=1e-6, learning_rate="invscaling",
                                eta0=0.5, max_iter=1, tol=None, shuffle=False)
            start = time.perf_counter()
            sgd.fit(X, y)
            best = min(best, time.perf_counter() - start)
        out[name]["sklearn l1"] = best
    return out


def run_build(src, data, repeats, rules, suite):
    """`measure` in a process that imports fastprox from the tree `src`."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(Path(src).resolve()), str(ROOT)]))
    result = subprocess.run([sys.executable, "-m", "bench.builds", "--measure", "--data", data,
                             "--repeats", str(repeats), "--rules", rules] + ["--suite"] * suite,
                            env=env, cwd=ROOT, capture_output=True,
                            text=True, check=True)
    return json.loads(result.stdout.strip().splitlines()[-1])


def report(runs, args):
    """The markdown table of the runs {build: [measure results]}."""
    from bench.machine import describe_machine
    from bench.papers._common import md_table
    rows = []
    for problem in runs["before"][0]:
        med = {build: {rule: statistics.median(r[problem][rule] for r in results)
                       for rule in results[0][problem]} for build, results in runs.items()}
        # scikit-learn's time over the rule's, process by process: a yardstick that a
        # process slowed as a whole (a busy neighbour, another frequency) leaves alone
        ahead = {build: {rule: statistics.median(r[problem]["sklearn l1"] / r[problem][rule] for r in results)
                         for rule in results[0][problem]} for build, results in runs.items()}
        # and each rule's time over the first rule's, process by process
        first = next(iter(med["before"]))
        over = {build: {rule: statistics.median(r[problem][rule] / r[problem][first] for r in results)
                        for rule in results[0][problem]} for build, results in runs.items()}
        for rule in med["before"]:
            if rule == "sklearn l1":
                continue
            b, a = med["before"][rule], med["after"][rule]
            sb, sa = ahead["before"][rule], ahead["after"][rule]
            rows.append([problem, rule, f"{b:.4f}", f"{a:.4f}", f"{a / b:.2f}", f"{sb:.2f}x", f"{sa:.2f}x",
                         f"{sb / sa:.2f}", f"{over['before'][rule]:.2f}", f"{over['after'][rule]:.2f}"])
    return "\n".join([
        "# Two builds of the kernel, one pass each", "",
        f"`python -m bench.builds --before {args.before} --after {args.after} --processes {args.processes}"
        f" --repeats {args.repeats}" + ("" if args.rules == RULES else f" --rules {args.rules}")
        + (" --suite" if args.suite else "") + f" --out {os.path.relpath(args.out, ROOT)}`", "",
        describe_machine(), "",
        f"Median over {args.processes} processes per build (alternating before, after) of each process's "
        f"fastest of {args.repeats} passes, in seconds; then the median over processes of scikit-learn's "
        "l1 pass over fastprox's, both timed in the same process, and the ratio of those (after / before "
        "in units of scikit-learn's pass: what a machine slowed or sped up between processes does not "
        "move); the last two columns: the median over processes of the rule's time over the first "
        "rule's, in each build.", "",
        md_table(["problem", "rule", "before (s)", "after (s)", "after / before", "sklearn l1 / before",
                  "sklearn l1 / after", "after / before, in sklearn's units",
                  "/ first rule, before", "/ first rule, after"], rows), ""])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", help="source directory (with compiled extensions) of the first build")
    parser.add_argument("--after", default="src", help="the same of the second build")
    parser.add_argument("--processes", type=int, default=5)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--data", default=str(ROOT.parent / "shared" / "data"))
    parser.add_argument("--rules", default=RULES, help="comma-separated update+schedule+penalty[+step]")
    parser.add_argument("--suite", action="store_true", help="the peer suite's sets, not ijcnn1 x10 and Zipf 200k")
    parser.add_argument("--out", default=str(BENCH / "results" / "builds.md"))
    parser.add_argument("--measure", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure:
        print(json.dumps(measure(args.data, args.repeats, args.rules, args.suite)))
        return
    if not args.before:
        parser.error("--before is required")
    runs = {"before": [], "after": []}
    for i in range(args.processes):
        for build in runs:
            runs[build].append(run_build(getattr(args, build), args.data, args.repeats, args.rules, args.suite))
            print(f"process {i + 1}/{args.processes} {build} done", file=sys.stderr, flush=True)
    text = report(runs, args)
    Path(args.out).write_text(text)
    Path(args.out).with_suffix(".json").write_text(json.dumps(runs))
    print(text)


if __name__ == "__main__":
    main()
