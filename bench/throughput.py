"""One-pass throughput on a synthetic text-like problem, fastprox vs scikit-learn's SGD.

The problem (seeded): n = 200,000 rows, d = 2^20 features, 50 distinct
features per row drawn from a Zipf(1.0) law over randomly permuted feature ids,
values 1.0, labels the sign of a sparse ground-truth margin with 10% flipped.
Every learner makes one unshuffled pass with l1-regularized logistic loss;
scikit-learn's l2 pass (no per-feature bookkeeping) is the floor. Reported:
median non-zeros per second over several runs, in the same process, and the
ratios to scikit-learn. Writes bench/results/throughput.md.

    python -m bench.throughput [--runs 5] [--rows 200000] [--out bench/results/throughput.md]
"""
import argparse
import platform
import statistics
import time
import warnings
from pathlib import Path

import numpy as np
import scipy.sparse as sp
import sklearn
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import SGDClassifier

import fastprox
from fastprox import ProxClassifier

from bench.machine import describe_machine


def zipf_text(n, d, per_row, seed, exponent=1.0):
    """CSR rows of `per_row` distinct Zipf(`exponent`)-ranked features, values 1.0, and +-1 labels."""
    rng = np.random.default_rng(seed)
    ids = rng.permutation(d)
    draws = 3 * per_row
    u = rng.random((n, draws))
    if exponent == 1.0:
        # Inverse CDF of the continuous 1/k law on [1, d + 1): k = floor((d + 1)^u).
        k = np.exp(u * np.log(d + 1))
    else:
        # The same for k^-s: k = (1 + u ((d + 1)^(1-s) - 1))^(1/(1-s)).
        e = 1.0 - exponent
        k = (1.0 + u * ((d + 1.0) ** e - 1.0)) ** (1.0 / e)
    ranks = np.minimum(np.floor(k).astype(np.int64), d) - 1
    ranks.sort(axis=1)
    dup = np.zeros_like(ranks, dtype=bool)
    dup[:, 1:] = ranks[:, 1:] == ranks[:, :-1]
    priority = np.where(dup, np.inf, rng.random((n, draws)))
    keep = np.argsort(priority, axis=1)[:, :per_row]
    cols = np.sort(ids[np.take_along_axis(ranks, keep, axis=1)], axis=1)
    if np.isinf(np.take_along_axis(priority, keep, axis=1)).any():
        raise RuntimeError("too few distinct features drawn; raise `draws`")
    X = sp.csr_matrix((np.ones(n * per_row), cols.ravel(), np.arange(0, n * per_row + 1, per_row)),
                      shape=(n, d))
    truth = rng.normal(size=d) * (rng.random(d) < 0.1)
    y = np.where(X @ truth > 0, 1, -1)
    flip = rng.random(n) < 0.1
    y[flip] = -y[flip]
    return X, y


def learners():
    """(name, estimator factory): every fastprox rule with l1/log, and the scikit-learn peers."""
    rules = [("fobos", "invsqrt"), ("fobos", "adagrad"), ("rda", "invsqrt"),
             ("rda", "adagrad"), ("ftrl", "adagrad")]
    out = [(f"fastprox {u}+{s}+l1", lambda u=u, s=s: ProxClassifier(
        update=u, schedule=s, step="gradient", penalty="l1", alpha=1e-6, eta0=0.5, shuffle=False)) for u, s in rules]
    for penalty in ("l1", "l2"):
        out.append((f"sklearn SGD {penalty}", lambda p=penalty: SGDClassifier(
            loss="log_loss", penalty=p, learning_rate="invscaling", eta0=0.5, max_iter=1,
            tol=None, shuffle=False)))
    return out


def measure(X, y, runs):
    """Median seconds of one fit per learner, interleaving learners run by run."""
    times = {name: [] for name, _ in learners()}
    accuracy = {}
    warnings.simplefilter("ignore", ConvergenceWarning)
    for _ in range(runs):
        for name, make in learners():
            est = make()
            start = time.perf_counter()
            est.fit(X, y)
            times[name].append(time.perf_counter() - start)
            accuracy[name] = est.score(X, y)
    return {name: statistics.median(t) for name, t in times.items()}, accuracy


def report(X, seconds, accuracy, runs):
    nnz = X.nnz
    l1, l2 = seconds["sklearn SGD l1"], seconds["sklearn SGD l2"]
    lines = [
        "# One-pass throughput: fastprox vs scikit-learn SGD",
        "",
        f"Synthetic text-like problem: {X.shape[0]:,} rows, d = {X.shape[1]:,}, {nnz:,} non-zeros "
        "(50 distinct Zipf(1.0) features per row, values 1.0, 10% label noise). One unshuffled pass, "
        f"log loss. Median of {runs} runs in one process; `python -m bench.throughput`.",
        "",
        describe_machine(),
        f"- fastprox {fastprox.__version__}, scikit-learn {sklearn.__version__}, numpy {np.__version__}, "
        f"Python {platform.python_version()}",
        "",
        "| learner | seconds | M non-zeros/s | vs sklearn l1 | vs sklearn l2 | training accuracy |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for name, s in seconds.items():
        lines.append(f"| {name} | {s:.3f} | {nnz / s / 1e6:.1f} | {l1 / s:.2f}x | {l2 / s:.2f}x "
                     f"| {accuracy[name]:.4f} |")
    fobos, rda = seconds["fastprox fobos+invsqrt+l1"], seconds["fastprox rda+adagrad+l1"]
    lines += [
        "",
        "Targets (issue 2), ratios of throughput measured in this run:",
        "",
        f"- fobos+invsqrt+l1 vs sklearn l1: {l1 / fobos:.2f}x (target >= 2x): "
        f"{'met' if l1 / fobos >= 2 else 'NOT met'}",
        f"- fobos+invsqrt+l1 vs sklearn l2: {l2 / fobos:.2f}x (target >= 0.7x): "
        f"{'met' if l2 / fobos >= 0.7 else 'NOT met'}",
        f"- rda+adagrad+l1 vs sklearn l1: {l1 / rda:.2f}x (target >= 1.5x): "
        f"{'met' if l1 / rda >= 1.5 else 'NOT met'}",
        "",
    ]
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--rows", type=int, default=200_000)
    parser.add_argument("--out", default=str(Path(__file__).parent / "results" / "throughput.md"))
    args = parser.parse_args()
    X, y = zipf_text(args.rows, 1 << 20, 50, seed=0)
    seconds, accuracy = measure(X, y, args.runs)
    text = report(X, seconds, accuracy, args.runs)
    Path(args.out).write_text(text)
    print(text)


if __name__ == "__main__":
    main()
