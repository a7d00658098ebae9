"""The peer suite as the repository runs it: writes bench/results/peers.md and
bench/results/peers_*.png.

Problems: the synthetic Zipf text problem of bench/throughput.py (values 1.0,
10% label noise, d = 2^20, 50 features per row) at two sizes and three Zipf
exponents, then the real sets of /work/shared/data (or --data). The
measurement core is bench.peers (`python -m bench.peers`);
every option of it applies here. The profile notes of
bench/results/peers_profile.md (written by hand from perf and callgrind runs
of profile_pass.py and from row_costs.py) are appended to the report.

    python -m bench.peers.run [--quick] [--runs 5] [--passes 10] [--data DIR]
"""
import argparse
import os
import shlex
import sys
from pathlib import Path

from bench import peers
from bench.peers import data
from bench.machine import describe_machine
from bench.throughput import zipf_text

BENCH = Path(__file__).resolve().parent.parent

#: (rows, Zipf exponent) of the synthetic problems; the first is throughput.md's.
SYNTHETIC = ((200_000, 1.0), (50_000, 1.0), (50_000, 0.8), (50_000, 1.2))
QUICK_SYNTHETIC = ((20_000, 1.0),)
D, PER_ROW = 1 << 20, 50


def synthetic(rows, exponent, seed=0):
    """zipf_text rows, a seeded 75/25 split into training and test rows."""
    X, y = zipf_text(rows, D, PER_ROW, seed, exponent=exponent)
    return data.from_arrays(f"zipf s={exponent:g} n={rows:,}",
                            f"`bench/throughput.py` zipf_text: {PER_ROW} distinct Zipf({exponent:g}) features "
                            f"per row of d = 2^20, values 1.0, 10% label noise", X, y, seed=seed)


def main():
    parser = peers.add_arguments(argparse.ArgumentParser(description=__doc__.splitlines()[0]))
    parser.set_defaults(data="/work/shared/data", out=str(BENCH / "results" / "peers.md"),
                        plots=str(BENCH / "results" / "peers"))
    args = parser.parse_args()
    problems = []
    if not args.from_json:
        problems = [synthetic(rows, s) for rows, s in (QUICK_SYNTHETIC if args.quick else SYNTHETIC)]
        problems += data.real_sets(args.data, args.sets)
    command = "python -m bench.peers.run " + shlex.join(sys.argv[1:])
    load = "- Load average (1, 5, 15 min) at the start: {:.2f}, {:.2f}, {:.2f} on a machine shared with " \
        "other benchmarks".format(*os.getloadavg())
    out, args.out = args.out, None
    text = peers.execute(problems, args, [f"`{command.strip()}`", "", describe_machine(), load])
    profile = BENCH / "results" / "peers_profile.md"
    if profile.exists():
        text += "\n" + profile.read_text()
    if out:
        Path(out).write_text(text)
    print(text)


if __name__ == "__main__":
    main()
