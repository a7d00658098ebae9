# cython: boundscheck=False, wraparound=False, cdivision=True
"""Lazy, exact online proximal learners over CSR rows.

One class, `Learner`, holds the state of K linear models over d features and
processes rows one step at a time. Per step it touches only the features of
the step's rows: it first catches those features up on the steps they missed
(FOBOS Proposition 11: successive proxes compose), then computes the margins,
the loss gradients and the update. The result equals, to rounding, the eager
definition of ``docs/contract.md`` in which every coordinate is updated
at every step.

State layout: a (d, width) C-contiguous array. Row j holds the per-feature
fields (stamps), then the K entries of feature j, each ``n_entry`` doubles.
One CSR non-zero thus touches one contiguous stretch of memory.

============  =========  ====================  ===================================
update        schedule   row fields            entry fields
============  =========  ====================  ===================================
fobos         scalar     P stamp, Q stamp      w
fobos         adagrad    t0 (last step)        w, G, eta (the step G gives)
fobos/berhu   scalar     -                     w, phase, stamp (see `_berhu.pxi`)
rda           invsqrt    -                     s (gradient sum)
rda           adagrad    -                     s, G
ftrl          adagrad    -                     z, n (, sqrt(n): `ftrl_roots`)
fobos/groups  scalar     -                     w (group stamps: `_groups.pxi`)
rda/groups    both       -                     s (, G)
============  =========  ====================  ===================================

The score gradient q (one entry per output) comes from a binary loss per
output (one model, or K one-vs-rest models) or from a multinomial loss over
the K scores (softmax, Crammer-Singer); the update rules do not change.

Scalar FOBOS keeps two global cumulants over steps tau: the shrink product
``P = prod 1/(1 + a_tau (1 - rho1))`` and the threshold sum
``Q = sum a_tau rho1 / P_{tau-1}`` with ``a_tau = alpha eta_tau``. A feature
stamped (P_s, Q_s) catches up as ``w <- soft(w P/P_s, P (Q - Q_s))``.
Both cumulants are rebased (every feature caught up, P = 1, Q = 0) when P
nears underflow and at least every ``rebase_period >= d`` steps, which keeps
their differences exact at amortised O(1) cost per step.

The state and the scratch space are the standard library's ``array.array``
buffers, so that training (the command line's ``train``) needs no NumPy;
reading the model (`coef`, `intercept`, pickling) returns NumPy arrays.
"""
from cpython cimport array
import array as pyarray
import copy as pycopy

from libc.float cimport DBL_MAX
from libc.math cimport sqrt, exp, log, log1p, expm1, fabs, copysign, ceil, floor
from libc.stdlib cimport qsort, calloc, realloc, free
from libc.string cimport memcmp, memcpy, memset
from fastprox._prox cimport soft_threshold, prox_elasticnet, prox_berhu
from fastprox._losses cimport dloss_and_value, dlog_loss_deferred, logsum_pop, LogSum, LOG
from fastprox._numpy import np
from fastprox._rules import PENALTIES as PENALTY_TABLE, rule as find_rule
from fastprox._validation import check_group_weights, check_memory
from fastprox._group_prox cimport (block_norm, prox_l1_l2, prox_l1_linf, prox_sparse_group,
                                   squared_group_tau, _descending)

cimport cython
from cython cimport longlong

cdef extern from "Python.h":
    # Without Cython's `except -1`: the pass saves its state before raising.
    int check_signals "PyErr_CheckSignals" ()

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
    L1_L2 = 5
    L1_LINF = 6
    SPARSE_GROUP = 7
    SQUARED_GROUP = 8

UPDATES = {"fobos": FOBOS, "rda": RDA, "ftrl": FTRL}
SCHEDULES = {"constant": CONSTANT, "invsqrt": INVSQRT, "inv": INV, "adagrad": ADAGRAD}
PENALTIES = {"none": NONE, "l1": L1, "l2": L2, "elasticnet": ELASTICNET, "berhu": BERHU,
             "l1_l2": L1_L2, "l1_linf": L1_LINF, "sparse_group": SPARSE_GROUP,
             "squared_group": SQUARED_GROUP}
LOSSES = {"log": 0, "hinge": 1, "squared_hinge": 2, "modified_huber": 3,
          "squared": 4, "huber": 5, "epsilon_insensitive": 6}

# Cumulant floor below which scalar FOBOS rebases (far above underflow).
cdef double P_FLOOR = 1e-200
cdef long long MIN_REBASE_PERIOD = 1 << 16
cdef long long PREFETCH_BYTES = 1 << 20
# FTRL entries keep sqrt(n) beside n, a square root less per non-zero, up to this
# many entries (d K): beyond, the state outgrows the caches, and the wider entries
# cost more in cache misses than the square root they save (measured: 10% faster
# at d = 2^16, even at 2^19, 5-10% slower at 2^20-2^22).
cdef long long FTRL_ROOTS_ENTRIES = 1 << 19
# Arrays from this size on are asked for huge pages (NumPy's threshold).
cdef size_t HUGE_BYTES = 1 << 22
# How many steps ahead a row's state is requested: two beat one on the 10-class
# l1_l2 pass (best of 7: 0.19-0.22 s against 0.23-0.32 s, three alternations).
cdef int PREFETCH_STEPS = 2
# Rows between two looks at Python's signals (Ctrl-C) during a call: the GIL taken
# for a moment, 16 times a second at the slowest rule's 1 us a row. Checking in the
# kernel keeps one call per pass, and so one check of X, however long the pass.
cdef Py_ssize_t SIGNAL_ROWS = 1 << 16
# A step whose gradient |q x| reaches this stops before its update (`refused`): below
# it, a square is at most 2^960, and 2^63 steps of them sum to less than DBL_MAX, so
# no accumulator (AdaGrad's G, FTRL's n, RDA's sums) can overflow.
cdef double GRADIENT_MAX = 2.0 ** 480
# Below this, log1p and expm1 are the first four terms of their series, to rounding:
# the fifth is under 2^-56 / 5 of the sum (`small_log1p`, `small_expm1`).
cdef double SERIES_MAX = 1.0 / 16384

cdef array.array DOUBLES = pyarray.array("d"), INT64 = pyarray.array("q")
# The arrays a pickle or a model file keeps (the rest is scratch space), their types
# and, for the two-dimensional ones, their shapes (`saved_arrays`).
SAVED = ("state", "bstate", "heap_items", "heap_keys", "heap_pos", "gstamp", "gnorm")
SAVED_INT64 = ("heap_items", "heap_pos")


cdef array.array zeros(Py_ssize_t n, array.array kind=DOUBLES):
    """n zeros of kind's type; from HUGE_BYTES on, on transparent huge pages where
    the system offers them (as NumPy's large arrays are): a 16 MB state then faults in
    8 pages instead of 4096, which took 10-25 ms a fit on this machine."""
    cdef array.array a = array.clone(kind, n, zero=False)
    cdef size_t size = <size_t>n * kind.ob_descr.itemsize
    if size >= HUGE_BYTES:
        FASTPROX_HUGEPAGES(a.data.as_voidptr, size)
    if size:                    # (an empty array may have no buffer at all)
        memset(a.data.as_voidptr, 0, size)
    return a


# What fit_rows passes for an order or weights not given: the kernel then visits
# rows 0..n-1 and weighs them 1 without arrays saying so (filling two arrays of a
# 50,000-row fit cost more than a tenth of a millisecond).
cdef array.array NO_WEIGHTS = array.clone(DOUBLES, 0, zero=False)
cdef array.array NO_ORDER = array.clone(INT64, 0, zero=False)

cdef extern from "_pairs.h" nogil:
    ctypedef struct pair "fastprox_pair":
        double a
        double b
    pair sqrt2 "fastprox_sqrt2"(double a, double b)
    pair l1_catch_up2 "fastprox_l1_catch_up2"(double* e, double* f, double P, double Q)
    void l1_step2 "fastprox_l1_step2"(double* e, double* f, double xe, double xf, double q,
                                      double eta, double a, double Q)
    pair scalar_catch_up2 "fastprox_scalar_catch_up2"(double* e, double* f, int n_row, int off_Q,
                                                      double P, double Q)
    void scalar_step2 "fastprox_scalar_step2"(double* e, double* f, int n_row, int off_Q, double xe,
                                              double xf, double q, double eta, double a, double rho1,
                                              double P, double Q)
    pair adagrad_catch_up2 "fastprox_adagrad_catch_up2"(double* e, double* f, double t, double alpha)
    void adagrad_step2 "fastprox_adagrad_step2"(double* e, double* f, double xe, double xf, double q,
                                                double t, double alpha, double rho1, double delta,
                                                double eta0)
    pair rda_weights2 "fastprox_rda_weights2"(double sa, double sb, double thr, double inv)
    pair dual_weights2 "fastprox_dual_weights2"(double sa, double sb, pair root, double delta,
                                                double inv_eta0, double wc, double rho, double wl2)

cdef extern from *:
    """
    #if defined(__GNUC__) || defined(__clang__)
    #define FASTPROX_PREFETCH(p) __builtin_prefetch((p), 1, 3)
    #define FASTPROX_PREFETCH_READ(p) __builtin_prefetch((p), 0, 3)
    #else
    #define FASTPROX_PREFETCH(p) ((void)(p))
    #define FASTPROX_PREFETCH_READ(p) ((void)(p))
    #endif
    """
    void FASTPROX_PREFETCH(const void* p) noexcept nogil
    void FASTPROX_PREFETCH_READ(const void* p) noexcept nogil

cdef extern from *:
    """
    #if defined(__linux__)
    #include <sys/mman.h>
    #endif
    /* Advise transparent huge pages for the whole pages of [p, p + n), before the
       first touch; a no-op where the system has no such advice. */
    static void FASTPROX_HUGEPAGES(void *p, size_t n)
    {
    #if defined(__linux__) && defined(MADV_HUGEPAGE)
        uintptr_t lo = ((uintptr_t)p + 4095) & ~(uintptr_t)4095, hi = (uintptr_t)p + n;
        if (hi > lo)
            madvise((void *)lo, hi - lo, MADV_HUGEPAGE);
    #endif
    }
    """
    void FASTPROX_HUGEPAGES(void* p, size_t n) noexcept nogil

include "_berhu.pxi"


cdef struct Ctx:
    # What one step reads and writes, as plain C values and pointers into the
    # Learner's arrays: copied to a local for a run of steps, so that stores
    # into the state cannot alias the parameters (no reloads in the loops).
    int update, schedule, penalty, loss, K, n_row, n_entry, off_P, off_Q
    bint ovr, fit_intercept, berhu_heap
    bint plain_fobos              # one output, fobos, scalar step, l1/l2/elasticnet/none
    bint plain_adagrad            # one output, fobos + adagrad, l1/l2/elasticnet/none
    bint plain_dual               # one output, rda or ftrl, l1/l2/elasticnet/none
    bint plain_rows               # fobos, scalar step, l1_l2/l1_linf over W's rows, unweighted
    bint ftrl_roots               # ftrl entries hold sqrt(n) too (FTRL_ROOTS_ENTRIES)
    double alpha_pen, rho1, eta0, delta, rda_rho, gamma, epsilon
    double inv_eta0               # dual weights multiply by it (beta = (delta + sqrt(G)) / eta0)
    long long d, width, rebase_period
    double* state                 # (d, width) row-major
    double* bstate                # (K, 2): b | s_b | z_b, then G_b | n_b
    long long t                   # steps completed
    long long n_ops               # entries visited (catch-up, margin, update, rebase)
    long long since_rebase
    double P, Q                   # scalar-FOBOS cumulants
    Heap heap                     # Berhu's l2-phase schedule
    double eta, wc, wl2, wbeta    # per-step constants: step, dual threshold, l2, beta_t
    double eta_next               # eta of step eta_next_t (0: none), computed a step ahead
    long long eta_next_t
    double wthr, winv             # rda/invsqrt: the threshold and 1/denominator of every weight
    LogSum lsum                   # progressive log losses' log1p parts, summed once per call
    bint nonfinite                # a step of this call stopped before its update (fit_csr raises):
    bint steep                    # its margin was NaN or infinite, or (steep) its gradient too large
    double* p                     # (K,) margins
    double* q                     # (K,) loss derivatives
    double* qsum                  # (K,) intercept gradient of the step
    # scratch the steps allocate when first needed (`ensure_scratch`), freed with the Learner
    double* gacc                  # (d, K) batch gradient accumulator
    long long* mark               # (d,) step at which a feature was last collected
    long long* touched            # (d,) features of the current batch
    # multiclass and groups
    bint multinomial              # softmax (log) or Crammer-Singer (hinge) over K scores
    bint grouped                  # a group penalty (l1_l2, l1_linf, sparse_group, squared_group)
    long long n_groups            # p, the number of groups
    long long* group              # (d,) group id per feature (-1: unpenalized); NULL: rows
    long long* gptr               # (p + 1,) user groups' members are gmem[gptr[g]:gptr[g + 1]]
    long long* gmem
    double* gstamp                # (p,) threshold sum (or step, sparse_group) at the last update
    double* gnorm                 # (p,) squared_group: ||W_G|| at the stamp
    double* gnow                  # (p,) squared_group scratch: every ||W_G|| at this step
    double* gweight               # (p,) d_G, the groups' penalty weights; NULL: all 1
    long long* gmark              # (p,) step at which a group was last caught up
    long long* gtouched           # (p,) groups caught up in the current step
    long long n_tg
    double* block                 # scratch: one gathered block
    double* work                  # scratch: sorting (l1_linf, squared_group tau)
    double* wcache                # (d, K) rda: weights of the current step's touched groups
    double* gbeta                 # scratch: one block's per-entry beta (rda + adagrad)
    double* wrow                  # (longest row, K, 2) ftrl: (w, sqrt(n)) of the row being processed,
    long long wrow_size           # its doubles (`ensure_scratch`, as gacc)
    double* bmemo                 # (K, 2) ftrl: (b, sqrt(n_b)) as the step's margins read them


include "_groups.pxi"



@cython.final
cdef class Learner:
    """State and step loop of K lazily-updated linear models (one per output).

    Parameters are the contract's: ``update``, ``schedule``, ``penalty`` and
    ``loss`` are names from the module-level tables; ``ovr`` means K binary
    one-vs-rest models over class indices given as float labels 0..K-1.
    ``groups`` maps features to group ids (None: each feature's row is a group)
    and ``group_weights`` gives each group's penalty weight d_G (None: all 1).
    """
    cdef readonly long long n_features
    cdef readonly long long capacity      # features the arrays hold (>= n_features: `grow`)
    cdef readonly int n_outputs
    cdef readonly object update, schedule, penalty, loss
    cdef readonly double alpha, l1_ratio, eta0, delta, rda_rho, berhu_gamma, epsilon
    cdef readonly bint fit_intercept, ovr, multinomial
    cdef readonly object groups, group_weights
    cdef Ctx c
    cdef object arrays                    # name -> flat buffer: everything c points into
    cdef object _coef                     # coef() at step count _coef_t
    cdef long long _coef_t
    cdef readonly bint training           # fit_rows is running (in some thread)

    def __init__(self, long long n_features, int n_outputs, update, schedule, penalty, loss,
                 double alpha=0.0, double l1_ratio=0.15, double eta0=0.1, double delta=1e-8,
                 double rda_rho=0.0, double berhu_gamma=1.0, double epsilon=0.1,
                 bint fit_intercept=True, bint ovr=False, bint multinomial=False, groups=None,
                 group_weights=None):
        if n_features < 0 or n_outputs < 1:
            raise ValueError(f"a model needs n_features >= 0 and n_outputs >= 1; got {n_features} "
                             f"and {n_outputs}.")
        self.n_features, self.n_outputs = n_features, n_outputs
        self.update, self.schedule, self.penalty, self.loss = update, schedule, penalty, loss
        self.alpha, self.l1_ratio, self.eta0, self.delta = alpha, l1_ratio, eta0, delta
        self.rda_rho, self.berhu_gamma, self.epsilon = rda_rho, berhu_gamma, epsilon
        self.fit_intercept, self.ovr, self.multinomial = fit_intercept, ovr, multinomial
        self.groups = None if groups is None else np.asarray(groups, dtype=np.int64)
        c = &self.c
        c.update, c.schedule = UPDATES[update], SCHEDULES[schedule]
        c.penalty, c.loss = PENALTIES[penalty], LOSSES[loss]
        c.K, c.d = n_outputs, n_features
        c.ovr, c.fit_intercept, c.multinomial = ovr, fit_intercept, multinomial
        c.eta0, c.delta, c.gamma, c.epsilon = eta0, delta, berhu_gamma, epsilon
        c.inv_eta0 = 1.0 / eta0 if eta0 > 0.0 else 0.0
        c.rda_rho = rda_rho if c.update == RDA else 0.0
        rule = find_rule(update, schedule, penalty)     # the table of rules: ValueError if none
        family = PENALTY_TABLE[penalty].family
        c.rho1 = l1_ratio if PENALTY_TABLE[penalty].l1_share == "l1_ratio" else PENALTY_TABLE[penalty].l1_share
        c.grouped = family == "group"
        if c.grouped and rda_rho != 0 and c.update == RDA:
            raise ValueError(f"penalty={penalty!r} has no closed form with rda_rho's extra l1 term; "
                             "use rda_rho=0 (penalty='sparse_group' adds l1 within groups), or "
                             "update='fobos'.")
        c.alpha_pen = 0.0 if c.penalty == NONE else alpha
        c.berhu_heap = family == "berhu" and c.schedule != ADAGRAD
        c.plain_fobos = n_outputs == 1 and rule.fast_rows == "fobos"
        c.plain_adagrad = n_outputs == 1 and rule.fast_rows == "adagrad"
        c.plain_dual = n_outputs == 1 and rule.fast_rows == "dual"
        # Weighted rows take the general step: a weighted variant of the dedicated one
        # (a fused type) kept its loop but made GCC stop inlining prox_l1_linf into it,
        # +11% instructions on the unweighted l1_linf pass (callgrind).
        c.plain_rows = groups is None and group_weights is None and rule.fast_rows == "rows"
        c.off_P = c.off_Q = -1
        c.ftrl_roots = False
        c.n_row = 0
        if c.grouped:
            c.n_entry = 2 if c.schedule == ADAGRAD else 1
        elif c.update == FOBOS and c.schedule != ADAGRAD and c.penalty != BERHU:
            if c.alpha_pen > 0 and c.rho1 < 1:
                c.off_P = c.n_row
                c.n_row += 1
            if c.alpha_pen > 0 and c.rho1 > 0:
                c.off_Q = c.n_row
                c.n_row += 1
            c.n_entry = 1
        elif c.update == FOBOS and c.schedule == ADAGRAD:
            c.n_row, c.n_entry = 1, 3
        elif c.update == FOBOS:
            c.n_entry = BERHU_ENTRY
        elif c.update == RDA:
            c.n_entry = 2 if c.schedule == ADAGRAD else 1
        else:
            c.ftrl_roots = <long long>n_features * n_outputs <= FTRL_ROOTS_ENTRIES
            c.n_entry = 3 if c.ftrl_roots else 2
        c.width = c.n_row + n_outputs * c.n_entry
        c.rebase_period = max(<long long>n_features * n_outputs, MIN_REBASE_PERIOD)
        c.t = c.n_ops = c.since_rebase = 0
        c.P, c.Q = 1.0, 0.0
        c.heap.gamma = berhu_gamma
        c.heap.size = 0
        c.n_groups = 0
        if c.grouped:
            c.n_groups = n_features if groups is None else int(max(-1, self.groups.max(initial=-1)) + 1)
        self.group_weights = check_group_weights(group_weights, penalty, c.n_groups)
        self.capacity = n_features
        self._attach(self._new_arrays(n_features))

    cdef dict _new_arrays(self, long long capacity):
        """The saved arrays of a model of `capacity` features none of which was ever
        touched (weights 0, stamps at the cumulants' origin, out of Berhu's heap),
        refused before allocation if they would not fit in memory."""
        cdef Ctx* c = &self.c
        cdef long long j, K = self.n_outputs
        cdef long long n_heap = capacity * K if c.berhu_heap else 0
        cdef long long n_groups = capacity if c.grouped and self.groups is None else c.n_groups
        # the state, Berhu's heap and the grouped weights' cache, in bytes, in Python's
        # integers (no overflow), before anything is allocated
        check_memory(8 * (int(capacity) * (c.width + K * (3 * c.berhu_heap + c.grouped))
                          + 8 * K + 8 * int(n_groups)),     # per output: bstate, p, q, ...; per group
                     f"{capacity} features x {K} output(s)")
        state, heap_pos = zeros(capacity * c.width), zeros(n_heap, INT64)
        for j in range(capacity):
            stamp_origin(c, state.data.as_doubles + j * c.width)
        for j in range(n_heap):
            heap_pos.data.as_longlongs[j] = -1
        return {"state": state, "bstate": zeros(K * 2), "heap_items": zeros(n_heap, INT64),
                "heap_keys": zeros(n_heap), "heap_pos": heap_pos, "gstamp": zeros(n_groups),
                "gnorm": zeros(n_groups)}

    def grow(self, long long n_features):
        """Widen the model to `n_features` features (nothing if it has as many): the
        new ones join as the contract has a coordinate never touched since step 1,
        weight 0, whatever the step. The arrays double when full, so a stream that
        meets its features as it goes costs O(1) amortized per new feature. Models
        with user groups or group weights (one per feature) keep their width."""
        cdef Ctx* c = &self.c
        cdef long long old = self.capacity
        if n_features <= self.n_features:
            return
        if self.training:
            raise RuntimeError("this learner is training; it grows between fit_rows calls.")
        if self.groups is not None or self.group_weights is not None:
            raise ValueError(f"a model with groups or group_weights has {self.n_features} features "
                             f"(one group id or weight each); X has {n_features}: give groups and "
                             "weights for every feature from the start.")
        if n_features > old:
            self.capacity = max(n_features, 2 * old)
            try:
                arrays = self._new_arrays(self.capacity)
            except MemoryError:             # no room to double: just what is needed
                self.capacity = n_features
                arrays = self._new_arrays(self.capacity)
            for name, a in self.arrays.items():
                if name in SAVED:
                    memoryview(arrays[name]).cast("B")[:len(a) * a.itemsize] = memoryview(a).cast("B")
            self._attach(arrays)
        self.n_features = c.d = n_features
        if c.grouped:
            c.n_groups = n_features
        c.rebase_period = max(n_features * c.K, MIN_REBASE_PERIOD)
        if c.ftrl_roots and n_features * c.K > FTRL_ROOTS_ENTRIES:
            self._drop_ftrl_roots()
        free_scratch(c)             # batches' scratch is sized by n_features
        self._coef = None

    cdef _drop_ftrl_roots(self):
        """FTRL's entries without their sqrt(n) memo (kept only for models of up to
        FTRL_ROOTS_ENTRIES weights): (z, n, sqrt n) -> (z, n), the layout a learner of
        this width is built with, which pickles and model files rebuild."""
        cdef Ctx* c = &self.c
        old = np.frombuffer(self.arrays["state"], dtype=np.float64).reshape(self.capacity, c.K, 3)
        c.n_entry, c.ftrl_roots = 2, False
        c.width = c.n_row + c.K * c.n_entry
        arrays = {name: self.arrays[name] for name in SAVED}
        arrays["state"] = np.ascontiguousarray(old[:, :, :2]).reshape(-1)
        self._attach(arrays)

    cdef _attach(self, dict saved):
        """Point the context at the saved arrays (fresh buffers, or NumPy arrays from a
        pickle or a model file) and at fresh scratch space."""
        arrays = {name: a if isinstance(a, array.array) else
                  np.require(a, requirements=["C", "W"]).reshape(-1) for name, a in saved.items()}
        n_groups = self.capacity if self.c.grouped and self.groups is None else self.c.n_groups
        n_heap = self.capacity * self.n_outputs if self.c.berhu_heap else 0
        sizes = {"state": self.capacity * self.c.width, "bstate": self.n_outputs * 2, "heap_items": n_heap,
                 "heap_keys": n_heap, "heap_pos": n_heap, "gstamp": n_groups, "gnorm": n_groups}
        for name, size in sizes.items():    # the loops trust these sizes
            if len(arrays[name]) != size:
                raise ValueError(f"the learner's {name} holds {len(arrays[name])} values where this "
                                 f"fastprox keeps {size}: a pickle from another version? Between "
                                 f"versions, use fastprox.save_model and load_model.")
        block = self.n_outputs
        if self.groups is None:
            gptr, gmem = zeros(n_groups + 1, INT64), zeros(0, INT64)
        else:
            members = np.argsort(self.groups, kind="stable")
            members = members[self.groups[members] >= 0]
            sizes = np.bincount(self.groups[members], minlength=n_groups)
            block *= int(sizes.max(initial=1))
            gptr = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
            gmem = members.astype(np.int64)
        arrays.update(gptr=gptr, gmem=gmem, group=self.groups, gweight=self.group_weights,
                      gnow=zeros(n_groups if self.c.penalty == SQUARED_GROUP else 0),
                      gmark=zeros(n_groups, INT64), gtouched=zeros(n_groups, INT64),
                      block=zeros(block), gbeta=zeros(block),
                      work=zeros(max(3 * block, (1 if self.group_weights is None else 3) * n_groups, 1)),
                      wcache=zeros(self.capacity * self.n_outputs if self.c.grouped else 0),
                      bmemo=zeros(self.n_outputs * 2))
        arrays.update(p=zeros(self.n_outputs), q=zeros(self.n_outputs), qsum=zeros(self.n_outputs))
        free_scratch(&self.c)
        self.arrays = arrays
        self.c.state = _ptr(arrays["state"])
        self.c.bstate = _ptr(arrays["bstate"])
        self.c.p, self.c.q, self.c.qsum = _ptr(arrays["p"]), _ptr(arrays["q"]), _ptr(arrays["qsum"])
        self.c.heap.items, self.c.heap.pos = _iptr(arrays["heap_items"]), _iptr(arrays["heap_pos"])
        self.c.heap.keys = _ptr(arrays["heap_keys"])
        self.c.group = _iptr(arrays["group"]) if self.groups is not None else NULL
        self.c.gptr, self.c.gmem = _iptr(arrays["gptr"]), _iptr(arrays["gmem"])
        self.c.gstamp, self.c.gnorm = _ptr(arrays["gstamp"]), _ptr(arrays["gnorm"])
        self.c.gnow = _ptr(arrays["gnow"])
        self.c.gweight = _ptr(arrays["gweight"]) if self.group_weights is not None else NULL
        self.c.gmark, self.c.gtouched = _iptr(arrays["gmark"]), _iptr(arrays["gtouched"])
        self.c.block, self.c.work = _ptr(arrays["block"]), _ptr(arrays["work"])
        self.c.wcache = _ptr(arrays["wcache"])
        self.c.gbeta = _ptr(arrays["gbeta"])
        self.c.bmemo = _ptr(arrays["bmemo"])
        self.c.n_tg = 0
        self.c.lsum.m, self.c.lsum.e, self.c.lsum.n = 1.0, 0, 0
        self._coef = None

    def __dealloc__(self):
        free_scratch(&self.c)

    # ------------------------------------------------------------------ pickling
    def __reduce__(self):
        args = (self.n_features, self.n_outputs, self.update, self.schedule, self.penalty,
                self.loss, self.alpha, self.l1_ratio, self.eta0, self.delta, self.rda_rho,
                self.berhu_gamma, self.epsilon, self.fit_intercept, self.ovr, self.multinomial,
                self.groups, self.group_weights)
        return (Learner, args, self.__getstate__())

    def __getstate__(self):
        return {"arrays": {name: np.frombuffer(a, dtype=np.int64 if name in SAVED_INT64 else np.float64)
                           .reshape(shape).copy() for name, (a, shape) in self.saved_arrays().items()},
                **self.scalars()}

    def saved_arrays(self):
        """What a pickle or a model file keeps of the state, without copies and
        without NumPy: name -> (flat buffer, shape). The buffers are int64 for
        SAVED_INT64, float64 for the others."""
        cdef long long d = self.n_features, K = self.n_outputs
        sizes = {"state": (d, self.c.width), "bstate": (K, 2), "gstamp": (self.c.n_groups,),
                 "gnorm": (self.c.n_groups,)}
        heap = (d * K if self.c.berhu_heap else 0,)
        out = {}
        for name in SAVED:
            shape = sizes.get(name, heap)
            n = 1
            for m in shape:
                n *= m
            out[name] = (memoryview(self.arrays[name])[:n], shape)    # the first n_features' part
        return out

    def scalars(self):
        """The counters and cumulants a pickle or a model file keeps."""
        return {"t": self.c.t, "n_ops": self.c.n_ops, "since_rebase": self.c.since_rebase,
                "P": self.c.P, "Q": self.c.Q, "heap_size": self.c.heap.size}

    def changed_state(self):
        """The rows of the state (features) that differ, bit for bit, from the row of
        a feature never touched: their indices (int64, increasing) and their values
        (float64, row after row). A model file stores only these."""
        cdef const double[::1] a = self.arrays["state"]
        cdef Py_ssize_t j, width = self.c.width, r = 0
        cdef array.array rows = zeros(self.n_features, INT64), values, initial = zeros(width)
        stamp_origin(&self.c, initial.data.as_doubles)
        for j in range(self.n_features):
            if width and memcmp(&a[j * width], initial.data.as_doubles, width * sizeof(double)) != 0:
                rows.data.as_longlongs[r] = j
                r += 1
        array.resize(rows, r)
        values = zeros(r * width)
        for j in range(r):
            memcpy(&values.data.as_doubles[j * width], &a[rows.data.as_longlongs[j] * width],
                   width * sizeof(double))
        return rows, values

    def count_nonzero(self):
        """The number of non-zero weights of the eager model w_{T+1} (as
        ``np.count_nonzero(coef())``, without NumPy)."""
        cdef Ctx c = self.c
        cdef Py_ssize_t j, count = 0
        cdef int k
        if c.grouped:
            return int(np.count_nonzero(self.coef()))
        set_weight_params(&c)
        for j in range(c.d):
            for k in range(c.K):
                count += current(&c, j, k) != 0.0
        return count

    def __setstate__(self, d):
        self._attach(d["arrays"])
        self.c.t, self.c.n_ops, self.c.since_rebase = d["t"], d["n_ops"], d["since_rebase"]
        self.c.eta_next_t = 0
        self.c.P, self.c.Q, self.c.heap.size = d["P"], d["Q"], d["heap_size"]

    @property
    def t(self):
        """Steps completed."""
        return self.c.t

    @property
    def fast_rows(self):
        """Which hand-fused row kernel serves this rule's single rows (None: the
        general `step`): "fobos" (`plain_fobos_step`), "adagrad" (`plain_adagrad_step`),
        "dual" (`plain_dual_step`) or "rows" (`plain_rows_step`)."""
        c = &self.c
        for name, on in (("fobos", c.plain_fobos), ("adagrad", c.plain_adagrad),
                         ("dual", c.plain_dual), ("rows", c.plain_rows)):
            if on:
                return name
        return None

    def caught_up(self):
        """This learner, or (sparse_group under fobos, whose skipped proxes do not
        compose and are replayed on reading, one per skipped step) a copy with every
        group caught up to the current step: the same model, with no replay left
        for whoever reads it next (`model_io` writes this; a file's replays are
        bounded when it is read)."""
        cdef Learner copy
        cdef Ctx* c
        cdef long long g
        cdef Py_ssize_t m
        cdef double* v
        if self.c.penalty != SPARSE_GROUP or self.c.update != FOBOS:
            return self
        copy = pycopy.copy(self)        # through __reduce__: arrays of its own
        c = &copy.c
        with nogil:
            for g in range(c.n_groups):
                m = block_size(c, g)
                v = block_get(c, g)
                block_catch_up(c, g, v, m)
                block_put(c, g, v)
                c.gstamp[g] = c.t
        return copy

    def _use_general_step(self):
        """Route every row through the general `step` (private: the tests that prove
        each fast row kernel computes the general path's bits)."""
        self.c.plain_fobos = self.c.plain_adagrad = self.c.plain_dual = self.c.plain_rows = False

    @property
    def n_ops(self):
        """Entries visited so far (catch-up, margin, update, rebase): the cost counter."""
        return self.c.n_ops

    @property
    def since_rebase(self):
        """Steps since the scalar-FOBOS cumulants were last rebased."""
        return self.c.since_rebase

    # ------------------------------------------------------------------ reading
    def coef(self):
        """The exact eager model w_{T+1} as a read-only (K, d) array, materialized once
        per step count; the state is left untouched."""
        cdef double[:, ::1] out
        cdef Py_ssize_t j
        cdef int k
        cdef Ctx c = self.c
        cdef array.array block, work, gbeta
        if self._coef_t == c.t and self._coef is not None:
            return self._coef
        out = np.zeros((c.K, c.d))
        if c.grouped:       # scratch of its own: a read never writes a training call's
            block, gbeta = zeros(len(self.arrays["block"])), zeros(len(self.arrays["block"]))
            work = zeros(len(self.arrays["work"]))
            c.block, c.gbeta, c.work = block.data.as_doubles, gbeta.data.as_doubles, work.data.as_doubles
        with nogil:
            set_weight_params(&c)
            if c.grouped:
                groups_materialize(&c, &out[0, 0])
            else:
                for j in range(c.d):
                    for k in range(c.K):
                        out[k, j] = current(&c, j, k)
        self._coef = np.asarray(out)
        self._coef.flags.writeable = False
        self._coef_t = c.t
        return self._coef

    def margins(self, data, indices, indptr):
        """<w_k, x_i> + b_k of the eager model w_{T+1} for CSR rows given as
        `fit_rows` takes them (NumPy or ``array.array`` buffers): a (n, K) array.
        Columns at or beyond n_features, which the model never saw, have weight 0."""
        W = self.coef()
        out = np.empty((max(len(indptr) - 1, 0), self.n_outputs))
        kind = csr_kind(data, indices)
        if kind == 0:
            margins_csr[double, int](W, data, indices, indptr, out)
        elif kind == 1:
            margins_csr[double, longlong](W, data, indices, indptr, out)
        elif kind == 2:
            margins_csr[float, int](W, data, indices, indptr, out)
        else:
            margins_csr[float, longlong](W, data, indices, indptr, out)
        return out + self.intercept()

    def intercept(self):
        """The intercept b_{T+1} per output, a (K,) array."""
        cdef int k
        return np.array([intercept_value(&self.c, k) for k in range(self.n_outputs)])

    # ------------------------------------------------------------------ training
    def fit_rows(self, data, indices, indptr, const double[::1] y,
                 const double[::1] sample_weight, const long long[::1] order,
                 int batch_size, pause=None):
        """Take steps over rows ``order[0], order[1], ...``, ``batch_size`` rows per step
        (the last step may be shorter). Returns the weighted sum of the progressive
        losses: each row's loss at the margin it had before its step's update.

        ``data`` (float64 or float32), ``indices`` and ``indptr`` (both int32 or both
        int64) are CSR buffers, NumPy's or ``array.array``; ``sample_weight`` None
        means weights 1, ``order`` None the rows in order. A row names each feature
        once (canonical CSR, as the estimators and the LIBSVM reader give): the contract
        sums a repeated one, the steps would update it twice. A step whose margin is NaN
        or infinite (X's values are, or overflow), or whose gradient could overflow the
        state (`refused`), stops before its update and ends the call with a ValueError
        naming its row (`NonFiniteMargin`): the learner keeps the model of the steps
        before it, finite. A signal's
        exception (Ctrl-C: KeyboardInterrupt) ends it too, every SIGNAL_ROWS rows,
        leaving the learner as a call over the rows stepped so far would.

        One thread at a time: the steps run without the GIL and may grow the
        learner's scratch, so a second call while one runs raises RuntimeError.
        ``pause``, if given, is called (with the GIL) at the step boundaries where
        signals are checked, with the learner as a call over the rows stepped so far
        would leave it: reads of the model may run there (`_concurrency`)."""
        if self.training:
            raise RuntimeError("this learner is training in another thread; a learner (and its "
                               "estimator) takes one fit or partial_fit call at a time.")
        cdef bint all_rows = order is None      # rows 0..n-1 in order: nothing to check
        cdef bint unit = sample_weight is None
        if all_rows:
            order = NO_ORDER
        if unit:
            sample_weight = NO_WEIGHTS
        kind = csr_kind(data, indices)
        self.training = True
        try:
            if kind == 0:
                return fit_csr[double, int](&self.c, data, indices, indptr, y, sample_weight, order,
                                            all_rows, unit, batch_size, pause)
            if kind == 1:
                return fit_csr[double, longlong](&self.c, data, indices, indptr, y, sample_weight, order,
                                                 all_rows, unit, batch_size, pause)
            if kind == 2:
                return fit_csr[float, int](&self.c, data, indices, indptr, y, sample_weight, order,
                                           all_rows, unit, batch_size, pause)
            return fit_csr[float, longlong](&self.c, data, indices, indptr, y, sample_weight, order,
                                            all_rows, unit, batch_size, pause)
        finally:
            self.training = False


cdef double fit_csr(Ctx* state, const value_t[::1] data, const index_t[::1] indices,
                    const index_t[::1] indptr, const double[::1] y,
                    const double[::1] sample_weight, const long long[::1] order,
                    bint all_rows, bint unit, int batch_size, pause) except? -1:
    """`Learner.fit_rows` for one type of values and one of indices (`all_rows`: rows
    0..n-1, the order empty; `unit`: weights 1, sample_weight empty)."""
    cdef Py_ssize_t n = indptr.shape[0] - 1 if all_rows else order.shape[0]
    cdef Py_ssize_t start = 0, signals_at = SIGNAL_ROWS
    cdef bint interrupted = False
    cdef long long nxt
    cdef int b
    cdef double total = 0.0
    cdef Ctx c
    cdef const value_t* X = &data[0] if data.shape[0] else NULL
    cdef const index_t* ind = &indices[0] if indices.shape[0] else NULL
    cdef const long long* rows = NULL if all_rows else &order[0] if n > 0 else NULL
    cdef const double* sw = NULL if unit else &sample_weight[0] if sample_weight.shape[0] else NULL
    ensure_scratch(state, _check_rows(data.shape[0], indices, indptr, y.shape[0],
                                      y.shape[0] if unit else sample_weight.shape[0],
                                      order, all_rows, state.d, batch_size, state.update == FTRL),
                   batch_size)
    c = state[0]
    # Prefetching pays once the state outgrows the caches; below, it only costs.
    cdef bint prefetch = c.d * c.width * sizeof(double) > PREFETCH_BYTES
    # Rows visited out of order (shuffled passes) defeat the hardware prefetcher:
    # their values and indices are requested too, a step before their state.
    cdef bint scattered = (data.shape[0] * (sizeof(value_t) + sizeof(index_t)) > PREFETCH_BYTES
                           and not all_rows and not consecutive(order))
    cdef bint separable = c.plain_fobos or c.plain_adagrad or c.plain_dual
    cdef bint stopped, steep
    with nogil:
        while start < n:
            b = <int>min(<Py_ssize_t>batch_size, n - start)
            if scattered and start + (PREFETCH_STEPS + 1) * b < n:
                nxt = row_at(rows, start + (PREFETCH_STEPS + 1) * b)
                prefetch_lines(X + indptr[nxt], X + indptr[nxt + 1])
                prefetch_lines(ind + indptr[nxt], ind + indptr[nxt + 1])
            if start + PREFETCH_STEPS * b < n and prefetch:
                nxt = row_at(rows, start + PREFETCH_STEPS * b)
                prefetch_rows(&c, ind, indptr[nxt], indptr[nxt + 1])
            if b == 1 and separable:
                total += separable_step(&c, X, ind, &indptr[0], &y[0], sw, row_at(rows, start))
            else:
                total += step(&c, X, ind, &indptr[0], &y[0], sw, rows, start, b)
            if c.nonfinite:
                break
            start += b
            if start >= signals_at:
                signals_at = start + SIGNAL_ROWS
                state[0] = c            # the learner after the steps taken, for pause's reads
                with gil:
                    interrupted = check_signals() != 0
                    if not interrupted and pause is not None:
                        pause()
                c = state[0]
                if interrupted:
                    break
        total += logsum_pop(&c.lsum)
    stopped, steep = c.nonfinite, c.steep
    c.nonfinite = c.steep = False
    state[0] = c
    if interrupted:             # the steps taken so far stay, as after a shorter call
        return -1
    if stopped:
        refuse_step(data, indptr, rows, start, start + b, steep)
    return total


cdef int refuse_step(const value_t[::1] data, const index_t[::1] indptr, const long long* rows,
                     Py_ssize_t lo, Py_ssize_t hi, bint steep) except -1:
    """Raise the error of a step (rows[lo:hi]) that stopped before its update (`refused`):
    a NaN or an infinity among its rows' values (a first fit leaves them to this
    check, `linear_model`), or else values too large for the steps: a margin that
    overflowed, or (steep) a gradient that could overflow the state."""
    cdef long long r
    cdef Py_ssize_t i, nz
    for i in range(lo, hi):
        r = row_at(rows, i)
        for nz in range(indptr[r], indptr[r + 1]):
            if not fabs(data[nz]) <= DBL_MAX:
                raise NonFiniteMargin(r, f"Input X contains NaN or infinity ({data[nz]}); "
                                      "remove or replace those values.")
    cause = ("its gradient (the loss's derivative times the row's values) reached 2^480, past "
             "which the steps' sums of squares could overflow" if steep else "the margin overflowed")
    raise NonFiniteMargin(row_at(rows, lo), f"{cause}: the values (or targets, or sample weights) "
                          "are finite but too large for the steps; scale them (or lower eta0) and "
                          "train again. The model is the one before this row.")


class NonFiniteMargin(ValueError):
    """A step's margin was NaN or infinite: `row` is its row of X, `detail` the cause
    and the fix (the command line names the row in its file)."""

    def __init__(self, row, detail):
        super().__init__(f"row {row}: {detail}")
        self.row, self.detail = row, detail


cdef inline long long row_at(const long long* order, long long i) noexcept nogil:
    """The i-th row visited: order[i], or i where the order is the file's (NULL)."""
    return order[i] if order != NULL else i


cdef inline double weight_at(const double* sw, long long r) noexcept nogil:
    """Row r's sample weight: sw[r], or 1 where none are given (NULL)."""
    return sw[r] if sw != NULL else 1.0


cdef int csr_kind(data, indices) except -1:
    """Which typed loop reads these CSR buffers: 0 float64 values and int32 indices,
    1 float64 and int64, 2 float32 and int32, 3 float32 and int64. Chosen by item
    size here, not by Cython's fused-type dispatch, which imports NumPy to inspect
    its arguments (see fastprox._numpy); the typed views then check the types."""
    return 2 * (memoryview(data).itemsize == 4) + (memoryview(indices).itemsize == 8)


cdef margins_csr(const double[:, ::1] W, const value_t[::1] data, const index_t[::1] indices,
                 const index_t[::1] indptr, double[:, ::1] out):
    """out[i, k] = sum of W[k, j] x_ij over row i's stored entries with j < W's width."""
    cdef Py_ssize_t i, n = out.shape[0], K = W.shape[0], d = W.shape[1], nnz = indices.shape[0]
    cdef index_t nz, j
    cdef int k
    cdef bint valid = indptr.shape[0] == n + 1 and data.shape[0] == nnz and (n == 0 or indptr[0] == 0)
    for i in range(n):
        valid = valid and indptr[i] <= indptr[i + 1] <= nnz
    if not valid:
        raise ValueError("inconsistent CSR arrays: data, indices and indptr do not match.")
    with nogil:
        for i in range(n):
            for k in range(K):
                out[i, k] = 0.0
            for nz in range(indptr[i], indptr[i + 1]):
                j = indices[nz]
                if 0 <= j < d:
                    for k in range(K):
                        out[i, k] += W[k, j] * data[nz]


cdef long long _check_rows(Py_ssize_t nnz, const index_t[::1] indices, const index_t[::1] indptr,
                           Py_ssize_t n_y, Py_ssize_t n_sw, const long long[::1] order, bint all_rows,
                           long long d, int batch_size, bint want_longest) except -1:
    """Refuse, before any step, what would read outside the arrays: the kernel's
    loops trust these bounds. Returns the longest row's number of non-zeros if
    `want_longest` (ftrl sizes its memo by it), else 0; `all_rows`: the order is
    0..n-1 and needs no check. The loops without min/max vectorize."""
    cdef Py_ssize_t n_rows = indptr.shape[0] - 1, i
    cdef long long lo = 0, hi = n_rows - 1 if all_rows else -1, longest = 0
    cdef bint decreasing = False
    if n_rows < 0 or indices.shape[0] != nnz or indptr[0] != 0 or indptr[n_rows] > nnz:
        raise ValueError("inconsistent CSR arrays: data, indices and indptr do not match.")
    if n_y != n_rows or n_sw != n_rows:
        raise ValueError(f"y has {n_y} and sample_weight {n_sw} entries for {n_rows} rows.")
    if batch_size < 1:
        raise ValueError(f"batch_size={batch_size} must be >= 1.")
    with nogil:
        if not all_rows:
            for i in range(order.shape[0]):
                lo = min(lo, order[i])
                hi = max(hi, order[i])
        if hi < n_rows and lo >= 0:
            if want_longest:
                for i in range(n_rows):
                    longest = max(longest, indptr[i + 1] - indptr[i])
            for i in range(n_rows):
                decreasing |= indptr[i + 1] < indptr[i]
            if decreasing:
                lo = -1
            elif outside(&indices[0] if nnz else NULL, nnz, d):
                lo = -2
    if lo == -2:
        raise ValueError(f"a column index lies outside [0, {d}): the matrix is malformed "
                         "or has more features than the model.")
    if lo < 0 or hi >= n_rows:
        raise ValueError(f"row order must list rows in [0, {n_rows}) of a well-formed CSR matrix.")
    return longest


cdef int ensure_scratch(Ctx* c, long long longest, int batch_size) except -1:
    """Allocate the scratch the coming steps write, once needed: ftrl's (w, sqrt(n))
    memo for rows of up to `longest` non-zeros, and for batches the gradient
    accumulator and feature marks (calloc: pages a pass never touches stay unmapped)."""
    cdef long long need = 2 * c.K * max(longest, 1) if c.update == FTRL else 0
    cdef double* grown
    if need > c.wrow_size:
        grown = <double*>realloc(c.wrow, need * sizeof(double))
        if grown == NULL:
            raise MemoryError()
        c.wrow, c.wrow_size = grown, need
    if batch_size > 1 and c.mark == NULL:
        c.gacc = <double*>calloc(c.d * c.K, sizeof(double))
        c.mark = <long long*>calloc(c.d, sizeof(long long))
        c.touched = <long long*>calloc(c.d, sizeof(long long))
        if c.gacc == NULL or c.mark == NULL or c.touched == NULL:
            free_scratch(c)
            raise MemoryError()
    return 0


cdef void free_scratch(Ctx* c) noexcept:
    """Release what `ensure_scratch` allocated; the next steps allocate it again."""
    free(c.wrow)
    free(c.gacc)
    free(c.mark)
    free(c.touched)
    c.wrow, c.gacc, c.mark, c.touched, c.wrow_size = NULL, NULL, NULL, NULL, 0


cdef bint outside(const index_t* indices, Py_ssize_t nnz, long long d) noexcept nogil:
    """Whether an index lies outside [0, d). One unsigned comparison each (a negative
    index wraps above d), or-ed without a branch: a loop SSE2 vectorizes for int32."""
    cdef Py_ssize_t i
    cdef unsigned int bad32 = 0, d32
    cdef unsigned long long bad64 = 0
    if index_t is int and d <= 0x7FFFFFFF:
        d32 = <unsigned int>d
        for i in range(nnz):
            bad32 |= <unsigned int>indices[i] >= d32
        return bad32 != 0
    for i in range(nnz):
        bad64 |= <unsigned long long>(<long long>indices[i]) >= <unsigned long long>d
    return bad64 != 0


cdef inline double* _ptr(a):
    cdef double[::1] flat = a
    return &flat[0] if flat.shape[0] else NULL


cdef inline long long* _iptr(a):
    cdef long long[::1] flat = a
    return &flat[0] if flat.shape[0] else NULL


cdef bint consecutive(const long long[::1] order) noexcept nogil:
    """Whether the rows are visited in file order (order[i + 1] = order[i] + 1)."""
    cdef Py_ssize_t i
    for i in range(order.shape[0] - 1):
        if order[i + 1] != order[i] + 1:
            return False
    return True


cdef inline void prefetch_lines(const void* lo, const void* hi) noexcept nogil:
    """Ask for the cache lines of [lo, hi) (a row's values or indices)."""
    cdef const char* p = <const char*>lo
    while p < <const char*>hi:
        FASTPROX_PREFETCH_READ(p)
        p += 64


cdef inline void prefetch_rows(Ctx* c, const index_t* indices, long long lo, long long hi) noexcept nogil:
    """Ask for the state of the next step's features while this step computes."""
    cdef long long nz
    cdef double* row
    for nz in range(lo, hi):
        row = c.state + indices[nz] * c.width
        FASTPROX_PREFETCH(row)
        FASTPROX_PREFETCH(row + c.width - 1)
    if c.grouped:
        prefetch_groups(c, indices, lo, hi)


cdef void prefetch_groups(Ctx* c, const index_t* indices, long long lo, long long hi) noexcept nogil:
    """The group stamps of the next step's features. A loop of its own: a group test
    inside the row loop above made one-output passes 2x slower (measured)."""
    cdef long long nz, g
    for nz in range(lo, hi):
        g = group_of(c, indices[nz])
        if g >= 0:
            if not c.plain_rows:
                FASTPROX_PREFETCH(c.gmark + g)
            FASTPROX_PREFETCH(c.gstamp + g)


# ------------------------------------------------------------------ one step
cdef double step(Ctx* c, const value_t* data, const index_t* indices, const index_t* indptr,
                  const double* y, const double* sw, const long long* rows, long long first,
                  int n_rows) noexcept nogil:
    """One step over the n_rows rows visited from position `first` on (`row_at`);
    returns their weighted progressive loss (the log loss's logarithms deferred)."""
    cdef int K = c.K
    cdef int i, k
    cdef long long r, j, nz, n_touched = 0
    cdef double x, total = 0.0
    cdef double* row
    if c.update != FOBOS:
        set_weight_params(c)
    begin_step(c)
    if n_rows == 1 and c.plain_rows:
        r = row_at(rows, first)
        total = plain_rows_step(c, data, indices, indptr[r], indptr[r + 1], y[r], weight_at(sw, r))
        if c.nonfinite:
            return total
    elif n_rows == 1:
        r = row_at(rows, first)
        margins(c, data, indices, indptr[r], indptr[r + 1])
        total = gradients(c, y[r], weight_at(sw, r))
        if refused(c, largest_q(c), row_abs_max(c, data, indptr[r], indptr[r + 1])):
            abandon_step(c, 0)
            return total
        advance_cumulants(c)
        for nz in range(indptr[r], indptr[r + 1]):
            row = c.state + indices[nz] * c.width
            x = data[nz]
            for k in range(K):
                if c.update == FTRL:
                    ftrl_update(c, entry(c, row, k), c.q[k] * x, c.wrow + 2 * ((nz - indptr[r]) * K + k))
                else:
                    apply(c, row, k, c.q[k] * x)
            stamp(c, row)
        c.n_ops += (indptr[r + 1] - indptr[r]) * K
        for k in range(K):
            c.qsum[k] = c.q[k]
    else:
        for k in range(K):
            c.qsum[k] = 0.0
        for i in range(n_rows):
            r = row_at(rows, first + i)
            margins(c, data, indices, indptr[r], indptr[r + 1])
            total += gradients(c, y[r], weight_at(sw, r))
            if refused(c, largest_q(c), row_abs_max(c, data, indptr[r], indptr[r + 1])):
                abandon_step(c, n_touched)
                return total
            for k in range(K):
                c.qsum[k] += c.q[k]
            for nz in range(indptr[r], indptr[r + 1]):
                j = indices[nz]
                if c.mark[j] != c.t + 1:
                    c.mark[j] = c.t + 1
                    c.touched[n_touched] = j
                    n_touched += 1
                x = data[nz]
                for k in range(K):
                    c.gacc[j * c.K + k] += c.q[k] * x
        advance_cumulants(c)
        for i in range(n_touched):
            j = c.touched[i]
            row = c.state + j * c.width
            for k in range(K):
                apply(c, row, k, c.gacc[j * c.K + k] / n_rows)
                c.gacc[j * c.K + k] = 0.0
            stamp(c, row)
        c.n_ops += n_touched * K
    if c.grouped and c.update == FOBOS:
        groups_prox_step(c)
    for k in range(K):
        apply_intercept(c, k, c.qsum[k] if n_rows == 1 else c.qsum[k] / n_rows)
    c.t += 1
    end_step(c)
    return total

cdef inline double separable_step(Ctx* c, const value_t* data, const index_t* indices,
                                  const index_t* indptr, const double* y, const double* sw,
                                  long long r) noexcept nogil:
    """`step` for row r alone under a rule with one output and a separable penalty
    (`Ctx.plain_fobos`, `plain_adagrad`, `plain_dual`): the most common steps, called
    by `fit_csr`'s loop directly (3-5% of an ijcnn1 pass was `step`'s dispatch)."""
    cdef double total
    if c.update != FOBOS:
        set_weight_params(c)
    begin_step(c)
    if c.plain_fobos:
        total = plain_fobos_step(c, data, indices, indptr[r], indptr[r + 1], y[r], weight_at(sw, r))
    elif c.plain_adagrad:
        total = plain_adagrad_step(c, data, indices, indptr[r], indptr[r + 1], y[r], weight_at(sw, r))
    else:
        total = plain_dual_step(c, data, indices, indptr[r], indptr[r + 1], y[r], weight_at(sw, r))
    if c.nonfinite:
        return total
    apply_intercept(c, 0, c.qsum[0])
    c.t += 1
    end_step(c)
    return total


cdef inline bint entries(double* state, long long width, const index_t* indices, long long nz,
                         long long hi, double** e, double** f) noexcept nogil:
    """The state rows of non-zeros nz and nz + 1 of a row ending at hi, for the loops
    that take them two at a time: f = e for an odd row's last one. Whether there are two."""
    cdef bint two = nz + 1 < hi
    e[0] = state + indices[nz] * width
    f[0] = state + indices[nz + two] * width
    return two


cdef inline double dot2(double acc, pair w, const value_t* data, long long nz, bint two) noexcept nogil:
    """acc + w.a x_nz, then + w.b x_(nz+1) if there are two: the margin's sum in row order."""
    acc += w.a * data[nz]
    if two:
        acc += w.b * data[nz + 1]
    return acc


cdef double plain_fobos_step(Ctx* c, const value_t* data, const index_t* indices,
                            long long lo, long long hi, double y, double sw) noexcept nogil:
    """One row of the most common rule (one output, fobos with a scalar step and an
    l1/l2/elasticnet penalty). The l1 layout (Q stamp, w) has loops of its own."""
    if c.off_P < 0 and c.off_Q == 0 and c.n_row == 1:
        return fobos_l1_row(c, data, indices, lo, hi, y, sw)
    return fobos_row(c, data, indices, lo, hi, y, sw, c.n_row, c.off_Q)


cdef double fobos_l1_row(Ctx* c, const value_t* data, const index_t* indices,
                         long long lo, long long hi, double y, double sw) noexcept nogil:
    """`fobos_row` in the l1 layout (Q stamp, w), its non-zeros two at a time (e, f),
    each instruction of the catch-up and of the step for both (`_pairs.h`); the same
    operations in the same order, the same bits."""
    cdef double* state = c.state
    cdef long long width = c.width, nz
    cdef double P = c.P, Q = c.Q, eta, acc = c.bstate[0], a, q, total
    cdef double xm = intercept_feature(c)
    cdef double* e
    cdef double* f
    cdef bint two
    for nz in range(lo, hi, 2):
        two = entries(state, width, indices, nz, hi, &e, &f)
        acc = dot2(acc, l1_catch_up2(e, f, P, Q), data, nz, two)
        xm = abs_max2(xm, data, nz, two)
    c.p[0] = acc
    next_eta(c)
    total = 0.0
    q = c.q[0] = gradient(c, acc, y, sw, &total)
    if refused(c, q, xm):
        return total
    advance_cumulants(c)
    Q, eta = c.Q, c.eta
    a = c.alpha_pen * eta
    for nz in range(lo, hi, 2):
        two = entries(state, width, indices, nz, hi, &e, &f)
        l1_step2(e, f, data[nz], data[nz + two], q, eta, a, Q)
    c.n_ops += 2 * (hi - lo)
    c.qsum[0] = q
    return total


cdef inline double fobos_row(Ctx* c, const value_t* data, const index_t* indices,
                             long long lo, long long hi, double y, double sw,
                             int n_row, int off_Q) noexcept nogil:
    """`plain_fobos_step` for the layouts with a P stamp or none (l2, elasticnet, no
    penalty; `_pairs.h`'s scalar_catch_up2), as `fobos_l1_row`: the general path's
    arithmetic, operation for operation, two non-zeros at a time."""
    cdef double* state = c.state
    cdef long long width = c.width, nz
    cdef double P = c.P, Q = c.Q, rho1 = c.rho1, a, eta, q, total
    cdef double acc = c.bstate[0], xm = intercept_feature(c)
    cdef double* e
    cdef double* f
    cdef bint two
    for nz in range(lo, hi, 2):
        two = entries(state, width, indices, nz, hi, &e, &f)
        acc = dot2(acc, scalar_catch_up2(e, f, n_row, off_Q, P, Q), data, nz, two)
        xm = abs_max2(xm, data, nz, two)
    c.p[0] = acc
    next_eta(c)
    total = 0.0
    q = c.q[0] = gradient(c, acc, y, sw, &total)
    if refused(c, q, xm):
        return total
    advance_cumulants(c)
    P, Q, eta = c.P, c.Q, c.eta
    a = c.alpha_pen * eta
    for nz in range(lo, hi, 2):
        two = entries(state, width, indices, nz, hi, &e, &f)
        scalar_step2(e, f, n_row, off_Q, data[nz], data[nz + two], q, eta, a, rho1, P, Q)
    c.n_ops += 2 * (hi - lo)
    c.qsum[0] = q
    return total


cdef double plain_adagrad_step(Ctx* c, const value_t* data, const index_t* indices,
                              long long lo, long long hi, double y, double sw) noexcept nogil:
    """One row of AdaGrad's composite mirror descent with one output, as
    `plain_fobos_step`: the general path's arithmetic with its constants in locals
    (under l1, the defaults: `adagrad_l1_row`). Row layout: t0, w, G, eta."""
    cdef double* state = c.state
    cdef long long width = c.width, nz
    cdef double t = <double>c.t, alpha = c.alpha_pen, rho1 = c.rho1
    cdef double delta = c.delta, eta0 = c.eta0, q, total
    cdef double acc = c.bstate[0], xm = intercept_feature(c)
    cdef double* row
    cdef double* e
    cdef double* f
    cdef bint two
    if c.penalty == L1 or (c.penalty == ELASTICNET and rho1 == 1.0):
        return adagrad_l1_row(c, data, indices, lo, hi, y, sw)
    for nz in range(lo, hi):
        row = state + indices[nz] * width
        if row[0] < t:
            row[1] = adagrad_catch_up(c, row, 0)
            row[0] = t
        acc += row[1] * data[nz]
        xm = abs_max2(xm, data, nz, False)
    c.p[0] = acc
    total = 0.0
    q = c.q[0] = gradient(c, acc, y, sw, &total)
    if refused(c, q, xm):
        return total
    for nz in range(lo, hi, 2):
        two = entries(state, width, indices, nz, hi, &e, &f)
        adagrad_step2(e, f, data[nz], data[nz + two], q, t, alpha, rho1, delta, eta0)
    c.n_ops += 2 * (hi - lo)
    c.qsum[0] = q
    return total


cdef double adagrad_l1_row(Ctx* c, const value_t* data, const index_t* indices,
                           long long lo, long long hi, double y, double sw) noexcept nogil:
    """`plain_adagrad_step` under l1, its non-zeros two at a time (e, f), each
    instruction of the catch-up and of the step for both (`_pairs.h`). The catch-up
    has no branch: a current feature (t0 = t) has threshold 0, which keeps it."""
    cdef double* state = c.state
    cdef long long width = c.width, nz
    cdef double t = <double>c.t, alpha = c.alpha_pen, delta = c.delta, eta0 = c.eta0
    cdef double acc = c.bstate[0], q, total, xm = intercept_feature(c)
    cdef double* e
    cdef double* f
    cdef bint two
    for nz in range(lo, hi, 2):
        two = entries(state, width, indices, nz, hi, &e, &f)
        acc = dot2(acc, adagrad_catch_up2(e, f, t, alpha), data, nz, two)
        xm = abs_max2(xm, data, nz, two)
    c.p[0] = acc
    total = 0.0
    q = c.q[0] = gradient(c, acc, y, sw, &total)
    if refused(c, q, xm):
        return total
    for nz in range(lo, hi, 2):
        two = entries(state, width, indices, nz, hi, &e, &f)
        adagrad_step2(e, f, data[nz], data[nz + two], q, t, alpha, 1.0, delta, eta0)
    c.n_ops += 2 * (hi - lo)
    c.qsum[0] = q
    return total


cdef double plain_dual_step(Ctx* c, const value_t* data, const index_t* indices,
                            long long lo, long long hi, double y, double sw) noexcept nogil:
    """One row of rda or ftrl with one output and a separable penalty: `dual_row` for
    the rule's layout, its flags constants, so the loops test none of them."""
    if c.update == FTRL and c.ftrl_roots:
        return dual_row(c, data, indices, lo, hi, y, sw, True, True, True)
    if c.update == FTRL:
        return dual_row(c, data, indices, lo, hi, y, sw, True, True, False)
    if c.schedule == ADAGRAD:
        return dual_row(c, data, indices, lo, hi, y, sw, False, True, False)
    return dual_row(c, data, indices, lo, hi, y, sw, False, False, False)


cdef inline double dual_row(Ctx* c, const value_t* data, const index_t* indices,
                            long long lo, long long hi, double y, double sw,
                            bint ftrl, bint adagrad, bint roots) noexcept nogil:
    """`plain_dual_step` for one layout, as `plain_fobos_step`: `weight`'s closed forms
    and `apply`'s sums, operation for operation, with the step's constants in locals.
    Entry layout: s (rda) or z (ftrl), then G or n (adagrad, ftrl), then sqrt(n)
    (`ftrl_roots`). The margin takes its non-zeros two at a time (e, f), each
    instruction of their weights' formula for both (`_pairs.h`), as ftrl's update."""
    cdef double* state = c.state
    cdef double* memo = c.wrow
    cdef long long width = c.width, nz
    cdef double wc = c.wc, wl2 = c.wl2, wthr = c.wthr, winv = c.winv, rho = c.rda_rho
    cdef double delta = c.delta, inv_eta0 = c.inv_eta0, ge, gf, ne, q, total
    cdef double acc = intercept_value(c, 0), xm = intercept_feature(c)
    cdef double* e
    cdef double* f
    cdef pair root, w
    cdef bint two
    if not (ftrl or adagrad):
        for nz in range(lo, hi, 2):
            two = entries(state, width, indices, nz, hi, &e, &f)
            acc = dot2(acc, rda_weights2(e[0], f[0], wthr, winv), data, nz, two)
            xm = abs_max2(xm, data, nz, two)
    else:
        for nz in range(lo, hi, 2):
            two = entries(state, width, indices, nz, hi, &e, &f)
            root = pair(e[2], f[2]) if roots else sqrt2(e[1], f[1])
            w = dual_weights2(e[0], f[0], root, delta, inv_eta0, wc, rho, wl2)
            if ftrl:
                memo[2 * (nz - lo)] = w.a
                memo[2 * (nz - lo) + 1] = root.a
                if two:
                    memo[2 * (nz - lo) + 2] = w.b
                    memo[2 * (nz - lo) + 3] = root.b
            acc = dot2(acc, w, data, nz, two)
            xm = abs_max2(xm, data, nz, two)
    c.p[0] = acc
    total = 0.0
    q = c.q[0] = gradient(c, acc, y, sw, &total)
    if refused(c, q, xm):
        return total
    if ftrl:
        for nz in range(lo, hi, 2):
            two = entries(state, width, indices, nz, hi, &e, &f)
            ge = q * data[nz]
            e[1] += ge * ge
            ne = e[1]
            gf = q * data[nz + two]
            if two:
                f[1] += gf * gf
            root = sqrt2(ne, f[1])
            ftrl_z(e, ge, root.a, memo + 2 * (nz - lo), inv_eta0, roots)
            if two:
                ftrl_z(f, gf, root.b, memo + 2 * (nz - lo) + 2, inv_eta0, roots)
    else:
        for nz in range(lo, hi):
            e = state + indices[nz] * width
            ge = q * data[nz]
            e[0] += ge
            if adagrad:
                e[1] += ge * ge
    c.n_ops += 2 * (hi - lo)
    c.qsum[0] = q
    return total


cdef double plain_rows_step(Ctx* c, const value_t* data, const index_t* indices,
                            long long lo, long long hi, double y, double sw) noexcept nogil:
    """One row under l1_l2 or l1_linf over W's rows with fobos and a scalar step (the
    multiclass structured-sparsity case), as the general path computes it: each
    feature's row caught up in one prox with the threshold summed since its stamp,
    the K scores, the gradient step (its prox joins the next catch-up, see
    `groups_prox_step`). A row's features are distinct groups, each caught up once,
    so the per-step group marks of the general path are not needed."""
    cdef double* state = c.state
    cdef double* gstamp = c.gstamp
    cdef double* p = c.p
    cdef double* q = c.q
    cdef long long width = c.width, nz, j
    cdef int k, K = c.K
    cdef double Q = c.Q, eta = c.eta, a, x, total
    cdef bint linf = c.penalty == L1_LINF
    cdef double* row
    for k in range(K):
        p[k] = c.bstate[2 * k]
    for nz in range(lo, hi):
        j = indices[nz]
        row = state + j * width
        a = Q - gstamp[j]
        if a > 0.0:
            if linf:
                prox_l1_linf(row, K, a, c.work)
            else:
                prox_l1_l2(row, K, a)
            gstamp[j] = Q
        x = data[nz]
        for k in range(K):
            p[k] += row[k] * x
    total = gradients(c, y, sw)
    if refused(c, largest_q(c), row_abs_max(c, data, lo, hi)):
        return total
    for nz in range(lo, hi):
        row = state + indices[nz] * width
        x = data[nz]
        for k in range(K):
            row[k] -= eta * (q[k] * x)
    c.n_ops += 3 * (hi - lo) * K
    for k in range(K):
        c.qsum[k] = q[k]
    return total


cdef void margins(Ctx* c, const value_t* data, const index_t* indices,
                   long long lo, long long hi) noexcept nogil:
    """p_k = <w_k, x> + b_k at the current step, catching up the row's features.
    One output accumulates in a register: through c.p, every store into the
    state would force a reload of the sum."""
    cdef int k, K = c.K
    cdef long long nz
    cdef double x, acc = intercept_value(c, 0)
    cdef double* row
    for k in range(K):
        c.p[k] = intercept_value(c, k)
    for nz in range(lo, hi):
        row = c.state + indices[nz] * c.width
        if not c.grouped:
            catch_up(c, row)
        elif group_of(c, indices[nz]) >= 0:
            if c.update == RDA:
                rda_group_weights(c, group_of(c, indices[nz]))
            else:
                group_catch_up(c, group_of(c, indices[nz]))
        x = data[nz]
        if K == 1:
            acc += step_weight(c, row, 0, (nz - lo) * K) * x
        else:
            for k in range(K):
                c.p[k] += step_weight(c, row, k, (nz - lo) * K + k) * x
    if K == 1:
        c.p[0] = acc
    c.n_ops += (hi - lo) * K


cdef inline double step_weight(Ctx* c, double* row, int k, long long slot) noexcept nogil:
    """w_{t,jk} for the margin; ftrl keeps (w, sqrt(n)) in its memo slot for the update."""
    if c.update == FTRL:
        return ftrl_weight(c, entry(c, row, k), c.wrow + 2 * slot)
    return weight(c, row, k)


cdef double gradients(Ctx* c, double y, double weight) noexcept nogil:
    """q_k = weight * loss'(p_k, y_k); returns the weighted loss. (A batch sums these
    and divides by its size once, as the mean in the contract does.)"""
    cdef int k
    cdef double yk, total = 0.0
    if c.multinomial:
        for k in range(c.K):
            c.nonfinite |= not fabs(c.p[k]) <= DBL_MAX
        return multinomial_gradients(c, <int>y, weight)
    for k in range(c.K):
        yk = (1.0 if k == <int>y else -1.0) if c.ovr else y
        c.q[k] = gradient(c, c.p[k], yk, weight, &total)
    return total


cdef inline double gradient(Ctx* c, double p, double y, double weight, double* total) noexcept nogil:
    """weight * loss'(p, y) of one output; adds the weighted loss to total[0] (the log
    loss's logarithm deferred to c.lsum)."""
    cdef double value, q
    c.nonfinite |= not fabs(p) <= DBL_MAX
    if c.loss == LOG and weight == 1.0:
        return dlog_loss_deferred(p, y, total, &c.lsum)
    q = dloss_and_value(c.loss, p, y, c.epsilon, &value) * weight
    total[0] += weight * value
    return q

cdef inline bint refused(Ctx* c, double q, double x) noexcept nogil:
    """Whether the step must stop before its update: a margin was not finite, or its
    gradient q x reaches GRADIENT_MAX (q the row's largest |loss derivative|, x its
    largest |value|, which the fast rows take in their margin loops: `abs_max2`)."""
    if not fabs(q) * x < GRADIENT_MAX and not c.nonfinite:
        c.nonfinite = c.steep = True
    return c.nonfinite


cdef inline double abs_max2(double m, const value_t* data, long long nz, bint two) noexcept nogil:
    """max(m, |x_nz|, |x_(nz+1)|) for the loops that take non-zeros two at a time
    (x_(nz+1) is x_nz again for an odd row's last one, `entries`)."""
    cdef double a = fabs(<double>data[nz]), b = fabs(<double>data[nz + two])
    a = a if a > b else b
    return a if a > m else m


cdef inline double intercept_feature(Ctx* c) noexcept nogil:
    """The intercept's constant feature: 1, or 0 without an intercept (its gradient is
    then no step's: `refused` and the margin loops start their largest |x| there)."""
    return 1.0 if c.fit_intercept else 0.0


cdef inline double row_abs_max(Ctx* c, const value_t* data, long long lo, long long hi) noexcept nogil:
    """The largest |x| of a row's values, and 1 for the intercept's constant feature."""
    cdef long long nz
    cdef double m = intercept_feature(c)
    for nz in range(lo, hi):
        m = max(m, fabs(<double>data[nz]))
    return m


cdef inline double largest_q(Ctx* c) noexcept nogil:
    """max_k |q_k|, the row's largest loss derivative (NaN if one is)."""
    cdef int k
    cdef double m = fabs(c.q[0])
    for k in range(1, c.K):
        m = m if fabs(c.q[k]) <= m else fabs(c.q[k])
    return m


cdef void abandon_step(Ctx* c, long long n_touched) noexcept nogil:
    """Undo a refused step's bookkeeping (its weights were only caught up): the
    batch's gradient sums, and the marks of the groups it caught up, so that the next
    step collects and lists them afresh."""
    cdef long long i, j
    cdef int k
    for i in range(n_touched):
        j = c.touched[i]
        c.mark[j] = 0
        for k in range(c.K):
            c.gacc[j * c.K + k] = 0.0
    for i in range(c.n_tg):
        c.gmark[c.gtouched[i]] = 0
    c.n_tg = 0


cdef double multinomial_gradients(Ctx* c, int y, double weight) noexcept nogil:
    """Score gradients q of the multinomial losses (the contract's multiclass table):
    softmax(p) - e_y for log; Crammer-Singer's +1 / -1 on the most violating class and
    y for hinge. Returns the weighted loss."""
    cdef int k, top = 0
    cdef double m, z = 0.0, s
    if c.loss == LOG:
        m = c.p[0]
        for k in range(1, c.K):
            m = max(m, c.p[k])
        for k in range(c.K):
            z += exp(c.p[k] - m)
        for k in range(c.K):
            c.q[k] = (exp(c.p[k] - m) / z - (1.0 if k == y else 0.0)) * weight
        return weight * (log(z) + m - c.p[y])
    for k in range(c.K):
        c.q[k] = 0.0
        if c.p[k] + (k != y) > c.p[top] + (top != y):
            top = k
    s = c.p[top] + 1.0 - c.p[y]
    if top == y or s <= 0.0:
        return 0.0
    c.q[top] = weight
    c.q[y] = -weight
    return weight * s


# ------------------------------------------------------------------ schedules
cdef inline void begin_step(Ctx* c) noexcept nogil:
    """eta_t of the scalar schedules for step t = c.t + 1 (AdaGrad's steps are per
    coordinate: nothing to compute), or the one `next_eta` computed."""
    cdef double t = <double>(c.t + 1)
    if c.eta_next_t == c.t + 1:
        c.eta = c.eta_next
    elif c.schedule == CONSTANT or c.schedule == ADAGRAD:
        c.eta = c.eta0
    elif c.schedule == INVSQRT:
        c.eta = c.eta0 / sqrt(t)
    else:
        c.eta = c.eta0 / t

cdef inline void next_eta(Ctx* c) noexcept nogil:
    """eta of the next step under invsqrt or inv, computed while this step waits on
    its loss's exp: its square root and division would otherwise start the next
    step and, as the oldest instructions in flight, hold up the row behind them."""
    cdef double t = <double>(c.t + 2)
    if c.schedule == INVSQRT:
        c.eta_next = c.eta0 / sqrt(t)
    elif c.schedule == INV:
        c.eta_next = c.eta0 / t
    else:
        return
    c.eta_next_t = c.t + 2


cdef void set_weight_params(Ctx* c) noexcept nogil:
    """Constants of the dual (rda, ftrl) weight formulas with T = c.t gradients summed.
    AdaGrad's beta is per coordinate: its separable weights need no scalar beta
    (a square root and two divisions a step saved; the grouped ones still use it)."""
    cdef double T = <double>c.t
    c.wc = T * c.alpha_pen * c.rho1
    c.wl2 = T * c.alpha_pen * (1.0 - c.rho1)
    if c.schedule == ADAGRAD and not c.grouped:
        return
    c.wbeta = sqrt(T) / c.eta0
    c.wthr = c.wc + c.wbeta * c.rda_rho
    c.winv = 1.0 / (c.wbeta + c.wl2) if c.wbeta + c.wl2 > 0.0 else 0.0

cdef inline void advance_cumulants(Ctx* c) noexcept nogil:
    """Fold this step's prox into the scalar-FOBOS cumulants (P, Q)."""
    cdef double a = c.alpha_pen * c.eta
    if c.update != FOBOS or c.schedule == ADAGRAD or c.grouped:
        return
    if c.penalty == BERHU:
        heap_advance(&c.heap, c.state, c.n_entry, c.P, c.Q, a)
        c.Q += a
        c.P /= 1.0 + a / c.gamma
        return
    c.Q += a * c.rho1 / c.P
    if c.rho1 != 1.0:           # (l1: P / 1 is P, and a division a row is 1% of ijcnn1's)
        c.P /= 1.0 + a * (1.0 - c.rho1)

cdef inline void end_step(Ctx* c) noexcept nogil:
    if c.update != FOBOS or c.schedule == ADAGRAD:
        return
    c.since_rebase += 1
    if c.P < P_FLOOR or c.since_rebase >= c.rebase_period:
        rebase(c)

cdef void rebase(Ctx* c) noexcept nogil:
    """Catch every feature up, then restart the cumulants at P = 1, Q = 0."""
    cdef Py_ssize_t j
    c.since_rebase = 0
    if c.grouped:
        groups_rebase(c)
        return
    for j in range(c.d):
        catch_up(c, c.state + j * c.width)
    c.n_ops += c.d * c.K
    c.P, c.Q = 1.0, 0.0
    reset_stamps(c)
    if c.berhu_heap:
        for j in range(c.d * c.K):
            heap_schedule(&c.heap, c.state + j * c.n_entry, j, c.state[j * c.n_entry], 1.0, 0.0)

cdef void reset_stamps(Ctx* c) noexcept nogil:
    """Stamp every feature as current at the cumulants' origin."""
    cdef Py_ssize_t j
    for j in range(c.d):
        stamp_origin(c, c.state + j * c.width)

cdef inline void stamp_origin(Ctx* c, double* row) noexcept nogil:
    """Stamp a feature's row as current at the cumulants' origin (P = 1, Q = 0); with
    its entries 0, the row of a feature never touched."""
    if c.off_P >= 0:
        row[c.off_P] = 1.0
    if c.off_Q >= 0:
        row[c.off_Q] = 0.0

# ------------------------------------------------------------------ per feature
cdef inline double* entry(Ctx* c, double* row, int k) noexcept nogil:
    return row + c.n_row + k * c.n_entry

cdef inline long long index(Ctx* c, double* row, int k) noexcept nogil:
    """Flat index j * K + k of entry k of a row (for layouts without row fields)."""
    return (row - c.state) // c.n_entry + k

cdef inline void catch_up(Ctx* c, double* row) noexcept nogil:
    """Bring the stored entries of a FOBOS feature to the current step, in place."""
    cdef int k
    if c.update != FOBOS:
        return
    if c.schedule == ADAGRAD:
        if row[0] < c.t:
            for k in range(c.K):
                entry(c, row, k)[0] = adagrad_catch_up(c, row, k)
            row[0] = c.t
    elif c.berhu_heap:
        berhu_catch_up(c, row)
    elif c.n_row:
        for k in range(c.K):
            entry(c, row, k)[0] = scalar_catch_up(c, row, k)
        stamp(c, row)

cdef void berhu_catch_up(Ctx* c, double* row) noexcept nogil:
    cdef int k
    for k in range(c.K):
        heap_catch_up(&c.heap, entry(c, row, k), index(c, row, k), c.P, c.Q)

cdef inline double scalar_catch_up(Ctx* c, double* row, int k) noexcept nogil:
    """soft(w P/P_s, P (Q - Q_s)): the steps since the stamp, in one prox."""
    cdef double w = entry(c, row, k)[0]
    cdef double ratio = 1.0, thr = 0.0
    if c.off_P >= 0:
        ratio = c.P / row[c.off_P]
    if c.off_Q >= 0:
        thr = c.P * (c.Q - row[c.off_Q])
    return soft_threshold(w * ratio, thr)

cdef inline double adagrad_catch_up(Ctx* c, double* row, int k) noexcept nogil:
    """m = T - t0 proxes with the entry's frozen step eta0/(delta + sqrt(G)), in closed form."""
    cdef double* e = entry(c, row, k)
    cdef double m = c.t - row[0]
    cdef double a, L
    if m <= 0 or e[0] == 0.0 or c.alpha_pen == 0.0:
        return e[0]
    a = c.alpha_pen * e[2]
    if c.penalty == BERHU:
        return berhu_const_catch_up(e[0], a, m, c.gamma)
    if c.rho1 == 1.0:
        return soft_threshold(e[0], m * a)
    L = -m * small_log1p(a * (1.0 - c.rho1))
    if c.rho1 == 0.0:
        return e[0] * small_exp(L)
    return copysign(max(0.0, small_exp(L) * fabs(e[0]) + c.rho1 / (1.0 - c.rho1) * small_expm1(L)), e[0])


cdef inline double small_log1p(double x) noexcept nogil:
    """log1p(x); where |x| <= SERIES_MAX its series' first four terms (the common
    catch-up: alpha eta is small, and libm's call was a fifth of an l2 pass)."""
    if fabs(x) <= SERIES_MAX:
        return x * (1.0 - x * (0.5 - x * (1.0 / 3.0 - 0.25 * x)))
    return log1p(x)


cdef inline double small_expm1(double x) noexcept nogil:
    """expm1(x); where |x| <= SERIES_MAX its series' first four terms."""
    if fabs(x) <= SERIES_MAX:
        return x * (1.0 + x * (0.5 + x * (1.0 / 6.0 + x * (1.0 / 24.0))))
    return expm1(x)


cdef inline double small_exp(double x) noexcept nogil:
    """exp(x); where |x| <= SERIES_MAX, 1 + `small_expm1`(x)."""
    if fabs(x) <= SERIES_MAX:
        return 1.0 + small_expm1(x)
    return exp(x)

cdef inline void stamp(Ctx* c, double* row) noexcept nogil:
    """Mark a FOBOS feature as current after the step's update."""
    if c.update != FOBOS:
        return
    if c.schedule == ADAGRAD:
        row[0] = c.t + 1
        return
    if c.off_P >= 0:
        row[c.off_P] = c.P
    if c.off_Q >= 0:
        row[c.off_Q] = c.Q

cdef inline double weight(Ctx* c, double* row, int k) noexcept nogil:
    """w_{t,jk} of a caught-up feature (stored for FOBOS, a closed form for rda, ftrl)."""
    cdef double* e = entry(c, row, k)
    if c.update == FOBOS:
        return e[0]
    if c.grouped:
        return rda_grouped_weight(c, row, k)
    if c.update == RDA and c.schedule != ADAGRAD:
        return soft_threshold(-e[0], c.wthr) * c.winv
    return dual_weight(c, e[0], (c.delta + sqrt(e[1])) * c.inv_eta0)

cdef inline double dual_weight(Ctx* c, double s, double beta) noexcept nogil:
    """argmin_w s w + T alpha r(w) + beta (w^2/2 + rda_rho |w|), coordinate-wise."""
    cdef double den = beta + c.wl2
    if not den > 0.0:       # as `dual_weights2` in `dual_row`
        return 0.0
    return soft_threshold(-s, c.wc + beta * c.rda_rho) / den

cdef double current(Ctx* c, Py_ssize_t j, int k) noexcept nogil:
    """w_{T+1,jk} without modifying the state."""
    cdef double* row = c.state + j * c.width
    if c.update != FOBOS:
        return weight(c, row, k)
    if c.schedule == ADAGRAD:
        return adagrad_catch_up(c, row, k)
    if c.penalty == BERHU:
        return heap_current(&c.heap, entry(c, row, k), c.P, c.Q)
    if c.n_row:
        return scalar_catch_up(c, row, k)
    return entry(c, row, k)[0]

cdef inline void apply(Ctx* c, double* row, int k, double g) noexcept nogil:
    """This step's update of entry (j, k) with gradient g."""
    cdef double* e = entry(c, row, k)
    cdef double H, eta, sq
    if c.grouped and c.update == FOBOS:
        e[0] -= c.eta * g
    elif c.update == RDA:
        e[0] += g
        if c.schedule == ADAGRAD:
            e[1] += g * g
    elif c.update == FTRL:
        ftrl_weight(c, e, c.wrow)
        ftrl_update(c, e, g, c.wrow)
    elif c.penalty == BERHU:
        apply_berhu(c, row, k, g)
    elif c.schedule == ADAGRAD:
        eta = adagrad_step(c, e, g)
        if eta > 0.0:
            e[0] = fobos_prox(c, e[0] - eta * g, c.alpha_pen * eta)
    else:
        e[0] = fobos_prox(c, e[0] - c.eta * g, c.alpha_pen * c.eta)


cdef inline double ftrl_weight(Ctx* c, double* e, double* memo) noexcept nogil:
    """An entry's FTRL weight from (z, n); memo keeps (w, sqrt(n)) for its update."""
    memo[1] = e[2] if c.ftrl_roots else sqrt(e[1])
    memo[0] = dual_weight(c, e[0], (c.delta + memo[1]) * c.inv_eta0)
    return memo[0]


cdef inline void ftrl_update(Ctx* c, double* e, double g, const double* memo) noexcept nogil:
    """FTRL-Proximal's z += g - sigma w, n += g^2, with (w, sqrt(n)) from `ftrl_weight`."""
    e[1] += g * g
    ftrl_z(e, g, sqrt(e[1]), memo, c.inv_eta0, c.ftrl_roots)


cdef inline void ftrl_z(double* e, double g, double root, const double* memo, double inv_eta0,
                        bint roots) noexcept nogil:
    """z += g - sigma w, sigma = (root - sqrt(n_old)) / eta0, with n grown to root^2 and
    (w, sqrt(n_old)) in memo; the entry keeps the root where `roots`. (`dual_row` passes
    its locals, `ftrl_update` the context's.)"""
    e[0] += g - (root - memo[1]) * inv_eta0 * memo[0]
    if roots:
        e[2] = root


cdef inline double adagrad_step(Ctx* c, double* e, double g) noexcept nogil:
    """G += g^2 and the entry's new step eta0 / (delta + sqrt(G)), kept (e[2]) for its
    catch-up; 0 while delta + sqrt(G) = 0 (never a gradient: the weight stays 0)."""
    cdef double H
    e[1] += g * g
    H = c.delta + sqrt(e[1])
    e[2] = c.eta0 / H if H > 0.0 else 0.0
    return e[2]


cdef inline double fobos_prox(Ctx* c, double v, double a) noexcept nogil:
    """The elastic-net family's prox with threshold a (l1 without the trivial division)."""
    if c.rho1 == 1.0:
        return soft_threshold(v, a)
    return prox_elasticnet(v, a, c.rho1)


cdef void apply_berhu(Ctx* c, double* row, int k, double g) noexcept nogil:
    """FOBOS's Berhu update: the plain prox under adagrad, rescheduled in the heap otherwise."""
    cdef double* e = entry(c, row, k)
    cdef double eta = c.eta
    if c.schedule == ADAGRAD:
        eta = adagrad_step(c, e, g)
        if eta == 0.0:
            return
    if c.berhu_heap:
        heap_schedule(&c.heap, e, index(c, row, k),
                      prox_berhu(e[0] - eta * g, c.alpha_pen * eta, c.gamma), c.P, c.Q)
    else:
        e[0] = prox_berhu(e[0] - eta * g, c.alpha_pen * eta, c.gamma)

# ------------------------------------------------------------------ intercept
cdef double intercept_value(Ctx* c, int k) noexcept nogil:
    """b_k at the current step. ftrl keeps (b_k, sqrt(n_b)) in c.bmemo for the step's
    update (`apply_intercept`), as its features keep theirs in c.wrow."""
    cdef double a = c.bstate[2 * k], root
    if c.update == FOBOS:
        return a
    if c.update == RDA and c.schedule != ADAGRAD:
        return dual_intercept(a, sqrt(<double>c.t) / c.eta0)
    root = sqrt(c.bstate[2 * k + 1])
    if c.update == FTRL:
        c.bmemo[2 * k + 1] = root
        c.bmemo[2 * k] = dual_intercept(a, (c.delta + root) / c.eta0)
        return c.bmemo[2 * k]
    return dual_intercept(a, (c.delta + root) / c.eta0)

cdef inline double dual_intercept(double a, double beta) noexcept nogil:
    """The unpenalized dual weight for gradient sum a: argmin_b a b + beta b^2 / 2."""
    return -a / beta if beta > 0.0 else 0.0

cdef inline void apply_intercept(Ctx* c, int k, double g) noexcept nogil:
    """The unpenalized intercept's step with gradient g (sum of l' over the step),
    after the step's margins (ftrl reads the b and sqrt(n_b) they kept)."""
    cdef double H
    if not c.fit_intercept:
        return
    if c.update == FOBOS:
        if c.schedule == ADAGRAD:
            c.bstate[2 * k + 1] += g * g
            H = c.delta + sqrt(c.bstate[2 * k + 1])
            if H > 0.0:
                c.bstate[2 * k] -= c.eta0 / H * g
        else:
            c.bstate[2 * k] -= c.eta * g
    elif c.update == RDA:
        c.bstate[2 * k] += g
        c.bstate[2 * k + 1] += g * g
    else:
        c.bstate[2 * k + 1] += g * g
        c.bstate[2 * k] += g - (sqrt(c.bstate[2 * k + 1]) - c.bmemo[2 * k + 1]) / c.eta0 * c.bmemo[2 * k]


def encode_targets(const double[::1] y, classes):
    """The kernel's targets for labels ``y`` over the sorted numbers ``classes``:
    +1 for the larger of two classes and -1 for the smaller, else the class's
    index (0 to K - 1) for K >= 3; a float64 ``array.array``. Raises ValueError
    naming the labels that are not among the classes."""
    cdef Py_ssize_t i, n = y.shape[0], K = len(classes), lo, hi, mid, bad = -1
    cdef array.array sorted_classes = array.clone(DOUBLES, K, zero=False)
    cdef array.array out = array.clone(DOUBLES, n, zero=False)
    cdef double* c = sorted_classes.data.as_doubles
    cdef double* t = out.data.as_doubles
    cdef double v
    for i in range(K):
        c[i] = classes[i]
    with nogil:
        for i in range(n):
            v = y[i]
            if K == 2:
                if v == c[1]:
                    t[i] = 1.0
                elif v == c[0]:
                    t[i] = -1.0
                else:
                    bad = i
                    break
            else:
                lo, hi = 0, K - 1
                while lo < hi:
                    mid = (lo + hi) // 2
                    if c[mid] < v:
                        lo = mid + 1
                    else:
                        hi = mid
                if c[lo] != v:
                    bad = i
                    break
                t[i] = <double>lo
    if bad >= 0:
        known = {c[i] for i in range(K)}
        unknown = sorted({y[i] for i in range(bad, n)} - known)
        raise ValueError(f"y has labels {unknown!r} not in classes_ {classes!r}.")
    return out


def two_labels(const double[::1] y):
    """(lo, hi, targets) when the labels y hold exactly two distinct values, both
    integers below 2^53 in magnitude: the targets -1 for lo and +1 for hi (a float64
    ``array.array``), in one pass over y that GCC vectorizes (a label's test and its
    target without a branch: the labels are data, and their branches mispredicted),
    once a scan has met the second value. None otherwise (one class, three or more,
    NaN, fractions), for `fastprox._core`'s general path to encode or refuse."""
    cdef Py_ssize_t i, n = y.shape[0]
    cdef array.array out
    cdef double* t
    cdef double a, b, lo, hi, v, sign, other = 0.0
    if n == 0:
        return None
    a = b = y[0]
    for i in range(1, n):
        if y[i] != a:
            b = y[i]
            break
    lo, hi = min(a, b), max(a, b)
    if not (lo < hi and fabs(lo) < 2.0**53 and fabs(hi) < 2.0**53
            and lo == floor(lo) and hi == floor(hi)):
        return None
    out = array.clone(DOUBLES, n, zero=False)
    t = out.data.as_doubles
    with nogil:
        for i in range(n):
            v = y[i]
            sign = 1.0 if v == hi else -1.0
            t[i] = sign
            other = other if v == (hi if sign > 0.0 else lo) else 1.0     # (doubles vectorize)
    if other:
        return None
    return lo, hi, out


def all_finite(values):
    """Whether a float32 or float64 buffer holds no NaN or infinity: one pass and no
    temporary (x * 0 is 0 for every finite x, NaN otherwise)."""
    if memoryview(values).itemsize == 4:
        return _sum8[float](values, False) == 0.0
    return _sum8[double](values, False) == 0.0


def sum_squares(values):
    """The sum of the squares of a float32 or float64 buffer, in float64: what
    ``eta0='auto'`` and ``delta='auto'`` scale AdaGrad's steps by. The same values
    give the same figure, whatever their type."""
    if memoryview(values).itemsize == 4:
        return _sum8[float](values, True)
    return _sum8[double](values, True)


cdef double _sum8(const value_t[::1] v, bint squares) noexcept:
    """The sum of x * x (squares) or of x * 0 over v, in float64: eight partial sums
    in a fixed order (one sum would wait on each addition's latency)."""
    cdef double s[8]
    cdef double x
    cdef Py_ssize_t i, k, n = v.shape[0], body = n - n % 8
    with nogil:
        for k in range(8):
            s[k] = 0.0
        for i in range(0, body, 8):
            for k in range(8):
                x = v[i + k]
                s[k] += x * (x if squares else 0.0)
        for i in range(body, n):
            x = v[i]
            s[i - body] += x * (x if squares else 0.0)
        return ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]))
