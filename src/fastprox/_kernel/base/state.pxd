# The state of K linear models as one step sees it (`Ctx`), its layout, and the
# scratch space the steps allocate when first needed.
from libc.stdlib cimport calloc, realloc, free
from fastprox._kernel.base.types cimport FOBOS, RDA, FTRL, ADAGRAD, NORMALIZED, BERHU
from fastprox._kernel.losses.losses cimport LogSum
from fastprox._kernel.rules.berhu cimport Heap, BERHU_ENTRY
from fastprox._kernel.lanes.lanes cimport lanes_t, LANES_MAX


# Named offsets of the state's fields (as Vowpal Wabbit's W_ZT, W_G2). Row j of the
# state holds n_row_fields per-feature fields, then K entries of n_entry_fields each;
# `entry` points at entry k of a row, the offsets below index into it. The fields of
# the dual rules' sums, fobos + adagrad and fobos + normalized are named in _kernel/base/layout.h,
# which the passes in lanes (`_kernel/lanes/lanes.h`) read too:
#   fobos + adagrad: row (ROW_LAST_STEP: last, the step the row's entries are current
#   at), entries (ADAGRAD_W, ADAGRAD_G, ADAGRAD_ETA: the weight, the sum of squared
#   gradients, the step eta0 / (delta + sqrt(G)) G gives, frozen for the catch-up);
#   fobos + normalized (`_normalized`): under l1 per feature the cumulant stamp and the
#   scale (NORM_STAMP, NORM_SCALE), per entry the weight, the sum of squared gradients
#   and the frozen step factor (NORM_W, NORM_G, NORM_FACTOR); without a penalty
#   (alpha = 0) nothing catches up, and a row is the scale, then per entry the weight
#   and G (NORM_PLAIN_ROW_FIELDS, NORM_PLAIN_ENTRY; the scale is a row's last field in both).
cdef extern from "_kernel/base/layout.h":
    enum:
        DUAL_SUM "FASTPROX_DUAL_SUM"          # the dual rules (rda, ftrl, rda groups) share their first two
        DUAL_SQUARES "FASTPROX_DUAL_SQUARES"  # fields: s (rda) or z (ftrl); G (rda + adagrad) or n (ftrl)
        ROW_LAST_STEP "FASTPROX_ROW_LAST_STEP"
        ADAGRAD_ROW_FIELDS "FASTPROX_ADAGRAD_ROW_FIELDS"
        ADAGRAD_W "FASTPROX_ADAGRAD_W"
        ADAGRAD_G "FASTPROX_ADAGRAD_G"
        ADAGRAD_ETA "FASTPROX_ADAGRAD_ETA"
        ADAGRAD_ENTRY "FASTPROX_ADAGRAD_ENTRY"
        NORM_STAMP "FASTPROX_NORM_STAMP"
        NORM_SCALE "FASTPROX_NORM_SCALE"
        NORM_ROW_FIELDS "FASTPROX_NORM_ROW_FIELDS"
        NORM_PLAIN_ROW_FIELDS "FASTPROX_NORM_PLAIN_ROW_FIELDS"
        NORM_W "FASTPROX_NORM_W"
        NORM_G "FASTPROX_NORM_G"
        NORM_FACTOR "FASTPROX_NORM_FACTOR"
        NORM_ENTRY "FASTPROX_NORM_ENTRY"
        NORM_PLAIN_ENTRY "FASTPROX_NORM_PLAIN_ENTRY"

cdef enum:
    FOBOS_W = 0                   # fobos, scalar step, and fobos groups: the weight w (every fobos
                                  # layout keeps it first: ADAGRAD_W, BERHU_W)
    FOBOS_ENTRY = 1               # (the P and Q stamps are row fields: `Layout.shrink_stamp_at`)

cdef enum:
    # the dual rules' fields (DUAL_SUM, DUAL_SQUARES: _kernel/base/layout.h)
    RDA_S = DUAL_SUM
    RDA_G = DUAL_SQUARES
    FTRL_Z = DUAL_SUM
    FTRL_N = DUAL_SQUARES
    FTRL_ROOT = 2                 # sqrt(n), kept where `Layout.ftrl_roots`

cdef enum:
    # the intercepts (Arrays.intercepts): two fields per output
    INTERCEPT_SUM = 0             # b (fobos), s_b (rda) or z_b (ftrl)
    INTERCEPT_SQUARES = 1         # G_b (adagrad, rda) or n_b (ftrl)
    INTERCEPT_FIELDS = 2

cdef enum:
    # ftrl's memos (Scratch.ftrl_memo per entry of a row, Scratch.intercept_memo per
    # output): the weight and sqrt(n) the margin read, for the update
    MEMO_W = 0
    MEMO_ROOT = 1
    MEMO_FIELDS = 2

cdef enum:
    # the averaged iterate's history of the scalar-FOBOS cumulants (`Arrays.avg_history`,
    # `_kernel/rules/average.pxd`), per step since the rebase: Q and P after the step, the
    # nodes of two Fenwick trees over the steps' P and P Q (a range's sum from blocks of
    # positive terms, where a difference of prefix sums would lose a geometrically
    # decaying P's), and those prefix sums in double-double (hi, lo: a range's sum in
    # O(1) where they keep it). The first AVG_SAVED_FIELDS are saved; the prefix sums
    # are rebuilt from P and Q (`history_prefix`).
    AVG_Q = 0
    AVG_P = 1
    AVG_NODE_P = 2
    AVG_NODE_PQ = 3
    AVG_SAVED_FIELDS = 4
    AVG_SUM_P = 4
    AVG_SUM_P_LO = 5
    AVG_SUM_PQ = 6
    AVG_SUM_PQ_LO = 7
    AVG_FIELDS = 8

cdef enum:
    # How many steps ahead a row's state is requested (`_kernels.fit_csr`): two beat one
    # on the 10-class l1_l2 pass (best of 7: 0.19-0.22 s against 0.23-0.32 s, three
    # alternations). The rows in lanes keep the state rows the prefetching took, one
    # slot per step from this one to the last requested.
    PREFETCH_STEPS = 2
    LANE_SLOTS = PREFETCH_STEPS + 1

cdef struct Params:
    # What the Learner was built with: read-only during a step (`grow` changes
    # n_features and rebase_period between calls).
    int update, schedule, penalty, loss   # the rule's codes (`_types`)
    int n_outputs                 # K: outputs (one model each, or one multinomial model)
    long long n_features          # d: features
    long long n_unpenalized       # m: unpenalized entries beside the intercepts (structured
                                  # learners: transitions, starts, stops; 0 for the others)
    bint ovr                      # K binary one-vs-rest models over class indices 0..K-1
    bint fit_intercept
    double intercept_scaling      # s: the value of the intercepts' constant feature (b_k = s w0_k; 1 by default)
    bint multinomial              # softmax (log) or Crammer-Singer (hinge) over K scores
    bint grouped                  # a group penalty (l1_l2, l1_linf, sparse_group, squared_group)
    bint berhu_heap               # fobos + berhu under a scalar step: the l2 phases' heap (`_berhu`)
    bint plain_fobos              # one output, fobos, scalar step, l1/l2/elasticnet/none
    bint plain_adagrad            # one output, fobos + adagrad, l1/l2/elasticnet/none, either step
    bint plain_dual               # one output, rda or ftrl, l1/l2/elasticnet/none
    bint plain_rows               # fobos, scalar step, l1_l2/l1_linf over W's rows, unweighted
    bint plain_normalized         # one output, fobos + normalized, l1/none, either step
    bint structured_rows          # the structured step's own loops for rda's or fobos's AdaGrad rows
                                  # (`steps/structured.pxd`); False: the general step's (tests)
    bint invariant                # fobos's forward step is the importance-invariant flow
    bint l2_powering              # AdaGrad's lazy l2 shrink by binary powering (`rules/adagrad.l2_powers`,
                                  # structured learners: K entries share it); else by exp/log1p
    double alpha_pen              # alpha: the penalty's weight (0 under penalty none)
    double l1_share               # rho: the l1 part of the penalty, r(w) = rho |w| + (1 - rho) w^2/2
    double eta0                   # eta_0: the schedules' base step
    double t0                     # the decaying scalar schedules' offset: eta0 / sqrt(t + t0), eta0 / (t + t0)
    double delta                  # delta: AdaGrad's (and FTRL's) denominator offset
    double rda_rho                # rho of RDA's extra l1 term beta_t rho |w|
    double berhu_gamma            # gamma: Berhu's switch between l1 and l2
    double epsilon                # epsilon: the epsilon-insensitive and Huber losses' width
    double inv_eta0               # 1 / eta0 (dual weights multiply by it: beta = (delta + sqrt(G)) / eta0)
    long long rebase_period       # steps between two rebases of the scalar-FOBOS cumulants, at most
    long long average_from        # a: the first step whose iterate the averaged iterate sums (0: none kept)


cdef struct Layout:
    # The state's rows: row j holds n_row_fields per-feature fields (stamps), then
    # the K entries of feature j, n_entry_fields doubles each (the enums below).
    int n_row_fields
    int n_entry_fields
    long long width               # doubles per row: n_row_fields + K n_entry_fields
    int shrink_stamp_at           # where a row keeps its P stamp, -1: none
    int threshold_stamp_at        # where a row keeps its Q stamp, -1: none
    bint ftrl_roots               # ftrl entries hold sqrt(n) too (FTRL_ROOTS_ENTRIES)
    int avg_stamp_at              # averaging under a scalar schedule: where a row keeps the step its
                                  # sums are current at (A), -1: none
    int avg_sum_at                # averaging: where an entry keeps the sum of its iterates (S), -1: none
    bint avg_prefix               # averaging, scalar FOBOS under l2 (a P stamp alone): A is the prefix
                                  # sum of P over the averaged steps at the row's stamp, in double-double
                                  # (avg_stamp_at, + 1: hi, lo; `Cursor.avg_prefix`), not the step


cdef struct Cursor:
    # The step count and what changes with it.
    long long t                   # t: steps completed
    long long n_ops               # entries visited (catch-up, margin, update, rebase)
    long long since_rebase        # steps since the cumulants' last rebase
    long long history_walks       # averaged catch-ups that summed their skipped iterates by the
                                  # history's Fenwick walk (`average.range_sums`; not saved)
    double shrink_product         # P: prod of 1/(1 + eta alpha (1 - rho)) since the rebase
    double avg_prefix             # averaging under l2 (`Layout.avg_prefix`): the sum of P over the
    double avg_prefix_lo          # averaged steps since the rebase, in double-double (hi, lo)
    double threshold_sum          # Q: sum of eta alpha rho / P since the rebase (groups: of eta alpha;
                                  # normalized: R, the sum of r_tau)
    double norm_sum               # normalized: N_t, the rows' squared norms in their features' scales
    double eta                    # eta_t: this step's step size (scalar schedules; normalized: r_t)
    double eta_next               # eta of step eta_next_t (0: none), computed a step ahead
    long long eta_next_t
    LogSum deferred_logs          # progressive log losses' log1p parts, summed once per call
    double exp_margin             # e^-|y p| of the last log-loss gradient at weight 1 (`gradient`)
    bint nonfinite                # a step of this call stopped before its update (fit_csr raises):
    bint steep                    # its margin was NaN or infinite, or (steep) its gradient too large


cdef struct DualConstants:
    # The dual rules' (rda, ftrl) weight formulas at T = t gradients summed
    # (`set_weight_params`): w = -soft(s, l1_threshold + beta rda_rho) / (beta + l2_weight).
    double l1_threshold           # T alpha rho
    double l2_weight              # T alpha (1 - rho)
    double beta                   # beta_T = sqrt(T) / eta0 (scalar schedules)
    double rda_threshold          # rda/invsqrt: l1_threshold + beta rda_rho, every weight's threshold
    double rda_scale              # rda/invsqrt: 1 / (beta + l2_weight), every weight's factor


cdef struct Arrays:
    # Pointers into the Learner's buffers (`Learner._attach`).
    double* state                 # (d, width) row-major ("state")
    double* intercepts            # (K + m, 2): b | s_b | z_b, then G_b | n_b ("bstate"); rows
                                  # K.. the m unpenalized entries (`_intercept.unpenalized_at`)
    double* scores                # (K,) p: the step's margins <w_k, x> + b_k
    double* score_grads           # (K,) q: the loss's derivatives in the scores
    double* intercept_grad        # (K,) the step's gradient of the intercepts (q, or its batch sum)
    double* sigma                 # (K,) invariant step: each output's step norm q, then its sigma
    double* exp_margins           # (K,) log loss at weight 1: each output's e^-|y p| (`gradients`)
    double* avg_history           # averaging, scalar FOBOS: (rebase_period + 1, AVG_FIELDS), the cumulants
                                  # since the rebase (`_kernel/rules/average.pxd`)
    double* avg_intercepts        # averaging: (K + m,) the unpenalized entries' sums of iterates


cdef struct Scratch:
    # Scratch the steps allocate when first needed (`ensure_scratch`, freed with the
    # Learner) or the Learner allocates with its arrays.
    double* batch_grads           # (d, K) batch gradient accumulator
    long long* feature_mark       # (d,) step at which a feature was last collected
    long long* touched_features   # (d,) features of the current batch
    double* ftrl_memo             # (longest row, K, 2) ftrl: (w, sqrt(n)) of the row being processed,
    long long ftrl_memo_size      # its doubles
    double* intercept_memo        # (K + m, 2) ftrl: (b, sqrt(n_b)) as the step's margins read them
    double* factor_memo           # (longest row + 1, K) the normalized schedule's invariant step:
                                  # each entry's new step factor, from the step norm's pass to
                                  # the update's (`wants_factor_memo`)
    long long factor_memo_size
    double** lane_rows            # (LANE_SLOTS, longest row + LANES_MAX) rows' state rows for the passes
                                  # in lanes (`uses_lanes`, `_rows.lane_entries`): the step's own
                                  # and those the prefetching took for the next steps
    long long lane_tag[LANE_SLOTS]    # the first non-zero of the row each slot holds (-1: none)
    long long lane_at             # the step's place in the pass, which names its slot
    long long lane_ahead_lo       # the non-zeros [lo, hi) of the row PREFETCH_STEPS ahead, which the
    long long lane_ahead_hi       # step prefetches itself (`_rows.lane_prefetch`; lo -1: none)
    double* lane_block            # 4 arrays of (longest row + LANES_MAX) doubles (the row's values
                                  # where they are float32, the memos of its step factors, scales
                                  # and weights) and the dummy row (width)
    long long lane_size           # the entries each array and slot holds
    double* block                 # one gathered block
    double* work                  # sorting (l1_linf, squared_group tau)
    double* block_beta            # one block's per-entry beta (rda + adagrad)
    double* group_weights_now     # (d, K) rda: weights of the current step's touched groups
    double* predictions           # (rows, K) -p's scores of a stream's pass, row r's at r K, written by
                                  # the general step from the weights its margins caught up
                                  # (`steps.step.predict_row`); NULL: none
    long long unpredictable       # 1 + the row whose score was not finite (the step refused); 0: none


cdef struct Groups:
    # The group penalties' blocks and stamps (`_groups`).
    long long n_groups            # p, the number of groups
    long long* feature_group      # (d,) group id per feature (-1: unpenalized); NULL: rows
    long long* member_start       # (p + 1,) user group g's members are members[member_start[g]:
                                  # member_start[g + 1]]
    long long* members
    double* stamp                 # (p,) threshold sum (or step, sparse_group) at the last update ("gstamp")
    double* norm                  # (p,) squared_group: ||W_G|| at the stamp ("gnorm")
    double* norm_now              # (p,) squared_group scratch: every ||W_G|| at this step
    double* weight                # (p,) d_G, the groups' penalty weights; NULL: all 1
    long long* mark               # (p,) step at which a group was last caught up
    long long* touched            # (p,) groups caught up in the current step
    long long n_touched


cdef struct Support:
    # The emission support of a sequence model trained with label_features="seen"
    # (`_kernel/steps/structured.pxd`): feature j's labels, sorted, are
    # labels[ptr[j]:ptr[j + 1]]; the other entries of its row stay 0. Set by the
    # tagger's loop for the duration of a call; ptr NULL: every label.
    const long long* ptr
    const int* labels


cdef struct Ctx:
    # What one step reads and writes, as plain C values and pointers into the
    # Learner's arrays: copied to a local for a run of steps, so that stores
    # into the state cannot alias the parameters (no reloads in the loops).
    Params params
    Layout layout
    Cursor cursor
    DualConstants dual
    Arrays arrays
    Scratch scratch
    Groups groups
    Heap heap                     # Berhu's l2-phase schedule
    const lanes_t* lanes          # the passes in lanes the step runs (`_kernels`' choice, set by each pass)
    Support support               # structured steps: the emission entries that learn (ptr NULL: all)


cdef enum:
    # FTRL entries keep sqrt(n) beside n, a square root less per non-zero, up to this
    # many entries (d K): beyond, the state outgrows the caches, and the wider entries
    # cost more in cache misses than the square root they save (measured: 10% faster
    # at d = 2^16, even at 2^19, 5-10% slower at 2^20-2^22).
    FTRL_ROOTS_ENTRIES = 1 << 19


cdef inline bint normalized_l1_rows(Ctx* c) noexcept nogil:
    """Whether the normalized schedule's rows take the l1 layout (stamp R0 and scale m,
    then w, G and the step factor per output): only a penalty's catch-up reads the
    stamps and the factors, so without one the rows are (m; w, G)."""
    return c.params.alpha_pen > 0.0


cdef inline void set_layout(Ctx* c) noexcept:
    """The layout of the state's rows for the rule in c.params (the table of `_kernels`'
    docstring): the row fields, the entry fields and the row width."""
    c.layout.shrink_stamp_at = c.layout.threshold_stamp_at = -1
    c.layout.ftrl_roots = False
    c.layout.n_row_fields = 0
    c.layout.avg_stamp_at = c.layout.avg_sum_at = -1
    c.layout.avg_prefix = False
    if c.params.grouped:
        c.layout.n_entry_fields = RDA_G + 1 if c.params.schedule == ADAGRAD else RDA_S + 1
    elif c.params.schedule == NORMALIZED and normalized_l1_rows(c):
        c.layout.n_row_fields, c.layout.n_entry_fields = NORM_ROW_FIELDS, NORM_ENTRY
    elif c.params.schedule == NORMALIZED:
        c.layout.n_row_fields, c.layout.n_entry_fields = NORM_PLAIN_ROW_FIELDS, NORM_PLAIN_ENTRY
    elif c.params.update == FOBOS and c.params.schedule != ADAGRAD and c.params.penalty != BERHU:
        if c.params.alpha_pen > 0 and c.params.l1_share < 1:
            c.layout.shrink_stamp_at = c.layout.n_row_fields
            c.layout.n_row_fields += 1
        if c.params.alpha_pen > 0 and c.params.l1_share > 0:
            c.layout.threshold_stamp_at = c.layout.n_row_fields
            c.layout.n_row_fields += 1
        c.layout.n_entry_fields = FOBOS_ENTRY
    elif c.params.update == FOBOS and c.params.schedule == ADAGRAD:
        c.layout.n_row_fields, c.layout.n_entry_fields = ADAGRAD_ROW_FIELDS, ADAGRAD_ENTRY
    elif c.params.update == FOBOS:
        c.layout.n_entry_fields = BERHU_ENTRY
    elif c.params.update == RDA:
        c.layout.n_entry_fields = RDA_G + 1 if c.params.schedule == ADAGRAD else RDA_S + 1
    else:
        c.layout.ftrl_roots = (c.params.n_features * c.params.n_outputs <= FTRL_ROOTS_ENTRIES
                               and c.params.average_from == 0)    # (averaging: no roots to drop on growth)
        c.layout.n_entry_fields = FTRL_ROOT + 1 if c.layout.ftrl_roots else FTRL_N + 1
    if c.params.average_from > 0:       # the registry's `state_fields(average=True)`: A, S last
        if c.params.schedule == NORMALIZED:     # (A before the scale, which stays the row's last)
            c.layout.avg_stamp_at = c.layout.n_row_fields - 1
            c.layout.n_row_fields += 1
        elif c.params.schedule != ADAGRAD or c.params.update != FOBOS:
            c.layout.avg_stamp_at = c.layout.n_row_fields
            c.layout.n_row_fields += 1
            # (l2's rows: A the prefix sum of P in double-double, two fields)
            c.layout.avg_prefix = c.layout.shrink_stamp_at >= 0 and c.layout.threshold_stamp_at < 0
            c.layout.n_row_fields += c.layout.avg_prefix
        c.layout.avg_sum_at = c.layout.n_entry_fields
        c.layout.n_entry_fields += 1
    c.layout.width = c.layout.n_row_fields + c.params.n_outputs * c.layout.n_entry_fields


cdef inline double* entry(Ctx* c, double* row, int k) noexcept nogil:
    return row + c.layout.n_row_fields + k * c.layout.n_entry_fields


cdef inline long long index(Ctx* c, double* row, int k) noexcept nogil:
    """Flat index j * K + k of entry k of a row (for layouts without row fields)."""
    return (row - c.arrays.state) // c.layout.n_entry_fields + k


cdef inline bint wants_factor_memo(Ctx* c) noexcept nogil:
    """Whether the steps keep the row's step factors in c.scratch.factor_memo (the
    normalized schedule's invariant step, but in the single-output fast rows, which keep
    them in their lane block; the invariant AdaGrad rows' new steps,
    `_kernel/steps/rows_invariant.pxd`): sized by the longest row, times K."""
    if c.params.schedule == ADAGRAD:
        return c.params.invariant and c.params.plain_adagrad
    return c.params.schedule == NORMALIZED and c.params.invariant and not c.params.plain_normalized


cdef inline int grow_memo(double** memo, long long* size, long long need) except -1:
    """Make a row memo of `size` doubles hold at least `need` (never shrinks it)."""
    cdef double* grown
    if need > size[0]:
        grown = <double*>realloc(memo[0], need * sizeof(double))
        if grown == NULL:
            raise MemoryError()
        memo[0], size[0] = grown, need
    return 0


cdef inline bint uses_lanes(Ctx* c) noexcept nogil:
    """Whether the single-output rows run their passes in lanes (`_kernel/lanes/lanes.h`): the
    normalized and AdaGrad fast rows (but the invariant step's AdaGrad rows,
    `_kernel/steps/rows_invariant.pxd`), which keep the row's state rows and values in
    c.scratch's lane arrays."""
    return c.params.plain_normalized or (c.params.plain_adagrad and not c.params.invariant)


cdef inline int grow_lanes(Ctx* c, long long need) except -1:
    """Make the lane arrays and slots hold at least `need` entries each (never shrinks
    them), their slots empty; the dummy row zeros."""
    cdef Scratch* s = &c.scratch
    cdef void* rows
    cdef void* block
    cdef long long i
    if need > s.lane_size:
        rows = realloc(s.lane_rows, LANE_SLOTS * need * sizeof(double*))
        if rows == NULL:
            raise MemoryError()
        s.lane_rows = <double**>rows
        block = realloc(s.lane_block, (4 * need + c.layout.width) * sizeof(double))
        if block == NULL:
            raise MemoryError()
        s.lane_block, s.lane_size = <double*>block, need
        for i in range(c.layout.width):
            s.lane_block[4 * need + i] = 0.0
    for i in range(LANE_SLOTS):
        s.lane_tag[i] = -1
    return 0


cdef inline double** lane_slot(Ctx* c, long long at) noexcept nogil:
    """The slot of the step at place `at` of the pass (`Scratch.lane_rows`)."""
    return c.scratch.lane_rows + (at % LANE_SLOTS) * c.scratch.lane_size


cdef inline int ensure_scratch(Ctx* c, long long longest, int batch_size) except -1:
    """Allocate the scratch the coming steps write, once needed: ftrl's (w, sqrt(n))
    memo, the normalized invariant step's factor memo and the lane arrays for rows of up
    to `longest` non-zeros, and for batches the gradient accumulator and feature marks
    (calloc: pages a pass never touches stay unmapped)."""
    cdef long long need = (MEMO_FIELDS * c.params.n_outputs * max(longest, 1)
                           if c.params.update == FTRL else 0)
    cdef long long factors = (longest + 1) * c.params.n_outputs if wants_factor_memo(c) else 0
    grow_memo(&c.scratch.ftrl_memo, &c.scratch.ftrl_memo_size, need)
    grow_memo(&c.scratch.factor_memo, &c.scratch.factor_memo_size, factors)
    if uses_lanes(c):
        grow_lanes(c, longest + LANES_MAX)
    if batch_size > 1 and c.scratch.feature_mark == NULL:
        c.scratch.batch_grads = <double*>calloc(c.params.n_features * c.params.n_outputs, sizeof(double))
        c.scratch.feature_mark = <long long*>calloc(c.params.n_features, sizeof(long long))
        c.scratch.touched_features = <long long*>calloc(c.params.n_features, sizeof(long long))
        if (c.scratch.batch_grads == NULL or c.scratch.feature_mark == NULL
                or c.scratch.touched_features == NULL):
            free_scratch(c)
            raise MemoryError()
    return 0


cdef inline void free_scratch(Ctx* c) noexcept:
    """Release what `ensure_scratch` allocated; the next steps allocate it again."""
    free(c.scratch.ftrl_memo)
    free(c.scratch.factor_memo)
    free(c.scratch.batch_grads)
    free(c.scratch.feature_mark)
    free(c.scratch.touched_features)
    free(c.scratch.lane_rows)
    free(c.scratch.lane_block)
    c.scratch.lane_rows, c.scratch.lane_block, c.scratch.lane_size = NULL, NULL, 0
    c.scratch.ftrl_memo, c.scratch.ftrl_memo_size = NULL, 0
    c.scratch.factor_memo, c.scratch.factor_memo_size = NULL, 0
    c.scratch.batch_grads, c.scratch.feature_mark, c.scratch.touched_features = NULL, NULL, NULL
