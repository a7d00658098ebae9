"""End-to-end speed from a data file to a saved model: `fastprox train` vs Vowpal Wabbit.

Both commands run as they would from a shell (a subprocess each, start-up
included), one pass, logistic loss, writing a model file, on the same rows:
the LIBSVM file for fastprox and the same file converted once (not timed) to
VW's text format (``label |f index:value ...``) for ``python -m vowpalwabbit``.
fastprox is timed twice: as a user runs it first (a streaming pass finds the
width and the labels, then the training pass) and with ``--n-features`` and
``--classes`` given (one read, as VW does). Two larger inputs (``x20``: the
training file 20 times in a row, one stream) show the rates once start-up no
longer dominates. Every time is the median of ``--runs`` runs. Test accuracy comes from each tool's saved model on the
test file (VW: ``-t -i MODEL``), for the files without a test file on the
training file (marked "train").

fastprox runs from wherever ``import fastprox`` finds it (an install, or a
source tree on PYTHONPATH), byte-compiled first as pip does on install, so
that no run pays for compiling its modules. Start-up is measured alone too:
``python -c pass``, ``python -c "import numpy"``, ``fastprox info --help``
and VW's ``--version``. The machine's load average is recorded before and
after: other jobs on its cores slow both tools, unevenly.

Run: ``python bench/file_to_model.py [--runs 5]``; writes
``bench/results/file_to_model.md``.
"""
import argparse
import compileall
import os
import platform
import re
import statistics
import subprocess
import sys
import tempfile
import time
from importlib.metadata import version
from pathlib import Path

import numpy as np
from scipy.sparse import csr_matrix

sys.path.insert(0, str(Path(__file__).resolve().parent))
from fastprox.benchmarks.machine import describe_machine

import fastprox  # noqa: E402
from fastprox import iter_libsvm, load_libsvm  # noqa: E402
from fastprox.cli.stream import KEEP_BYTES  # noqa: E402
from fastprox.model_io import load_model  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data"
RESULTS = ROOT / "bench" / "results" / "file_to_model.md"
SETS = {  # name -> (train, test or None, copies of the training file streamed one after another)
    "a9a": ("a9a/a9a", "a9a/a9a.t", 1),
    "w8a": ("w8a/w8a", None, 1),
    "ijcnn1": ("ijcnn1/ijcnn1.trn", "ijcnn1/ijcnn1.tst", 1),
    "reuters": ("reuters_moneyfx/reuters.trn", "reuters_moneyfx/reuters.tst", 1),
    "rcv1 sample": ("rcv1_vw_small/rcv1_small.train.svm", "rcv1_vw_small/rcv1_small.test.svm", 1),
    "ijcnn1 x20": ("ijcnn1/ijcnn1.trn", "ijcnn1/ijcnn1.tst", 20),
    "reuters x20": ("reuters_moneyfx/reuters.trn", "reuters_moneyfx/reuters.tst", 20),
}
FASTPROX = [sys.executable, "-c", "import sys; from fastprox.cli import main; sys.exit(main())"]
VW = [sys.executable, "-m", "vowpalwabbit"]


def to_vw(src, dst):
    """Write the LIBSVM file ``src`` as VW text: same rows, labels -1/1, one namespace."""
    with open(dst, "w") as out:
        for X, y in iter_libsvm(src, chunk_rows=50_000):
            for i, label in enumerate(y):
                a, b = X.indptr[i], X.indptr[i + 1]
                pairs = " ".join(f"{j}:{v!r}" for j, v in zip(X.indices[a:b].tolist(), X.data[a:b].tolist()))
                out.write(f"{1 if label > 0 else -1} |f {pairs}\n")


def predict_file(est, path):
    """The saved model's predictions for a LIBSVM file, columns beyond its width
    dropped (their weights are 0), as `fastprox predict` does."""
    X, _ = load_libsvm(path)
    width = est.n_features_in_
    X = X[:, :width] if X.shape[1] >= width else csr_matrix((X.data, X.indices, X.indptr),
                                                             shape=(X.shape[0], width))
    return est.predict(X)


def timed(cmd):
    """(seconds, completed process) of one run; a failure stops the benchmark."""
    start = time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    if done.returncode:
        raise SystemExit(f"{' '.join(map(str, cmd))} failed:\n{done.stderr}")
    return seconds, done


def median_time(cmd, runs):
    results = [timed(cmd) for _ in range(runs)]
    return statistics.median(s for s, _ in results), results[-1][1]


def vw_accuracy(model, test_vw, labels, work):
    preds = work / "vw_pred.txt"
    timed(VW + ["-t", "-i", model, "-d", test_vw, "-p", preds, "--quiet"])
    return float(np.mean(np.where(np.loadtxt(preds) > 0, 1.0, -1.0) == np.where(labels > 0, 1.0, -1.0)))


def repeated(path, copies, dst):
    """``dst``: the file ``path`` written ``copies`` times in a row (one longer stream)."""
    content = path.read_bytes()
    with open(dst, "wb") as out:
        for _ in range(copies):
            out.write(content)
    return dst


def measure(name, train, test, copies, runs, work):
    source, test_file = DATA / train, DATA / (test or train)
    X, _ = load_libsvm(source)
    y_test = load_libsvm(test_file)[1]
    one_vw, train_vw, test_vw = work / "one.vw", work / "train.vw", work / "test.vw"
    to_vw(source, one_vw)
    to_vw(test_file, test_vw)
    train = repeated(source, copies, work / "train.svm")
    repeated(one_vw, copies, train_vw)
    fp_model, vw_model = work / "model.npz", work / "model.vw"
    fp_scan, fp_out = median_time(FASTPROX + ["train", train, "--model", fp_model], runs)
    fp_known, _ = median_time(FASTPROX + ["train", train, "--model", fp_model, "--n-features",
                                          str(X.shape[1]), "--classes", "-1", "1"], runs)
    vw_seconds, vw_out = median_time(VW + ["-d", train_vw, "--loss_function", "logistic",
                                           "-f", vw_model], runs)
    est = load_model(fp_model)
    fp_pred = predict_file(est, test_file)
    return {
        "name": name, "rows": X.shape[0] * copies, "mb": train.stat().st_size / 1e6,
        "vw_mb": train_vw.stat().st_size / 1e6, "fp_scan": fp_scan, "fp_known": fp_known,
        "vw": vw_seconds,
        "fp_loss": float(re.search(r"progressive loss: ([0-9.]+)", fp_out.stdout).group(1)),
        "vw_loss": float(re.search(r"average loss = ([0-9.]+)", vw_out.stderr).group(1)),
        "fp_acc": float(np.mean(fp_pred == y_test)), "vw_acc": vw_accuracy(vw_model, test_vw, y_test, work),
        "test": "test" if test else "train",
    }


STARTUP = {  # what start-up alone costs: the interpreter, NumPy, each tool doing nothing
    "python -c pass": [sys.executable, "-c", "pass"],
    "python -c \"import numpy\"": [sys.executable, "-c", "import numpy"],
    "fastprox info --help": FASTPROX + ["info", "--help"],
    "VW --version": VW + ["--version"],
}


def startup(runs):
    """Median seconds of each STARTUP command."""
    return {name: statistics.median(timed(cmd)[0] for _ in range(runs)) for name, cmd in STARTUP.items()}


def verdict(rows, start):
    """Which data fastprox trains faster than VW, in both fastprox timings, and
    the start-up floors that bound the small files."""
    def names(test):
        return ", ".join(r["name"] for r in rows if test(r)) or "none"
    python, numpy = start["python -c pass"], start['python -c "import numpy"']
    return [f"- fastprox faster than VW (both timings): {names(lambda r: max(r['fp_scan'], r['fp_known']) < r['vw'])}.",
            f"- fastprox faster only with width and classes given (no scan pass): "
            f"{names(lambda r: r['fp_known'] < r['vw'] <= r['fp_scan'])}.",
            f"- VW faster: {names(lambda r: r['vw'] <= r['fp_known'])}.",
            f"- Start-up floors: doing nothing, fastprox takes {start['fastprox info --help']:.3f} s and "
            f"VW {start['VW --version']:.3f} s; the interpreter alone takes {python:.3f} s. "
            f"`fastprox train` and `info` on LIBSVM files import no NumPy, whose import would add "
            f"{numpy - python:.3f} s. On files of a few MB the whole command is mostly start-up.",
            f"- With the scan, a file whose parsed rows fit in {KEEP_BYTES >> 20} MB is parsed once "
            f"(the scan's chunks are trained on); a larger one is parsed twice, by the scan and by "
            f"the training pass."]


def report(rows, runs, start, load):
    lines = [
        "# File to model: `fastprox train` vs Vowpal Wabbit", "",
        "Generated by `python bench/file_to_model.py` (see its docstring for the method).", "",
        describe_machine(),
        f"- Python {platform.python_version()}, fastprox {fastprox.__version__} "
        f"({Path(fastprox.__file__).parent}), vowpalwabbit {version('vowpalwabbit')}, numpy {np.__version__}",
        f"- Load average (1 min) before / after: {load[0]:.2f} / {load[1]:.2f}.",
        f"- Median of {runs} runs; wall seconds of the whole command (start-up included). "
        "Start-up alone: " + ", ".join(f"`{name}` {s:.3f} s" for name, s in start.items()) + ".",
        "- fastprox: defaults (FOBOS, AdaGrad steps with the \"auto\" eta0 and delta, l1 alpha=1e-6), `--model OUT`. "
        "VW 9 defaults (adaptive, normalized, invariant updates, 2^18 hashed weights), "
        "`--loss_function logistic -f OUT`.",
        "- Progressive loss: the mean logistic loss of each row before its update "
        "(fastprox's report, VW's `average loss`).", "",
        "| data | rows | LIBSVM MB | fastprox s (scan + train) | fastprox s (width, classes given) "
        "| VW s | VW / fastprox | VW / fastprox (given) | progressive loss fastprox / VW "
        "| accuracy fastprox / VW |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['name']} | {r['rows']:,} | {r['mb']:.1f} | {r['fp_scan']:.2f} | {r['fp_known']:.2f} "
            f"| {r['vw']:.2f} | {r['vw'] / r['fp_scan']:.2f} | {r['vw'] / r['fp_known']:.2f} "
            f"| {r['fp_loss']:.4f} / {r['vw_loss']:.4f} | {r['fp_acc']:.4f} / {r['vw_acc']:.4f} ({r['test']}) |")
    return "\n".join(lines + [""] + verdict(rows, start)) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3, help="runs per timing (median)")
    parser.add_argument("--sets", nargs="+", choices=SETS, default=list(SETS))
    args = parser.parse_args()
    compileall.compile_dir(Path(fastprox.__file__).parent, quiet=1)
    load = [os.getloadavg()[0]]
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.sets:
            rows.append(measure(name, *SETS[name], args.runs, Path(tmp)))
            print(rows[-1], flush=True)
    start = startup(max(args.runs, 5))
    load.append(os.getloadavg()[0])
    text = report(rows, args.runs, start, load)
    RESULTS.write_text(text)
    print(text)


if __name__ == "__main__":
    main()
