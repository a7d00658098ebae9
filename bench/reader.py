"""Reader speed: fastprox's LIBSVM loader against scikit-learn's, side by side.

For each data file of at least 2 MB under the shared data directory, times
``load_libsvm``, ``iter_libsvm`` (every chunk consumed) and scikit-learn's
``load_svmlight_file`` in this process, each the median of ``--runs`` runs,
and reports MB/s (file bytes / seconds) and the speed-up.  Then streams a
generated file of ``--big-gb`` GB in /tmp through ``iter_libsvm`` in a fresh
process, records its MB/s and peak RSS, and deletes the file (Linux: peak RSS via /proc).  Writes
``bench/results/reader.md``.

    python -m bench.reader [--runs 5] [--big-gb 2.5] [--data DIR]
"""
import argparse
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

from sklearn.datasets import load_svmlight_file

from fastprox.libsvm import iter_libsvm, load_libsvm

ROOT = Path(__file__).resolve().parent
MIN_BYTES = 2_000_000
LIMITS = ('What limits it: the parser is one single-threaded pass. Digits are read 8 at a '
          'time from 64-bit words (SWAR) and numbers beyond the exact fast path go to '
          '`strtod`; callgrind counts about 15 instructions per byte on long decimals '
          '(reuters) and 30 on short `3:1` tokens (a9a, w8a), which stay the slowest per '
          'byte: the per-token work (index, checks, stores) outweighs the digits there. '
          '`load_libsvm` parses 10,000 rows at a time as `iter_libsvm` does, its arrays '
          'staying in cache, and joins the parts at the end: that one more copy is what it '
          'costs over `iter_libsvm`.')


def median_seconds(function, runs):
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def consume(path):
    for _ in iter_libsvm(path, chunk_rows=10_000):
        pass


def machine():
    model = next((line.split(":", 1)[1].strip() for line in
                  subprocess.run(["lscpu"], capture_output=True, text=True).stdout.splitlines()
                  if line.startswith("Model name")), platform.processor())
    return f"{model}, {os.cpu_count()} cores, Python {platform.python_version()}, {platform.system()}"


def speed_table(data_dir, runs):
    rows = ["| file | MB | fastprox load MB/s | fastprox iter MB/s | scikit-learn MB/s "
            "| load speed-up | iter speed-up |", "|---|---:|---:|---:|---:|---:|---:|"]
    files = sorted(p for p in data_dir.rglob("*") if p.is_file() and p.stat().st_size >= MIN_BYTES)
    for path in files:
        mb = path.stat().st_size / 1e6
        load = median_seconds(lambda: load_libsvm(path), runs)
        stream = median_seconds(lambda: consume(path), runs)
        sklearn = median_seconds(lambda: load_svmlight_file(str(path)), runs)
        rows.append(f"| {path.relative_to(data_dir)} | {mb:.1f} | {mb / load:.0f} | "
                    f"{mb / stream:.0f} | {mb / sklearn:.0f} | {sklearn / load:.1f}x | "
                    f"{sklearn / stream:.1f}x |")
        print(rows[-1], flush=True)
    return rows


def big_file(gigabytes):
    """Stream a generated file of ``gigabytes`` GB in a fresh process; a report line."""
    lines = b"".join(b"%d %s\n" % (i % 2 * 2 - 1, b" ".join(
        b"%d:%.6f" % (j, ((i * 7919 + j * 104729) % 1000003) / 1000003.0)
        for j in range(1 + i % 5, 2000, 37))) for i in range(5000))
    with tempfile.NamedTemporaryFile(dir="/tmp", suffix=".svm", delete=False) as f:
        path = f.name
        while f.tell() < gigabytes * 1e9:
            f.write(lines)
    try:
        size = os.path.getsize(path)
        script = textwrap.dedent(f"""
            import time
            import scipy.sparse  # noqa: F401  (loaded by the first chunk; counted in the base)
            from fastprox.libsvm import iter_libsvm

            def kb(field):
                with open("/proc/self/status") as status:
                    return next(int(l.split()[1]) for l in status if l.startswith(field))

            with open("/proc/self/clear_refs", "w") as refs:
                refs.write("5")  # restart the peak (VmHWM) from the current RSS
            base = kb("VmRSS:")
            start, rows = time.perf_counter(), 0
            for X, y in iter_libsvm({path!r}, chunk_rows=10_000):
                rows += X.shape[0]
            seconds = time.perf_counter() - start
            print(rows, seconds, base, kb("VmHWM:"))
        """)
        out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                             check=True).stdout.split()
    finally:
        os.unlink(path)
    rows, seconds, base_kb, peak_kb = int(out[0]), float(out[1]), int(out[2]), int(out[3])
    return (f"`iter_libsvm(chunk_rows=10_000)` over a generated {size / 1e9:.2f} GB file "
            f"({rows:,} rows, ~54 features a row): {size / 1e6 / seconds:.0f} MB/s "
            f"({seconds:.1f} s, page cache warm from writing it). Peak RSS while streaming "
            f"{peak_kb / 1024:.0f} MB, of which {base_kb / 1024:.0f} MB is the interpreter with "
            f"numpy, scipy and fastprox imported: the reader's own peak is "
            f"{(peak_kb - base_kb) / 1024:.0f} MB.")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--big-gb", type=float, default=2.5, help="0 to skip")
    parser.add_argument("--data", type=Path, default=ROOT.parents[1] / "shared" / "data")
    args = parser.parse_args()
    report = ["# LIBSVM reader: fastprox vs scikit-learn", "",
              f"Machine: {machine()}; load average at start {os.getloadavg()[0]:.1f} "
              "(other jobs share the cores, so single numbers are noisy; the ratios, "
              "measured side by side, are steadier).", "",
              f"MB/s = file bytes / median wall time of {args.runs} runs in one process "
              "(files read from the page cache). `load` is `load_libsvm`, `iter` is "
              "`iter_libsvm(chunk_rows=10_000)` with every chunk consumed, scikit-learn is "
              "`load_svmlight_file`. Made by `python -m bench.reader`.", ""]
    report += speed_table(args.data, args.runs)
    report += ["", LIMITS]
    if args.big_gb > 0:
        report += ["", "## Streaming a large file", "", big_file(args.big_gb)]
        print(report[-1])
    (ROOT / "results").mkdir(exist_ok=True)
    (ROOT / "results" / "reader.md").write_text("\n".join(report) + "\n")


if __name__ == "__main__":
    main()
