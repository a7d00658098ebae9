"""scikit-learn's stopping and averaging: fastprox against SGDClassifier with the same settings.

Issue 39's benchmark. On each of the peer suite's sets (its Zipf sets and the real
LIBSVM sets found under --data: a9a, w8a, ijcnn1, reuters, the rcv1 sample),
``ProxClassifier`` and ``SGDClassifier`` train with loss="log_loss", max_iter=1000,
tol=1e-3 (scikit-learn's defaults) and random_state=0, once with
``early_stopping=True`` and once with ``average=True``, each library's defaults
otherwise (fastprox: the normalized schedule, the invariant step, no penalty;
scikit-learn: the "optimal" rate, l2 with alpha 1e-4); fastprox once more with
scikit-learn's penalty spelled out (penalty="l2", alpha=1e-4), as a ported script
that names it trains; fastprox with scikit-learn's whole default rule (that penalty,
learning_rate="optimal", step="gradient", and intercept_scaling=0.1: on sparse X,
as every set here is, scikit-learn multiplies its intercept updates by 0.01, which
under that rate and step is the intercept as the weight of a constant feature of
value 0.1: the faithful port of SGDClassifier's defaults); and fastprox with that
penalty under invscaling's scalar rate (learning_rate="invscaling", power_t=0.5,
step="gradient"; LIBRARIES says why), early_stopping only. The table gives the passes each ran (n_iter_), the medians of
``fit``'s CPU (process) time and wall time over the runs (the learners interleaved in
one process) and the test accuracy of the same fits. The target (issue 39): at each
set, a fastprox fit as accurate as scikit-learn's best of its two settings, in less
wall time than that fit of scikit-learn's. Writes bench/results/early_stopping.md.

``--trace`` adds, per set, one more (untimed) fit of each learner and setting with the
quantity its stopping rule read after each pass: the held-out score under
early_stopping, else the mean training loss (scikit-learn: its objective, the loss
plus its penalty, as its verbose output prints it; its held-out score under log_loss
is not the accuracy but what its callback computes, `report` says why), and the passes without
improvement counted by the rule (scikit-learn's rule applied to the values read).

``--seeds N`` repeats every fit with random_state 0 .. N-1 (each library's shuffle and,
under early_stopping, its validation split): the table then gives, per learner and
setting, the medians over the seeds of the passes, the times and the accuracy, the
target is judged on those medians, and the verdict counts the seeds at which it is met
(judged on that seed's fits alone). One seed decides a set where the two libraries'
accuracies differ by less than their spread over shuffles (a few 1e-4 on several
sets); the seeds say whether a verdict is the rule or the draw. The verdict's last column
gives that draw's size: over the ordered pairs of distinct seeds, how often fastprox meets
the target against scikit-learn at another seed, and how often scikit-learn itself does
(`seed_pairs`). ``--trace`` traces random_state 0.

    python -m bench.early_stopping [--runs 3] [--seeds 1] [--data ../shared/data] [--quick] [--trace] [--out ...]
"""
import argparse
import contextlib
import io
import os
import re
import statistics
import time
import warnings
from pathlib import Path

import sklearn
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import SGDClassifier
from sklearn.linear_model import _stochastic_gradient as sgd_module

import fastprox._stopping

from fastprox import ProxClassifier
from bench.defaults import suite_sets
from bench.machine import describe_lanes, describe_machine
from bench.papers._common import md_table
from bench.peers import data

BENCH = Path(__file__).resolve().parent
#: What both libraries are given: scikit-learn's max_iter and tol, a seed.
COMMON = dict(loss="log_loss", max_iter=1000, tol=1e-3, random_state=0)
SETTINGS = {"early_stopping": dict(early_stopping=True), "average": dict(average=True)}
#: The learners and the settings each runs: each library's defaults, fastprox with
#: scikit-learn's penalty, fastprox with scikit-learn's whole default rule (the module's
#: docstring says how each of its parameters maps: "optimal" onto schedule="inv" with eta0 =
#: 1 / alpha and Bottou's t0, fastprox's default invariant step replaced by the gradient step,
#: and intercept_scaling=0.1 for scikit-learn's decay of its intercept updates on sparse X),
#: and fastprox with an SGDClassifier script's rule that leaves "optimal" for a scalar rate:
#: the same penalty, learning_rate="invscaling" with power_t=0.5 (eta0 / sqrt(t), fastprox's
#: "invsqrt") and the gradient step. One rule each for every set, chosen before measuring
#: any set. The invscaling learner runs early_stopping only: its averaged fits ran 8-79
#: passes at 4-19 times scikit-learn's time a pass (the averaged sums under a scalar schedule
#: with l2), never the fastest accurate fit, and would take the run past 10 minutes.
LIBRARIES = {"fastprox": (ProxClassifier, {}, tuple(SETTINGS)),
             "fastprox l2 1e-4": (ProxClassifier, dict(penalty="l2", alpha=1e-4), tuple(SETTINGS)),
             "fastprox l2 1e-4 optimal": (ProxClassifier, dict(
                 penalty="l2", alpha=1e-4, learning_rate="optimal", step="gradient", intercept_scaling=0.1),
                 tuple(SETTINGS)),
             "fastprox l2 1e-4 invscaling": (ProxClassifier, dict(
                 penalty="l2", alpha=1e-4, learning_rate="invscaling", power_t=0.5, step="gradient"),
                 ("early_stopping",)),
             "sklearn": (SGDClassifier, {}, tuple(SETTINGS))}


def learners():
    """(library, class, its parameters, setting, the setting's parameters) of every fit
    a problem gets, in LIBRARIES' order."""
    return [(library, cls, extra, setting, SETTINGS[setting])
            for library, (cls, extra, settings) in LIBRARIES.items() for setting in settings]


def measure(problem, runs, seed=0):
    """{(library, setting): dict(epochs, cpu, wall (medians, seconds), accuracy)} on one
    problem with random_state ``seed``, the learners interleaved run after run."""
    out = {}
    times = {}
    for _ in range(runs):
        for library, cls, extra, setting, params in learners():
            est = cls(**{**COMMON, "random_state": seed}, **extra, **params)
            cpu, wall = time.process_time(), time.perf_counter()
            est.fit(problem.X_train, problem.y_train)
            cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
            times.setdefault((library, setting), []).append((cpu, wall))
            out[library, setting] = dict(epochs=int(est.n_iter_),
                                         accuracy=est.score(problem.X_test, problem.y_test))
    for key, pairs in times.items():
        out[key]["cpu"] = statistics.median(c for c, _ in pairs)
        out[key]["wall"] = statistics.median(w for _, w in pairs)
    return out


def over_seeds(per_seed):
    """The medians over the seeds of each learner and setting's figures: `measure`'s
    results at each seed -> one result of the same form."""
    return {key: {field: statistics.median(r[key][field] for r in per_seed) for field in per_seed[0][key]}
            for key in per_seed[0]}


def traced(cls, params, X, y):
    """One fit of cls(**params) on (X, y) and the values its stopping rule read after
    each pass (`--trace`): fastprox's from its rule's own reads (`_stopping.StoppingRule`),
    a held-out score or a pass's summed loss (divided here by its rows); scikit-learn's
    held-out scores from its validation callback, its objectives from its verbose
    output. Returns (fitted estimator, values)."""
    values = []
    if cls is ProxClassifier:
        rule, make = fastprox._stopping.StoppingRule.__call__, fastprox._stopping.StoppingRule.__init__

        def init(self, est, n_rows, score=None):
            def scored():
                values.append(score())
                return values[-1]
            make(self, est, n_rows, None if score is None else scored)

        def read(self, index, loss):
            if self.score is None:
                values.append(loss / self.n_rows)
            return rule(self, index, loss)
        with _patched(fastprox._stopping.StoppingRule, __init__=init, __call__=read):
            return cls(**params).fit(X, y), values
    callback = sgd_module._ValidationScoreCallback.__call__

    def scored(self, coef, intercept):
        values.append(callback(self, coef, intercept))
        return values[-1]
    printed = io.StringIO()
    with _patched(sgd_module._ValidationScoreCallback, __call__=scored), contextlib.redirect_stdout(printed):
        est = cls(**params, verbose=1).fit(X, y)
    if not params.get("early_stopping"):
        values = [float(v) for v in re.findall(r"Objective: ([-+\d.e]+)", printed.getvalue())]
    return est, values


@contextlib.contextmanager
def _patched(owner, **attributes):
    """owner's attributes replaced for the block."""
    saved = {name: getattr(owner, name) for name in attributes}
    for name, value in attributes.items():
        setattr(owner, name, value)
    try:
        yield
    finally:
        for name, value in saved.items():
            setattr(owner, name, value)


def waits(values, tol, score):
    """scikit-learn's no-improvement counter after each pass, for the values its rule
    read (scores: higher is better; losses: lower)."""
    best, waited, out = None, 0, []
    for v in values:
        stalled = best is not None and (v < best + tol if score else v > best - tol)
        best = v if best is None else (max(best, v) if score else min(best, v))
        waited = waited + 1 if stalled else 0
        out.append(waited)
    return out


def trace(problem):
    """The `--trace` rows of one problem: per learner and setting, the values read after
    each pass and the counter."""
    rows = []
    for library, cls, extra, setting, params in learners():
        est, values = traced(cls, {**COMMON, **extra, **params}, problem.X_train, problem.y_train)
        score = setting == "early_stopping"
        rows.append([problem.name, library, setting, "held-out score" if score else "mean loss",
                     " ".join(f"{v:.4f}" for v in values),
                     " ".join(map(str, waits(values, COMMON["tol"], score))), int(est.n_iter_)])
    return rows


def rows_of(problem, per_seed):
    """The table's rows of one problem, and its verdict, from `measure`'s results at
    each seed: the rows give the medians over the seeds (`over_seeds`); the verdict
    takes scikit-learn's most accurate fit (the faster of a tie) and the fastest
    fastprox fit at least as accurate (else its most accurate) among those medians,
    the target met if that one is faster (wall time), and counts the seeds at which the
    same judgement on that seed's fits alone meets it, and the noise floor
    (`seed_pairs`)."""
    results = over_seeds(per_seed)
    rows = [[problem.name, library, setting, f"{r['epochs']:g}", f"{r['cpu']:.3f}", f"{r['wall']:.3f}",
             f"{r['accuracy']:.4f}"] for (library, setting), r in results.items()]
    verdict = judged(problem, results)
    return rows, verdict + [f"{sum(judged(problem, r)[-1] == 'met' for r in per_seed)} of {len(per_seed)}",
                            seed_pairs(per_seed)]


def seed_pairs(per_seed):
    """The target's noise floor: over the ordered pairs (j, k) of distinct seeds, how
    often fastprox's fits at seed k meet it against scikit-learn's best at seed j, and
    how often scikit-learn's own fits at seed k do (scikit-learn against itself, another
    shuffle and split): "fastprox / scikit-learn of pairs", "n/a" with one seed. Where
    scikit-learn meets the target against itself at about half its pairs, the two
    libraries' accuracies differ by less than a shuffle moves them."""
    pairs = [(j, k) for j in range(len(per_seed)) for k in range(len(per_seed)) if j != k]
    if not pairs:
        return "n/a"
    counts = [sum(answer(best_of(per_seed[j], "sklearn")[1], per_seed[k], library)[2] for j, k in pairs)
              for library in ("fastprox", "sklearn")]
    return f"{counts[0]} / {counts[1]} of {len(pairs)}"


def best_of(results, library):
    """(name, result) of the library's most accurate fit (the faster of a tie)."""
    return max(((f"{lib}, {setting}", r) for (lib, setting), r in results.items() if lib.startswith(library)),
               key=lambda nr: (nr[1]["accuracy"], -nr[1]["wall"]))


def answer(reference, results, library):
    """(name, result, met) of the library's fastest fit at least as accurate as
    `reference` (else its most accurate), met if one is and it is faster (wall time)."""
    ours = [(f"{lib}, {setting}", r) for (lib, setting), r in results.items() if lib.startswith(library)]
    good = [(n, r) for n, r in ours if r["accuracy"] >= reference["accuracy"]]
    name, best = (min(good, key=lambda nr: nr[1]["wall"]) if good
                  else max(ours, key=lambda nr: nr[1]["accuracy"]))
    return name, best, bool(good) and best["wall"] < reference["wall"]


def judged(problem, results):
    """One verdict row: scikit-learn's best, fastprox's, the speed-ups and whether the
    target is met, from one result per learner and setting."""
    sk_name, sk = best_of(results, "sklearn")
    name, best, met = answer(sk, results, "fastprox")
    return [problem.name, f"{sk['accuracy']:.4f} in {sk['wall']:.3f} s ({sk_name.split(', ')[1]})",
            f"{best['accuracy']:.4f} in {best['wall']:.3f} s ({name})",
            f"{sk['wall'] / best['wall']:.2f}x", f"{sk['cpu'] / best['cpu']:.2f}x",
            "met" if met else "not met"]


def problems(args):
    """The sets: the peer suite's (--quick: one small synthetic set)."""
    if args.quick:
        return [data.text_like(2_000, 5_000, seed=1)]
    return suite_sets(args.data)


def report(args, table, verdicts, load, traces=()):
    """The Markdown report."""
    return "\n".join([
        "# Stopping and averaging: fastprox against SGDClassifier", "",
        f"`python -m bench.early_stopping --runs {args.runs}"
        + (f" --seeds {args.seeds}" if args.seeds > 1 else "") + (" --quick" if args.quick else "")
        + (" --trace" if args.trace else "") + "`", "",
        describe_machine(), describe_lanes(), f"- Load average (1 min) at the start and the end: {load}", "",
        f"Every fit: `{', '.join(f'{k}={v!r}' for k, v in COMMON.items())}`, with `early_stopping=True` "
        "or `average=True`, each library's defaults otherwise (fastprox: normalized schedule, invariant "
        "step, no penalty; scikit-learn: 'optimal' rate, l2 with alpha 1e-4); `fastprox l2 1e-4` adds "
        "scikit-learn's penalty, `penalty='l2', alpha=1e-4`, to fastprox's defaults; `fastprox l2 1e-4 "
        "optimal` ports SGDClassifier's whole default rule: that penalty, `learning_rate='optimal'` "
        "(scikit-learn's 1 / (alpha (t + t0)) with Bottou's t0: fastprox's `inv` with eta0 = 1 / alpha "
        "and that t0), SGD's plain `step='gradient'` and, every set being sparse, `intercept_scaling=0.1` "
        "(scikit-learn multiplies its intercept updates by 0.01 on sparse X: under that rate and step, "
        "the intercept as the weight of a constant feature of value 0.1); `fastprox l2 1e-4 invscaling` "
        "(early_stopping only) ports a script's rule with invscaling's scalar rate instead: that penalty, "
        "`learning_rate='invscaling', power_t=0.5` (fastprox's `invsqrt`, eta0 / sqrt(t), eta0 "
        "fastprox's 'auto') and `step='gradient'`. One setting each for every set. Epochs: n_iter_; "
        f"CPU and wall seconds: the medians of {args.runs} interleaved fits; accuracy: on the test rows, "
        "of the same fits" + (
            "." if args.seeds == 1 else
            f"; each fit repeated with random_state 0 .. {args.seeds - 1}, and every figure (epochs too) "
            "the median over those seeds") + ".", "",
        md_table(["set", "library", "setting", "epochs", "CPU s", "wall s", "test accuracy"], table), "",
        "## Target: a fastprox fit as accurate as scikit-learn's best, in less time", "",
        "scikit-learn's best: its more accurate setting; fastprox's: its fastest fit at least as "
        "accurate (else its most accurate). Speed-up: scikit-learn's seconds over fastprox's. Seeds: "
        "the seeds at which that judgement, on the seed's own fits, meets the target. Seed pairs, the "
        "target's noise floor: over the ordered pairs (j, k) of distinct seeds, how often fastprox's fits "
        "at seed k meet the target against scikit-learn's best at seed j, and how often scikit-learn's "
        "own fits at seed k do (scikit-learn against itself: another shuffle and, under early_stopping, "
        "another validation split).", "",
        md_table(["set", "scikit-learn's best", "fastprox's", "wall speed-up", "CPU speed-up", "target", "seeds",
                  "seed pairs: fastprox / scikit-learn"], verdicts),
        "",
    ] + ([] if not traces else [
        "## What each stopping rule read, pass by pass (`--trace`)", "",
        "One more fit of each, untimed. The values: the held-out score (early_stopping), else the "
        "mean training loss (fastprox: each row's loss before its step; scikit-learn: its objective, "
        "loss plus penalty, from its verbose output); scikit-learn's held-out scores are those its rule "
        "read, which under log_loss are not the accuracy (its validation callback, scikit-learn "
        f"{sklearn.__version__}, scores its held-out labels encoded as 0 and 1 against the classes -1 "
        "and 1: the share of held-out rows both positive and predicted positive); waited: scikit-learn's "
        "no-improvement counter "
        f"over those values (tol={COMMON['tol']}); a fit stops when it reaches n_iter_no_change (5).", "",
        md_table(["set", "library", "setting", "read", "after each pass", "waited", "epochs"], traces), "",
    ]))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3, help="timed fits per learner (median; default 3)")
    parser.add_argument("--seeds", type=int, default=1,
                        help="random_states 0 .. N-1, each fit at each (medians over the seeds; default 1)")
    parser.add_argument("--data", default="../shared/data", help="folder of the LIBSVM sets")
    parser.add_argument("--quick", action="store_true", help="one small synthetic set, for a smoke test")
    parser.add_argument("--trace", action="store_true",
                        help="add each rule's values pass by pass (one more untimed fit of each)")
    parser.add_argument("--out", default=str(BENCH / "results" / "early_stopping.md"))
    args = parser.parse_args(argv)
    for name in ("runs", "seeds"):
        if getattr(args, name) < 1:
            parser.error(f"--{name} must be at least 1, got {getattr(args, name)}")
    warnings.simplefilter("ignore", ConvergenceWarning)
    table, verdicts, traces = [], [], []
    load = [f"{os.getloadavg()[0]:.1f}"]
    for problem in problems(args):
        try:
            rows, verdict = rows_of(problem, [measure(problem, args.runs, seed) for seed in range(args.seeds)])
            if args.trace:
                traces += trace(problem)
        finally:
            problem.close()
        table += rows
        verdicts.append(verdict)
        print(*rows, verdict, sep="\n", flush=True)
    load.append(f"{os.getloadavg()[0]:.1f}")
    text = report(args, table, verdicts, ", ".join(load), traces)
    Path(args.out).write_text(text)
    print(text)
    return text


if __name__ == "__main__":
    main()
