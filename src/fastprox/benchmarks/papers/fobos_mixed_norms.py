"""FOBOS, Duchi & Singer (JMLR 2009), Sec. 7.6: mixed-norm regularization.

Tables 2 and 3 (test error of multinomial logistic regression at 5, 10, 20 and
40% non-zero rows of W, for l1, l1/l2 and l1/linf) on LandSat and MNIST,
Figure 11 (the zero pattern of W learned on the synthetic 200 x 30 problem),
and a speed table: one multinomial l1/l2 pass against scikit-learn's
one-vs-rest SGDClassifier(penalty="l1") pass on a sparse 10-class problem.

Choices the paper leaves open, and the ones made here:

* Training: deterministic FOBOS (every step on the mean gradient of all the
  training rows, the paper's Fig. 10 "green" variant) with the constant step
  eta = 1/L, L = half the largest eigenvalue of [X 1]'X/n (a bound on the
  curvature of the mean multinomial log loss), 60 steps (--quick: 15). Single
  examples or mini-batches of 10 (tried first) keep every row non-zero up to
  alphas where the error passes 0.3: a zero row stays zero only while the
  step's gradient row is within the threshold, and a stochastic gradient row
  rarely is (the paper's Sec. 7.4 makes the same observation on sparsity).
* "% non-zero" is the share of rows of W (features) with a non-zero weight for
  some class, the "row sparsity" of the paper's text. Each regularizer runs a
  geometric grid of alpha; each cell shows the fit nearest to the target
  (its measured row share in brackets); the grid is coarse (5 alphas), then
  bisected towards each target 4 times (--quick: 3), so a cell can miss its
  target.
* LandSat: satimage.scale (4,435 rows) for training and satimage.scale.t (2,000)
  for testing; the 36 features expanded to all 36 x 36 = 1296 products x_i x_j
  (ordered pairs, squares included: "the product of all features").
* MNIST: only the 10,000 test digits exist here (mnist_t10k). A seeded random
  half (5,000) trains, the other half tests. Each digit z is scaled to norm 2
  (raw gray levels make every ||z_i - z_j||^2 huge and every kernel value 0;
  norm 2 puts exp(-||z_i - z_j||^2 / 2) = exp(2 cos - 2) in [e^-2, 1]). The
  support set is 1,000 training digits drawn at random (the paper used its
  15,000 training examples, i.e. 15,000 features): d = 1,000.
* Figure 11: W is drawn 5 times (--quick: 2) with the same pattern (first 100
  rows zero); each panel shows the share of runs in which a weight is zero.
  The training for it is deterministic FOBOS (full-gradient steps), see
  ``fit_structure``.
* Speed: 10^5 rows, d = 2^18, 30 non-zeros a row, 10 classes from a planted
  sparse W; median of 5 runs (--quick: 3) of one pass each, in the same
  process, n_jobs=1 for scikit-learn (log_loss, penalty="l1", optimal step).
"""
import importlib.util
import os
import time

import numpy as np
import scipy.sparse as sp

from fastprox import ProxClassifier

from ._common import REPO, add_common_arguments, load, main, md_table, pyplot, write_report

NAME = "fobos_mixed_norms"
PENALTIES = ("l1", "l1_l2", "l1_linf")
LABELS = {"l1": "l1", "l1_l2": "l1/l2", "l1_linf": "l1/linf"}
TARGETS = (5, 10, 20, 40)

# The paper's Tables 2 and 3: % non-zero rows -> test error of (l1, l1/l2, l1/linf).
PAPER = {
    "LandSat": {5: (.43, .29, .40), 10: (.30, .25, .30), 20: (.26, .22, .26), 40: (.22, .19, .22)},
    "MNIST": {5: (.37, .36, .47), 10: (.26, .26, .31), 20: (.15, .15, .24), 40: (.08, .08, .16)},
}
# coarse alpha grids (per example) around 5% to 40% non-zero rows, refined by bisection.
GRIDS = {"l1": np.geomspace(3e-3, 0.3, 5), "l1_l2": np.geomspace(3e-3, 0.3, 5),
         "l1_linf": np.geomspace(1e-2, 1.0, 5)}

# ---------------------------------------------------------------- the synthetic problem of Sec. 7.6
N_FEATURES, N_CLASSES, N_ZERO_ROWS, N_EXAMPLES = 200, 30, 100, 1000
# alpha for about 50% zero weights (tuned on seed 0 by bisection).
STRUCTURE_ALPHAS = {"l1_l2": 0.035, "l1_linf": 0.16, "l1": 0.0019}


def structure_data(seed=0):
    """X (1000 x 200, standard normal), labels argmax(X W) with 10% replaced at random,
    for a random W whose first 100 rows are zero."""
    rng = np.random.default_rng(seed)
    W = rng.standard_normal((N_FEATURES, N_CLASSES))
    W[:N_ZERO_ROWS] = 0
    X = rng.standard_normal((N_EXAMPLES, N_FEATURES))
    y = np.argmax(X @ W, axis=1)
    noisy = rng.random(N_EXAMPLES) < 0.1
    y[noisy] = rng.integers(0, N_CLASSES, noisy.sum())
    return X, y


def fit_structure(penalty, X, y, alpha=None):
    """W as (features, classes) after 200 full-gradient FOBOS steps (eta = 1).

    Full gradients because the zero rows belong to the minimizer: one example's
    gradient row (about |x_j| in size) exceeds any threshold that keeps the
    informative rows alive, so single-example steps leave half the zero rows on.
    eta = 1 is below 1/L for the mean multinomial log loss on this X."""
    clf = ProxClassifier(loss="log", multi_class="multinomial", penalty=penalty,
                         alpha=STRUCTURE_ALPHAS[penalty] if alpha is None else alpha,
                         update="fobos", schedule="constant", eta0=1.0, batch_size=len(y),
                         max_iter=200, shuffle=False)
    return clf.fit(X, y).coef_.T


# ---------------------------------------------------------------- data
def landsat(data_dir):
    """Train and test rows of satimage with the 1296 pairwise products."""
    def products(X):
        X = np.asarray(X.todense())
        return np.einsum("ni,nj->nij", X, X).reshape(len(X), -1)
    Xtr, ytr = load(data_dir, "satimage/satimage.scale", n_features=36)
    Xte, yte = load(data_dir, "satimage/satimage.scale.t", n_features=36)
    return products(Xtr), ytr, products(Xte), yte


def mnist(data_dir, seed, n_support=1000):
    """Gaussian-kernel features exp(-||z_i - z_s||^2 / 2) to 1000 training digits."""
    X, y = load(data_dir, "mnist_t10k/mnist_t10k", n_features=784)
    Z = np.asarray(X.todense())
    Z *= 2.0 / np.linalg.norm(Z, axis=1, keepdims=True)
    rows = np.random.default_rng(seed).permutation(len(y))
    train, test = rows[:len(y) // 2], rows[len(y) // 2:]
    support = Z[train[:n_support]]

    def features(A):
        sq = (A * A).sum(1)[:, None] + (support * support).sum(1)[None, :] - 2 * A @ support.T
        return np.exp(-0.5 * np.maximum(sq, 0.0))
    return features(Z[train]), y[train], features(Z[test]), y[test]


# ---------------------------------------------------------------- Tables 2 and 3
def row_path(name, Xtr, ytr, Xte, yte, penalty, steps, refine):
    """(alpha, % non-zero rows, test error) of every fit: a coarse alpha grid, then
    ``refine`` bisections (in log alpha) towards each target row share."""
    A = np.hstack([Xtr, np.ones((len(Xtr), 1))])
    eta = 2.0 / np.linalg.eigvalsh(A.T @ A / len(A))[-1]

    def fit(alpha):
        clf = ProxClassifier(loss="log", multi_class="multinomial", penalty=penalty, alpha=alpha,
                             update="fobos", schedule="constant", eta0=eta, batch_size=len(ytr),
                             max_iter=steps, shuffle=False).fit(Xtr, ytr)
        share = 100.0 * np.mean(np.any(clf.coef_ != 0, axis=0))
        print(f"  {name} {penalty} alpha={alpha:.3g}: {share:.1f}% rows", flush=True)
        return alpha, share, float(np.mean(clf.predict(Xte) != yte))

    path = [fit(alpha) for alpha in GRIDS[penalty]]
    for target in TARGETS:
        for _ in range(refine):
            lo = max((p[0] for p in path if p[1] > target), default=None)
            hi = min((p[0] for p in path if p[1] <= target), default=None)
            if lo is None or hi is None or hi < lo:
                break
            path.append(fit(np.sqrt(lo * hi)))
    return sorted(path)


def nearest(path, target):
    return min(path, key=lambda p: abs(p[1] - target))


def error_table(name, paths):
    """Markdown: per target, the measured error (row share) beside the paper's."""
    rows = []
    for target in TARGETS:
        cells = [str(target)]
        for i, penalty in enumerate(PENALTIES):
            _, share, err = nearest(paths[penalty], target)
            cells.append(f"{err:.2f} ({share:.0f}%) / {PAPER[name][target][i]:.2f}")
        rows.append(cells)
    header = ["% non-zero rows"] + [f"{LABELS[p]}: ours (rows) / paper" for p in PENALTIES]
    return md_table(header, rows)


def path_table(paths):
    rows = [[LABELS[p], f"{a:.3g}", f"{s:.1f}", f"{e:.3f}"] for p in PENALTIES for a, s, e in paths[p]]
    return md_table(["penalty", "alpha", "% non-zero rows", "test error"], rows)


# ---------------------------------------------------------------- Figure 11
def figure_11(out_dir, repeats):
    """The share of runs in which each weight is zero: true W and the three penalties."""
    zero = {p: np.zeros((N_FEATURES, N_CLASSES)) for p in ("l1_l2", "l1_linf", "l1")}
    found = {p: [] for p in zero}
    for seed in range(repeats):
        X, y = structure_data(seed)
        for p in zero:
            W = fit_structure(p, X, y)
            zero[p] += (W == 0) / repeats
            found[p].append(np.all(W[:N_ZERO_ROWS] == 0, axis=1).mean())
    truth = np.zeros((N_FEATURES, N_CLASSES))
    truth[:N_ZERO_ROWS] = 1.0
    plt = pyplot()
    fig, axes = plt.subplots(1, 4, figsize=(8, 5), sharey=True)
    panels = [("true W", truth)] + [(f"{LABELS[p]}\n{100 * np.mean(found[p]):.0f}% zero rows found", zero[p])
                                     for p in ("l1_l2", "l1_linf", "l1")]
    for ax, (title, share) in zip(axes, panels):
        ax.imshow(share, cmap="gray", vmin=0, vmax=1, aspect="auto", interpolation="nearest")
        ax.set_title(title, fontsize=9)
        ax.set_xlabel("class")
    axes[0].set_ylabel("feature (row of W)")
    fig.suptitle(f"Zero pattern of W (white: zero in all {repeats} runs, black: never)", fontsize=10)
    fig.tight_layout()
    path = os.path.join(out_dir, "fobos_fig11.png")
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path, {p: (100 * np.mean(found[p]), 100 * np.mean(zero[p])) for p in zero}


# ---------------------------------------------------------------- speed
def sparse_problem(seed, n=100_000, d=2**18, nnz=30, K=10):
    """Sparse rows (30 random features, values N(0, 1)), labels argmax of a planted
    W with 2,000 informative features."""
    rng = np.random.default_rng(seed)
    indices = np.sort(rng.integers(0, d, (n, nnz)), axis=1).ravel()
    X = sp.csr_matrix((rng.standard_normal(n * nnz), indices, np.arange(0, n * nnz + 1, nnz)), shape=(n, d))
    X.sum_duplicates()
    W = np.zeros((d, K))
    informative = rng.choice(d, 2000, replace=False)
    W[informative] = rng.standard_normal((2000, K))
    return X, np.asarray(np.argmax(X @ W, axis=1)).ravel()


def describe_machine():
    """bench/machine.py's describe_machine() (bench/ is scripts, not a package)."""
    spec = importlib.util.spec_from_file_location("machine", REPO / "bench" / "machine.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.describe_machine()


def speed_table(results_dir, repeats, seed):
    """One multinomial l1/l2 pass vs SGDClassifier(penalty="l1") one-vs-rest, medians."""
    from sklearn.linear_model import SGDClassifier

    X, y = sparse_problem(seed)
    ours = lambda: ProxClassifier(loss="log", multi_class="multinomial", penalty="l1_l2", alpha=1e-6,
                                  update="fobos", schedule="invsqrt", eta0=0.5, max_iter=1,
                                  shuffle=False).fit(X, y)
    theirs = lambda: SGDClassifier(loss="log_loss", penalty="l1", alpha=1e-6, max_iter=1, tol=None,
                                   shuffle=False, n_jobs=1).fit(X, y)
    times = {"fastprox": [], "sklearn": []}
    for _ in range(repeats):
        for key, fit in (("fastprox", ours), ("sklearn", theirs)):
            start = time.perf_counter()
            fit()
            times[key].append(time.perf_counter() - start)
    med = {k: float(np.median(v)) for k, v in times.items()}
    lines = ["# One multinomial l1/l2 pass vs scikit-learn's one-vs-rest l1 pass", "",
             describe_machine(),
             f"- Data: {X.shape[0]:,} rows, d = 2^18 = {X.shape[1]:,}, {X.nnz / X.shape[0]:.1f} "
             f"non-zeros a row, 10 classes (argmax of a planted W on 2,000 features); float64 CSR.",
             "- fastprox: `ProxClassifier(multi_class='multinomial', penalty='l1_l2', update='fobos', "
             "schedule='invsqrt', eta0=0.5, alpha=1e-6, max_iter=1, shuffle=False)`.",
             "- scikit-learn: `SGDClassifier(loss='log_loss', penalty='l1', alpha=1e-6, max_iter=1, "
             "tol=None, shuffle=False, n_jobs=1)`: 10 binary passes.",
             f"- `fit` wall time (input checks included), median of {repeats} alternating runs in one "
             f"process (`python -m fastprox.benchmarks.papers.{NAME}`).", "",
             md_table(["learner", "median s", "all runs (s)"],
                      [[k, f"{med[k]:.3f}", ", ".join(f"{t:.3f}" for t in times[k])] for k in times]),
             "", f"Speed-up: **{med['sklearn'] / med['fastprox']:.1f}x** (target >= 2x)."]
    os.makedirs(results_dir, exist_ok=True)
    path = os.path.join(results_dir, "multiclass_speed.md")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    print(f"wrote {path}")
    return med


# ---------------------------------------------------------------- entry points
def add_arguments(parser):
    add_common_arguments(parser, "15 steps, 2 Figure 11 runs, 3 speed runs")
    parser.add_argument("--results-dir", default=os.path.join("bench", "results"),
                        help="where multiclass_speed.md goes (default: bench/results)")
    return parser


def run(args):
    started = time.perf_counter()
    steps, refine = (15, 3) if args.quick else (60, 4)
    sections = []
    for name, loader in (("LandSat", lambda: landsat(args.data_dir)),
                         ("MNIST", lambda: mnist(args.data_dir, args.seed))):
        Xtr, ytr, Xte, yte = loader()
        paths = {p: row_path(name, Xtr, ytr, Xte, yte, p, steps, refine) for p in PENALTIES}
        table = "2" if name == "LandSat" else "3"
        sections += [f"## Table {table}: {name} ({Xtr.shape[0]} training rows, {Xtr.shape[1]} features, "
                     f"{Xte.shape[0]} test rows)", "", error_table(name, paths), "",
                     "<details><summary>every alpha</summary>", "", path_table(paths), "", "</details>", ""]
    fig, recovery = figure_11(args.out_dir, 2 if args.quick else 5)
    sections += ["## Figure 11: zero pattern on the synthetic 200 x 30 problem", "",
                 f"![Figure 11]({os.path.basename(fig)})", "",
                 md_table(["penalty", "zero rows found (paper)", "zero weights"],
                          [[LABELS[p], f"{recovery[p][0]:.1f}% ({paper})", f"{recovery[p][1]:.1f}%"]
                           for p, paper in (("l1_l2", "96.3%"), ("l1_linf", "94.5%"), ("l1", "0%"))]), ""]
    med = speed_table(args.results_dir, 3 if args.quick else 5, args.seed)
    sections += ["## Speed", "", f"See `{args.results_dir}/multiclass_speed.md`: fastprox "
                 f"{med['fastprox']:.2f} s, scikit-learn {med['sklearn']:.2f} s a pass."]
    write_report(args.out_dir, NAME, "FOBOS Sec. 7.6: mixed norms (Tables 2, 3, Figure 11)",
                 sections, started, args)
    return 0


if __name__ == "__main__":
    main(__doc__, add_arguments, run)
