"""One-pass accuracy over several training orders: fastprox's defaults vs Vowpal Wabbit's.

The peer suite and ``bench/defaults.py`` score one pass over one order of the
training rows; one order's accuracy moves with the order by about the gaps it
is used to compare (on a9a, VW's defaults range 0.8478-0.8512 over orders).
Here every learner makes one unshuffled pass over each of K seeded orders of
the training rows of the peer suite's sets and of every other binary set of
../shared/data (bench.defaults.HELD_OUT), the same orders for all, and the
tables give the median and the range of the test accuracies, and in how many
orders each learner is not below VW. The learners: VW's defaults; fastprox's
defaults (the normalized schedule, the invariant step, eta0 = 0.5, no
penalty: nothing read from the data, and VW's update in the contract's terms);
the defaults with l1 at alpha 1e-6 (the default alpha until issue 21's
scale table); the defaults with eta0 = 1; and the defaults before issue 21
(AdaGrad with the "auto" steps the first rows set, l1 at alpha 1e-6).
With ``--multiclass``, the multiclass sets of ../shared/data (bench.defaults.MULTICLASS)
instead, their classes kept: VW's one-against-all reduction (``--oaa K``, logistic
loss as the binary runs, and its default squared loss) against fastprox's defaults
(one-vs-rest) and its multinomial model (which falls back to AdaGrad); written to
bench/results/orders_multiclass.md. Accuracy is deterministic, so the machine's load does
not matter. Writes bench/results/orders.md.

    python -m bench.orders [--orders 7] [--data ../shared/data] [--out bench/results/orders.md]
    python -m bench.orders --multiclass [--orders 7]
"""
import argparse
import dataclasses
import statistics
import tempfile
from pathlib import Path

import numpy as np

from fastprox import ProxClassifier
from bench.defaults import FORMER_DEFAULTS, MULTICLASS, binary_sets, vw_accuracy
from bench.peers.data import real_sets
from bench.peers.vw import oaa_accuracy
from bench.machine import describe_machine
from bench.papers._common import md_table

BENCH = Path(__file__).resolve().parent

#: fastprox's learners: name -> parameters beside the defaults.
LEARNERS = {"fastprox defaults (normalized, invariant, eta0 0.5, no penalty: VW's update)": {},
            "defaults with l1, alpha 1e-6": dict(alpha=1e-6),
            "defaults with eta0 1": dict(eta0=1.0),
            "AdaGrad, auto steps, l1 1e-6 (the defaults before issue 21)": FORMER_DEFAULTS}
#: The same for the multiclass sets, and VW's reductions: name -> options.
MULTICLASS_LEARNERS = {"fastprox defaults (one-vs-rest)": {},
                       "fastprox multinomial (AdaGrad, auto steps)": dict(multi_class="multinomial")}
VW_MULTICLASS = {"VW --oaa K --loss_function logistic": ("--loss_function", "logistic"),
                 "VW --oaa K (squared loss, VW's default)": ()}


def orders(problem, k):
    """The problem with its training rows in k seeded orders (each its own scratch folder)."""
    for seed in range(k):
        perm = np.random.default_rng(100 + seed).permutation(problem.X_train.shape[0])
        yield dataclasses.replace(problem, X_train=problem.X_train[perm], y_train=problem.y_train[perm],
                                  workdir=tempfile.mkdtemp(prefix="fastprox-orders-"))


def measure(problem, k, multiclass=False):
    """{learner: [test accuracy per order]} for VW's defaults and LEARNERS (`multiclass`:
    VW_MULTICLASS and MULTICLASS_LEARNERS)."""
    vw = VW_MULTICLASS if multiclass else {"VW defaults": None}
    learners = MULTICLASS_LEARNERS if multiclass else LEARNERS
    out = {name: [] for name in [*vw, *learners]}
    for p in orders(problem, k):
        for name, options in vw.items():
            out[name].append(vw_accuracy(p) if options is None else oaa_accuracy(p, options))
        for name, params in learners.items():
            clf = ProxClassifier(shuffle=False, **params).fit(p.X_train, p.y_train)
            out[name].append(clf.score(p.X_test, p.y_test))
        p.close()
    return out


def cell(values, reference=None):
    """median [min-max], with the count of orders not below the reference's."""
    text = f"{statistics.median(values):.4f} [{min(values):.4f}-{max(values):.4f}]"
    if reference is not None:
        text += f", {sum(a >= r for a, r in zip(values, reference))}/{len(values)}"
    return text


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--orders", type=int, default=7)
    parser.add_argument("--data", default="../shared/data")
    parser.add_argument("--out", help="default: bench/results/orders.md, or orders_multiclass.md")
    parser.add_argument("--multiclass", action="store_true", help="the multiclass sets against VW's --oaa")
    args = parser.parse_args()
    if args.multiclass:
        problems = real_sets(args.data, sets=MULTICLASS, binary=False)
        vw, learners, out = list(VW_MULTICLASS), MULTICLASS_LEARNERS, "orders_multiclass.md"
    else:
        problems = binary_sets(args.data)
        vw, learners, out = ["VW defaults"], LEARNERS, "orders.md"
    results = []
    for problem in problems:
        results.append(measure(problem, args.orders, args.multiclass))
        print(problem.name, {k: cell(v) for k, v in results[-1].items()}, flush=True)
    rows, means, first = [], {}, vw[0]
    for key in [*vw, *learners]:
        means[key] = statistics.mean(statistics.median(r[key]) for r in results)
        medians_ok = [statistics.median(r[key]) >= statistics.median(r[first]) for r in results]
        reference = None if key == first else first
        rows.append([key, "" if reference is None else f"{sum(medians_ok)} of {len(results)}",
                     f"{means[key]:.4f}"]
                    + [cell(r[key], r[reference] if reference else None) for r in results])
    sets = ("the multiclass sets of ../shared/data, classes kept" if args.multiclass else
            "the peer suite's sets and the other binary sets of ../shared/data")
    text = "\n".join([
        "# One-pass accuracy over several training orders", "",
        f"`python -m bench.orders --orders {args.orders}{' --multiclass' if args.multiclass else ''}`", "",
        describe_machine(), "",
        f"Test accuracy after one unshuffled pass over each of {args.orders} seeded orders of the training "
        f"rows of {sets} (the same orders for every learner): median [lowest-highest] over the "
        f"orders and, for the others, in how many orders it is not below `{first}`; the second column "
        "counts the sets whose median is not below its median (learners: see the module's docstring).", "",
        md_table(["learner", "sets with median not below VW", "mean of the medians"]
                 + [p.name for p in problems], rows), "",
    ])
    Path(args.out or BENCH / "results" / out).write_text(text)
    print(text)


if __name__ == "__main__":
    main()
