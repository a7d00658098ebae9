"""The averaged iterate (docs/contract.md, "Averaged iterate"), written the slow way:
the eager reference's dense rule, and after every step the sum of the iterates grows
by the whole model. Nothing is lazy: the definition the kernel's lazy sums are tested
against."""
import numpy as np

from tests.support.reference import EagerReference


class AveragedReference(EagerReference):
    """`EagerReference` that also sums its iterates w_{t+1} (the model after step t)
    for t = a, a + 1, ... (``average`` = a >= 1), intercepts and all."""

    def __init__(self, *args, average=1, **kwargs):
        super().__init__(*args, **kwargs)
        self.average = average
        self.W_sum = np.zeros_like(self.W)
        self.b_sum = np.zeros_like(self.b)

    def step(self, X, y, sw):
        progressive = super().step(X, y, sw)
        if self.t >= self.average:
            W, b = self.weights()
            self.W_sum += W
            self.b_sum += b
        return progressive

    def count(self):
        """The number of iterates averaged so far."""
        return max(0, self.t - self.average + 1)

    def averaged_coef(self):
        """The mean of the iterates after steps a .. t; the last iterate before step a."""
        return self.W_sum / self.count() if self.count() else self.coef()

    def averaged_intercept(self):
        return self.b_sum / self.count() if self.count() else self.intercept()
