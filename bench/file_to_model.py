"""End-to-end speed from a data file to a saved model: `fastprox train` vs Vowpal Wabbit.

Both commands run as they would from a shell (a subprocess each, start-up
included, both printing their progress table to stderr), one pass, logistic
loss, writing a model file, on the same rows: a LIBSVM file for fastprox and
the same rows converted once (not timed) to VW's text format (``label |f
index:value ...``) for ``python -m vowpalwabbit`` (the ``vw`` that the
vowpalwabbit package installs). fastprox is given nothing but the file and
``--model``: no width, no classes (it reads the file once, grows the model
with the features it meets and recognizes the two labels as they come). Each
file is also trained from a gzip pipe: ``zcat f.gz | fastprox train -``
against ``zcat f.vw.gz | vw -d /dev/stdin`` (the package's ``vw`` reads no
standard input otherwise).

Files: the peer suite's Zipf problems (bench/peers/run.py: 50 distinct
Zipf-ranked features of d = 2^20 per row, the training 75%), a Zipf file of
our own over 2^21 ids (120,000 rows, 30 features per row), the real sets of
/work/shared/data, and two longer streams (``x20``: a training file 20 times
in a row). Runs are interleaved (each round runs every command once) and
every time is the median of ``--runs`` rounds. Test accuracy comes from each
tool's saved model on the test rows (VW: ``-t -i MODEL``), for the files
without a test file on the training file (marked "train").

fastprox runs from wherever ``import fastprox`` finds it (an install, or a
source tree on PYTHONPATH), byte-compiled first as pip does on install, so
that no run pays for compiling its modules. Both tools run in two interpreters
(bench.interpreters): this machine's as it is, and a clean one over the same
installed packages that runs none of this machine's ``.pth`` files (the
sandbox's imports certifi at every start); each time and ratio is given in
both, the verdict uses the clean one (the report says why). Start-up is
measured alone too, in both: ``python -c pass``, ``python -c "import
numpy"``, ``python -c "import vowpalwabbit"``, ``fastprox info --help`` and
VW's ``--version``. The machine's load average is recorded before and after:
other jobs on its cores slow both tools, unevenly.

VW's own format (``--vw-text``): the same rows written once in VW's text format
with their columns dealt to three namespaces (``|a``, ``|b``, ``|c`` by column mod 3,
named by their numbers, values as written), read by both tools from that one file,
without and with ``-q ab``: ``fastprox train f.vw [-q ab] --model OUT`` (the format
recognised by its ``|``) against ``vw -d f.vw [-q ab] --loss_function logistic -b 18
-f OUT``; test accuracy from each saved model on the test rows in the same format
(``fastprox predict MODEL test.vw [-q ab]``, ``vw -t -i MODEL``). It replaces the
report's section "VW's text format" and keeps the rest.

Run: ``python -m bench.file_to_model [--runs 5] [--sets NAME ...]``; writes
``bench/results/file_to_model.md``; ``python -m bench.file_to_model --vw-text
[--runs 5] [--sets NAME ...]`` its VW-format section (default sets: VW_SETS).
"""
import argparse
import compileall
import contextlib
import gzip
import os
import platform
import re
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from importlib.metadata import version
from pathlib import Path

import numpy as np

import fastprox
from fastprox import dump_libsvm, load_libsvm
from bench.interpreters import CLEAN, MACHINE, clean_interpreter, describe as skipped_start
from bench.machine import describe_machine
from bench.throughput import zipf_text
from bench.peers import data
from fastprox.model_io import load_model

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
DATA = ROOT.parent / "shared" / "data"
RESULTS = BENCH / "results" / "file_to_model.md"
REAL = {  # name -> (train, test or None, copies of the training file streamed one after another)
    "a9a": ("a9a/a9a", "a9a/a9a.t", 1),
    "w8a": ("w8a/w8a", None, 1),
    "ijcnn1": ("ijcnn1/ijcnn1.trn", "ijcnn1/ijcnn1.tst", 1),
    "reuters": ("reuters_moneyfx/reuters.trn", "reuters_moneyfx/reuters.tst", 1),
    "rcv1 sample": ("rcv1_vw_small/rcv1_small.train.svm", "rcv1_vw_small/rcv1_small.test.svm", 1),
    "ijcnn1 x20": ("ijcnn1/ijcnn1.trn", "ijcnn1/ijcnn1.tst", 20),
    "reuters x20": ("reuters_moneyfx/reuters.trn", "reuters_moneyfx/reuters.tst", 20),
}
#: The peer suite's Zipf problems (rows, exponent; bench/peers/run.py), and ours over 2^21 ids.
PEER_ZIPF = ((200_000, 1.0), (50_000, 1.0), (50_000, 0.8), (50_000, 1.2))
OWN_ZIPF = ("zipf 2^21 ids n=120,000", 120_000, 1 << 21, 30)
SETS = [f"zipf s={s:g} n={rows:,}" for rows, s in PEER_ZIPF] + [OWN_ZIPF[0]] + list(REAL)
#: The sets of --vw-text (a real set, the same streamed 20 times, a peer Zipf problem).
VW_SETS = ["a9a", "a9a x20", "zipf s=1 n=200,000"]
#: The real sets only --vw-text runs, as REAL.
VW_ONLY = {"a9a x20": ("a9a/a9a", "a9a/a9a.t", 20)}
#: The heading of the report's VW-format section.
VW_SECTION = "## VW's text format: both tools read the same VW file"


def tools(python):
    """(fastprox's, VW's) command prefix run by the interpreter ``python``: the console
    script's entry, and the ``vw`` of the vowpalwabbit package."""
    return ([str(python), "-c", "import sys; from fastprox.cli import console; sys.exit(console())"],
            [str(python), "-m", "vowpalwabbit"])


FASTPROX, VW = tools(sys.executable)


def shell_tools(python):
    """`tools` as shell text: (fastprox's, VW's) command prefixes, quoted."""
    return tuple(shlex.join(map(str, tool)) for tool in tools(python))


def tag(interpreter):
    """The suffix of a timing's name run in ``interpreter`` ("" for this machine's)."""
    return "" if interpreter == MACHINE else f" {interpreter}"


def peer_synthetic():
    """bench/peers/run.py's `synthetic` (the peer suite's Zipf problems)."""
    from bench.peers.run import synthetic
    return synthetic


def problem(name):
    """(training CSR rows, labels, test rows, test labels, copies, "test" or "train")."""
    if name in REAL or name in VW_ONLY:
        train, test, copies = {**REAL, **VW_ONLY}[name]
        X, y = load_libsvm(DATA / train)
        X_test, y_test = load_libsvm(DATA / (test or train))
        return X, y, X_test, y_test, copies, "test" if test else "train"
    if name == OWN_ZIPF[0]:
        _, rows, d, per_row = OWN_ZIPF
        X, y = zipf_text(rows, d, per_row, seed=1)
        p = data.from_arrays(name, "", X, y, seed=1)
    else:
        rows, s = next((r, s) for r, s in PEER_ZIPF if name == f"zipf s={s:g} n={r:,}")
        p = peer_synthetic()(rows, s)
    return p.X_train, p.y_train, p.X_test, p.y_test, 1, "test"


def write_files(X, y, copies, work):
    """The training rows as LIBSVM and VW text, ``copies`` times in a row, plain and
    gzipped (level 1): {"svm": path, "vw": path, "svm.gz": path, "vw.gz": path}."""
    one = work / "one.svm"
    dump_libsvm(X, y, one)
    svm_text = one.read_bytes()
    lines = svm_text.decode().splitlines()
    vw_text = "".join(f"{1 if float(line.split(' ', 1)[0]) > 0 else -1} |f {_zero_based(line)}\n"
                      for line in lines).encode()
    paths = {}
    for kind, text in (("svm", svm_text), ("vw", vw_text)):
        paths[kind] = work / f"train.{kind}"
        paths[kind].write_bytes(text * copies)
        paths[kind + ".gz"] = work / f"train.{kind}.gz"
        paths[kind + ".gz"].write_bytes(gzip.compress(text * copies, 1))
    return paths


def _zero_based(line):
    """A LIBSVM line's features, zero-based, as VW's text names the CSR columns."""
    return " ".join(f"{int(i) - 1}:{v}" for i, _, v in (f.partition(":") for f in line.split()[1:]))


def commands(paths, work, pythons):
    """name -> shell command of each timed run, each tool in each interpreter of
    ``pythons`` ({interpreter: python}; the names of the clean one's end in " clean")."""
    fp_model, vw_model = work / "model.npz", work / "model.vw"
    named = {}
    for interpreter, python in pythons.items():
        fp, vw = shell_tools(python)
        t = tag(interpreter)
        named.update({
            f"fastprox{t}": f"{fp} train {paths['svm']} --model {fp_model}",
            f"vw{t}": f"{vw} -d {paths['vw']} --loss_function logistic -f {vw_model}",
            f"fastprox gz{t}": f"zcat {paths['svm.gz']} | {fp} train - --model {fp_model}",
            f"vw gz{t}": f"zcat {paths['vw.gz']} | {vw} -d /dev/stdin --loss_function logistic -f {vw_model}"})
    return {**named, "zcat": f"zcat {paths['svm.gz']} > /dev/null"}


def timed(command):
    """(seconds, completed process) of one shell command; a failure stops the benchmark."""
    start = time.perf_counter()
    done = subprocess.run(["bash", "-o", "pipefail", "-c", command], capture_output=True, text=True)
    seconds = time.perf_counter() - start
    if done.returncode:
        raise SystemExit(f"{command} failed:\n{done.stderr}")
    return seconds, done


def interleaved(named, runs):
    """name -> (median seconds, last completed process), each round running every command once."""
    times, last = {name: [] for name in named}, {}
    for _ in range(runs):
        for name, command in named.items():
            seconds, last[name] = timed(command)
            times[name].append(seconds)
    return {name: (statistics.median(times[name]), last[name]) for name in named}


def vw_accuracy(model, X_test, y_test, work):
    test_vw = work / "test.vw"
    dump_libsvm(X_test, y_test, work / "test.svm")
    test_vw.write_text("".join(f"1 |f {_zero_based(line)}\n"
                               for line in (work / "test.svm").read_text().splitlines()))
    preds = work / "vw_pred.txt"
    timed(shlex.join(map(str, VW + ["-t", "-i", model, "-d", test_vw, "-p", preds, "--quiet"])))
    return float(np.mean(np.where(np.loadtxt(preds) > 0, 1.0, -1.0) == np.where(y_test > 0, 1.0, -1.0)))


def fp_accuracy(model, X_test, y_test):
    """The saved model's accuracy; test columns beyond its width dropped (weight 0)."""
    est = load_model(model)
    width = est.n_features_in_
    X_test = X_test[:, :width] if X_test.shape[1] >= width else X_test.tocsr().copy()
    X_test.resize(X_test.shape[0], width)
    return float(np.mean(est.predict(X_test) == y_test))


def profile(path, work, runs):
    """Where fastprox's time goes on a file (median of ``runs`` fresh processes, each
    running `phases`: a fresh process meets the page faults of a model's new memory
    as the command does)."""
    import json
    rounds = [json.loads(timed(shlex.join([sys.executable, "-m", "bench.file_to_model", "--profile", str(path),
                                           str(work / "profiled.npz")]))[1].stdout)
              for _ in range(runs)]
    return {key: statistics.median(r[key] for r in rounds) for key in rounds[0]}


def phases(path, model):
    """Seconds of `fastprox train PATH --model MODEL` in this process, by phase: the
    pass (the reader in its thread, the kernel in this one), the kernel's steps in it,
    making and growing the model, writing the model file; then the reader alone (one
    thread, the rows dropped)."""
    from fastprox.cli import main
    from fastprox.stream.model import StreamModel
    from fastprox.stream.trainer import Trainer
    from fastprox.libsvm import iter_chunks
    spent = {}

    def timer(owner, name, key):
        inner = getattr(owner, name)

        def timed_call(*args, **kwargs):
            start = time.perf_counter()
            try:
                return inner(*args, **kwargs)
            finally:
                spent[key] = spent.get(key, 0.0) + time.perf_counter() - start
        return timed_call

    with contextlib.ExitStack() as patches:
        for owner, name, key in ((Trainer, "one_pass", "pass"), (Trainer, "_steps", "kernel"),
                                 (StreamModel, "start", "model"), (StreamModel, "widen", "model"),
                                 (StreamModel, "save", "write")):
            patches.enter_context(_patched(owner, name, timer(owner, name, key)))
        assert main(["train", path, "--model", model, "--quiet"]) == 0
    start = time.perf_counter()
    for _ in iter_chunks(path):
        pass
    spent["parse"] = time.perf_counter() - start
    return {key: spent.get(key, 0.0) for key in ("parse", "pass", "kernel", "model", "write")}


@contextlib.contextmanager
def _patched(owner, name, value):
    """``owner.name`` set to ``value`` for the block."""
    saved = getattr(owner, name)
    setattr(owner, name, value)
    try:
        yield
    finally:
        setattr(owner, name, saved)


def measure(name, runs, work, pythons):
    X, y, X_test, y_test, copies, tested = problem(name)
    paths = write_files(X, y, copies, work)
    results = interleaved(commands(paths, work, pythons), runs)
    phases = profile(paths["svm"], work, runs)
    fp_out, vw_out = results["fastprox"][1], results["vw"][1]
    row = {"name": name, "rows": X.shape[0] * copies, "mb": paths["svm"].stat().st_size / 1e6,
           "ids": X.shape[1], "test": tested,
           "fp_loss": float(re.search(r"progressive loss: ([0-9.]+)", fp_out.stdout).group(1)),
           "vw_loss": float(re.search(r"average loss = ([0-9.]+)", vw_out.stderr).group(1)),
           "fp_acc": fp_accuracy(work / "model.npz", X_test, y_test),
           "vw_acc": vw_accuracy(work / "model.vw", X_test, y_test, work)}
    row.update({key: results[key][0] for key in results})
    row.update({f"phase {key}": seconds for key, seconds in phases.items()})
    return row


def vw_lines(X, y):
    """The rows as VW text: label -1/+1, columns dealt to namespaces a, b, c by column
    mod 3, each feature its column's number (value omitted where 1)."""
    X = X.tocsr()
    lines = []
    for i in range(X.shape[0]):
        cols, vals = X.indices[X.indptr[i]:X.indptr[i + 1]], X.data[X.indptr[i]:X.indptr[i + 1]]
        spaces = {"a": [], "b": [], "c": []}
        for j, v in zip(cols.tolist(), vals.tolist()):
            spaces["abc"[j % 3]].append(str(j) if v == 1 else f"{j}:{v!r}")
        lines.append(f"{1 if y[i] > 0 else -1} " + " ".join(f"|{ns} " + " ".join(f) for ns, f in spaces.items()))
    return "\n".join(lines) + "\n"


def measure_vw_text(name, runs, work, pythons):
    """fastprox against VW on the same VW file, without and with -q ab (`vw_lines`),
    each in each interpreter of ``pythons``."""
    X, y, X_test, y_test, copies, tested = problem(name)
    train, test = work / "train.vw", work / "test.vw"
    train.write_text(vw_lines(X, y) * copies)
    test.write_text(vw_lines(X_test, y_test))
    fp, vw = shell_tools(sys.executable)
    row = {"name": name, "rows": X.shape[0] * copies, "mb": train.stat().st_size / 1e6, "test": tested}
    for q in ("", " -q ab"):
        named = {}
        for interpreter, python in pythons.items():
            fp_in, vw_in = shell_tools(python)
            named[f"fastprox{q}{tag(interpreter)}"] = f"{fp_in} train {train}{q} --model {work / 'model.npz'}"
            named[f"vw{q}{tag(interpreter)}"] = (f"{vw_in} -d {train}{q} --loss_function logistic -b 18 "
                                                 f"-f {work / 'model.vw'}")
        results = interleaved(named, runs)
        row.update({key: seconds for key, (seconds, _) in results.items()})
        preds = work / "vw_pred.txt"
        timed(f"{vw} -t -i {work / 'model.vw'} -d {test} -p {preds} --quiet")
        predicted = np.array(timed(f"{fp} predict {work / 'model.npz'} {test}{q} --quiet")[1].stdout.split(), float)
        truth = np.where(y_test > 0, 1.0, -1.0)
        row.update({f"fp_loss{q}": float(re.search(r"progressive loss: ([0-9.]+)", results[f"fastprox{q}"][1].stdout).group(1)),
                    f"vw_loss{q}": float(re.search(r"average loss = ([0-9.]+)", results[f"vw{q}"][1].stderr).group(1)),
                    f"fp_acc{q}": float(np.mean(np.where(predicted > 0, 1.0, -1.0) == truth)),
                    f"vw_acc{q}": float(np.mean(np.where(np.loadtxt(preds) > 0, 1.0, -1.0) == truth))})
    return row


def vw_text_section(rows, runs, load, target, start, clean):
    """The report's VW-format section (markdown), with its verdict against ``target``
    in the clean interpreter (`interpreter_note`; ``start`` its `startup` figures)."""
    lines = [VW_SECTION, "", "Generated by `python -m bench.file_to_model --vw-text` (see its docstring).", "",
             describe_machine() + "; 2 cores shared with other work",
             f"- Python {platform.python_version()}, fastprox {fastprox.__version__}, vowpalwabbit "
             f"{version('vowpalwabbit')}; load average (1 min) before / after: {load[0]:.2f} / {load[1]:.2f}.",
             f"- Median of {runs} interleaved rounds; wall seconds of the whole command, start-up included. "
             "fastprox: `fastprox train f.vw [-q ab] --model OUT` (the defaults, 2^18 columns as VW's -b 18); "
             "VW: `vw -d f.vw [-q ab] --loss_function logistic -b 18 -f OUT`. The columns are dealt to "
             "namespaces a, b, c by column mod 3.",
             *interpreter_note(start, clean),
             "- Each time: this machine's interpreter / the clean one (VW / fastprox: their ratio each).", "",
             "| data | rows | VW MB | fastprox s | VW s | **VW / fastprox** | fastprox s -q ab | VW s -q ab "
             "| **VW / fastprox -q ab** | progressive loss fastprox / VW (-q ab) | accuracy fastprox / VW (-q ab) |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---|"]
    c, q = tag(CLEAN), " -q ab"
    pair = lambda r, key: f"{r[key]:.3f} / {r[key + c]:.3f}"
    ratio = lambda r, vw, fp, t="": r[vw + t] / r[fp + t]
    both = lambda r, vw, fp: f"{ratio(r, vw, fp):.2f} / **{ratio(r, vw, fp, c):.2f}**"
    for r in rows:
        lines.append(
            f"| {r['name']} | {r['rows']:,} | {r['mb']:.1f} | {pair(r, 'fastprox')} | {pair(r, 'vw')} | "
            f"{both(r, 'vw', 'fastprox')} | {pair(r, 'fastprox' + q)} | {pair(r, 'vw' + q)} | "
            f"{both(r, 'vw' + q, 'fastprox' + q)} | {r['fp_loss']:.4f} / {r['vw_loss']:.4f} "
            f"({r['fp_loss -q ab']:.4f} / {r['vw_loss -q ab']:.4f}) | {r['fp_acc']:.4f} / {r['vw_acc']:.4f} "
            f"({r['fp_acc -q ab']:.4f} / {r['vw_acc -q ab']:.4f}; {r['test']}) |")
    reached = lambda t: [r["name"] for r in rows
                         if min(ratio(r, "vw", "fastprox", t), ratio(r, "vw" + q, "fastprox" + q, t)) >= target]
    missed = [r["name"] for r in rows if r["name"] not in reached(c)]
    lines += ["", f"- VW's time / fastprox's >= {target} without and with -q ab, clean interpreter: "
              f"{', '.join(reached(c)) or 'none'} (this machine's: {', '.join(reached('')) or 'none'}).",
              f"- Below {target} somewhere (clean): {', '.join(missed) or 'none'}.",
              native_vw(rows, start, [("vw" + c, "fastprox" + c), ("vw" + q + c, "fastprox" + q + c)])
              + " (without / with -q ab)"]
    return "\n".join(lines) + "\n"


def replace_section(path, section):
    """The report at ``path`` with its VW-format section (from VW_SECTION to the next
    heading of its level or the end) replaced by ``section``, the rest kept."""
    text = path.read_text() if path.exists() else ""
    start = text.find(VW_SECTION)
    if start < 0:
        return text.rstrip("\n") + "\n\n" + section
    end = text.find("\n## ", start + len(VW_SECTION))
    return text[:start] + section + (text[end + 1:] if end >= 0 else "")


def startup_commands(python):
    """What start-up alone costs in the interpreter ``python``: the interpreter, NumPy,
    VW's Python wrapper imported, each tool doing nothing (name -> argv)."""
    fp, vw = tools(python)
    return {"python -c pass": [python, "-c", "pass"],
            "python -c \"import numpy\"": [python, "-c", "import numpy"],
            "python -c \"import vowpalwabbit\"": [python, "-c", "import vowpalwabbit"],
            "fastprox info --help": fp + ["info", "--help"],
            "VW --version": vw + ["--version"]}


def startup(runs, pythons):
    """Median seconds of each `startup_commands` command in each interpreter of
    ``pythons`` (named as `tag` says), interleaved."""
    named = {f"{name}{tag(interpreter)}": shlex.join(map(str, argv))
             for interpreter, python in pythons.items() for name, argv in startup_commands(python).items()}
    return {name: seconds for name, (seconds, _) in interleaved(named, runs).items()}


def interpreter_note(start, clean):
    """Why the tools run in two interpreters, what the clean one (``clean``) skips and
    saves, and which the verdict uses: markdown list items."""
    c = tag(CLEAN)
    both = lambda name: f"`{name}` {start[name]:.3f} / {start[name + c]:.3f} s"
    wrapper = 'python -c "import vowpalwabbit"'
    return [
        f"- Each tool runs in two interpreters: *this machine's* ({sys.executable}) as it is, and a *clean* "
        "one, a virtual environment over the same installed packages whose one `.pth` line names this "
        "one's site-packages (`bench.interpreters`). " + skipped_start(clean),
        "- Start-up alone, this machine's / clean (median, interleaved): " + ", ".join(
            both(name) for name in startup_commands(sys.executable)) + ".",
        "- **The verdict uses the clean interpreter**, with this machine's figures beside it: the sandbox "
        "writes that `.pth` at container start, a user's Python has none, and it costs every Python "
        "process here the same time whatever the process does. VW here is the vowpalwabbit package's "
        "`python -m vowpalwabbit` (PyPI ships no `vw` binary, and Debian 13 packages none), so in each "
        "column both tools run in the same interpreter. VW's own import (`vowpalwabbit.version` reads "
        "`importlib.metadata`) brings in most of what certifi's brought, so the clean interpreter takes "
        "less off VW's start than off fastprox's.",
        "- **Against it**: a user of VW's C++ `vw` pays no interpreter at all. VW's clean times less "
        f"`{wrapper}` ({start[wrapper + c]:.3f} s clean) "
        "stand in for that below (an estimate: the difference of two medians)."]


def native_vw(rows, start, keys):
    """A verdict line: VW / fastprox with VW's clean times less its wrapper's start
    (`interpreter_note`), for each row and each ``(VW key, fastprox key)`` of ``keys``."""
    wrapper = start['python -c "import vowpalwabbit"' + tag(CLEAN)]
    return ("- VW / fastprox with VW's clean time less its wrapper's start (a C++ `vw`, estimated): " + "; ".join(
        f"{r['name']} " + " / ".join(f"{(r[vw] - wrapper) / r[fp]:.2f}" for vw, fp in keys) for r in rows) + ".")


#: What would close the gap, by the phase that takes most of fastprox's time.
REMEDIES = {
    "start-up": "The interpreter's start-up and the imports, whatever the file: a floor that only "
                "a native launcher would lower",
    "pass": "Parsing, which the pass waits on (the reader and the kernel already run on the two "
            "cores at once): only a faster parser would shorten it",
    "model": "Making and growing the model: Learner.grow doubles its arrays past their capacity (a "
             "2^21-wide model grown by a few ids reallocates for 2^22), and new memory costs a page "
             "fault per 4 kB here; a capacity rounded up to a power of two when the model is made, "
             "or huge pages (madvise), would remove most of it",
    "write": "Writing the model file: every feature met keeps its whole state (24 bytes under the "
             "defaults) in the file, zipped and fsynced with its directory; VW writes 2^18 weights "
             "without fsync. "
             "A write without fsync, or float32 state, would close most of it",
}


def _why(row, floor, target):
    """Why a file's time (clean interpreter) is above VW's / target: the start-up
    floor, and the phase that takes most of the work (fastprox's own time past
    start-up)."""
    budget = row["vw clean"] / target
    phases = {"pass": row["phase pass"] - row["phase model"], "model": row["phase model"],
              "write": row["phase write"]}
    worst = max(phases, key=phases.get)
    text = (f"VW's {row['vw clean']:.3f} s / {target} leaves {budget:.3f} s; start-up takes {floor:.3f} s "
            f"and the work {sum(phases.values()):.3f} s, most of it {worst} ({phases[worst]:.3f} s). ")
    if floor >= 0.7 * budget:
        text += f"{REMEDIES['start-up']}; then {REMEDIES[worst][0].lower()}{REMEDIES[worst][1:]}."
    else:
        text += f"{REMEDIES[worst]}."
    return text


def verdict(rows, start, target):
    """Where fastprox reaches ``target`` times VW's speed in the clean interpreter
    (this machine's beside it), where not and why (the phase that takes most of its
    time; zcat's own time for the pipe), and the start-up floors."""
    def names(test):
        return ", ".join(r["name"] for r in rows if test(r)) or "none"
    c = tag(CLEAN)
    python, numpy = start["python -c pass" + c], start['python -c "import numpy"' + c]
    floor = start["fastprox info --help" + c]
    reached = lambda r, t=c: r[f"vw{t}"] / r[f"fastprox{t}"] >= target and r[f"vw gz{t}"] / r[f"fastprox gz{t}"] >= target
    lines = [f"- VW's time / fastprox's >= {target} from the file and from the gzip pipe, clean interpreter: "
             f"{names(reached)} (this machine's: {names(lambda r: reached(r, ''))}).",
             f"- Below {target} somewhere (clean): {names(lambda r: not reached(r))}. Why, file by file:"]
    for r in rows:
        if r["vw clean"] / r["fastprox clean"] < target:
            lines.append(f"  - {r['name']}, from the file: " + _why(r, floor, target))
        if r["vw gz clean"] / r["fastprox gz clean"] < target:
            bound = "" if r["zcat"] < r["vw gz clean"] / target else (
                f" zcat alone takes {r['zcat']:.3f} s, more than VW's {r['vw gz clean']:.3f} s / {target}: "
                f"no reader of that pipe can reach the target.")
            lines.append(f"  - {r['name']}, from the gzip pipe: {r['fastprox gz clean']:.3f} s against VW's "
                         f"{r['vw gz clean']:.3f} s; zcat, the reader and the kernel share the two cores."
                         f"{bound}")
    return lines + [
        native_vw(rows, start, [("vw clean", "fastprox clean"), ("vw gz clean", "fastprox gz clean")])
        + " (from the file / the pipe)",
        f"- Start-up floors (clean): doing nothing, fastprox takes {floor:.3f} s and "
        f"VW {start['VW --version' + c]:.3f} s; the interpreter alone takes {python:.3f} s. "
        f"`fastprox train` on LIBSVM files imports no NumPy, whose import would add "
        f"{numpy - python:.3f} s."]


def report(rows, runs, start, load, target, clean):
    lines = [
        "# File to model: `fastprox train` vs Vowpal Wabbit", "",
        "Generated by `python -m bench.file_to_model` (see its docstring for the method).", "",
        describe_machine() + "; 2 cores shared with other work",
        f"- Python {platform.python_version()}, fastprox {fastprox.__version__} "
        f"({Path(fastprox.__file__).parent}), vowpalwabbit {version('vowpalwabbit')}, numpy {np.__version__}",
        f"- Load average (1 min) before / after: {load[0]:.2f} / {load[1]:.2f}.",
        f"- Median of {runs} interleaved rounds; wall seconds of the whole command (start-up included).",
        *interpreter_note(start, clean),
        "- fastprox: `fastprox train FILE --model OUT`, nothing else given (no width, no classes: "
        "one read, the model grows, the labels recognized as they come), the defaults of "
        f"fastprox {fastprox.__version__} (`ProxClassifier`'s docstring), its progress table on stderr. VW 9 "
        "defaults (adaptive, normalized, invariant updates, 2^18 hashed weights: files of more ids "
        "share weights), `--loss_function logistic -f OUT`. From a pipe: `zcat f.svm.gz | fastprox "
        "train - --model OUT` and `zcat f.vw.gz | vw -d /dev/stdin ...` (gzip level 1).",
        "- Progressive loss: the mean logistic loss of each row before its update "
        "(fastprox's report, VW's `average loss`).", "",
        "- Each time: this machine's interpreter / the clean one (VW / fastprox: their ratio each).", "",
        "| data | rows | ids | LIBSVM MB | fastprox s | VW s | **VW / fastprox** | fastprox s (gz pipe) "
        "| VW s (gz pipe) | **VW / fastprox (gz pipe)** | progressive loss fastprox / VW "
        "| accuracy fastprox / VW |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---|",
    ]
    c = tag(CLEAN)
    pair = lambda r, key: f"{r[key]:.3f} / {r[key + c]:.3f}"
    ratio = lambda r, vw, fp: f"{r[vw] / r[fp]:.2f} / **{r[vw + c] / r[fp + c]:.2f}**"
    for r in rows:
        lines.append(
            f"| {r['name']} | {r['rows']:,} | {r['ids']:,} | {r['mb']:.1f} | {pair(r, 'fastprox')} | "
            f"{pair(r, 'vw')} | {ratio(r, 'vw', 'fastprox')} | {pair(r, 'fastprox gz')} | {pair(r, 'vw gz')} "
            f"| {ratio(r, 'vw gz', 'fastprox gz')} | {r['fp_loss']:.4f} / {r['vw_loss']:.4f} "
            f"| {r['fp_acc']:.4f} / {r['vw_acc']:.4f} ({r['test']}) |")
    lines += ["", "Where fastprox's time goes (seconds, median of fresh processes): the "
              "reader alone on one thread; `train`'s pass, the reader in its own thread and the "
              "kernel in the main one; the kernel's steps within it; making and growing the model "
              "(within the pass); writing the model file (the kernel's changed rows, a zip, fsync of "
              "the file and its directory). The whole command adds start-up "
              f"(`fastprox info --help`, clean: {start['fastprox info --help' + c]:.3f} s).", "",
              "| data | parse alone | pass | kernel | make + grow model | write model | "
              "pass + write + start-up |", "|---|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        lines.append(f"| {r['name']} | {r['phase parse']:.3f} | {r['phase pass']:.3f} | "
                     f"{r['phase kernel']:.3f} | {r['phase model']:.3f} | {r['phase write']:.3f} | "
                     f"{r['phase pass'] + r['phase write'] + start['fastprox info --help' + c]:.3f} |")
    return "\n".join(lines + [""] + verdict(rows, start, target)) + "\n"


def main():
    if sys.argv[1:2] == ["--profile"]:      # one fresh process of `profile`
        import json
        print(json.dumps(phases(*sys.argv[2:4])))
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5, help="interleaved rounds per file (median)")
    parser.add_argument("--sets", nargs="+", choices=SETS + list(VW_ONLY), default=SETS, help="files to run (default: all)")
    parser.add_argument("--target", type=float, default=1.5, help="the speed ratio the verdict checks")
    parser.add_argument("--out", type=Path, default=RESULTS, help="the report's path")
    parser.add_argument("--vw-text", action="store_true",
                        help="only the VW-format section: both tools on the same VW file, -q ab too")
    args = parser.parse_args()
    compileall.compile_dir(Path(fastprox.__file__).parent, quiet=1)
    load = [os.getloadavg()[0]]
    with tempfile.TemporaryDirectory() as tmp:
        pythons = {MACHINE: sys.executable, CLEAN: clean_interpreter(Path(tmp) / "clean")}
        rows = []
        for name in (args.sets if not args.vw_text or args.sets != SETS else VW_SETS):
            rows.append((measure_vw_text if args.vw_text else measure)(name, args.runs, Path(tmp), pythons))
            print(rows[-1], flush=True)
        start = startup(max(args.runs, 5), pythons)
        load.append(os.getloadavg()[0])
        if args.vw_text:
            section = vw_text_section(rows, args.runs, load, args.target, start, pythons[CLEAN])
            args.out.write_text(replace_section(args.out, section))
            print(section)
            return
        text = report(rows, args.runs, start, load, args.target, pythons[CLEAN])
    old = args.out.read_text() if args.out.exists() else ""
    kept = old.find(VW_SECTION)         # (the VW-format section, from its own runs, kept)
    args.out.write_text(text + ("\n" + old[kept:] if kept >= 0 else ""))
    print(text)


if __name__ == "__main__":
    main()
