"""The kernel's losses for the reports of the command line (predict's loss on a
labelled file, train's best constant predictor): their values are the registry's
(`fastprox._registry.LOSSES`, which writes them so that one definition serves
Python floats, ``m = math``, and NumPy arrays, ``m = numpy``).
"""
import math

from .._registry import LOSSES, losses_of

#: Binary classification losses of z = y * margin, y in {-1, +1}.
BINARY = losses_of("binary")


def binary_loss(loss, z, m=math):
    """loss(z) of a margin z = y * p (y = +-1): what the kernel's loss_value gives."""
    if loss not in BINARY:
        raise ValueError(f"unknown binary loss {loss!r}")
    return LOSSES[loss].value(z, None, m)


def regression_loss(loss, residual, epsilon):
    """loss of a residual p - y: a regression loss of the registry (huber's and the
    epsilon-insensitive ones' width epsilon)."""
    if loss not in LOSSES or LOSSES[loss].kind != "regression":
        raise ValueError(f"unknown regression loss {loss!r}")
    return LOSSES[loss].value(residual, epsilon, math)


def best_binary_constant(loss, positives, negatives):
    """(c, mean loss) of the constant margin c that minimizes the mean loss over
    `positives` rows labelled +1 and `negatives` labelled -1: a 1-D convex problem,
    solved by golden-section search over [-40, 40] (the log loss's optimum,
    log(positives / negatives), lies beyond only for classes rarer than 1 in
    10^17; c is then +-40 and its loss within 1e-17 of the infimum)."""
    n = positives + negatives

    def mean_loss(c):
        return (positives * binary_loss(loss, c) + negatives * binary_loss(loss, -c)) / n

    lo, hi = -40.0, 40.0
    ratio = (math.sqrt(5) - 1) / 2
    a, b = hi - ratio * (hi - lo), lo + ratio * (hi - lo)
    fa, fb = mean_loss(a), mean_loss(b)
    for _ in range(120):        # 80 * 0.618^120: below 1e-23
        if fa <= fb:
            hi, b, fb = b, a, fa
            a = hi - ratio * (hi - lo)
            fa = mean_loss(a)
        else:
            lo, a, fa = a, b, fb
            b = lo + ratio * (hi - lo)
            fb = mean_loss(b)
    c = (lo + hi) / 2
    return c, mean_loss(c)

