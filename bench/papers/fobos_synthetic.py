"""FOBOS, Duchi & Singer (JMLR 2009) Sec. 7.1-7.2: step-size sensitivity, FOBOS against Pegasos.

Both experiments plot the objective minus its optimum against the number of
steps, on synthetic data generated as the paper describes. FOBOS is
fastprox's ``update="fobos"`` (no intercept: the paper's footnote 2 leaves
the bias out); Pegasos is implemented here (``pegasos``).

Sec. 7.1 (Figures 1-3): n = 400, d = 800, moderately correlated features,
lambda = 0.25/sqrt(n) = 0.0125; l1-regularized logistic regression
(mean log loss + lambda ||w||_1) with deterministic gradients (Fig. 1,
``batch_size = n``) and with 10% of the rows per step (Fig. 2, 40 rows drawn
without replacement at every step), and l2-regularized hinge loss (mean hinge
+ lambda/2 ||w||^2, fastprox's ``penalty="l2"``) with 10% of the rows (Fig.
3); steps eta_1/sqrt(t) (``schedule="invsqrt"``) and eta_1/t (``"inv"``).
Ten initial steps, 10^(k/3) for k = -3..6 (the paper's plotted values 2.15
and 4.6 are on this grid; its ten values are not listed), plus the
"automatic" step the paper derives from the bounds (bold red in its plots):
D/(sqrt(7) G) and D/(4G) for logistic with 1/sqrt(t) and 1/t, D/(4G) for hinge
with 1/sqrt(t) and 1/lambda for hinge with 1/t, where D = log(2)/lambda
(logistic) or sqrt(2/lambda) (hinge) bounds ||w*|| and G is the mean
||x_i||_2 (the paper: "approximately 9"; here it is computed).

Sec. 7.2 (Figure 4): n = 1000, d = 400, x_ij i.i.d. N(0, 1), eta_t =
1/(lambda t) for both methods, one example per step drawn uniformly, the
same draws for both; hinge loss (paper: both methods project onto the ball of
radius 1/sqrt(lambda) after each step) and logistic loss (no projection).

Choices the paper leaves open, and the ones made here:

* Correlated features (7.1): Sigma = F F^T + s I with F a d x 5 matrix of
  i.i.d. N(0, 1) (a five-factor model), s found by bisection so that the mean
  off-diagonal |correlation| is exactly 0.2; x_i = L z_i with L the Cholesky
  factor of Sigma, then x_i / ||x_i||_inf.
* Labels (7.1 does not say): as in Sec. 7.3, y = sign(<w, x>) for a w with
  N(0, 1) entries and half of them zeroed, 5% of the signs flipped. 7.2: the
  paper's 10% flipped.
* lambda for 7.2 is not given; the rule of 7.1, 0.25/sqrt(n) = 0.0079, is used.
* Number of steps: 7.1: the same work for every variant, 40,000 example
  gradients (the paper's budget was wall-clock time, which is why its
  deterministic FOBOS "could not take as many steps"): 100 deterministic
  steps, 1,000 steps of 40 rows. 7.2: 100,000 steps (100 passes' worth;
  --quick: 10,000): with this small lambda and eta_1 = 1/lambda = 126 the
  gap only falls like 1/t, from ~1e4.
* Repetitions: 7.1 averages 10 independent data sets (the paper: "each
  experiment 10 times"), 7.2 averages 20 (the paper's 20 runs); --quick: 1
  and 3.
* The projection (7.2, hinge): fastprox has no projection step, so FOBOS runs
  without it, and Pegasos is shown both with and without. FOBOS' l2 update
  keeps ||w_t|| <= G/lambda by itself (the paper's Lemma 9).
* The optimum: LIBLINEAR (``liblinear-official``; -s 6 for l1-logistic,
  -s 3 for the hinge (dual), -s 0 for l2-logistic, no bias, C = 1/(lambda n),
  tolerance 1e-8); if an iterate ever does better, the best value seen is
  used instead and the report says by how much.
"""
import os

import numpy as np
import scipy.sparse as sp
from scipy.special import expit

from fastprox import ProxClassifier

from ._common import (RULE, add_common_arguments, liblinear_fit, lower, main, md_table, pyplot, start,
                      verdict, write_report)

NAME = "fobos_synthetic"
CLASSES = np.array([-1.0, 1.0])
SENS_N, SENS_D, SENS_ROWS, SENS_SHARE = 400, 800, 40_000, 0.1
STEP_GRID = tuple(10.0 ** (k / 3) for k in range(-3, 7))
MEAN_CORRELATION, FACTORS = 0.2, 5
PEG_N, PEG_D, PEG_STEPS, PEG_QUICK_STEPS = 1000, 400, 100_000, 10_000
CHECKPOINTS = 40
# Sensitivity panels: (figure, loss, penalty, rows per step as a share of n or None for all).
PANELS = (("Fig. 1 (deterministic)", "log", "l1", None),
          ("Fig. 2 (10% per step)", "log", "l1", SENS_SHARE),
          ("Fig. 3 (10% per step)", "hinge", "l2", SENS_SHARE))
SCHEDULES = ("invsqrt", "inv")


# ---------------------------------------------------------------- data
def correlated_covariance(d, rng, target=MEAN_CORRELATION, factors=FACTORS):
    """F F^T + s I with s set (bisection) so that the mean off-diagonal |correlation| is target."""
    F = rng.standard_normal((d, factors))
    low_rank = F @ F.T
    off = ~np.eye(d, dtype=bool)

    def mean_corr(s):
        cov = low_rank + s * np.eye(d)
        scale = np.sqrt(np.diag(cov))
        return float(np.abs(cov / np.outer(scale, scale))[off].mean())

    lo, hi = 1e-6, 1e3
    for _ in range(60):
        mid = np.sqrt(lo * hi)
        lo, hi = (mid, hi) if mean_corr(mid) > target else (lo, mid)
    return low_rank + hi * np.eye(d)


def labels(X, rng, flip):
    """sign(<w, x>) for a half-zeroed N(0, 1) vector w, with a share `flip` of signs negated."""
    w = rng.standard_normal(X.shape[1]) * (rng.random(X.shape[1]) < 0.5)
    y = np.where(X @ w > 0, 1.0, -1.0)
    flipped = rng.random(X.shape[0]) < flip
    return np.where(flipped, -y, y)


def sensitivity_data(rng, n=SENS_N, d=SENS_D):
    """Sec. 7.1's moderately correlated data, rows scaled to ||x||_inf = 1; 5% label noise."""
    L = np.linalg.cholesky(correlated_covariance(d, rng))
    X = rng.standard_normal((n, d)) @ L.T
    X /= np.abs(X).max(axis=1, keepdims=True)
    return X, labels(X, rng, 0.05)


def pegasos_data(rng, n=PEG_N, d=PEG_D):
    """Sec. 7.2's data: i.i.d. N(0, 1) features, 10% label noise."""
    X = rng.standard_normal((n, d))
    return X, labels(X, rng, 0.10)


# ---------------------------------------------------------------- objectives
def objective(w, X, y, loss, penalty, lam):
    """Mean loss + lambda ||w||_1 (l1) or + lambda/2 ||w||^2 (l2)."""
    z = y * (X @ w)
    mean_loss = np.mean(np.logaddexp(0.0, -z)) if loss == "log" else np.mean(np.maximum(0.0, 1.0 - z))
    return mean_loss + (lam * np.abs(w).sum() if penalty == "l1" else 0.5 * lam * w @ w)


def optimum(X, y, loss, penalty, lam):
    """The batch optimum's objective, by LIBLINEAR without a bias."""
    solver = {("log", "l1"): 6, ("hinge", "l2"): 3, ("log", "l2"): 0}[loss, penalty]
    w, _ = liblinear_fit(X, y, f"-s {solver} -c {1.0 / (lam * X.shape[0]):.17g} -e 1e-8")
    return objective(w, X, y, loss, penalty, lam)


def checkpoints(T, count=CHECKPOINTS):
    """Roughly log-spaced step counts from 1 to T."""
    return np.unique(np.geomspace(1, T, count).astype(int))


# ---------------------------------------------------------------- runs
def fobos_curve(X, y, rows, batch, loss, penalty, lam, schedule, eta0, marks):
    """Objective of fastprox FOBOS after each step count in `marks`; `rows` lists the rows of
    all steps in order, `batch` rows per step."""
    clf = ProxClassifier(loss=loss, penalty=penalty, alpha=lam, update="fobos", schedule=schedule,
                         step="gradient", eta0=eta0, batch_size=batch, fit_intercept=False, shuffle=False)
    values, done = [], 0
    for mark in marks:
        chunk = rows[done * batch:mark * batch]
        clf.partial_fit(X[chunk], y[chunk], classes=CLASSES)
        done = mark
        values.append(objective(clf.coef_.ravel(), X, y, loss, penalty, lam))
    return np.array(values)


def pegasos(X, y, rows, loss, lam, project, marks):
    """Pegasos (Shalev-Shwartz et al. 2007), one example per step, eta_t = 1/(lambda t):
    w <- (1 - eta lambda) w - eta grad loss, then optionally onto the ball of radius
    1/sqrt(lambda). The objective (l2) after each step count in `marks`."""
    w, values, marks_left = np.zeros(X.shape[1]), [], list(marks)
    radius = 1.0 / np.sqrt(lam)
    for t, i in enumerate(rows[:marks[-1]], start=1):
        eta = 1.0 / (lam * t)
        z = y[i] * (X[i] @ w)
        slope = (-y[i] if z < 1.0 else 0.0) if loss == "hinge" else -y[i] * expit(-z)
        w = (1.0 - eta * lam) * w - eta * slope * X[i]
        if project:
            norm = np.linalg.norm(w)
            if norm > radius:
                w *= radius / norm
        if t == marks_left[0]:
            values.append(objective(w, X, y, loss, "l2", lam))
            marks_left.pop(0)
    return np.array(values)


def automatic_steps(X, lam):
    """The paper's initial steps from D and G (Sec. 7.1): {(loss, schedule): eta_1}."""
    G = float(np.linalg.norm(X, axis=1).mean())
    d_log, d_hinge = np.log(2.0) / lam, np.sqrt(2.0 / lam)
    return {("log", "invsqrt"): d_log / (np.sqrt(7.0) * G), ("log", "inv"): d_log / (4.0 * G),
            ("hinge", "invsqrt"): d_hinge / (4.0 * G), ("hinge", "inv"): 1.0 / lam}, G


def sensitivity(reps, seed):
    """Sec. 7.1: per panel and schedule, the mean over reps of objective - optimum for every
    initial step of the grid and for the automatic one; and the G and optimum shortfalls seen."""
    lam = 0.25 / np.sqrt(SENS_N)
    gaps = {(p[0], s): {} for p in PANELS for s in SCHEDULES}
    notes = {"G": [], "shortfall": 0.0}
    for r in range(reps):
        rng = np.random.default_rng([seed, 71, r])
        X, y = sensitivity_data(rng)
        auto, G = automatic_steps(X, lam)
        X = sp.csr_matrix(X)
        notes["G"].append(G)
        for figure, loss, penalty, share in PANELS:
            batch = SENS_N if share is None else int(share * SENS_N)
            steps = SENS_ROWS // batch
            marks = checkpoints(steps)
            rows = (np.tile(np.arange(SENS_N), steps) if share is None else
                    np.concatenate([rng.choice(SENS_N, batch, replace=False) for _ in range(steps)]))
            best = optimum(X, y, loss, penalty, lam)
            for schedule in SCHEDULES:
                candidates = {**{eta: eta for eta in STEP_GRID}, "auto": auto[loss, schedule]}
                curves = {key: fobos_curve(X, y, rows, batch, loss, penalty, lam, schedule, eta, marks)
                          for key, eta in candidates.items()}
                low = min(c.min() for c in curves.values())
                notes["shortfall"] = max(notes["shortfall"], best - low)
                best_here = min(best, low)
                cell = gaps[figure, schedule]
                cell["marks"] = marks
                for key, curve in curves.items():
                    cell.setdefault(key, []).append(curve - best_here)
                cell.setdefault("auto_eta", []).append(auto[loss, schedule])
        print(f"  sensitivity repetition {r + 1}/{reps}", flush=True)
    mean = {k: {key: v if key == "marks" else float(np.mean(v)) if key == "auto_eta" else np.mean(v, axis=0)
                for key, v in cell.items()} for k, cell in gaps.items()}
    return {"gaps": mean, "lambda": lam, "G": float(np.mean(notes["G"])),
            "shortfall": notes["shortfall"]}


def comparison(reps, seed, steps=PEG_STEPS):
    """Sec. 7.2: mean over reps of objective - optimum for FOBOS and Pegasos, hinge and logistic."""
    lam = 0.25 / np.sqrt(PEG_N)
    marks = checkpoints(steps)
    curves = {"hinge": {}, "log": {}}
    shortfall = 0.0
    for r in range(reps):
        rng = np.random.default_rng([seed, 72, r])
        X, y = pegasos_data(rng)
        rows = rng.integers(0, PEG_N, steps)
        for loss in curves:
            runs = {"FOBOS (fastprox)": fobos_curve(X, y, rows, 1, loss, "l2", lam, "inv", 1.0 / lam, marks),
                    "Pegasos": pegasos(X, y, rows, loss, lam, False, marks)}
            if loss == "hinge":
                runs["Pegasos + projection"] = pegasos(X, y, rows, loss, lam, True, marks)
            best = optimum(X, y, loss, "l2", lam)
            low = min(c.min() for c in runs.values())
            shortfall = max(shortfall, best - low)
            for key, curve in runs.items():
                curves[loss].setdefault(key, []).append(curve - min(best, low))
        print(f"  Pegasos comparison run {r + 1}/{reps}", flush=True)
    return {"marks": marks, "lambda": lam, "shortfall": shortfall,
            "curves": {loss: {k: np.mean(v, axis=0) for k, v in c.items()} for loss, c in curves.items()},
            "spread": {loss: {k: np.std(v, axis=0) for k, v in c.items()} for loss, c in curves.items()}}


# ---------------------------------------------------------------- plots and report
def plot_sensitivity(sens, path):
    """Figures 1-3: one row per figure, columns 1/sqrt(t) and 1/t; the automatic step in bold red."""
    plt = pyplot()
    fig, axes = plt.subplots(len(PANELS), 2, figsize=(12, 13))
    colors = plt.cm.viridis(np.linspace(0, 1, len(STEP_GRID)))
    for row, (figure, loss, penalty, _) in enumerate(PANELS):
        for col, schedule in enumerate(SCHEDULES):
            ax, cell = axes[row, col], sens["gaps"][figure, schedule]
            for color, eta in zip(colors, STEP_GRID):
                ax.plot(cell["marks"], np.maximum(cell[eta], 1e-12), color=color, lw=1, label=f"{eta:.3g}")
            ax.plot(cell["marks"], np.maximum(cell["auto"], 1e-12), color="red", lw=2.5,
                    label=f"auto {cell['auto_eta']:.3g}")
            rate = "1/sqrt(t)" if schedule == "invsqrt" else "1/t"
            name = "l1-logistic" if loss == "log" else "l2-hinge"
            ax.set(xscale="log", yscale="log", title=f"{figure}: {name}, eta_t = eta_1 {rate}",
                   xlabel="steps", ylabel="f(w_t) + r(w_t) - optimum")
            ax.grid(True, which="both", alpha=0.3)
            ax.legend(fontsize=6, ncol=2, title="eta_1", title_fontsize=7)
    fig.suptitle(f"FOBOS Sec. 7.1: n = {SENS_N}, d = {SENS_D}, lambda = {sens['lambda']:.4g}, "
                 "mean over data sets")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def plot_comparison(comp, path):
    """Figure 4: FOBOS against Pegasos, hinge (left) and logistic (right)."""
    plt = pyplot()
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.5))
    styles = {"FOBOS (fastprox)": ("C3", "-"), "Pegasos": ("C0", "--"), "Pegasos + projection": ("C0", ":")}
    for ax, loss in zip(axes, ("hinge", "log")):
        for key, curve in comp["curves"][loss].items():
            color, ls = styles[key]
            ax.plot(comp["marks"], np.maximum(curve, 1e-12), color=color, ls=ls, lw=1.8, label=key)
        ax.set(xscale="log", yscale="log", xlabel="steps (one example each)",
               ylabel="objective - optimum",
               title=f"{'hinge (SVM)' if loss == 'hinge' else 'logistic'} + lambda/2 ||w||^2")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend()
    fig.suptitle(f"FOBOS Sec. 7.2 / Fig. 4: n = {PEG_N}, d = {PEG_D}, lambda = {comp['lambda']:.4g}, "
                 "eta_t = 1/(lambda t)")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def final_gaps(sens):
    """Markdown: the final objective gap of every initial step, per panel and schedule."""
    header = ["figure", "schedule"] + [f"{eta:.3g}" for eta in STEP_GRID] + ["auto (eta_1)"]
    rows = []
    for figure, *_ in PANELS:
        for schedule in SCHEDULES:
            cell = sens["gaps"][figure, schedule]
            rows.append([figure, schedule] + [f"{cell[eta][-1]:.2e}" for eta in STEP_GRID]
                        + [f"{cell['auto'][-1]:.2e} ({cell['auto_eta']:.3g})"])
    return md_table(header, rows)


def verdicts(sens, comp):
    """One line per claim of Sec. 7.1 and 7.2."""
    g = sens["gaps"]
    final = lambda fig, sch: {eta: g[fig, sch][eta][-1] for eta in STEP_GRID}
    best = lambda fig, sch: min(STEP_GRID, key=lambda eta: final(fig, sch)[eta])
    lines = []
    near = [g[f, s]["auto"][-1] <= 3 * min(final(f, s).values()) for f, *_ in PANELS for s in SCHEDULES]
    lines.append(verdict(all(near), "Sec. 7.1: the initial steps estimated from D and G are 'competitive with "
                         "the best initial step sizes'",
                         f"Rule: final gap of the automatic step at most 3x the best of the grid's; true in "
                         f"{sum(near)} of {len(near)} panels (table below)."))
    for fig in (PANELS[0][0], PANELS[1][0]):
        b = best(fig, "invsqrt")
        lines.append(verdict(1.0 <= b <= 4.7, f"{fig}, l1-logistic with 1/sqrt(t): the best initial steps are "
                             "'near 1.5', 2.15 good, 4.6 good too",
                             f"Rule: the grid's best final gap at eta_1 in [1, 4.64]; best here: {b:.3g}."))
    b = best(PANELS[2][0], "inv")
    lines.append(verdict(b >= STEP_GRID[-2], "Fig. 3, l2-hinge with 1/t: the two largest initial steps perform "
                         "best (1/lambda = 80)",
                         f"Rule: the best of the grid is one of its two largest ({STEP_GRID[-2]:.3g}, "
                         f"{STEP_GRID[-1]:.3g}); best here: {b:.3g}."))
    cell = final(PANELS[2][0], "invsqrt")
    lines.append(verdict(cell[STEP_GRID[-1]] > g[PANELS[2][0], "invsqrt"]["auto"][-1],
                         "Fig. 3, l2-hinge with 1/sqrt(t): such large initial steps are too large there",
                         f"Rule: the largest grid step ({STEP_GRID[-1]:.3g}) ends worse than the automatic one "
                         f"({cell[STEP_GRID[-1]]:.2e} vs {g[PANELS[2][0], 'invsqrt']['auto'][-1]:.2e})."))
    spread = [max(final(f, s).values()) / max(min(final(f, s).values()), 1e-300)
              for f, *_ in PANELS for s in SCHEDULES]
    lines.append(verdict(min(spread) >= 10, "Sec. 7.1: 'all methods are somewhat sensitive to initial step size'",
                         "Rule: the worst final gap of the grid at least 10x the best, in every panel; ratios "
                         + ", ".join(f"{s:.0f}" for s in spread) + "."))
    h, l = comp["curves"]["hinge"], comp["curves"]["log"]
    ratio_h = h["FOBOS (fastprox)"][-1] / h["Pegasos + projection"][-1]
    lines.append(verdict(1 / 3 <= ratio_h <= 3, "Fig. 4 left: FOBOS 'performs comparably to Pegasos' on the "
                         "hinge loss (how 'quickly' both approach the optimum depends on lambda, which the "
                         "paper does not give)",
                         f"Rule: final gaps within a factor 3 (FOBOS without projection / Pegasos with it: "
                         f"{h['FOBOS (fastprox)'][-1]:.2e} / {h['Pegasos + projection'][-1]:.2e}; Pegasos "
                         f"without projection {h['Pegasos'][-1]:.2e})."))
    f_, p_ = l["FOBOS (fastprox)"], l["Pegasos"]
    sf, sp = comp["spread"]["log"]["FOBOS (fastprox)"], comp["spread"]["log"]["Pegasos"]
    ahead = float(np.mean([lower(f_[i], p_[i], sf[i], sp[i]) for i in range(len(f_))]))
    behind = lower(p_[-1], f_[-1], sp[-1], sf[-1])
    end = f_[-1] / p_[-1] - 1.0
    lines.append(verdict(not behind and ahead >= 0.5,
                         "Fig. 4 right: without projection, on the logistic loss, FOBOS slightly outperforms "
                         "Pegasos",
                         "Rule: FOBOS' mean gap below Pegasos' beyond the margin (the larger std over the data "
                         "sets) at half the checkpoints or more, and not above it beyond the margin at the end: "
                         f"lower beyond the margin at {100 * ahead:.0f}% of checkpoints; final {f_[-1]:.3e} ± "
                         f"{sf[-1]:.1e} vs {p_[-1]:.3e} ± {sp[-1]:.1e} ({100 * end:+.2f}%). Without the margin "
                         f"FOBOS is lower at {100 * float(np.mean(f_ < p_)):.0f}% of checkpoints; the lead is in "
                         "the first steps: at t = 1, "
                         "eta lambda = 1, FOBOS gives w_2 = -eta g / 2 (its shrinkage 1/(1 + eta lambda)), "
                         "Pegasos -eta g; the two updates coincide as t grows."))
    lines.append(verdict(None, "Sec. 7.1: constant steps eta_1/sqrt(T), other sizes n and d, the correlation study",
                         "Discussed only qualitatively in the paper (and Fig. 6 is Sec. 7.3); not run."))
    return lines


def add_arguments(parser):
    """The options of ``python -m bench.papers fobos_synthetic``."""
    return add_common_arguments(parser, "1 data set for Sec. 7.1 and 3 runs of 10,000 steps "
                                        "for Sec. 7.2 instead of 10 and 20 of 100,000 (2-3 minutes)")


def run(args):
    """Both experiments; write fobos_synthetic.md and two PNGs."""
    started = start(args)
    sens_reps, comp_reps = (1, 3) if args.quick else (10, 20)
    print(f"{NAME}: Sec. 7.1, {sens_reps} data sets", flush=True)
    sens = sensitivity(sens_reps, args.seed)
    print(f"{NAME}: Sec. 7.2, {comp_reps} runs", flush=True)
    comp = comparison(comp_reps, args.seed, PEG_QUICK_STEPS if args.quick else PEG_STEPS)
    os.makedirs(args.out_dir, exist_ok=True)
    plot_sensitivity(sens, os.path.join(args.out_dir, f"{NAME}_sensitivity.png"))
    plot_comparison(comp, os.path.join(args.out_dir, f"{NAME}_pegasos.png"))
    auto = sens["gaps"]
    sections = [
        "Duchi & Singer, *Efficient Online and Batch Learning Using Forward Backward Splitting* (JMLR "
        "2009), Sec. 7.1 (Figures 1-3) and 7.2 (Figure 4), on the paper's kind of synthetic data. The "
        "paper prints no numbers for these figures, only claims; the numbers it does give are checked: "
        f"lambda = 0.25/sqrt(n) = {sens['lambda']:.4g} ('1/lambda = 80'), G ~ 9 (measured mean ||x||_2: "
        f"{sens['G']:.2f}), and the automatic steps ~2.3 and ~1.5 (logistic) and ~0.35 (hinge, "
        "1/sqrt(t)); measured: " + ", ".join(
            f"{f.split(' ')[0]} {f.split(' ')[1]} {s} {auto[f, s]['auto_eta']:.3g}"
            for f, *_ in PANELS[1:] for s in SCHEDULES) + ". All choices the paper leaves open are in the "
        "module docstring (`bench/papers/fobos_synthetic.py`). The OCR of Sec. "
        "7.1-7.2 is clean (the formulas for f and the step heuristics read correctly).", "",
        "## Verdicts", "", RULE, "", "Here: spreads over the data sets (Sec. 7.2: one data set a run); the other "
        "verdicts are thresholds stated in each line.", "", *verdicts(sens, comp), "",
        "## Sec. 7.1: sensitivity to the initial step (Figures 1-3)", "",
        f"![sensitivity]({NAME}_sensitivity.png)", "",
        f"Objective minus optimum after {SENS_ROWS:,} example gradients, mean over {sens_reps} data sets, by initial "
        "step eta_1:", "", final_gaps(sens), "",
        "## Sec. 7.2: FOBOS against Pegasos (Figure 4)", "",
        f"![Pegasos]({NAME}_pegasos.png)", "",
        md_table(["loss", "method"] + [f"gap after {m} steps" for m in comp["marks"][[9, 19, 29, -1]]],
                 [[loss, key] + [f"{v:.2e}" for v in curve[[9, 19, 29, -1]]]
                  for loss, c in comp["curves"].items() for key, curve in c.items()]), "",
        f"Optimum: LIBLINEAR; the best iterate ever beat it by at most {max(sens['shortfall'], comp['shortfall']):.1e} "
        "(then the best iterate is the reference).",
    ]
    write_report(args.out_dir, NAME, "FOBOS (Duchi & Singer 2009), Sec. 7.1-7.2: synthetic data",
                 sections, started, args)
    return 0


if __name__ == "__main__":
    main(__doc__, add_arguments, run)
