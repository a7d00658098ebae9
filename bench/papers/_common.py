"""What the paper experiments share: options, data, the batch solver, counting, reporting.

Kept here so that the three experiment modules only say what is specific to
their paper.
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


def add_common_arguments(parser, quick_help):
    """--quick, --out-dir, --seed and --data-dir, the options every experiment takes."""
    parser.add_argument("--quick", action="store_true", help=quick_help)
    parser.add_argument("--out-dir", default=os.path.join("bench", "papers"),
                        help="where NAME.md and the PNG plots go (default: bench/papers)")
    parser.add_argument("--seed", type=int, default=0, help="seed of every random draw (default 0)")
    parser.add_argument("--data-dir", default=str(DATA_DIR),
                        help=f"the LIBSVM data sets (default: {DATA_DIR})")
    return parser


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


def verdict(holds, claim, evidence):
    """One line: the claim, holds / does not hold / cannot be checked here, and why.

    ``holds`` is True, False or None (cannot be checked here).
    """
    word = {True: "**holds**", False: "**does not hold**", None: "**cannot be checked here**"}[holds]
    return f"- {claim}: {word}. {evidence}"


def pyplot():
    """matplotlib's pyplot on the file-only Agg backend."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def machine():
    """A short description of where the run happened."""
    return f"{machine_summary()}, Python {platform.python_version()}"


def write_report(out_dir, name, title, sections, started, args):
    """Write out_dir/name.md: title, how it was run (mode, seed, runtime), then the sections."""
    os.makedirs(out_dir, exist_ok=True)
    mode = "quick (--quick)" if args.quick else "full"
    runtime = time.perf_counter() - started
    head = [f"# {title}", "",
            f"Run: `python -m bench.papers.{name}{' --quick' if args.quick else ''} "
            f"--seed {args.seed}` ({mode}); runtime {runtime:.0f} s on {machine()}, "
            f"{time.strftime('%Y-%m-%d')}.", ""]
    path = os.path.join(out_dir, f"{name}.md")
    with open(path, "w") as f:
        f.write("\n".join(head + sections).rstrip() + "\n")
    print(f"wrote {path} ({runtime:.0f} s)")
    return path
