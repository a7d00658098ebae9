"""AdaGrad's primal-dual form (rda + adagrad) with group penalties: each block's
weights solve  min sum_i (S_i w_i + beta_i w_i^2 / 2) + T alpha r(w)  with a
per-entry beta_i, which the kernel does by a monotone Newton root-find (l1_l2,
sparse_group) or an exact piecewise-linear solve (l1_linf). The reference
(reference_multiclass.block_solve) solves the same problems independently, with
scipy's brentq, and runs the contract eagerly. A group weight d_G multiplies the
block's c (sparse_group: its group part only)."""
import pickle

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings, strategies as st

from fastprox._kernels import Learner
from tests.support.reference import assert_contract_close
from tests.support.reference_multiclass import MulticlassReference, random_group_weights


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32 - 1), penalty=st.sampled_from(["l1_l2", "l1_linf", "sparse_group"]),
       loss=st.sampled_from(["log", "hinge"]), user_groups=st.booleans(),
       alpha=st.sampled_from([0.0, 0.01, 0.1, 0.5]), delta=st.sampled_from([0.0, 1e-8, 0.5]),
       split=st.floats(0, 1), weighted=st.booleans())
def test_rda_adagrad_groups_equal_eager(seed, penalty, loss, user_groups, alpha, delta, split, weighted):
    """Row or user groups, unweighted or with random group weights (zeros included),
    fit_rows split in two with a pickle round trip after each part."""
    rng = np.random.default_rng(seed)
    n, d, K = int(rng.integers(1, 20)), int(rng.integers(1, 9)), int(rng.choice([3, 4]))
    X = sp.random(n, d, density=float(rng.choice([0.2, 0.6, 1.0])), format="csr", random_state=rng,
                  data_rvs=lambda k: rng.uniform(-2, 2, k))
    y = rng.integers(0, K, n)
    groups = rng.integers(-1, 3, d) if user_groups else None
    n_groups = d if groups is None else int(groups.max(initial=-1)) + 1
    weights = random_group_weights(rng, n_groups) if weighted else None
    lazy = Learner(d, K, "rda", "adagrad", penalty, loss, alpha=alpha, eta0=0.5, delta=delta,
                   l1_ratio=0.5, multinomial=True, groups=groups, group_weights=weights)
    cut = int(split * n)
    for part in (np.arange(cut), np.arange(cut, n)):
        lazy.fit_rows(X.data, X.indices, X.indptr, y.astype(float), np.ones(n), part.astype(np.int64), 1)
        lazy = pickle.loads(pickle.dumps(lazy))
    eager = MulticlassReference(d, K, "rda", "adagrad", penalty, loss, alpha=alpha, eta0=0.5, delta=delta,
                                l1_ratio=0.5, multinomial=True, groups=groups, group_weights=weights)
    eager.run(X.toarray(), y.astype(float), np.ones(n), np.arange(n), 1)
    assert_contract_close(lazy.coef(), eager.coef())
    assert_contract_close(lazy.intercept(), eager.intercept())


def test_squared_group_and_rda_rho_are_refused_under_rda():
    with pytest.raises(ValueError, match="squared_group"):
        Learner(5, 3, "rda", "adagrad", "squared_group", "log", multinomial=True)
    with pytest.raises(ValueError, match="rda_rho=0"):
        Learner(5, 3, "rda", "adagrad", "l1_l2", "log", rda_rho=0.1, multinomial=True)
