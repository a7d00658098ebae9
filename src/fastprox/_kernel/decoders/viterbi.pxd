# Viterbi decoding of a label sequence (the contract's "Structured outputs",
# sequences): the highest-scoring labelling under emissions, transitions, start and
# stop scores, optionally augmented by the Hamming cost to gold labels.
from libc.stdint cimport int64_t

from fastprox._kernel.decoders.hamming cimport hamming
from fastprox._kernel.lanes.lanes cimport lanes_t


cdef inline double viterbi(const double* E, const double* A, const double* s, const double* e,
                           Py_ssize_t n, Py_ssize_t K, const int64_t* gold,
                           double* delta, int64_t* back, int64_t* labels, const lanes_t* lanes) noexcept nogil:
    """Write to `labels` the labelling of highest score and return that score.

    Parameters
    ----------
    E : n*K doubles, row-major; E[i*K + k] the emission score of label k at item i
        (``<W[:, k], x_i> + b[k]``).
    A : K*K doubles, row-major; A[j*K + k] the score of label j followed by k.
    s, e : K doubles each; start and stop scores.
    n, K : items (n >= 0) and labels (K >= 1).
    gold : n labels in 0..K-1, or NULL. When given, decoding is cost-augmented: every
        E[i*K + k] with k != gold[i] counts 1 more (the Hamming cost), so the result is
        ``argmax score(y') + Delta(gold, y')`` and the returned score includes Delta.
    delta : scratch, 2*K doubles.
    back : scratch, max(n - 1, 0)*K int64 (the backpointers of items 1..n-1).
    labels : output, n int64.
    lanes : the instruction set whose pass takes the K x K step (`_kernels.chosen_lanes`:
        `_kernel/lanes/chain.h`'s `chain_best`); every set gives the same bits.

    Returns
    -------
    The best (augmented) score; 0.0 for n = 0, the empty labelling's.

    Notes
    -----
    The recursion, with the sums in this order: ``delta_0(k) = E[0, k] + s[k]``;
    ``delta_i(k) = max_j (delta_{i-1}(j) + A[j, k]) + E[i, k]``; the score is
    ``max_k delta_{n-1}(k) + e[k]``. Ties: every backpointer, and the last label, is
    the smallest label among the maxima, so that among all optimal labellings the
    result is the smallest compared from the last item backwards (the contract's rule).
    The step's max over j runs in lanes across k, j rising for every k.
    O(n K^2) time, no allocation. Finite inputs give no NaN: a sum beyond the double
    range is +-inf, which callers prevent by bounding the scores' magnitudes.
    """
    cdef Py_ssize_t i, k
    cdef double* prev = delta
    cdef double* cur = delta + K
    cdef double* swap
    cdef double c, best
    cdef int64_t last
    if n == 0:
        return 0.0
    for k in range(K):
        prev[k] = E[k] + hamming(gold, 0, k) + s[k]
    for i in range(1, n):
        # j outer and k inner (in lanes), so that the rows of A go along memory; a strict >
        # with j rising keeps the smallest j among the maxima.
        lanes.chain_best(prev, A, K, cur, back + (i - 1) * K)
        for k in range(K):
            cur[k] = cur[k] + (E[i * K + k] + hamming(gold, i, k))
        swap = prev
        prev = cur
        cur = swap
    last = 0
    best = prev[0] + e[0]
    for k in range(1, K):
        c = prev[k] + e[k]
        if c > best:
            best = c
            last = k
    labels[n - 1] = last
    for i in range(n - 1, 0, -1):
        last = back[(i - 1) * K + last]
        labels[i - 1] = last
    return best
