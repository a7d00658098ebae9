"""The averaged iterate (docs/contract.md, "Averaged iterate"), written the slow way:
the eager references' dense rules, and after every step the sum of the iterates grows
by the whole model. Nothing is lazy: the definition the kernel's lazy sums are tested
against."""
import numpy as np

from tests.support.reference import EagerReference
from tests.support.structured_update_reference import StructuredUpdateReference


class Averaging:
    """A mixin for an eager reference (its ``step`` and ``weights``): it also sums the
    iterates (W_{t+1}, b_{t+1}), the model after step t, for t = a, a + 1, ...
    (``average`` = a >= 1), every unpenalized entry of b included."""

    def __init__(self, *args, average=1, **kwargs):
        super().__init__(*args, **kwargs)
        self.average = average
        self.W_sum = np.zeros_like(self.W)
        self.b_sum = np.zeros_like(self.b)

    def step(self, *args):
        out = super().step(*args)
        if self.t >= self.average:
            W, b = self.weights()
            self.W_sum += W
            self.b_sum += b
        return out

    def count(self):
        """The number of iterates averaged so far."""
        return max(0, self.t - self.average + 1)

    def averaged_coef(self):
        """The mean of the iterates after steps a .. t; the last iterate before step a."""
        return self.W_sum / self.count() if self.count() else self.coef()

    def averaged_unpenalized_entries(self):
        """The averaged b: the K intercepts, then any further unpenalized entries."""
        return self.b_sum / self.count() if self.count() else self.weights()[1]

    def averaged_intercept(self):
        """The averaged intercepts, s times their constant feature's averaged weights."""
        return self.s * self.averaged_unpenalized_entries()[:self.K]


class AveragedReference(Averaging, EagerReference):
    """`EagerReference` with its averaged iterate."""


class AveragedStructuredReference(Averaging, StructuredUpdateReference):
    """`StructuredUpdateReference` with its averaged iterate (the m entries beside the intercepts too)."""

    def averaged_unpenalized(self):
        return self.averaged_unpenalized_entries()[self.K:]
