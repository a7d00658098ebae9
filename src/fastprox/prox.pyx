# cython: boundscheck=False, wraparound=False, cdivision=True
"""The proximal operators fastprox's learners apply, one call at a time.

These are the operators of the update contract's tables (scalar penalties
element-wise, group penalties on a block), exposed for inspection and tests:
``prox_X(v, a)`` returns argmin_u ||u - v||^2 / 2 + a * r_X(u).
"""
import numpy as np

from fastprox._validation import check_group_weights

from fastprox._kernel.rules.prox cimport soft_threshold, prox_berhu as _prox_berhu
from fastprox._kernel.rules.adagrad cimport l2_power
from fastprox._kernel.groups.group_prox cimport (prox_l1_l2 as _l1_l2, prox_l1_linf as _l1_linf,
                                   prox_sparse_group as _sparse_group, squared_group_tau)


def _block(v):
    out = np.array(v, dtype=np.float64, order="C", copy=True)
    if not np.all(np.isfinite(out)):
        raise ValueError("v contains NaN or infinity.")
    return out


def _threshold(a, name="the threshold a"):
    if not (np.isfinite(a) and a >= 0):
        raise ValueError(f"{name}={a!r} must be a finite number >= 0.")
    return float(a)


def prox_l1(v, a):
    """Soft-thresholding: prox of a*||.||_1, element-wise."""
    cdef double[::1] u = _block(v).reshape(-1)
    cdef double t = _threshold(a)
    cdef Py_ssize_t i
    for i in range(u.shape[0]):
        u[i] = soft_threshold(u[i], t)
    return np.asarray(u).reshape(np.shape(v))


def prox_berhu(v, a, gamma):
    """prox of a*berhu_gamma, element-wise (FOBOS Sec. 5)."""
    cdef double[::1] u = _block(v).reshape(-1)
    cdef double t = _threshold(a)
    cdef Py_ssize_t i
    if not gamma > 0:
        raise ValueError(f"gamma={gamma!r} must be > 0.")
    for i in range(u.shape[0]):
        u[i] = _prox_berhu(u[i], t, gamma)
    return np.asarray(u).reshape(np.shape(v))


def prox_l1_l2(V, a):
    """Group lasso on one block: prox of a*||V||_F."""
    cdef double[::1] u = _block(V).reshape(-1)
    if u.shape[0]:
        _l1_l2(&u[0], u.shape[0], _threshold(a))
    return np.asarray(u).reshape(np.shape(V))


def prox_l1_linf(V, a):
    """prox of a*max|V|: V minus its projection on the l1-ball of radius a."""
    cdef double[::1] u = _block(V).reshape(-1)
    cdef double[::1] work = np.empty(u.shape[0])
    if u.shape[0]:
        _l1_linf(&u[0], u.shape[0], _threshold(a), &work[0])
    return np.asarray(u).reshape(np.shape(V))


def prox_sparse_group(V, a, l1_ratio, weight=1.0):
    """Sparse group lasso on one block: prox of a*(rho ||V||_1 + (1 - rho) weight ||V||_F),
    the group's weight d_G on the group part only."""
    cdef double[::1] u = _block(V).reshape(-1)
    if not 0 <= l1_ratio <= 1:
        raise ValueError(f"l1_ratio={l1_ratio!r} must be in [0, 1].")
    cdef double d = _threshold(weight, "the group weight")
    if u.shape[0]:
        _sparse_group(&u[0], u.shape[0], _threshold(a), l1_ratio, d)
    return np.asarray(u).reshape(np.shape(V))


def prox_squared_group(blocks, a, weights=None):
    """prox of (a/2) (sum_G d_G ||V_G||)^2 over a list of blocks (Martins et al., Alg. 4
    with the group weights d >= 0; weights=None: every d_G = 1, Alg. 2).

    Returns the new blocks and the shared threshold tau: block G is the group lasso
    prox of V_G with threshold d_G tau, i.e. scaled by max(0, 1 - d_G tau / ||V_G||)
    (d_G = 0: unpenalized, unchanged)."""
    blocks = [_block(V) for V in blocks]
    d = check_group_weights(weights, "squared_group", len(blocks))
    cdef double[::1] norms = np.array([np.linalg.norm(V) for V in blocks], dtype=np.float64)
    cdef double[::1] work = np.empty(max(1, 3 * norms.shape[0]))
    cdef double[::1] dview
    cdef const double* dptr = NULL
    cdef double tau = 0.0
    if d is not None and d.shape[0]:
        dview = d
        dptr = &dview[0]
    if norms.shape[0]:
        tau = squared_group_tau(&norms[0], dptr, norms.shape[0], _threshold(a), &work[0])
    out = [prox_l1_l2(V, tau * (1.0 if d is None else d[G])) for G, V in enumerate(blocks)]
    return out, tau


def _l2_power(double a, double m):
    """(r^m, 1 - r^m) for r = 1 / (1 + a): the kernel's factor of m l2 proxes with the
    threshold a (`_kernel/rules/adagrad.pxd`, `l2_power`), for its accuracy test."""
    cdef double lost
    cdef double kept = l2_power(a, m, &lost)
    return kept, lost
