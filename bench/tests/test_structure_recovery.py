"""Structure recovery with mixed norms (FOBOS, Duchi & Singer 2009, Sec. 7.6, Fig. 11).

A 200 x 30 weight matrix whose first 100 rows are zero generates 1000 Gaussian
examples (labels by argmax, 10% of them replaced by a random class). Multinomial
logistic regression with l1/l2 or l1/linf, with alpha set so that about half of
the learned weights are zero, finds at least 90% of the zero rows (the paper:
96.3% and 94.5%); plain l1 at the same sparsity spreads its zeros over all rows
and finds almost none (the paper: none).

Why full-gradient steps (batch_size = n, constant eta0 = 1, 200 iterations):
the paper minimizes the regularized objective, and it is the minimizer that has
the zero rows. Single-example FOBOS does not reach it in that sense: a zero row
stays zero only while the step's gradient row is within the threshold, and a
single example's gradient row (|x_j| times the score gradient, about 1) exceeds
any alpha that leaves the informative rows alive; with one example per step
about half of the zero rows stay on (measured with invsqrt steps, 10 and 30
passes: 43%-49% of the zero rows found, and about half of the true rows
switched off). With the mean gradient the iterates are proximal gradient
descent; eta0 = 1 is below 1/L for the mean multinomial log loss here (L is at
most half the largest eigenvalue of X'X / n, about 2.1 / 2), and 200
iterations settle the zero pattern (100 leave l1/l2 at the 90% line).
The data and the fit are fobos_mixed_norms' (its Figure 11 uses them); the
alphas there were tuned once (seed 0) for 50% zero weights, and the test checks
that the sparsity is still about one half.
"""
import numpy as np
import pytest

from bench.papers.fobos_mixed_norms import N_ZERO_ROWS, fit_structure, structure_data


@pytest.fixture(scope="module")
def data():
    return structure_data(seed=0)


@pytest.mark.parametrize("penalty", ["l1_l2", "l1_linf"])
def test_mixed_norms_find_the_zero_rows(data, penalty):
    W = fit_structure(penalty, *data)
    assert 0.4 <= np.mean(W == 0) <= 0.6
    zero_rows = np.all(W == 0, axis=1)
    assert zero_rows[:N_ZERO_ROWS].mean() >= 0.9
    assert zero_rows[N_ZERO_ROWS:].mean() <= 0.15     # and not by switching everything off


def test_plain_l1_finds_almost_no_zero_row(data):
    W = fit_structure("l1", *data)
    assert 0.4 <= np.mean(W == 0) <= 0.6
    assert np.all(W == 0, axis=1)[:N_ZERO_ROWS].mean() <= 0.05
