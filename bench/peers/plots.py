"""The suite's figures (matplotlib, Agg): one panel per problem in each.

- throughput: millions of non-zeros per second of one pass from memory;
- accuracy vs time: one-pass test accuracy against one-pass seconds;
- objective vs passes: relative gap to LIBLINEAR's optimum after each pass.
"""
import math

from .suite import GAP

LIBRARY_MAPS = {"fastprox": "Blues", "scikit-learn": "Oranges", "Vowpal Wabbit": "Greens",
                "river": "Purples", "lightning": "Reds"}
MARKERS = "osD^v<>pP*Xh"


def _styles(learners):
    """name -> plot style for (name, library) pairs: a shade of the library's
    colour and a marker per learner, the same in every panel."""
    import matplotlib
    by_library = {}
    for name, library in learners:
        by_library.setdefault(library, [])
        if name not in by_library[library]:
            by_library[library].append(name)
    styles = {}
    for library, names in by_library.items():
        cmap = matplotlib.colormaps[LIBRARY_MAPS.get(library, "Greys")]
        for i, name in enumerate(names):
            shade = 0.9 - 0.5 * i / max(1, len(names) - 1)
            styles[name] = dict(color=cmap(shade), marker=MARKERS[i % len(MARKERS)])
    return styles


def _grid(n, width=5.5, height=4.0):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    cols = min(3, n)
    rows = math.ceil(n / cols)
    fig, axes = plt.subplots(rows, cols, figsize=(width * cols, height * rows), squeeze=False)
    for ax in axes.flat[n:]:
        ax.set_visible(False)
    return fig, list(axes.flat[:n])


def _save(fig, path, title, legend_from=None):
    fig.suptitle(title)
    if legend_from is not None:
        fig.legend(*legend_from.get_legend_handles_labels(), loc="center left", bbox_to_anchor=(1.0, 0.5),
                   fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=90, bbox_inches="tight")
    import matplotlib.pyplot as plt
    plt.close(fig)


def throughput(results, path):
    fig, axes = _grid(len(results), height=0.3 * max(len(r["one_pass"]) for r in results) + 1.2)
    styles = _styles((n, r["library"]) for result in results for n, r in result["one_pass"].items())
    for ax, result in zip(axes, results):
        names = list(result["one_pass"])[::-1]
        rates = [result["one_pass"][n]["nnz"] / result["one_pass"][n]["seconds"] / 1e6 for n in names]
        colors = [styles[n]["color"] for n in names]
        ax.barh(names, rates, color=colors)
        for y, rate in enumerate(rates):
            ax.text(rate, y, f" {rate:.1f}", va="center", fontsize=7)
        ax.set_xscale("log")
        ax.set_xlabel("M non-zeros / s, one pass from memory (log)")
        ax.set_title(result["name"], fontsize=9)
        ax.tick_params(axis="y", labelsize=7)
    _save(fig, path, "One-pass throughput (river: on a subset)")


def accuracy_vs_time(results, path):
    from matplotlib.ticker import NullFormatter
    fig, axes = _grid(len(results))
    styles = _styles((n, r["library"]) for result in results for n, r in result["one_pass"].items())
    for ax, result in zip(axes, results):
        for name, r in result["one_pass"].items():
            seconds = r["seconds"] * result["nnz"] / r["nnz"]
            ax.scatter(seconds, r["test_accuracy"], label=name, **styles[name])
        if "optimum" in result:
            ax.axhline(result["optimum"]["test_accuracy"], color="black", lw=0.8, ls="--",
                       label="LIBLINEAR optimum")
        ax.set_xscale("log")
        ax.xaxis.set_minor_formatter(NullFormatter())
        ax.set_xlabel("seconds, one pass (river: scaled from its subset)")
        ax.set_ylabel("test accuracy")
        ax.set_title(result["name"], fontsize=9)
    _save(fig, path, "One pass: test accuracy vs time", axes[0])


def objective_vs_passes(results, path):
    results = [r for r in results if "curves" in r]
    if not results:
        return
    fig, axes = _grid(len(results))
    styles = _styles((n, r["library"]) for result in results for n, r in result["curves"].items())
    for ax, result in zip(axes, results):
        optimum = result["optimum"]["objective"]
        for name, r in result["curves"].items():
            passes = [p for p, _, _ in r["curve"]]
            gaps = [max(f / optimum - 1, 1e-6) for _, _, f in r["curve"]]
            ax.plot(passes, gaps, label=name, ms=4, **styles[name])
        ax.axhline(GAP, color="black", lw=0.8, ls="--", label=f"{GAP:.0%} gap")
        ax.set_yscale("log")
        ax.set_xlabel("passes")
        ax.set_ylabel("objective / optimum - 1 (log)")
        ax.set_title(result["name"], fontsize=9)
    _save(fig, path, "Training objective vs passes (LIBLINEAR -s 6 optimum)", axes[0])


def write_all(results, prefix):
    """prefix_throughput.png, prefix_accuracy_time.png, prefix_objective_passes.png; their paths."""
    paths = [f"{prefix}_throughput.png", f"{prefix}_accuracy_time.png", f"{prefix}_objective_passes.png"]
    for draw, path in zip((throughput, accuracy_vs_time, objective_vs_passes), paths):
        draw(results, path)
    return paths
