"""The memory of a stream's chunks: ``fastprox train`` with the allocator's thresholds
lifted (as the command line sets them, `fastprox._allocator.keep_freed_memory`)
against glibc's own rule (the same command with that call made a no-op), in the
same run.

One pass (and ``--passes``) of ``fastprox train`` over ``bench.dask``'s LIBSVM files
(made once under ``--dir`` and reused), each run a fresh process pinned to one core,
the two settings interleaved run after run; the medians of wall time, CPU seconds
(user and system) and minor page faults, and whether the two models are the same
bytes. Writes ``bench/results/stream_memory.md``.

    python -m bench.stream_memory [--files 40] [--runs 5] [--passes 1] [--dir /tmp/fastprox_dask]
"""
import argparse
import filecmp
import os
import statistics
import subprocess
import sys
from pathlib import Path

from bench.dask_workload import RULE_OPTIONS, generate, uptime
from bench.machine import describe_machine

RESULTS = Path(__file__).resolve().parent / "results"
#: The two settings: the command as shipped, and the same with glibc's own rule.
SETTINGS = {
    "lifted (as shipped)": "",
    "glibc's own rule": "import fastprox._allocator as a; a.keep_freed_memory = lambda: False; ",
}


def command(setting, files, passes, model):
    """``fastprox train FILES`` in a fresh interpreter, ``setting``'s code run first."""
    code = SETTINGS[setting] + "import sys; from fastprox.cli import main; sys.exit(main())"
    return [sys.executable, "-c", code, "train", *map(str, files), "--passes", str(passes),
            *(("--holdout-off",) if passes > 1 else ()), *RULE_OPTIONS, "--model", str(model), "--quiet"]


def run(argv, core):
    """(wall s, user s, system s, minor faults) of one process pinned to ``core``."""
    proc = subprocess.Popen(argv, stderr=subprocess.PIPE, preexec_fn=lambda: os.sched_setaffinity(0, {core}))
    start = os.times().elapsed
    stderr = proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    wall = os.times().elapsed - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    proc.stderr.close()
    if proc.returncode:
        raise RuntimeError(stderr.decode())
    return wall, usage.ru_utime, usage.ru_stime, usage.ru_minflt


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dir", type=Path, default=Path("/tmp/fastprox_dask"))
    parser.add_argument("--files", type=int, default=40)
    parser.add_argument("--rows", type=int, default=125_000, help="rows per file (bench.dask's)")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--passes", type=int, default=1)
    parser.add_argument("--core", type=int, default=0)
    parser.add_argument("--out", type=Path, default=RESULTS / "stream_memory.md")
    args = parser.parse_args(argv)
    files, _ = generate(args.dir, args.files, args.rows, test_rows=args.rows)   # (its test file unused)
    size = sum(f.stat().st_size for f in files)
    for f in files:                                     # into the page cache
        f.read_bytes()
    before = uptime()
    found = {setting: [] for setting in SETTINGS}
    models = {setting: args.dir / f"stream_memory_{i}.model" for i, setting in enumerate(SETTINGS)}
    for _ in range(args.runs):
        for setting in SETTINGS:
            found[setting].append(run(command(setting, files, args.passes, models[setting]), args.core))
    after = uptime()
    same = filecmp.cmp(*models.values(), shallow=False)
    lines = ["# The memory of a stream's chunks: the allocator's thresholds lifted or not", "",
             f"`python -m bench.stream_memory --files {args.files} --runs {args.runs} --passes {args.passes}`", "",
             describe_machine(), f"- Load before: `{before}`", f"- Load after: `{after}`",
             f"- Data: {args.files} LIBSVM files of `bench.dask` ({size / 1e9:.2f} GB, in the page cache); "
             f"its rule (`bench.dask_workload.RULE_OPTIONS`); {args.passes} pass(es); every run a fresh `fastprox train` "
             f"process pinned to core {args.core}, the settings interleaved run after run.", "",
             "| setting | wall s | CPU s (user + system) | minor page faults | every run's wall s |",
             "|---|---:|---:|---:|---|"]
    for setting, runs in found.items():
        med = [statistics.median(r[i] for r in runs) for i in range(4)]
        lines.append(f"| {setting} | {med[0]:.2f} | {med[1] + med[2]:.2f} ({med[1]:.2f} + {med[2]:.2f}) | "
                     f"{med[3]:,.0f} | {', '.join(f'{r[0]:.2f}' for r in runs)} |")
    shipped, own = (found[s] for s in SETTINGS)
    ratios = [b[0] / a[0] for a, b in zip(shipped, own)]
    lines += ["", f"glibc's own rule over the thresholds lifted, run by run (wall): median "
              f"{statistics.median(ratios):.3f} ({', '.join(f'{r:.3f}' for r in ratios)}); the two models "
              f"{'are the same bytes' if same else 'DIFFER'}.", ""]
    args.out.write_text("\n".join(lines))
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
