"""Markdown of the suite's results: setup, the targets of issue 6 as ratios
measured in the same run, and per problem the one-pass, file, quality and
passes-to-optimum tables."""
import platform
from importlib import metadata

from .suite import GAP

#: The fastprox learner each speed target is about, and the reference rule of the ratio columns.
FOBOS = "fastprox fobos+invsqrt"
DEFAULTS = "fastprox defaults"
PACKAGES = ("fastprox", "numpy", "scipy", "scikit-learn", "vowpalwabbit", "river",
            "sklearn-contrib-lightning", "liblinear-official", "matplotlib")


def versions():
    """'name version' of every package the suite may use that is installed."""
    found = []
    for name in PACKAGES:
        try:
            found.append(f"{name} {metadata.version(name)}")
        except metadata.PackageNotFoundError:
            pass
    return ", ".join(found) + f", Python {platform.python_version()}"


def _speed_targets(result):
    """(target, needed ratio, measured ratio) rows of one problem; ratio = their seconds / ours."""
    s = {name: r["seconds"] for name, r in result["one_pass"].items() if r["rows"] == result["rows"]}
    rows = []

    def add(ours, theirs, needed, label=None):
        if ours in s and theirs in s:
            rows.append((label or f"{ours} vs {theirs}", needed, s[theirs] / s[ours]))

    for peer, needed in (("sklearn SGD l1", 2.0), ("VW defaults", 3.0), ("VW --sgd --l1", 3.0),
                         ("lightning AdaGrad", 3.0)):
        add(FOBOS, peer, needed)
    for ours in ("fastprox rda+adagrad", "fastprox ftrl+adagrad"):
        add(ours, "sklearn SGD l1", 1.5)
    for ours in (FOBOS, "fastprox rda+adagrad", "fastprox ftrl+adagrad"):
        add(ours, "sklearn SGD l2", 1 / 1.5, f"{ours} vs sklearn SGD l2 (within 1.5x: >= 0.67)")
    files = {name: r["seconds"] for name, r in result["file"].items()}
    for ours in (DEFAULTS, FOBOS):
        if ours in files and "VW defaults" in files:
            rows.append((f"file to model: {ours} vs VW defaults from text", 1.0,
                         files["VW defaults"] / files[ours]))
    return rows


def targets(results):
    """The targets table: one row per target, one column per problem; each
    cell the measured ratio (> 1: fastprox faster or as needed) and its verdict."""
    cells = {}
    for result in results:
        for label, needed, ratio in _speed_targets(result):
            cells.setdefault((label, f"{needed:.2f}x"), {})[result["name"]] = (
                f"{ratio:.2f}x {'met' if ratio >= needed else '**not met**'}")
        one = result["one_pass"]
        if DEFAULTS in one and "VW defaults" in one:
            ours, theirs = one[DEFAULTS]["test_accuracy"], one["VW defaults"]["test_accuracy"]
            cells.setdefault(("test accuracy: fastprox defaults vs VW defaults", ">="), {})[result["name"]] = (
                f"{ours:.4f} vs {theirs:.4f} {'met' if ours >= theirs else '**not met**'}")
    names = [r["name"] for r in results]
    lines = ["| target | needed | " + " | ".join(names) + " |", "|---|---:|" + "---|" * len(names)]
    for (label, needed), row in cells.items():
        lines.append(f"| {label} | {needed} | " + " | ".join(row.get(n, "-") for n in names) + " |")
    return "\n".join(lines)


def _one_pass_table(result, optimum):
    one = result["one_pass"]
    base = {name: one[name]["seconds"] for name in (FOBOS, DEFAULTS) if name in one}
    head = ("| learner | seconds | M nnz/s | " + " | ".join(f"÷ {n[9:]}" for n in base)
            + " | train objective | gap to optimum | test accuracy | test log-loss | non-zeros |")
    lines = [head, "|---" + "|---:" * (len(base) + 7) + "|"]
    for name, r in one.items():
        subset = r["rows"] < result["rows"]
        seconds = r["seconds"] * (result["nnz"] / r["nnz"] if subset else 1)
        label = f"{name} (first {r['rows']:,} rows; seconds scaled)" if subset else name
        ratios = " | ".join(f"{seconds / b:.2f}" for b in base.values())
        gap = f"{100 * (r['objective'] / optimum - 1):.2f}%" if optimum else "-"
        lines.append(f"| {label} | {seconds:.4f} | {r['nnz'] / r['seconds'] / 1e6:.1f} | {ratios} | "
                     f"{r['objective']:.5f} | {gap} | {r['test_accuracy']:.4f} | {r['test_log_loss']:.4f} "
                     f"| {r['nonzeros']:,} |")
    if "optimum" in result:
        o = result["optimum"]
        lines.append(f"| LIBLINEAR -s 6 (batch, to convergence) | {o['seconds']:.4f} | - | "
                     + " | ".join("-" for _ in base) + f" | {o['objective']:.5f} | 0 | {o['test_accuracy']:.4f} "
                     f"| {o['test_log_loss']:.4f} | {o['nonzeros']:,} |")
    return "\n".join(lines)


def _file_table(result):
    files = result["file"]
    if not files:
        return ""
    vw = files.get("VW defaults", {}).get("seconds")
    lines = ["| learner, from the training file | seconds | MB/s | M nnz/s | ÷ VW defaults (text) |",
             "|---|---:|---:|---:|---:|"]
    for name, r in files.items():
        source = "VW text format, parsing included" if r["library"] == "Vowpal Wabbit" else "LIBSVM file"
        ratio = f"{r['seconds'] / vw:.2f}" if vw else "-"
        lines.append(f"| {name} ({source}) | {r['seconds']:.4f} | {r['bytes'] / r['seconds'] / 1e6:.0f} | "
                     f"{result['nnz'] / r['seconds'] / 1e6:.1f} | {ratio} |")
    return "\n".join(lines)


def _passes_table(result, passes):
    optimum = result["optimum"]["objective"]
    lines = [f"| learner | gap after 1 pass | gap after {passes} | passes to {GAP:.0%} | seconds to {GAP:.0%} |",
             "|---|---:|---:|---:|---:|"]
    for name, r in result["curves"].items():
        first, last = (100 * (r["curve"][i][2] / optimum - 1) for i in (0, -1))
        reached = r["passes_to_gap"]
        to_gap = f"{reached} | {r['seconds_to_gap']:.3f}" if reached else f"> {passes} | -"
        lines.append(f"| {name} | {first:.2f}% | {last:.2f}% | {to_gap} |")
    return "\n".join(lines)


def accuracy_summary(results):
    """Test accuracy of every learner (rows) on every problem (columns)."""
    names = list(dict.fromkeys(n for r in results for n in r["one_pass"]))
    lines = ["| learner | " + " | ".join(r["name"] for r in results) + " |",
             "|---" + "|---:" * len(results) + "|"]
    for name in names:
        cells = [f"{r['one_pass'][name]['test_accuracy']:.4f}" if name in r["one_pass"] else "-" for r in results]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    if all("optimum" in r for r in results):
        lines.append("| LIBLINEAR -s 6 (batch optimum) | "
                     + " | ".join(f"{r['optimum']['test_accuracy']:.4f}" for r in results) + " |")
    return "\n".join(lines)


def problem_section(result, passes):
    optimum = result.get("optimum", {}).get("objective")
    parts = [f"### {result['name']}", "",
             f"{result['description']}: {result['rows']:,} training rows, d = {result['n_features']:,}, "
             f"{result['nnz']:,} non-zeros, {result['positive_share']:.1%} positive; "
             f"{result['test_rows']:,} test rows; alpha = {result['alpha']:.3g}.", "",
             "One pass from memory (÷ columns: this learner's seconds over fastprox's in the same run, "
             "so > 1 means fastprox is faster):", "", _one_pass_table(result, optimum), ""]
    files = _file_table(result)
    if files:
        parts += ["One pass from the training file to a model:", "", files, ""]
    if "curves" in result:
        parts += ["Passes to the objective (gap = objective / LIBLINEAR's optimum - 1):", "",
                  _passes_table(result, passes), ""]
    return "\n".join(parts)
