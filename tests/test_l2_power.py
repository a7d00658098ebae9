"""The factor of m l2 proxes with one threshold a, r^m for r = 1 / (1 + a), and its
loss 1 - r^m (`_kernel/rules/adagrad.pxd`, `l2_power`: every lazy l2 catch-up under
AdaGrad and the averaged sums' geometric series), against mpmath at 60 digits over the
whole range of m and a that occurs and the extremes: m from 0 through the powering's
last (POWER_MAX = 2^16) and on the libm path beyond, a from 1e-300 (where 1 - r^m
would cancel to nothing) to 1e3. The error stays within the bound the helper states
(the powering's 5.2 m 2^-53 + 5 log2(m) 2^-53, plus r's and the result's roundings),
far under the contract's 1e-9."""
import math

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from fastprox.prox import _l2_power

POWER_MAX = 2 ** 16
U = 2.0 ** -53
mpmath.mp.dps = 60


def reference(a, m):
    """(r^m, 1 - r^m) at 60 digits."""
    r = 1 / (1 + mpmath.mpf(a))
    kept = r ** m
    lost = -mpmath.expm1(m * mpmath.log1p(-mpmath.mpf(a) / (1 + mpmath.mpf(a))))
    return kept, lost


def bound(a, m):
    """The stated relative error bound of each path (with a few roundings to spare)."""
    if m <= POWER_MAX:
        return 5.2 * m * U + 5 * math.log2(max(m, 1)) * U + 8 * U
    return 4 * min(abs(m * math.log1p(a)), 746) * U + 8 * U     # (past 746, r^m is 0)


def check(a, m):
    kept, lost = _l2_power(a, float(m))
    ref_kept, ref_lost = reference(a, m)
    tol = bound(a, m)
    assert tol < 1e-9 / 20                      # the contract's 1e-9, with a margin of 20
    if ref_kept > 1e-290:                       # (below, r^m underflows: 0 or a subnormal)
        assert abs(kept - ref_kept) <= tol * ref_kept, (a, m, kept, ref_kept)
    else:
        assert kept <= 1e-280
    if ref_lost > 1e-300:
        assert abs(lost - ref_lost) <= tol * ref_lost, (a, m, lost, ref_lost)
    else:
        assert 0.0 <= lost <= 1e-290


MS = sorted({0, 1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 100, 255, 256, 1000, 4095, 4097, 12345, 35749,
             POWER_MAX - 1, POWER_MAX, POWER_MAX + 1, 10 ** 5, 10 ** 6, 10 ** 9, 2 ** 40})
AS = [0.0, 1e-300, 1e-200, 1e-17, 1e-16, 1e-12, 3e-9, 1e-7, 2.9e-5, 1 / 16384, 1e-3, 0.01, 0.3, 1.0, 7.5, 1e3]


@pytest.mark.parametrize("m", MS)
@pytest.mark.parametrize("a", AS)
def test_grid_against_mpmath(a, m):
    check(a, m)


@settings(max_examples=400, deadline=None)
@given(log_a=st.floats(-15, 1), m=st.integers(0, 2 * POWER_MAX))
def test_random_against_mpmath(log_a, m):
    check(10.0 ** log_a, m)


def test_no_prox_leaves_the_weight():
    """m = 0 or a = 0: the factor 1 and nothing lost, exactly (a weight already current)."""
    for a in AS:
        assert _l2_power(a, 0.0) == (1.0, 0.0)
    for m in MS:
        assert _l2_power(0.0, float(m)) == (1.0, 0.0)


def test_one_prox_is_a_division():
    """m = 1 is the eager step's own w / (1 + a), bit for bit."""
    for a in np.geomspace(1e-12, 10, 50):
        assert _l2_power(a, 1.0)[0] == 1.0 / (1.0 + a)
