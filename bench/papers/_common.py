"""What the paper experiments share: options, data, the batch solver, counting, reporting.

Kept here so that the experiment modules only say what is specific to their
paper. The rule every verdict follows is ``RULE`` (below, and in README.md).
"""
import argparse
import os
import platform
import sys
import time
from pathlib import Path

import numpy as np

from fastprox import load_libsvm
from bench.machine import machine_summary

# The data sets: $FASTPROX_DATA, else shared/data beside the repository
# (bench/papers/_common.py -> bench -> the repository -> its parent).
DATA_DIR = Path(os.environ.get("FASTPROX_DATA", Path(__file__).resolve().parents[3] / "shared" / "data"))
# Full runs write here (the committed reports); --quick runs write to QUICK_DIR, never over them.
FULL_DIR = os.path.join("bench", "papers")
QUICK_DIR = os.path.join("bench", "papers", "quick")


def add_common_arguments(parser, quick_help, data_dir=DATA_DIR, data_what="the LIBSVM data sets"):
    """--quick, --out-dir, --seed and --data-dir (by default `data_dir`, holding
    `data_what`), the options every experiment takes."""
    parser.add_argument("--quick", action="store_true", help=quick_help)
    parser.add_argument("--out-dir", default=None,
                        help=f"where NAME.md and the PNG plots go (default: {FULL_DIR}, "
                             f"with --quick {QUICK_DIR})")
    parser.add_argument("--seed", type=int, default=0, help="seed of every random draw (default 0)")
    parser.add_argument("--data-dir", default=str(data_dir), help=f"{data_what} (default: {data_dir})")
    return parser


def start(args):
    """The run's start time; resolves --out-dir (full runs: FULL_DIR, --quick: QUICK_DIR)."""
    if args.out_dir is None:
        args.out_dir = QUICK_DIR if args.quick else FULL_DIR
    os.makedirs(args.out_dir, exist_ok=True)
    return time.perf_counter()


def main(doc, add_arguments, run):
    """``python -m ...``: parse the module's options and exit with run()'s status."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    sys.exit(run(add_arguments(parser).parse_args()))


def load(data_dir, relative, n_features=None):
    """(X, y) of a LIBSVM file under data_dir; a clear error when it is missing."""
    path = Path(data_dir) / relative
    if not path.is_file():
        raise FileNotFoundError(f"{path} not found: the data sets are described in "
                                f"{DATA_DIR / 'SOURCES.md'} (pass --data-dir to point elsewhere)")
    return load_libsvm(str(path), n_features=n_features)


def nnz(w, tol=0.0):
    """Entries of w with |w| > tol (tol = 0: exact non-zeros)."""
    return int(np.count_nonzero(np.abs(np.asarray(w)) > tol))


def error_rate(w, b, X, y):
    """Share of rows whose margin sign differs from y in {-1, +1} (margin 0 counts as -1)."""
    margins = np.asarray(X @ np.asarray(w).ravel()).ravel() + b
    return float(np.mean(np.where(margins > 0, 1.0, -1.0) != y))


def liblinear_fit(X, y, options):
    """(w, b) of LIBLINEAR (``liblinear-official``) on labels y in {-1, +1}.

    ``options`` is a LIBLINEAR option string (e.g. ``"-s 6 -c 0.1 -B 1 -R"``).
    LIBLINEAR orients w towards the first label it met; w and b are flipped
    if needed so that a positive margin always means +1.
    """
    from liblinear.liblinearutil import train

    model = train(np.asarray(y, dtype=float), X, options + " -q")
    w, b = model.get_decfun()
    w, b = np.asarray(w, dtype=float), float(b)
    if model.get_labels()[0] != 1:
        w, b = -w, -b
    return w, b


def mean_std(values):
    """'mean ± std' of a sequence (population std, as error bars)."""
    values = np.asarray(values, dtype=float)
    return float(values.mean()), float(values.std())


def md_table(header, rows):
    """A Markdown table from a header list and rows of already formatted cells."""
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


# ---------------------------------------------------------------- the rule for verdicts
SPREAD_FACTOR = 1.0
RULE = (
    "**Rule for every verdict** (`bench/papers/_common.py`, the same in every report). Each claim "
    "is turned into a test fixed in the code before the run, and the test is printed with the "
    "verdict. An ordering (\"A is lower than B\") **holds** only if A's mean is below B's by more "
    "than the margin m = max(floor, s), where s is the larger of the two run-to-run standard "
    "deviations (over seeds, orders, shuffles or data draws, as the report says) and the floor "
    "is the report's smallest difference that counts (used alone when a report has one run). "
    "A difference within m is a tie: it does not make an ordering hold, and it makes a "
    "\"comparable\" claim hold. A claim about every cell (every lambda, set or level) must pass in "
    "every cell that was measured. A thresholded claim (\"within a factor 2\") holds when the "
    "threshold is met. **cannot be checked here** means the data or the setting is missing. "
    "Verdicts of a `--quick` run are marked *(quick)*, are written to `bench/papers/quick/`, never "
    "over the full report, and list every verdict that differs from the full report's.")


def margin(*spreads, floor=0.0):
    """The smallest difference that counts: SPREAD_FACTOR x the largest spread, at least floor."""
    return max([floor] + [SPREAD_FACTOR * float(s) for s in spreads])


def lower(a, b, spread_a=0.0, spread_b=0.0, floor=0.0):
    """Whether a is below b by more than the margin (RULE): an ordering that holds."""
    return bool(b - a > margin(spread_a, spread_b, floor=floor))


def tied(a, b, spread_a=0.0, spread_b=0.0, floor=0.0):
    """Whether a and b differ by at most the margin (RULE): a comparability that holds."""
    return bool(abs(a - b) <= margin(spread_a, spread_b, floor=floor))


WORDS = {True: "**holds**", False: "**does not hold**", None: "**cannot be checked here**"}


def verdict(holds, claim, evidence):
    """One line: the claim, holds / does not hold / cannot be checked here, and why.

    ``holds`` is True, False or None (cannot be checked here). A quick run's
    words get "(quick)" in write_report.
    """
    return f"- {claim}: {WORDS[holds]}. {evidence}"


def verdict_words(text):
    """claim -> verdict word of every verdict line of a report's text."""
    found = {}
    for line in text.splitlines():
        for word in WORDS.values():
            tag = f": {word[:-2]}"          # also matches the quick form "**holds (quick)**"
            if line.startswith("- ") and tag in line:
                found[line[2:line.index(tag)]] = word.strip("*")
                break
    return found


def quick_differences(text, full_path):
    """Lines listing the verdicts of text that differ from the full report at full_path."""
    if not os.path.isfile(full_path):
        return [f"No full report at `{full_path}` to compare with."]
    with open(full_path) as f:
        full = verdict_words(f.read())
    quick = verdict_words(text)
    differ = [f"- {claim}: quick *{word}*, full run *{full[claim]}*"
              for claim, word in quick.items() if claim in full and full[claim] != word]
    missing = [claim for claim in quick if claim not in full]
    lines = [f"Compared with the full report `{full_path}` (which decides): "
             + (f"{len(differ)} verdict(s) differ:" if differ else "no verdict differs.")] + differ
    if missing:
        lines.append(f"({len(missing)} quick claim(s) are worded differently there and were not compared.)")
    return lines


def pyplot():
    """matplotlib's pyplot on the file-only Agg backend."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def save(fig, out_dir, filename, dpi=100):
    """Lay out, write out_dir/filename, close the figure; the path."""
    fig.tight_layout()
    path = os.path.join(out_dir, filename)
    fig.savefig(path, dpi=dpi)
    import matplotlib.pyplot as plt
    plt.close(fig)
    return path


def machine():
    """A short description of where the run happened."""
    return f"{machine_summary()}, Python {platform.python_version()}"


def write_report(out_dir, name, title, sections, started, args, report=None, options=""):
    """Write out_dir/REPORT.md (``report``, by default the module's ``name``): title, how
    it was run (mode, seed, the run's further ``options`` as typed, runtime), then the
    sections.

    A --quick run marks its verdicts "(quick)" and lists those that differ from the
    full report (FULL_DIR/REPORT.md)."""
    report = report or name
    os.makedirs(out_dir, exist_ok=True)
    mode = "quick (--quick)" if args.quick else "full"
    runtime = time.perf_counter() - started
    head = [f"# {title}", "",
            f"Run: `python -m bench.papers.{name}{' --quick' if args.quick else ''} "
            f"--seed {args.seed}{' ' + options if options else ''}` ({mode}); runtime {runtime:.0f} s on {machine()}, "
            f"{time.strftime('%Y-%m-%d')}.", ""]
    body = "\n".join(sections)
    if args.quick:
        for word in WORDS.values():
            body = body.replace(f": {word}.", f": {word[:-2]} (quick)**.")
        head += ["**Quick run**: reduced sizes, verdicts marked *(quick)*; the full run's report "
                 f"`{os.path.join(FULL_DIR, report + '.md')}` decides.", "",
                 *quick_differences(body, os.path.join(FULL_DIR, f"{report}.md")), ""]
    path = os.path.join(out_dir, f"{report}.md")
    with open(path, "w") as f:
        f.write("\n".join(head + [body]).rstrip() + "\n")
    print(f"wrote {path} ({runtime:.0f} s)")
    return path
