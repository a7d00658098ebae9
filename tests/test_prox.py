"""The proxes of fastprox.prox checked by what characterizes them, with no reference
implementation: optimality (subgradient) conditions, Moreau's decomposition,
Martins et al.'s Corollary 3 and the squared / unsquared group lasso equivalence;
for the weighted squared group norm (Alg. 4) also its identities with Alg. 2 and
under scaling, and a generic solver on small cases.

``prox_X(V, a)`` must return u = argmin ||u - V||^2 / 2 + a r_X(u), i.e.
V - u in a * subdifferential of r_X at u. Blocks mix zeros, ties, entries many
orders of magnitude apart and overall scales from 1e-100 to 1e100 (kept where
squares neither overflow nor underflow); every tolerance is relative to the
block's scale.
"""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from scipy.optimize import minimize

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


# Group weights d_G: zeros (unpenalized groups), ones, a subnormal (n / d overflows).
WEIGHTS = st.one_of(st.sampled_from([0.0, 0.0, 1.0, 0.5, 2.0, 5e-324]), st.floats(0.0, 3.0))


@st.composite
def weighted_blocks_and_threshold(draw):
    """blocks_and_threshold with a weight per block and, if drawn, ties in n_G / d_G:
    a copy of the first block with its weight, and twice it with twice the weight."""
    blocks, a, scale = draw(blocks_and_threshold())
    weights = draw(st.lists(WEIGHTS, min_size=len(blocks), max_size=len(blocks)))
    if draw(st.booleans()):
        blocks += [blocks[0].copy(), 2 * blocks[0]]
        weights += [weights[0], 2 * weights[0]]
    return blocks, np.array(weights), a, scale


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
@given(case=block_and_threshold(), rho=st.sampled_from([0.0, 0.2, 0.5, 0.9, 1.0]),
       weight=st.sampled_from([1.0, 1.0, 0.0, 0.3, 2.5]))
def test_sparse_group_optimality(case, rho, weight):
    """V - u = a rho s1 + a (1 - rho) d s2, s1 in d||u||_1, s2 in d||u||_2 (d: the group's
    weight, on the group part only)."""
    V, a, scale = case
    u = prox_sparse_group(V, a, rho, weight)
    c = a * (1 - rho) * weight
    if norm(u) == 0:
        # some s1 in [-1, 1]^m leaves ||V - a rho s1|| <= c: the best one soft-thresholds
        assert norm(np.maximum(np.abs(V) - a * rho, 0)) <= c + RTOL * scale
        return
    e = V - u - c * u / norm(u)
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


@settings(max_examples=500, deadline=None)
@given(case=weighted_blocks_and_threshold())
def test_weighted_squared_group_optimality(case):
    """Alg. 4, for (a/2) S^2 with S = sum_G d_G ||u_G||: V_G - u_G = a S d_G u_G / ||u_G||
    when u_G != 0, ||V_G|| <= a S d_G when u_G = 0, u_G = V_G when d_G = 0; tau = a S."""
    blocks, d, a, scale = case
    out, tau = prox_squared_group(blocks, a, d)
    S = sum(w * norm(U) for w, U in zip(d, out))
    assert tau == pytest.approx(a * S, rel=RTOL, abs=RTOL * scale)
    for V, U, w in zip(blocks, out, d):
        assert U.shape == V.shape
        if w == 0:
            assert np.array_equal(U, V)
        elif norm(U) == 0:
            assert norm(V) <= a * S * w + RTOL * scale
        else:
            assert close(V - U, a * S * w * U / norm(U), scale)


@st.composite
def uniform_weighted_blocks(draw):
    """1 to 6 blocks and weights of uniformly drawn digits (whose products round)."""
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    p = draw(st.integers(1, 6))
    blocks = [rng.uniform(-3, 3, rng.integers(1, 4)) for _ in range(p)]
    return blocks, np.where(rng.random(p) < 0.2, 0.0, rng.uniform(0.1, 3.0, p)), None, 1.0


@settings(max_examples=300, deadline=None)
@given(case=st.one_of(weighted_blocks_and_threshold(), uniform_weighted_blocks()),
       a=st.sampled_from([0.0, 1e-3, 1.0, 100.0, 1e12, 1e18, 1e30]))
def test_weighted_squared_group_tau_is_the_fixed_point(case, a):
    """tau = a sum_G d_G max(0, n_G - d_G tau) (Martins et al., eq. 31), written without
    the cancellation in n_G - d_G tau that a huge a brings: with A = {G : n_G > d_G tau},
    tau (1 + a sum_A d_G^2) = a sum_A d_G n_G. Thresholds up to 1e30, where every
    penalized block nearly vanishes (the KKT test above cannot look there: its u_G lose
    their digits to that cancellation). A group at the boundary, n_G = d_G tau to
    rounding, adds a d_G (n_G - d_G tau) = 0 to the equation either way: it is counted."""
    blocks, d, _, scale = case
    tau = prox_squared_group(blocks, a, d)[1]
    n = np.array([norm(V) for V in blocks])
    on = (d > 0) & (n > d * tau * (1 - 1e-12))
    assert tau * (1 + a * np.sum(d[on] ** 2)) == pytest.approx(a * np.sum(d[on] * n[on]), rel=1e-9, abs=0)


@settings(max_examples=200, deadline=None)
@given(case=weighted_blocks_and_threshold())
def test_unit_weights_are_algorithm_2(case):
    """d = 1 everywhere: Alg. 4 is Alg. 2 (weights=None), to rounding (the two test a
    group's activity in differently rounded forms, which may split exact ties apart)."""
    blocks, d, a, scale = case
    out, tau = prox_squared_group(blocks, a, np.ones(len(blocks)))
    plain, plain_tau = prox_squared_group(blocks, a)
    assert tau == pytest.approx(plain_tau, rel=1e-14, abs=0)
    for U, P in zip(out, plain):
        assert close(U, P, scale)


@settings(max_examples=200, deadline=None)
@given(case=weighted_blocks_and_threshold(), c=st.sampled_from([0.1, 0.5, 3.0, 40.0]),
       s=st.sampled_from([1e-3, 0.5, 8.0]))
def test_weighted_squared_group_scaling(case, c, s):
    """(a/2)(sum c d_G n_G)^2 = (a c^2 / 2)(sum d_G n_G)^2: weights c d at a / c^2 are
    weights d at a, with tau divided by c (n_G' = n_G - c d_G tau' = n_G - d_G tau); and
    the prox of a 2-homogeneous function is 1-homogeneous: prox(s V) = s prox(V), s tau."""
    blocks, d, a, scale = case
    out, tau = prox_squared_group(blocks, a, d)
    weighted, weighted_tau = prox_squared_group(blocks, a / (c * c), c * d)
    scaled, scaled_tau = prox_squared_group([s * V for V in blocks], a, d)
    assert c * weighted_tau == pytest.approx(tau, rel=RTOL, abs=RTOL * scale)
    assert scaled_tau == pytest.approx(s * tau, rel=RTOL, abs=RTOL * s * scale)
    for U, P, Q in zip(out, weighted, scaled):
        assert close(P, U, scale)
        assert close(Q, s * U, s * scale)


@pytest.mark.slow
@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), p=st.integers(1, 5), a=st.sampled_from([0.05, 0.3, 1.0, 4.0]))
def test_weighted_squared_group_against_a_generic_solver(seed, p, a):
    """Small cases against scipy's L-BFGS-B on all entries of the blocks (a generic
    solver that knows nothing of Alg. 4, from two starts), with the penalty smoothed
    as sum_G d_G sqrt(||u_G||^2 + eps^2): Alg. 4's output is never worse, and, the
    objective being 1-strongly convex, the solver's point lies within
    sqrt(2 (F(x) - F(x*))) of it."""
    rng = np.random.default_rng(seed)
    sizes = rng.integers(1, 4, p)
    blocks = [rng.normal(size=m) * rng.choice([0.1, 1.0, 3.0]) for m in sizes]
    d = np.where(rng.random(p) < 0.25, 0.0, rng.uniform(0.1, 3.0, p))
    ids, x0, eps = np.repeat(np.arange(p), sizes), np.concatenate(blocks), 1e-7

    def smoothed(x):
        nrm = np.sqrt(np.bincount(ids, x * x, minlength=p) + eps * eps)
        S = d @ nrm
        return 0.5 * np.sum((x - x0) ** 2) + 0.5 * a * S * S, (x - x0) + a * S * (d / nrm)[ids] * x

    def objective(x):
        return 0.5 * np.sum((x - x0) ** 2) + 0.5 * a * (d @ np.sqrt(np.bincount(ids, x * x, minlength=p))) ** 2

    mine = np.concatenate(prox_squared_group(blocks, a, d)[0])
    for start in (x0, np.zeros_like(x0)):
        theirs = minimize(smoothed, start, jac=True, method="L-BFGS-B",
                          options=dict(ftol=1e-15, gtol=1e-12, maxiter=10000)).x
        gap = objective(theirs) - objective(mine)
        assert gap >= -1e-10 * (1 + objective(mine))
        assert np.sum((theirs - mine) ** 2) <= 2 * gap + 1e-10 * (1 + objective(mine))


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
    also where ||V||^2 underflows to 0 (a group of weight 0 passes through)."""
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
    squared group norm, a is taken without unit: the threshold drawn divided by the scale;
    its weighted case gives column c the weight d[c], zeros included)."""
    rho, gamma = 0.3, 0.7
    d = np.array([0.0, 1.0, 2.5, 0.4, 0.0, 1.7])

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
        ("squared_group_weighted_columns",
         lambda V, a: np.stack(prox_squared_group(list(V.T), a, d[:V.shape[1]])[0], axis=1),
         lambda U, a: a / 2 * sum(w * norm(c) for w, c in zip(d, U.T)) ** 2),
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
    if name.startswith("squared_group"):
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
    with pytest.raises(ValueError, match="the group weight=-1.0 must be"):
        prox_sparse_group(np.ones(2), 1.0, 0.5, weight=-1.0)


@pytest.mark.parametrize("weights, message", [
    ([1.0], "one weight per group, 2 here"),
    ([1.0, -0.5], ">= 0"),
    ([1.0, np.nan], "finite"),
    ([np.inf, 1.0], "finite"),
    (["a", 1.0], "numbers"),
])
def test_bad_group_weights_are_refused(weights, message):
    with pytest.raises(ValueError, match=message):
        prox_squared_group([np.ones(2), np.ones(3)], 1.0, weights)
