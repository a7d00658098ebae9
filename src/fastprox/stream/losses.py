"""The kernel's losses (fastprox/_losses.pxd, the contract's loss table), for the
reports of the command line: predict's loss on a labelled file and train's best
constant predictor.

Each is written with arithmetic and ``abs`` only, plus the ``exp`` and
``log1p`` of a module given as ``m``: so one definition serves Python floats
(``m = math``: train, which imports no NumPy) and NumPy arrays (``m = numpy``:
predict). ``relu(x) = max(x, 0)`` is ``x / 2 + |x| / 2`` for the same reason
(halved first: ``x + |x|`` overflows from 2^1023 on).
"""
import math

#: Binary classification losses of z = y * margin, y in {-1, +1}.
BINARY = ("log", "hinge", "squared_hinge", "modified_huber")


def relu(x):
    """max(x, 0), elementwise for arrays."""
    return x / 2 + abs(x) / 2


def binary_loss(loss, z, m=math):
    """loss(z) of a margin z = y * p (y = +-1): what the kernel's loss_value gives."""
    if loss == "log":           # log(1 + e^-z) without overflow
        return relu(-z) + m.log1p(m.exp(-abs(z)))
    u = relu(1 - z)
    if loss == "hinge":
        return u
    if loss == "squared_hinge":
        return u * u
    if loss == "modified_huber":        # (1 - z)^2 for z >= -1, -4 z below
        return u * u - relu(u - 2) ** 2
    raise ValueError(f"unknown binary loss {loss!r}")


def regression_loss(loss, residual, epsilon):
    """loss of a residual p - y: squared, huber (width epsilon) or epsilon_insensitive."""
    r = abs(residual)
    if loss == "squared":
        return r * r / 2
    if loss == "huber":         # r^2 / 2 inside epsilon, epsilon r - epsilon^2 / 2 beyond
        return r * r / 2 - relu(r - epsilon) ** 2 / 2
    if loss == "epsilon_insensitive":
        return relu(r - epsilon)
    raise ValueError(f"unknown regression loss {loss!r}")


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
