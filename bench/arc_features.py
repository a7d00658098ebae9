"""Arc feature speed: an epoch of every candidate arc of UD English EWT's training
sentences, generated, and generated then scored with a dense weight vector.

Reads and encodes the treebank once (`ArcFeatures.corpus`), then for each ``--bits``
times, as the median of ``--runs`` passes in this process, (1) generation: every
sentence's rows made by `ArcKernel.fill` (features kept in the kernel's buffers, as
the parser's loop reads them), (2) generation and scoring: `ArcKernel.scores`, the
same rows then every arc's score ``<w, phi_hm>`` under random float64 weights of
``n_features``. Reports features per arc, nanoseconds per feature and per arc,
process CPU time beside wall time (other jobs share the cores), and the buffers'
size after the pass. Writes ``bench/results/arc_features.md``.

    python -m bench.arc_features [--runs 3] [--bits 20 22 24]
"""
import argparse
import os
import statistics
import time
from pathlib import Path

import numpy as np

from bench.machine import describe_machine
from fastprox.structured.arcs import TEMPLATES, ArcFeatures
from fastprox.structured.io import read_conllu

ROOT = Path(__file__).resolve().parent
TRAIN = ROOT.parent.parent / "shared" / "structured" / "ud_english_ewt" / "en_ewt-ud-train.conllu"


def one_pass(kernel, pieces, w=None):
    """(wall, cpu) seconds of one pass; the stored features counted."""
    wall, cpu, nnz = time.perf_counter(), time.process_time(), 0
    for tokens in pieces:
        if w is None:
            nnz += kernel.fill(tokens)
        else:
            kernel.scores(tokens, w)
    return time.perf_counter() - wall, time.process_time() - cpu, nnz


def measure(bits, pieces, runs):
    fx = ArcFeatures(bits=bits)
    w = np.random.default_rng(0).standard_normal(fx.n_features)
    out = {"bits": bits, "n_features": fx.n_features, "MB": w.nbytes / 2**20}
    for name, weights in (("gen", None), ("score", w)):
        passes = [one_pass(fx.kernel, pieces, weights) for _ in range(runs)]
        out[name] = (statistics.median(p[0] for p in passes), statistics.median(p[1] for p in passes))
        out.setdefault("nnz", passes[0][2])
    out["capacity"] = fx.kernel.capacity
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--bits", type=int, nargs="+", default=[20, 22, 24])
    parser.add_argument("--out", default=str(ROOT / "results" / "arc_features.md"))
    args = parser.parse_args(argv)
    load = os.getloadavg()[0]
    start = time.perf_counter()
    tokens, starts = ArcFeatures().corpus(read_conllu(TRAIN, heads=True))
    encode = time.perf_counter() - start
    pieces = [tokens[starts[s]:starts[s + 1]] for s in range(len(starts) - 1)]
    lengths = np.diff(starts) - 3
    arcs = int(((lengths + 1) * lengths).sum())
    results = [measure(bits, pieces, args.runs) for bits in args.bits]
    nnz = results[0]["nnz"]
    lines = [
        "# Arc features: an epoch of UD English EWT train",
        "",
        describe_machine(),
        f"- Load average at start: {load:.1f} (other jobs share the 2 cores: wall times are noisy, "
        f"CPU times steadier). Medians of {args.runs} passes in one process. "
        f"Made by `python -m bench.arc_features`.",
        f"- Data: {len(pieces):,} sentences, {int(lengths.sum()):,} words, {arcs:,} candidate arcs "
        f"((n + 1) * n per sentence of n words: the arcs h -> m, h = 0..n, m = 1..n, h != m; "
        f"the mean n^2 exceeds the squared mean length).",
        f"- Templates: all {len(TEMPLATES)} (`TEMPLATES`): {nnz:,} stored features an epoch, "
        f"{nnz / arcs:.1f} a candidate arc on average ({len(TEMPLATES) - 2} every arc has, two "
        f"for each distinct POS between head and modifier).",
        f"- Reading and encoding the treebank once (`ArcFeatures.corpus`): {encode:.1f} s.",
        "",
        "Generation: `ArcKernel.fill` for every sentence (rows in the kernel's reused buffers). "
        "Scoring: `ArcKernel.scores`, which makes the rows as `fill` does, then sums every arc's "
        "`<w, phi_hm>` in row order (random float64 weights of `n_features`): its time includes "
        "generation.",
        "",
        "| bits | columns | weights MB | generation s (wall / CPU) | ns a feature (CPU) | "
        "ns an arc (CPU) | generation + scoring s (wall / CPU) | scoring alone ns a feature (CPU) |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in results:
        gen_wall, gen_cpu = r["gen"]
        score_wall, score_cpu = r["score"]
        lines.append(f"| {r['bits']} | {r['n_features']:,} | {r['MB']:.0f} | {gen_wall:.2f} / {gen_cpu:.2f} | "
                     f"{gen_cpu / nnz * 1e9:.2f} | {gen_cpu / arcs * 1e9:.0f} | "
                     f"{score_wall:.2f} / {score_cpu:.2f} | {(score_cpu - gen_cpu) / nnz * 1e9:.2f} |")
    capacity = results[-1]["capacity"]
    lines += [
        "",
        f"Buffers after a pass: {capacity['indices']:,} int32 column entries and {capacity['indptr']:,} "
        f"row starts (the longest sentence's, grown by half again at most), against {nnz:,} "
        f"features an epoch: one sentence's arcs at a time.",
        "",
        "What limits it: generation is arithmetic, about 28 instructions a feature "
        "(callgrind): per arc one MurmurHash3 finalizer (`fmix64`) joins the head's and the "
        "modifier's precomputed hashes of each two-sided template, one more conjoins direction "
        "and distance, and a multiply and shift place each feature in its block; single-sided "
        "templates read their token's hash. Scoring is memory: each feature is a random read "
        "of the weight vector, which stops fitting in the caches as bits grow.",
    ]
    Path(args.out).write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
