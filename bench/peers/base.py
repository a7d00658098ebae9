"""The interface every learner of the peer suite offers, and what they share.

A peer is a fresh, unfitted learner of one configuration. The suite calls
``prepare(problem)`` once, untimed (data in the peer's own format: a VW
cache, river's dicts), then times ``fit_one_pass(X, y)`` and, for the passes
experiment, ``pass_curve``. Every peer ends as a linear model over the
problem's columns, ``weights() -> (coef, intercept)``, so that predictions,
the training objective and the non-zero count are computed the same way for
all of them (``decision``, ``n_nonzero``, ``l1_norm``).
"""
import time

import numpy as np


class Peer:
    """One learner configuration. Subclasses set `name` and `library` and
    implement `fit` and `weights`; incremental ones also `next_pass`."""

    name = "?"
    library = "?"
    #: True when `next_pass` continues the model; else a curve refits with p passes.
    incremental = False
    #: Rows trained on when a learner is too slow for the whole set (river); None: all.
    subset_rows = None

    def prepare(self, problem):
        """Untimed set-up on `problem` (files, conversions); default: nothing."""

    def fit(self, X, y, passes=1):
        """Train a fresh model with `passes` passes over (X, y) in row order."""
        raise NotImplementedError

    def next_pass(self, X, y):
        """One more pass continuing the model (only when `incremental`)."""
        raise NotImplementedError

    def weights(self):
        """(coef: float64 array of the problem's width, intercept: float)."""
        raise NotImplementedError

    def fit_file(self, problem):
        """Train one pass from the problem's training file; None if the peer
        has no file path of its own (the suite then skips it)."""
        return None

    # ---------------------------------------------------------------- shared
    def fit_one_pass(self, X, y):
        """One pass over (X, y): what the throughput table times."""
        return self.fit(X, y, passes=1)

    def pass_curve(self, X, y, passes):
        """Yield (pass, cumulative training seconds) after each of `passes`
        passes, the model left as after that pass when it is yielded."""
        if self.incremental:
            start = time.perf_counter()
            self.fit(X, y, passes=1)
            total = time.perf_counter() - start
            yield 1, total
            for p in range(2, passes + 1):
                start = time.perf_counter()
                self.next_pass(X, y)
                total += time.perf_counter() - start
                yield p, total
        else:
            for p in range(1, passes + 1):
                start = time.perf_counter()
                self.fit(X, y, passes=p)
                yield p, time.perf_counter() - start

    def decision(self, X):
        """Margins <w, x> + b."""
        coef, intercept = self.weights()
        return np.asarray(X @ coef).ravel() + intercept

    def predict(self, X):
        """+1 where the margin is positive, else -1."""
        return np.where(self.decision(X) > 0, 1.0, -1.0)

    def n_nonzero(self):
        return int(np.count_nonzero(self.weights()[0]))

    def l1_norm(self):
        return float(np.abs(self.weights()[0]).sum())


class EstimatorPeer(Peer):
    """A scikit-learn-style estimator with `coef_` and `intercept_`."""

    def weights(self):
        return np.ravel(self.model.coef_).astype(np.float64), float(np.ravel(self.model.intercept_)[0])
