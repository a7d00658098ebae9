# The averaged iterate (docs/contract.md, "Averaged iterate"), exact and lazy: each
# entry keeps S, the running sum of its iterates u_tau (the weight after tau steps)
# for tau = a .. s (a: the first step averaged, `Params.average_from`; s: the step
# the entry is current at), and a catch-up adds the skipped iterates u_{s+1} .. u_t
# in closed form, so a step costs O(nnz):
#   - FOBOS under a scalar schedule: u_tau = P_tau sign(w_s) max(0, |w_s| / P_s -
#     (Q_tau - Q_s)) (`fobos.pxd`'s cumulants), whose sum up to the step where the max
#     reaches 0 (a search, only where it is 0 at t: Q is monotone; binary, or under l1,
#     where P = 1, interpolating Q: `unit_crossing`) is (|w_s| / P_s
#     + Q_s) sum P_tau - sum P_tau Q_tau, from the history of (Q, P) since the rebase
#     (`Arrays.avg_history`, bounded by the rebase period: memory O(model size)): a
#     range's sum in O(1) as the difference of two double-double prefix sums where that
#     keeps it (a share of the prefix sum of at least PREFIX_SHARE), else in O(log^2)
#     from Fenwick trees over P and P Q (blocks of positive terms: the terms of a
#     geometrically decaying P, which the difference would lose);
#   - the same under l2 (a P stamp alone, Q = 0: `Layout.avg_prefix`), without the
#     history: u_tau = (w_s / P_s) P_tau, so the skipped sum is w_s / P_s times the
#     difference of the prefix sum of P over the averaged steps now
#     (`Cursor.avg_prefix`, double-double, added as P advances) and at the row's stamp,
#     which the row keeps as its A (two fields: hi, lo) in place of the step. That is
#     Xu's (2011) and scikit-learn's averaged form (their S_j = c_j + v_j SP_t, with
#     c_j = S_j(s) - v_j SP_s folded into one correction) kept unfolded: S_j stays a
#     sum of same-signed iterates, and the cancellation of SP_t - SP_s happens in
#     the double-double prefix sums, whose error is about k eps^2 SP_t after k steps,
#     at most 2^-40 of the range's sum where the range's last P is at least
#     PREFIX_SHARE of SP_t: `count_step` rebases before it falls under that (a
#     geometrically decaying P rebases every few hundred to tens of millions of steps
#     instead of walking trees). No history is read or written: a row's catch-up
#     costs a division, three additions and a multiplication more than its weight's;
#   - FOBOS + the normalized schedule under l1: u_tau = sign(w_s) max(0, |w_s| - f (R_tau
#     - R_s)), f = alpha times the entry's frozen step factor, R its cumulant (Q): the
#     same sums with P = 1; without a penalty the weight stays as it is;
#   - RDA and FTRL with AdaGrad's steps, l1 or none: an untouched entry's beta is frozen
#     and its weight after step tau is sign(-s) max(0, |s| - tau alpha - beta rda_rho) /
#     beta: an arithmetic series up to where it reaches 0;
#   - FOBOS + AdaGrad: the step is frozen while a feature is untouched, so u after i
#     proxes is an arithmetic (l1), geometric (l2) or shifted geometric (elastic net)
#     sequence, summed in closed form up to the step where it reaches 0.
# The unpenalized entries (intercepts, a structured model's transitions) change every
# step: their sums (`Arrays.avg_intercepts`) add their values after each step.
from libc.math cimport fabs, copysign, sqrt
from fastprox._kernel.base.types cimport FOBOS, ADAGRAD, NORMALIZED
from fastprox._kernel.rules.prox cimport soft_threshold
from fastprox._kernel.rules.intercept cimport unpenalized_value
from fastprox._kernel.base.state cimport (Ctx, entry, normalized_l1_rows, ROW_LAST_STEP, ADAGRAD_W, ADAGRAD_ETA,
                                          FOBOS_W, NORM_STAMP, NORM_W, NORM_FACTOR, DUAL_SUM, DUAL_SQUARES,
                                          MEMO_FIELDS,
                                          INTERCEPT_FIELDS, AVG_FIELDS, AVG_Q, AVG_P, AVG_NODE_P,
                                          AVG_NODE_PQ, AVG_SUM_P, AVG_SUM_P_LO, AVG_SUM_PQ, AVG_SUM_PQ_LO)
from fastprox._kernel.rules.adagrad cimport adagrad_after, l2_power, l2_geometric_sum, small_log1p, small_exp, small_expm1

cdef extern from "_kernel/out_of_line.h":
    pass                          # the functions marked FASTPROX_OUT_OF_LINE or _IN_LINE below


cdef extern from *:
    """
    /* The least share of its prefix sum (2^-40) at which a range's sum is taken as the
       difference of two double-double prefix sums: their error, about k eps^2 of the
       prefix sum after k steps, is then below 2^-40 of the range's sum for k < 2^26. */
    #define FASTPROX_PREFIX_SHARE 0x1p-40
    """
    const double PREFIX_SHARE "FASTPROX_PREFIX_SHARE"


cdef inline bint averaging(Ctx* c) noexcept nogil:
    """Whether the averaged iterate is kept."""
    return c.params.average_from > 0


cdef inline bint keeps_history(Ctx* c) noexcept nogil:
    """Whether the cumulants' history is kept: averaging with a stamp to catch up
    from (scalar FOBOS: a penalty's P or Q; the normalized schedule: l1's R)."""
    if c.params.average_from == 0 or c.params.schedule == ADAGRAD:
        return False
    if c.params.schedule == NORMALIZED:
        return normalized_l1_rows(c)
    return (c.layout.shrink_stamp_at >= 0 or c.layout.threshold_stamp_at >= 0) and not c.layout.avg_prefix


cdef inline long long average_count(Ctx* c) noexcept nogil:
    """The number of iterates averaged after t steps: t - a + 1 from step a on, else 0."""
    return c.cursor.t - c.params.average_from + 1 if c.cursor.t >= c.params.average_from else 0


cdef inline void history_origin(Ctx* c) noexcept nogil:
    """Entry 0 of the history: the cumulants' origin (P = 1, Q = 0), no sums yet."""
    cdef double* h = c.arrays.avg_history
    h[AVG_Q], h[AVG_P], h[AVG_NODE_P], h[AVG_NODE_PQ] = 0.0, 1.0, 0.0, 0.0
    h[AVG_SUM_P], h[AVG_SUM_P_LO], h[AVG_SUM_PQ], h[AVG_SUM_PQ_LO] = 0.0, 0.0, 0.0, 0.0


cdef inline void dd_add(double* hi, double* lo, double x) noexcept nogil:
    """(hi, lo) += x in double-double: TwoSum's exact rounding error joins lo, and the
    pair is renormalized (Fast2Sum), so that each addition errs by about eps^2 of the sum."""
    cdef double s = hi[0] + x, bp = s - hi[0]
    cdef double l = lo[0] + ((hi[0] - (s - bp)) + (x - bp))
    hi[0] = s + l
    lo[0] = l - (hi[0] - s)


cdef inline void add_prefix(Ctx* c) noexcept nogil:
    """After the cumulants' advance to step t + 1 (l2's rows, `Layout.avg_prefix`): P
    joins its prefix sum over the averaged steps if step t + 1 is one (in
    double-double, as `history_prefix` sums the history's)."""
    if c.cursor.t + 1 >= c.params.average_from:
        dd_add(&c.cursor.avg_prefix, &c.cursor.avg_prefix_lo, c.cursor.shrink_product)


cdef inline void stamp_sums(Ctx* c, double* row, long long t) noexcept nogil:
    """Mark a row's sums as current at step t, the current cumulants': its stamp A
    is the step, or under l2 (`Layout.avg_prefix`) the prefix sum of P at it."""
    if c.layout.avg_prefix:
        row[c.layout.avg_stamp_at] = c.cursor.avg_prefix
        row[c.layout.avg_stamp_at + 1] = c.cursor.avg_prefix_lo
    else:
        row[c.layout.avg_stamp_at] = t


# FASTPROX_IN_LINE
cdef inline double prefix_sum(Ctx* c, double w, double Ps, const double* row) noexcept nogil:
    """The sum of the iterates w P_tau / P_s over the averaged steps tau the row skipped
    since its stamp (l2's rows, `Layout.avg_prefix`): w / P_s times the difference of the
    prefix sums of P now and at the stamp (the history's `range_sums` with the stamp's
    prefix read from the row). `count_step` rebases before P falls under PREFIX_SHARE
    of the prefix sum, so that the difference keeps every range (it ends with a P)."""
    cdef const double* a = row + c.layout.avg_stamp_at
    return (w / Ps) * ((c.cursor.avg_prefix - a[0]) + (c.cursor.avg_prefix_lo - a[1]))


cdef inline void history_prefix(double* hist, long long i) noexcept nogil:
    """History entry i's (>= 1) prefix sums of P and P Q: entry i - 1's plus its own
    terms (after each step, and for every entry where a saved history is restored)."""
    cdef double* h = hist + AVG_FIELDS * i
    cdef const double* g = h - AVG_FIELDS
    h[AVG_SUM_P], h[AVG_SUM_P_LO], h[AVG_SUM_PQ], h[AVG_SUM_PQ_LO] = (g[AVG_SUM_P], g[AVG_SUM_P_LO],
                                                                      g[AVG_SUM_PQ], g[AVG_SUM_PQ_LO])
    dd_add(h + AVG_SUM_P, h + AVG_SUM_P_LO, h[AVG_P])
    dd_add(h + AVG_SUM_PQ, h + AVG_SUM_PQ_LO, h[AVG_P] * h[AVG_Q])


cdef inline long long lowbit(long long i) noexcept nogil:
    """The lowest set bit of i > 0: the length of Fenwick node i's block (i - lowbit, i]."""
    return i & -i


# FASTPROX_IN_LINE
cdef inline void range_sums(Ctx* c, long long lo, long long hi, double* sum_p, double* sum_pq) noexcept nogil:
    """sum P_i and sum P_i Q_i over history entries lo .. hi (1 <= lo): differences of the
    prefix sums at hi and lo - 1 where each is at least PREFIX_SHARE of its prefix sum
    at hi, else the Fenwick walk (`tree_sums`, counted in `Cursor.history_walks`). A
    prefix sum of P Q that is 0 at hi (l2's, Q = 0: its terms are not negative) is 0 at
    lo - 1 too, its parts as well: their difference, 0, is taken as read."""
    cdef const double* a = c.arrays.avg_history + AVG_FIELDS * (lo - 1)
    cdef const double* b = c.arrays.avg_history + AVG_FIELDS * hi
    sum_p[0] = (b[AVG_SUM_P] - a[AVG_SUM_P]) + (b[AVG_SUM_P_LO] - a[AVG_SUM_P_LO])
    sum_pq[0] = 0.0
    if b[AVG_SUM_PQ] != 0.0:
        sum_pq[0] = (b[AVG_SUM_PQ] - a[AVG_SUM_PQ]) + (b[AVG_SUM_PQ_LO] - a[AVG_SUM_PQ_LO])
    if not (sum_p[0] >= PREFIX_SHARE * b[AVG_SUM_P] and sum_pq[0] >= PREFIX_SHARE * b[AVG_SUM_PQ]):
        c.cursor.history_walks += 1
        tree_sums(c.arrays.avg_history, lo, hi, sum_p, sum_pq)


# FASTPROX_OUT_OF_LINE
cdef inline void tree_sums(const double* hist, long long lo, long long hi, double* sum_p,
                           double* sum_pq) noexcept nogil:
    """sum P_i and sum P_i Q_i over history entries lo .. hi (1 <= lo), from the Fenwick
    nodes whose blocks lie inside the range and single entries."""
    cdef double sp = 0.0, spq = 0.0
    cdef const double* h
    while hi >= lo:
        h = hist + AVG_FIELDS * hi
        if hi - lowbit(hi) + 1 >= lo:
            sp += h[AVG_NODE_P]
            spq += h[AVG_NODE_PQ]
            hi -= lowbit(hi)
        else:
            sp += h[AVG_P]
            spq += h[AVG_P] * h[AVG_Q]
            hi -= 1
    sum_p[0], sum_pq[0] = sp, spq


cdef inline double unpenalized_now(Ctx* c, long long u) noexcept nogil:
    """The value of unpenalized entry u (0 <= u < K + m) at the current step, the
    state and the memos left as they are."""
    cdef double memo[MEMO_FIELDS]
    return unpenalized_value(c, c.arrays.intercepts + INTERCEPT_FIELDS * u, memo)


# FASTPROX_OUT_OF_LINE
cdef inline void average_end_step(Ctx* c) noexcept nogil:
    """After step t (counted): add the unpenalized entries' values to their sums if t is
    averaged, and record the cumulants of step t in the history (its entry since_rebase
    + 1: `end_step` counts the step after this)."""
    cdef long long u, i, j
    cdef double* h
    cdef double* hist = c.arrays.avg_history
    if c.cursor.t >= c.params.average_from:
        for u in range(c.params.n_outputs + c.params.n_unpenalized):
            c.arrays.avg_intercepts[u] += unpenalized_now(c, u)
    if keeps_history(c):
        i = c.cursor.since_rebase + 1
        h = c.arrays.avg_history + AVG_FIELDS * i
        h[AVG_Q], h[AVG_P] = c.cursor.threshold_sum, c.cursor.shrink_product
        h[AVG_NODE_P], h[AVG_NODE_PQ] = h[AVG_P], h[AVG_P] * h[AVG_Q]
        j = i - 1
        while j > i - lowbit(i):            # the nodes whose blocks make up (i - lowbit(i), i - 1]
            h[AVG_NODE_P] += hist[AVG_FIELDS * j + AVG_NODE_P]
            h[AVG_NODE_PQ] += hist[AVG_FIELDS * j + AVG_NODE_PQ]
            j -= lowbit(j)
        history_prefix(hist, i)


cdef inline double history_u(double aw, double Ps, double Qs, double f, const double* h) noexcept nogil:
    """|u_tau| of an entry of magnitude aw stamped at (Ps, Qs), at history entry h, as
    the catch-ups compute the weight: `soft_threshold(w P / P_s, P (Q - Q_s))` (scalar
    FOBOS, f = 1), `soft_threshold(w, f (R - R_s))` (normalized, P = P_s = 1)."""
    return fabs(aw * (h[AVG_P] / Ps)) - f * h[AVG_P] * (h[AVG_Q] - Qs)


cdef inline double constant_sum(Ctx* c, double w, long long s) noexcept nogil:
    """The sum of the iterates over the averaged steps s+1 .. t of an entry whose weight
    stays w while it is untouched (no penalty): w times their count (the skipped sums
    without a history, and the normalized rows' averaged catch-up in line,
    `_kernel/steps/rows_average.pxd`, which knows it keeps none)."""
    cdef long long lo = max(s + 1, c.params.average_from), hi = c.cursor.t
    return 0.0 if w == 0.0 or lo > hi else w * (hi - lo + 1)


cdef inline void unpenalized_catch_up(Ctx* c, double* row) noexcept nogil:
    """`catch_up` of a row without a penalty and with one entry, in line (the normalized
    schedule's, scalar fobos's: the weight is the entry's first field, NORM_W = FOBOS_W =
    0): the weight stays as it is while the row is untouched, so the skipped averaged
    iterates sum to the weight times their count (`average.constant_sum`, without
    `history_sum`'s test for a history); the stamp A is the step."""
    cdef double* e = row + c.layout.n_row_fields
    e[c.layout.avg_sum_at] += constant_sum(c, e[NORM_W], <long long>row[c.layout.avg_stamp_at])
    row[c.layout.avg_stamp_at] = c.cursor.t


# FASTPROX_IN_LINE
cdef inline double history_sum(Ctx* c, double w, long long s, double Ps, double Qs, double f,
                               bint alive) noexcept nogil:
    """The sum of the iterates u_tau (`history_u`, signed as w) over the averaged steps tau
    in s+1 .. t of an entry of weight w stamped at step s with (Ps, Qs), from the history
    (`range_sums`): all of them where its catch-up to t leaves it non-zero (`alive`, or
    u_t > 0; every u_tau > 0 then, since Q does not decrease), else those up to where the
    soft threshold reaches 0 (`crossing_sum`). The caller knows the history is kept."""
    cdef long long lo = max(s + 1, c.params.average_from), hi = c.cursor.t
    cdef long long base = hi - c.cursor.since_rebase
    cdef double sum_p, sum_pq
    if w == 0.0 or lo > hi:
        return 0.0
    if not alive and not history_u(fabs(w), Ps, Qs, f, c.arrays.avg_history + AVG_FIELDS * (hi - base)) > 0.0:
        return crossing_sum(c, w, lo - base, hi - base, Ps, Qs, f)
    range_sums(c, lo - base, hi - base, &sum_p, &sum_pq)
    return copysign((fabs(w) / Ps) * sum_p - f * (sum_pq - Qs * sum_p), w)


# FASTPROX_OUT_OF_LINE
cdef inline double crossing_sum(Ctx* c, double w, long long first, long long last, double Ps, double Qs,
                                double f) noexcept nogil:
    """`history_sum` over history entries first .. last of an entry whose soft threshold is
    0 at last: 0 if it is at first, else the sum up to the last positive entry (a binary
    search: Q is monotone; in a history of P = 1, `unit_crossing`)."""
    cdef long long lo = first
    cdef double aw = fabs(w), sum_p, sum_pq
    cdef const double* hist = c.arrays.avg_history
    if not history_u(aw, Ps, Qs, f, hist + AVG_FIELDS * first) > 0.0:
        return 0.0
    if unit_history(c):
        first = unit_crossing(hist, aw, Qs, f, first, last)
    else:
        first = bisect_crossing(hist, aw, Ps, Qs, f, first, last)
    range_sums(c, lo, first, &sum_p, &sum_pq)
    return copysign((aw / Ps) * sum_p - f * (sum_pq - Qs * sum_p), w)


cdef inline long long bisect_crossing(const double* hist, double aw, double Ps, double Qs, double f,
                                      long long first, long long last) noexcept nogil:
    """`crossing_sum`'s last entry in first .. last - 1 whose `history_u` is positive, given
    that first's is and last's is not: a binary search."""
    cdef long long mid
    while last - first > 1:
        mid = first + (last - first) // 2
        if history_u(aw, Ps, Qs, f, hist + AVG_FIELDS * mid) > 0.0:
            first = mid
        else:
            last = mid
    return first


cdef inline bint unit_history(Ctx* c) noexcept nogil:
    """Whether the history's P is 1 at every entry, and so each stamp's: the normalized
    schedule's rows (their cumulant is R alone) and scalar FOBOS's without a P stamp
    (`set_layout`: l1, whose share 1 leaves P as it is, `fobos.advance_separable`)."""
    return c.params.schedule == NORMALIZED or c.layout.shrink_stamp_at < 0


cdef inline long long unit_crossing(const double* hist, double aw, double Qs, double f, long long first,
                                    long long last) noexcept nogil:
    """`crossing_sum`'s last positive entry in a history of P = 1 (`unit_history`), where
    `history_u` is aw - f (Q - Qs) to the bit (P / Ps, aw P and f P are exact): it does
    not rise with Q, which does not fall, so the positive entries are a prefix of the
    range and every search finds the binary search's entry. This one interpolates Q
    between the bracket's ends (first's positive, last's not), bisecting after a probe
    that did not halve the bracket: a few probes on the smooth Q of a schedule where the
    binary search takes log2 of the range, and at most twice its count."""
    cdef double q_lo = hist[AVG_FIELDS * first + AVG_Q], q_hi = hist[AVG_FIELDS * last + AVG_Q], q, g
    cdef double target = Qs + aw / f                # (f > 0: last's u is not positive, aw > 0)
    cdef long long width, mid
    cdef bint bisect = False
    while last - first > 1:
        width = last - first
        if bisect:
            mid = first + width // 2
        else:
            g = (target - q_lo) / (q_hi - q_lo) * width     # (NaN or out of range: clamped)
            mid = first + 1 if not g >= 1.0 else last - 1 if not g < width - 1 else first + <long long>g
        q = hist[AVG_FIELDS * mid + AVG_Q]
        if aw - f * (q - Qs) > 0.0:
            first, q_lo = mid, q
        else:
            last, q_hi = mid, q
        bisect = not bisect and 2 * (last - first) > width
    return first


# FASTPROX_IN_LINE
cdef inline double scalar_history_sum(Ctx* c, double* row, int k, bint alive) noexcept nogil:
    """The sum of entry k's iterates over the averaged steps the row skipped since its
    stamp A, from its weight and its P, Q stamps (scalar FOBOS with a penalty: a history
    is kept; `alive`: the entry's catch-up leaves it non-zero)."""
    cdef double Ps = 1.0, Qs = 0.0
    if c.layout.shrink_stamp_at >= 0:
        Ps = row[c.layout.shrink_stamp_at]
    if c.layout.threshold_stamp_at >= 0:
        Qs = row[c.layout.threshold_stamp_at]
    return history_sum(c, entry(c, row, k)[FOBOS_W], <long long>row[c.layout.avg_stamp_at], Ps, Qs, 1.0, alive)


# FASTPROX_OUT_OF_LINE
cdef inline double scalar_skipped_sum(Ctx* c, double* row, int k, bint alive) noexcept nogil:
    """`scalar_history_sum`, under l2 `prefix_sum`, or without a penalty the weight
    times the steps' count."""
    if c.layout.avg_prefix:
        return prefix_sum(c, entry(c, row, k)[FOBOS_W], row[c.layout.shrink_stamp_at], row)
    if not keeps_history(c):
        return constant_sum(c, entry(c, row, k)[FOBOS_W], <long long>row[c.layout.avg_stamp_at])
    return scalar_history_sum(c, row, k, alive)


# FASTPROX_OUT_OF_LINE
cdef inline double normalized_skipped_sum(Ctx* c, double* row, int k) noexcept nogil:
    """The same under the normalized schedule: the l1 threshold alpha FACTOR (R - R_s)
    (`normalized.caught_up`); without a penalty the weight itself."""
    cdef double* e = entry(c, row, k)
    if not normalized_l1_rows(c):
        return constant_sum(c, e[NORM_W], <long long>row[c.layout.avg_stamp_at])
    return history_sum(c, e[NORM_W], <long long>row[c.layout.avg_stamp_at], 1.0, row[NORM_STAMP],
                       c.params.alpha_pen * e[NORM_FACTOR], False)


# FASTPROX_OUT_OF_LINE
cdef inline double adagrad_skipped_sum(Ctx* c, double* row, int k) noexcept nogil:
    """The sum of entry k's iterates over the averaged steps last+1 .. t that the row
    skipped (last: its last step), each `adagrad_after` i proxes with the frozen step:
    sum_{i=i0}^{n} of |w| - i a (l1), w r^i (l2), (|w| + c) r^i - c (elastic net,
    c = rho / (1 - rho)), r = 1 / (1 + a (1 - rho)), n the last i where it is non-zero;
    under `Params.l2_powering` the geometric sums from `l2_power`'s 1 - r^cnt, without
    cancellation; else by the series or libm's exp, log1p and expm1."""
    cdef double* e = entry(c, row, k)
    cdef double w = e[ADAGRAD_W], aw = fabs(w), a, lost, lam, geo, cc
    cdef long long last = <long long>row[ROW_LAST_STEP]
    cdef long long i0 = max(<long long>1, c.params.average_from - last), n = c.cursor.t - last, lo, mid, cnt
    if w == 0.0 or i0 > n:
        return 0.0
    if c.params.alpha_pen == 0.0:
        return w * (n - i0 + 1)
    if c.params.l1_share > 0.0 and adagrad_after(c, w, e[ADAGRAD_ETA], n) == 0.0:
        if adagrad_after(c, w, e[ADAGRAD_ETA], i0) == 0.0:
            return 0.0
        lo = i0                             # non-zero at lo, zero at n
        while n - lo > 1:
            mid = lo + (n - lo) // 2
            if adagrad_after(c, w, e[ADAGRAD_ETA], mid) != 0.0:
                lo = mid
            else:
                n = mid
        n = lo
    cnt = n - i0 + 1
    a = c.params.alpha_pen * e[ADAGRAD_ETA]
    if c.params.l1_share == 1.0:
        return copysign(cnt * aw - a * (<double>(i0 + n) * cnt / 2.0), w)
    a = a * (1.0 - c.params.l1_share)
    if c.params.l2_powering:
        l2_power(a, cnt, &lost)
        geo = l2_geometric_sum(lost, a, cnt)            # sum_{i=1}^{cnt} r^i
        if i0 > 1:
            geo = geo * l2_power(a, i0 - 1, &lost)      # sum_{i=i0}^{n} r^i
    else:
        lam = -small_log1p(a)       # log r
        geo = small_exp(i0 * lam) * (small_expm1(cnt * lam) / small_expm1(lam))     # sum_{i0}^{n} r^i
    if c.params.l1_share == 0.0:
        return w * geo
    cc = c.params.l1_share / (1.0 - c.params.l1_share)
    return copysign(aw * geo + cc * (geo - cnt), w)


cdef inline double dual_beta(Ctx* c, const double* e) noexcept nogil:
    """An entry's beta (delta + sqrt(G or n)) / eta0, as `step.weight` and `ftrl_weight` take it."""
    return (c.params.delta + sqrt(e[DUAL_SQUARES])) * c.params.inv_eta0


cdef inline double dual_at(Ctx* c, double s, double beta, double T) noexcept nogil:
    """The dual weight of gradient sum s (z for FTRL) at T steps summed (`dual.dual_weight`
    with its constants at T: l1 or none, no l2 weight)."""
    if not beta > 0.0:
        return 0.0
    return soft_threshold(-s, T * c.params.alpha_pen * c.params.l1_share + beta * c.params.rda_rho) / beta


cdef inline long long dual_last_nonzero(Ctx* c, double s, double beta, long long lo, long long hi) noexcept nogil:
    """The last step tau in lo .. hi - 1 whose weight `dual_at`(s, beta, tau) is not 0,
    given that lo's is not and hi's is: from where the threshold tau alpha + beta rda_rho
    meets |s| (alpha > 0), stepped to the exact boundary of the weight's own test (not 0
    up to it, 0 after: the threshold does not decrease with tau)."""
    cdef double guess = (fabs(s) - beta * c.params.rda_rho) / (c.params.alpha_pen * c.params.l1_share)
    cdef long long mid = lo if not guess > lo else hi - 1 if not guess < hi - 1 else <long long>guess
    while mid + 1 < hi and dual_at(c, s, beta, mid + 1) != 0.0:
        mid += 1
    while dual_at(c, s, beta, mid) == 0.0:
        mid -= 1
    return mid


# FASTPROX_OUT_OF_LINE
cdef inline double dual_skipped_sum(Ctx* c, double* row, int k) noexcept nogil:
    """The sum of entry k's weights after the averaged steps tau in A+1 .. t that the row
    skipped: (|s| - beta rda_rho - tau alpha) / beta, signed as -s, to the last positive."""
    cdef double* e = entry(c, row, k)
    cdef double beta = dual_beta(c, e), first_w
    cdef long long lo = max(<long long>row[c.layout.avg_stamp_at] + 1, c.params.average_from)
    cdef long long hi = c.cursor.t, mid, cnt
    if lo > hi:
        return 0.0
    first_w = dual_at(c, e[DUAL_SUM], beta, lo)
    if first_w == 0.0 or c.params.alpha_pen == 0.0:
        return first_w * (hi - lo + 1)      # (no penalty: the weight stays as it is)
    if dual_at(c, e[DUAL_SUM], beta, hi) == 0.0:
        hi = dual_last_nonzero(c, e[DUAL_SUM], beta, lo, hi)
    cnt = hi - lo + 1
    return copysign(cnt * (fabs(e[DUAL_SUM]) - beta * c.params.rda_rho)
                    - c.params.alpha_pen * (<double>(lo + hi) * cnt / 2.0), -e[DUAL_SUM]) / beta


cdef inline void dual_catch_up(Ctx* c, double* row) noexcept nogil:
    """The dual rules' averaged catch-up: the skipped weights join the sums, the row's
    stamp A is the current step (their weights themselves need none); nothing to do
    where A is (a feature met again in the step: every sum would add 0)."""
    cdef int k
    if row[c.layout.avg_stamp_at] >= c.cursor.t:
        return
    for k in range(c.params.n_outputs):
        entry(c, row, k)[c.layout.avg_sum_at] += dual_skipped_sum(c, row, k)
    row[c.layout.avg_stamp_at] = c.cursor.t


cdef inline void add_dual_iterate(Ctx* c, double* row) noexcept nogil:
    """After this step's update of a dual row (step t + 1): its weights at T = t + 1 join
    their sums if the step is averaged; its stamp A is the step."""
    cdef int k
    cdef double* e
    if c.cursor.t + 1 >= c.params.average_from:
        for k in range(c.params.n_outputs):
            e = entry(c, row, k)
            e[c.layout.avg_sum_at] += dual_at(c, e[DUAL_SUM], dual_beta(c, e), c.cursor.t + 1)
    row[c.layout.avg_stamp_at] = c.cursor.t + 1


cdef inline double skipped_sum(Ctx* c, double* row, int k) noexcept nogil:
    """The sum of entry k's skipped averaged iterates, by the rule (`Params.average_from`
    > 0: fobos under a scalar schedule, AdaGrad or the normalized one, a separable penalty)."""
    if c.params.update != FOBOS:
        return dual_skipped_sum(c, row, k)
    if c.params.schedule == ADAGRAD:
        return adagrad_skipped_sum(c, row, k)
    if c.params.schedule == NORMALIZED:
        return normalized_skipped_sum(c, row, k)
    return scalar_skipped_sum(c, row, k, False)


cdef inline double average_current(Ctx* c, double* row, int k, double w) noexcept nogil:
    """The averaged weight of entry k of a row whose current weight is w: (S + the
    skipped iterates' sum) / the count; w itself before the first averaged step."""
    cdef long long n = average_count(c)
    if n == 0:
        return w
    return (entry(c, row, k)[c.layout.avg_sum_at] + skipped_sum(c, row, k)) / n


cdef inline void add_iterate(Ctx* c, double* row) noexcept nogil:
    """After this step's update of a row (step t + 1): its entries' new weights join their
    sums if the step is averaged; its stamp A is the step (scalar schedules)."""
    add_iterates(c, row, c.params.n_outputs)


# FASTPROX_IN_LINE
cdef inline void add_iterates(Ctx* c, double* row, int n_outputs) noexcept nogil:
    """`add_iterate` of a row of n_outputs entries (the one-output row kernels give 1:
    no loop)."""
    cdef int k
    cdef double* e
    if c.cursor.t + 1 >= c.params.average_from:
        for k in range(n_outputs):
            e = entry(c, row, k)
            e[c.layout.avg_sum_at] += e[FOBOS_W]
    if c.params.schedule != ADAGRAD:      # (AdaGrad's rows: their last step, `stamp`'s)
        stamp_sums(c, row, c.cursor.t + 1)
