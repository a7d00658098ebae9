"""FOBOS Table 1 (Duchi & Singer, JMLR 2009, Sec. 7.5): one sparse update, two ways.

A dense ``w`` with ``||w||_1 <= b`` receives a random ``g`` with ``s``
non-zeros. Either ``w + g`` is projected back onto the l1-ball with
``fastprox.projection.SparseL1Ball`` (Duchi, Shalev-Shwartz, Singer & Chandra
2008, Sec. 5: O(s log d)), or the lazy FOBOS l1 step of Sec. 6 is applied with
``bench.lazy_l1.LazyL1`` (O(s): only the s touched coordinates, each
caught up by ``Lambda_now - Lambda_stamp``). Only the update call is timed;
the table reports seconds per update averaged over the experiments, in
hundredths of a second as the paper does.

Choices the paper leaves open, and the ones made here:

* ``b = 1`` (the costs do not depend on the scale), and ``w`` lies on the
  sphere ``||w||_1 = b``, so that every update really projects: fair-coin
  signs, magnitudes i.i.d. Uniform(0, 1] rescaled to sum to ``b``.
* ``g``: ``s`` distinct coordinates drawn uniformly without replacement,
  values i.i.d. N(0, (b/d)^2), the typical size of an entry of ``w``.
* lambda is matched exactly, not approximately: the projection of ``w + g``
  is the soft-threshold of ``w + g`` by the shift ``theta`` the projection
  found, so the FOBOS step with ``eta = 1``, gradient ``-g`` and
  ``lambda = theta`` of the same experiment gives the same vector, hence the
  same sparsity. The projection runs first, so ``theta`` is known before the
  FOBOS step is timed; the first experiment of every cell checks that both
  updates give the same ``w`` (RuntimeError otherwise).
* The FOBOS state is lazy as in a running learner: ``Lambda_now = b/d`` and
  every coordinate owes a catch-up ``Uniform(0, Lambda_now)``, its stored
  value enlarged by that debt so that it stands for the same ``w``. The
  catch-up in the timed step is therefore real work.
* 100 independent experiments per cell (``--repeats``; ``--quick``: 10): each
  draws its own ``w``, builds the tree and the lazy state (not timed, the
  tree costs O(d log d)), and serves the three values of ``s``, each on a
  fresh copy of that state.
* Cold cache: before each timed update a 64 MiB buffer (twice this
  machine's L3) is written, as a learner's other work would evict ``w``
  between updates. The paper says nothing on this; warm caches would favour
  the smaller ``d``.
* The timer (``time.perf_counter``) wraps one Python call each, argument
  checks included (microseconds, against milliseconds of work).
"""
import argparse
import json
import platform
import sys
import time

import numpy as np

from bench.lazy_l1 import LazyL1
from fastprox.projection import SparseL1Ball

DIMENSIONS = (50_000, 200_000, 800_000, 3_200_000, 6_400_000)
SPARSITIES = (5000, 10000, 20000)
RADIUS = 1.0

# Table 1 of the paper, hundredths of a second: (d, s) -> (Project, FOBOS).
# The OCR'd text (papers/000_*.txt) reads cleanly here: every number has two
# decimals and each row has six; none looks damaged.
PAPER = {
    (50_000, 5000): (0.72, 0.07), (50_000, 10000): (2.12, 0.12), (50_000, 20000): (4.53, 0.23),
    (200_000, 5000): (0.80, 0.10), (200_000, 10000): (2.06, 0.16), (200_000, 20000): (5.09, 0.34),
    (800_000, 5000): (0.86, 0.15), (800_000, 10000): (2.22, 0.17), (800_000, 20000): (5.34, 0.39),
    (3_200_000, 5000): (1.07, 0.13), (3_200_000, 10000): (2.75, 0.16), (3_200_000, 20000): (6.31, 0.52),
    (6_400_000, 5000): (1.20, 0.10), (6_400_000, 10000): (2.83, 0.29), (6_400_000, 20000): (6.62, 0.48),
}

_EVICT = np.zeros(64 * 2**20 // 8)


def _evict_cache():
    """Write a buffer larger than the last-level cache."""
    np.add(_EVICT, 1.0, out=_EVICT)


def _timed(call, *args):
    """Seconds taken by ``call(*args)``, started with a cold cache."""
    _evict_cache()
    start = time.perf_counter()
    call(*args)
    return time.perf_counter() - start


def _experiment_state(d, rng):
    """A dense w on the sphere ||w||_1 = b, as a SparseL1Ball and a LazyL1."""
    w = rng.uniform(np.nextafter(0.0, 1.0), 1.0, d)
    w *= RADIUS / w.sum()
    debt_scale = RADIUS / d
    debt = rng.uniform(0.0, debt_scale, d)
    signs = rng.choice((-1.0, 1.0), d)
    ball = SparseL1Ball(signs * w, RADIUS)
    lazy = LazyL1(signs * (w + debt), debt_scale - debt, debt_scale)
    return ball, lazy


def measure(repeats, seed, log=print):
    """Time both updates on the whole grid; a list of per-cell dicts."""
    rng = np.random.default_rng(seed)
    totals = {(d, s): [0.0, 0.0] for d in DIMENSIONS for s in SPARSITIES}
    for d in DIMENSIONS:
        started = time.perf_counter()
        for r in range(repeats):
            base_ball, base_lazy = _experiment_state(d, rng)
            for s in SPARSITIES:
                indices = rng.choice(d, s, replace=False).astype(np.intp)
                g = rng.normal(0.0, RADIUS / d, s)
                minus_g = -g
                ball, lazy = base_ball.copy(), base_lazy.copy()
                totals[d, s][0] += _timed(ball.add, indices, g)
                shift = ball.theta - base_ball.theta
                totals[d, s][1] += _timed(lazy.step, indices, minus_g, 1.0, shift)
                if r == 0:
                    gap = np.abs(ball.to_dense() - lazy.to_dense()).max()
                    if gap > 1e-12 * RADIUS:
                        raise RuntimeError(f"d={d}, s={s}: projection and FOBOS step differ by {gap:.3g}")
        log(f"  d={d:>9,}: {repeats} experiments in {time.perf_counter() - started:.1f} s")
    return [{"d": d, "s": s, "project_s": p / repeats, "fobos_s": f / repeats}
            for (d, s), (p, f) in totals.items()]


def _exponent_label(d):
    """6400000 -> '6.4·10^6', as the paper's first column."""
    exponent = int(np.floor(np.log10(d)))
    return f"{d / 10**exponent:g}·10^{exponent}"


def format_table(cells):
    """Markdown, the paper's layout: each cell 'measured (paper)' in 1/100 s."""
    by_key = {(c["d"], c["s"]): c for c in cells}
    head = "| Dimension d | " + " | ".join(
        f"s={s} Project | s={s} FOBOS | speedup" for s in SPARSITIES) + " |"
    lines = [head, "|" + "---|" * (1 + 3 * len(SPARSITIES))]
    for d in DIMENSIONS:
        row = [_exponent_label(d)]
        for s in SPARSITIES:
            cell, (paper_p, paper_f) = by_key[d, s], PAPER[d, s]
            project, fobos = 100 * cell["project_s"], 100 * cell["fobos_s"]
            row += [f"{project:.3f} ({paper_p:.2f})", f"{fobos:.3f} ({paper_f:.2f})",
                    f"{project / fobos:.1f}x ({paper_p / paper_f:.1f}x)"]
        lines.append("| " + " | ".join(row) + " |")
    lines.append("")
    lines.append("Hundredths of a second per update: measured (paper). "
                 "Speedup = Project / FOBOS: measured (paper).")
    return "\n".join(lines)


def plot(cells, path):
    """Both columns against d (log-log), measured and the paper's, one panel per s."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(SPARSITIES), figsize=(12, 4), sharey=True)
    for ax, s in zip(axes, SPARSITIES):
        mine = sorted((c["d"], c["project_s"], c["fobos_s"]) for c in cells if c["s"] == s)
        d = [m[0] for m in mine]
        ax.plot(d, [100 * m[1] for m in mine], "o-", color="C3", label="Project (measured)")
        ax.plot(d, [100 * m[2] for m in mine], "o-", color="C0", label="FOBOS (measured)")
        ax.plot(d, [PAPER[x, s][0] for x in d], "s--", color="C3", alpha=0.5, label="Project (paper)")
        ax.plot(d, [PAPER[x, s][1] for x in d], "s--", color="C0", alpha=0.5, label="FOBOS (paper)")
        ax.set(xscale="log", yscale="log", title=f"s = {s}", xlabel="dimension d")
        ax.grid(True, which="both", alpha=0.3)
    axes[0].set_ylabel("hundredths of a second per update")
    axes[0].legend(fontsize=8)
    fig.suptitle("FOBOS Table 1: l1-ball projection (SparseL1Ball) vs lazy FOBOS l1 step")
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def add_arguments(parser):
    """The options of ``python -m bench.table1``."""
    parser.add_argument("--quick", action="store_true",
                        help="10 experiments per cell instead of 100 (same grid; under 3 minutes)")
    parser.add_argument("--repeats", type=int, default=None,
                        help="experiments per cell (default 100, or 10 with --quick)")
    parser.add_argument("--seed", type=int, default=0, help="seed of every random draw")
    parser.add_argument("--out", metavar="FILE.md", help="also write the table to this Markdown file")
    parser.add_argument("--json", metavar="FILE.json", help="write the per-cell seconds to this JSON file")
    parser.add_argument("--plot", metavar="FILE.png", help="plot both columns against d (needs matplotlib)")
    parser.add_argument("--from-json", metavar="FILE.json",
                        help="do not measure: format (and plot) the cells of an earlier --json run")
    return parser


def run(args):
    """Measure, print the table, write the requested files; the exit status."""
    repeats = args.repeats if args.repeats is not None else (10 if args.quick else 100)
    if repeats < 1:
        raise ValueError(f"--repeats must be at least 1, got {repeats}")
    started = time.perf_counter()
    if args.from_json:
        with open(args.from_json) as f:
            cells = json.load(f)["cells"]
    else:
        print(f"FOBOS Table 1: {repeats} experiments per cell, seed {args.seed}, "
              f"{platform.processor() or platform.machine()}")
        cells = measure(repeats, args.seed)
    table = format_table(cells)
    print(table)
    if not args.from_json:
        print(f"total {time.perf_counter() - started:.1f} s")
    if args.out:
        with open(args.out, "w") as f:
            f.write(table + "\n")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"repeats": repeats, "seed": args.seed, "cells": cells}, f, indent=1)
    if args.plot:
        plot(cells, args.plot)
    return 0


if __name__ == "__main__":
    sys.exit(run(add_arguments(argparse.ArgumentParser(prog="python -m bench.table1",
                                                       description=__doc__.splitlines()[0])).parse_args()))
