"""Can one setting of the contract's AdaGrad beat Vowpal Wabbit's defaults everywhere?

Issues 2 and 6 ask that one pass of ``ProxClassifier()`` be at least as accurate
as VW's defaults (adaptive, normalized, importance-invariant updates) on every
data set of the peer suite. This sweeps what the contract lets a default choose
(update rule, ``eta0``, AdaGrad's ``delta``) over the suite's own problems and
splits, runs VW's defaults on the same rows, and marks each cell that is not
below VW. A second table asks what choosing the setting per data set would
give: among the FOBOS settings, the one with the lowest progressive
validation loss (no test rows) over the first rows or the whole pass.
Accuracy is deterministic, so the machine's load does not matter.
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
#: The penalty weight: alphas above the default, for each rule, and at two stream lengths.
LENGTH_ALPHAS = (1e-5, 3e-5, 1e-4)
ALPHA_SETTINGS = [dict(update=u, alpha=a, eta0=e, delta=1e-8) for u in ("fobos", "rda", "ftrl")
                  for a in (1e-5, 3e-5, 1e-4) for e in (0.2, 0.5)]


def vw_accuracy(problem):
    """VW's defaults, one pass over the same rows, scored as the peer suite scores them."""
    vw = VW("VW defaults", [])
    vw.prepare(problem)
    vw.fit(problem.X_train, problem.y_train)
    return evaluate(vw, problem, alpha=0.0)["test_accuracy"]


#: Rows whose progressive loss picks a setting in the race table; None: the whole pass.
RACE_ROWS = (1_000, 10_000, None)


def one_pass(params, X, y):
    """ProxClassifier with AdaGrad steps and `params` after one unshuffled pass."""
    return ProxClassifier(schedule="adagrad", shuffle=False, **params).fit(X, y)


def run(params, problem):
    """Test accuracy after one pass, and the progressive loss of each RACE_ROWS prefix."""
    X, y = problem.X_train, problem.y_train
    clf = one_pass(params, X, y)
    losses = [one_pass(params, X[:n], y[:n]).progressive_loss_
              if n is not None and n < X.shape[0] else clf.progressive_loss_ for n in RACE_ROWS]
    return clf.score(problem.X_test, problem.y_test), losses


def accuracy_rows(settings, reference, label, accuracies):
    """Table rows: each setting's test accuracy per set, ``accuracies(params)`` (bold:
    not below VW), and the most sets not below VW with the (first) setting that has them."""
    rows, best = [], (-1, None)
    for params in settings:
        accs = accuracies(params)
        won = sum(a >= r for a, r in zip(accs, reference))
        best = max(best, (won, params), key=lambda w: w[0])
        rows.append([label(params), str(won)] + [f"**{a:.4f}**" if a >= r else f"{a:.4f}"
                                                 for a, r in zip(accs, reference)])
        print(rows[-1][:2], flush=True)
    return rows, best


def race_table(problems, reference, results):
    """Per set, the FOBOS setting with the least progressive loss over each prefix, and its accuracy."""
    fobos = [(params, runs) for params, runs in results if params["update"] == "fobos"]
    rows = []
    for i, n in enumerate(RACE_ROWS):
        picks = [min(fobos, key=lambda pr: pr[1][j][1][i]) for j in range(len(problems))]
        accs = [params_runs[1][j][0] for j, params_runs in enumerate(picks)]
        won = sum(a >= r for a, r in zip(accs, reference))
        below = ", ".join(p.name for p, a, r in zip(problems, accs, reference) if a < r) or "none"
        rows.append([f"first {n:,} rows" if n else f"whole pass ({len(fobos)} learners side by side)",
                     f"{won} (below: {below})"]
                    + [f"{'**%.4f**' if a >= r else '%.4f'} (eta0={pr[0]['eta0']:g}, delta={pr[0]['delta']:g})"
                       % a for a, r, pr in zip(accs, reference, picks)])
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default="../shared/data")
    parser.add_argument("--out", default=str(BENCH / "results" / "defaults.md"))
    args = parser.parse_args()
    warnings.simplefilter("ignore", ConvergenceWarning)
    problems = [synthetic(50_000, s) for s in (1.0, 0.8, 1.2)] + data.real_sets(args.data)
    reference = [vw_accuracy(p) for p in problems]
    results = []        # (params, runs) of SETTINGS, for the race table

    def with_race(params):
        runs = [run(params, p) for p in problems]
        results.append((params, runs))
        return [a for a, _ in runs]

    rows, best = accuracy_rows(SETTINGS, reference,
                               lambda q: f"{q['update']}, eta0={q['eta0']:g}, delta={q['delta']:g}", with_race)
    alpha_rows, alpha_best = accuracy_rows(
        ALPHA_SETTINGS, reference, lambda q: f"{q['update']}, alpha={q['alpha']:g}, eta0={q['eta0']:g}",
        lambda q: [one_pass(q, p.X_train, p.y_train).score(p.X_test, p.y_test) for p in problems])
    lengths = [problems[0], synthetic(200_000, 1.0)]
    length_rows = [[f"{a:g}"] + ["%.4f" % one_pass(dict(update="ftrl", alpha=a, eta0=0.5), p.X_train, p.y_train)
                                 .score(p.X_test, p.y_test) for p in lengths] for a in LENGTH_ALPHAS]
    default = {k: CLASSIFIER_DEFAULTS[k] for k in ("update", "eta0", "delta")}
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
        "the contract meets the target on every set.", "",
        "## Choosing the setting per data set by progressive validation", "",
        "What a default could do instead of one fixed setting: train the FOBOS settings above side by "
        "side on the stream and keep the one whose progressive loss (each row's loss before its update; "
        "no test rows) is lowest after the first rows, or after the whole pass. Test accuracy of the "
        "setting picked; **bold**: not below VW's defaults.", "",
        md_table(["picked by the progressive loss of", "sets not below VW"] + [p.name for p in problems],
                 race_table(problems, reference, results)), "",
        "A race is within the contract (the model is the contract's, for the setting it keeps), but "
        "its margins over VW are within the test sets' noise (a9a: 16,281 test rows, one standard "
        "error 0.003), and it costs: run over the whole pass it trains every candidate on every row, "
        "15 times one learner's work; cut short, it keeps a setting on the first rows' evidence. "
        "The library keeps one fixed default setting; eta0 and delta per data set stay the user's "
        "(cheap) tuning.", "",
        "## The penalty weight", "",
        "The same one pass with larger l1 weights than the default's (delta = 1e-8). **Bold**: not "
        "below VW's defaults.", "",
        md_table(["setting (schedule='adagrad', l1)", "sets not below VW"] + [p.name for p in problems],
                 alpha_rows), "",
        f"Most sets not below VW with one setting: {alpha_best[0]} of {len(problems)} ({alpha_best[1]}). "
        "A larger alpha closes most of the gap on the Zipf sets, whose 10% label noise and rare "
        "features VW's updates resist without any penalty; a9a still wants a smaller eta0 than the "
        "others allow. But the contract's objective is the mean loss plus alpha r(w): the penalty "
        "weighs alpha n against the data, and the alpha a stream wants falls as it grows. The Zipf "
        "problem (s = 1) at two lengths, ftrl with eta0 = 0.5:", "",
        md_table(["alpha"] + [f"{p.name} ({p.X_train.shape[0]:,} training rows)" for p in lengths],
                 length_rows), "",
        "The alphas the sets above want (3e-5 to 1e-4 at about 40,000 rows: LIBLINEAR's C = "
        "1/(alpha n) of 0.25 to 0.9) would be C = 0.001-0.003 on a stream of 10 million rows. The "
        "library's default stays alpha = 1e-6 (C = 1 at a million rows, LIBLINEAR's default), and alpha "
        "is the user's to set, as scikit-learn's SGD leaves its own 1e-4.", ""])
    Path(args.out).write_text(text)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
