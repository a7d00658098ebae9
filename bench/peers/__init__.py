"""Peer benchmark: fastprox vs scikit-learn, Vowpal Wabbit, river, lightning and LIBLINEAR.

``python -m bench.peers [--quick] [--data DIR] [--out FILE.md] [--plots PREFIX]``
trains every fastprox rule and every installed peer on each problem: one
pass from memory (time, non-zeros/s, training objective, test accuracy and
log-loss, non-zero weights), one pass from the training file, and several
passes against LIBLINEAR's optimum of the same objective (mean log loss +
alpha ||w||_1). Peers that are not installed are named and skipped. Problems:
the shipped synthetic text-like set, and the LIBSVM sets of ``data.REAL_SETS``
found under ``--data``. ``python -m bench.peers.run`` adds the Zipf
problems of ``bench/throughput.py`` and writes ``bench/results/peers.md``.

Modules: ``base`` (the peer interface), one adapter per library
(``fastprox_rules``, ``sklearn_sgd``, ``vw``, ``river_peers``,
``lightning_peer``, ``liblinear_ref``), ``registry`` (lazy imports),
``data``, ``metrics``, ``suite`` (the measurements), ``report`` and ``plots``.
"""
import json
import os
import platform
import time

from . import data, plots, registry, report, suite

LIBRARIES = tuple(registry.PEERS)


def add_arguments(parser):
    parser.add_argument("--quick", action="store_true",
                        help="a small run for a first look: fewer rows, runs and passes")
    parser.add_argument("--runs", type=int, help="timed runs per learner (median; default 5, quick 2)")
    parser.add_argument("--file-runs", type=int, help="timed runs from the file (default 3, quick 1)")
    parser.add_argument("--passes", type=int, help="passes of the objective experiment, 0 to skip "
                        "(default 10, quick 3)")
    parser.add_argument("--alpha", type=float, help="l1 weight per example (default 1/n: the objective "
                        "of LIBLINEAR's default C = 1)")
    parser.add_argument("--rows", type=int, help="rows of the synthetic set (default 100,000, quick 20,000)")
    parser.add_argument("--river-rows", type=int, help="rows river trains on (default 20,000, quick 2,000)")
    parser.add_argument("--data", metavar="DIR", help="folder holding the LIBSVM sets (a9a/a9a, ...)")
    parser.add_argument("--sets", nargs="+", metavar="NAME", choices=list(data.REAL_SETS),
                        help=f"real sets to run (default: all found): {', '.join(data.REAL_SETS)}")
    parser.add_argument("--peers", nargs="+", choices=LIBRARIES, default=list(LIBRARIES),
                        help="libraries to run (default: all installed)")
    parser.add_argument("--out", metavar="FILE.md", help="write the report to this Markdown file")
    parser.add_argument("--plots", metavar="PREFIX", help="write PREFIX_throughput.png, "
                        "PREFIX_accuracy_time.png and PREFIX_objective_passes.png")
    parser.add_argument("--json", metavar="FILE.json", help="write the raw measurements as JSON")
    parser.add_argument("--from-json", metavar="FILE.json",
                        help="measure nothing: write the report and plots of an earlier --json run")
    return parser


def settings(args):
    """The numbers of a run: explicit options, else the quick or the full defaults."""
    quick = args.quick

    def pick(value, full, small):
        return value if value is not None else (small if quick else full)

    return dict(runs=pick(args.runs, 5, 2), file_runs=pick(args.file_runs, 3, 1),
                passes=pick(args.passes, 10, 3), rows=pick(args.rows, 100_000, 20_000),
                river_rows=pick(args.river_rows, 20_000, 2_000))


def execute(problems, args, setup, log=print):
    """Measure every problem (or read an earlier run's --from-json), write what
    args ask for; the Markdown report. `setup`: Markdown lines on how the run
    was made and on what machine."""
    if args.from_json:
        with open(args.from_json) as f:
            saved = json.load(f)
        for problem in problems:
            problem.close()
        return _write(args, saved["results"], saved["settings"], saved["missing"], saved["setup"],
                      saved["seconds"], log)
    s = settings(args)
    _, missing = registry.learners(1.0, s["river_rows"], args.peers)
    _, missing_reference = registry.reference(1.0)
    if missing_reference:
        missing["liblinear"] = missing_reference
    for library, reason in missing.items():
        log(f"skipped {library}: {reason}")
    results = []
    started = time.perf_counter()
    for problem in problems:
        alpha = args.alpha or 1.0 / problem.X_train.shape[0]
        peers, _ = registry.learners(alpha, s["river_rows"], args.peers)
        reference, _ = registry.reference(alpha)
        try:
            results.append(suite.measure(problem, peers, reference, alpha, s["runs"],
                                         s["file_runs"], s["passes"], log))
        finally:
            problem.close()
    seconds = time.perf_counter() - started
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"settings": s, "missing": missing, "setup": setup, "seconds": seconds,
                       "results": results}, f, indent=1)
    return _write(args, results, s, missing, setup, seconds, log)


def _write(args, results, s, missing, setup, seconds, log):
    text = _markdown(results, s, missing, setup, seconds)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text)
    if args.plots:
        for path in plots.write_all(results, args.plots):
            log(f"wrote {path}")
    return text


def _markdown(results, s, missing, setup, seconds):
    lines = ["# Peer benchmark: fastprox vs scikit-learn, Vowpal Wabbit, river, lightning, LIBLINEAR", "",
             *setup, "",
             "Objective: mean log loss + alpha ||w||_1, intercept unpenalized, alpha given per problem "
             "(default 1/n, LIBLINEAR's default C = 1); every learner but the defaults rows uses it. "
             f"Every learner makes unshuffled passes over the same once-shuffled training rows. "
             f"Times are medians of {s['runs']} runs (file: {s['file_runs']}), learners interleaved run by "
             f"run; ratios are between learners of the same run. The passes experiment runs {s['passes']} "
             f"passes; river trains on its first {s['river_rows']:,} rows. Suite time: {seconds:.0f} s.", "",
             f"- {report.versions()}"]
    lines += [f"- not run: {library} ({reason})" for library, reason in missing.items()]
    lines += ["", "## Targets of issue 6", "", report.targets(results), "",
              "## One-pass test accuracy", "", report.accuracy_summary(results), "", "## Problems", ""]
    lines += [report.problem_section(r, s["passes"]) for r in results]
    return "\n".join(lines)


def run(args):
    """`python -m bench.peers`: the shipped synthetic set and the real sets under --data."""
    s = settings(args)
    problems = []
    if not args.from_json:
        problems = [data.text_like(s["rows"], 1 << 20)]
        if args.data:
            problems += data.real_sets(args.data, args.sets)
    machine = f"- Machine: {platform.platform()}, {os.cpu_count()} logical CPUs"
    print(execute(problems, args, ["Run by `python -m bench.peers`.", "", machine]))
    return 0
