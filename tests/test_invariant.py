"""The importance-invariant step's closed forms (fastprox.invariant, the contract's
`step = "invariant"` table) and Lambert's W, checked against:

- mpmath: W to 2 ulps over the whole range, and the table's formulas evaluated
  literally (z = C - W(e^C), sigma = y (z0 - z) / q, ...) at as many digits as their
  cancellations need: sigma to 4 ulps;
- a numerical integration of the ODE d sigma/dh = l'(p - sigma q, y), sigma(0) = 0
  that defines sigma (LSODA, in log time, restarted at the loss's kink);
- what characterizes the step: importance invariance (a weight h1 + h2 is a step of
  h1 then one of h2), the gradient step h l'(p) as q h -> 0 (with its second-order
  term), q = 0, no overshoot, monotone in h.

Regression targets and margins are dyadic, so that p - y is exact and the
comparisons measure the functions, not the rounding of their inputs.
"""
import itertools
import math

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from scipy.integrate import solve_ivp
from scipy.special import expit

from fastprox._registry import losses_of
from fastprox.invariant import invariant_sigma, lambert_w, lambert_w_exp
from tests.support.reference import log_flow_rise

DBL_MAX = np.finfo(np.float64).max
CLASSIFICATION = losses_of("binary", invariant=True)     # the perceptron has no flow: refused below
REGRESSION = losses_of("regression", invariant=True)
LOSSES = CLASSIFICATION + REGRESSION
Q = (1e-8, 1e-3, 1.0, 1e3)
H = (1e-6, 1e-2, 1.0, 1e3)
MARGINS = (-4.0, -1.5, -1.0, -0.5, 0.0, 0.75, 0.999, 3.0)
TARGETS = (-1.5, 0.0, 0.25)                 # regression: p - y exact for every p below
PREDICTIONS = (-3.0, -0.0625, 0.0, 0.5, 2.0)
EPSILON = 0.25


def rows(loss, qs=Q, hs=H):
    """(p, y, q, h) over the grid: labels +-1 for classification, real targets else."""
    if loss in CLASSIFICATION:
        return itertools.product(MARGINS, (-1.0, 1.0), qs, hs)
    return itertools.product(PREDICTIONS, TARGETS, qs, hs)


def ulps(value, exact):
    """|value - exact| in units in the last place of exact rounded to a double."""
    return float(abs(mpmath.mpf(value) - exact) / math.ulp(float(abs(exact))))


def dloss(loss, p, y, eps=EPSILON):
    """l'(p, y), the contract's loss table (without sample weight)."""
    z, r = y * p, p - y
    if loss == "log":
        return -y * expit(-z)
    if loss == "hinge":
        return -y if z < 1 else 0.0
    if loss == "squared_hinge":
        return -2 * y * max(0.0, 1 - z)
    if loss == "modified_huber":
        return -4 * y if z < -1 else -2 * y * max(0.0, 1 - z)
    if loss == "squared":
        return r
    if loss == "huber":
        return float(np.clip(r, -eps, eps))
    if loss == "squared_epsilon_insensitive":
        return 2 * float(np.sign(r)) * (abs(r) - eps) if abs(r) > eps else 0.0
    return float(np.sign(r)) if abs(r) > eps else 0.0


def curvature(loss, p, y, eps=EPSILON):
    """l''(p, y) where it exists: sigma / h = l'(p) (1 - q h l''(p) / 2 + O((q h)^2))."""
    z, r = y * p, p - y
    return {"log": expit(z) * expit(-z), "hinge": 0.0, "squared_hinge": 2.0 * (z < 1),
            "modified_huber": 2.0 * (-1 <= z < 1), "squared": 1.0,
            "huber": 1.0 * (abs(r) <= eps), "epsilon_insensitive": 0.0,
            "squared_epsilon_insensitive": 2.0 * (abs(r) > eps)}[loss]


# ----------------------------------------------------------------------------- Lambert's W


def w_exp_exact(C):
    """W(e^C) at 50 digits (mpmath's exponent is unbounded: e^(1e300) is a number)."""
    with mpmath.workdps(50):
        return mpmath.lambertw(mpmath.exp(mpmath.mpf(C)))


def test_lambert_w_to_two_ulps_from_1e_300_to_the_largest_double():
    xs = np.concatenate([np.logspace(-300, 300, 1201), np.random.default_rng(0).uniform(0, 20, 300),
                         [5e-324, 1e-310, 1 / math.e, 1.0, math.e, 1e308, DBL_MAX]])
    with mpmath.workdps(50):
        worst = max((ulps(lambert_w(x), mpmath.lambertw(mpmath.mpf(x))), x) for x in xs)
    assert worst[0] <= 2.0, worst


def test_lambert_w_exp_to_two_ulps_from_minus_700_to_the_largest_double():
    Cs = np.concatenate([np.linspace(-700, 0, 701), np.linspace(0, 60, 601), np.logspace(-8, 300, 600),
                         -np.logspace(-8, math.log10(700), 200), [DBL_MAX]])
    worst = max((ulps(lambert_w_exp(C), w_exp_exact(C)), C) for C in Cs)
    assert worst[0] <= 2.0, worst


def test_lambert_w_special_values():
    assert lambert_w(0.0) == 0.0 and lambert_w(5e-324) == 5e-324
    assert lambert_w(math.inf) == math.inf and math.isnan(lambert_w(-1.0))
    assert lambert_w_exp(-math.inf) == 0.0 and lambert_w_exp(math.inf) == math.inf
    assert lambert_w_exp(-800.0) == 0.0                         # W(e^C) = e^C, underflowed
    assert abs(lambert_w(math.e) - 1.0) <= 2 ** -52 and abs(lambert_w_exp(1.0) - 1.0) <= 2 ** -52
    for w in (1e-200, 0.5, 3.0, 700.0):                          # W(w e^w) = w
        assert lambert_w(w * math.exp(w)) == pytest.approx(w, rel=4e-16)
    for w in (20.0, 1e5, 1e100, 1e300):                         # W(e^(w + log w)) = w
        assert lambert_w_exp(w + math.log(w)) == pytest.approx(w, rel=4e-16)


# ----------------------------------------------------------------------------- the table, literally


def table_sigma(loss, p, y, q, h, eps=EPSILON):
    """The contract's table in exact arithmetic: the margin z (or residual r) after the
    step, then sigma = y (z0 - z) / q or (r0 - r) / q, with enough digits for the
    cancellations of z0 - z (q h >= 1e-14 here) and, for the log loss, of C - W(e^C)."""
    with mpmath.workdps(60):
        return _table_sigma(loss, p, y, q, h, eps)


def _table_sigma(loss, p, y, q, h, eps):
    M = mpmath.mpf
    p, y, q, h, eps = M(p), M(y), M(q), M(h), M(eps)
    z0, r0, e = y * p, p - y, mpmath.exp
    if loss == "log":
        t = q * h / (1 + e(z0))                                    # about z - z0
        digits = 40 + mpmath.log10(abs(z0) + q * h + 1) + max(0, -mpmath.log10(t)) + max(0, z0 / 2.3)
        with mpmath.workdps(int(digits)):
            C = z0 + e(z0) + q * h
            return y * (z0 - (C - mpmath.lambertw(e(C)))) / q
    if loss == "hinge":
        z = min(1, z0 + q * h) if z0 < 1 else z0
    elif loss == "squared_hinge":
        z = 1 - (1 - z0) * e(-2 * q * h) if z0 < 1 else z0
    elif loss == "modified_huber":
        h1 = (-1 - z0) / (4 * q)
        if z0 < -1:
            z = z0 + 4 * q * h if h <= h1 else 1 - 2 * e(-2 * q * (h - h1))
        else:
            z = 1 - (1 - z0) * e(-2 * q * h) if z0 < 1 else z0
    if loss in CLASSIFICATION:
        return y * (z0 - z) / q
    if loss == "squared":
        r = r0 * e(-q * h)
    elif loss == "huber":
        if abs(r0) > eps:
            h1 = (abs(r0) - eps) / (q * eps)
            r = mpmath.sign(r0) * (abs(r0) - q * eps * h if h <= h1 else eps * e(-q * (h - h1)))
        else:
            r = r0 * e(-q * h)
    elif loss == "squared_epsilon_insensitive":
        r = mpmath.sign(r0) * (eps + (abs(r0) - eps) * e(-2 * q * h)) if abs(r0) > eps else r0
    else:
        r = mpmath.sign(r0) * max(eps, abs(r0) - q * h) if abs(r0) > eps else r0
    return (r0 - r) / q


# z0 = -1e300 .. 700 (beyond, l'(p) = e^-z0 is subnormal and sigma carries its rounding,
# as the gradient step does), q h up to 1.7e308, where C = z0 + e^z0 + q h overflows.
LOG_EXTREMES = [(-1e300, 1e300), (-1e300, 1.7e308), (-1e300, 1e20), (-1e15, 1e300), (-1e15, 5.0),
                (-1e5, 1e5 + 3), (-1e5, 1e5 - 3), (-700, 1e306), (-40, 1e10), (30, math.exp(31)),
                (700, 1e306), (709, 1.7e308), (700, 1e-300), (-700, 1e-300), (1e-300, 1e-300)]



def test_the_references_log_flow_to_four_ulps():
    """tests/support/reference's float root of the log loss's flow (its eager runs'
    sigma) is the table's z - z0 to 4 ulps, from margins that underflow e^z0 to margins
    that overflow it, and flows of 1e-14 to 1e12."""
    margins = (-800.0, -300.0, -40.0, -5.0, -1.0, -1e-3, 0.0, 1e-3, 0.5, 2.0, 10.0, 36.0, 100.0, 650.0,
               705.0, 720.0, 740.0, 800.0)
    flows = np.logspace(-14, 12, 27)
    worst = max((ulps(log_flow_rise(z0, s), -table_sigma("log", z0, 1.0, 1.0, s)), z0, s)
                for z0 in margins for s in flows)
    assert worst[0] <= 4.0, worst

@pytest.mark.parametrize("loss", LOSSES)
def test_sigma_is_the_table_to_four_ulps(loss):
    qs, hs = (1e-8, 1e-5, 1e-2, 0.3, 1.0, 7.0, 1e3), (1e-6, 1e-3, 0.1, 1.0, 3.0, 100.0, 1e3)
    cases = [(p, y, q, h, eps) for p, y, q, h in rows(loss, qs, hs) for eps in (0.1, EPSILON, 1.0)
             if loss in REGRESSION or eps == EPSILON]
    if loss == "log":
        cases += [(y * z0, y, s, 1.0, EPSILON) for z0, s in LOG_EXTREMES for y in (-1.0, 1.0)]
    worst = max((ulps(invariant_sigma(loss, p, y, q, h, eps), table_sigma(loss, p, y, q, h, eps)),
                 p, y, q, h, eps) for p, y, q, h, eps in cases)
    assert worst[0] <= 4.0, worst


# ----------------------------------------------------------------------------- the ODE


def kink(loss, y, eps):
    """A function of the margin that is > 0 before the loss's kink and 0 at it (the
    flow crosses it once), or None for a smooth loss."""
    if loss == "hinge":
        return lambda p: 1 - y * p
    if loss == "modified_huber":
        return lambda p: -1 - y * p
    if loss in ("huber", "epsilon_insensitive"):
        return lambda p: abs(p - y) - eps
    return None


def ode_sigma(loss, p, y, q, h, eps=EPSILON):
    """sigma(h) by LSODA on d sigma/d tau = e^tau l'(p - sigma q, y), tau = log(h) (the
    flow's scales, from q h = 1e-14 to 1e6, are then all of one size), from
    sigma(1e-12 h) = 1e-12 h l'(p) (off by a relative 1e-12 q h l''). At a kink the
    integration stops and restarts with the loss past it (for hinge and
    epsilon_insensitive, flat: the flow stops)."""
    g = dloss(loss, p, y, eps)
    if g == 0:
        return 0.0
    before = kink(loss, y, eps)
    flat_after = loss in ("hinge", "epsilon_insensitive")

    def flow(flat):
        return lambda tau, s: [0.0 if flat else math.exp(tau) * dloss(loss, p - s[0] * q, y, eps)]

    h0, options = 1e-12 * h, dict(method="LSODA", rtol=1e-12, atol=1e-16 * h * abs(g))
    events = None
    if before is not None and before(p) > 0:
        events = lambda tau, s: before(p - s[0] * q)            # noqa: E731
        events.terminal = True
    sol = solve_ivp(flow(False), (math.log(h0), math.log(h)), [h0 * g], events=events, **options)
    if sol.status == 1:
        sol = solve_ivp(flow(flat_after), (sol.t_events[0][0], math.log(h)), [sol.y_events[0][0][0]],
                        **options)
    assert sol.success, sol.message
    return sol.y[0, -1]


@pytest.mark.parametrize("loss", LOSSES)
def test_sigma_solves_the_ode(loss):
    worst = (0.0,)
    for p, y, q, h in rows(loss):
        sigma, reference = invariant_sigma(loss, p, y, q, h, EPSILON), ode_sigma(loss, p, y, q, h)
        if reference == 0:
            assert sigma == 0
            continue
        worst = max(worst, (abs(sigma - reference) / abs(reference), p, y, q, h))
    assert worst[0] <= 1e-8, worst


# ----------------------------------------------------------------------------- properties


@pytest.mark.parametrize("loss", LOSSES)
def test_importance_invariance(loss):
    """A row of weight h1 + h2 moves the margin as a step of h1, then a step of h2 from
    the new margin: sigma(h1 + h2) = sigma(h1) + sigma(h2 | p - sigma(h1) q)."""
    worst = (0.0,)
    for (p, y, q, h1), h2 in itertools.product(rows(loss, hs=(1e-6, 0.3, 1.0, 50.0)), (1e-6, 0.3, 1.0, 50.0)):
        first = invariant_sigma(loss, p, y, q, h1, EPSILON)
        both = first + invariant_sigma(loss, p - first * q, y, q, h2, EPSILON)
        whole = invariant_sigma(loss, p, y, q, h1 + h2, EPSILON)
        assert (whole == 0) == (both == 0)
        if whole:
            worst = max(worst, (abs(both - whole) / abs(whole), p, y, q, h1, h2))
    assert worst[0] <= 1e-12, worst


@pytest.mark.parametrize("loss", LOSSES)
def test_small_steps_are_the_gradient_step(loss):
    """sigma / h = l'(p) to 1e-12 once q h <= 1e-13, and (sigma / (h l') - 1) / (q h)
    tends to -l''(p) / 2: smoothly, with no cancellation as q h -> 0."""
    for p, y, q in itertools.product(*(([m for m in MARGINS if m != 0.999], (-1.0, 1.0))
                                       if loss in CLASSIFICATION else (PREDICTIONS, TARGETS)), Q):
        g = dloss(loss, p, y)
        for h in (1e-13 / q, 1e-20 / q, 1e-300):
            assert invariant_sigma(loss, p, y, q, h, EPSILON) / h == pytest.approx(g, rel=1e-12, abs=0)
        if g:
            h = 1e-6 / q
            second = (invariant_sigma(loss, p, y, q, h, EPSILON) / (h * g) - 1) / (q * h)
            assert second == pytest.approx(-curvature(loss, p, y) / 2, rel=1e-5, abs=1e-9)


@pytest.mark.parametrize("loss", LOSSES)
def test_no_row_step_is_the_gradient_step(loss):
    """q = 0 (an empty row, no intercept): sigma = h l'(p), to the bit."""
    for p, y in itertools.product(*((MARGINS, (-1.0, 1.0)) if loss in CLASSIFICATION
                                    else (PREDICTIONS, TARGETS))):
        g = invariant_sigma(loss, p, y, 0.0, 1.0, EPSILON)
        assert g == pytest.approx(dloss(loss, p, y), rel=2 ** -52, abs=0)
        for h in (1e-300, 0.3, 7.0, 1e300):
            assert invariant_sigma(loss, p, y, 0.0, h, EPSILON) == h * g


@pytest.mark.parametrize("loss", LOSSES)
def test_no_overshoot_and_monotone_in_h(loss):
    """Along h, sigma keeps the sign of l'(p) and grows, sigma / h (the gradient step
    shortened by rho in (0, 1]) shrinks, and the margin stops at the loss's minimizer
    (z <= 1), the residual keeps its sign (and |r| >= epsilon for
    epsilon_insensitive); all to rounding."""
    hs = np.logspace(-6, 6, 61)
    for p, y, q, _ in rows(loss, hs=(1.0,)):
        g = dloss(loss, p, y)
        sigmas = np.array([invariant_sigma(loss, p, y, q, h, EPSILON) for h in hs])
        if g == 0:
            assert np.all(sigmas == 0)
            continue
        assert np.all(sigmas * g > 0)
        assert np.all(np.diff(np.abs(sigmas)) >= -1e-15 * np.abs(sigmas[1:]))
        assert np.all(np.abs(sigmas) / hs <= abs(g) * (1 + 1e-15))
        assert np.all(np.diff(np.abs(sigmas) / hs) <= 1e-15 * np.abs(sigmas[1:]) / hs[1:])
        after = p - sigmas * q
        tol = 4e-16 * max(1.0, abs(p), abs(y))
        if loss in CLASSIFICATION:
            z = y * after
            assert np.all(z >= y * p - tol)
            if loss != "log":
                assert np.all(z <= max(1.0, y * p) + tol)
        else:
            r0, r = p - y, after - y
            assert np.all(r * np.sign(r0) >= -tol) and np.all(np.abs(r) <= abs(r0) + tol)
            if loss in ("epsilon_insensitive", "squared_epsilon_insensitive"):
                # (the squared one's |r| nears epsilon from above without reaching it: sigma's
                # four ulps, times q, may cross it)
                assert np.all(np.abs(r) >= EPSILON - tol - 4 * np.spacing(np.abs(sigmas * q)))


def test_zero_epsilon():
    """epsilon = 0: huber is the zero loss (sigma = 0); epsilon_insensitive moves |r|
    linearly down to 0 and stops."""
    assert invariant_sigma("huber", 2.0, 0.5, 1.0, 1.0, 0.0) == 0.0
    assert invariant_sigma("epsilon_insensitive", 2.0, 0.5, 1.0, 1.0, 0.0) == 1.0
    assert invariant_sigma("epsilon_insensitive", 2.0, 0.5, 1.0, 7.0, 0.0) == 1.5


@pytest.mark.parametrize("kwargs", [dict(loss="logistic"), dict(y=0.0), dict(q=-1.0), dict(h=-1.0),
                                    dict(h=math.inf), dict(epsilon=-0.1), dict(q=1e200, h=1e200),
                                    dict(p=math.nan)])
def test_wrapper_refuses_what_the_kernel_function_does_not_define(kwargs):
    args = dict(loss="log", p=0.5, y=1.0, q=1.0, h=1.0) | kwargs
    with pytest.raises(ValueError):
        invariant_sigma(**args)


# ----------------------------------------------------------------------------- the log loss's branches

# `_invariant._log_fraction`'s branches, in t = q h |l'(p)|: the series alone up to
# 0.01, the series and one Householder step up to 0.25, Householder's iteration up to 512
# from a start that needs no exp (from log1p(t) up to 3, from log1p(t / a) above),
# Newton's iteration from the closed form above.
LOG_SERIES_EXACT, LOG_SERIES_END, LOG_LOWER_START_END, LOG_HOUSEHOLDER_END = 0.01, 0.25, 3.0, 512.0
BOUNDARIES = (LOG_SERIES_EXACT, LOG_SERIES_END, LOG_LOWER_START_END, LOG_HOUSEHOLDER_END)


def log_sigma_ulps(z0, t, y=1.0):
    """sigma's distance to the table, in ulps, for the log loss's row of margin z0 whose
    flow has t = q h pi (q = t / pi, h = 1)."""
    pi = float(expit(-z0))
    q = t / pi
    return ulps(invariant_sigma("log", y * z0, y, q, 1.0), table_sigma("log", y * z0, y, q, 1.0))


@settings(max_examples=400, deadline=None)
@given(z0=st.floats(-40.0, 40.0), t=st.one_of(st.floats(1e-12, LOG_SERIES_END),
                                              st.floats(0.5 * LOG_SERIES_EXACT, 2.0 * LOG_SERIES_EXACT),
                                              st.floats(0.5 * LOG_SERIES_END, 2.0 * LOG_SERIES_END)),
       y=st.sampled_from((-1.0, 1.0)))
def test_log_sigma_of_short_flows_is_the_table_to_four_ulps(z0, t, y):
    assert log_sigma_ulps(z0, t, y) <= 4.0


@settings(max_examples=400, deadline=None)
@given(z0=st.one_of(st.floats(-40.0, 40.0), st.floats(-700.0, 700.0)),
       t=st.one_of(st.floats(LOG_SERIES_END, 4.0), st.floats(LOG_SERIES_END, LOG_HOUSEHOLDER_END),
                   st.floats(0.5 * LOG_HOUSEHOLDER_END, 2.0 * LOG_HOUSEHOLDER_END)),
       y=st.sampled_from((-1.0, 1.0)))
def test_log_sigma_of_long_flows_is_the_table_to_four_ulps(z0, t, y):
    """Householder's branch (the rows of text sets: t from 0.3 to 2 on the peer suite's
    Zipf sets, 0.3 to 6 on the rcv1 sample; z0 from -1.5 to 2.2), both its starts, and
    both sides of its end."""
    assert log_sigma_ulps(z0, t, y) <= 4.0


@pytest.mark.parametrize("boundary", BOUNDARIES)
def test_log_sigma_is_the_table_on_both_sides_of_each_branch_boundary(boundary):
    ts = [boundary * (1.0 + k * 2.0 ** -50) for k in range(-8, 9)]
    worst = max((log_sigma_ulps(z0, t), z0, t) for z0 in (-30.0, -3.0, -0.5, 0.0, 0.5, 3.0, 30.0) for t in ts)
    assert worst[0] <= 4.0, worst


def test_log_sigma_is_monotone_across_the_branch_boundaries():
    """Across a boundary, in h, sigma grows and sigma / h shrinks as on either side (to
    rounding): no jump between the two approximations."""
    for boundary, z0 in itertools.product(BOUNDARIES, (-3.0, 0.0, 0.5, 30.0)):
        q = 1.0 / float(expit(-z0))
        hs = np.array([boundary * (1.0 + k * 2.0 ** -46) for k in range(-8, 9)])
        sigmas = np.abs([invariant_sigma("log", z0, 1.0, q, h) for h in hs])
        assert np.all(np.diff(sigmas) >= -4e-16 * sigmas[1:])
        assert np.all(np.diff(sigmas / hs) <= 4e-16 * sigmas[1:] / hs[1:])


def test_losses_without_a_flow_are_refused():
    """The perceptron's flow stops at margin 0 (where every model starts): no sigma."""
    without = set(losses_of("binary") + losses_of("regression")) - set(LOSSES)
    assert without == {"perceptron"}
    for loss in without:
        with pytest.raises(ValueError, match=f"loss='{loss}' is not supported"):
            invariant_sigma(loss, -1.0, 1.0, 1.0, 1.0)
