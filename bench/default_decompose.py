"""Where the one-pass time goes: a fixed part and a part a row, from fits over prefixes.

Issue 38's ratios (bench/default_speed.py) compare whole fits. This splits each learner's
fit time on each set into a fixed part (the median fit over the first rows that hold
both classes: checks, label encoding, allocation, setup, the model's final reads) and a
part that grows with the rows: the CPU-time medians of fits over growing prefixes of the
training rows (interleaved, one process), fitted by least squares as fixed + slope x rows. (A row's and
a non-zero's shares of the slope cannot be told apart from one set's prefixes, whose
non-zeros grow with their rows, nor across sets, whose non-zeros differ in cache misses:
callgrind's instructions a row over sets of different row lengths split them.) The
learners: the defaults, the plain pass and scikit-learn's l2 pass, as in
bench/default_speed.py. Writes bench/results/default_decompose.md.

    python -m bench.default_decompose [--runs 7] [--data ../shared/data] [--sets 'a9a;w8a'] [--out ...]
"""
import argparse
import statistics
import time
import warnings

import numpy as np
from sklearn.exceptions import ConvergenceWarning

from bench.default_speed import BENCH, LEARNERS, interleaved, load, write_report
from bench.defaults import suite_sets
from bench.papers._common import md_table

NAMES = ("defaults", "plain fobos+invsqrt+l1", "sklearn l2")
#: The prefixes, as fractions of the training rows (the first: the fewest rows with both classes).
FRACTIONS = (0.0, 0.25, 0.5, 0.75, 1.0)


class Prefix:
    """The first `rows` training rows of `problem`, as the learners' factories read them."""

    def __init__(self, problem, rows):
        self.X_train, self.y_train = problem.X_train[:rows], problem.y_train[:rows]


def prefix_sizes(problem):
    """The prefixes' row counts: FRACTIONS of the rows, the first the fewest with both classes."""
    y, n = problem.y_train, problem.X_train.shape[0]
    first = 1 + int(np.argmax(y != y[0]))
    return [max(first, round(f * n)) for f in FRACTIONS]


def fit_times(problem, runs):
    """{(learner, rows): median CPU seconds} over the prefixes, all interleaved
    (`bench.default_speed.interleaved`)."""
    alpha = 1.0 / problem.X_train.shape[0]
    fits = [((name, rows), LEARNERS[name](Prefix(problem, rows), alpha))
            for rows in prefix_sizes(problem) for name in NAMES]
    return {key: statistics.median(v) for key, v in interleaved(fits, runs, time.process_time).items()}


def decompose(problems, runs):
    """{(set, learner): (fixed seconds, seconds a row, seconds of the whole fit)}."""
    lines = {}
    for p in problems:
        medians = fit_times(p, runs)
        sizes = prefix_sizes(p)
        for name in NAMES:
            slope = np.polyfit(sizes, [medians[name, r] for r in sizes], 1)[0]
            lines[p.name, name] = (medians[name, sizes[0]], slope, medians[name, sizes[-1]])
    return lines


def suite_arguments(doc, out, runs):
    """The command line of a benchmark over the suite's sets (``--runs``, ``--data``,
    ``--sets``, ``--out``, defaults `runs` and bench/results/`out`), described by the first
    line of `doc`: (its arguments, the sets it names)."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("--runs", type=int, default=runs)
    parser.add_argument("--data", default="../shared/data")
    parser.add_argument("--sets", default="", help="set names separated by ; (default: the suite)")
    parser.add_argument("--out", default=str(BENCH / "results" / out))
    args = parser.parse_args()
    warnings.simplefilter("ignore", ConvergenceWarning)
    return args, [p for p in suite_sets(args.data) if not args.sets or p.name in args.sets.split(";")]


def main():
    args, problems = suite_arguments(__doc__, "default_decompose.md", 7)
    started, before = time.perf_counter(), load()
    lines = decompose(problems, args.runs)
    header = ["set", "rows", "nnz/row"] + [f"{n}: {part}" for n in NAMES
                                           for part in ("fixed µs", "ns/row", "total ms")]
    rows = []
    for p in problems:
        n = p.X_train.shape[0]
        rows.append([p.name, f"{n:,}", f"{p.X_train.nnz / n:.1f}"] + [
            cell for name in NAMES for cell in (f"{lines[p.name, name][0] * 1e6:.0f}",
                                                f"{lines[p.name, name][1] * 1e9:.1f}",
                                                f"{lines[p.name, name][2] * 1e3:.2f}")])
    method = ("Median CPU seconds of fits over prefixes of the training rows (the fewest rows with "
              f"both classes, then 1/4, 1/2, 3/4 and all of them; {args.runs} runs, interleaved in a new "
              "random order each run). Fixed: the fit over the fewest rows; a row: the least-squares "
              "slope over the prefixes; total: the fit over all rows. The learners as in "
              "`bench.default_speed`.")
    write_report(args.out, "The defaults' fit: fixed and per row", "bench.default_decompose", started,
                 before, method, md_table(header, rows))


if __name__ == "__main__":
    main()
