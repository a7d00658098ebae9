"""The importance-invariant step's closed forms (Karampatziakis & Langford 2011),
one call at a time: the functions of ``_kernel/losses/invariant.pxd`` that the kernel's
``step="invariant"`` uses, exposed for inspection and tests.

``invariant_sigma(loss, p, y, q, h)`` is the sigma of the contract's table: a row
of margin p, label y, step norm q and importance weight h moves the weights by
``-sigma * (eta * x)`` and the intercept by ``-sigma * eta_b``.
"""
from fastprox._registry import LOSSES, codes
from fastprox._validation import CLASSIFICATION_LOSSES, INVARIANT_LOSSES, check_number, check_one_of

from fastprox._kernel.losses.invariant cimport (lambert_w as _lambert_w, lambert_w_exp as _lambert_w_exp,
                                  invariant_sigma as _invariant_sigma)

LOSS_CODES = codes(LOSSES)


def lambert_w(double x):
    """W0(x), the principal branch of Lambert's W, for x >= 0 (NaN below 0)."""
    return _lambert_w(x)


def lambert_w_exp(double C):
    """W(e^C), computed without forming e^C: finite for every finite C."""
    return _lambert_w_exp(C)


def invariant_sigma(loss, p, y, q, h, epsilon=0.1):
    """sigma of the importance-invariant step: the solution at h of
    d sigma/dh = l'(p - sigma q, y), sigma(0) = 0. y is -1 or +1 for the
    classification losses; q >= 0, h >= 0 and epsilon >= 0 are finite, and so is q h.
    The losses are those the invariant step takes (not the perceptron's)."""
    check_one_of("loss", loss, INVARIANT_LOSSES)
    for name, value in (("p", p), ("y", y)):
        check_number(name, value, -float("inf"))
    for name, value in (("q", q), ("h", h), ("epsilon", epsilon), ("q * h", q * h)):
        check_number(name, value, 0.0)
    if loss in CLASSIFICATION_LOSSES and y not in (-1, 1):
        raise ValueError(f"y={y!r} must be -1 or +1 for loss={loss!r}.")
    return _invariant_sigma(LOSS_CODES[loss], p, y, q, h, epsilon)
