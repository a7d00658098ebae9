"""What a row costs and what each of its non-zeros adds, per update rule.

Rows of k = 1, 4, 14, 40 distinct features (values 1.0) over d = 123, so the
state stays in L1 and instructions, not cache misses, set the pace (the case
of a9a, w8a, ijcnn1); 50,000 rows, median of 15 passes of the kernel alone
(`Learner.fit_rows`). The cost per non-zero is the slope between k = 14 and
k = 40; the cost per row is what k = 1 leaves after one non-zero. The log
loss and the hinge loss are both timed: their difference is the log loss's
exp and division. scikit-learn's `SGDClassifier` (log loss, one pass) is
timed on the same rows as the reference; its times include its per-call
work (about 0.3 ms, under 6 ns a row). Prints a markdown table.

    python -m bench.peers.row_costs
"""
import time
import warnings

import numpy as np
import scipy.sparse as sp
from sklearn.linear_model import SGDClassifier

from fastprox._kernels import Learner

RULES = (("fobos", "invsqrt"), ("fobos", "adagrad"), ("rda", "adagrad"), ("ftrl", "adagrad"))
WIDTHS = (1, 4, 14, 40)


def rows(k, n=50_000, d=123):
    """n rows of k distinct features among d, values 1.0, random labels (CSR arrays)."""
    rng = np.random.default_rng(0)
    indices = np.sort(np.stack([rng.choice(d, k, replace=False) for _ in range(n)]), axis=1)
    return (np.ones(n * k), indices.ravel().astype(np.int32),
            np.arange(0, n * k + 1, k, dtype=np.int32), rng.choice([-1.0, 1.0], n))


def ns_per_row(fit, k, n=50_000, runs=15):
    """Median nanoseconds per row of fit(data, indices, indptr, y) over rows(k)."""
    arrays = rows(k, n)
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fit(*arrays)
        times.append(time.perf_counter() - start)
    return 1e9 * float(np.median(times)) / n


def kernel(update, schedule, loss):
    def fit(data, indices, indptr, y):
        learner = Learner(123, 1, update, schedule, "l1", loss, alpha=1e-5, eta0=0.5)
        n = len(y)
        learner.fit_rows(data, indices, indptr, y, np.ones(n), np.arange(n, dtype=np.int64), 1)
    return fit


def sklearn(penalty):
    def fit(data, indices, indptr, y):
        X = sp.csr_matrix((data, indices, indptr), shape=(len(y), 123))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            SGDClassifier(loss="log_loss", penalty=penalty, alpha=1e-5, max_iter=1, tol=None,
                          shuffle=False).fit(X, y)
    return fit


def main():
    print("| learner | loss | " + " | ".join(f"ns/row, {k} nnz" for k in WIDTHS)
          + " | ns per non-zero | ns per row |")
    print("|---|---|" + "---:|" * (len(WIDTHS) + 2))
    learners = [(f"fastprox {u}+{s}", loss, kernel(u, s, loss)) for u, s in RULES for loss in ("log", "hinge")]
    learners += [(f"scikit-learn SGD {p}", "log", sklearn(p)) for p in ("l1", "l2")]
    for name, loss, fit in learners:
        t = [ns_per_row(fit, k) for k in WIDTHS]
        slope = (t[3] - t[2]) / (WIDTHS[3] - WIDTHS[2])
        print(f"| {name} | {loss} | " + " | ".join(f"{v:.1f}" for v in t)
              + f" | {slope:.1f} | {t[0] - slope:.1f} |")


if __name__ == "__main__":
    main()
