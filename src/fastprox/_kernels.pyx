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
fields (stamps), then the K entries of feature j, each ``n_entry_fields`` doubles.
One CSR non-zero thus touches one contiguous stretch of memory. The fields are
read at the named offsets of ``_kernel/base/state.pxd`` (``_kernel/rules/berhu.pxd`` for Berhu's heap):

============  =========  ==========================  =====================================
update        schedule   row fields                  entry fields
============  =========  ==========================  =====================================
fobos         scalar     P stamp, Q stamp            FOBOS_W
                         (``Layout.shrink_stamp_at``,
                         ``threshold_stamp_at``)
fobos         adagrad    ROW_LAST_STEP (last)        ADAGRAD_W, ADAGRAD_G, ADAGRAD_ETA
fobos         normalized NORM_STAMP, NORM_SCALE      NORM_W, NORM_G, NORM_FACTOR
              (l1)       (``_kernel/rules/normalized.pxd``)
fobos         normalized NORM_SCALE (first)          NORM_W, NORM_G
              (no l1)
fobos/berhu   scalar     -                           BERHU_W, BERHU_PHASE, BERHU_STAMP
rda           invsqrt    -                           RDA_S
rda           adagrad    -                           RDA_S, RDA_G
ftrl          adagrad    -                           FTRL_Z, FTRL_N (, FTRL_ROOT:
                                                     ``Layout.ftrl_roots``)
fobos/groups  scalar     -                           FOBOS_W (group stamps: ``_kernel/groups/groups.pxd``)
rda/groups    both       -                           RDA_S (, RDA_G)
============  =========  ==========================  =====================================

The intercepts keep INTERCEPT_SUM (b, s_b or z_b) and INTERCEPT_SQUARES (G_b or
n_b) per output; ftrl's memos (w, sqrt(n)) are MEMO_W, MEMO_ROOT.

The score gradient q (one entry per output) comes from a binary loss per
output (one model, or K one-vs-rest models) or from a multinomial loss over
the K scores (softmax, Crammer-Singer); the update rules do not change.

Scalar FOBOS catches a feature up from two global cumulants (``_kernel/rules/fobos.pxd``),
AdaGrad in closed form (``_kernel/rules/adagrad.pxd``), the dual rules need no catch-up
(``_kernel/rules/dual.pxd``), the group penalties keep stamps per group (``_kernel/groups/groups.pxd``).

The state and the scratch space are the standard library's ``array.array``
buffers (a large state: ``_kernel/base/pages.ZeroPages``, whose pages are taken as
training touches them), so that training (the command line's ``train``) needs no
NumPy; reading the model (`coef`, `intercept`, pickling) returns NumPy arrays.
"""
from cpython cimport array
import array as pyarray
import copy as pycopy

from libc.math cimport signbit
from libc.string cimport memcpy
from libc.stdint cimport uint64_t
from cpython.buffer cimport PyObject_GetBuffer, PyBuffer_Release, PyBUF_C_CONTIGUOUS, PyBUF_FORMAT
from cpython.ref cimport PyObject, Py_XDECREF
from libc.stdlib cimport calloc, realloc, free
from fastprox._kernel.losses.losses cimport logsum_pop, LOG, dloss, fsum_add, fsum_value, registry_loss
from fastprox._numpy import np
from fastprox._registry import (LOSSES, PENALTIES, SCHEDULES, UPDATES, averaging as find_averaging, codes,
                                l1_share, rule as find_rule)
from fastprox._validation import (check_group_weights, check_intercept_scaling, check_invariant_loss, check_memory,
                                  check_offset,
                                  check_single_rows, check_step, check_structured,
                                  NonFiniteMargin)  # (re-exported)
from fastprox._kernel.base.types cimport (value_t, index_t, FOBOS, RDA, FTRL, CONSTANT, INVSQRT, INV, ADAGRAD, NORMALIZED,
                              NONE, L1, L2, ELASTICNET, BERHU, L1_L2, L1_LINF, SPARSE_GROUP,
                              SQUARED_GROUP)
from fastprox._kernel.base.state cimport (FTRL_ROOT, INTERCEPT_FIELDS, MEMO_FIELDS, AVG_FIELDS, AVG_SAVED_FIELDS, AVG_Q,
                                          AVG_P)
from fastprox._kernel.rules.average cimport (keeps_history, history_origin, history_prefix, average_count,
                                            unpenalized_now, unit_crossing, bisect_crossing)
from fastprox._kernel.base.buffers cimport zeros, zeros_int64, double_ptr, int64_ptr, on_touch
from fastprox._kernel.base.pages import ZeroPages
from fastprox._kernel.base.state cimport (Ctx, Params, Cursor, Arrays, Scratch, Groups, ensure_scratch, free_scratch,
                              wants_factor_memo, uses_lanes,
                              set_layout, FTRL_ROOTS_ENTRIES, PREFETCH_STEPS)
from fastprox._kernel.lanes.lanes cimport lanes_t, lanes_at, lanes_best, upper_in_use, LANES_COUNT
from fastprox._kernel.rules.fobos cimport stamp_origin, zero_origin
from fastprox._kernel.rules.dual cimport set_weight_params
from fastprox._kernel.groups.groups cimport (groups_replay, groups_materialize, group_of, cache_group_weights,
                                            ungrouped_weight)
from fastprox._kernel.rules.intercept cimport intercept_value, intercept_term
from fastprox._kernel.steps.step cimport step, current, averaged as averaged_entry
from fastprox._kernel.steps.rows cimport (row_step, tagged, step_t, loss_t, eta_t, GeneralStep, FobosL1Rows, FobosRows,
                                         AdagradL1Rows, AdagradRows, NormalizedRows, InvariantNormalizedRows,
                                         InvariantAdagradRows,
                                         RdaRows, RdaAdagradRows, FtrlRows, FtrlRootsRows, LogLoss, AnyLoss,
                                         ConstantEta, InvSqrtEta, InvEta)
from fastprox._kernel.steps.rows_average cimport (averaged_row_step, averaged_t, pass_step_t, AveragedFobosRows,
                                                  AveragedFobosL1Rows, AveragedUnpenalizedFobosRows,
                                                  AveragedAdagradL1Rows, AveragedAdagradRows,
                                                  AveragedNormalizedRows, AveragedInvariantNormalizedRows,
                                                  AveragedRdaAdagradRows, AveragedFtrlRows,
                                                  AveragedInvariantAdagradRows)
from fastprox._kernel.base.csr cimport (row_at, csr_kind, _check_rows, consecutive, prefetch_lines,
                            prefetch_rows, refuse_step, margins_csr, first_nonfinite)

cimport cython
from cython cimport longlong

cdef extern from "Python.h":
    # Without Cython's `except -1`: the pass saves its state before raising.
    int check_signals "PyErr_CheckSignals" ()
    # Without Cython's check of the result, for the same reason (`paused`).
    PyObject* call_no_args "PyObject_CallNoArgs" (object)

# The kernel's codes of the registry's names (the .pxd enums: tests/test_registry.py).
UPDATE_CODES, SCHEDULE_CODES = codes(UPDATES), codes(SCHEDULES)
PENALTY_CODES, LOSS_CODES = codes(PENALTIES), codes(LOSSES)
NO_LOSS = -1        # loss=None: a structured learner, its gradients given by its caller

cdef long long MIN_REBASE_PERIOD = 1 << 16
cdef long long PREFETCH_BYTES = 1 << 20
# Rows between two looks at Python's signals (Ctrl-C) during a call: the GIL taken
# for a moment, 16 times a second at the slowest rule's 1 us a row. Checking in the
# kernel keeps one call per pass, and so one check of X, however long the pass.
cdef Py_ssize_t SIGNAL_ROWS = 1 << 16
# The instruction set of the passes in lanes (`_kernel/lanes/lanes.h`): the widest this CPU runs
# but AVX-512 (slower than AVX2 wherever measured), chosen once here; each pass copies it
# into its context (`fit_csr`).
cdef const lanes_t* LANES = lanes_best()


cdef const lanes_t* chosen_lanes() noexcept nogil:
    """The passes in lanes a pass copies into its context: the import's choice, or
    `use_lanes`'. For the compiled callers of the structured steps (`_kernel/steps/structured.pxd`'s
    `structured_scratch`) and of the CRF's decoders (`structured._tagger`, `_decoders`)."""
    return LANES


def loss_derivative(loss, double p, double y, double epsilon):
    """d loss(p, y) / d p of a loss of the registry (label y = +-1 of a binary loss, a
    regression loss's target): the kernel's own derivative (`_kernel/losses/losses.pxd`),
    which scikit-learn's heuristic for the "optimal" rate's first step reads
    (`_core.optimal_steps`)."""
    return dloss(LOSS_CODES[loss], p, y, epsilon)


def crossings(const double[::1] Q not None, double aw, double Qs, double f, long long first, long long last):
    """The last entry in first .. last - 1 of a history of P = 1 whose Q is `Q` where an
    entry of magnitude aw stamped at Qs is positive under the threshold f (Q - Qs), given
    that first's is and last's is not, by `unit_crossing` and by the binary search
    (`bisect_crossing`): for the tests that find them the same entry
    (`_kernel/rules/average.pxd`'s `crossing_sum`)."""
    if not (0 <= first < last < len(Q)):
        raise ValueError(f"crossings: the range {first} .. {last} is not inside the history's "
                         f"{len(Q)} entries; give 0 <= first < last < len(Q).")
    cdef double[:, ::1] hist = np.zeros((len(Q), AVG_FIELDS))
    hist[:, AVG_Q] = Q
    hist[:, AVG_P] = 1.0
    return (unit_crossing(&hist[0, 0], aw, Qs, f, first, last),
            bisect_crossing(&hist[0, 0], aw, 1.0, Qs, f, first, last))


def held_out_loss(loss, const double[::1] scores not None, double target, double epsilon, bint multinomial):
    """The loss that `Learner.fit_rows` adds for a held-out row of finite margins
    ``scores`` (K float64s) and kernel ``target`` (`registry_loss`), for the tests that
    hold it to the registry's Python value (tests/support/reference.example_loss)."""
    cdef Py_ssize_t K = scores.shape[0]
    if K == 0:
        raise ValueError("held_out_loss takes a row's margins: scores is empty")
    cdef array.array partials = pyarray.array("d", bytes(8 * K))
    return registry_loss(LOSS_CODES[loss], multinomial, epsilon, &scores[0], K, target, partials.data.as_doubles)


def exact_sum(values):
    """The sum of finite floats ``values`` rounded once, by `fsum_add`'s partials (a
    softmax loss's sum of exponentials, `registry_loss`), for the tests that hold it to
    math.fsum bit for bit. Its partial sums must not overflow."""
    cdef array.array terms = pyarray.array("d", values)
    cdef array.array partials = pyarray.array("d", bytes(8 * len(terms)))
    cdef Py_ssize_t n = 0, i
    for i in range(len(terms)):
        n = fsum_add(partials.data.as_doubles, n, terms.data.as_doubles[i])
    return fsum_value(partials.data.as_doubles, n)


def lanes():
    """The instruction set the normalized and AdaGrad rows (and the structured rows' rda +
    AdaGrad entries) run in ("portable", "sse2",
    "avx2" or "avx512"): chosen at import, the widest this CPU runs but AVX-512, which
    measured slower than AVX2 on every CPU measured, AMD's and Intel's
    (`_kernel/lanes/lanes.h`); `use_lanes` takes it. The model's bits do not depend on it."""
    return LANES.name.decode()


def upper_state_in_use():
    """Whether the upper halves of the vector registers are in use now (None where the CPU
    cannot tell): the passes in lanes leave them zeroed, since on Intel's cores the SSE
    code that runs after them would wait on them (tests/test_pairs.py)."""
    cdef int used = upper_in_use()
    return None if used < 0 else bool(used)


def lanes_available():
    """The instruction sets this build has and this CPU runs, narrowest first."""
    return [lanes_at(i).name.decode() for i in range(LANES_COUNT) if lanes_at(i) != NULL]


def use_lanes(name):
    """Run the next passes in the instruction set `name` (one of `lanes_available()`),
    for the tests that compare the sets' bits and the benchmarks that time them;
    returns the set used before."""
    global LANES
    cdef int i
    before = lanes()
    for i in range(LANES_COUNT):
        if lanes_at(i) != NULL and lanes_at(i).name.decode() == name:
            LANES = lanes_at(i)
            return before
    raise ValueError(f"lanes {name!r} are not available here; use one of {lanes_available()}.")

# The arrays a pickle or a model file keeps (the rest is scratch space), their types
# and, for the two-dimensional ones, their shapes (`saved_arrays`).
SAVED = ("state", "bstate", "heap_items", "heap_keys", "heap_pos", "gstamp", "gnorm")
SAVED_INT64 = ("heap_items", "heap_pos")


cdef struct Stream:
    # A stream's pass (`Learner.fit_rows`'s held, scores, each_step, sums): `on` False for
    # any other call, which goes straight to `pass_kernel`.
    bint on, each_step
    Py_ssize_t held, period         # the next held-out row (-1: none), the period
    Py_ssize_t scored               # held-out rows scored so far
    double* scores                  # margins (NULL: none asked): every row's, or the held-out rows' in turn
    double* sums                    # the 4 running sums (NULL: none kept)
    double* held_sums               # the held-out rows' 4 running sums (NULL: their losses not taken)
    double* partials                # K doubles: a softmax loss's exact sum (`registry_loss`)


# What fit_rows passes for an order or weights not given: the kernel then visits
# rows 0..n-1 and weighs them 1 without arrays saying so (filling two arrays of a
# 50,000-row fit cost more than a tenth of a millisecond).
cdef array.array NO_WEIGHTS = pyarray.array("d"), NO_ORDER = pyarray.array("q")


@cython.final
cdef class Learner:
    """State and step loop of K lazily-updated linear models (one per output).

    Parameters are the contract's: ``update``, ``schedule``, ``penalty`` and
    ``loss`` are names from the module-level tables; ``ovr`` means K binary
    one-vs-rest models over class indices given as float labels 0..K-1.
    ``groups`` maps features to group ids (None: each feature's row is a group)
    and ``group_weights`` gives each group's penalty weight d_G (None: all 1).

    ``average`` (a >= 1; 0: off) keeps the averaged iterate, the mean of the
    iterates after steps a, a + 1, ..., t (docs/contract.md, "Averaged iterate"):
    `averaged_coef`, `averaged_intercept`. The last iterate stays what training
    continues from.

    ``loss=None`` makes a structured learner: its steps take their gradients from
    the caller (`_structured`), one example per step, and it may carry
    ``n_unpenalized`` further unpenalized entries beside the intercepts (a
    sequence model's transitions, starts and stops), which follow the rule's
    intercept update and are saved with the model. `fit_rows` needs a loss.
    """
    def __init__(self, long long n_features, int n_outputs, update, schedule, penalty, loss,
                 double alpha=0.0, double l1_ratio=0.15, double eta0=0.1, double delta=1e-8,
                 double rda_rho=0.0, double berhu_gamma=1.0, double epsilon=0.1,
                 bint fit_intercept=True, bint ovr=False, bint multinomial=False, groups=None,
                 group_weights=None, step="gradient", long long n_unpenalized=0, long long average=0,
                 double t0=0.0, double intercept_scaling=1.0):
        if n_features < 0 or n_outputs < 1 or n_unpenalized < 0:
            raise ValueError(f"a model needs n_features >= 0, n_outputs >= 1 and n_unpenalized >= 0; "
                             f"got {n_features}, {n_outputs} and {n_unpenalized}.")
        if average < 0:
            raise ValueError(f"average must be 0 (off) or the first step averaged (>= 1); got {average}.")
        if n_unpenalized and loss is not None:
            raise ValueError("unpenalized entries beside the intercepts belong to structured learners "
                             "(loss=None), whose caller gives their gradients.")
        self.n_features, self.n_outputs, self.n_unpenalized = n_features, n_outputs, n_unpenalized
        self.update, self.schedule, self.penalty, self.loss = update, schedule, penalty, loss
        self.step = step
        self.alpha, self.l1_ratio, self.eta0, self.delta = alpha, l1_ratio, eta0, delta
        self.rda_rho, self.berhu_gamma, self.epsilon = rda_rho, berhu_gamma, epsilon
        self.t0, self.intercept_scaling = t0, intercept_scaling
        self.fit_intercept, self.ovr, self.multinomial = fit_intercept, ovr, multinomial
        # (a copy of its own: a pickle's ids may be a read-only map of its file, joblib's mmap_mode="r";
        # asarray's view first, whose dtype is NumPy's int64 itself, not a pickle's equal copy of it: the
        # learner's own pickle then shares it with its other int64 arrays, as its round trip's does)
        self.groups = None if groups is None else np.asarray(groups, dtype=np.int64).copy(order="C")
        c = &self.c
        c.params.update, c.params.schedule = UPDATE_CODES[update], SCHEDULE_CODES[schedule]
        c.params.penalty, c.params.loss = PENALTY_CODES[penalty], NO_LOSS if loss is None else LOSS_CODES[loss]
        c.params.n_outputs, c.params.n_features = n_outputs, n_features
        c.params.n_unpenalized = n_unpenalized
        c.params.ovr, c.params.fit_intercept, c.params.multinomial = ovr, fit_intercept, multinomial
        c.params.eta0, c.params.delta, c.params.t0 = eta0, delta, t0
        c.params.intercept_scaling = intercept_scaling
        c.params.berhu_gamma, c.params.epsilon = berhu_gamma, epsilon
        c.params.inv_eta0 = 1.0 / eta0 if eta0 > 0.0 else 0.0
        c.params.rda_rho = rda_rho if c.params.update == RDA else 0.0
        rule = find_averaging(update, schedule, penalty) if average else find_rule(update, schedule, penalty)
        self.average = c.params.average_from = average
        check_offset(t0, update, schedule, lowest=-1.0)
        check_intercept_scaling(intercept_scaling)
        if loss is None and intercept_scaling != 1.0:
            raise ValueError("intercept_scaling scales a flat model's intercept feature; a structured learner's "
                             "intercepts and further entries are unscaled: use intercept_scaling=1.0.")
        check_step(step, update, schedule, 1)
        check_invariant_loss(step, loss)
        check_single_rows(step, schedule, multinomial)
        if loss is None:
            check_structured(step, schedule)
        c.params.invariant = step == "invariant"
        # A structured learner's entries of a feature share their skipped steps, so one
        # powering serves its K entries; a flat row's entry would pay it alone (slower than
        # libm's exp and log1p there): the form is the learner's, fast rows and general step alike.
        c.params.l2_powering = loss is None
        family = PENALTIES[penalty].family
        c.params.l1_share = l1_share(penalty, l1_ratio)
        c.params.grouped = family == "group"
        if c.params.grouped and rda_rho != 0 and c.params.update == RDA:
            raise ValueError(f"penalty={penalty!r} has no closed form with rda_rho's extra l1 term; "
                             "use rda_rho=0 (penalty='sparse_group' adds l1 within groups), or "
                             "update='fobos'.")
        c.params.alpha_pen = 0.0 if c.params.penalty == NONE else alpha
        if family == "separable" and c.params.alpha_pen == 0.0:
            c.params.l1_share = 1.0     # no penalty: every prox is soft(v, 0), v itself, without l2's division
        c.params.berhu_heap = family == "berhu" and c.params.schedule != ADAGRAD
        c.params.plain_fobos = n_outputs == 1 and rule.fast_rows == "fobos"
        c.params.plain_adagrad = n_outputs == 1 and rule.fast_rows == "adagrad"
        c.params.plain_dual = n_outputs == 1 and rule.fast_rows == "dual"
        c.params.plain_normalized = n_outputs == 1 and rule.fast_rows == "normalized"
        c.params.structured_rows = True
        # Weighted rows take the general step: a weighted variant of the dedicated one
        # (a fused type) kept its loop but made GCC stop inlining prox_l1_linf into it,
        # +11% instructions on the unweighted l1_linf pass (callgrind).
        c.params.plain_rows = groups is None and group_weights is None and rule.fast_rows == "rows"
        if c.params.invariant:      # the fast rows take the gradient step only (but normalized's, AdaGrad's)
            c.params.plain_fobos = c.params.plain_rows = False
        if average:     # the averaged rows (`_kernel/steps/rows_average.pxd`) but where A lies among the
            c.params.plain_rows = False     # fields a row kernel reads: the normalized l1 rows
            c.params.plain_normalized = c.params.plain_normalized and c.params.alpha_pen == 0.0
        set_layout(c)
        c.params.rebase_period = max(<long long>n_features * n_outputs, MIN_REBASE_PERIOD)
        self._size_history()
        c.cursor.t = c.cursor.n_ops = c.cursor.since_rebase = 0
        c.cursor.shrink_product, c.cursor.threshold_sum, c.cursor.norm_sum = 1.0, 0.0, 0.0
        c.cursor.avg_prefix = c.cursor.avg_prefix_lo = 0.0
        c.heap.gamma = berhu_gamma
        c.heap.size = 0
        c.groups.n_groups = 0
        if c.params.grouped:
            c.groups.n_groups = (n_features if groups is None
                                 else int(max(-1, self.groups.max(initial=-1)) + 1))
        self.group_weights = check_group_weights(group_weights, penalty, c.groups.n_groups)
        self.capacity = n_features
        self._attach(self._new_arrays(n_features))

    cdef dict _new_arrays(self, long long capacity):
        """The saved arrays of a model of `capacity` features none of which was ever
        touched (weights 0, stamps at the cumulants' origin, out of Berhu's heap),
        refused before allocation if they would not fit in memory."""
        cdef Ctx* c = &self.c
        cdef long long j, K = self.n_outputs
        cdef long long n_heap = capacity * K if c.params.berhu_heap else 0
        cdef long long n_groups = (capacity if c.params.grouped and self.groups is None
                                   else c.groups.n_groups)
        # the state, Berhu's heap and the grouped weights' cache, in bytes, in Python's
        # integers (no overflow), before anything is allocated
        check_memory(8 * (int(capacity) * (c.layout.width
                                           + K * (3 * c.params.berhu_heap + c.params.grouped))
                          + 8 * (K + self.n_unpenalized) + 8 * int(n_groups)),  # per output and
                                                            # unpenalized entry: bstate, p, q, ...; per group
                     f"{capacity} features x {K} output(s)"
                     + (f" in {n_groups} groups (the largest id + 1)" if c.params.grouped and self.groups is not None
                        else ""))
        cdef array.array heap_pos = zeros_int64(n_heap), stamped
        if zero_origin(c) and on_touch(capacity * c.layout.width):
            state = ZeroPages(capacity * c.layout.width)    # (its rows are at the origin as they are)
        else:
            state = stamped = zeros(capacity * c.layout.width)
            if not zero_origin(c):  # (a second pass over a state of zeros costs as much as the first)
                for j in range(capacity):
                    stamp_origin(c, stamped.data.as_doubles + j * c.layout.width)
        for j in range(n_heap):
            heap_pos.data.as_longlongs[j] = -1
        return {"state": state, "bstate": zeros((K + self.n_unpenalized) * INTERCEPT_FIELDS),
                "bavg": zeros((K + self.n_unpenalized) if c.params.average_from else 0),
                "heap_items": zeros_int64(n_heap),
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
                if name in SAVED or name == "bavg":
                    memoryview(arrays[name]).cast("B")[:len(a) * a.itemsize] = memoryview(a).cast("B")
            self._attach(arrays)
        self.n_features = c.params.n_features = n_features
        if c.params.grouped:
            c.groups.n_groups = n_features
        c.params.rebase_period = max(n_features * c.params.n_outputs, MIN_REBASE_PERIOD)
        self._size_history()
        if c.layout.ftrl_roots and n_features * c.params.n_outputs > FTRL_ROOTS_ENTRIES:
            self._drop_ftrl_roots()
        free_scratch(c)             # batches' scratch is sized by n_features
        self._coef = self._avg_coef = self._margin_W = None

    cdef _size_history(self):
        """Make the averaged iterate's history of the scalar-FOBOS cumulants hold a
        rebase period (calloc and realloc: the pages of steps never reached stay
        unmapped, so its memory is that of the steps since the rebase)."""
        cdef Ctx* c = &self.c
        cdef long long need = (c.params.rebase_period + 1) * AVG_FIELDS if keeps_history(c) else 0
        cdef void* grown
        if need <= self.avg_history_size:
            return
        check_memory(8 * need, "the averaged iterate's history of a rebase period")
        grown = realloc(c.arrays.avg_history, need * sizeof(double))
        if grown == NULL:
            raise MemoryError()
        c.arrays.avg_history = <double*>grown
        if self.avg_history_size == 0:
            history_origin(c)
        self.avg_history_size = need

    cdef _drop_ftrl_roots(self):
        """FTRL's entries without their sqrt(n) memo (kept only for models of up to
        FTRL_ROOTS_ENTRIES weights): (z, n, sqrt n) -> (z, n), the layout a learner of
        this width is built with, which pickles and model files rebuild."""
        cdef Ctx* c = &self.c
        old = np.frombuffer(self.arrays["state"], dtype=np.float64)
        old = old.reshape(self.capacity, c.params.n_outputs, FTRL_ROOT + 1)
        set_layout(c)               # (this width's: no roots)
        arrays = {name: self.arrays[name] for name in SAVED}
        arrays["state"] = np.ascontiguousarray(old[:, :, :FTRL_ROOT]).reshape(-1)
        self._attach(arrays)

    cdef _attach(self, dict saved):
        """Point the context at the saved arrays (fresh buffers, or NumPy arrays from a
        pickle or a model file) and at fresh scratch space."""
        arrays = {name: a if isinstance(a, (array.array, ZeroPages)) else
                  _pages_of(a) or np.require(a, requirements=["C", "W"]).reshape(-1) for name, a in saved.items()}
        if "bavg" not in arrays:    # (a pickle or a model file without the averaged sums: none yet)
            arrays["bavg"] = zeros((self.n_outputs + self.n_unpenalized) if self.c.params.average_from else 0)
        n_groups = (self.capacity if self.c.params.grouped and self.groups is None
                    else self.c.groups.n_groups)
        n_heap = self.capacity * self.n_outputs if self.c.params.berhu_heap else 0
        sizes = {"state": self.capacity * self.c.layout.width,
                 "bstate": (self.n_outputs + self.n_unpenalized) * INTERCEPT_FIELDS,
                 "bavg": (self.n_outputs + self.n_unpenalized) if self.c.params.average_from else 0,
                 "heap_items": n_heap,
                 "heap_keys": n_heap, "heap_pos": n_heap, "gstamp": n_groups, "gnorm": n_groups}
        for name, size in sizes.items():    # the loops trust these sizes
            if len(arrays[name]) != size:
                raise ValueError(f"the learner's {name} holds {len(arrays[name])} values where this "
                                 f"fastprox keeps {size}: a pickle from another version? Between "
                                 f"versions, use fastprox.save_model and load_model.")
        block = self.n_outputs
        if self.groups is None:
            member_start, members = zeros_int64(n_groups + 1), zeros_int64(0)
        else:
            members = np.argsort(self.groups, kind="stable")
            members = members[self.groups[members] >= 0]
            sizes = np.bincount(self.groups[members], minlength=n_groups)
            block *= int(sizes.max(initial=1))
            member_start = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
            members = members.astype(np.int64)
        # the scratch and the group arrays, named as the context's fields (not saved)
        arrays.update(member_start=member_start, members=members, feature_group=self.groups,
                      group_weight=self.group_weights,
                      group_norm_now=zeros(n_groups if self.c.params.penalty == SQUARED_GROUP else 0),
                      group_mark=zeros_int64(n_groups), group_touched=zeros_int64(n_groups),
                      block=zeros(block), block_beta=zeros(block),
                      work=zeros(max(3 * block, (1 if self.group_weights is None else 3) * n_groups, 1)),
                      group_weights_now=zeros(self.capacity * self.n_outputs
                                              if self.c.params.grouped else 0),
                      intercept_memo=zeros((self.n_outputs + self.n_unpenalized) * MEMO_FIELDS),
                      scores=zeros(self.n_outputs),
                      score_grads=zeros(self.n_outputs), intercept_grad=zeros(self.n_outputs),
                      sigma=zeros(self.n_outputs), exp_margins=zeros(self.n_outputs))
        free_scratch(&self.c)
        self.arrays = arrays
        cdef Arrays* out = &self.c.arrays
        out.state, out.intercepts = double_ptr(arrays["state"]), double_ptr(arrays["bstate"])
        out.scores, out.score_grads = double_ptr(arrays["scores"]), double_ptr(arrays["score_grads"])
        out.intercept_grad = double_ptr(arrays["intercept_grad"])
        out.sigma, out.exp_margins = double_ptr(arrays["sigma"]), double_ptr(arrays["exp_margins"])
        out.avg_intercepts = double_ptr(arrays["bavg"])
        self.c.heap.items, self.c.heap.pos = int64_ptr(arrays["heap_items"]), int64_ptr(arrays["heap_pos"])
        self.c.heap.keys = double_ptr(arrays["heap_keys"])
        cdef Groups* groups = &self.c.groups
        groups.feature_group = int64_ptr(arrays["feature_group"]) if self.groups is not None else NULL
        groups.member_start = int64_ptr(arrays["member_start"])
        groups.members = int64_ptr(arrays["members"])
        groups.stamp, groups.norm = double_ptr(arrays["gstamp"]), double_ptr(arrays["gnorm"])
        groups.norm_now = double_ptr(arrays["group_norm_now"])
        groups.weight = double_ptr(arrays["group_weight"]) if self.group_weights is not None else NULL
        groups.mark, groups.touched = int64_ptr(arrays["group_mark"]), int64_ptr(arrays["group_touched"])
        groups.n_touched = 0
        cdef Scratch* scratch = &self.c.scratch
        scratch.block, scratch.work = double_ptr(arrays["block"]), double_ptr(arrays["work"])
        scratch.group_weights_now = double_ptr(arrays["group_weights_now"])
        scratch.block_beta = double_ptr(arrays["block_beta"])
        scratch.intercept_memo = double_ptr(arrays["intercept_memo"])
        self.c.cursor.deferred_logs.m = 1.0
        self.c.cursor.deferred_logs.e = self.c.cursor.deferred_logs.n = 0
        self._coef = self._avg_coef = self._margin_W = None

    def __dealloc__(self):
        free_scratch(&self.c)
        free(self.c.arrays.avg_history)

    # ------------------------------------------------------------------ pickling
    def __reduce__(self):
        return (Learner, self.init_args(), self.__getstate__())

    def __copy__(self):
        """A learner of arrays of its own, equal to this one as the pickle's round trip
        (`__reduce__`) makes it, without NumPy: the saved arrays copied (a state taken
        page by page as its changed rows only, `changed_state`), the counters. ``train
        --passes`` copies the holdout's best pass so, and imports no NumPy otherwise.
        An averaged learner's sums go through the pickle's state."""
        cdef Learner copy = Learner(*self.init_args())
        if self.c.params.average_from:
            copy.__setstate__(self.__getstate__())
            return copy
        lazy = self.state_on_touch
        for name, (a, _) in self.saved_arrays().items():
            if not (lazy and name == "state"):
                memoryview(copy.arrays[name]).cast("B")[:a.nbytes] = a.cast("B")
        if lazy:
            rows, values = self.changed_state()
            put_state_rows(copy, rows, values)
        copy._set_counters(self.scalars())
        return copy

    def init_args(self):
        """The arguments that construct a learner of this one's width and parameters
        (its state aside, never touched): what a pickle keeps beside the state, without
        copying the state (fastprox.dask builds copies, shards and joins of a model
        from them and the state's rows)."""
        args = (self.n_features, self.n_outputs, self.update, self.schedule, self.penalty,
                self.loss, self.alpha, self.l1_ratio, self.eta0, self.delta, self.rda_rho,
                self.berhu_gamma, self.epsilon, self.fit_intercept, self.ovr, self.multinomial,
                self.groups, self.group_weights, self.step)
        optional = ((self.n_unpenalized, 0), (self.average, 0), (self.t0, 0.0), (self.intercept_scaling, 1.0))
        # up to the last that is not its default (a flat learner's pickle is as it always was)
        kept = max([i + 1 for i, (value, default) in enumerate(optional) if value != default], default=0)
        return args + tuple(value for value, _ in optional[:kept])

    def __getstate__(self):
        """The arrays, copied, with the counters; a state taken page by page
        (`state_on_touch`) as its changed rows only (``state_rows``, ``state_values``:
        `changed_state`), as a model file keeps it: a copy or pickle of a 2^28-feature
        model trained on a few thousand features is that size, not the state's GiB."""
        lazy = self.state_on_touch
        state = {"arrays": {name: np.frombuffer(a, dtype=np.int64 if name in SAVED_INT64 else np.float64)
                            .reshape(shape).copy() for name, (a, shape) in self.saved_arrays().items()
                            if not (lazy and name == "state")},
                 **self.scalars(), **self.average_state()}
        if lazy:
            rows, values = self.changed_state()
            state["state_rows"] = np.frombuffer(rows, dtype=np.int64)
            state["state_values"] = np.frombuffer(values, dtype=np.float64)
        return state

    @property
    def rebase_period(self):
        """The most steps between two rebases of the scalar-FOBOS cumulants."""
        return self.c.params.rebase_period

    @property
    def avg_prefix(self):
        """Whether the averaged iterate keeps its rows' stamps as prefix sums of P (l2's
        rows: `Layout.avg_prefix`) where it would keep the cumulants' history."""
        return self.c.layout.avg_prefix

    @property
    def keeps_history(self):
        """Whether the averaged iterate keeps the scalar-FOBOS cumulants' history."""
        return keeps_history(&self.c)

    def average_state(self):
        """What continuing the averaged iterate needs beyond the state rows (empty when
        it is off): the unpenalized entries' sums ("bavg") and the scalar-FOBOS
        cumulants' history since the rebase ("avg_history", (since_rebase + 1, 4): Q, P and
        the Fenwick nodes; the prefix sums are rebuilt from them)."""
        cdef Ctx* c = &self.c
        cdef long long i, f, n = c.cursor.since_rebase + 1 if keeps_history(c) else 0
        if not c.params.average_from:
            return {}
        history = np.empty((n, AVG_SAVED_FIELDS))
        for i in range(n):
            for f in range(AVG_SAVED_FIELDS):
                history[i, f] = c.arrays.avg_history[AVG_FIELDS * i + f]
        return {"bavg": np.frombuffer(self.arrays["bavg"], dtype=np.float64).copy(), "avg_history": history}

    def _set_average_state(self, bavg, history):
        """Restore `average_state`'s arrays (checked: sizes that this learner keeps), and
        the history's prefix sums from its P and Q, as the steps summed them."""
        cdef Ctx* c = &self.c
        cdef long long i, f, n
        cdef const double[::1] h = np.ascontiguousarray(history, dtype=np.float64).reshape(-1)
        bavg = np.ascontiguousarray(bavg, dtype=np.float64).reshape(-1)
        n = (c.cursor.since_rebase + 1) if keeps_history(c) else 0
        if (len(bavg) != self.n_outputs + self.n_unpenalized or h.shape[0] != n * AVG_SAVED_FIELDS
                or n * AVG_FIELDS > self.avg_history_size):
            raise ValueError(f"the averaged iterate's sums hold {len(bavg)} and {h.shape[0]} values where "
                             f"this learner keeps {self.n_outputs + self.n_unpenalized} and "
                             f"{n * AVG_SAVED_FIELDS}.")
        memoryview(self.arrays["bavg"]).cast("B")[:] = memoryview(bavg).cast("B")
        if n:
            history_origin(c)
        for i in range(n):
            for f in range(AVG_SAVED_FIELDS):
                c.arrays.avg_history[AVG_FIELDS * i + f] = h[AVG_SAVED_FIELDS * i + f]
            if i:
                history_prefix(c.arrays.avg_history, i)

    @property
    def state_on_touch(self):
        """Whether the state's memory is taken page by page as training first touches
        its features (`pages.ZeroPages`: a large state whose untouched rows are zeros),
        rather than all at once."""
        return isinstance(self.arrays["state"], ZeroPages)

    def saved_arrays(self):
        """What a pickle or a model file keeps of the state, without copies and
        without NumPy: name -> (flat buffer, shape). The buffers are int64 for
        SAVED_INT64, float64 for the others."""
        cdef long long d = self.n_features, K = self.n_outputs
        sizes = {"state": (d, self.c.layout.width), "bstate": (K + self.n_unpenalized, INTERCEPT_FIELDS),
                 "gstamp": (self.c.groups.n_groups,),
                 "gnorm": (self.c.groups.n_groups,)}
        heap = (d * K if self.c.params.berhu_heap else 0,)
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
        cdef Cursor* cursor = &self.c.cursor
        return {"t": cursor.t, "n_ops": cursor.n_ops, "since_rebase": cursor.since_rebase,
                "P": cursor.shrink_product, "Q": cursor.threshold_sum, "N": cursor.norm_sum,
                "SP": cursor.avg_prefix, "SP_lo": cursor.avg_prefix_lo, "heap_size": self.c.heap.size}

    def changed_state(self):
        """The rows of the state (features) that differ, bit for bit, from the row of
        a feature never touched: their indices (int64, increasing) and their values
        (float64, row after row). A model file stores only these."""
        cdef const double[::1] a = self.arrays["state"]
        cdef Py_ssize_t j, k, width = self.c.layout.width, r = 0
        # (rows written only as found: no pass zeroing, and faulting in, one per feature)
        cdef array.array rows = array.clone(array.array("q"), self.n_features, zero=False), values
        cdef array.array initial = zeros(width)
        cdef const uint64_t* untouched = <const uint64_t*>initial.data.as_doubles
        cdef const uint64_t* row
        stamp_origin(&self.c, initial.data.as_doubles)
        for j in range(self.n_features if width else 0):
            row = <const uint64_t*>&a[j * width]
            for k in range(width):      # (bit for bit, a word at a time: memcmp's call per row cost more)
                if row[k] != untouched[k]:
                    rows.data.as_longlongs[r] = j
                    r += 1
                    break
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
        if c.params.grouped:
            return int(np.count_nonzero(self.coef()))
        set_weight_params(&c)
        for j in range(c.params.n_features):
            for k in range(c.params.n_outputs):
                count += current(&c, j, k) != 0.0
        return count

    def __setstate__(self, d):
        if "SP" not in d:           # (a pickle from before the prefix sums of P)
            from fastprox.model_io.upgrades import upgraded_pickle
            d = upgraded_pickle(self, d)
        arrays = d["arrays"]
        if "state_rows" in d:       # (`__getstate__`'s changed rows, into this learner's own fresh state)
            arrays = {**arrays, "state": self.arrays["state"]}
            put_state_rows(self, d["state_rows"], d["state_values"])
        self._attach(arrays)
        self._set_counters(d)
        if self.c.params.average_from:
            self._set_average_state(d["bavg"], d["avg_history"])

    def _set_counters(self, d):
        """Set the counters and cumulants of `scalars` (a pickle's state holds them)."""
        cdef Cursor* cursor = &self.c.cursor
        cursor.t, cursor.n_ops, cursor.since_rebase = d["t"], d["n_ops"], d["since_rebase"]
        cursor.eta_next_t = 0
        cursor.shrink_product, cursor.threshold_sum, self.c.heap.size = d["P"], d["Q"], d["heap_size"]
        cursor.norm_sum = d["N"]
        cursor.avg_prefix, cursor.avg_prefix_lo = d["SP"], d["SP_lo"]

    @property
    def t(self):
        """Steps completed."""
        return self.c.cursor.t

    @property
    def fast_rows(self):
        """Which hand-fused row kernel serves this rule's single rows (None: the
        general `step`): "fobos" (`plain_fobos_step`), "adagrad" (`plain_adagrad_step`),
        "normalized" (`plain_normalized_step`), "dual" (`plain_dual_step`) or "rows"
        (`plain_rows_step`)."""
        c = &self.c
        for name, on in (("fobos", c.params.plain_fobos), ("adagrad", c.params.plain_adagrad),
                         ("normalized", c.params.plain_normalized), ("dual", c.params.plain_dual),
                         ("rows", c.params.plain_rows)):
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
        if self.c.params.penalty != SPARSE_GROUP or self.c.params.update != FOBOS:
            return self
        copy = pycopy.copy(self)        # through __reduce__: arrays of its own
        with nogil:
            groups_replay(&copy.c)
        return copy

    def _use_general_step(self):
        """Route every row through the general `step`, and a structured learner's
        rows through the general structured step (private: the tests that prove each
        fast row kernel and loop computes the general path's bits)."""
        cdef Params* params = &self.c.params
        params.plain_fobos = params.plain_adagrad = params.plain_dual = params.plain_rows = False
        params.plain_normalized = params.structured_rows = False

    @property
    def n_ops(self):
        """Entries visited so far (catch-up, margin, update, rebase): the cost counter."""
        return self.c.cursor.n_ops

    @property
    def history_walks(self):
        """The averaged catch-ups since this learner was built or restored whose skipped
        sum took the history's Fenwick walk, where the prefix sums' difference would lose
        it (`average.range_sums`): the tests' witness of the fallback."""
        return self.c.cursor.history_walks

    @property
    def since_rebase(self):
        """Steps since the scalar-FOBOS cumulants were last rebased."""
        return self.c.cursor.since_rebase

    # ------------------------------------------------------------------ reading
    def coef(self, bint averaged=False):
        """The exact eager model w_{T+1} as a read-only (K, d) array, materialized once
        per step count; the state is left untouched. ``averaged``: the averaged
        iterate's weights instead, the mean of the iterates after steps a .. t
        (`average`; the last iterate before step a). An array of LAZY_BYTES or more
        (`buffers.on_touch`) is calloc'd and its zeros left unwritten: a model of 2^27
        hashed features that training touched a few thousand of reads as a few pages
        (the -0.0 weights of RDA's and FTRL's untouched features are written, for their
        bits; `coef_zeros_unsigned` leaves them out)."""
        cdef Ctx c = self.c
        if averaged and not c.params.average_from:
            raise ValueError("this learner keeps no averaged iterate; build it with average >= 1.")
        if averaged and self._avg_coef_t == c.cursor.t and self._avg_coef is not None:
            return self._avg_coef
        if not averaged and self._coef_t == c.cursor.t and self._coef is not None:
            return self._coef
        result = self._materialize(averaged, True)
        if averaged:
            self._avg_coef, self._avg_coef_t = result, c.cursor.t
        else:
            self._coef, self._coef_t = result, c.cursor.t
        return result

    def coef_zeros_unsigned(self, bint averaged=False):
        """`coef`'s weights for reads that need only their values and never a zero's
        sign (`margins`, the readable model's non-zero weights): a calloc'd array
        (`buffers.on_touch`) leaves the -0.0 weights unwritten too (+0.0 then), so that
        RDA's and FTRL's untouched features, -0.0 each, take no memory. The margins'
        bits are the same: their sums start at +0.0, which adding a signed zero leaves
        +0.0 or the sum it was, and a zero weight times a NaN or an infinity is NaN
        either way. Kept for the step count it was made at, as `coef` is."""
        cdef Ctx c = self.c
        if not on_touch(c.params.n_outputs * c.params.n_features) or c.params.grouped:
            return self.coef(averaged)
        if self._margin_W is not None and self._margin_W_t == c.cursor.t and self._margin_W_averaged == averaged:
            return self._margin_W
        self._margin_W = None          # (its pages given back before the next are taken)
        self._margin_W = self._materialize(averaged, False)
        self._margin_W_t, self._margin_W_averaged = c.cursor.t, averaged
        return self._margin_W

    cdef object _materialize(self, bint averaged, bint signed_zeros):
        """`coef`'s array, made (no cache); ``signed_zeros`` False leaves the -0.0
        weights of a calloc'd array unwritten (`coef_zeros_unsigned`)."""
        cdef double[:, ::1] out
        cdef Py_ssize_t j
        cdef int k
        cdef double v
        cdef Ctx c = self.c
        cdef array.array block, work, block_beta
        cdef bint lazy = on_touch(c.params.n_outputs * c.params.n_features)
        out = (np.frombuffer(ZeroPages(c.params.n_outputs * c.params.n_features)).reshape(
                   c.params.n_outputs, c.params.n_features) if lazy
               else np.zeros((c.params.n_outputs, c.params.n_features)))
        if c.params.grouped:       # scratch of its own: a read never writes a training call's
            block, block_beta = zeros(len(self.arrays["block"])), zeros(len(self.arrays["block"]))
            work = zeros(len(self.arrays["work"]))
            c.scratch.block, c.scratch.block_beta = block.data.as_doubles, block_beta.data.as_doubles
            c.scratch.work = work.data.as_doubles
        with nogil:
            set_weight_params(&c)
            if c.params.grouped:
                groups_materialize(&c, &out[0, 0])
            else:
                for j in range(c.params.n_features):
                    for k in range(c.params.n_outputs):
                        v = averaged_entry(&c, j, k) if averaged else current(&c, j, k)
                        if not lazy or v != 0.0 or (signed_zeros and signbit(v)):    # (-0.0: its bits)
                            out[k, j] = v
        result = np.asarray(out)
        result.flags.writeable = False
        return result

    def coef_at(self, const long long[::1] columns not None, bint averaged=False):
        """`coef`'s columns ``columns`` (each in [0, n_features)) as a new (K, m) array,
        bit for bit, reading only those features' entries where `coef` reads all d:
        what a few rows' margins need (`margins`' ``weights``), such as the held-out
        rows `fit` scores after each pass. A grouped model's come from `coef`."""
        cdef Ctx c = self.c
        cdef Py_ssize_t i, m = columns.shape[0]
        cdef int k
        cdef double[:, ::1] out
        if averaged and not c.params.average_from:
            raise ValueError("this learner keeps no averaged iterate; build it with average >= 1.")
        for i in range(m):
            if not 0 <= columns[i] < c.params.n_features:
                raise ValueError(f"column {columns[i]} lies outside the model's [0, {c.params.n_features}).")
        if c.params.grouped:
            return np.ascontiguousarray(self.coef(averaged)[:, np.asarray(columns)])
        result = np.zeros((c.params.n_outputs, m))
        out = result
        with nogil:
            set_weight_params(&c)
            for i in range(m):
                for k in range(c.params.n_outputs):
                    out[k, i] = averaged_entry(&c, columns[i], k) if averaged else current(&c, columns[i], k)
        return result

    def averaged_coef(self):
        """The averaged iterate's weights (K, d), read-only: ``coef(averaged=True)``."""
        return self.coef(averaged=True)

    def averaged_intercept(self):
        """The averaged iterate's intercepts (K,) (`averaged_coef`): ``intercept_scaling``
        times the averaged weights of their constant feature."""
        return self.intercept_scaling * self.averaged_unpenalized()[:self.n_outputs]

    def averaged_unpenalized(self):
        """The averaged iterate of every unpenalized entry, (K + m,): the intercepts,
        then a structured learner's further entries; the last iterate's before step a."""
        cdef Ctx* c = &self.c
        cdef long long n = average_count(c), u
        if not c.params.average_from:
            raise ValueError("this learner keeps no averaged iterate; build it with average >= 1.")
        if n == 0:
            return np.array([unpenalized_now(c, u) for u in range(self.n_outputs + self.n_unpenalized)])
        return np.frombuffer(self.arrays["bavg"], dtype=np.float64) / n

    def margins(self, data, indices, indptr, long long width, bint averaged=False, weights=None):
        """<w_k, x_i> + b_k of the eager model w_{T+1} for the CSR rows of a matrix of
        `width` columns given as `fit_rows` takes them (NumPy or ``array.array``
        buffers): a (n, K) array. Columns at or beyond n_features, which the model
        never saw, have weight 0; an index outside [0, width) raises ValueError, as
        in `fit_rows`. A margin that is not finite (NaN or infinity in the row, or
        finite values so large that it overflows) raises `NonFiniteMargin` naming
        its row: never a NaN prediction. ``weights`` (K, m), if given, are read in
        place of the model's (`coef_at`'s, the rows' indices then positions among
        its columns; m and beyond weigh 0), the same sums."""
        W = weights if weights is not None else self.coef_zeros_unsigned(averaged)
        out = np.empty((max(len(indptr) - 1, 0), self.n_outputs))
        kind = csr_kind(data, indices)
        if kind == 0:
            margins_csr[double, int](W, data, indices, indptr, width, out)
        elif kind == 1:
            margins_csr[double, longlong](W, data, indices, indptr, width, out)
        elif kind == 2:
            margins_csr[float, int](W, data, indices, indptr, width, out)
        else:
            margins_csr[float, longlong](W, data, indices, indptr, width, out)
        out += self.averaged_intercept() if averaged else self.intercept()
        cdef Py_ssize_t row = first_nonfinite(out)
        if row >= 0:
            raise nonfinite_margin(row, np.asarray(data)[indptr[row]:indptr[row + 1]].tolist())
        return out

    def row_margins(self, data, indices):
        """<w_k, x> + b_k of the eager model w_{T+1} for one row given by its stored
        values ``data`` (float64 or float32) and column ``indices`` (int32 or int64),
        C-contiguous buffers of equal length: a list of K floats, bit for bit those
        of `margins`, but reading only the row's features (`current`: O(nnz x K),
        where `margins` materializes every weight once per step count) and the
        buffers as they are (no NumPy array or typed memoryview made, which cost
        more than the row). What a stream reads between two steps (held-out rows,
        predictions written as they come) takes it. Columns at or beyond
        n_features weigh 0; a margin that is not finite raises `NonFiniteMargin`
        (row 0). Grouped models, and other buffers, go through NumPy (`margins`)."""
        cdef Py_buffer bd, bi
        if not self.c.params.grouped and _buffer(data, &bd):
            try:
                if _buffer(indices, &bi):
                    try:
                        if (_format(&bd) in (b"d", b"f") and _format(&bi) in (b"i", b"l", b"q")
                                and bd.len // bd.itemsize == bi.len // bi.itemsize and bi.itemsize in (4, 8)):
                            return _row_margins(self.c, &bd, &bi)
                    finally:
                        PyBuffer_Release(&bi)
            finally:
                PyBuffer_Release(&bd)
        x, js = np.ascontiguousarray(data, dtype=np.float64), np.ascontiguousarray(indices, dtype=np.int64)
        if self.c.params.grouped:
            return self.margins(x, js, pyarray.array("q", [0, len(js)]), max(js.max(initial=-1) + 1, 1))[0].tolist()
        return self.row_margins(x, js)

    def intercept(self):
        """The intercept b_{T+1} per output, a (K,) array: ``intercept_scaling`` times
        `intercept_weights` (those themselves at the default 1)."""
        return self.intercept_scaling * self.intercept_weights()

    def intercept_weights(self):
        """The weights of the intercepts' constant feature at step T + 1, a (K,) array:
        the state the steps move (`_mixing` mixes them), whose margin term is
        ``intercept_scaling`` times each."""
        cdef int k
        return np.array([intercept_value(&self.c, k) for k in range(self.n_outputs)])

    # ------------------------------------------------------------------ training
    def fit_rows(self, data, indices, indptr, const double[::1] y not None,
                 const double[::1] sample_weight or None, const long long[::1] order or None,
                 int batch_size, pause=None, held=None, double[::1] scores=None, bint each_step=False,
                 double[::1] sums=None, double[::1] held_sums=None):
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
        leaving the learner as a call over the rows stepped so far would; so does
        an exception raised by ``pause``.

        One thread at a time: the steps run without the GIL and may grow the
        learner's scratch, so a second call while one runs raises RuntimeError.
        ``pause``, if given, is called (with the GIL) at the step boundaries where
        signals are checked, with the learner as a call over the rows stepped so far
        would leave it: reads of the model may run there (`_concurrency`).

        A stream's pass (``fastprox train``: VW's holdout, its ``-p``) is told, with the
        rows in order (``order`` None), ``held`` = (first, period): rows first, first +
        period, ... are held out, scored by the model of the moment (as `row_margins`
        scores them) into ``scores`` (float64, row-major: K per held-out row, in turn),
        not stepped on; no step spans one. With ``each_step``, ``scores`` holds K per row
        of the call, every row's margins written before its step (a step's rows all
        before it; a held-out row's at its place), and the steps are its segments; else
        the segments are the runs of rows between held-out ones. ``sums`` (4 float64s, if
        given) takes each segment's loss, added to sums[0] and sums[1], and its rows'
        weight (their count without sample weights), added to sums[2] and sums[3]: the
        sums the stream's table and pass keep, in the order of separate calls over the
        segments (`fastprox.stream.trainer`). ``held_sums`` (4 float64s, if given) takes
        each held-out row's loss (`registry_loss`: the registry's, which the stream's
        Python reports compute) times its weight, added to held_sums[0] and [2], and its
        weight (1 without sample weights), added to held_sums[1] and [3], row after row:
        the holdout's sums of the pass and of the table. A score that is not finite
        raises `NonFiniteMargin` naming its row, the model of the steps before it kept."""
        if self.training:
            raise RuntimeError("this learner is training in another thread; a learner (and its "
                               "estimator) takes one fit or partial_fit call at a time.")
        if self.loss is None:
            raise ValueError("a structured learner (loss=None) steps on its caller's gradients "
                             "(fastprox.structured.StructuredLearner), not on rows and labels.")
        check_step(self.step, self.update, self.schedule, batch_size)
        cdef bint all_rows = order is None      # rows 0..n-1 in order: nothing to check
        cdef bint unit = sample_weight is None
        if all_rows:
            order = NO_ORDER
        if unit:
            sample_weight = NO_WEIGHTS
        cdef Stream stream
        stream_of(&stream, held, scores, each_step, sums, held_sums, all_rows, len(indptr) - 1, self.n_outputs)
        cdef array.array partials = NO_WEIGHTS
        if stream.held_sums != NULL and self.c.params.multinomial:
            partials = pyarray.array("d", bytes(8 * self.n_outputs))
            stream.partials = partials.data.as_doubles
        kind = csr_kind(data, indices)
        self.training = True
        try:
            if kind == 0:
                return fit_csr[double, int](&self.c, data, indices, indptr, y, sample_weight, order,
                                            all_rows, unit, batch_size, pause, &stream)
            if kind == 1:
                return fit_csr[double, longlong](&self.c, data, indices, indptr, y, sample_weight, order,
                                                 all_rows, unit, batch_size, pause, &stream)
            if kind == 2:
                return fit_csr[float, int](&self.c, data, indices, indptr, y, sample_weight, order,
                                           all_rows, unit, batch_size, pause, &stream)
            return fit_csr[float, longlong](&self.c, data, indices, indptr, y, sample_weight, order,
                                            all_rows, unit, batch_size, pause, &stream)
        finally:
            self.training = False

cdef int put_state_rows(Learner learner, const long long[::1] rows, const double[::1] values) except -1:
    """Write `Learner.changed_state`'s rows (features ``rows``, their ``values`` row
    after row) into ``learner``'s state (`Learner.__copy__`, `Learner.__setstate__`)."""
    cdef Py_ssize_t j, width = learner.c.layout.width
    cdef double* state = double_ptr(learner.arrays["state"])
    if values.shape[0] != rows.shape[0] * width:
        raise ValueError(f"{rows.shape[0]} state rows take {rows.shape[0] * width} values, "
                         f"not {values.shape[0]}: a pickle from another version?")
    for j in range(rows.shape[0]):
        if not 0 <= rows[j] < learner.capacity:
            raise ValueError(f"a state row {rows[j]} beyond the learner's {learner.capacity}: a pickle "
                             f"from another version?")
        memcpy(&state[rows[j] * width], &values[j * width], width * sizeof(double))
    return 0


def _pages_of(a):
    """The `ZeroPages` that the NumPy array ``a`` views whole (the model files'
    reader writes a learner's own state through such a view), else None."""
    base = a
    while isinstance(base, np.ndarray) and base.base is not None:
        base = base.base
    base = base.obj if isinstance(base, memoryview) else base
    return base if isinstance(base, ZeroPages) and len(base) == np.size(a) else None


cdef int stream_of(Stream* s, held, double[::1] scores, bint each_step, double[::1] sums, double[::1] held_sums,
                   bint all_rows, Py_ssize_t n, int K) except -1:
    """Check `Learner.fit_rows`'s stream arguments into ``s``."""
    s.on = held is not None or scores is not None or each_step or sums is not None or held_sums is not None
    s.held, s.period, s.each_step, s.scored = -1, 1, each_step, 0
    s.scores = s.sums = s.held_sums = s.partials = NULL
    cdef Py_ssize_t rows = n
    if not s.on:
        return 0
    if not all_rows:
        raise ValueError("a stream's pass (held, scores, each_step, sums, held_sums) takes its rows in order: "
                         "order=None")
    if held is not None:
        s.held, s.period = held
        if s.held < 0 or s.period < 1:
            raise ValueError(f"held=(first, period) takes first >= 0 and period >= 1; got {held!r}")
        rows = 0 if s.held >= n else (n - 1 - s.held) // s.period + 1
        if s.held >= n:
            s.held = -1
    if each_step:
        rows = n
    if (held is not None or each_step) and (scores is None or scores.shape[0] < rows * K):
        raise ValueError(f"scores must hold the {rows} {'rows' if each_step else 'held-out rows'}' {K} "
                         f"margins each ({rows * K} float64s)")
    if scores is not None and scores.shape[0]:
        s.scores = &scores[0]
    if sums is not None:
        if sums.shape[0] != 4:
            raise ValueError("sums must hold 4 float64s")
        s.sums = &sums[0]
    if held_sums is not None:
        if held_sums.shape[0] != 4:
            raise ValueError("held_sums must hold 4 float64s")
        s.held_sums = &held_sums[0]
    return 0


cdef struct Pass:
    # One call's pass over its rows: what `fit_csr` sets up for the loop (`run_pass`),
    # and where the loop leaves its steps' loss, its position and why it stopped.
    const double* y
    const double* sw                # NULL: weights 1
    const long long* rows           # NULL: rows 0..n-1
    Py_ssize_t n, start
    int batch_size, b
    bint prefetch, scattered, keep, interrupted
    double total


cdef double fit_csr(Ctx* state, const value_t[::1] data, const index_t[::1] indices,
                    const index_t[::1] indptr, const double[::1] y,
                    const double[::1] sample_weight, const long long[::1] order,
                    bint all_rows, bint unit, int batch_size, pause, Stream* stream) except? -1:
    """`Learner.fit_rows` for one type of values and one of indices (`all_rows`: rows
    0..n-1, the order empty; `unit`: weights 1, sample_weight empty; `stream`: a
    stream's pass, `stream_pass`)."""
    cdef Pass p
    cdef const value_t* X = &data[0] if data.shape[0] else NULL
    cdef const index_t* ind = &indices[0] if indices.shape[0] else NULL
    cdef bint stopped, steep
    cdef long long unpredictable
    p.n = indptr.shape[0] - 1 if all_rows else order.shape[0]
    p.y, p.rows = &y[0], NULL if all_rows else &order[0] if p.n > 0 else NULL
    p.sw = NULL if unit else &sample_weight[0] if sample_weight.shape[0] else NULL
    p.start, p.b, p.batch_size, p.interrupted, p.total = 0, 0, batch_size, False, 0.0
    ensure_scratch(state, _check_rows(data.shape[0], indices, indptr, y.shape[0],
                                      y.shape[0] if unit else sample_weight.shape[0],
                                      order, all_rows, state.params.n_features, batch_size,
                                      state.params.update == FTRL or wants_factor_memo(state)
                                      or uses_lanes(state)),
                   batch_size)
    state.lanes = LANES
    # Prefetching pays once the state outgrows the caches; below, it only costs.
    p.prefetch = state.params.n_features * state.layout.width * sizeof(double) > PREFETCH_BYTES
    # Rows visited out of order (shuffled passes) defeat the hardware prefetcher:
    # their values and indices are requested too, a step before their state.
    p.scattered = (data.shape[0] * (sizeof(value_t) + sizeof(index_t)) > PREFETCH_BYTES
                   and not all_rows and not consecutive(order))
    # The rows in lanes prefetch the row ahead themselves, and keep its state rows in a
    # slot (`_rows.lane_prefetch`, `_state.lane_slot`).
    p.keep = uses_lanes(state) and batch_size == 1
    if stream.on:
        stream_pass(state, &p, stream, X, ind, &indptr[0], pause)
    else:
        pass_kernel(state, &p, X, ind, &indptr[0], pause)
    stopped, steep, unpredictable = state.cursor.nonfinite, state.cursor.steep, state.scratch.unpredictable
    state.cursor.nonfinite = state.cursor.steep = False
    state.scratch.unpredictable = 0
    if p.interrupted:           # the steps taken so far stay, as after a shorter call
        return -1
    if unpredictable:           # (a score the step took for -p, `score_or_raise`'s refusal)
        raise nonfinite_margin(unpredictable - 1, [data[nz] for nz in range(indptr[unpredictable - 1],
                                                                             indptr[unpredictable])])
    if stopped:
        refuse_step(data, indptr, p.rows, p.start, p.start + p.b, steep)
    return p.total


cdef int stream_pass(Ctx* c, Pass* p, Stream* s, const value_t* X, const index_t* ind, const index_t* indptr,
                     pause) except -1:
    """A stream's pass (`Learner.fit_rows`): its segments (the runs of rows between
    held-out ones, or each step) each stepped by `pass_kernel` as a call of their own
    would step them, their loss and weight added to the sums; the held-out rows, and
    with each_step every step's rows first, scored (`score_row`). Signals are looked at
    every SIGNAL_ROWS rows, as in `run_pass`. p.total ends as the segments' summed loss."""
    cdef Py_ssize_t end = p.n, first, i, signals_at = p.start + SIGNAL_ROWS, K = c.params.n_outputs
    cdef double total = 0.0, weight
    cdef double* held_scores
    cdef bint by_steps = s.each_step and steps_predict(c, p.batch_size)
    while p.start < end:
        p.n = end if s.held < 0 else min(s.held, end)
        if s.each_step:
            p.n = min(p.n, p.start + p.batch_size)
            for i in range(p.start, p.n if not by_steps else p.start):
                score_or_raise(c, X, ind, indptr, i, s.scores + i * K)
        if p.n > p.start:
            first, p.total = p.start, 0.0
            c.scratch.predictions = s.scores if by_steps else NULL
            try:
                pass_kernel(c, p, X, ind, indptr, pause)
            finally:
                c.scratch.predictions = NULL
            if c.cursor.nonfinite or p.interrupted:
                return 0
            total += p.total
            if s.sums != NULL:
                weight = 0.0
                if p.sw == NULL:
                    weight = <double>(p.n - first)
                else:
                    for i in range(first, p.n):
                        weight += p.sw[i]
                s.sums[0] += p.total
                s.sums[1] += p.total
                s.sums[2] += weight
                s.sums[3] += weight
        if p.start == s.held and p.start < end:
            held_scores = s.scores + (p.start if s.each_step else s.scored) * K
            score_or_raise(c, X, ind, indptr, p.start, held_scores)
            if s.held_sums != NULL:
                hold_out(c, p, s, held_scores)
            s.held += s.period
            s.scored += 1
            p.start += 1
        if p.start >= signals_at:
            signals_at = p.start + SIGNAL_ROWS
            p.interrupted = check_signals() != 0 or (pause is not None and not paused(pause))
            if p.interrupted:
                return 0
    p.n, p.total = end, total
    return 0


cdef inline bint general_steps(Ctx* c, int batch_size) noexcept nogil:
    """Whether `pass_kernel` takes the general step (`step`) over the pass's rows, not
    a row kernel."""
    return batch_size != 1 or not tagged(c.params.schedule) or not (
        c.params.plain_fobos or c.params.plain_adagrad or c.params.plain_dual or c.params.plain_normalized)


cdef inline bint steps_predict(Ctx* c, int batch_size) noexcept nogil:
    """Whether the steps write -p's scores (`steps.step.predict_row`) in a stream's pass:
    the general step's margins over each row (not its plain_rows branch, which takes a
    step of one row: a mini-batch's last may be one), whose caught-up weights are
    those `current` computes, bit for bit: not under fobos's normalized schedule (its
    margins rescale the weights first) or a Berhu penalty (`current` reads its heap),
    nor for a grouped model (`score_grouped_row`)."""
    return (general_steps(c, batch_size) and not c.params.plain_rows and not c.params.grouped
            and not (c.params.update == FOBOS and (c.params.schedule == NORMALIZED or c.params.penalty == BERHU)))


cdef inline void hold_out(Ctx* c, Pass* p, Stream* s, const double* scores) noexcept nogil:
    """Add held-out row p.start's weighted loss at its margins ``scores`` and its weight
    to the stream's held_sums (`Learner.fit_rows`)."""
    cdef double weight = 1.0 if p.sw == NULL else p.sw[p.start]
    cdef double loss = weight * registry_loss(c.params.loss, c.params.multinomial, c.params.epsilon, scores,
                                              c.params.n_outputs, p.y[p.start], s.partials)
    s.held_sums[0] += loss
    s.held_sums[1] += weight
    s.held_sums[2] += loss
    s.held_sums[3] += weight


cdef int score_or_raise(Ctx* c, const value_t* X, const index_t* ind, const index_t* indptr, Py_ssize_t i,
                        double* out) except -1:
    """Row i's margins by the model of now into out (`score_row`), or `NonFiniteMargin`
    naming row i."""
    if not score_row(c, X, ind, indptr[i], indptr[i + 1], out):
        raise nonfinite_margin(i, [X[nz] for nz in range(indptr[i], indptr[i + 1])])
    return 0


cdef inline bint score_row(Ctx* state, const value_t* X, const index_t* ind, Py_ssize_t lo, Py_ssize_t hi,
                           double* out) noexcept nogil:
    """<w_k, x> + b_k of the eager model w_{T+1} for the row of values X[lo:hi] at
    columns ind[lo:hi], into out[0:K] (`Learner.row_margins`, held-out rows, -p): the
    features' current weights (`current`, the state untouched), columns at or beyond
    n_features weighing 0; whether all K are finite. A grouped model's row goes to
    `score_grouped_row`."""
    cdef Ctx c = state[0]
    cdef Py_ssize_t nz
    cdef long long j
    cdef double total
    cdef int k
    cdef bint finite = True
    set_weight_params(&c)
    if c.params.grouped:
        return score_grouped_row(&c, X, ind, lo, hi, out)
    for k in range(c.params.n_outputs):
        total = 0.0
        for nz in range(lo, hi):
            j = ind[nz]
            if 0 <= j < c.params.n_features:
                total += current(&c, j, k) * <double>X[nz]
        total += intercept_term(&c, intercept_value(&c, k))
        finite = finite and total - total == 0.0
        out[k] = total
    return finite


cdef bint score_grouped_row(Ctx* c, const value_t* X, const index_t* ind, Py_ssize_t lo, Py_ssize_t hi,
                            double* out) noexcept nogil:
    """`score_row` for a grouped model, between the pass's steps (held-out rows, -p):
    the margins `Learner.margins` sums over `groups_materialize`'s (K, d) weights, bit
    for bit, in O(nnz K + the sizes of the row's groups) where the materialized weights
    cost O(d K). Each group of the row's features has its weights at the step computed
    once (`cache_group_weights`, into the scratch rda caches a step's in, free between
    steps); the group's mark (a step number, >= 0) is flipped to -2 - mark while the row
    is scored, then given back. ``c`` is the caller's copy of the context (its counters
    left), the state untouched."""
    cdef Py_ssize_t nz
    cdef long long j, g, d = c.params.n_features
    cdef long long* mark = c.groups.mark
    cdef double total
    cdef int k, K = c.params.n_outputs
    cdef bint finite = True
    for nz in range(lo, hi):
        j = ind[nz]
        if 0 <= j < d:
            g = group_of(c, j)
            if g >= 0 and mark[g] >= 0:
                mark[g] = -2 - mark[g]
                cache_group_weights(c, g)
    for k in range(K):
        total = 0.0
        for nz in range(lo, hi):
            j = ind[nz]
            if 0 <= j < d:
                total += (c.scratch.group_weights_now[j * K + k] if group_of(c, j) >= 0
                          else ungrouped_weight(c, j, k)) * <double>X[nz]
        total += intercept_term(c, intercept_value(c, k))
        finite = finite and total - total == 0.0
        out[k] = total
    for nz in range(lo, hi):
        j = ind[nz]
        if 0 <= j < d:
            g = group_of(c, j)
            if g >= 0 and mark[g] < 0:
                mark[g] = -2 - mark[g]
    return finite


cdef nonfinite_margin(row, values):
    """The `NonFiniteMargin` of a row of stored ``values`` whose margin is not finite:
    NaN or infinity among them, or finite values too large for the weights."""
    from fastprox._validation import NonFiniteMargin
    return NonFiniteMargin(row, "Input X contains NaN or infinity; remove or replace those values."
                           if not all(x - x == 0.0 for x in values) else
                           "the margin overflowed: the values are finite but too large for the "
                           "model's weights; scale them as the training data were scaled.")


cdef int pass_kernel(Ctx* c, Pass* p, const value_t* X, const index_t* ind, const index_t* indptr,
                     pause) except -1:
    """The pass's kernel, chosen once: the general step for mini-batches and the rules
    without a row kernel, else the row kernel of the rule's layout and step
    (`_kernel/steps/rows.pxd`); then its loss family (`pass_loss`)."""
    if general_steps(c, p.batch_size):
        return pass_loss(c, p, X, ind, indptr, pause, <GeneralStep*>NULL)
    if c.params.average_from:
        return pass_averaged(c, p, X, ind, indptr, pause)
    if c.params.plain_fobos and (c.layout.shrink_stamp_at < 0 and c.layout.threshold_stamp_at == 0
                                 and c.layout.n_row_fields == 1):
        return pass_loss(c, p, X, ind, indptr, pause, <FobosL1Rows*>NULL)
    if c.params.plain_fobos:
        return pass_loss(c, p, X, ind, indptr, pause, <FobosRows*>NULL)
    if c.params.plain_adagrad and c.params.invariant:
        return pass_loss(c, p, X, ind, indptr, pause, <InvariantAdagradRows*>NULL)
    if c.params.plain_adagrad and c.params.l1_share == 1.0:   # l1, or no penalty (then l1_share is 1)
        return pass_loss(c, p, X, ind, indptr, pause, <AdagradL1Rows*>NULL)
    if c.params.plain_adagrad:
        return pass_loss(c, p, X, ind, indptr, pause, <AdagradRows*>NULL)
    if c.params.plain_normalized and c.params.invariant:
        return pass_loss(c, p, X, ind, indptr, pause, <InvariantNormalizedRows*>NULL)
    if c.params.plain_normalized:
        return pass_loss(c, p, X, ind, indptr, pause, <NormalizedRows*>NULL)
    if c.params.update == FTRL and c.layout.ftrl_roots:
        return pass_loss(c, p, X, ind, indptr, pause, <FtrlRootsRows*>NULL)
    if c.params.update == FTRL:
        return pass_loss(c, p, X, ind, indptr, pause, <FtrlRows*>NULL)
    if c.params.schedule == ADAGRAD:
        return pass_loss(c, p, X, ind, indptr, pause, <RdaAdagradRows*>NULL)
    return pass_loss(c, p, X, ind, indptr, pause, <RdaRows*>NULL)


cdef int pass_averaged(Ctx* c, Pass* p, const value_t* X, const index_t* ind, const index_t* indptr,
                       pause) except -1:
    """`pass_kernel` with the averaged iterate kept: the averaged row kernel of the rule
    (`_kernel/steps/rows_average.pxd`)."""
    if c.params.plain_fobos and c.layout.shrink_stamp_at < 0 and c.layout.threshold_stamp_at < 0:
        return pass_loss(c, p, X, ind, indptr, pause, <AveragedUnpenalizedFobosRows*>NULL)
    if c.params.plain_fobos and c.layout.shrink_stamp_at < 0:      # l1: (Q, A; w, S)
        return pass_loss(c, p, X, ind, indptr, pause, <AveragedFobosL1Rows*>NULL)
    if c.params.plain_fobos:
        return pass_loss(c, p, X, ind, indptr, pause, <AveragedFobosRows*>NULL)
    if c.params.plain_adagrad and c.params.invariant:
        return pass_loss(c, p, X, ind, indptr, pause, <AveragedInvariantAdagradRows*>NULL)
    if c.params.plain_adagrad and c.params.l1_share == 1.0:
        return pass_loss(c, p, X, ind, indptr, pause, <AveragedAdagradL1Rows*>NULL)
    if c.params.plain_adagrad:
        return pass_loss(c, p, X, ind, indptr, pause, <AveragedAdagradRows*>NULL)
    if c.params.plain_normalized and c.params.invariant:
        return pass_loss(c, p, X, ind, indptr, pause, <AveragedInvariantNormalizedRows*>NULL)
    if c.params.plain_normalized:
        return pass_loss(c, p, X, ind, indptr, pause, <AveragedNormalizedRows*>NULL)
    if c.params.update == FTRL:
        return pass_loss(c, p, X, ind, indptr, pause, <AveragedFtrlRows*>NULL)
    if c.params.update == RDA and c.params.schedule == ADAGRAD:
        return pass_loss(c, p, X, ind, indptr, pause, <AveragedRdaAdagradRows*>NULL)
    return pass_loss(c, p, X, ind, indptr, pause, <GeneralStep*>NULL)


cdef int pass_loss(Ctx* c, Pass* p, const value_t* X, const index_t* ind, const index_t* indptr,
                   pause, pass_step_t* kernel) except -1:
    """The pass's loss family (the log loss's code a constant in the row kernels), then
    its schedule kind (`pass_eta`)."""
    if pass_step_t is not GeneralStep and c.params.loss == LOG:
        return pass_eta(c, p, X, ind, indptr, pause, kernel, <LogLoss*>NULL)
    return pass_eta(c, p, X, ind, indptr, pause, kernel, <AnyLoss*>NULL)


cdef int pass_eta(Ctx* c, Pass* p, const value_t* X, const index_t* ind, const index_t* indptr,
                  pause, pass_step_t* kernel, loss_t* loss) except -1:
    """The schedule kind of the pass's eta_t (the row kernels of scalar schedules: fobos,
    rda), then the pass (`run_pass`)."""
    if (pass_step_t is FobosL1Rows or pass_step_t is FobosRows or pass_step_t is RdaRows
            or pass_step_t is AveragedFobosRows or pass_step_t is AveragedFobosL1Rows
            or pass_step_t is AveragedUnpenalizedFobosRows):
        if c.params.schedule == INVSQRT:
            return run_pass(c, p, X, ind, indptr, pause, kernel, loss, <InvSqrtEta*>NULL)
        if c.params.schedule == INV:
            return run_pass(c, p, X, ind, indptr, pause, kernel, loss, <InvEta*>NULL)
    return run_pass(c, p, X, ind, indptr, pause, kernel, loss, <ConstantEta*>NULL)


cdef inline int run_pass(Ctx* state, Pass* p, const value_t* X, const index_t* ind, const index_t* indptr,
                  pause, pass_step_t* kernel, loss_t* loss, eta_t* schedule) except -1:
    """The steps of a pass from row p.start on, each by `kernel` (a row kernel, or the
    general step) under its loss family and schedule kind, all three fixed for the
    pass: one instantiation of this loop per combination `pass_kernel` chooses, with no
    branch among kernels in it. Leaves the learner after its steps in `state`; stops at
    a step refused (c.cursor.nonfinite, read by `fit_csr`) or at a signal."""
    cdef Ctx c = state[0]
    cdef long long nxt
    cdef Py_ssize_t signals_at = p.start + SIGNAL_ROWS
    with nogil:
        while p.start < p.n:
            p.b = <int>min(<Py_ssize_t>p.batch_size, p.n - p.start)
            if p.scattered and p.start + (PREFETCH_STEPS + 1) * p.b < p.n:
                nxt = row_at(p.rows, p.start + (PREFETCH_STEPS + 1) * p.b)
                prefetch_lines(X + indptr[nxt], X + indptr[nxt + 1])
                prefetch_lines(ind + indptr[nxt], ind + indptr[nxt + 1])
            c.scratch.lane_ahead_lo = -1
            if p.start + PREFETCH_STEPS * p.b < p.n and p.prefetch:
                nxt = row_at(p.rows, p.start + PREFETCH_STEPS * p.b)
                if p.keep:              # (the step prefetches it: `_rows.lane_prefetch`)
                    c.scratch.lane_ahead_lo, c.scratch.lane_ahead_hi = indptr[nxt], indptr[nxt + 1]
                else:
                    prefetch_rows(&c, ind, indptr[nxt], indptr[nxt + 1], NULL)
            if pass_step_t is GeneralStep:
                p.total += step(&c, X, ind, indptr, p.y, p.sw, p.rows, p.start, p.b)
            elif pass_step_t in averaged_t:
                c.scratch.lane_at = p.start
                p.total += averaged_row_step(&c, X, ind, indptr, p.y, p.sw, row_at(p.rows, p.start), kernel, loss,
                                             schedule)
            else:
                c.scratch.lane_at = p.start
                p.total += row_step(&c, X, ind, indptr, p.y, p.sw, row_at(p.rows, p.start), kernel, loss, schedule)
            if c.cursor.nonfinite:
                break
            p.start += p.b
            if p.start >= signals_at:
                signals_at = p.start + SIGNAL_ROWS
                state[0] = c            # the learner after the steps taken, for pause's reads
                with gil:
                    p.interrupted = check_signals() != 0 or (pause is not None and not paused(pause))
                c = state[0]
                if p.interrupted:
                    break
        p.total += logsum_pop(&c.cursor.deferred_logs)
    state[0] = c
    return 0


cdef bint paused(pause) noexcept:
    """Call a pass's ``pause``: False if it raised, its exception left set, so that the
    pass stops there as at a signal (Ctrl-C landing in an estimator's pause, which runs
    Python code): the learner as after the steps taken, their deferred log losses
    counted in the call's, then the exception raised (`fit_csr`)."""
    cdef PyObject* result = call_no_args(pause)
    Py_XDECREF(result)
    return result != NULL


cdef bint _buffer(obj, Py_buffer* b) except -1:
    """Take ``obj``'s C-contiguous buffer into ``b`` (False: it has none; nothing to release)."""
    try:
        PyObject_GetBuffer(obj, b, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT)
    except (TypeError, BufferError, ValueError):
        return False
    return True


cdef bytes _format(Py_buffer* b):
    """A buffer's format character in native order ("d", "f", "i", "l", "q", ...)."""
    fmt = <bytes>b.format if b.format is not NULL else b"B"
    return fmt[1:] if fmt[:1] in (b"@", b"=") else fmt


cdef list _row_margins(Ctx c, Py_buffer* bd, Py_buffer* bi):
    """`Learner.row_margins` over the buffers' values and indices (checked there)."""
    cdef Py_ssize_t n = bd.len // bd.itemsize
    cdef array.array out = zeros(c.params.n_outputs)
    cdef bint finite
    if bd.itemsize == 8:
        finite = (score_row(&c, <double*>bd.buf, <int*>bi.buf, 0, n, out.data.as_doubles) if bi.itemsize == 4
                  else score_row(&c, <double*>bd.buf, <long long*>bi.buf, 0, n, out.data.as_doubles))
    else:
        finite = (score_row(&c, <float*>bd.buf, <int*>bi.buf, 0, n, out.data.as_doubles) if bi.itemsize == 4
                  else score_row(&c, <float*>bd.buf, <long long*>bi.buf, 0, n, out.data.as_doubles))
    if not finite:
        raise nonfinite_margin(0, [(<double*>bd.buf)[nz] if bd.itemsize == 8 else (<float*>bd.buf)[nz]
                                   for nz in range(n)])
    return out.tolist()
