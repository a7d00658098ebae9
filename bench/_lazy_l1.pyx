# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""The lazy FOBOS l1 step for sparse gradients (FOBOS Sec. 6, Proposition 11).

Successive soft-thresholds add up, so a coordinate that no gradient touches
for a while needs only one soft-threshold, by the sum of the thresholds it
missed, when it is next read. ``LazyL1`` keeps the cumulative threshold
``Lambda`` (the sum of lambda * eta_t over all steps) and, per coordinate, the
value of ``Lambda`` when it was last brought up to date (its stamp). A step
with an s-sparse gradient touches s coordinates: O(s), whatever the
dimension. This is the FOBOS side of Table 1 (Sec. 7.5); the learners of the
package have their own kernels.
"""
import numpy as np

from fastprox._kernel.rules.prox cimport soft_threshold


cdef class LazyL1:
    """FOBOS steps ``w <- prox_{eta*lam*||.||_1}(w - eta*g)`` applied lazily.

    ``LazyL1(w, stamps=None, cumulative=0.0)``: ``w`` holds each coordinate
    as of its stamp; the weight it stands for is
    ``soft_threshold(w_j, cumulative - stamps_j)`` (stamps default to
    ``cumulative``: ``w`` is current).
    """

    cdef double[:, ::1] state  # row j: (w_j, stamp_j), one cache line per touch
    cdef readonly double cumulative  # Lambda: the sum of all thresholds so far

    def __init__(self, w, stamps=None, cumulative=0.0):
        w = np.array(w, dtype=np.float64, order="C")
        stamps = np.full(w.shape, float(cumulative)) if stamps is None else np.array(stamps, dtype=np.float64, order="C")
        if w.ndim != 1 or stamps.shape != w.shape:
            raise ValueError(f"w must be 1-D and stamps of its shape, got {w.shape} and {stamps.shape}")
        if not (np.isfinite(w).all() and np.isfinite(stamps).all()):
            raise ValueError("w and stamps must be finite")
        if (stamps > cumulative).any():
            raise ValueError("a stamp cannot exceed cumulative: stamps are past values of Lambda")
        self.state = np.column_stack((w, stamps))
        self.cumulative = cumulative

    def step(self, const Py_ssize_t[::1] indices, const double[::1] values, double eta, double lam):
        """One FOBOS step with the gradient g[indices] = values (distinct indices).

        For each touched j: catch up by Lambda - stamp_j, take the gradient
        step, soft-threshold by this step's eta * lam; then Lambda grows by
        eta * lam, which the untouched coordinates owe until their next touch.
        """
        if indices.shape[0] != values.shape[0]:
            raise ValueError("indices and values must have the same length")
        if not (eta > 0.0 and lam >= 0.0):
            raise ValueError(f"need eta > 0 and lam >= 0, got eta={eta!r}, lam={lam!r}")
        cdef double a = eta * lam
        cdef double done = self.cumulative + a
        cdef Py_ssize_t k, j, n = self.state.shape[0]
        cdef bint marks = done > self.cumulative  # stamps == done mark this step's touches
        cdef bint repeated = False
        for k in range(indices.shape[0]):
            if not 0 <= indices[k] < n:
                raise ValueError(f"indices must lie in [0, {n})")
        with nogil:
            for k in range(indices.shape[0]):
                j = indices[k]
                repeated = repeated or (marks and self.state[j, 1] == done)
                self.state[j, 0] = soft_threshold(
                    soft_threshold(self.state[j, 0], self.cumulative - self.state[j, 1]) - eta * values[k], a)
                self.state[j, 1] = done
        self.cumulative = done
        if repeated:
            raise ValueError("indices must be distinct within a step; this step was applied wrongly")

    def to_dense(self):
        """The current weights (every coordinate caught up), O(d)."""
        out = np.empty(self.state.shape[0])
        cdef double[::1] o = out
        cdef Py_ssize_t j
        with nogil:
            for j in range(o.shape[0]):
                o[j] = soft_threshold(self.state[j, 0], self.cumulative - self.state[j, 1])
        return out

    def copy(self):
        """An independent copy of the lazy state."""
        state = np.asarray(self.state)
        return LazyL1(state[:, 0], state[:, 1], self.cumulative)
