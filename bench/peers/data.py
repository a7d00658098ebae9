"""The suite's problems: a training and a test set of +-1 labelled CSR rows,
and the same training rows as files (LIBSVM, VW text, VW cache), written on
first use into a scratch folder.

The training rows are shuffled once (seeded) and every learner then makes
unshuffled passes in that order, so that all see the same stream. Sets with
a published test file use it; the others get a seeded 75/25 split."""
import os
import shutil
import tempfile
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

from fastprox import dump_libsvm, load_libsvm

#: name -> (training file, test file or None), relative to the data folder.
REAL_SETS = {
    "a9a": ("a9a/a9a", "a9a/a9a.t"),
    "w8a": ("w8a/w8a", None),
    "ijcnn1": ("ijcnn1/ijcnn1.trn", "ijcnn1/ijcnn1.tst"),
    "reuters": ("reuters_moneyfx/reuters.trn", "reuters_moneyfx/reuters.tst"),
    "rcv1 sample": ("rcv1_vw_small/rcv1_small.train.svm", "rcv1_vw_small/rcv1_small.test.svm"),
}
TEST_SHARE = 0.25


@dataclass
class Problem:
    name: str
    description: str
    X_train: sp.csr_matrix
    y_train: np.ndarray
    X_test: sp.csr_matrix
    y_test: np.ndarray
    workdir: str = field(default_factory=lambda: tempfile.mkdtemp(prefix="fastprox-peers-"))

    @property
    def n_features(self):
        return self.X_train.shape[1]

    def libsvm_path(self):
        """The training rows as a one-based LIBSVM file."""
        path = os.path.join(self.workdir, "train.svm")
        if not os.path.exists(path):
            dump_libsvm(self.X_train, self.y_train, path)
        return path

    def vw_path(self):
        """The training rows in VW's text format: `label |f column:value ...`."""
        path = os.path.join(self.workdir, "train.vw")
        if not os.path.exists(path):
            with open(self.libsvm_path()) as src, open(path, "w") as out:
                for line in src:
                    label, _, features = line.rstrip("\n").partition(" ")
                    out.write(f"{label} |f {_zero_based(features)}\n")
        return path

    def vw_cache_path(self, bits):
        """VW's binary cache of `vw_path()` for `-b bits` (written by one untimed VW pass)."""
        path = os.path.join(self.workdir, f"train.b{bits}.vw.cache")
        if not os.path.exists(path):
            import vowpalwabbit
            vowpalwabbit.Workspace(arg_list=["-d", self.vw_path(), "--cache_file", path, "-k",
                                             "--quiet", "-b", str(bits)]).finish()
        return path

    def close(self):
        shutil.rmtree(self.workdir, ignore_errors=True)


def _zero_based(features):
    """'1:0.5 7:1' -> '0:0.5 6:1': VW names the columns as the CSR matrix does."""
    return " ".join(f"{int(i) - 1}:{v}" for i, _, v in (f.partition(":") for f in features.split()))


def from_arrays(name, description, X, y, X_test=None, y_test=None, seed=0, binary=True):
    """A Problem from CSR rows and labels (`binary`: any classes, the largest one +1
    and the others -1; else the labels as they are): the given test set, or a
    seeded 75/25 split; training rows shuffled once."""
    X = sp.csr_matrix(X, dtype=np.float64)
    rng = np.random.default_rng(seed)
    if binary:
        positive = np.max(y)
        y = np.where(y == positive, 1.0, -1.0)
        if y_test is not None:
            y_test = np.where(y_test == positive, 1.0, -1.0)
    if X_test is None:
        order = rng.permutation(X.shape[0])
        cut = int(round((1 - TEST_SHARE) * X.shape[0]))
        X, y, X_test, y_test = X[order[:cut]], y[order[:cut]], X[order[cut:]], y[order[cut:]]
    else:
        order = rng.permutation(X.shape[0])
        X, y = X[order], y[order]
    X_test = sp.csr_matrix(X_test, dtype=np.float64)
    return Problem(name, description, X, y, X_test, y_test)


def real_sets(data_dir, names=None, sets=REAL_SETS, binary=True):
    """The LIBSVM sets of `sets` (name -> (training file, test file or None))
    found under `data_dir` (others are skipped), as `from_arrays` makes them."""
    problems = []
    for name, (train, test) in sets.items():
        if names is not None and name not in names:
            continue
        train_path = os.path.join(data_dir, train)
        if not os.path.exists(train_path):
            continue
        X, y = load_libsvm(train_path, zero_based=False)
        X_test = y_test = None
        if test is not None:
            X_test, y_test = load_libsvm(os.path.join(data_dir, test), zero_based=False)
            width = max(X.shape[1], X_test.shape[1])
            X, X_test = _widen(X, width), _widen(X_test, width)
        split = "its test file" if test else f"a seeded {1 - TEST_SHARE:.0%}/{TEST_SHARE:.0%} split"
        problems.append(from_arrays(name, f"`{train}`, tested on {split}", X, y, X_test, y_test,
                                    binary=binary))
    return problems


def _widen(X, width):
    return sp.csr_matrix((X.data, X.indices, X.indptr), shape=(X.shape[0], width))


def text_like(n_rows, n_features, seed=0):
    """The shipped synthetic set of `fastprox train` (tf-normalized Zipf(1.1)
    bags of words, logistic labels): what an install can run without data."""
    from fastprox.stream.synthetic import ZIPF_EXPONENT, text_like as generate
    X, y, X_test, y_test = generate(n_rows, n_features, seed, test_share=TEST_SHARE)
    return from_arrays(f"text-like n={n_rows:,}", f"`fastprox.stream.synthetic.text_like`: {n_rows:,} rows, "
                       f"d = {n_features:,}, Zipf({ZIPF_EXPONENT}) words, tf rows",
                       X, y, X_test, y_test, seed)
