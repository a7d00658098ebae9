"""One pass of one learner over the synthetic Zipf problem, repeated: the
workload to run under a profiler.

    python -m bench.peers.profile_pass fobos+invsqrt [--rows 200000] [--repeat 10] [--data FILE]
    perf record -o /tmp/fobos.data python -m bench.peers.profile_pass fobos+invsqrt --repeat 20
    perf annotate -i /tmp/fobos.data --stdio -s _kernels...
    valgrind --tool=callgrind --cache-sim=yes --branch-sim=yes --collect-atstart=no \\
        --toggle-collect='*fit_rows*' python -m bench.peers.profile_pass fobos+invsqrt --rows 20000 --repeat 1

LEARNER: UPDATE+SCHEDULE of fastprox (l1 penalty), or sklearn-l1 / sklearn-l2
(scikit-learn's SGDClassifier; its kernel is `_plain_sgd`). With --data, the
rows of a LIBSVM file (its first --rows) instead of the Zipf problem. Prints
the seconds of each pass and nanoseconds per non-zero.
"""
import argparse
import time

from fastprox import load_libsvm
from bench.peers.fastprox_rules import FastproxRule
from bench.peers.sklearn_sgd import SGD
from bench.throughput import zipf_text


def learner(name, alpha):
    if name.startswith("sklearn-"):
        return SGD(name.split("-", 1)[1], alpha)
    update, schedule = name.split("+")
    return FastproxRule(update, schedule, alpha)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("learner", help="UPDATE+SCHEDULE (fastprox) or sklearn-l1 / sklearn-l2")
    parser.add_argument("--rows", type=int, default=200_000)
    parser.add_argument("--exponent", type=float, default=1.0)
    parser.add_argument("--repeat", type=int, default=10)
    parser.add_argument("--alpha", type=float, default=1e-6)
    parser.add_argument("--data", metavar="FILE", help="a LIBSVM file instead of the Zipf problem")
    args = parser.parse_args()
    if args.data:
        X, y = load_libsvm(args.data)
        X, y = X[:args.rows], y[:args.rows]
    else:
        X, y = zipf_text(args.rows, 1 << 20, 50, seed=0, exponent=args.exponent)
    peer = learner(args.learner, args.alpha)
    for _ in range(args.repeat):
        start = time.perf_counter()
        peer.fit_one_pass(X, y)
        seconds = time.perf_counter() - start
        print(f"{args.learner}: {seconds:.4f} s, {1e9 * seconds / X.nnz:.2f} ns per non-zero", flush=True)


if __name__ == "__main__":
    main()
