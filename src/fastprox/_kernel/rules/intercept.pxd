# The unpenalized parameters of each rule: the intercepts b_k and, for the structured
# learners, further entries beside them (transitions, starts, stops: `_structured_step`).
# Each is a pair (sum, squares) in the intercepts' array (rows 0..K-1 the intercepts,
# rows K..K+m-1 the others); their value at the current step and their update are
# written once, on pointers to a pair and its ftrl memo (`unpenalized_value`,
# `unpenalized_update`), and serve both.
from libc.math cimport sqrt
from fastprox._kernel.base.types cimport FOBOS, RDA, FTRL, ADAGRAD, NORMALIZED
from fastprox._kernel.rules.adagrad cimport adagrad_eta
from fastprox._kernel.base.state cimport (Ctx, INTERCEPT_SUM, INTERCEPT_SQUARES, INTERCEPT_FIELDS, MEMO_W,
                              MEMO_ROOT, MEMO_FIELDS)

cdef extern from "_kernel/out_of_line.h":
    pass                          # the functions marked FASTPROX_OUT_OF_LINE or _IN_LINE below


cdef inline double intercept_feature(Ctx* c) noexcept nogil:
    """The intercepts' constant feature s (``intercept_scaling``, 1 by default), or 0
    without an intercept (its gradient is then no step's: `refused` and the margin
    loops start their largest |x| there)."""
    return c.params.intercept_scaling if c.params.fit_intercept else 0.0


cdef inline double intercept_norm(Ctx* c) noexcept nogil:
    """The constant feature's share (s / m)^2 of the normalized schedule's N_t: 1, its
    scale m being its value s (0 without an intercept)."""
    return 1.0 if c.params.fit_intercept else 0.0


cdef inline double intercept_term(Ctx* c, double w) noexcept nogil:
    """The margin's term s w of the constant feature's weight w (the intercept b = s w;
    s = 1 gives w itself, bit for bit)."""
    return c.params.intercept_scaling * w


cdef inline double intercept_margin(Ctx* c) noexcept nogil:
    """A single output's margin before its features: the intercept, s w_0 (`intercept_term`)."""
    return intercept_term(c, c.arrays.intercepts[INTERCEPT_SUM])


cdef inline double* unpenalized_at(Ctx* c, long long u) noexcept nogil:
    """The (sum, squares) pair of unpenalized entry u (0 <= u < K + m): the intercept
    of output u for u < K, else the structured learners' entry u - K."""
    return c.arrays.intercepts + INTERCEPT_FIELDS * u


cdef inline double* unpenalized_memo(Ctx* c, long long u) noexcept nogil:
    """ftrl's memo (value, sqrt(n)) of unpenalized entry u, as `unpenalized_at` numbers them."""
    return c.scratch.intercept_memo + MEMO_FIELDS * u


cdef inline double unpenalized_value(Ctx* c, const double* b, double* memo) noexcept nogil:
    """The value at the current step of the unpenalized entry whose (sum, squares) pair
    is b: b itself (fobos), or the dual rules' argmin of the unpenalized objective.
    ftrl keeps (value, sqrt(n)) in memo for the entry's update (`unpenalized_update`),
    as its features keep theirs in c.scratch.ftrl_memo."""
    cdef double a = b[INTERCEPT_SUM], root
    if c.params.update == FOBOS:
        return a
    if c.params.update == RDA and c.params.schedule != ADAGRAD:
        return dual_intercept(a, sqrt(<double>c.cursor.t) / c.params.eta0)
    root = sqrt(b[INTERCEPT_SQUARES])
    if c.params.update == FTRL:
        memo[MEMO_ROOT] = root
        memo[MEMO_W] = dual_intercept(a, (c.params.delta + root) / c.params.eta0)
        return memo[MEMO_W]
    return dual_intercept(a, (c.params.delta + root) / c.params.eta0)


# FASTPROX_OUT_OF_LINE
cdef inline double intercept_value(Ctx* c, int k) noexcept nogil:
    """The weight w0_k of the intercepts' constant feature at the current step (b_k =
    s w0_k, `intercept_term`; `unpenalized_value`; ftrl's memo in c.scratch.intercept_memo)."""
    return unpenalized_value(c, unpenalized_at(c, k), unpenalized_memo(c, k))


cdef inline double dual_intercept(double a, double beta) noexcept nogil:
    """The unpenalized dual weight for gradient sum a: argmin_b a b + beta b^2 / 2."""
    return -a / beta if beta > 0.0 else 0.0


cdef inline double rule_step_size(Ctx* c, int schedule, const double* b, double g, double m) noexcept nogil:
    """FOBOS's step of the unpenalized entry b once this step's gradient g joins its
    squares (not stored: the invariant step's norm needs it before the update), under
    `schedule` (the learner's; a constant in the fast rows); m is the entry's feature
    scale, which the normalized schedule divides by (the intercepts' s, else 1)."""
    cdef double G = b[INTERCEPT_SQUARES] + g * g
    if schedule == ADAGRAD:
        return adagrad_eta(c, G)
    if schedule == NORMALIZED:
        return c.params.eta0 * c.cursor.eta / (m * sqrt(G)) if G > 0.0 else 0.0
    return c.cursor.eta


cdef inline double intercept_step_size(Ctx* c, int schedule, int k, double q) noexcept nogil:
    """eta^b_t of FOBOS's intercept b_k under `schedule` once this step's gradient q s
    (q: the output's score gradient) joins its G_b."""
    cdef double s = c.params.intercept_scaling
    return rule_step_size(c, schedule, unpenalized_at(c, k), q * s, s)


cdef inline double intercept_norm_term(Ctx* c, double eta) noexcept nogil:
    """The constant feature's term eta s^2 of the invariant step's norm, for the
    intercept's step eta (`intercept_step_size`); 0 without an intercept."""
    cdef double s = c.params.intercept_scaling
    return eta * s * s if c.params.fit_intercept else 0.0


cdef inline double intercept_norm_step(Ctx* c, int schedule, int k, double q, double* eta) noexcept nogil:
    """The invariant step's norm term of intercept b_k (`intercept_norm_term`) once its
    gradient q s joins its G_b, and into eta[0] its step (`intercept_step_size`), which
    its update then takes (`intercept_known_step`): 0 and 0 without an intercept."""
    eta[0] = intercept_step_size(c, schedule, k, q) if c.params.fit_intercept else 0.0
    return intercept_norm_term(c, eta[0])


cdef inline void unpenalized_update(Ctx* c, double* b, const double* memo, double g,
                                    double step_g) noexcept nogil:
    """`rule_update` of the learner's rule, for an entry of feature scale 1."""
    rule_update(c, c.params.update, c.params.schedule, b, memo, g, step_g, 1.0)


cdef inline void rule_update(Ctx* c, int update, int schedule, double* b, const double* memo, double g,
                             double step_g, double m) noexcept nogil:
    """The unpenalized entry b's step with gradient g, after the step's reads of its value
    (ftrl reads the value and sqrt(n) they kept in memo). FOBOS moves b by its step times
    `step_g`: g, or the invariant step's sigma (its squares add g^2). `update` and
    `schedule` are the learner's (constants in the fast rows); m the entry's feature
    scale (`rule_step_size`)."""
    if update == FOBOS:
        if schedule == ADAGRAD or schedule == NORMALIZED:
            fobos_known_step(b, g, step_g, rule_step_size(c, schedule, b, g, m))
        else:
            b[INTERCEPT_SUM] -= c.cursor.eta * step_g
    elif update == RDA:
        b[INTERCEPT_SUM] += g
        b[INTERCEPT_SQUARES] += g * g
    else:
        b[INTERCEPT_SQUARES] += g * g
        b[INTERCEPT_SUM] += g - (sqrt(b[INTERCEPT_SQUARES]) - memo[MEMO_ROOT]) / c.params.eta0 * memo[MEMO_W]


cdef inline void fobos_known_step(double* b, double g, double step_g, double eta) noexcept nogil:
    """FOBOS's step of the unpenalized entry b under a per-coordinate schedule, its step
    size eta (`rule_step_size`, taken before its squares add g^2) known: the squares add
    g^2, and b moves by eta step_g where eta > 0. The invariant step's fast rows pass
    the eta their step norm took, the same operations on the same values: one square
    root and one division a row fewer."""
    b[INTERCEPT_SQUARES] += g * g
    if eta > 0.0:
        b[INTERCEPT_SUM] -= eta * step_g


cdef inline void intercept_known_step(Ctx* c, double q, double sigma, double eta) noexcept nogil:
    """The invariant step's update of intercept b_0 (one output) by its flow sigma, its step
    eta known (`intercept_step_size`, as the step norm took it): `fobos_known_step` of the
    constant feature's weight, gradient q s and move sigma s; nothing without fit_intercept."""
    cdef double s = c.params.intercept_scaling
    if c.params.fit_intercept:
        fobos_known_step(unpenalized_at(c, 0), q * s, sigma * s, eta)


cdef inline void apply_intercept(Ctx* c, int k, double g, double step_g) noexcept nogil:
    """The intercept b_k's step with score gradient g (sum of l' over the step), after
    the step's margins (`unpenalized_update`); nothing without fit_intercept."""
    apply_rule_intercept(c, c.params.update, c.params.schedule, k, g, step_g)


cdef inline void apply_rule_intercept(Ctx* c, int update, int schedule, int k, double g,
                                      double step_g) noexcept nogil:
    """`apply_intercept` under the rule `update`, `schedule` (constants in the fast rows):
    the step of the constant feature's weight, whose gradient is g s (s =
    ``intercept_scaling``; `step_g` likewise times s) and whose scale is s."""
    cdef double s = c.params.intercept_scaling
    if not c.params.fit_intercept:
        return
    rule_update(c, update, schedule, unpenalized_at(c, k), unpenalized_memo(c, k), g * s, step_g * s, s)


# FASTPROX_OUT_OF_LINE
cdef inline void intercept_step(Ctx* c, int k, double g, double step_g) noexcept nogil:
    """`apply_intercept` as a call (`_kernel/out_of_line.h`), for the general step: inlined
    there, the shared update grew `step` past GCC's limits (1.4% more instructions on
    a squared_group pass, callgrind), where it had stayed a call before the update
    was shared with the structured learners' entries."""
    apply_intercept(c, k, g, step_g)
