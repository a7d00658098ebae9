"""RDA, Xiao (JMLR 2010) Sec. 6: l1-RDA against truncated gradient on MNIST digit pairs.

l1-regularized logistic regression, one pass, on pairs of digits; Figures 3,
4 and 7 of the paper, with the batch optimum as reference. The paper prints
no numbers for these figures (notes-rda.md Sec. 7): its claims are
qualitative, and the verdicts below test each one with an explicit rule.

The paper's setting, kept:

* Raw gray levels 0-255 as features ("no preprocessing"; SOURCES.md: the
  file stores the raw levels), an unpenalized bias, loss log(1 + exp(-y p)),
  Psi = lambda ||w||_1 with lambda per example (fastprox's ``alpha``).
* l1-RDA with beta_t = gamma sqrt(t), gamma = 5000 (``update="rda",
  schedule="invsqrt", eta0=1/gamma``), with rho = 0 and with gamma*rho = 25
  (``rda_rho=0.005``: the threshold lambda + gamma*rho/sqrt(t)).
* Truncated gradient (Langford et al. 2009, eq. 29 of Xiao) with theta = inf
  and the constant step alpha = sqrt(2/T)/gamma: K = 1 is FOBOS with l1, run
  by fastprox (``update="fobos", schedule="constant"``); K = 10 truncates by
  alpha*lambda*K every tenth step and is implemented here; SGD (the paper's
  third baseline, w -= alpha (g + lambda sgn(w))) likewise.
* NNZ: exact zeros for RDA and TG K = 1; |w| > 1e-5 for SGD, TG K = 10 and
  every averaged w-bar_T = (1/T) sum_{t<=T} w_t, as the paper counts.
  The bias is not counted.

What differs, and the choices the paper leaves open:

* Data: the paper trains on the ~12,000 training digits of a pair and tests
  on its ~2,000 test digits. Only the 10,000 MNIST *test* digits are here
  (mnist_t10k), so each pair's ~2,000 rows are split once, at random (seeded
  by --seed and the pair), into 75% training and 25% held out: T is ~1,500,
  not 12,000, and the test error is measured on ~500 digits (one digit =
  0.2 points). gamma and gamma*rho are kept at the paper's values although
  the paper chose them by cross-validation for T = 12,000; the TG/SGD step
  uses the actual T, as the paper's formula does.
* The batch optimum is LIBLINEAR's l1-regularized logistic regression
  (``liblinear-official``, ``-s 6 -B 1 -R``: unpenalized bias, C =
  1/(lambda n), tolerance 1e-6) instead of the interior-point method of Koh,
  Kim & Boyd: it solves the same problem.
* Permutations: the paper uses 100. The full run uses 100 for w_T, but the
  averaged w-bar_T needs the model after every step, i.e. one
  ``partial_fit`` call per row (about 1.6 ms each, mostly scikit-learn's
  input validation), so w-bar_T is averaged over the first 10 permutations
  (--quick: 10 and 2, and 4 values of lambda instead of 10).
* Figure 3 plots NNZ(w_t) along the first permutation of 6 vs 7.
* Figure 7: the paper shows error against NNZ for lambda from 0.1 to 10 and
  the patterns at lambda = 1 for all 45 pairs; here the error and NNZ of
  enhanced l1-RDA's w_T (gamma*rho = 25) and of the batch optimum at lambda =
  1, for all 45 pairs (--quick: 9 of them), 100 permutations (--quick: 5).
* The paper's remark that the batch lambda_max "is mostly in the range of
  30-50" is checked exactly: with an unpenalized bias, lambda_max =
  ||(1/n) sum_i (ybar - y_i) x_i||_inf with y in {0, 1}, on each pair's
  training rows.
"""
import os

import numpy as np
from scipy.special import expit

from fastprox import ProxClassifier

from ._common import (RULE, add_common_arguments, error_rate, liblinear_fit, load, lower, main, md_table,
                      mean_std, nnz, pyplot, start, verdict, write_report)

NAME = "rda_mnist"
GAMMA = 5000.0
GAMMA_RHO = 25.0
ROUND = 1e-5
TEST_SHARE = 0.25
PAIR = (6, 7)
LAMBDAS = (0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0)
QUICK_LAMBDAS = (0.01, 0.1, 1.0, 10.0)
PATH_LAMBDAS = (0.1, 10.0)
SUMMARY_LAMBDA = 1.0
CLASSES = np.array([-1.0, 1.0])
# RULE's floors: one held-out digit (~0.2 points of error), one weight, and for the NNZ path's
# roughness (one permutation, no spread) a quarter of the larger value.
FLOOR_ERR, FLOOR_NNZ, FLOOR_ROUGH = 0.002, 1.0, 0.25

# The two columns of Figures 3 and 4: (baselines, RDA variant).
SGD, TG1, TG10, RDA, ERDA = "SGD", "TG K=1", "TG K=10", "RDA rho=0", "RDA gamma*rho=25"
COLUMNS = ((SGD, TG1, RDA), (SGD, TG10, ERDA))
METHODS = (SGD, TG1, TG10, RDA, ERDA)
EXACT_ZEROS = {TG1, RDA, ERDA}
COLORS = {SGD: "C7", TG1: "C0", TG10: "C0", RDA: "C3", ERDA: "C3", "batch": "k"}


def sgd_step(T):
    """The constant step of SGD and TG, alpha = sqrt(2/T)/gamma (Xiao eq. 19)."""
    return np.sqrt(2.0 / T) / GAMMA


def pair_split(X, y, a, b, seed):
    """Rows of digits a (-> -1) and b (-> +1), split 75/25 at random: Xtr, ytr, Xte, yte."""
    rows = np.flatnonzero((y == a) | (y == b))
    rows = np.random.default_rng([seed, a, b]).permutation(rows)
    n_test = int(round(TEST_SHARE * len(rows)))
    test, train = rows[:n_test], rows[n_test:]
    label = lambda r: np.where(y[r] == b, 1.0, -1.0)
    return X[train], label(train), X[test], label(test)


def learner(method, lam, T, gamma=GAMMA):
    """The fastprox estimator for TG K=1 (FOBOS) and the two l1-RDA variants (beta_t = gamma sqrt(t);
    the enhanced one with gamma*rho = GAMMA_RHO)."""
    common = dict(loss="log", penalty="l1", alpha=lam, fit_intercept=True, shuffle=False)
    if method == TG1:
        return ProxClassifier(update="fobos", schedule="constant", step="gradient", eta0=sgd_step(T), **common)
    rho = GAMMA_RHO / gamma if method == ERDA else 0.0
    return ProxClassifier(update="rda", schedule="invsqrt", eta0=1.0 / gamma, rda_rho=rho, **common)


def truncated_gradient(X, y, lam, step, K):
    """Yield (w_{t+1}, b_{t+1}) after each step of TG (truncate every K steps, theta = inf),
    or of SGD with the subgradient lambda*sgn(w_t) when K is None. X dense, rows in order."""
    w, b = np.zeros(X.shape[1]), 0.0
    for t, (x, label) in enumerate(zip(X, y), start=1):
        slope = -label * expit(-label * (x @ w + b))
        if K is None:
            w = w - step * (slope * x + lam * np.sign(w))
        else:
            w = w - step * slope * x
            if t % K == 0:
                w = np.sign(w) * np.maximum(np.abs(w) - step * lam * K, 0.0)
        b = b - step * slope
        yield w, b


def steps(method, lam, X, y, order, gamma=GAMMA):
    """Yield (w_{t+1}, b_{t+1}) after every step of one pass over the rows `order`."""
    T = len(order)
    if method in (SGD, TG10):
        yield from truncated_gradient(X[order].toarray(), y[order], lam, sgd_step(T),
                                      None if method == SGD else 10)
        return
    clf = learner(method, lam, T, gamma)
    for i in order:
        clf.partial_fit(X[i:i + 1], y[i:i + 1], classes=CLASSES)
        yield clf.coef_.ravel(), float(clf.intercept_[0])


def final_model(method, lam, X, y, order, gamma=GAMMA):
    """(w_T, b_T) after one pass, without reading the model in between."""
    if method in (SGD, TG10):
        for w, b in steps(method, lam, X, y, order):
            pass
        return w, b
    clf = learner(method, lam, len(order), gamma).partial_fit(X[order], y[order], classes=CLASSES)
    return clf.coef_.ravel(), float(clf.intercept_[0])


def tracked_pass(method, lam, X, y, order, gamma=GAMMA):
    """One pass read after every step: w_T, b_T, the average of w_1..w_T (and of b) and NNZ(w_t)."""
    tol = 0.0 if method in EXACT_ZEROS else ROUND
    w, b = np.zeros(X.shape[1]), 0.0
    sum_w, sum_b, path = np.zeros(X.shape[1]), 0.0, []
    for w_next, b_next in steps(method, lam, X, y, order, gamma):
        sum_w += w
        sum_b += b
        w, b = w_next, b_next
        path.append(nnz(w, tol))
    T = len(order)
    return {"w": w, "b": b, "wbar": sum_w / T, "bbar": sum_b / T, "path": np.array(path)}


def batch_optimum(lam, X, y):
    """(w, b) minimizing mean log loss + lambda ||w||_1 with a free bias, by LIBLINEAR."""
    return liblinear_fit(X, y, f"-s 6 -c {1.0 / (lam * X.shape[0]):.17g} -B 1 -R -e 1e-6")


def lambda_max(X, y):
    """The smallest lambda with an all-zero batch optimum (unpenalized bias)."""
    y01 = (y > 0).astype(float)
    return float(np.abs(np.asarray(X.T @ (y01.mean() - y01)) / X.shape[0]).max())


def sweep(X, y, Xte, yte, lambdas, n_perms, n_tracked, seed):
    """Figures 3 and 4 on one pair: per lambda and method, lists over permutations of the
    error and NNZ of w_T (all permutations) and of w-bar_T (the first n_tracked), the
    NNZ(w_t) paths of the first permutation, and the batch optimum."""
    rng = np.random.default_rng(seed)
    orders = [rng.permutation(X.shape[0]) for _ in range(n_perms)]
    results = {}
    for lam in lambdas:
        w, b = batch_optimum(lam, X, y)
        cell = {"batch": {"err": error_rate(w, b, Xte, yte), "nnz": nnz(w)}}
        for method in METHODS:
            tol = 0.0 if method in EXACT_ZEROS else ROUND
            rec = {"err": [], "nnz": [], "err_bar": [], "nnz_bar": []}
            for p, order in enumerate(orders):
                if p < n_tracked:
                    run = tracked_pass(method, lam, X, y, order)
                    rec["err_bar"].append(error_rate(run["wbar"], run["bbar"], Xte, yte))
                    rec["nnz_bar"].append(nnz(run["wbar"], ROUND))
                    if p == 0:
                        rec["path"] = run["path"].tolist()
                    w, b = run["w"], run["b"]
                else:
                    w, b = final_model(method, lam, X, y, order)
                rec["err"].append(error_rate(w, b, Xte, yte))
                rec["nnz"].append(nnz(w, tol))
            cell[method] = rec
        results[lam] = cell
        print(f"  lambda={lam:g}: " + ", ".join(
            f"{m} {np.mean(cell[m]['err']):.3f}/{np.mean(cell[m]['nnz']):.0f}" for m in METHODS)
            + f", batch {cell['batch']['err']:.3f}/{cell['batch']['nnz']}", flush=True)
    return results


def all_pairs(X, y, pairs, n_perms, seed):
    """Figure 7 at lambda = 1: enhanced l1-RDA's w_T (mean, std over permutations) and the
    batch optimum, error and NNZ, for every pair; and each pair's lambda_max."""
    out = []
    for a, b in pairs:
        Xtr, ytr, Xte, yte = pair_split(X, y, a, b, seed)
        rng = np.random.default_rng([seed, a, b, 1])
        errs, nnzs = [], []
        for _ in range(n_perms):
            w, bias = final_model(ERDA, SUMMARY_LAMBDA, Xtr, ytr, rng.permutation(Xtr.shape[0]))
            errs.append(error_rate(w, bias, Xte, yte))
            nnzs.append(nnz(w))
        w, bias = batch_optimum(SUMMARY_LAMBDA, Xtr, ytr)
        out.append({"pair": (a, b), "err": mean_std(errs), "nnz": mean_std(nnzs),
                    "batch_err": error_rate(w, bias, Xte, yte), "batch_nnz": nnz(w),
                    "lambda_max": lambda_max(Xtr, ytr)})
    return out


# ---------------------------------------------------------------- plots
def plot_paths(results, T, path):
    """Figure 3: NNZ(w_t) against t for lambda = 0.1 and 10, both columns."""
    plt = pyplot()
    fig, axes = plt.subplots(len(PATH_LAMBDAS), 2, figsize=(11, 7), sharex=True)
    for row, lam in enumerate(PATH_LAMBDAS):
        for col, methods in enumerate(COLUMNS):
            ax = axes[row, col]
            for method in methods:
                ax.plot(np.arange(1, T + 1), results[lam][method]["path"], color=COLORS[method],
                        lw=1, label=method)
            ax.axhline(results[lam]["batch"]["nnz"], color="k", ls="--", lw=1, label="batch optimum")
            ax.set(title=f"lambda = {lam:g}", ylabel="NNZ(w_t)", ylim=(0, 800))
            ax.legend(fontsize=8, loc="upper right")
    for ax in axes[-1]:
        ax.set_xlabel("t (examples seen)")
    fig.suptitle(f"Xiao Fig. 3: NNZ(w_t) along one pass, MNIST {PAIR[0]} vs {PAIR[1]} (T = {T})")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def plot_sweep(results, path):
    """Figure 4: error and NNZ of w_T and of w-bar_T against lambda, mean +- std."""
    plt = pyplot()
    lambdas = sorted(results)
    rows = (("err", "test error of w_T"), ("nnz", "NNZ(w_T)"),
            ("err_bar", "test error of w-bar_T"), ("nnz_bar", "NNZ(w-bar_T)"))
    fig, axes = plt.subplots(4, 2, figsize=(11, 13), sharex=True)
    for col, methods in enumerate(COLUMNS):
        for row, (key, label) in enumerate(rows):
            ax = axes[row, col]
            for k, method in enumerate(methods):
                stats = [mean_std(results[lam][method][key]) for lam in lambdas]
                shift = 1.0 + 0.04 * (k - 1)
                ax.errorbar([lam * shift for lam in lambdas], [s[0] for s in stats],
                            yerr=[s[1] for s in stats], color=COLORS[method],
                            fmt="o-" if method in (RDA, ERDA) else "s--", ms=4, capsize=2,
                            label=method)
            batch_key = "err" if key.startswith("err") else "nnz"
            ax.plot(lambdas, [results[lam]["batch"][batch_key] for lam in lambdas], "k^-",
                    ms=5, label="batch optimum (LIBLINEAR)")
            ax.set(xscale="log", ylabel=label)
            if row == 0:
                ax.set_yscale("log")
            ax.grid(True, which="both", alpha=0.3)
        axes[0, col].legend(fontsize=8)
        axes[-1, col].set_xlabel("lambda")
    fig.suptitle(f"Xiao Fig. 4: MNIST {PAIR[0]} vs {PAIR[1]}, mean +- std over permutations")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def plot_pairs(pairs, path):
    """Figure 7 summary: per pair, enhanced l1-RDA's w_T against the batch optimum at lambda = 1."""
    plt = pyplot()
    fig, axes = plt.subplots(1, 2, figsize=(11, 5))
    for ax, key, bkey, label, scale in ((axes[0], "err", "batch_err", "test error (%)", 100.0),
                                        (axes[1], "nnz", "batch_nnz", "NNZ", 1.0)):
        x = [p[bkey] * scale for p in pairs]
        ax.errorbar(x, [p[key][0] * scale for p in pairs], yerr=[p[key][1] * scale for p in pairs],
                    fmt="o", ms=4, capsize=2, color="C3")
        for p, xi in zip(pairs, x):
            ax.annotate(f"{p['pair'][0]}{p['pair'][1]}", (xi, p[key][0] * scale), fontsize=6,
                        xytext=(2, 2), textcoords="offset points")
        top = max(max(x), max((p[key][0] + p[key][1]) * scale for p in pairs)) * 1.05
        ax.plot([0, top], [0, top], "k--", lw=1, label="y = x")
        ax.set(xlabel=f"batch optimum {label}", ylabel=f"enhanced l1-RDA w_T {label}",
               xlim=(0, top), ylim=(0, top))
        ax.legend()
    fig.suptitle(f"Xiao Fig. 7 summary: {len(pairs)} digit pairs, lambda = 1, gamma = 5000, "
                 "gamma*rho = 25 (labels: digit pair)")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


# ---------------------------------------------------------------- report
def _fmt(values, digits):
    mean, std = mean_std(values)
    return f"{mean:.{digits}f} ± {std:.{digits}f}"


def sweep_table(results):
    """Markdown: per lambda, error and NNZ of w_T and w-bar_T for every method, and batch."""
    header = ["lambda", "method", "error w_T (%)", "NNZ w_T", "error w-bar_T (%)", "NNZ w-bar_T"]
    rows = []
    for lam in sorted(results):
        cell = results[lam]
        for method in METHODS:
            rec = cell[method]
            rows.append([f"{lam:g}", method, _fmt(np.multiply(rec["err"], 100), 2), _fmt(rec["nnz"], 0),
                         _fmt(np.multiply(rec["err_bar"], 100), 2), _fmt(rec["nnz_bar"], 0)])
        rows.append([f"{lam:g}", "batch (LIBLINEAR)", f"{100 * cell['batch']['err']:.2f}",
                     str(cell["batch"]["nnz"]), "", ""])
    return md_table(header, rows)


def path_roughness(path):
    """Mean |NNZ(w_{t+1}) - NNZ(w_t)| over the second half of the pass: how much it jumps."""
    half = np.asarray(path[len(path) // 2:], dtype=float)
    return float(np.mean(np.abs(np.diff(half))))


def verdicts(results, pairs):
    """One line per claim of Sec. 6 (notes-rda.md Sec. 8), each with the rule applied."""
    lambdas = sorted(results)
    mean = lambda lam, m, key="nnz": float(np.mean(results[lam][m][key]))
    std = lambda lam, m, key="err": float(np.std(results[lam][m][key]))
    lines = []

    sparser = [(lam, rda, base) for lam in lambdas for col in COLUMNS for rda in col[2:]
               for base in col[:2] if not lower(mean(lam, rda), mean(lam, base), std(lam, rda, "nnz"),
                                                std(lam, base, "nnz"), floor=FLOOR_NNZ)]
    lines.append(verdict(not sparser, "Fig. 2-4: RDA's w_T is sparser than SGD's and TG's (K = 1 and "
                         "10) at every lambda in [0.01, 10]",
                         "Rule: mean NNZ(w_T) of RDA (rho = 0 against SGD and TG K=1; gamma*rho = 25 "
                         "against SGD and TG K=10) below the baseline's beyond the margin (the larger std over the "
                         "permutations) at every lambda. "
                         + ("Exceptions: " + "; ".join(f"lambda={l:g} {r} vs {b}" for l, r, b in sparser)
                            if sparser else "No exception.")))

    big = [lam for lam in lambdas if lam >= 1.0]
    close = [(lam, mean(lam, ERDA), results[lam]["batch"]["nnz"]) for lam in big]
    ok = all(0.5 <= r / max(b, 1) <= 2.0 for _, r, b in close)
    lines.append(verdict(ok, "Fig. 2/4: RDA's w_T is close to the batch optimum's NNZ, especially for large lambda",
                         "Rule: NNZ of enhanced RDA's w_T within a factor 2 of the batch optimum's for "
                         "lambda >= 1: " + ", ".join(f"lambda={l:g}: {r:.0f} vs {b}" for l, r, b in close) + "."))

    rough = {lam: {m: path_roughness(results[lam][m]["path"]) for m in METHODS} for lam in PATH_LAMBDAS}
    smoother = lambda a, b: lower(a, b, floor=FLOOR_ROUGH * max(a, b))
    ok = all(smoother(rough[lam][rda], rough[lam][tg])
             for lam in PATH_LAMBDAS for rda, tg in ((RDA, TG1), (ERDA, TG10)))
    ok10 = all(smoother(rough[lam][TG1], rough[lam][TG10]) for lam in PATH_LAMBDAS)
    lines.append(verdict(ok, "Fig. 3: NNZ(w_t) is smooth for RDA and oscillates for TG",
                         "Rule: mean |change of NNZ per step| over the second half of the pass (first "
                         f"permutation: no spread, so the margin is {FLOOR_ROUGH:.0%} of the larger) smaller "
                         "for RDA than for TG with the same K, at lambda = 0.1 and 10: " + "; ".join(
                             f"lambda={lam:g}: " + ", ".join(f"{m} {rough[lam][m]:.2f}" for m in METHODS)
                             for lam in PATH_LAMBDAS) + "."))
    lines.append(verdict(ok10, "Fig. 3: TG oscillates more severely with K = 10 than with K = 1",
                         "Rule: the same measure larger for TG K=10 than for TG K=1 beyond the same margin at both "
                         "lambdas: " + "; ".join(
                             f"lambda={lam:g}: {rough[lam][TG10]:.2f} vs {rough[lam][TG1]:.2f}"
                             for lam in PATH_LAMBDAS) + "."))

    robust = [lam for lam in lambdas if std(lam, RDA) <= min(std(lam, SGD), std(lam, TG1))
              and std(lam, ERDA) <= min(std(lam, SGD), std(lam, TG10))]
    lines.append(verdict(len(robust) == len(lambdas),
                         "Fig. 4: the test error of RDA's w_T varies little across permutations, "
                         "SGD's and TG's a lot",
                         f"Rule: std of RDA's error at most the baselines' in its column, at every "
                         f"lambda; true at {len(robust)} of {len(lambdas)} lambdas (the table's ± columns)."))

    lam = max(lambdas)
    base = [(m, mean(lam, m, "err_bar"), mean(lam, m, "nnz_bar"), std(lam, m, "err_bar")) for m in (SGD, TG1, TG10)]
    refs = [(mean(lam, m, "err"), std(lam, m)) for m in (RDA, ERDA)] + [(results[lam]["batch"]["err"], 0.0)]
    ref_err, ref_std = min(refs)
    ref_nnz = max(mean(lam, ERDA, "nnz"), mean(lam, RDA, "nnz"), results[lam]["batch"]["nnz"])
    ok = all(lower(e, ref_err, sd, ref_std, floor=FLOOR_ERR) and z > ref_nnz for _, e, z, sd in base)
    lines.append(verdict(ok, "Fig. 4: for large lambda, SGD's and TG's averaged w-bar_T have lower error than "
                         "RDA and the batch optimum, with many more non-zeros",
                         f"Rule at lambda = {lam:g}: every baseline's w-bar_T error below the best of "
                         f"RDA's w_T and batch ({100 * ref_err:.2f}% ± {100 * ref_std:.2f}) beyond the margin "
                         f"and NNZ above theirs ({ref_nnz:.0f}): "
                         + ", ".join(f"{m} {100 * e:.2f}% ± {100 * sd:.2f} / {z:.0f}" for m, e, z, sd in base) + "."))

    lo, hi = min(lambdas), max(lambdas)
    gain = lambda l: 1.0 - mean(l, ERDA) / max(mean(l, RDA), 1.0)
    lines.append(verdict(gain(lo) > gain(hi), "Fig. 3/4: the enhancement gamma*rho = 25 sparsifies RDA "
                         "most for small lambda",
                         f"Rule: relative NNZ reduction of w_T larger at lambda = {lo:g} "
                         f"({100 * gain(lo):.0f}%) than at {hi:g} ({100 * gain(hi):.0f}%)."))

    err_gap = [abs(mean(l, ERDA, "err") - results[l]["batch"]["err"]) for l in lambdas if l >= 0.1]
    nnz_ratio = [mean(l, ERDA) / max(results[l]["batch"]["nnz"], 1) for l in lambdas if l >= 0.1]
    ok = max(err_gap) <= 0.01 and all(0.5 <= r <= 2.0 for r in nnz_ratio)
    lines.append(verdict(ok, "Fig. 4: RDA matches the batch optimum 'very well'",
                         "Rule: for lambda >= 0.1, enhanced RDA's mean error within 1 point of the batch "
                         f"optimum's (largest gap {100 * max(err_gap):.2f} points) and its NNZ within a "
                         f"factor 2 (ratios {', '.join(f'{r:.2f}' for r in nnz_ratio)})."))

    close_nnz = [p for p in pairs if 0.5 <= p["nnz"][0] / max(p["batch_nnz"], 1) <= 2.0]
    close_err = [p for p in pairs if abs(p["err"][0] - p["batch_err"]) <= 0.01]
    higher = np.mean([p["err"][0] - p["batch_err"] for p in pairs])
    lines.append(verdict(len(close_nnz) >= 0.8 * len(pairs), "Fig. 7: over all pairs, RDA's sparsity is "
                         "very similar to the batch optimum's",
                         f"Rule at lambda = 1: NNZ within a factor 2 for at least 80% of the pairs; true for "
                         f"{len(close_nnz)} of {len(pairs)}."))
    lines.append(verdict(len(close_err) >= 0.8 * len(pairs), "Fig. 7: over all pairs, RDA's test error is "
                         "very similar to the batch optimum's",
                         f"Rule at lambda = 1: mean error within 1 point for at least 80% of the pairs; true "
                         f"for {len(close_err)} of {len(pairs)}; on average RDA's error is "
                         f"{100 * higher:+.2f} points from the batch optimum's (T here is ~1,500, not 12,000)."))

    in_range = [p for p in pairs if 30 <= p["lambda_max"] <= 50]
    values = sorted(p["lambda_max"] for p in pairs)
    lines.append(verdict(len(in_range) > len(pairs) / 2, "Sec. 6.1: the batch lambda_max is 'mostly in the "
                         "range of 30-50'",
                         f"{len(in_range)} of {len(pairs)} pairs in [30, 50]; lambda_max ranges "
                         f"{values[0]:.1f} to {values[-1]:.1f} (median {np.median(values):.1f}), computed "
                         "on our training rows (a mean over rows, so it hardly depends on T)."))
    lines.append(verdict(None, "Fig. 5, 6 (gamma from 1,000 to 10,000) and Fig. 8 (overfitting on 1/10 "
                         "subsamples of 3 vs 8)", "Not run here: they are in `rda_params.md`."))
    return lines


def add_arguments(parser):
    """The options of ``python -m bench.papers rda_mnist``."""
    return add_common_arguments(parser, "4 lambdas, 10 permutations (2 read at every step), "
                                        "9 of the 45 pairs with 5 permutations (about 2 minutes)")


def run(args):
    """Run the sweep on 6 vs 7 and the all-pairs summary; write rda_mnist.md and three PNGs."""
    started = start(args)
    X, y = load(args.data_dir, "mnist_t10k/mnist_t10k", n_features=784)
    lambdas = QUICK_LAMBDAS if args.quick else LAMBDAS
    n_perms, n_tracked = (10, 2) if args.quick else (100, 10)
    pairs = [(a, b) for a in range(10) for b in range(a + 1, 10)]
    pairs, pair_perms = (pairs[::5], 5) if args.quick else (pairs, 100)

    Xtr, ytr, Xte, yte = pair_split(X, y, *PAIR, args.seed)
    print(f"{NAME}: {PAIR[0]} vs {PAIR[1]}, {Xtr.shape[0]} training / {Xte.shape[0]} held-out rows, "
          f"{n_perms} permutations ({n_tracked} read at every step)", flush=True)
    results = sweep(Xtr, ytr, Xte, yte, lambdas, n_perms, n_tracked, args.seed)
    print(f"{NAME}: {len(pairs)} pairs at lambda = {SUMMARY_LAMBDA:g}, {pair_perms} permutations", flush=True)
    summary = all_pairs(X, y, pairs, pair_perms, args.seed)

    os.makedirs(args.out_dir, exist_ok=True)
    plot_paths(results, Xtr.shape[0], os.path.join(args.out_dir, f"{NAME}_fig3.png"))
    plot_sweep(results, os.path.join(args.out_dir, f"{NAME}_fig4.png"))
    plot_pairs(summary, os.path.join(args.out_dir, f"{NAME}_fig7.png"))

    pair_rows = [[f"{p['pair'][0]} vs {p['pair'][1]}",
                  f"{100 * p['err'][0]:.2f} ± {100 * p['err'][1]:.2f}", f"{100 * p['batch_err']:.2f}",
                  f"{p['nnz'][0]:.0f} ± {p['nnz'][1]:.0f}", str(p["batch_nnz"]), f"{p['lambda_max']:.1f}"]
                 for p in summary]
    sections = [
        "Xiao, *Dual Averaging Methods for Regularized Stochastic Learning and Online Optimization* "
        "(JMLR 2010), Sec. 6, on MNIST digit pairs.",
        "",
        "**The data differ from the paper's.** Only the 10,000 MNIST test digits are available "
        "(`mnist_t10k`); the paper's ~12,000-row training set per pair is not. Each pair's ~2,000 rows "
        f"are split once into 75% training (T = {Xtr.shape[0]} for {PAIR[0]} vs {PAIR[1]}, not 12,000) "
        "and 25% held out. Every other choice is listed in the module docstring "
        "(`bench/papers/rda_mnist.py`).",
        "",
        "**The paper prints no numbers for these figures** (only plots; notes-rda.md Sec. 7), so the "
        "comparison is with its stated claims, each tested by the rule given in its verdict. The only "
        "number it gives in the text, the batch lambda_max range (30-50), is checked directly. "
        "The OCR of Sec. 6 is clean for the parameters used here (gamma = 5,000, rho = 0.005, "
        "gamma*rho = 25, lambda from 0.01 to 10, 100 permutations); the one damaged spot, "
        "\"effectively $\\gamma p = 25$\", has rho read as p.",
        "",
        "## Verdicts", "", RULE, "", f"Here: spreads over the permutations; floors {FLOOR_ERR} (error, one "
        f"held-out digit), {FLOOR_NNZ:.0f} (NNZ).", "", *verdicts(results, summary), "",
        f"## Figures 3 and 4: {PAIR[0]} vs {PAIR[1]}", "",
        f"![Figure 3]({NAME}_fig3.png)", "", f"![Figure 4]({NAME}_fig4.png)", "",
        f"Mean ± std over {n_perms} permutations for w_T, over the first {n_tracked} for w-bar_T "
        f"(w-bar_T needs the model after every step). Error on {Xte.shape[0]} held-out digits.", "",
        sweep_table(results), "",
        f"## Figure 7 summary: {len(summary)} pairs at lambda = {SUMMARY_LAMBDA:g}", "",
        f"![Figure 7]({NAME}_fig7.png)", "",
        f"Enhanced l1-RDA (gamma = 5000, gamma*rho = 25) w_T, mean ± std over {pair_perms} "
        "permutations, against the batch optimum (LIBLINEAR); lambda_max of the batch problem on the "
        "pair's training rows.", "",
        md_table(["pair", "RDA error (%)", "batch error (%)", "RDA NNZ", "batch NNZ", "lambda_max"],
                 pair_rows),
    ]
    write_report(args.out_dir, NAME, "RDA (Xiao 2010), Sec. 6: MNIST digit pairs", sections, started, args)
    return 0


if __name__ == "__main__":
    main(__doc__, add_arguments, run)
