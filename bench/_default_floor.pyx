# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""The least work the contract asks of a row of the defaults (fobos, the normalized
schedule, the invariant step of the log loss, no penalty, an intercept) and of the
plain pass (fobos, invsqrt, l1), written as plainly as C allows: one feature at a
time, no lanes, no layout beyond (m, w, G) or (w, stamp) a feature, no checks of
non-finite values, no model the library could read. What is left is what the
contract's definitions need in their dependency order (`bench/default_floor.py`):

- the defaults: the margin and N_t's shares (the rescale of a feature whose |x| grew,
  its division only where |x| is not the scale), the gradient's exp, r_t = sqrt(t /
  N_t), each entry's G += g^2 and step factor eta0 / (m sqrt(G)) (a square root and a
  division an entry), the step norm q = sum factor r x^2 with the intercept's share,
  sigma from `fastprox._kernel.losses.invariant.log_invariant_sigma` (the library's),
  and the update w -= factor r sigma x;
- the plain pass: the margin over weights caught up by their l1 threshold, the
  gradient's exp, eta_t = eta0 / sqrt(t), the step and the soft threshold.

The log loss's value is summed as both learners sum it (its logarithm deferred: a
product a row). ``sigma_free`` replaces sigma by the gradient step's l'(p) (outside
the contract: what the floor would be without the invariant step's own work).
"""
import numpy as np

from libc.math cimport exp, sqrt, fabs, fmax, frexp, copysign
from fastprox._kernel.losses.invariant cimport log_invariant_sigma


cdef inline double _gradient(double z, double y, double* e, double* product) noexcept nogil:
    """l'(p) of the log loss at z = y p, e^-|z| into e[0], 1 + e^-|z| into the loss's product."""
    cdef int k
    e[0] = exp(-fabs(z))
    product[0] *= 1.0 + e[0]
    if product[0] > 1e300:
        product[0] = frexp(product[0], &k)
    return -y * e[0] / (1.0 + e[0]) if z > 0.0 else -y / (1.0 + e[0])


def defaults_pass(double[::1] data, int[::1] indices, long long[::1] indptr, double[::1] y,
                  long long n_features, double eta0, bint sigma_free=False):
    """One pass of the defaults' least work over the CSR rows; returns the intercept
    (so that nothing is left unused)."""
    cdef double[:, ::1] state = np.full((n_features, 3), 0.0)     # m, w, G (written: no page faults in the pass)
    cdef double[::1] weights = np.zeros(max(1, np.max(np.diff(indptr), initial=0)))
    cdef double[::1] factors = np.zeros_like(weights)
    cdef long long r, k, lo, hi, n = indptr.shape[0] - 1
    cdef double acc, shares, norm_sum = 0.0, x, a, m, w, v, z, e, q, rate, g, G, f, step_norm
    cdef double sigma, b = 0.0, Gb = 0.0, eta_b, product = 1.0
    cdef double* row
    with nogil:
        for r in range(n):
            lo, hi = indptr[r], indptr[r + 1]
            acc, shares = b, 1.0                               # the intercept's feature: 1
            for k in range(lo, hi):
                row = &state[indices[k], 0]
                x, m, w = data[k], row[0], row[1]
                a = fabs(x)
                if a > m:
                    if m > 0.0:
                        w = w * (m / a)
                        row[1] = w
                    row[0] = m = a
                if a == m:
                    shares += 1.0
                elif x != 0.0:
                    v = x / m
                    shares += v * v
                weights[k - lo] = w
                acc += w * x
            z = y[r] * acc
            q = _gradient(z, y[r], &e, &product)
            norm_sum += shares
            rate = sqrt((r + 1.0) / norm_sum)
            Gb += q * q
            eta_b = eta0 * rate / sqrt(Gb) if Gb > 0.0 else 0.0
            step_norm = eta_b
            for k in range(lo, hi):
                row = &state[indices[k], 0]
                x = data[k]
                g = q * x
                G = row[2] + g * g
                row[2] = G
                f = eta0 / (row[0] * sqrt(G)) if G > 0.0 else 0.0
                factors[k - lo] = f
                step_norm += f * rate * x * x
            if sigma_free:
                sigma = q
            else:
                sigma = log_invariant_sigma(z, y[r], step_norm, 1.0, e)
            for k in range(lo, hi):
                state[indices[k], 1] = weights[k - lo] - factors[k - lo] * rate * sigma * data[k]
            b -= sigma * eta_b
    return b + product


def plain_pass(double[::1] data, int[::1] indices, long long[::1] indptr, double[::1] y,
               long long n_features, double eta0, double alpha):
    """One pass of the plain pass's least work (fobos, invsqrt, l1: a feature's weight
    caught up by the thresholds since its stamp) over the CSR rows; returns the intercept."""
    cdef double[:, ::1] state = np.full((n_features, 2), 0.0)     # w, stamp
    cdef double[::1] weights = np.zeros(max(1, np.max(np.diff(indptr), initial=0)))
    cdef long long r, k, lo, hi, n = indptr.shape[0] - 1
    cdef double acc, w, d, z, e, q, eta, threshold_sum = 0.0, b = 0.0, product = 1.0
    cdef double* row
    with nogil:
        for r in range(n):
            lo, hi = indptr[r], indptr[r + 1]
            acc = b
            for k in range(lo, hi):
                row = &state[indices[k], 0]
                d = threshold_sum - row[1]
                w = row[0]
                w = copysign(fmax(fabs(w) - d, 0.0), w)
                weights[k - lo] = w
                acc += w * data[k]
            z = y[r] * acc
            q = _gradient(z, y[r], &e, &product)
            eta = eta0 / sqrt(r + 1.0)
            threshold_sum += alpha * eta
            for k in range(lo, hi):
                row = &state[indices[k], 0]
                w = weights[k - lo] - eta * q * data[k]
                row[0] = copysign(fmax(fabs(w) - alpha * eta, 0.0), w)
                row[1] = threshold_sum
            b -= eta * q
    return b + product
