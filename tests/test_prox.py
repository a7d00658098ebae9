"""The proxes of fastprox.prox checked by what characterizes them, with no reference
implementation: optimality (subgradient) conditions, Moreau's decomposition,
Martins et al.'s Corollary 3 and the squared / unsquared group lasso equivalence.

``prox_X(V, a)`` must return u = argmin ||u - V||^2 / 2 + a r_X(u), i.e.
V - u in a * subdifferential of r_X at u. Blocks mix zeros, ties, entries many
orders of magnitude apart and overall scales from 1e-100 to 1e100 (kept where
squares neither overflow nor underflow); every tolerance is relative to the
block's scale.
"""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from fastprox.prox import (prox_berhu, prox_l1, prox_l1_l2, prox_l1_linf, prox_sparse_group,
                           prox_squared_group)

RTOL = 1e-9
ENTRIES = st.one_of(st.sampled_from([0.0, 0.0, 1.0, -1.0, 0.5, -0.5, 1e-30, -1e-12]),
                    st.floats(-2.0, 2.0, allow_nan=False, allow_infinity=False))
THRESHOLDS = st.sampled_from([0.0, 1e-13, 1e-3, 0.1, 0.5, 1.0, 3.0, 100.0])
SCALES = st.sampled_from([1e-100, 1e-8, 1e-3, 1.0, 1.0, 7.0, 1e5, 1e100])


@st.composite
def block_and_threshold(draw, max_rows=3, max_cols=6):
    """(V, a, scale): a block of the given scale and a threshold on the same scale."""
    shape = (draw(st.integers(1, max_rows)), draw(st.integers(1, max_cols)))
    values = draw(st.lists(ENTRIES, min_size=shape[0] * shape[1], max_size=shape[0] * shape[1]))
    scale = draw(SCALES)
    return np.array(values).reshape(shape) * scale, draw(THRESHOLDS) * scale, scale


@st.composite
def blocks_and_threshold(draw):
    """A list of 1 to 6 blocks on one scale and a threshold for the squared group prox,
    (a/2)(sum_G ||V_G||)^2, where a has no unit (the prox of a * scale^2 * r(V / scale))."""
    scale = draw(SCALES)
    blocks = []
    for _ in range(draw(st.integers(1, 6))):
        V, _, s = draw(block_and_threshold(max_rows=2, max_cols=3))
        blocks.append(V / s * scale)
    return blocks, draw(THRESHOLDS), scale


def close(x, y, scale):
    """x == y up to RTOL on the block's scale."""
    return np.all(np.abs(np.asarray(x) - np.asarray(y)) <= RTOL * scale)


def norm(V):
    return float(np.sqrt(np.sum(np.asarray(V) ** 2)))


# ------------------------------------------------------------------ optimality conditions
@pytest.mark.parametrize("m", [3, 40])
def test_l1_linf_threshold_below_rounding_keeps_the_block(m):
    """A threshold far below the entries' rounding unit leaves the block as it is
    (it once zeroed it: no level passed the rounded test)."""
    V = np.ones(m)
    np.testing.assert_array_equal(prox_l1_linf(V, 1e-20), V)
    V[0] = 2.0
    np.testing.assert_array_equal(prox_l1_linf(V, 1e-20), V)


@settings(max_examples=300, deadline=None)
@given(case=block_and_threshold())
def test_l1_l2_optimality(case):
    """V - u = a u / ||u|| when u != 0; ||V|| <= a when u = 0."""
    V, a, scale = case
    u = prox_l1_l2(V, a)
    if norm(u) == 0:
        assert norm(V) <= a + RTOL * scale
    else:
        assert close(V - u, a * u / norm(u), scale)


@settings(max_examples=300, deadline=None)
@given(case=block_and_threshold(max_rows=8, max_cols=10))   # both level finders: <= 32 entries and more
def test_l1_linf_optimality(case):
    """V - u = a s with s a subgradient of max|.| at u: ||s||_1 = 1, s_i = 0 below
    the maximum, sign(s_i) = sign(u_i); u = 0 exactly when ||V||_1 <= a."""
    V, a, scale = case
    u = prox_l1_linf(V, a)
    r = V - u
    top = np.max(np.abs(u))
    if top == 0:
        assert np.sum(np.abs(V)) <= a + RTOL * scale
        return
    assert np.sum(np.abs(r)) == pytest.approx(a, rel=RTOL, abs=RTOL * scale)
    below = np.abs(u) < top * (1 - 1e-12)
    assert close(r[below], 0.0, scale)
    assert np.all(r[~below] * u[~below] >= 0)


@settings(max_examples=300, deadline=None)
@given(case=block_and_threshold(), rho=st.sampled_from([0.0, 0.2, 0.5, 0.9, 1.0]))
def test_sparse_group_optimality(case, rho):
    """V - u = a rho s1 + a (1 - rho) s2, s1 in d||u||_1, s2 in d||u||_2."""
    V, a, scale = case
    u = prox_sparse_group(V, a, rho)
    if norm(u) == 0:
        # some s1 in [-1, 1]^m leaves ||V - a rho s1|| <= a (1 - rho): the best one soft-thresholds
        assert norm(np.maximum(np.abs(V) - a * rho, 0)) <= a * (1 - rho) + RTOL * scale
        return
    e = V - u - a * (1 - rho) * u / norm(u)
    on = u != 0
    assert close(e[on], a * rho * np.sign(u[on]), scale)
    assert np.all(np.abs(e[~on]) <= a * rho + RTOL * scale)


@settings(max_examples=300, deadline=None)
@given(case=blocks_and_threshold())
def test_squared_group_optimality(case):
    """For (a/2)(sum_G ||u_G||)^2 with n = sum_G ||u_G||: V_G - u_G = a n u_G / ||u_G||
    when u_G != 0, ||V_G|| <= a n when u_G = 0; and tau = a n."""
    blocks, a, scale = case
    out, tau = prox_squared_group(blocks, a)
    n = sum(norm(U) for U in out)
    assert tau == pytest.approx(a * n, rel=RTOL, abs=RTOL * scale)
    for V, U in zip(blocks, out):
        assert U.shape == V.shape
        if norm(U) == 0:
            assert norm(V) <= a * n + RTOL * scale
        else:
            assert close(V - U, a * n * U / norm(U), scale)


@settings(max_examples=300, deadline=None)
@given(case=block_and_threshold())
def test_l1_optimality(case):
    """Element-wise: v - u = a sign(u) when u != 0, |v| <= a when u = 0."""
    V, a, scale = case
    u = prox_l1(V, a)
    on = u != 0
    assert close((V - u)[on], a * np.sign(u[on]), scale)
    assert np.all(np.abs(V[~on]) <= a)


@settings(max_examples=300, deadline=None)
@given(case=block_and_threshold(), gamma=st.sampled_from([1e-3, 0.3, 1.0, 50.0]))
def test_berhu_optimality(case, gamma):
    """Element-wise, berhu'(u) = sign(u) for 0 < |u| <= gamma, u / gamma beyond,
    [-1, 1] at 0: v - u = a berhu'(u)."""
    V, a, scale = case
    gamma = gamma * scale
    u = prox_berhu(V, a, gamma)
    r = V - u
    zero, l1 = u == 0, (u != 0) & (np.abs(u) <= gamma)
    quad = np.abs(u) > gamma
    assert np.all(np.abs(V[zero]) <= a)
    assert close(r[l1], a * np.sign(u[l1]), scale)
    assert close(r[quad], a * u[quad] / gamma, scale)


@pytest.mark.parametrize("prox", [prox_l1, prox_l1_l2, prox_l1_linf,
                                  lambda V, a: prox_sparse_group(V, a, 0.4),
                                  lambda V, a: prox_squared_group([V], a)[0][0]],
                         ids=["l1", "l1_l2", "l1_linf", "sparse_group", "squared_group"])
@pytest.mark.parametrize("scale", [1.0, 1e-170], ids=["unit", "norm-underflows"])
def test_zero_threshold_is_identity(prox, scale):
    """a = 0: no penalty, the prox returns V (a learner with alpha = 0 must not move),
    also where ||V||^2 underflows to 0."""
    V = np.array([[1.0, -2.0, 0.5], [0.0, 3.0, -0.25]]) * scale
    assert np.array_equal(prox(V, 0.0), V)


# ------------------------------------------------------------------ Moreau's decomposition
@settings(max_examples=300, deadline=None)
@given(case=block_and_threshold())
def test_moreau_linf_and_l1_ball(case):
    """V = prox of a||.||_inf (V) + projection of V on the l1-ball of radius a.

    P = V - prox(V) is checked to be that projection by its characterization:
    ||P||_1 <= a and <V - P, P> = a ||V - P||_inf (P maximizes <V - P, .> on the
    ball, which with the envelope identity ||V||^2/2 = M_phi(V) + M_phi*(V) says
    the same thing)."""
    V, a, scale = case
    u = prox_l1_linf(V, a)
    P = V - u
    assert np.sum(np.abs(P)) <= a + RTOL * scale
    assert np.sum(u * P) == pytest.approx(a * np.max(np.abs(u)), rel=RTOL, abs=RTOL * scale * scale)


@settings(max_examples=300, deadline=None)
@given(case=block_and_threshold())
def test_moreau_l2_and_l2_ball(case):
    """V = prox of a||.||_2 (V) + projection of V on the l2-ball of radius a."""
    V, a, scale = case
    n = norm(V)
    projection = V if n <= a else V * (a / n)
    assert close(prox_l1_l2(V, a) + projection, V, scale)


# ------------------------------------------------------------------ Martins et al., Corollary 3
def _cases():
    """(name, prox, phi): phi(U) = a r(U) for the prox with threshold a (for the
    squared group norm, a is taken without unit: the threshold drawn divided by the scale)."""
    rho, gamma = 0.3, 0.7

    def berhu(U, a):
        m = np.abs(U)
        return a * np.sum(np.where(m <= gamma, m, (m * m + gamma * gamma) / (2 * gamma)))

    return [
        ("l1", prox_l1, lambda U, a: a * np.sum(np.abs(U))),
        ("l1_l2", prox_l1_l2, lambda U, a: a * norm(U)),
        ("l1_linf", prox_l1_linf, lambda U, a: a * np.max(np.abs(U))),
        ("sparse_group", lambda V, a: prox_sparse_group(V, a, rho),
         lambda U, a: a * (rho * np.sum(np.abs(U)) + (1 - rho) * norm(U))),
        ("squared_group_columns",
         lambda V, a: np.stack(prox_squared_group(list(V.T), a)[0], axis=1),
         lambda U, a: a / 2 * sum(norm(c) for c in U.T) ** 2),
        ("berhu", lambda V, a: prox_berhu(V, a, gamma), berhu),
    ]


CASES = _cases()


@pytest.mark.parametrize("name,prox,phi", CASES, ids=[c[0] for c in CASES])
@settings(max_examples=150, deadline=None)
@given(case=block_and_threshold(), seed=st.integers(0, 2**32 - 1),
       near=st.sampled_from([1e-6, 1e-2, 1.0, 10.0]))
def test_corollary_3(name, prox, phi, case, seed, near):
    """||y - xbar||^2 - ||y - x||^2 <= 2 (phi(y) - phi(xbar)) for xbar = prox_phi(x) and
    any y (Martins et al., Cor. 3): y drawn near xbar and far from it. The berhu case
    (gamma fixed at 0.7) is only meaningful at unit scale."""
    V, a, scale = case
    if name == "berhu":
        V, a, scale = V / scale, a / scale, 1.0
    if name == "squared_group_columns":
        a = a / scale
    rng = np.random.default_rng(seed)
    xbar = prox(V, a)
    for y in (xbar + near * scale * rng.standard_normal(V.shape), near * scale * rng.standard_normal(V.shape)):
        lhs = np.sum((y - xbar) ** 2) - np.sum((y - V) ** 2)
        rhs = 2 * (phi(y, a) - phi(xbar, a))
        assert lhs <= rhs + RTOL * (scale * (1 + near)) ** 2


# ------------------------------------------------------------------ squared vs unsquared
@settings(max_examples=300, deadline=None)
@given(case=blocks_and_threshold())
def test_squared_group_is_group_lasso_at_tau(case):
    """The squared group prox at a is the group lasso prox at the mapped threshold
    tau = a * sum_G ||u_G|| (Martins et al. Prop. 1 with Alg. 2; notes-mkl Sec. 0:
    the two problems share their solution at lambda' = lambda ||theta*||_{2,1})."""
    blocks, a, scale = case
    out, tau = prox_squared_group(blocks, a)
    for V, U in zip(blocks, out):
        assert close(prox_l1_l2(V, tau), U, scale)


def test_bad_arguments_are_refused():
    """NaN blocks, negative or infinite thresholds and l1_ratio outside [0, 1]."""
    with pytest.raises(ValueError):
        prox_l1_l2(np.array([np.nan]), 1.0)
    with pytest.raises(ValueError):
        prox_l1_linf(np.ones(2), -1.0)
    with pytest.raises(ValueError):
        prox_squared_group([np.ones(2)], np.inf)
    with pytest.raises(ValueError):
        prox_sparse_group(np.ones(2), 1.0, 1.5)
