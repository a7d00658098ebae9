"""AdaGrad, Duchi, Hazan & Singer (JMLR 2011) Sec. 6: Tables 1 and 4, Figure 7.

One online pass with the hinge loss. fastprox runs RDA, FOBOS, AdaGrad-RDA
and AdaGrad-FOBOS (``update`` rda / fobos, ``schedule`` invsqrt / adagrad,
``penalty="l1"``, ``alpha`` = the paper's lambda, per example); the dense
baselines Passive-Aggressive and AROW with a diagonal covariance are
implemented here (``passive_aggressive``, ``arow``).

* Table 1 (Sec. 6.1): test error and proportion of non-zeros, mean of 4 runs,
  each holding out a random 25% of the pooled rows and making one pass over
  the rest, on the text sets here: the RCV1 sample (rcv1_vw_small, 1,500
  rows), Reuters-21578 money-fx (11,069 rows) and w8a (49,749 rows). The
  paper's four RCV1 topic tasks with ~800,000 bigram rows are not available.
* Table 4 (Sec. 6.4): census income. The paper's KDD Census (4,001 features,
  199,523 training rows) is not here; a9a (UCI Adult, 123 binary features,
  32,561 training / 16,281 test rows) stands in. Ten shuffles of the training
  set, one pass over its first 5, 10, 25, 50, 100%, error on a9a.t; RDA,
  AdaGrad-RDA, their l1 versions, and PA and AROW.
* Figure 7 (Sec. 6.5): AdaGrad-RDA with l1, lambda from 1e-8 to 1e-1, test
  error against the proportion of non-zeros on the RCV1 sample, with AROW as
  the dense reference line.

Choices the paper leaves open, and the ones made here:

* Tuning. The paper picks eta (RDA, FOBOS) and PA's / AROW's lambda by "the
  fewest mistakes during training"; here every step size (1e-3..1e4) and
  baseline parameter (1e-6..1e3) is chosen on a grid of half decades by the
  smallest progressive
  hinge loss (the mean loss of each row before its update, fastprox's
  ``progressive_loss_``, computed the same way for PA and AROW) of one pass
  over a training set: the first run's training part (Table 1, Figure 7) or
  the first 10,000 training rows (Table 4, as the paper). The AdaGrad
  variants are tuned the same way (the paper does not say how).
* lambda. Table 1: "the same l1 multiplier for RDA and FOBOS, chosen so
  that RDA has about 10% non-zeros"; here it is found by bisection on the
  first run's training part and used for all four fastprox methods. Table 4
  does not say; here the largest lambda of the grid 1e-7..1e-1 (half
  decades) whose l1-RDA progressive loss on the first 10,000 rows is within
  1% of unregularized RDA's, used for both l1 methods.
* Proportion of non-zeros: of the features that occur in the data set (rows
  of train and test pooled), not of the nominal width (47,236 for RCV1, most
  of which never occur in the 1,500-row sample).
* Bias: fastprox fits an unpenalized intercept; PA and AROW get a constant
  feature (not counted among the non-zeros). The paper mentions no bias.
* AROW: the original update (Crammer et al. 2009), whose step includes the
  factor beta_t; the paper's printed eq. (9) omits it (notes-adagrad.md).
  Diagonal covariance Sigma_0 = I. PA: the paper's form, argmin of
  hinge + (lambda/2)||w - w_t||^2, i.e. PA-I with C = 1/lambda.
"""
import os

import numpy as np
import scipy.sparse as sp

from fastprox import ProxClassifier

from ._common import (RULE, add_common_arguments, load, lower, main, md_table, mean_std, nnz, pyplot,
                      start, verdict, write_report)

NAME = "adagrad_text"
TEXT_SETS = {  # name -> (files, nominal width)
    "RCV1 sample": (("rcv1_vw_small/rcv1_small.train.svm", "rcv1_vw_small/rcv1_small.test.svm"), 47236),
    "Reuters money-fx": (("reuters_moneyfx/reuters.trn", "reuters_moneyfx/reuters.tst"), 8315),
    "w8a": (("w8a/w8a",), 300),
}
SWEEP_SET = "RCV1 sample"
STEPS = tuple(10.0 ** (k / 2) for k in range(-6, 9))
BASELINE_PARAMS = tuple(10.0 ** (k / 2) for k in range(-12, 7))
TARGET_NNZ = 0.10
PROPORTIONS = (0.05, 0.1, 0.25, 0.5, 1.0)
CENSUS_TUNE_ROWS = 10_000
CENSUS_LAMBDAS = tuple(10.0 ** (k / 2) for k in range(-14, -1))
SWEEP_LAMBDAS = tuple(10.0 ** (k / 2) for k in range(-16, -1))

FASTPROX = {  # method -> (update, schedule)
    "RDA": ("rda", "invsqrt"), "FB": ("fobos", "invsqrt"),
    "AdaGrad-RDA": ("rda", "adagrad"), "AdaGrad-FB": ("fobos", "adagrad"),
}

# The paper's Table 1 (RCV1 topics; error, proportion of non-zeros) and Table 4 (KDD census).
# OCR: "044 (:238)" (ECAT, AdaGrad-FB) and ".034 (176)" (MCAT, AdaGrad-FB) have damaged
# punctuation only; the digits are clear (notes-adagrad.md Sec. 5.1).
PAPER_TABLE1 = {
    "ECAT": {"RDA": (.051, .099), "FB": (.058, .194), "AdaGrad-RDA": (.044, .086),
             "AdaGrad-FB": (.044, .238), "PA": (.059, None), "AROW": (.049, None)},
    "CCAT": {"RDA": (.064, .123), "FB": (.111, .226), "AdaGrad-RDA": (.053, .105),
             "AdaGrad-FB": (.053, .276), "PA": (.107, None), "AROW": (.061, None)},
    "GCAT": {"RDA": (.046, .092), "FB": (.056, .183), "AdaGrad-RDA": (.040, .080),
             "AdaGrad-FB": (.040, .225), "PA": (.066, None), "AROW": (.044, None)},
    "MCAT": {"RDA": (.037, .074), "FB": (.056, .146), "AdaGrad-RDA": (.035, .063),
             "AdaGrad-FB": (.034, .176), "PA": (.053, None), "AROW": (.039, None)},
}
PAPER_TABLE4 = {
    "AROW": ((.049, .048, .046, .045, .044), None),
    "PA": ((.055, .052, .050, .049, .048), None),
    "RDA": ((.055, .054, .052, .051, .050), None),
    "AdaGrad-RDA": ((.053, .051, .049, .048, .047), None),
    "l1 RDA": ((.056, .054, .053, .052, .051), (.075, .066, .058, .053, .050)),
    "l1 AdaGrad-RDA": ((.052, .051, .050, .050, .049), (.062, .053, .044, .040, .037)),
}
TABLE1_METHODS = ("RDA", "FB", "AdaGrad-RDA", "AdaGrad-FB", "PA", "AROW")
TABLE4_METHODS = tuple(PAPER_TABLE4)


# ---------------------------------------------------------------- the dense baselines
def _rows(X):
    """(i, column indices, values) of each CSR row in order."""
    data, indices, indptr = X.data, X.indices, X.indptr
    for i in range(X.shape[0]):
        yield i, indices[indptr[i]:indptr[i + 1]], data[indptr[i]:indptr[i + 1]]


def passive_aggressive(X, y, lam):
    """One pass of PA-I (C = 1/lam) with a constant feature; (w, b, progressive hinge loss)."""
    w, b, total = np.zeros(X.shape[1]), 0.0, 0.0
    for i, cols, vals in _rows(X):
        loss = max(0.0, 1.0 - y[i] * (w[cols] @ vals + b))
        total += loss
        if loss > 0.0:
            tau = min(1.0 / lam, loss / (vals @ vals + 1.0)) * y[i]
            w[cols] += tau * vals
            b += tau
    return w, b, total / X.shape[0]


def arow(X, y, r):
    """One pass of AROW with a diagonal covariance and a constant feature; (mu, b, progressive hinge loss)."""
    mu, sigma, b, sigma_b, total = np.zeros(X.shape[1]), np.ones(X.shape[1]), 0.0, 1.0, 0.0
    for i, cols, vals in _rows(X):
        loss = max(0.0, 1.0 - y[i] * (mu[cols] @ vals + b))
        total += loss
        if loss > 0.0:
            sx = sigma[cols] * vals
            beta = 1.0 / (sx @ vals + sigma_b + r)
            alpha = loss * beta * y[i]
            mu[cols] += alpha * sx
            b += alpha * sigma_b
            sigma[cols] -= beta * sx * sx
            sigma_b -= beta * sigma_b * sigma_b
    return mu, b, total / X.shape[0]


BASELINES = {"PA": passive_aggressive, "AROW": arow}


# ---------------------------------------------------------------- training
def train(method, X, y, param, lam=0.0):
    """One pass in row order: (w, b, progressive hinge loss). param: eta0 for fastprox
    methods (an 'l1 ' prefix adds the l1 penalty for Table 4's names), lambda / r for PA, AROW."""
    if method in BASELINES:
        return BASELINES[method](X, y, param)
    update, schedule = FASTPROX[method.removeprefix("l1 ")]
    clf = ProxClassifier(loss="hinge", penalty="l1" if lam > 0 else "none", alpha=lam, update=update,
                         schedule=schedule, step="gradient", eta0=param, delta=1e-8,    # the paper's AdaGrad
                         shuffle=False).fit(X, y)
    return clf.coef_.ravel(), float(clf.intercept_[0]), clf.progressive_loss_


def tune(method, X, y, lam=0.0):
    """The grid value with the smallest progressive hinge loss of one pass over (X, y)."""
    grid = BASELINE_PARAMS if method in BASELINES else STEPS
    return min(grid, key=lambda p: train(method, X, y, p, lam)[2])


def test_error(w, b, X, y):
    """Error of sign(<w, x> + b) (0 counts as -1) on (X, y)."""
    return float(np.mean(np.where(np.asarray(X @ w).ravel() + b > 0, 1.0, -1.0) != y))


def lambda_for_sparsity(X, y, eta0, n_features, target=TARGET_NNZ, iterations=30):
    """lambda giving RDA about `target` non-zeros (bisection on log lambda)."""
    lo, hi = -10.0, 1.0
    for _ in range(iterations):
        mid = (lo + hi) / 2
        w = train("RDA", X, y, eta0, 10.0 ** mid)[0]
        lo, hi = (mid, hi) if nnz(w) / n_features > target else (lo, mid)
    return 10.0 ** ((lo + hi) / 2)


def load_pooled(data_dir, files, width):
    """All rows of a set's files stacked; and how many features occur in them."""
    parts = [load(data_dir, f, n_features=width) for f in files]
    X = sp.vstack([p[0] for p in parts], format="csr")
    y = np.concatenate([p[1] for p in parts])
    return X, y, int(np.count_nonzero(np.diff(X.tocsc().indptr)))


def splits(n, runs, seed):
    """`runs` random (train, test) index pairs holding out 25%; train in a random order."""
    out = []
    for r in range(runs):
        perm = np.random.default_rng([seed, r]).permutation(n)
        cut = n // 4
        out.append((perm[cut:], perm[:cut]))
    return out


def table1_set(X, y, n_features, runs, seed):
    """Table 1 on one data set: settings and per-method lists of (error, proportion non-zero)."""
    folds = splits(X.shape[0], runs, seed)
    tr = folds[0][0]
    params = {m: tune(m, X[tr], y[tr]) for m in TABLE1_METHODS}
    lam = lambda_for_sparsity(X[tr], y[tr], params["RDA"], n_features)
    results = {m: [] for m in TABLE1_METHODS}
    majority = []
    for train_rows, test_rows in folds:
        guess = 1.0 if np.mean(y[train_rows] > 0) > 0.5 else -1.0
        majority.append(float(np.mean(y[test_rows] != guess)))
        for m in TABLE1_METHODS:
            w, b, _ = train(m, X[train_rows], y[train_rows], params[m], lam)
            results[m].append((test_error(w, b, X[test_rows], y[test_rows]), nnz(w) / n_features))
    return {"params": params, "lambda": lam, "results": results, "majority": float(np.mean(majority))}


def table4(data_dir, shuffles, seed):
    """Table 4 on a9a: per method, per proportion, lists of (error, proportion non-zero)."""
    X, y = load(data_dir, "a9a/a9a", n_features=123)
    Xte, yte = load(data_dir, "a9a/a9a.t", n_features=123)
    n_features = int(np.count_nonzero(np.diff(sp.vstack([X, Xte]).tocsc().indptr)))
    head = slice(0, CENSUS_TUNE_ROWS)
    tuned = {m: tune(m, X[head], y[head]) for m in {m.removeprefix("l1 ") for m in TABLE4_METHODS}}
    params = {m: tuned[m.removeprefix("l1 ")] for m in TABLE4_METHODS}
    base = train("RDA", X[head], y[head], params["l1 RDA"])[2]
    lam = max((l for l in CENSUS_LAMBDAS
               if train("RDA", X[head], y[head], params["l1 RDA"], l)[2] <= 1.01 * base),
              default=min(CENSUS_LAMBDAS))
    results = {m: {p: [] for p in PROPORTIONS} for m in TABLE4_METHODS}
    for s in range(shuffles):
        order = np.random.default_rng([seed, 4, s]).permutation(X.shape[0])
        for p in PROPORTIONS:
            rows = order[:int(round(p * X.shape[0]))]
            for m in TABLE4_METHODS:
                w, b, _ = train(m, X[rows], y[rows], params[m], lam if m.startswith("l1 ") else 0.0)
                results[m][p].append((test_error(w, b, Xte, yte), nnz(w) / n_features))
    return {"params": params, "lambda": lam, "results": results, "n_features": n_features}


def sparsity_sweep(X, y, n_features, eta0, arow_r, runs, lambdas, seed):
    """Figure 7: AdaGrad-RDA with l1 for each lambda, and AROW, over the same splits."""
    folds = splits(X.shape[0], runs, seed)
    curve = {lam: [] for lam in lambdas}
    reference = []
    for train_rows, test_rows in folds:
        Xtr, ytr, Xte, yte = X[train_rows], y[train_rows], X[test_rows], y[test_rows]
        w, b, _ = arow(Xtr, ytr, arow_r)
        reference.append(test_error(w, b, Xte, yte))
        for lam in lambdas:
            w, b, _ = train("AdaGrad-RDA", Xtr, ytr, eta0, lam)
            curve[lam].append((test_error(w, b, Xte, yte), nnz(w) / n_features))
    return {"curve": curve, "arow": reference}


# ---------------------------------------------------------------- report
def _mean(pairs, k):
    return float(np.mean([p[k] for p in pairs]))


def _setting(method, value):
    """A tuned value, flagged when it sits at the end of its grid (the optimum may lie beyond)."""
    grid = BASELINE_PARAMS if method in BASELINES else STEPS
    return f"{value:.3g}" + (" (grid end)" if value in (grid[0], grid[-1]) else "")


def table1_markdown(sets):
    """Measured rows (mean of the runs), then the paper's rows."""
    header = ["data set (rows, features occurring)", "lambda", "majority class"] + list(TABLE1_METHODS)
    rows = []
    for name, s in sets.items():
        cells = []
        for m in TABLE1_METHODS:
            err = _mean(s["results"][m], 0)
            std = float(np.std([r[0] for r in s["results"][m]]))
            cells.append(f"{err:.3f} ±{std:.3f} ({_mean(s['results'][m], 1):.3f})")
        rows.append([f"{name} ({s['rows']}, {s['n_features']})", f"{s['lambda']:.2e}",
                     f"{s['majority']:.3f}"] + cells)
    for topic, row in PAPER_TABLE1.items():
        rows.append([f"paper: RCV1 {topic}", "", ""] + [
            f"{row[m][0]:.3f}" + (f" ({row[m][1]:.3f})" if row[m][1] is not None else "")
            for m in TABLE1_METHODS])
    return md_table(header, rows)


def table4_markdown(census):
    """Per method: measured mean error (proportion of non-zeros), then the paper's row."""
    header = ["method", "source"] + [f"{p:g}" for p in PROPORTIONS]
    rows = []
    for m in TABLE4_METHODS:
        cells = []
        for p in PROPORTIONS:
            rec = census["results"][m][p]
            cell = f"{_mean(rec, 0):.4f} ±{np.std([r[0] for r in rec]):.4f}"
            if m.startswith("l1 "):
                cell += f" ({_mean(rec, 1):.3f})"
            cells.append(cell)
        rows.append([m, "measured (a9a)"] + cells)
        errors, sparsity = PAPER_TABLE4[m]
        rows.append([m, "paper (KDD census)"] + [
            f"{e:.3f}" + (f" ({sparsity[i]:.3f})" if sparsity else "") for i, e in enumerate(errors)])
    return md_table(header, rows)


def plot_sweep(sweep, path):
    """Figure 7: error against proportion of non-zeros, AROW as a line."""
    plt = pyplot()
    lambdas = sorted(sweep["curve"])
    floor = 1e-5
    nz = [max(_mean(sweep["curve"][l], 1), floor) for l in lambdas]
    err = [_mean(sweep["curve"][l], 0) for l in lambdas]
    std = [float(np.std([r[0] for r in sweep["curve"][l]])) for l in lambdas]
    fig, ax = plt.subplots(figsize=(7, 4.5))
    ax.errorbar(nz, err, yerr=std, fmt="o-", color="C3", ms=4, capsize=2, label="AdaGrad-RDA, l1")
    for k, (x, e, l) in enumerate(zip(nz, err, lambdas)):
        if float(np.log10(l)).is_integer():
            ax.annotate(f"{l:.0e}", (x, e), fontsize=7, xytext=(4, 6 if k % 2 else -12),
                        textcoords="offset points")
    a, s = mean_std(sweep["arow"])
    ax.axhline(a, color="k", ls="--", label=f"AROW (dense): {a:.3f}")
    ax.axhspan(a - s, a + s, color="k", alpha=0.1)
    ax.axvline(0.01, color="C7", ls=":", label="1% non-zeros")
    ax.set(xscale="log", ylabel="test error",
           xlabel=f"proportion of non-zeros (labels: lambda at each decade; 0 drawn at {floor:g})",
           title=f"Duchi et al. Fig. 7 setting: {SWEEP_SET}, lambda 1e-8 to 1e-1")
    ax.legend(fontsize=8)
    ax.grid(True, which="both", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


# errors closer than this count as a tie even when the runs agree closely (RULE's floor).
FLOOR = 0.001


def _std(pairs, k):
    return float(np.std([p[k] for p in pairs]))


def verdicts(sets, census, sweep):
    """One line per claim of Sec. 6.1, 6.4 and 6.5 (notes-adagrad.md Sec. 6.4), by RULE:
    an error ordering holds only beyond 2 std of the runs (Table 1: 4 held-out splits;
    Table 4: 10 shuffles) and at least FLOOR."""
    lines = []
    err = lambda s, m: _mean(s["results"][m], 0)
    sd = lambda s, m: _std(s["results"][m], 0)
    nzp = lambda s, m: _mean(s["results"][m], 1)
    beats = lambda s, a, b: lower(err(s, a), err(s, b), sd(s, a), sd(s, b), floor=FLOOR)
    cell = lambda s, m: f"{err(s, m):.3f} ±{sd(s, m):.3f}"
    names = list(sets)
    # sets where an l1 baseline sits at the majority-class error: it learned (almost) nothing there.
    idle = [f"{n}: {m} {cell(sets[n], m)} vs majority {sets[n]['majority']:.3f}" for n in names
            for m in ("RDA", "FB") if not lower(err(sets[n], m), sets[n]["majority"], sd(sets[n], m), floor=FLOOR)]
    idle_note = (" The l1 baselines at the majority-class error (learned almost nothing): "
                 + "; ".join(idle) + ".") if idle else ""

    worse = [(n, a, b) for n in names for a in ("AdaGrad-RDA", "AdaGrad-FB") for b in ("RDA", "FB")
             if not beats(sets[n], a, b)]
    lines.append(verdict(not worse, "Table 1: the AdaGrad variants have lower test error than RDA and FOBOS "
                         "('in every test ... the adaptive algorithms outperformed the non-adaptive')",
                         "Rule: each AdaGrad variant's mean error below RDA's and FB's beyond the margin, "
                         "on every set. " + ("Not shown: " + "; ".join(
                             f"{n}: {a} {cell(sets[n], a)} vs {b} {cell(sets[n], b)}" for n, a, b in worse) + "."
                             if worse else "No exception.") + idle_note))
    worse = [(n, a) for n in names for a in ("AdaGrad-RDA", "AdaGrad-FB") if not beats(sets[n], a, "AROW")]
    lines.append(verdict(not worse, "Table 1: both AdaGrad variants beat AROW on every task",
                         "Rule: mean error below AROW's beyond the margin. " + ("Not shown: " + "; ".join(
                             f"{n}: {a} {cell(sets[n], a)} vs AROW {cell(sets[n], 'AROW')}"
                             for n, a in worse) if worse else "No exception.")))
    worse = [n for n in names if not nzp(sets[n], "AdaGrad-RDA") < nzp(sets[n], "RDA")]
    lines.append(verdict(not worse, "Table 1: at the same lambda AdaGrad-RDA is sparser than RDA",
                         "Rule: smaller mean proportion of non-zeros on every set. " + (
                             "Exceptions: " + ", ".join(worse) if worse else "No exception.")))
    worse = [n for n in names if not (nzp(sets[n], "RDA") < nzp(sets[n], "FB")
                                      and nzp(sets[n], "AdaGrad-RDA") < nzp(sets[n], "AdaGrad-FB"))]
    lines.append(verdict(not worse, "Table 1: the RDA forms are sparser than the FOBOS forms "
                         "(paper: about half the non-zeros)",
                         "Rule: RDA < FB and AdaGrad-RDA < AdaGrad-FB in proportion of non-zeros on every set. "
                         + ("Exceptions: " + ", ".join(worse) if worse else "No exception.")))
    best = lambda n, ms: min(ms, key=lambda m: err(sets[n], m))
    pairs = {n: (best(n, ("AROW", "AdaGrad-RDA", "AdaGrad-FB")), best(n, ("RDA", "FB", "PA"))) for n in names}
    worse = [n for n, (a, b) in pairs.items() if not beats(sets[n], a, b)]
    lines.append(verdict(not worse, "Table 1: the adaptive algorithms (AROW, AdaGrad) are 'far superior' to "
                         "the non-adaptive ones (PA, RDA, FB)",
                         "Rule: the best adaptive error below the best non-adaptive error beyond the margin "
                         "on every set (a difference within the spread of the runs is no superiority, let "
                         "alone a far one). " + "; ".join(
                             f"{n}: {a} {cell(sets[n], a)} vs {b} {cell(sets[n], b)}"
                             + (" (within the margin)" if n in worse else "") for n, (a, b) in pairs.items())
                         + "."))

    res = census["results"]
    e4 = lambda m, p: _mean(res[m][p], 0)
    s4 = lambda m, p: _std(res[m][p], 0)
    b4 = lambda a, b, p: lower(e4(a, p), e4(b, p), s4(a, p), s4(b, p), floor=FLOOR)
    bad = [p for p in PROPORTIONS if not (b4("AdaGrad-RDA", "RDA", p) and b4("AdaGrad-RDA", "PA", p))]
    lines.append(verdict(not bad, "Table 4: AdaGrad-RDA beats RDA and PA at every training proportion",
                         "Rule: lower mean error than both beyond the margin. " + (
                             "Not shown at proportions " + ", ".join(f"{p:g}" for p in bad) if bad
                             else "No exception.")))
    bad = [p for p in PROPORTIONS if not (b4("l1 AdaGrad-RDA", "l1 RDA", p)
                                           and _mean(res["l1 AdaGrad-RDA"][p], 1) < _mean(res["l1 RDA"][p], 1))]
    lines.append(verdict(not bad, "Table 4: l1 AdaGrad-RDA beats l1 RDA on both error and sparsity at "
                         "every proportion", "Rule: lower mean error beyond the margin and fewer non-zeros. "
                         + ("Not shown at proportions " + ", ".join(f"{p:g}" for p in bad) if bad
                            else "No exception.")))
    bad = [p for p in PROPORTIONS if not all(b4("AROW", m, p) for m in TABLE4_METHODS if m != "AROW")]
    lines.append(verdict(not bad, "Table 4: AROW is best in every column",
                         "Rule: AROW's mean error below each of the five others' beyond the margin. " + (
                             "Not at proportions " + ", ".join(
                                 f"{p:g} (lowest mean: {min(TABLE4_METHODS, key=lambda m: e4(m, p))})"
                                 for p in bad) if bad else "No exception.")))
    lines.append(verdict(None, "Table 4: the paper's absolute numbers (error ~0.05, 4-7% non-zeros)",
                         "The KDD census set (4,001 features) is not here; a9a (123 features, a "
                         "different encoding of a related survey) has a different base error (~0.15) "
                         "and far fewer features to drop, so only the orderings are compared."))

    a = float(np.mean(sweep["arow"]))
    dense = [l for l in sweep["curve"] if _mean(sweep["curve"][l], 1) > 0.01]
    bad = [l for l in dense if _mean(sweep["curve"][l], 0) > a + 0.01]
    lines.append(verdict(bool(dense) and not bad, "Fig. 7: with more than 1% non-zeros, AdaGrad-RDA "
                         "matches AROW",
                         f"Rule: mean error within 1 point of AROW's ({a:.3f}) for every lambda giving "
                         f"more than 1% non-zeros ({len(dense)} lambdas). " + (
                             "Exceptions: lambda " + ", ".join(f"{l:.0e}" for l in bad) if bad
                             else "No exception.")))
    sparsest = max(sweep["curve"])
    e_sparse = _mean(sweep["curve"][sparsest], 0)
    lines.append(verdict(e_sparse > a + 0.05, "Fig. 7: with a high lambda the performance is poor",
                         f"At lambda = {sparsest:.0e}: error {e_sparse:.3f} with "
                         f"{_mean(sweep['curve'][sparsest], 1):.4f} non-zeros (rule: 5 points above AROW)."))
    lines.append(verdict(None, "Table 2 (ImageNet)", "No ImageNet here. Table 3 (MNIST multiclass, mixed "
                         "norms) and Fig. 5 are in `adagrad_mnist.md`."))
    return lines


def add_arguments(parser):
    """The options of ``python -m bench.papers adagrad_text``."""
    return add_common_arguments(parser, "2 runs instead of 4 (Table 1, Fig. 7), 3 shuffles "
                                        "instead of 10 (Table 4), lambda every decade (about 2 minutes)")


def run(args):
    """Tables 1 and 4 and the Figure 7 sweep; write adagrad_text.md and its PNG."""
    started = start(args)
    runs, shuffles = (2, 3) if args.quick else (4, 10)
    sweep_lambdas = SWEEP_LAMBDAS[::2] if args.quick else SWEEP_LAMBDAS
    sets, pooled = {}, {}
    for name, (files, width) in TEXT_SETS.items():
        X, y, n_features = load_pooled(args.data_dir, files, width)
        pooled[name] = (X, y, n_features)
        sets[name] = table1_set(X, y, n_features, runs, args.seed)
        sets[name].update(rows=X.shape[0], n_features=n_features)
        print(f"{NAME}: Table 1, {name}: " + ", ".join(
            f"{m} {_mean(sets[name]['results'][m], 0):.3f}" for m in TABLE1_METHODS), flush=True)
    census = table4(args.data_dir, shuffles, args.seed)
    print(f"{NAME}: Table 4 done, lambda {census['lambda']:.1e}", flush=True)
    X, y, n_features = pooled[SWEEP_SET]
    tuned = sets[SWEEP_SET]["params"]
    sweep = sparsity_sweep(X, y, n_features, tuned["AdaGrad-RDA"], tuned["AROW"], runs, sweep_lambdas,
                           args.seed)
    os.makedirs(args.out_dir, exist_ok=True)
    plot_sweep(sweep, os.path.join(args.out_dir, f"{NAME}_fig7.png"))

    tuned_rows = [[name, f"{s['lambda']:.2e}"] + [_setting(m, s["params"][m]) for m in TABLE1_METHODS]
                  for name, s in sets.items()]
    tuned_rows.append(["a9a (Table 4)", f"{census['lambda']:.2e}"] + [
        _setting(m, census["params"][m]) if m in census["params"] else "" for m in TABLE1_METHODS])
    sweep_rows = [[f"{l:.0e}", f"{_mean(sweep['curve'][l], 0):.3f}", f"{_mean(sweep['curve'][l], 1):.4f}"]
                  for l in sorted(sweep["curve"])]
    sections = [
        "Duchi, Hazan & Singer, *Adaptive Subgradient Methods for Online Learning and Stochastic "
        "Optimization* (JMLR 2011), Sec. 6.1, 6.4, 6.5: one pass, hinge loss.", "",
        "**The data differ from the paper's**: its RCV1 tasks (~800,000 articles, ~2 M bigram features) "
        "and KDD census (199,523 rows, 4,001 features) are not here. Table 1 is run on the RCV1 sample "
        "(1,500 rows), Reuters money-fx and w8a; Table 4 on a9a (UCI Adult). Absolute numbers cannot be "
        "compared, so the verdicts test the paper's orderings. All choices the paper leaves open are "
        "in the module docstring (`bench/papers/adagrad_text.py`). OCR: Table 1's "
        "\"044 (:238)\" and \".034 (176)\" have damaged punctuation only; Sec. 6.5's lambda range "
        "printed \"1078 to 10~!\" is read as 1e-8 to 1e-1 (the brief and notes-adagrad.md agree).", "",
        "## Verdicts", "", RULE, "", f"Floor: {FLOOR} (error).", "", *verdicts(sets, census, sweep), "",
        f"## Table 1: test error ±std (proportion of non-zeros), mean of {runs} runs, 25% held out", "",
        table1_markdown(sets), "",
        "The majority-class column is the error of always predicting the training split's larger "
        "class: an l1 model near it has learned little (w8a is 97% negative).", "",
        "Tuned settings (step eta0 for the fastprox methods, lambda for PA, r for AROW; lambda = the "
        "common l1 weight):", "",
        md_table(["data set", "lambda"] + list(TABLE1_METHODS), tuned_rows), "",
        f"## Table 4: a9a, test error ±std over {shuffles} shuffles (proportion of non-zeros of the "
        f"{census['n_features']} features), by proportion of the training set", "",
        table4_markdown(census), "",
        f"## Figure 7: sparsity against accuracy, {SWEEP_SET}, {runs} runs", "",
        f"![Figure 7]({NAME}_fig7.png)", "",
        f"AROW (dense) error: {np.mean(sweep['arow']):.3f} ± {np.std(sweep['arow']):.3f}.", "",
        md_table(["lambda", "AdaGrad-RDA error", "proportion of non-zeros"], sweep_rows),
    ]
    write_report(args.out_dir, NAME, "AdaGrad (Duchi, Hazan & Singer 2011), Sec. 6: text and census",
                 sections, started, args)
    return 0


if __name__ == "__main__":
    main(__doc__, add_arguments, run)
