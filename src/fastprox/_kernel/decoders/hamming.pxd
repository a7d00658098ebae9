# The Hamming cost of cost-augmented decoding (the contract's structured hinge):
# Delta(gold, y') counts the items labelled differently (sequences) or the words
# given another head (trees), one per item, so the decoders add it score by score.
from libc.stdint cimport int64_t


cdef inline double hamming(const int64_t* gold, Py_ssize_t i, Py_ssize_t label) noexcept nogil:
    """1.0 where `label` differs from gold[i], else 0.0; always 0.0 without gold (NULL)."""
    if gold == NULL or gold[i] == label:
        return 0.0
    return 1.0
