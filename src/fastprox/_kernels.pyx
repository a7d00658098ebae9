# cython: boundscheck=False, wraparound=False, cdivision=True
"""Lazy, exact online proximal learners over CSR rows.

One class, `Learner`, holds the state of K linear models over d features and
processes rows one step at a time. Per step it touches only the features of
the step's rows: it first catches those features up on the steps they missed
(FOBOS Proposition 11: successive proxes compose), then computes the margins,
the loss gradients and the update. The result equals, to rounding, the eager
definition of ``shared/spec/updates.md`` in which every coordinate is updated
at every step.

State layout: a (d, width) C-contiguous array. Row j holds the per-feature
fields (stamps), then the K entries of feature j, each ``n_entry`` doubles.
One CSR non-zero thus touches one contiguous stretch of memory.

============  =========  ====================  ===================================
update        schedule   row fields            entry fields
============  =========  ====================  ===================================
fobos         scalar     P stamp, Q stamp      w
fobos         adagrad    t0 (last step)        w, G
fobos/berhu   scalar     -                     w, phase, stamp (see `_berhu.pxi`)
rda           invsqrt    -                     s (gradient sum)
rda           adagrad    -                     s, G
ftrl          adagrad    -                     z, n
============  =========  ====================  ===================================

Scalar FOBOS keeps two global cumulants over steps tau: the shrink product
``P = prod 1/(1 + a_tau (1 - rho1))`` and the threshold sum
``Q = sum a_tau rho1 / P_{tau-1}`` with ``a_tau = alpha eta_tau``. A feature
stamped (P_s, Q_s) catches up as ``w <- soft(w P/P_s, P (Q - Q_s))``.
Both cumulants are rebased (every feature caught up, P = 1, Q = 0) when P
nears underflow and at least every ``rebase_period >= d`` steps, which keeps
their differences exact at amortised O(1) cost per step.
"""
import numpy as np

from libc.math cimport sqrt, exp, log, log1p, expm1, fabs, copysign, ceil
from fastprox._prox cimport soft_threshold, prox_elasticnet, prox_berhu
from fastprox._losses cimport dloss, loss_value

cimport cython

ctypedef fused value_t:
    float
    double

ctypedef fused index_t:
    int
    long long

cdef enum:
    FOBOS = 0
    RDA = 1
    FTRL = 2

cdef enum:
    CONSTANT = 0
    INVSQRT = 1
    INV = 2
    ADAGRAD = 3

cdef enum:
    NONE = 0
    L1 = 1
    L2 = 2
    ELASTICNET = 3
    BERHU = 4

UPDATES = {"fobos": FOBOS, "rda": RDA, "ftrl": FTRL}
SCHEDULES = {"constant": CONSTANT, "invsqrt": INVSQRT, "inv": INV, "adagrad": ADAGRAD}
PENALTIES = {"none": NONE, "l1": L1, "l2": L2, "elasticnet": ELASTICNET, "berhu": BERHU}
LOSSES = {"log": 0, "hinge": 1, "squared_hinge": 2, "modified_huber": 3,
          "squared": 4, "huber": 5, "epsilon_insensitive": 6}

# Cumulant floor below which scalar FOBOS rebases (far above underflow).
cdef double P_FLOOR = 1e-200
cdef long long MIN_REBASE_PERIOD = 1 << 16

include "_berhu.pxi"


@cython.final
cdef class Learner:
    """State and step loop of K lazily-updated linear models (one per output).

    Parameters are the contract's: ``update``, ``schedule``, ``penalty`` and
    ``loss`` are names from the module-level tables; ``n_outputs`` > 1 means
    one-vs-rest over class indices given as float labels 0..K-1.
    """
    cdef readonly int n_features, n_outputs, update, schedule, penalty, loss
    cdef readonly double alpha, l1_ratio, eta0, delta, rda_rho, berhu_gamma, epsilon
    cdef readonly bint fit_intercept
    cdef readonly long long t             # steps completed
    cdef readonly long long n_ops         # entries visited (catch-up, margin, update, rebase)
    cdef readonly long long since_rebase, rebase_period
    cdef double[:, ::1] state
    cdef double[:, ::1] bstate            # per output: (b | s_b | z_b, G_b | n_b)
    cdef double P, Q                      # scalar-FOBOS cumulants
    cdef double rho1, alpha_pen           # l1 share of the penalty, alpha (0 for none)
    cdef int n_row, n_entry, off_P, off_Q
    cdef bint ovr
    cdef double eta, wc, wl2, wbeta       # per-step constants
    cdef double[::1] p, q, qsum
    cdef double[:, ::1] gacc              # batch gradient accumulator, allocated on demand
    cdef long long[::1] mark, touched
    cdef BerhuHeap heap
    cdef object _coef                     # coef() of step count _coef_t
    cdef long long _coef_t

    def __init__(self, int n_features, int n_outputs, update, schedule, penalty, loss,
                 double alpha=0.0, double l1_ratio=0.15, double eta0=0.1, double delta=1e-8,
                 double rda_rho=0.0, double berhu_gamma=1.0, double epsilon=0.1,
                 bint fit_intercept=True, bint ovr=False):
        self.n_features = n_features
        self.n_outputs = n_outputs
        self.update = UPDATES[update]
        self.schedule = SCHEDULES[schedule]
        self.penalty = PENALTIES[penalty]
        self.loss = LOSSES[loss]
        self.alpha, self.l1_ratio, self.eta0, self.delta = alpha, l1_ratio, eta0, delta
        self.rda_rho = rda_rho if self.update == RDA else 0.0
        self.berhu_gamma, self.epsilon = berhu_gamma, epsilon
        self.fit_intercept = fit_intercept
        self.ovr = ovr
        self.rho1 = {NONE: 0.0, L1: 1.0, L2: 0.0, ELASTICNET: l1_ratio, BERHU: 1.0}[self.penalty]
        self.alpha_pen = 0.0 if self.penalty == NONE else alpha
        self.off_P = self.off_Q = -1
        self.n_row = 0
        if self.update == FOBOS and self.schedule != ADAGRAD and self.penalty != BERHU:
            if self.alpha_pen > 0 and self.rho1 < 1:
                self.off_P = self.n_row
                self.n_row += 1
            if self.alpha_pen > 0 and self.rho1 > 0:
                self.off_Q = self.n_row
                self.n_row += 1
            self.n_entry = 1
        elif self.update == FOBOS and self.schedule == ADAGRAD:
            self.n_row, self.n_entry = 1, 2
        elif self.update == FOBOS:
            self.n_entry = BERHU_ENTRY
        elif self.update == RDA:
            self.n_entry = 2 if self.schedule == ADAGRAD else 1
        else:
            self.n_entry = 2
        self.state = np.zeros((n_features, self.n_row + n_outputs * self.n_entry))
        self.bstate = np.zeros((n_outputs, 2))
        self.t = self.n_ops = self.since_rebase = 0
        self.rebase_period = max(<long long>n_features * n_outputs, MIN_REBASE_PERIOD)
        self.P, self.Q = 1.0, 0.0
        self._reset_stamps()
        self.p = np.zeros(n_outputs)
        self.q = np.zeros(n_outputs)
        self.qsum = np.zeros(n_outputs)
        self.mark = np.zeros(n_features, dtype=np.int64)
        self.touched = np.zeros(n_features, dtype=np.int64)
        self.gacc = None
        self.heap = BerhuHeap(n_features * n_outputs, berhu_gamma) if self._is_berhu_heap() else None

    # ------------------------------------------------------------------ pickling
    def __reduce__(self):
        args = (self.n_features, self.n_outputs,
                {v: k for k, v in UPDATES.items()}[self.update],
                {v: k for k, v in SCHEDULES.items()}[self.schedule],
                {v: k for k, v in PENALTIES.items()}[self.penalty],
                {v: k for k, v in LOSSES.items()}[self.loss],
                self.alpha, self.l1_ratio, self.eta0, self.delta, self.rda_rho,
                self.berhu_gamma, self.epsilon, self.fit_intercept, self.ovr)
        return (Learner, args, self.__getstate__())

    def __getstate__(self):
        return {"state": np.asarray(self.state).copy(), "bstate": np.asarray(self.bstate).copy(),
                "t": self.t, "n_ops": self.n_ops, "since_rebase": self.since_rebase,
                "P": self.P, "Q": self.Q,
                "heap": self.heap.__getstate__() if self.heap is not None else None}

    def __setstate__(self, d):
        self.state = np.array(d["state"], dtype=np.float64, order="C")
        self.bstate = np.array(d["bstate"], dtype=np.float64, order="C")
        self.t, self.n_ops, self.since_rebase = d["t"], d["n_ops"], d["since_rebase"]
        self.P, self.Q = d["P"], d["Q"]
        self._coef = None
        if self.heap is not None:
            self.heap.__setstate__(d["heap"])

    # ------------------------------------------------------------------ reading
    def coef(self):
        """The exact eager model w_{T+1} as a read-only (K, d) array, materialized once
        per step count; the state is left untouched."""
        cdef double[:, ::1] out
        cdef Py_ssize_t j
        cdef int k
        if self._coef_t == self.t and self._coef is not None:
            return self._coef
        out = np.zeros((self.n_outputs, self.n_features))
        with nogil:
            self._set_weight_params()
            for j in range(self.n_features):
                for k in range(self.n_outputs):
                    out[k, j] = self._current(j, k)
        self._coef = np.asarray(out)
        self._coef.flags.writeable = False
        self._coef_t = self.t
        return self._coef

    def intercept(self):
        """The intercept b_{T+1} per output, a (K,) array."""
        cdef int k
        return np.array([self._intercept_value(k) for k in range(self.n_outputs)])

    # ------------------------------------------------------------------ training
    def fit_rows(self, const value_t[::1] data, const index_t[::1] indices,
                 const index_t[::1] indptr, const double[::1] y,
                 const double[::1] sample_weight, const long long[::1] order,
                 int batch_size):
        """Take steps over rows ``order[0], order[1], ...``, ``batch_size`` rows per step
        (the last step may be shorter). Returns the weighted sum of the progressive
        losses: each row's loss at the margin it had before its step's update."""
        cdef Py_ssize_t n = order.shape[0]
        cdef Py_ssize_t start = 0
        cdef int b
        cdef double total = 0.0
        if batch_size > 1 and self.gacc is None:
            self.gacc = np.zeros((self.n_features, self.n_outputs))
        with nogil:
            while start < n:
                b = <int>min(<Py_ssize_t>batch_size, n - start)
                total += self._step(&data[0] if data.shape[0] else NULL, &indices[0] if indices.shape[0] else NULL,
                                    &indptr[0], &y[0], &sample_weight[0], &order[start], b)
                start += b
        return total

    # ------------------------------------------------------------------ one step
    cdef double _step(self, const value_t* data, const index_t* indices, const index_t* indptr,
                      const double* y, const double* sw, const long long* rows, int n_rows) noexcept nogil:
        cdef int K = self.n_outputs
        cdef int i, k
        cdef long long r, j, nz, n_touched = 0
        cdef double x, total = 0.0, scale = 1.0 / n_rows
        cdef double* row
        self._set_weight_params()
        self._begin_step()
        if n_rows == 1:
            r = rows[0]
            self._margins(data, indices, indptr[r], indptr[r + 1])
            total = self._gradients(y[r], sw[r], 1.0)
            self._advance_cumulants()
            for nz in range(indptr[r], indptr[r + 1]):
                row = &self.state[indices[nz], 0]
                x = data[nz]
                for k in range(K):
                    self._apply(row, k, self.q[k] * x)
                self._stamp(row)
            self.n_ops += (indptr[r + 1] - indptr[r]) * K
            for k in range(K):
                self.qsum[k] = self.q[k]
        else:
            for k in range(K):
                self.qsum[k] = 0.0
            for i in range(n_rows):
                r = rows[i]
                self._margins(data, indices, indptr[r], indptr[r + 1])
                total += self._gradients(y[r], sw[r], scale)
                for k in range(K):
                    self.qsum[k] += self.q[k]
                for nz in range(indptr[r], indptr[r + 1]):
                    j = indices[nz]
                    if self.mark[j] != self.t + 1:
                        self.mark[j] = self.t + 1
                        self.touched[n_touched] = j
                        n_touched += 1
                    x = data[nz]
                    for k in range(K):
                        self.gacc[j, k] += self.q[k] * x
            self._advance_cumulants()
            for i in range(n_touched):
                j = self.touched[i]
                row = &self.state[j, 0]
                for k in range(K):
                    self._apply(row, k, self.gacc[j, k])
                    self.gacc[j, k] = 0.0
                self._stamp(row)
            self.n_ops += n_touched * K
        for k in range(K):
            self._apply_intercept(k, self.qsum[k])
        self.t += 1
        self._end_step()
        return total

    cdef void _margins(self, const value_t* data, const index_t* indices,
                       long long lo, long long hi) noexcept nogil:
        """p_k = <w_k, x> + b_k at the current step, catching up the row's features."""
        cdef int k, K = self.n_outputs
        cdef long long nz
        cdef double x
        cdef double* row
        for k in range(K):
            self.p[k] = self._intercept_value(k)
        for nz in range(lo, hi):
            row = &self.state[indices[nz], 0]
            self._catch_up(row)
            x = data[nz]
            for k in range(K):
                self.p[k] += self._weight(row, k) * x
        self.n_ops += (hi - lo) * K

    cdef double _gradients(self, double y, double weight, double scale) noexcept nogil:
        """q_k = scale * weight * loss'(p_k, y_k); returns the weighted loss."""
        cdef int k
        cdef double yk, total = 0.0
        for k in range(self.n_outputs):
            yk = (1.0 if k == <int>y else -1.0) if self.ovr else y
            self.q[k] = dloss(self.loss, self.p[k], yk, self.epsilon) * weight * scale
            total += weight * loss_value(self.loss, self.p[k], yk, self.epsilon)
        return total

    # ------------------------------------------------------------------ schedules
    cdef void _begin_step(self) noexcept nogil:
        """eta_t of the scalar schedules for step t = self.t + 1."""
        cdef double t = <double>(self.t + 1)
        if self.schedule == CONSTANT:
            self.eta = self.eta0
        elif self.schedule == INVSQRT:
            self.eta = self.eta0 / sqrt(t)
        else:
            self.eta = self.eta0 / t

    cdef void _set_weight_params(self) noexcept nogil:
        """Constants of the dual (rda, ftrl) weight formulas with T = self.t gradients summed."""
        cdef double T = <double>self.t
        self.wc = T * self.alpha_pen * self.rho1
        self.wl2 = T * self.alpha_pen * (1.0 - self.rho1)
        self.wbeta = sqrt(T) / self.eta0

    cdef void _advance_cumulants(self) noexcept nogil:
        """Fold this step's prox into the scalar-FOBOS cumulants (P, Q)."""
        cdef double a = self.alpha_pen * self.eta
        if self.update != FOBOS or self.schedule == ADAGRAD:
            return
        if self.penalty == BERHU:
            self.heap.advance(&self.state[0, 0], self.n_entry, self.P, self.Q, a)
            self.Q += a
            self.P /= 1.0 + a / self.berhu_gamma
            return
        self.Q += a * self.rho1 / self.P
        self.P /= 1.0 + a * (1.0 - self.rho1)

    cdef void _end_step(self) noexcept nogil:
        if self.update != FOBOS or self.schedule == ADAGRAD:
            return
        self.since_rebase += 1
        if self.P < P_FLOOR or self.since_rebase >= self.rebase_period:
            self._rebase()

    cdef void _rebase(self) noexcept nogil:
        """Catch every feature up, then restart the cumulants at P = 1, Q = 0."""
        cdef Py_ssize_t j
        for j in range(self.n_features):
            self._catch_up(&self.state[j, 0])
        self.n_ops += self.n_features * self.n_outputs
        self.P, self.Q = 1.0, 0.0
        self._reset_stamps()
        self.since_rebase = 0
        if self.heap is not None:
            for j in range(self.n_features * self.n_outputs):
                self.heap.schedule(&self.state[0, 0] + j * self.n_entry, j,
                                   self.state[0, j * self.n_entry], 1.0, 0.0)

    cdef void _reset_stamps(self) noexcept nogil:
        """Stamp every feature as current at the cumulants' origin (P = 1, Q = 0)."""
        cdef Py_ssize_t j
        for j in range(self.n_features):
            if self.off_P >= 0:
                self.state[j, self.off_P] = 1.0
            if self.off_Q >= 0:
                self.state[j, self.off_Q] = 0.0

    # ------------------------------------------------------------------ per feature
    cdef inline double* _entry(self, double* row, int k) noexcept nogil:
        return row + self.n_row + k * self.n_entry

    cdef inline long long _index(self, double* row, int k) noexcept nogil:
        """Flat index j * K + k of entry k of a row (for layouts without row fields)."""
        return (row - &self.state[0, 0]) // self.n_entry + k

    cdef inline void _catch_up(self, double* row) noexcept nogil:
        """Bring the stored entries of a FOBOS feature to the current step, in place."""
        cdef int k
        if self.update != FOBOS:
            return
        if self.schedule == ADAGRAD:
            if row[0] < self.t:
                for k in range(self.n_outputs):
                    self._entry(row, k)[0] = self._adagrad_catch_up(row, k)
                row[0] = self.t
        elif self.penalty == BERHU:
            for k in range(self.n_outputs):
                self.heap.catch_up(self._entry(row, k), self._index(row, k), self.P, self.Q)
        elif self.n_row:
            for k in range(self.n_outputs):
                self._entry(row, k)[0] = self._scalar_catch_up(row, k)
            self._stamp(row)

    cdef inline double _scalar_catch_up(self, double* row, int k) noexcept nogil:
        """soft(w P/P_s, P (Q - Q_s)): the steps since the stamp, in one prox."""
        cdef double w = self._entry(row, k)[0]
        cdef double ratio = 1.0, thr = 0.0
        if self.off_P >= 0:
            ratio = self.P / row[self.off_P]
        if self.off_Q >= 0:
            thr = self.P * (self.Q - row[self.off_Q])
        return soft_threshold(w * ratio, thr)

    cdef inline double _adagrad_catch_up(self, double* row, int k) noexcept nogil:
        """m = T - t0 proxes with the feature's frozen step eta0/(delta + sqrt(G)), in closed form."""
        cdef double* e = self._entry(row, k)
        cdef double H = self.delta + sqrt(e[1])
        cdef double m = self.t - row[0]
        cdef double a, L
        if m <= 0 or H <= 0 or e[0] == 0.0 or self.alpha_pen == 0.0:
            return e[0]
        a = self.alpha_pen * self.eta0 / H
        if self.penalty == BERHU:
            return berhu_const_catch_up(e[0], a, m, self.berhu_gamma)
        if self.rho1 == 1.0:
            return soft_threshold(e[0], m * a)
        L = -m * log1p(a * (1.0 - self.rho1))
        if self.rho1 == 0.0:
            return e[0] * exp(L)
        return copysign(max(0.0, exp(L) * fabs(e[0]) + self.rho1 / (1.0 - self.rho1) * expm1(L)), e[0])

    cdef inline void _stamp(self, double* row) noexcept nogil:
        """Mark a FOBOS feature as current after the step's update."""
        if self.update != FOBOS:
            return
        if self.schedule == ADAGRAD:
            row[0] = self.t + 1
            return
        if self.off_P >= 0:
            row[self.off_P] = self.P
        if self.off_Q >= 0:
            row[self.off_Q] = self.Q

    cdef inline double _weight(self, double* row, int k) noexcept nogil:
        """w_{t,jk} of a caught-up feature (stored for FOBOS, a closed form for rda, ftrl)."""
        cdef double* e = self._entry(row, k)
        if self.update == FOBOS:
            return e[0]
        if self.update == RDA and self.schedule != ADAGRAD:
            return self._dual_weight(e[0], self.wbeta)
        return self._dual_weight(e[0], (self.delta + sqrt(e[1])) / self.eta0)

    cdef inline double _dual_weight(self, double s, double beta) noexcept nogil:
        """argmin_w s w + T alpha r(w) + beta (w^2/2 + rda_rho |w|), coordinate-wise."""
        cdef double den = beta + self.wl2
        if den <= 0.0:
            return 0.0
        return soft_threshold(-s, self.wc + beta * self.rda_rho) / den

    cdef double _current(self, Py_ssize_t j, int k) noexcept nogil:
        """w_{T+1,jk} without modifying the state."""
        cdef double* row = &self.state[j, 0]
        if self.update != FOBOS:
            return self._weight(row, k)
        if self.schedule == ADAGRAD:
            return self._adagrad_catch_up(row, k)
        if self.penalty == BERHU:
            return self.heap.current(self._entry(row, k), self.P, self.Q)
        if self.n_row:
            return self._scalar_catch_up(row, k)
        return self._entry(row, k)[0]

    cdef inline void _apply(self, double* row, int k, double g) noexcept nogil:
        """This step's update of entry (j, k) with gradient g."""
        cdef double* e = self._entry(row, k)
        cdef double H, eta, w, sq
        if self.update == FOBOS:
            if self.schedule == ADAGRAD:
                e[1] += g * g
                H = self.delta + sqrt(e[1])
                if H <= 0.0:
                    return
                eta = self.eta0 / H
            else:
                eta = self.eta
            if self.penalty != BERHU:
                e[0] = prox_elasticnet(e[0] - eta * g, self.alpha_pen * eta, self.rho1)
            elif self.heap is None:
                e[0] = prox_berhu(e[0] - eta * g, self.alpha_pen * eta, self.berhu_gamma)
            else:
                self.heap.schedule(e, self._index(row, k),
                                   prox_berhu(e[0] - eta * g, self.alpha_pen * eta, self.berhu_gamma),
                                   self.P, self.Q)
        elif self.update == RDA:
            e[0] += g
            if self.schedule == ADAGRAD:
                e[1] += g * g
        else:
            w = self._weight(row, k)
            sq = sqrt(e[1])
            e[1] += g * g
            e[0] += g - (sqrt(e[1]) - sq) / self.eta0 * w

    # ------------------------------------------------------------------ intercept
    cdef double _intercept_value(self, int k) noexcept nogil:
        cdef double a = self.bstate[k, 0], G = self.bstate[k, 1], beta
        if self.update == FOBOS:
            return a
        if self.update == RDA and self.schedule != ADAGRAD:
            beta = sqrt(<double>self.t) / self.eta0
        else:
            beta = (self.delta + sqrt(G)) / self.eta0
        return -a / beta if beta > 0.0 else 0.0

    cdef void _apply_intercept(self, int k, double g) noexcept nogil:
        """The unpenalized intercept's step with gradient g (sum of l' over the step)."""
        cdef double b, sq, H
        if not self.fit_intercept:
            return
        if self.update == FOBOS:
            if self.schedule == ADAGRAD:
                self.bstate[k, 1] += g * g
                H = self.delta + sqrt(self.bstate[k, 1])
                if H > 0.0:
                    self.bstate[k, 0] -= self.eta0 / H * g
            else:
                self.bstate[k, 0] -= self.eta * g
        elif self.update == RDA:
            self.bstate[k, 0] += g
            self.bstate[k, 1] += g * g
        else:
            b = self._intercept_value(k)
            sq = sqrt(self.bstate[k, 1])
            self.bstate[k, 1] += g * g
            self.bstate[k, 0] += g - (sqrt(self.bstate[k, 1]) - sq) / self.eta0 * b

    cdef bint _is_berhu_heap(self):
        return self.update == FOBOS and self.schedule != ADAGRAD and self.penalty == BERHU
