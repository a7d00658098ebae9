"""The lazy FOBOS l1 step of Table 1: equal to the eager steps, and to the projection it is timed against."""
import numpy as np
import pytest

from bench.lazy_l1 import LazyL1
from fastprox.projection import SparseL1Ball


def soft(v, a):
    return np.sign(v) * np.maximum(np.abs(v) - a, 0.0)


def test_lazy_steps_equal_eager_steps():
    rng = np.random.default_rng(0)
    d = 500
    w = rng.normal(size=d)
    lazy, eager = LazyL1(w), w.copy()
    for t in range(1, 300):
        idx = rng.choice(d, 20, replace=False).astype(np.intp)
        g, eta, lam = rng.normal(size=20), 0.1 / np.sqrt(t), 0.2
        lazy.step(idx, g, eta, lam)
        eager[idx] -= eta * g
        eager = soft(eager, eta * lam)
    np.testing.assert_allclose(lazy.to_dense(), eager, rtol=0, atol=1e-12)
    assert 0 < np.count_nonzero(eager) < d


def test_step_with_the_projection_shift_equals_the_projection():
    """Table 1's lambda matching: Pi(w + g) = soft(w + g, theta)."""
    rng = np.random.default_rng(1)
    d, s = 2000, 300
    w = rng.uniform(0, 1, d) * rng.choice([-1, 1], d)
    w /= np.abs(w).sum()
    debt = rng.uniform(0, 1 / d, d)
    ball, lazy = SparseL1Ball(w, 1.0), LazyL1(np.sign(w) * (np.abs(w) + debt), 1 / d - debt, 1 / d)
    idx, g = rng.choice(d, s, replace=False).astype(np.intp), rng.normal(0, 1 / d, s)
    ball.add(idx, g)
    lazy.step(idx, -g, 1.0, ball.theta)
    np.testing.assert_allclose(lazy.to_dense(), ball.to_dense(), rtol=0, atol=1e-14)


def test_repeated_index_is_refused():
    with pytest.raises(ValueError, match="distinct"):
        LazyL1(np.ones(3)).step(np.array([1, 1], dtype=np.intp), np.ones(2), 0.1, 0.1)
