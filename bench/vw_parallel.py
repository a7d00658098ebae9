"""VW text parsed by one thread or by two at once (fastprox.stream.files.vw_chunks):
the wall and CPU seconds of the whole ``fastprox train FILE [-q ab] --model OUT``,
fresh processes, the two ways interleaved, medians. The VW files are bench.file_to_model's
(``vw_lines``: a9a x20 and the peer suite's Zipf s=1 n=200,000).

Run: ``PYTHONPATH=src python -m bench.vw_parallel [--runs 5]`` (about a minute quiet).
The wall needs the machine's two cores free: under load the threads wait for them.
"""
import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from bench.file_to_model import problem, vw_lines

#: fastprox train with the VW spans of ``sys.argv[1]`` bytes (one thread: more than the file).
TRAIN = ("import sys; from fastprox.stream import files; files.SPAN_BYTES = int(sys.argv[1]); "
         "from fastprox.cli import main; sys.exit(main(sys.argv[2:]))")
WAYS = {"one thread": str(1 << 62), "two threads": None}


def timed(command):
    """(wall, CPU) seconds of a fresh process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = os.times().elapsed
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return os.times().elapsed - start, after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5, help="interleaved rounds (median)")
    args = parser.parse_args()
    from fastprox.stream.files import SPAN_BYTES
    WAYS["two threads"] = str(SPAN_BYTES)
    print(f"load average (1 min) before: {os.getloadavg()[0]:.2f}")
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        for name in ("a9a x20", "zipf s=1 n=200,000"):
            X, y, _, _, copies, _ = problem(name)
            data = work / "train.vw"
            data.write_text(vw_lines(X, y) * copies)
            for q in ([], ["-q", "ab"]):
                figures = {way: [] for way in WAYS}
                for _ in range(args.runs):
                    for way, span in WAYS.items():
                        figures[way].append(timed([sys.executable, "-c", TRAIN, span, "train", str(data), *q,
                                                   "--model", str(work / "m.npz")]))
                line = "  ".join(f"{way}: wall {statistics.median(w for w, _ in f):.3f} s, "
                                 f"CPU {statistics.median(c for _, c in f):.3f} s" for way, f in figures.items())
                print(f"{name} {' '.join(q)}: {line}", flush=True)
    print(f"load average (1 min) after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
