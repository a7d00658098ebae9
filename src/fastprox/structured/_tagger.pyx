# cython: boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""SequenceTagger's compiled loops (the contract's "Structured outputs", sequences):
training over a batch of sequences and decoding them, without the GIL.

Training drives `_structured_step`'s C-level API per sequence: the items' scores at
the current step (`emissions`), the m = K^2 + 2K unpenalized entries (transitions
A, row-major, then the starts s and the stops e: `unpenalized_current`), the
decoder (`viterbi`: perceptron; cost-augmented Viterbi with the Hamming cost: hinge;
`forward_backward`: log), then `structured_step` with the items' score gradients
q_i = mu_i - onehot(y_i) and the unpenalized entries' gradient (the decoded
transition, start and stop counts, or their expectations, less the gold ones).
O(nnz K + n K^2) per sequence; the perceptron's and the hinge's steps update only the
items decoded wrong (`step_wrong_items`). The loss of each sequence at the scores it was
decoded with is its progressive loss:

- perceptron: score(y^) - score(y), y^ = argmax score;
- hinge: max(0, score(y^) + Delta(y, y^) - score(y)), y^ the cost-augmented argmax;
  the gradient is 0 where that loss is not positive;
- log: log Z - score(y).

score(y) is summed in Viterbi's order (`gold_score`), so that a decoded sequence
equal to the gold one has loss 0 exactly.
"""
from libc.stdint cimport int64_t
from libc.string cimport memset

from fastprox._numpy import np
from fastprox._kernels cimport Learner, chosen_lanes
from fastprox._kernel.base.types cimport value_t, index_t
from fastprox._kernel.base.state cimport Ctx
from fastprox._kernel.base.csr cimport csr_kind
from fastprox._kernel.steps.structured cimport (structured_scratch, emissions, unpenalized_current, structured_step,
                                        release_items, refuse_example)
from fastprox._kernel.decoders.viterbi cimport viterbi
from fastprox._kernel.decoders.forward_backward cimport forward_backward, forward_backward_work
from fastprox._kernel.lanes.lanes cimport lanes_t
from cython cimport longlong

#: The losses' codes in the loops, by name (SequenceTagger's `loss`).
LOSSES = {"perceptron": 0, "hinge": 1, "log": 2}
cdef enum:
    PERCEPTRON = 0
    HINGE = 1
    LOG = 2


cdef struct Scratch:
    # The per-sequence buffers of the training loop, sized for the longest sequence.
    double* E           # n K emission scores
    double* q           # n K score gradients
    double* u           # m: the unpenalized entries' gradient
    double* values      # m: their values, then the gold counts
    double* delta       # 2 K (Viterbi)
    double* work        # forward_backward_work(n, K)
    double* mu          # n K marginals
    double* xi          # K K pair marginals
    int64_t* labels     # n: the decoded labels
    int64_t* plain      # n: the plain Viterbi labels (progressive errors)
    int64_t* back       # (n - 1) K backpointers


cdef class _Buffers:
    """The memory of a `Scratch`, held by Python while the loop runs."""
    cdef double[::1] doubles
    cdef int64_t[::1] integers
    cdef Scratch s

    def __init__(self, Py_ssize_t longest, Py_ssize_t K, Py_ssize_t m, bint log):
        longest = max(longest, 1)
        cdef Py_ssize_t nk = longest * K, fb = forward_backward_work(longest, K) if log else 0
        self.doubles = np.empty(3 * nk + 2 * m + 2 * K + fb + K * K)
        self.integers = np.empty(2 * longest + max(longest - 1, 1) * K, np.int64)
        cdef double* d = &self.doubles[0]
        cdef int64_t* i = &self.integers[0]
        self.s.E, self.s.q, self.s.mu = d, d + nk, d + 2 * nk
        self.s.u = d + 3 * nk
        self.s.values = self.s.u + m
        self.s.delta = self.s.values + m
        self.s.xi = self.s.delta + 2 * K
        self.s.work = self.s.xi + K * K
        self.s.labels, self.s.plain, self.s.back = i, i + longest, i + 2 * longest


def fit_sequences(Learner learner not None, data, indices, indptr, const int64_t[::1] y not None,
                  const int64_t[::1] starts not None, const int64_t[::1] order not None,
                  const double[::1] weights not None, int loss, double[::1] losses not None,
                  int64_t[::1] errors not None, example_base, const long long[::1] support_ptr=None,
                  const int[::1] support_labels=None):
    """One step per sequence ``order[0], order[1], ...`` (sequence r's items are the
    CSR rows starts[r] .. starts[r + 1] - 1, their labels y there), of weight
    weights[r] (weights empty: 1). ``losses`` (empty, or one per entry of ``order``)
    receives each sequence's progressive loss; ``errors`` (likewise) the items its
    plain Viterbi decoding got wrong before its step. The caller has checked the
    arrays (rows within the model's features, labels in 0..K-1, starts from 0,
    non-decreasing, up to the rows). A sequence refused by the step (a score not
    finite, a gradient that could overflow the state) raises ValueError naming
    sequence ``example_base + position`` in this call; the ones before it stay.
    ``support_ptr`` and ``support_labels`` (None: every label), the emission support
    as CSR (feature j's labels, sorted, ``support_labels[support_ptr[j]:support_ptr[j +
    1]]``; the caller has checked it), restrict W's learning to those entries
    (`Ctx.support`) for this call."""
    cdef Ctx* c = &learner.c
    kind = csr_kind(data, indices)
    if support_ptr is not None:
        c.support.ptr, c.support.labels = &support_ptr[0], &support_labels[0] if support_labels.shape[0] else NULL
    try:
        if kind == 0:
            return _fit[double, int](learner, data, indices, indptr, y, starts, order, weights, loss, losses,
                                     errors, example_base)
        if kind == 1:
            return _fit[double, longlong](learner, data, indices, indptr, y, starts, order, weights, loss,
                                          losses, errors, example_base)
        if kind == 2:
            return _fit[float, int](learner, data, indices, indptr, y, starts, order, weights, loss, losses,
                                    errors, example_base)
        return _fit[float, longlong](learner, data, indices, indptr, y, starts, order, weights, loss, losses,
                                     errors, example_base)
    finally:
        c.support.ptr, c.support.labels = NULL, NULL


cdef Py_ssize_t _longest_sequence(const int64_t[::1] starts) noexcept nogil:
    cdef Py_ssize_t r, m = 0
    for r in range(starts.shape[0] - 1):
        m = max(m, starts[r + 1] - starts[r])
    return m


cdef Py_ssize_t _longest_row(const index_t[::1] indptr) noexcept nogil:
    cdef Py_ssize_t i, m = 0
    for i in range(indptr.shape[0] - 1):
        m = max(m, indptr[i + 1] - indptr[i])
    return m


cdef Py_ssize_t _most_values(const index_t[::1] indptr, const int64_t[::1] starts) noexcept nogil:
    """The most non-zeros of a sequence."""
    cdef Py_ssize_t r, m = 0
    for r in range(starts.shape[0] - 1):
        m = max(m, indptr[starts[r + 1]] - indptr[starts[r]])
    return m


cdef int _fit(Learner learner, const value_t[::1] data, const index_t[::1] indices, const index_t[::1] indptr,
              const int64_t[::1] y, const int64_t[::1] starts, const int64_t[::1] order,
              const double[::1] weights, int loss, double[::1] losses, int64_t[::1] errors,
              example_base) except -1:
    cdef Ctx* c = &learner.c
    cdef Py_ssize_t K = c.params.n_outputs, m = c.params.n_unpenalized
    cdef Py_ssize_t r = 0, position = 0, first = 0, n = 0, count = order.shape[0]
    cdef _Buffers buffers = _Buffers(_longest_sequence(starts), K, m, loss == LOG)
    cdef Scratch* s = &buffers.s
    cdef int64_t* errs = &errors[0] if errors.shape[0] else NULL
    cdef const value_t* X = &data[0] if data.shape[0] else NULL
    cdef const index_t* ind = &indices[0] if indices.shape[0] else NULL
    cdef bint want_losses = losses.shape[0] > 0
    cdef double h, value
    # The items whose score gradient is not 0 (perceptron, hinge), copied together.
    cdef Py_ssize_t longest = max(_longest_sequence(starts), 1)
    cdef value_t[::1] kept_data = np.empty(max(_most_values(indptr, starts), 1), dtype=np.asarray(data).dtype)
    cdef index_t[::1] kept_indices = np.empty(kept_data.shape[0], dtype=np.asarray(indices).dtype)
    cdef index_t[::1] kept_indptr = np.empty(longest + 1, dtype=np.asarray(indices).dtype)
    cdef double[::1] kept_q = np.empty(longest * K)
    cdef Kept kept
    kept.data, kept.indices, kept.indptr, kept.q = &kept_data[0], &kept_indices[0], &kept_indptr[0], &kept_q[0]
    if m != K * K + 2 * K:
        raise ValueError(f"a sequence model has K^2 + 2K = {K * K + 2 * K} unpenalized entries, not {m}.")
    structured_scratch(c, _longest_row(indptr))
    with nogil:
        for position in range(count):
            r = order[position]
            first, n = starts[r], starts[r + 1] - starts[r]
            h = weights[r] if weights.shape[0] else 1.0
            emissions(c, X, ind, &indptr[0], first, n, s.E)
            if c.cursor.nonfinite:
                break
            value = _decode(c, s, &y[first], n, K, m, loss, errs, position)
            if loss == LOG:
                structured_step(c, X, ind, &indptr[0], first, n, s.q, s.u, h)
            else:
                step_wrong_items(c, X, ind, &indptr[0], first, n, s, &kept, h)
            if c.cursor.nonfinite:
                break
            if want_losses:
                losses[position] = value
    if c.cursor.nonfinite:
        refuse_example(c, f"{example_base + position} (sequence {r} of the input, its rows {first} to "
                          f"{first + n - 1})")
    return 0


cdef struct Kept:
    # What `step_wrong_items` copies: CSR rows and their score gradients.
    void* data
    void* indices
    void* indptr
    double* q


cdef void step_wrong_items(Ctx* c, const value_t* X, const index_t* ind, const index_t* indptr, Py_ssize_t first,
                           Py_ssize_t n, Scratch* s, Kept* kept, double h) noexcept nogil:
    """`structured_step` over the items whose score gradient is not 0 (a decoded label
    that differs from the gold one: perceptron, hinge), in their order; the others'
    features, caught up by `emissions`, are released (`release_items`) and stay
    untouched: their zero gradient is the lazy catch-up's, as for any feature the
    example does not hold. The step is the contract's to rounding; its cost is that
    of the items wrong, not of all."""
    cdef Py_ssize_t i, k, K = c.params.n_outputs, count = 0, nz, values = 0
    cdef value_t* data = <value_t*>kept.data
    cdef index_t* indices = <index_t*>kept.indices
    cdef index_t* ptr = <index_t*>kept.indptr
    cdef bint zero
    ptr[0] = 0
    for i in range(n):
        zero = True
        for k in range(K):
            zero = zero and s.q[i * K + k] == 0.0
        if zero:
            release_items(c, ind, indptr, first + i, 1)
            continue
        for nz in range(indptr[first + i], indptr[first + i + 1]):
            data[values] = X[nz]
            indices[values] = ind[nz]
            values += 1
        for k in range(K):
            kept.q[count * K + k] = s.q[i * K + k]
        count += 1
        ptr[count] = values
    structured_step(c, data, indices, ptr, 0, count, kept.q, s.u, h)


cdef double _decode(Ctx* c, Scratch* s, const int64_t* gold, Py_ssize_t n, Py_ssize_t K, Py_ssize_t m,
                    int loss, int64_t* errors, Py_ssize_t position) noexcept nogil:
    """Read the unpenalized entries, decode, and leave in s.q the items' score
    gradients and in s.u the unpenalized entries'; return the progressive loss."""
    cdef Py_ssize_t u
    cdef double* U = s.values
    cdef double* A = U
    cdef double* start = U + K * K
    cdef double* stop = U + K * K + K
    cdef double best, gold_value, value
    for u in range(m):
        U[u] = unpenalized_current(c, u)
    if n == 0:                      # the empty labelling: score 0, nothing to learn
        for u in range(m):
            s.u[u] = 0.0
        return 0.0
    gold_value = gold_score(s.E, A, start, stop, gold, n, K)
    if errors != NULL and loss != PERCEPTRON:
        viterbi(s.E, A, start, stop, n, K, NULL, s.delta, s.back, s.plain, c.lanes)
        errors[position] = differing(s.plain, gold, n)
    if loss == LOG:
        value = forward_backward(s.E, A, start, stop, n, K, s.work, s.mu, s.xi, c.lanes)
        expected_gradient(s, gold, n, K, m)
        return value - gold_value
    best = viterbi(s.E, A, start, stop, n, K, gold if loss == HINGE else NULL, s.delta, s.back,
                   s.labels, c.lanes)
    if errors != NULL and loss == PERCEPTRON:
        errors[position] = differing(s.labels, gold, n)
    value = best - gold_value
    if loss == HINGE and not value > 0.0:
        memset(s.q, 0, n * K * sizeof(double))
        memset(s.u, 0, m * sizeof(double))
        return 0.0
    decoded_gradient(s, gold, n, K, m)
    return value


cdef inline double gold_score(const double* E, const double* A, const double* start, const double* stop,
                              const int64_t* y, Py_ssize_t n, Py_ssize_t K) noexcept nogil:
    """score(y), summed as Viterbi sums a path: (E[0, y_0] + s[y_0]), then
    (+ A[y_{i-1}, y_i]) + E[i, y_i] item by item, then + e[y_{n-1}]."""
    cdef Py_ssize_t i
    cdef double g = E[y[0]] + start[y[0]]
    for i in range(1, n):
        g = (g + A[y[i - 1] * K + y[i]]) + E[i * K + y[i]]
    return g + stop[y[n - 1]]


cdef inline int64_t differing(const int64_t* a, const int64_t* b, Py_ssize_t n) noexcept nogil:
    cdef Py_ssize_t i
    cdef int64_t count = 0
    for i in range(n):
        count += a[i] != b[i]
    return count


cdef inline void gold_counts(double* u, const int64_t* y, Py_ssize_t n, Py_ssize_t K, Py_ssize_t m) noexcept nogil:
    """u = the gold labelling's transition, start and stop counts (the layout of the
    unpenalized entries)."""
    cdef Py_ssize_t i
    memset(u, 0, m * sizeof(double))
    for i in range(1, n):
        u[y[i - 1] * K + y[i]] += 1.0
    u[K * K + y[0]] += 1.0
    u[K * K + K + y[n - 1]] += 1.0


cdef inline void decoded_gradient(Scratch* s, const int64_t* y, Py_ssize_t n, Py_ssize_t K,
                                  Py_ssize_t m) noexcept nogil:
    """q_i = onehot(y^_i) - onehot(y_i); u = counts(y^) - counts(y), each count
    summed first (integers: exact)."""
    cdef Py_ssize_t i, k
    cdef const int64_t* yhat = s.labels
    cdef double* q = s.q
    cdef double* u = s.u
    cdef double* gold = s.values         # (the unpenalized values are read already)
    memset(q, 0, n * K * sizeof(double))
    for i in range(n):
        q[i * K + yhat[i]] += 1.0
        q[i * K + y[i]] -= 1.0
    gold_counts(u, yhat, n, K, m)
    gold_counts(gold, y, n, K, m)
    for k in range(m):
        u[k] = u[k] - gold[k]


cdef inline void expected_gradient(Scratch* s, const int64_t* y, Py_ssize_t n, Py_ssize_t K,
                                   Py_ssize_t m) noexcept nogil:
    """q_i = mu_i - onehot(y_i); u = (xi, mu_0, mu_{n-1}) - counts(y)."""
    cdef Py_ssize_t i, k
    cdef double* q = s.q
    cdef double* mu = s.mu
    cdef double* u = s.u
    cdef double* gold = s.values
    for i in range(n * K):
        q[i] = mu[i]
    for i in range(n):
        q[i * K + y[i]] = mu[i * K + y[i]] - 1.0
    for k in range(K * K):
        u[k] = s.xi[k]
    for k in range(K):
        u[K * K + k] = mu[k]
        u[K * K + K + k] = mu[(n - 1) * K + k]
    gold_counts(gold, y, n, K, m)
    for k in range(m):
        u[k] = u[k] - gold[k]


def viterbi_sequences(const double[:, ::1] E not None, const double[::1] A not None,
                      const double[::1] start not None, const double[::1] stop not None,
                      const int64_t[::1] starts not None):
    """Each sequence's best labelling (rows starts[r] .. starts[r + 1] - 1 of the
    emission scores E), stacked: an int64 array of E's rows."""
    cdef Py_ssize_t K = E.shape[1], r, first, n, total = E.shape[0]
    cdef int64_t[::1] labels = np.empty(total, np.int64)
    cdef double[::1] delta = np.empty(2 * K)
    cdef int64_t[::1] back = np.empty(max(_longest_sequence(starts) - 1, 1) * K, np.int64)
    cdef const lanes_t* lanes = chosen_lanes()
    with nogil:
        for r in range(starts.shape[0] - 1):
            first, n = starts[r], starts[r + 1] - starts[r]
            if n:
                viterbi(&E[first, 0], &A[0], &start[0], &stop[0], n, K, NULL, &delta[0], &back[0],
                        &labels[first], lanes)
    return np.asarray(labels)


def marginal_sequences(const double[:, ::1] E not None, const double[::1] A not None,
                       const double[::1] start not None, const double[::1] stop not None,
                       const int64_t[::1] starts not None):
    """Each sequence's item marginals P(y_i = k) by forward-backward, stacked: an
    array of E's shape."""
    cdef Py_ssize_t K = E.shape[1], r, first, n, total = E.shape[0]
    cdef Py_ssize_t longest = _longest_sequence(starts)
    cdef double[:, ::1] mu = np.empty((total, K))
    cdef double[::1] work = np.empty(forward_backward_work(max(longest, 1), K))
    cdef double[::1] xi = np.empty(K * K)
    cdef const lanes_t* lanes = chosen_lanes()
    with nogil:
        for r in range(starts.shape[0] - 1):
            first, n = starts[r], starts[r + 1] - starts[r]
            if n:
                forward_backward(&E[first, 0], &A[0], &start[0], &stop[0], n, K, &work[0], &mu[first, 0],
                                 &xi[0], lanes)
    return np.asarray(mu)
