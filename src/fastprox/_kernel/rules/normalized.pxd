# The normalized schedule (the contract's `schedule = "normalized"`: NAG, Ross,
# Mineiro & Langford 2013, as Vowpal Wabbit runs it), under FOBOS with penalty none
# or l1: AdaGrad's steps divided by each feature's scale m_j (its largest |x| so far)
# and scaled by one global r_t = sqrt(t / N_t), N_t the sum of the rows' squared
# norms in those scales.
#
# Under l1 a feature's row holds (NORM_STAMP, NORM_SCALE) then, per output, (NORM_W,
# NORM_G, NORM_FACTOR) (`_state`'s offsets): the cumulant R = sum r_tau
# (Cursor.threshold_sum) when the feature was last brought up to date, m_j, and per
# output the weight, AdaGrad's sum of squared gradients and the step factor eta0 /
# (m_j sqrt(G)) (0 while G = 0), frozen while the feature is untouched.
# Then eta_{tau,jk} = FACTOR * r_tau, and the l1 proxes of the untouched steps add up
# to one soft-threshold by alpha FACTOR (R - NORM_STAMP) (FOBOS Proposition 11).
# Without a penalty an untouched weight never moves: a row is m_j then per output
# (NORM_W, NORM_G), 24 bytes a feature where l1's are 40 (the defaults' models), and
# a step's factors are computed from G and m where they are needed.
from libc.math cimport sqrt, fabs
from fastprox._kernel.rules.prox cimport soft_threshold
from fastprox._kernel.base.state cimport Ctx, entry, normalized_l1_rows, NORM_STAMP, NORM_W, NORM_G, NORM_FACTOR
from fastprox._kernel.lanes.pairs cimport pair, new_factors2, normalized_outputs2, normalized_known2

cdef extern from "_kernel/out_of_line.h":
    pass                          # the functions marked FASTPROX_OUT_OF_LINE or _IN_LINE below


cdef inline void normalized_catch_up(Ctx* c, double* row) noexcept nogil:
    """The l1 proxes of the steps since the feature's stamp, as one soft-threshold by
    alpha FACTOR (R - stamp), then the stamp is R. Without a penalty nothing moves, and
    the rows have no stamp (`normalized_l1_rows`)."""
    cdef int k
    cdef double* e
    cdef double spent
    if not normalized_l1_rows(c):
        return
    spent = c.cursor.threshold_sum - row[NORM_STAMP]
    if spent > 0.0:
        for k in range(c.params.n_outputs):
            e = entry(c, row, k)
            e[NORM_W] = caught_up(c, e, spent)
    row[NORM_STAMP] = c.cursor.threshold_sum


cdef inline double caught_up(Ctx* c, double* e, double spent) noexcept nogil:
    """Entry e's weight after the l1 proxes of the steps since its feature's stamp,
    spent = R - stamp > 0 of the cumulant: one soft-threshold by alpha FACTOR spent."""
    return soft_threshold(e[NORM_W], c.params.alpha_pen * e[NORM_FACTOR] * spent)


cdef inline double normalized_current(Ctx* c, double* row, int k) noexcept nogil:
    """w_{T+1,jk} without modifying the state (`normalized_catch_up` of one entry)."""
    cdef double* e = entry(c, row, k)
    cdef double spent
    if not normalized_l1_rows(c):
        return e[NORM_W]
    spent = c.cursor.threshold_sum - row[NORM_STAMP]
    if spent > 0.0:
        return caught_up(c, e, spent)
    return e[NORM_W]


cdef inline double* scale_of(Ctx* c, double* row) noexcept nogil:
    """m_j's field: its row's last (NORM_SCALE under l1, the only one without a penalty)."""
    return row + c.layout.n_row_fields - 1


cdef inline void rescale(Ctx* c, double* row, double x) noexcept nogil:
    """The contract's step 1 for a feature of value x in the row: where |x| exceeds
    m_j, its weights shrink by m_j / |x| (a coordinate with m_j = 0 never had a
    gradient and is 0) and m_j becomes |x|."""
    cdef int k
    cdef double* m = scale_of(c, row)
    cdef double a = fabs(x), ratio
    if a > m[0]:
        if m[0] > 0.0:
            ratio = m[0] / a
            for k in range(c.params.n_outputs):
                entry(c, row, k)[NORM_W] *= ratio
        m[0] = a


cdef inline double row_norm(double x, double m) noexcept nogil:
    """(x / m)^2, the row's squared norm's share of a feature of scale m (after
    `rescale`: m >= |x|; a stored zero adds nothing, whatever m). 1 where |x| = m
    without the division (x / m = +-1 exactly): every non-zero of a binary feature."""
    if x == 0.0:
        return 0.0
    if fabs(x) == m:
        return 1.0
    x = x / m
    return x * x


cdef inline void set_normalized_eta(Ctx* c) noexcept nogil:
    """r_t = sqrt(t / N_t) for the step t = c.cursor.t + 1 (N_t already holds its row): the
    global part of every step of this update, kept in c.cursor.eta (0 while N = 0: no
    feature and no intercept has had a value yet, and every weight is 0)."""
    c.cursor.eta = sqrt(<double>(c.cursor.t + 1) / c.cursor.norm_sum) if c.cursor.norm_sum > 0.0 else 0.0


cdef inline double normalized_factor(Ctx* c, double G, double m) noexcept nogil:
    """eta0 / (m sqrt(G)), 0 while G = 0 (the model file's reader recomputes it)."""
    return c.params.eta0 / (m * sqrt(G)) if G > 0.0 else 0.0


cdef inline double normalized_new_factor(Ctx* c, double* row, int k, double g) noexcept nogil:
    """Entry (j, k)'s step factor once this step's gradient g joins G, G not changed (the
    invariant step's norm needs it before the update): `normalized_accumulate`'s."""
    return normalized_factor(c, entry(c, row, k)[NORM_G] + g * g, scale_of(c, row)[0])


cdef inline void normalized_new_factors(Ctx* c, double* row, double x, double* factors) noexcept nogil:
    """The new step factors of a feature (its row, its value x) for every output k, as
    the invariant step's norm terms take them (`_step.invariant_sigmas`): the entry's
    new step factor (`normalized_new_factor`) into factors[k]. The factors two outputs at
    a time (`_kernel/lanes/pairs.h`: a square root and a division for both lanes), lane by lane the
    same operations: the same bits."""
    cdef int k, K = c.params.n_outputs
    cdef double m = scale_of(c, row)[0]
    cdef pair f
    for k in range(0, K - 1, 2):
        f = new_factors2(entry(c, row, k)[NORM_G], entry(c, row, k + 1)[NORM_G],
                         c.arrays.score_grads[k] * x, c.arrays.score_grads[k + 1] * x, m, c.params.eta0)
        factors[k], factors[k + 1] = f.a, f.b
    if K % 2:
        factors[K - 1] = normalized_new_factor(c, row, K - 1, c.arrays.score_grads[K - 1] * x)


cdef inline double normalized_accumulate(Ctx* c, double* row, double* e, double g) noexcept nogil:
    """G += g^2 for entry e of a row, and its new step factor, returned (as
    `adagrad_step` under AdaGrad) and under l1 kept (NORM_FACTOR) for its catch-up."""
    e[NORM_G] += g * g
    return normalized_keep(c, e, normalized_factor(c, e[NORM_G], scale_of(c, row)[0]))


cdef inline double normalized_keep(Ctx* c, double* e, double factor) noexcept nogil:
    """factor, kept in entry e under l1 (NORM_FACTOR: its catch-up reads it)."""
    if normalized_l1_rows(c):
        e[NORM_FACTOR] = factor
    return factor


cdef inline void normalized_apply(Ctx* c, double* row, int k, double g, double step_g) noexcept nogil:
    """G += g^2, the entry's new factor, and FOBOS's step w - eta step_g with the l1
    prox at threshold alpha eta, eta = FACTOR r_t (`step_g` is g, or the invariant
    step's sigma x)."""
    cdef double* e = entry(c, row, k)
    normalized_fobos_step(c, e, normalized_accumulate(c, row, e, g), step_g)


# FASTPROX_OUT_OF_LINE
cdef inline void normalized_apply_outputs(Ctx* c, double* row, double x) noexcept nogil:
    """`normalized_apply` of the entries of outputs 0 .. K - 1 - K % 2 of a feature of
    value x (one-vs-rest's gradient step; `_step.step` updates an odd K's last), two
    outputs at a time (`_kernel/lanes/pairs.h`: the square root and division once for both lanes),
    lane by lane the scalar operations: the same bits."""
    cdef int k
    cdef double m = scale_of(c, row)[0]
    for k in range(0, c.params.n_outputs - 1, 2):
        normalized_outputs2(entry(c, row, k), entry(c, row, k + 1), c.arrays.score_grads[k] * x,
                            c.arrays.score_grads[k + 1] * x, c.arrays.sigma[k] * x, c.arrays.sigma[k + 1] * x,
                            m, c.params.eta0, c.cursor.eta, c.params.alpha_pen, normalized_l1_rows(c))


# FASTPROX_OUT_OF_LINE
cdef inline void normalized_apply_known_outputs(Ctx* c, double* row, double x, double* factors) noexcept nogil:
    """`normalized_apply_factor` of the entries of outputs 0 .. K - 1 - K % 2 of a
    feature of value x, their new factors in factors[k] (the invariant step's, as
    `normalized_new_factors` kept them), two outputs at a time (`_kernel/lanes/pairs.h`), lane by lane
    the scalar operations: the same bits."""
    cdef int k
    for k in range(0, c.params.n_outputs - 1, 2):
        normalized_known2(entry(c, row, k), entry(c, row, k + 1), c.arrays.score_grads[k] * x,
                          c.arrays.score_grads[k + 1] * x, c.arrays.sigma[k] * x, c.arrays.sigma[k + 1] * x,
                          factors[k], factors[k + 1], c.cursor.eta, c.params.alpha_pen, normalized_l1_rows(c))


cdef inline void normalized_apply_factor(Ctx* c, double* row, int k, double g, double step_g,
                                         double factor) noexcept nogil:
    """`normalized_apply` given the entry's new factor, as the invariant step's norm
    took it (`normalized_new_factor`, the same operations): G += g^2 and the step."""
    cdef double* e = entry(c, row, k)
    e[NORM_G] += g * g
    normalized_fobos_step(c, e, normalized_keep(c, e, factor), step_g)


cdef inline void normalized_fobos_step(Ctx* c, double* e, double factor, double step_g) noexcept nogil:
    """Entry e's FOBOS step of eta = factor r_t where eta > 0: w - eta step_g, then the
    l1 prox at threshold alpha eta."""
    cdef double eta = factor * c.cursor.eta
    if eta > 0.0:
        e[NORM_W] = soft_threshold(e[NORM_W] - eta * step_g, c.params.alpha_pen * eta)
