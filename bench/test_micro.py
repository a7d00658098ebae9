"""Kernel micro-benchmarks under pytest-benchmark: what a change costs, per rule.

    pip install ".[bench]"
    pytest -n 0 bench/test_micro.py --benchmark-autosave     # before a change
    pytest -n 0 bench/test_micro.py --benchmark-compare      # after it: the ratios

One pass of single-row steps for every rule of the table (`fastprox._registry`), the
catch-up of every feature (reading `coef()` after a pass over rare features), and
the LIBSVM parser on a generated file. The data are generated and seeded, so runs
compare on any machine; pytest-benchmark records the machine with each run. Not
part of the test suite (its testpaths are tests/): timings are measured, never
asserted.
"""
import numpy as np
import pytest
import scipy.sparse as sp

from fastprox import dump_libsvm, load_libsvm
from fastprox._kernels import Learner
from fastprox._registry import RULES

ROWS, FEATURES = 20_000, 50_000


@pytest.fixture(scope="module")
def stream():
    """Zipf-like sparse rows (about 20 non-zeros each) and +-1 labels."""
    rng = np.random.default_rng(0)
    nnz = rng.poisson(20, ROWS) + 1
    indices = np.minimum(rng.zipf(1.3, nnz.sum()), FEATURES) - 1
    X = sp.csr_matrix((np.ones(nnz.sum()), indices, np.r_[0, np.cumsum(nnz)]), shape=(ROWS, FEATURES))
    X.sum_duplicates()
    y = np.where(rng.random(ROWS) < 0.5, 1.0, -1.0)
    return X, y


@pytest.mark.parametrize("rule", RULES, ids=["/".join((r.update, r.schedule, r.penalty)) for r in RULES])
def test_one_pass(benchmark, stream, rule):
    """One pass of single-row steps (the fast row kernel where the rule has one)."""
    X, y = stream

    def one_pass():
        learner = Learner(FEATURES, 1, rule.update, rule.schedule, rule.penalty, "log",
                          alpha=1e-5, eta0=0.1, delta=1.0)
        learner.fit_rows(X.data, X.indices, X.indptr, y, None, None, 1)

    benchmark(one_pass)


@pytest.mark.parametrize("rule", [r for r in RULES if r.fast_rows in ("fobos", "adagrad")],
                         ids=lambda r: "/".join((r.update, r.schedule, r.penalty)))
def test_catch_up_of_every_feature(benchmark, stream, rule):
    """Reading w_{T+1}: every feature caught up from its last touch."""
    X, y = stream
    learner = Learner(FEATURES, 1, rule.update, rule.schedule, rule.penalty, "log",
                      alpha=1e-5, eta0=0.1, delta=1.0)
    learner.fit_rows(X.data, X.indices, X.indptr, y, None, None, 1)

    benchmark(learner.count_nonzero)    # every weight of w_{T+1}, uncached (coef() caches it)


def test_parser(benchmark, stream, tmp_path_factory):
    """load_libsvm of the stream written as a LIBSVM file."""
    X, y = stream
    path = tmp_path_factory.mktemp("micro") / "stream.svm"
    dump_libsvm(X, y, path)
    benchmark(load_libsvm, path)
