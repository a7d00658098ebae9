# cython: boundscheck=False, wraparound=False, cdivision=True
"""The structured learners' kernel calls from Python: a structured `Learner`
(loss=None) read and stepped one example at a time (`_structured_step`), its
arrays checked here so that the nogil functions can trust them.

`fastprox.structured.StructuredLearner` is the public face; a compiled caller
(SequenceTagger.fit) uses `_structured_step`'s C-level API directly.
"""
from fastprox._numpy import np
from fastprox._kernels cimport Learner
from fastprox._kernel.base.types cimport value_t, index_t
from fastprox._kernel.base.state cimport Ctx
from fastprox._kernel.base.csr cimport csr_kind
from fastprox._kernel.steps.structured cimport (structured_scratch, emissions, release_items, feature_weights,
                                        unpenalized_current, structured_step, structured_step_rows,
                                        refuse_example)
from cython cimport longlong


def check_structured_learner(Learner learner not None):
    """ValueError unless `learner` takes its gradients from its caller (loss=None)."""
    if learner.loss is not None:
        raise ValueError(f"this learner has the loss {learner.loss!r}; structured steps take a "
                         "learner built with loss=None.")


def scores(Learner learner not None, data, indices, indptr):
    """The (n, K) scores p_ik = <W_t[:, k], x_i> + b_k of the CSR rows at the current step
    (`emissions`, then `release_items`: the state as a step finds it). ValueError if a
    score is not finite."""
    kind = csr_kind(data, indices)
    if kind == 0:
        return _scores[double, int](learner, data, indices, indptr)
    if kind == 1:
        return _scores[double, longlong](learner, data, indices, indptr)
    if kind == 2:
        return _scores[float, int](learner, data, indices, indptr)
    return _scores[float, longlong](learner, data, indices, indptr)


def step(Learner learner not None, data, indices, indptr, const double[:, ::1] q not None,
         const double[::1] u_grad not None,
         double h, example):
    """`structured_step` over all the CSR rows (the example's items) with score gradients
    q (n, K), unpenalized gradients u_grad (m,) and weight h; a refused example raises
    the ValueError naming `example`."""
    kind = csr_kind(data, indices)
    if kind == 0:
        _step[double, int](learner, data, indices, indptr, q, u_grad, h, example)
    elif kind == 1:
        _step[double, longlong](learner, data, indices, indptr, q, u_grad, h, example)
    elif kind == 2:
        _step[float, int](learner, data, indices, indptr, q, u_grad, h, example)
    else:
        _step[float, longlong](learner, data, indices, indptr, q, u_grad, h, example)


def step_decoded(Learner learner not None, data, indices, indptr, decode, double h, example):
    """One example as a compiled caller steps it (`_structured_step`'s C-level API):
    `emissions` of the CSR rows (the items), then ``decode(scores, unpenalized)``
    -> (q (n, K), u_grad (m,)) with the GIL, then `structured_step`, the items' features
    caught up once. If `decode` raises, the items are released and nothing steps."""
    kind = csr_kind(data, indices)
    if kind == 0:
        _step_decoded[double, int](learner, data, indices, indptr, decode, h, example)
    elif kind == 1:
        _step_decoded[double, longlong](learner, data, indices, indptr, decode, h, example)
    elif kind == 2:
        _step_decoded[float, int](learner, data, indices, indptr, decode, h, example)
    else:
        _step_decoded[float, longlong](learner, data, indices, indptr, decode, h, example)


def step_rows(Learner learner not None, const long long[::1] features not None, const double[:, ::1] G not None,
              const double[::1] b_grad not None, const double[::1] u_grad not None, double h, example):
    """`structured_step_rows`: W's gradient G (r, K) on the feature ids `features` (r,),
    the intercepts' b_grad (K,), the unpenalized entries' u_grad (m,), weight h."""
    cdef Ctx* c = &learner.c
    cdef Py_ssize_t r = features.shape[0]
    _check_sizes(learner, G.shape[0], G.shape[1], u_grad.shape[0], r)
    if b_grad.shape[0] != c.params.n_outputs:
        raise ValueError(f"intercept_grad has {b_grad.shape[0]} entries for {c.params.n_outputs} outputs.")
    _check_features(&features[0] if r else NULL, r, c.params.n_features)
    structured_scratch(c, 0)
    with nogil:
        structured_step_rows(c, &features[0] if r else NULL, r, &G[0, 0] if r else NULL, &b_grad[0],
                             &u_grad[0] if u_grad.shape[0] else NULL, h)
    if c.cursor.nonfinite:
        refuse_example(c, example)


def weights(Learner learner not None, const long long[::1] features not None):
    """The (r, K) weights w_t of the feature ids `features` at the current step."""
    cdef Ctx* c = &learner.c
    cdef Py_ssize_t i, r = features.shape[0]
    cdef double[:, ::1] out = np.empty((r, c.params.n_outputs))
    _check_features(&features[0] if r else NULL, r, c.params.n_features)
    with nogil:
        for i in range(r):
            feature_weights(c, features[i], &out[i, 0])
    return np.asarray(out)


def unpenalized(Learner learner not None):
    """The (m,) values of the unpenalized entries at the current step."""
    cdef Ctx* c = &learner.c
    cdef Py_ssize_t u
    cdef double[::1] out = np.empty(c.params.n_unpenalized)
    for u in range(c.params.n_unpenalized):
        out[u] = unpenalized_current(c, u)
    return np.asarray(out)


cdef object _scores(Learner learner, const value_t[::1] data, const index_t[::1] indices,
                    const index_t[::1] indptr):
    cdef Ctx* c = &learner.c
    cdef Py_ssize_t n = _check_items(learner, data.shape[0], indices, indptr)
    cdef double[:, ::1] out = np.empty((n, c.params.n_outputs))
    cdef const value_t* X = &data[0] if data.shape[0] else NULL
    cdef const index_t* ind = &indices[0] if indices.shape[0] else NULL
    structured_scratch(c, _longest(indptr))
    with nogil:
        emissions(c, X, ind, &indptr[0], 0, n, &out[0, 0] if n else NULL)
        release_items(c, ind, &indptr[0], 0, n)
    if c.cursor.nonfinite:
        c.cursor.nonfinite = c.cursor.steep = False
        raise ValueError("a score of these items is NaN or infinite (their values are too large for "
                         "the model's weights: the scores overflowed); scale the values.")
    return np.asarray(out)


cdef int _step(Learner learner, const value_t[::1] data, const index_t[::1] indices,
               const index_t[::1] indptr, const double[:, ::1] q, const double[::1] u_grad, double h,
               example) except -1:
    cdef Ctx* c = &learner.c
    cdef Py_ssize_t n = _check_items(learner, data.shape[0], indices, indptr)
    _check_sizes(learner, q.shape[0], q.shape[1], u_grad.shape[0], n)
    structured_scratch(c, 0)
    with nogil:
        structured_step(c, &data[0] if data.shape[0] else NULL, &indices[0] if indices.shape[0] else NULL,
                        &indptr[0], 0, n, &q[0, 0] if n else NULL, &u_grad[0] if u_grad.shape[0] else NULL,
                        h)
    if c.cursor.nonfinite:
        refuse_example(c, example)
    return 0


cdef int _step_decoded(Learner learner, const value_t[::1] data, const index_t[::1] indices,
                       const index_t[::1] indptr, decode, double h, example) except -1:
    cdef Ctx* c = &learner.c
    cdef Py_ssize_t n = _check_items(learner, data.shape[0], indices, indptr)
    cdef double[:, ::1] out = np.empty((n, c.params.n_outputs))
    cdef const double[:, ::1] q
    cdef const double[::1] u_grad
    cdef const value_t* X = &data[0] if data.shape[0] else NULL
    cdef const index_t* ind = &indices[0] if indices.shape[0] else NULL
    structured_scratch(c, _longest(indptr))
    with nogil:
        emissions(c, X, ind, &indptr[0], 0, n, &out[0, 0] if n else NULL)
    try:
        if c.cursor.nonfinite:          # (the step refuses it: no decoding of such scores)
            q, u_grad = np.zeros((n, c.params.n_outputs)), np.zeros(c.params.n_unpenalized)
        else:
            q, u_grad = decode(np.asarray(out), unpenalized(learner))
            _check_sizes(learner, q.shape[0], q.shape[1], u_grad.shape[0], n)
    except BaseException:
        release_items(c, ind, &indptr[0], 0, n)
        raise
    with nogil:
        structured_step(c, X, ind, &indptr[0], 0, n, &q[0, 0] if n else NULL,
                        &u_grad[0] if u_grad.shape[0] else NULL, h)
    if c.cursor.nonfinite:
        refuse_example(c, example)
    return 0


cdef Py_ssize_t _check_items(Learner learner, Py_ssize_t nnz, const index_t[::1] indices,
                             const index_t[::1] indptr) except -1:
    """The number of CSR rows, after refusing arrays the loops would read outside of:
    indptr from 0, non-decreasing, up to nnz; every index in [0, n_features)."""
    cdef Py_ssize_t i, n = indptr.shape[0] - 1
    cdef bint valid = n >= 0 and indices.shape[0] == nnz and indptr[0] == 0 and indptr[n] == nnz
    check_structured_learner(learner)
    if valid:
        for i in range(n):
            valid = valid and indptr[i] <= indptr[i + 1]
    if not valid:
        raise ValueError("inconsistent CSR arrays: data, indices and indptr do not match.")
    for i in range(nnz):
        if not 0 <= indices[i] < learner.n_features:
            raise ValueError(f"feature {indices[i]} lies outside [0, {learner.n_features}): the "
                             "items have more features than the model (grow it first).")
    return n


cdef int _check_sizes(Learner learner, Py_ssize_t rows, Py_ssize_t columns, Py_ssize_t m,
                      Py_ssize_t n) except -1:
    """The gradient's shape (rows, columns) is (n, K) and the unpenalized one's m."""
    check_structured_learner(learner)
    if rows != n or columns != learner.n_outputs:
        raise ValueError(f"the gradient has shape ({rows}, {columns}) where ({n}, {learner.n_outputs}) "
                         "is expected (a row per item or feature, a column per output).")
    if m != learner.n_unpenalized:
        raise ValueError(f"unpenalized_grad has {m} entries for the learner's {learner.n_unpenalized} "
                         "unpenalized entries.")
    return 0


cdef int _check_features(const long long* features, Py_ssize_t r, long long d) except -1:
    """Refuse feature ids outside [0, d)."""
    cdef Py_ssize_t i
    for i in range(r):
        if not 0 <= features[i] < d:
            raise ValueError(f"feature {features[i]} lies outside [0, {d}) (grow the model first).")
    return 0


cdef Py_ssize_t _longest(const index_t[::1] indptr):
    """The most non-zeros of a CSR row."""
    cdef Py_ssize_t i, m = 0
    for i in range(indptr.shape[0] - 1):
        m = max(m, indptr[i + 1] - indptr[i])
    return m
