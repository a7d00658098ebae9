# cython: boundscheck=False, wraparound=False, cdivision=True
"""The dependency parser's compiled loops (the contract's "Structured outputs",
trees): passes over sentences that score every candidate arc, decode a tree and
step, without the GIL.

A sentence of n words is (n + 1) n arc rows, the arc h -> m in row h n + m - 1
(h = 0..n, m = 1..n; the rows with h = m are ignored). A training step
(`sentence_step`) scores the rows at the current step (`_structured_step.emissions`,
features caught up), decodes the tree of highest score (perceptron) or of highest
score plus the Hamming cost to the gold heads (hinge: cost-augmented decoding) with
Chu-Liu-Edmonds or, projective, Eisner, and steps with W's gradient
Phi(x, y^) - Phi(x, y) as sparse rows (`structured_step_rows`): for each word whose
decoded head differs from its gold head, the decoded arc's row with its values then
the gold arc's row with the values negated; arcs where the trees agree carry no row.
Under hinge the gradient is 0 where the loss score(y^) + Delta - score(y) is not
positive; every sentence is a step (t counts sentences), its gradient 0 or not.

The rows come either from the caller (`fit_rows`, `predict_rows`: a CSR matrix of
all sentences' rows stacked) or from the arc templates per sentence
(`fit_tokens`, `predict_tokens`: an `ArcKernel`'s plan over the corpus's token
codes; one sentence's arcs are held at a time). Prediction scores with the model's
dense weights (`coef`), read once.
"""
from libc.stdint cimport int32_t, int64_t, uint64_t
from libc.stdlib cimport free

from fastprox._numpy import np
from fastprox._kernels cimport Learner
from fastprox._kernel.base.types cimport value_t, index_t
from fastprox._kernel.base.state cimport Ctx
from fastprox._kernel.base.csr cimport csr_kind
from fastprox._arcs cimport ArcKernel
from fastprox._kernel.structured.arcs cimport ArcPlan, ArcRows, arc_rows, arc_rows_free, arc_scores, _grow
from fastprox._kernel.decoders.chu_liu_edmonds cimport (chu_liu_edmonds, chu_liu_edmonds_work,
                                                        chu_liu_edmonds_iwork)
from fastprox._kernel.decoders.eisner cimport eisner, eisner_work, eisner_iwork
from fastprox._kernel.decoders.one_root cimport one_root, tree_decoder
from fastprox._kernel.steps.structured cimport (structured_scratch, emissions, release_items, structured_step_rows,
                                        refuse_example)
from cython cimport longlong

#: The losses' codes (`fastprox.structured._params.PARSER_LOSSES`).
LOSSES = {"perceptron": 0, "hinge": 1}


cdef struct Scratch:
    # What a sentence of up to `longest` words needs, sized by the caller (`_Scratch`).
    double* scores          # (n + 1) n: the rows' scores
    double* S               # (n + 1)^2: S[h (n + 1) + m]
    double* work            # the decoders' double scratch
    int64_t* iwork          # and int64 scratch
    int64_t* gold           # n + 1: gold[m] the gold head of word m (gold[0] unread)
    int64_t* heads          # n + 1: the decoded heads
    long long* features     # the gradient's rows: feature ids,
    double* G               # and values
    tree_decoder decode


cdef class _Scratch:
    """The buffers of `Scratch` for sentences of up to `longest` words whose gradient
    has at most `most_rows` non-zeros (2 n times the widest row is enough)."""
    cdef Scratch s
    cdef object arrays

    def __cinit__(self, Py_ssize_t longest, Py_ssize_t most_rows, bint projective):
        cdef Py_ssize_t N = longest + 1
        a = {"scores": np.zeros(max(N * longest, 1)), "S": np.zeros(N * N),
             "work": np.zeros(max(chu_liu_edmonds_work(longest), eisner_work(longest))),
             "iwork": np.zeros(max(chu_liu_edmonds_iwork(longest), eisner_iwork(longest)), np.int64),
             "gold": np.zeros(N, np.int64), "heads": np.zeros(N, np.int64),
             "features": np.zeros(max(most_rows, 1), np.longlong), "G": np.zeros(max(most_rows, 1))}
        self.arrays = a
        self.s.scores = <double*><size_t>a["scores"].ctypes.data
        self.s.S = <double*><size_t>a["S"].ctypes.data
        self.s.work = <double*><size_t>a["work"].ctypes.data
        self.s.iwork = <int64_t*><size_t>a["iwork"].ctypes.data
        self.s.gold = <int64_t*><size_t>a["gold"].ctypes.data
        self.s.heads = <int64_t*><size_t>a["heads"].ctypes.data
        self.s.features = <long long*><size_t>a["features"].ctypes.data
        self.s.G = <double*><size_t>a["G"].ctypes.data
        self.s.decode = eisner if projective else chu_liu_edmonds


cdef inline void _arc_matrix(const double* scores, Py_ssize_t n, double* S) noexcept nogil:
    """S[h (n + 1) + m] = scores[h n + m - 1], the rows' scores by arc (h != m)."""
    cdef Py_ssize_t N = n + 1, h, m
    for h in range(N):
        for m in range(1, N):
            S[h * N + m] = scores[h * n + m - 1] if h != m else 0.0


cdef inline Py_ssize_t _add_row(const value_t* data, const index_t* indices, const index_t* indptr,
                                long long row, double sign, long long* features, double* G,
                                Py_ssize_t r) noexcept nogil:
    """Append row `row`'s non-zeros, times sign, to the gradient's rows; the new count."""
    cdef index_t nz
    for nz in range(indptr[row], indptr[row + 1]):
        features[r] = indices[nz]
        G[r] = sign * data[nz]
        r += 1
    return r


cdef inline double sentence_step(Ctx* c, const value_t* data, const index_t* indices,
                                 const index_t* indptr, long long first, Py_ssize_t n, bint hinge,
                                 double h, Scratch* s, int64_t* errors) noexcept nogil:
    """One training step on the sentence of n >= 1 words whose arc rows start at row
    `first` of the CSR arrays and whose gold heads are s.gold[1..n]: scores, decoding,
    the step (as the module says). Returns the example's loss (times h); where
    `errors` is not NULL, writes there the words the tree of highest score (without
    the cost) gives a wrong head. If a score is not finite, or the gradient could
    overflow, the step is refused (c.cursor.nonfinite)."""
    cdef Py_ssize_t N = n + 1, m, r = 0, wrong = 0
    cdef long long rows = N * n
    cdef double zero = 0.0, margin = 0.0
    emissions(c, data, indices, indptr, first, rows, s.scores)
    release_items(c, indices, indptr, first, rows)
    if c.cursor.nonfinite:          # (refused by the step: nothing decoded from such scores)
        structured_step_rows(c, NULL, 0, NULL, &zero, NULL, h)
        return 0.0
    _arc_matrix(s.scores, n, s.S)
    if errors != NULL:
        s.decode(s.S, n, NULL, s.work, s.iwork, s.heads)
        errors[0] = 0
        for m in range(1, N):
            errors[0] += s.heads[m] != s.gold[m]
    if errors == NULL or hinge:
        s.decode(s.S, n, s.gold if hinge else NULL, s.work, s.iwork, s.heads)
    for m in range(1, N):
        if s.heads[m] != s.gold[m]:
            wrong += 1
            margin += s.S[s.heads[m] * N + m] - s.S[s.gold[m] * N + m]
    if hinge:
        margin += wrong
    if wrong and (margin > 0.0 or not hinge):
        for m in range(1, N):
            if s.heads[m] != s.gold[m]:
                r = _add_row(data, indices, indptr, first + s.heads[m] * n + m - 1, 1.0, s.features, s.G, r)
                r = _add_row(data, indices, indptr, first + s.gold[m] * n + m - 1, -1.0, s.features, s.G, r)
    structured_step_rows(c, s.features, r, s.G, &zero, NULL, h)
    return h * (margin if margin > 0.0 or not hinge else 0.0)


cdef inline double row_score(const value_t* data, const index_t* indices, const index_t* indptr,
                             long long row, const double* w) noexcept nogil:
    """<w, x_row>, summed in the row's order."""
    cdef double total = 0.0
    cdef index_t nz
    for nz in range(indptr[row], indptr[row + 1]):
        total += data[nz] * w[indices[nz]]
    return total


# ---------------------------------------------------------------------- rows given

def fit_rows(Learner learner not None, data, indices, indptr, const int64_t[::1] first_row not None,
             const int64_t[::1] word_start not None, const int64_t[::1] heads not None,
             const int64_t[::1] order not None, const double[::1] sample_weight not None, int loss,
             bint projective, double[::1] losses not None, int64_t[::1] errors not None, example):
    """Steps over the sentences in `order` (indices into them) whose arc rows are
    the CSR arrays' rows first_row[s] .. first_row[s + 1] and whose gold heads are
    heads[word_start[s] .. word_start[s + 1]] (checked by the caller: every row in
    the arrays, every head a tree's), weighted by sample_weight[s] (or 1: empty).
    losses[i] gets the loss of sentence order[i], errors[i] (unless errors is
    empty) the words its tree of highest score got wrong before the step. A refused
    sentence raises the ValueError `example(s)` names, after the sentences before it
    stepped."""
    kind = csr_kind(data, indices)
    if kind == 0:
        return _fit_rows[double, int](learner, data, indices, indptr, first_row, word_start, heads, order,
                                      sample_weight, loss, projective, losses, errors, example)
    if kind == 1:
        return _fit_rows[double, longlong](learner, data, indices, indptr, first_row, word_start, heads, order,
                                           sample_weight, loss, projective, losses, errors, example)
    if kind == 2:
        return _fit_rows[float, int](learner, data, indices, indptr, first_row, word_start, heads, order,
                                     sample_weight, loss, projective, losses, errors, example)
    return _fit_rows[float, longlong](learner, data, indices, indptr, first_row, word_start, heads, order,
                                      sample_weight, loss, projective, losses, errors, example)


def predict_rows(const double[::1] w not None, data, indices, indptr, const int64_t[::1] first_row not None,
                 const int64_t[::1] word_start not None, bint projective):
    """The decoded heads (int64, the sentences' words in turn) of the sentences laid
    out as `fit_rows` reads them, scored by the dense weights w."""
    kind = csr_kind(data, indices)
    if kind == 0:
        return _predict_rows[double, int](w, data, indices, indptr, first_row, word_start, projective)
    if kind == 1:
        return _predict_rows[double, longlong](w, data, indices, indptr, first_row, word_start, projective)
    if kind == 2:
        return _predict_rows[float, int](w, data, indices, indptr, first_row, word_start, projective)
    return _predict_rows[float, longlong](w, data, indices, indptr, first_row, word_start, projective)


cdef Py_ssize_t _longest(const int64_t[::1] word_start):
    cdef Py_ssize_t s, most = 0
    for s in range(word_start.shape[0] - 1):
        most = max(most, word_start[s + 1] - word_start[s])
    return most


cdef Py_ssize_t _widest(const index_t[::1] indptr):
    cdef Py_ssize_t i, most = 0
    for i in range(indptr.shape[0] - 1):
        most = max(most, indptr[i + 1] - indptr[i])
    return most


cdef object _fit_rows(Learner learner, const value_t[::1] data, const index_t[::1] indices,
                      const index_t[::1] indptr, const int64_t[::1] first_row, const int64_t[::1] word_start,
                      const int64_t[::1] heads, const int64_t[::1] order, const double[::1] sample_weight,
                      int loss, bint projective, double[::1] losses, int64_t[::1] errors, example):
    cdef Ctx* c = &learner.c
    cdef Py_ssize_t longest = _longest(word_start), widest = _widest(indptr), i, s, done = 0
    cdef _Scratch scratch = _Scratch(longest, 2 * longest * widest, projective)
    cdef Scratch* sc = &scratch.s
    cdef const value_t* X = &data[0] if data.shape[0] else NULL
    cdef const index_t* ind = &indices[0] if indices.shape[0] else NULL
    _check_chunk(order, sample_weight, losses, errors, word_start.shape[0] - 1)
    structured_scratch(c, widest)
    with nogil:
        for i in range(order.shape[0]):
            s = order[i]
            losses[i] = sentence_step(c, X, ind, &indptr[0], first_row[s], _gold(sc, heads, word_start, s),
                                      loss == 1, sample_weight[s] if sample_weight.shape[0] else 1.0, sc,
                                      &errors[i] if errors.shape[0] else NULL)
            if c.cursor.nonfinite:
                break
            done += 1
    if c.cursor.nonfinite:
        refuse_example(c, example(order[done]))
    return done


cdef int _check_chunk(const int64_t[::1] order, const double[::1] sample_weight, double[::1] losses,
                      int64_t[::1] errors, Py_ssize_t n_sentences) except -1:
    """The loops' arrays agree: order within the sentences, one loss (and error
    count, unless none are asked) per sentence of the order, a weight per sentence."""
    cdef Py_ssize_t i
    if losses.shape[0] != order.shape[0] or errors.shape[0] not in (0, order.shape[0]):
        raise ValueError("losses and errors must have one entry per sentence of the order")
    if sample_weight.shape[0] not in (0, n_sentences):
        raise ValueError("sample_weight must have one weight per sentence")
    for i in range(order.shape[0]):
        if not 0 <= order[i] < n_sentences:
            raise ValueError(f"order[{i}] = {order[i]} is not a sentence (0..{n_sentences - 1})")
    return 0


cdef inline Py_ssize_t _gold(Scratch* sc, const int64_t[::1] heads, const int64_t[::1] word_start,
                             Py_ssize_t s) noexcept nogil:
    """Sentence s's gold heads into sc.gold[1..n]; its n."""
    cdef Py_ssize_t m, n = word_start[s + 1] - word_start[s]
    for m in range(n):
        sc.gold[m + 1] = heads[word_start[s] + m]
    return n


cdef object _predict_rows(const double[::1] w, const value_t[::1] data, const index_t[::1] indices,
                          const index_t[::1] indptr, const int64_t[::1] first_row,
                          const int64_t[::1] word_start, bint projective):
    cdef Py_ssize_t longest = _longest(word_start), s, n, N, h, m
    cdef _Scratch scratch = _Scratch(longest, 0, projective)
    cdef Scratch* sc = &scratch.s
    out = np.zeros(word_start[word_start.shape[0] - 1], np.int64)
    cdef int64_t[::1] heads = out
    cdef const value_t* X = &data[0] if data.shape[0] else NULL
    cdef const index_t* ind = &indices[0] if indices.shape[0] else NULL
    with nogil:
        for s in range(word_start.shape[0] - 1):
            n = word_start[s + 1] - word_start[s]
            N = n + 1
            for h in range(N):
                for m in range(1, N):
                    sc.S[h * N + m] = (row_score(X, ind, &indptr[0], first_row[s] + h * n + m - 1, &w[0])
                                       if h != m else 0.0)
            sc.decode(sc.S, n, NULL, sc.work, sc.iwork, sc.heads)
            for m in range(n):
                heads[word_start[s] + m] = sc.heads[m + 1]
    return out


# ---------------------------------------------------------------------- rows from templates

cdef class _SentenceRows:
    """One sentence's arc rows from a kernel's plan, as `sentence_step` reads them:
    int32 columns and row starts, values 1 (buffers grown to the longest met)."""
    cdef ArcRows rows
    cdef int32_t* indptr
    cdef double* ones
    cdef Py_ssize_t indptr_size, ones_size

    def __dealloc__(self):
        arc_rows_free(&self.rows)
        free(self.indptr)
        free(self.ones)


cdef inline int _make(const ArcPlan* plan, const uint64_t* tokens, Py_ssize_t n, _SentenceRows out) noexcept nogil:
    """The rows of the sentence of n words with these token codes into out; -1 if
    memory ran out."""
    cdef Py_ssize_t r, old = out.ones_size
    if arc_rows(plan, tokens, n, &out.rows):
        return -1
    if (_grow(<void**>&out.indptr, &out.indptr_size, out.rows.n_rows + 1, sizeof(int32_t))
            or _grow(<void**>&out.ones, &out.ones_size, out.rows.nnz, sizeof(double))):
        return -1
    for r in range(old, out.ones_size):
        out.ones[r] = 1.0
    for r in range(out.rows.n_rows + 1):
        out.indptr[r] = <int32_t>out.rows.indptr[r]
    return 0


def fit_tokens(Learner learner not None, ArcKernel kernel not None, const uint64_t[:, ::1] tokens not None,
               const int64_t[::1] starts not None, const int64_t[::1] word_start not None,
               const int64_t[::1] heads not None, const int64_t[::1] order not None,
               const double[::1] sample_weight not None, int loss, bint projective, double[::1] losses not None,
               int64_t[::1] errors not None, example):
    """`fit_rows` over sentences given by their token codes (`ArcFeatures.corpus`:
    sentence s is rows starts[s] .. starts[s + 1] of `tokens`, word_start[s + 1] -
    word_start[s] + 3 of them, checked by the caller), each one's arc rows made
    from the kernel's plan when it steps."""
    cdef Ctx* c = &learner.c
    cdef Py_ssize_t longest = _longest(word_start), i, s, n, done = 0
    cdef Py_ssize_t widest = kernel.plan.n_single + kernel.plan.per_value * longest
    cdef bint no_memory = False
    cdef _Scratch scratch = _Scratch(longest, 2 * longest * widest, projective)
    cdef Scratch* sc = &scratch.s
    cdef _SentenceRows rows = _SentenceRows()
    if kernel.n_columns > learner.n_features:
        raise ValueError(f"the arc features have {kernel.n_columns} columns, the model "
                         f"{learner.n_features} features.")
    _check_chunk(order, sample_weight, losses, errors, word_start.shape[0] - 1)
    structured_scratch(c, widest)
    with nogil:
        for i in range(order.shape[0]):
            s = order[i]
            n = _gold(sc, heads, word_start, s)
            if _make(&kernel.plan, &tokens[starts[s], 0], n, rows):
                no_memory = True
                break
            losses[i] = sentence_step(c, rows.ones, <const int*>rows.rows.indices, <const int*>rows.indptr, 0, n,
                                      loss == 1, sample_weight[s] if sample_weight.shape[0] else 1.0, sc,
                                      &errors[i] if errors.shape[0] else NULL)
            if c.cursor.nonfinite:
                break
            done += 1
    if no_memory:
        raise MemoryError(f"no memory for the arcs of {example(order[done])}")
    if c.cursor.nonfinite:
        refuse_example(c, example(order[done]))
    return done


def predict_tokens(const double[::1] w not None, ArcKernel kernel not None, const uint64_t[:, ::1] tokens not None,
                   const int64_t[::1] starts not None, const int64_t[::1] word_start not None, bint projective):
    """`predict_rows` over sentences given by their token codes (as `fit_tokens`), each
    tree with one word on the root (`one_root`): these are treebanks' sentences, and a
    CoNLL-U tree has one word with HEAD 0 (the UD scorer refuses a file with more)."""
    cdef Py_ssize_t longest = _longest(word_start), s, n, m
    cdef bint no_memory = False
    cdef _Scratch scratch = _Scratch(longest, 0, projective)
    cdef Scratch* sc = &scratch.s
    cdef _SentenceRows rows = _SentenceRows()
    out = np.zeros(word_start[word_start.shape[0] - 1], np.int64)
    cdef int64_t[::1] heads = out
    if w.shape[0] < kernel.n_columns:
        raise ValueError(f"weights of length {w.shape[0]}; the features have {kernel.n_columns} columns")
    with nogil:
        for s in range(word_start.shape[0] - 1):
            n = word_start[s + 1] - word_start[s]
            if arc_rows(&kernel.plan, &tokens[starts[s], 0], n, &rows.rows):
                no_memory = True
                break
            arc_scores(&rows.rows, &w[0], sc.S)
            one_root(sc.decode, sc.S, n, NULL, sc.work, sc.iwork, sc.heads)
            for m in range(n):
                heads[word_start[s] + m] = sc.heads[m + 1]
    if no_memory:
        raise MemoryError(f"no memory for the arcs of sentence {s + 1}")
    return out
