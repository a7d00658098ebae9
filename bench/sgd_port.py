"""A scikit-learn script ported to fastprox: SGDClassifier's arguments given to ProxClassifier.

The script of issue 39's closing note: ``SGDClassifier(loss="log_loss",
penalty="l1", early_stopping=True, average=True, max_iter=1000)`` on a9a. Its exact
port gives ``ProxClassifier`` the same arguments and spells out the scikit-learn
defaults that the script relies on and fastprox's defaults differ from
(`SKLEARN_DEFAULTS`): scikit-learn's alpha, its "optimal" rate (fastprox's
schedule="inv" with eta0 = 1 / alpha and Bottou's t0), the plain gradient step
(fastprox's default under a scalar schedule being the invariant step) and, the data
being sparse, intercept_scaling=0.1: on sparse X scikit-learn multiplies its intercept
updates by 0.01 (SPARSE_INTERCEPT_DECAY), which under that scalar rate and the gradient
step is the intercept as the weight of a constant feature of value 0.1. The port
that changes the class's name only (fastprox's defaults otherwise) runs too. Each
prints the passes it ran, the medians over ``--runs`` interleaved runs of its fit's
wall and CPU (process) time, and its test accuracy. Writes what it prints to
bench/results/sgd_port.md.

    python -m bench.sgd_port [--runs 3] [--data ../shared/data] [--out ...]
"""
import argparse
import statistics
import time
from pathlib import Path

from sklearn.linear_model import SGDClassifier

from fastprox import ProxClassifier, load_libsvm
from bench.machine import describe_machine

BENCH = Path(__file__).resolve().parent
ARGUMENTS = dict(loss="log_loss", penalty="l1", early_stopping=True, average=True, max_iter=1000,
                 random_state=0)
#: scikit-learn's defaults that the script relies on where fastprox's differ, spelled out:
#: SGDClassifier's own alpha and learning rate, SGD's gradient step, and its intercept on
#: sparse X (a9a is read as CSR): updates decayed by 0.01, intercept_scaling=0.1's.
SKLEARN_DEFAULTS = dict({name: SGDClassifier().get_params()[name] for name in ("alpha", "learning_rate")},
                        step="gradient", intercept_scaling=0.1)
#: (what the run is, the class, its arguments), in the order run.
PORTS = (("scikit-learn", SGDClassifier, ARGUMENTS),
         ("the exact port", ProxClassifier, dict(ARGUMENTS, **SKLEARN_DEFAULTS)),
         ("the class's name changed only (fastprox's defaults otherwise)", ProxClassifier, ARGUMENTS))


def fit(cls, params, X, y):
    """(the fitted estimator, wall seconds, CPU seconds) of ``cls(**params).fit(X, y)``."""
    cpu, wall = time.process_time(), time.perf_counter()
    est = cls(**params).fit(X, y)
    return est, time.perf_counter() - wall, time.process_time() - cpu


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default="../shared/data", help="folder holding a9a/a9a and a9a/a9a.t")
    parser.add_argument("--runs", type=int, default=3, help="interleaved runs of each fit (medians)")
    parser.add_argument("--out", default=str(BENCH / "results" / "sgd_port.md"))
    args = parser.parse_args(argv)
    if args.runs < 1:
        raise ValueError(f"--runs must be at least 1, got {args.runs}")
    X, y = load_libsvm(Path(args.data) / "a9a" / "a9a", zero_based=False)
    X_test, y_test = load_libsvm(Path(args.data) / "a9a" / "a9a.t", zero_based=False, n_features=X.shape[1])
    times = {what: [] for what, _, _ in PORTS}
    fitted = {}
    for _ in range(args.runs):
        for what, cls, params in PORTS:
            fitted[what], wall, cpu = fit(cls, params, X, y)     # (the same fit each run: random_state=0)
            times[what].append((wall, cpu))
    lines = []
    for what, cls, params in PORTS:
        est = fitted[what]
        wall, cpu = (statistics.median(pair[i] for pair in times[what]) for i in (0, 1))
        lines += [f"{what}:", f"{cls.__name__}({', '.join(f'{k}={v!r}' for k, v in params.items())})",
                  f"    epochs {est.n_iter_}, {wall:.3f} s wall, {cpu:.3f} s CPU (medians of {args.runs}), "
                  f"test accuracy {est.score(X_test, y_test):.4f}"]
        print("\n".join(lines[-3:]), flush=True)
    text = "\n".join(["# An SGDClassifier script ported to fastprox", "",
                      f"`python -m bench.sgd_port --runs {args.runs}`", "", describe_machine(), "",
                      "```", *lines, "```", ""])
    Path(args.out).write_text(text)
    return text


if __name__ == "__main__":
    main()
