"""The embedded default data set of ``fastprox train``: sparse, text-like, seeded.

Rows are bags of words: a log-normal number of tokens per row (median 40),
each token a feature drawn from a Zipf law over the vocabulary (exponent
1.1, as word frequencies), counted and the row scaled to unit l2 norm
(tf weighting). Labels are +-1 from a logistic model on a sparse true weight
vector (5% of the features matter), so the best accuracy is well below 1 and
l1 penalties have something to find. Generated in memory in about a second
for the default 100,000 rows; the same seed gives the same data everywhere.
"""
import numpy as np
import scipy.sparse as sp
from scipy.special import expit

ZIPF_EXPONENT = 1.1
MEDIAN_TOKENS = 40
RELEVANT_SHARE = 0.05
MARGIN_SCALE = 3.0


def text_like(n_rows, n_features, seed, test_share=0.2):
    """``(X_train, y_train, X_test, y_test)``: CSR float64 rows of width
    ``n_features``, labels -1.0 / 1.0, the last ``test_share`` of the rows held out."""
    rng = np.random.default_rng(seed)
    lengths = np.maximum(1, rng.lognormal(np.log(MEDIAN_TOKENS), 0.6, n_rows).astype(np.int64))
    words = rng.permutation(n_features)[_zipf_ranks(rng, lengths.sum(), n_features)]
    indptr = np.concatenate([[0], np.cumsum(lengths)])
    X = sp.csr_matrix((np.ones(len(words)), words, indptr), shape=(n_rows, n_features))
    X.sum_duplicates()
    X.data /= np.repeat(np.sqrt(np.add.reduceat(X.data ** 2, X.indptr[:-1])), np.diff(X.indptr))
    w = rng.normal(size=n_features) * (rng.random(n_features) < RELEVANT_SHARE)
    margin = X @ w
    margin = MARGIN_SCALE * (margin - np.median(margin)) / margin.std()
    y = np.where(rng.random(n_rows) < expit(margin), 1.0, -1.0)
    split = n_rows - max(1, int(round(test_share * n_rows)))
    return X[:split], y[:split], X[split:], y[split:]


def _zipf_ranks(rng, size, n):
    """``size`` ranks in [0, n), P(rank k) ~ (k + 1)^-s: the continuous power law's
    inverse CDF on [1, n + 1), floored (close to Zipf and far faster than a search)."""
    e = 1.0 - ZIPF_EXPONENT
    x = (1.0 + rng.random(size) * ((n + 1.0) ** e - 1.0)) ** (1.0 / e)
    return np.minimum(x.astype(np.int64) - 1, n - 1)
