"""A scikit-learn script ported to fastprox: SGDClassifier's arguments given to ProxClassifier.

The script of issue 39's closing note: ``SGDClassifier(loss="log_loss",
penalty="l1", early_stopping=True, average=True, max_iter=1000)`` on a9a, and
``ProxClassifier`` with the same arguments (the one change is the class's name),
each printing the passes it ran, its time and its test accuracy. Writes what it
prints to bench/results/sgd_port.md.

    python -m bench.sgd_port [--data ../shared/data] [--out ...]
"""
import argparse
import time
from pathlib import Path

from sklearn.linear_model import SGDClassifier

from fastprox import ProxClassifier, load_libsvm
from bench.machine import describe_machine

BENCH = Path(__file__).resolve().parent
ARGUMENTS = dict(loss="log_loss", penalty="l1", early_stopping=True, average=True, max_iter=1000,
                 random_state=0)


def run(cls, X, y, X_test, y_test, say):
    """Fit ``cls(**ARGUMENTS)`` and say its passes, seconds and test accuracy."""
    start = time.perf_counter()
    est = cls(**ARGUMENTS).fit(X, y)
    seconds = time.perf_counter() - start
    say(f"{cls.__name__}({', '.join(f'{k}={v!r}' for k, v in ARGUMENTS.items())})")
    say(f"    epochs {est.n_iter_}, {seconds:.3f} s, test accuracy {est.score(X_test, y_test):.4f}")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default="../shared/data", help="folder holding a9a/a9a and a9a/a9a.t")
    parser.add_argument("--out", default=str(BENCH / "results" / "sgd_port.md"))
    args = parser.parse_args(argv)
    X, y = load_libsvm(Path(args.data) / "a9a" / "a9a", zero_based=False)
    X_test, y_test = load_libsvm(Path(args.data) / "a9a" / "a9a.t", zero_based=False, n_features=X.shape[1])
    lines = []

    def say(line):
        print(line, flush=True)
        lines.append(line)

    for cls in (SGDClassifier, ProxClassifier):
        run(cls, X, y, X_test, y_test, say)
    text = "\n".join(["# An SGDClassifier script ported to fastprox", "",
                      "`python -m bench.sgd_port`", "", describe_machine(), "",
                      "```", *lines, "```", ""])
    Path(args.out).write_text(text)
    return text


if __name__ == "__main__":
    main()
