# The step's score gradients q (binary losses per output, or a multinomial loss over
# the K scores) and the guard that stops a step before an update could overflow.
from libc.float cimport DBL_MAX
from libc.math cimport exp, log, fabs
from fastprox._kernel.base.types cimport value_t
from fastprox._kernel.losses.losses cimport dloss_and_value, dlog_loss_deferred, LOG
from fastprox._kernel.base.state cimport Ctx
from fastprox._kernel.rules.intercept cimport intercept_feature

cdef extern from *:
    """
    /* A step whose gradient |q x| reaches this stops before its update (`refused`): below
       it, a square is at most 2^960, and 2^63 steps of them sum to less than DBL_MAX, so
       no accumulator (AdaGrad's G, FTRL's n, RDA's sums) can overflow. */
    #define FASTPROX_GRADIENT_MAX 0x1p480
    """
    const double GRADIENT_MAX "FASTPROX_GRADIENT_MAX"


cdef inline double gradients(Ctx* c, double y, double weight) noexcept nogil:
    """q_k = weight * loss'(p_k, y_k); returns the weighted loss. (A batch sums these
    and divides by its size once, as the mean in the contract does.) Each output's
    e^-|y p| (the log loss at weight 1: `gradient`) goes to c.arrays.exp_margins, for
    the invariant step's sigma."""
    cdef int k
    cdef double yk, total = 0.0
    if c.params.multinomial:
        for k in range(c.params.n_outputs):
            c.cursor.nonfinite |= not fabs(c.arrays.scores[k]) <= DBL_MAX
        return multinomial_gradients(c, <int>y, weight)
    for k in range(c.params.n_outputs):
        yk = (1.0 if k == <int>y else -1.0) if c.params.ovr else y
        c.arrays.score_grads[k] = gradient(c, c.arrays.scores[k], yk, weight, &total)
        c.arrays.exp_margins[k] = c.cursor.exp_margin
    return total


cdef inline double gradient(Ctx* c, double p, double y, double weight, double* total) noexcept nogil:
    """`loss_gradient` of the learner's loss."""
    return loss_gradient(c, c.params.loss, p, y, weight, total)


cdef inline double loss_gradient(Ctx* c, int loss, double p, double y, double weight,
                                 double* total) noexcept nogil:
    """weight * loss'(p, y) of one output; adds the weighted loss to total[0] (the log
    loss's logarithm deferred to c.cursor.deferred_logs; at weight 1, its e^-|y p| left
    in c.cursor.exp_margin). `loss` is the learner's (a constant in the fast rows of the
    log loss, `_kernel/steps/rows.pxd`)."""
    cdef double value, q
    c.cursor.nonfinite |= not fabs(p) <= DBL_MAX
    if loss == LOG and weight == 1.0:
        return dlog_loss_deferred(p, y, total, &c.cursor.deferred_logs, &c.cursor.exp_margin)
    q = dloss_and_value(loss, p, y, c.params.epsilon, &value) * weight
    total[0] += weight * value
    return q


cdef inline double multinomial_gradients(Ctx* c, int y, double weight) noexcept nogil:
    """Score gradients q of the multinomial losses (the contract's multiclass table):
    softmax(p) - e_y for log; Crammer-Singer's +1 / -1 on the most violating class and
    y for hinge. Returns the weighted loss."""
    cdef int k, top = 0
    cdef double m, z = 0.0, s
    if c.params.loss == LOG:
        m = c.arrays.scores[0]
        for k in range(1, c.params.n_outputs):
            m = max(m, c.arrays.scores[k])
        for k in range(c.params.n_outputs):
            z += exp(c.arrays.scores[k] - m)
        for k in range(c.params.n_outputs):
            c.arrays.score_grads[k] = (exp(c.arrays.scores[k] - m) / z - (1.0 if k == y else 0.0)) * weight
        return weight * (log(z) + m - c.arrays.scores[y])
    for k in range(c.params.n_outputs):
        c.arrays.score_grads[k] = 0.0
        if c.arrays.scores[k] + (k != y) > c.arrays.scores[top] + (top != y):
            top = k
    s = c.arrays.scores[top] + 1.0 - c.arrays.scores[y]
    if top == y or s <= 0.0:
        return 0.0
    c.arrays.score_grads[top] = weight
    c.arrays.score_grads[y] = -weight
    return weight * s


cdef inline bint refused(Ctx* c, double q, double x) noexcept nogil:
    """Whether the step must stop before its update: a margin was not finite, or its
    gradient q x reaches GRADIENT_MAX (q the row's largest |loss derivative|, x its
    largest |value|, which the fast rows take in their margin loops: `abs_max2`, or the
    lanes of `_kernel/lanes/pairs.h`'s `fastprox_top` in scalar fobos's)."""
    if not fabs(q) * x < GRADIENT_MAX and not c.cursor.nonfinite:
        c.cursor.nonfinite = c.cursor.steep = True
    return c.cursor.nonfinite


cdef inline double abs_max2(double m, const value_t* data, long long nz, bint two) noexcept nogil:
    """max(m, |x_nz|, |x_(nz+1)|) for the loops that take non-zeros two at a time
    (x_(nz+1) is x_nz again for an odd row's last one, `entries`)."""
    cdef double a = fabs(<double>data[nz]), b = fabs(<double>data[nz + two])
    a = a if a > b else b
    return a if a > m else m


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
    cdef double m = fabs(c.arrays.score_grads[0])
    for k in range(1, c.params.n_outputs):
        m = m if fabs(c.arrays.score_grads[k]) <= m else fabs(c.arrays.score_grads[k])
    return m
