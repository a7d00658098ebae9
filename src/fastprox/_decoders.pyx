# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""The structured-output decoders from Python: checked arrays in, the kernels of
`fastprox._kernel.decoders` run without the GIL, NumPy arrays out.

Sequences (the contract's "Structured outputs"): emission scores ``E`` (n items x K
labels, ``E[i, k] = <W[:, k], x_i> + b[k]``), transitions ``A`` (K x K, ``A[j, k]``
the score of label j followed by k), start and stop scores ``s`` and ``e`` (K).
Trees: arc scores ``S`` ((n+1) x (n+1), ``S[h, m]`` the score of head h for word m,
0 the root); its diagonal and column 0 (arcs into the root) are not arcs and are
ignored, so they may hold anything (-inf, say). Heads come back as an array of
n + 1 with ``heads[0] = -1``.

Scores must be finite and, so that no sum of them leaves the double range, at most
``DBL_MAX / (4 (n + 1))`` in magnitude (1e300 is fine up to n ~ 4e7).
"""
import numpy as np

from libc.float cimport DBL_MAX
from libc.stdint cimport int64_t

from fastprox._kernel.decoders.viterbi cimport viterbi as viterbi_kernel
from fastprox._kernel.decoders.forward_backward cimport (forward_backward as forward_backward_kernel,
                                                         forward_backward_work)
from fastprox._kernel.decoders.chu_liu_edmonds cimport (chu_liu_edmonds as chu_liu_edmonds_kernel,
                                                        chu_liu_edmonds_work, chu_liu_edmonds_iwork)
from fastprox._kernel.decoders.eisner cimport eisner as eisner_kernel, eisner_work, eisner_iwork
from fastprox._kernel.decoders.one_root cimport one_root as one_root_kernel, tree_decoder
from fastprox._kernels cimport chosen_lanes

# Without gold labels the kernels get NULL, the address of an empty view.
NO_GOLD = np.empty(0, dtype=np.int64)


def viterbi(E, A, s, e, y=None, cost=False):
    """The highest-scoring label sequence.

    Parameters
    ----------
    E : array of shape (n, K), emission scores.
    A : array of shape (K, K), transition scores.
    s, e : arrays of shape (K,), start and stop scores.
    y : array of n integer labels in 0..K-1, the gold labels; only with ``cost=True``.
    cost : bool, decode ``argmax score(y') + Delta(y, y')`` (Hamming cost, the
        structured hinge's cost-augmented decoding).

    Returns
    -------
    labels : int64 array of shape (n,)
    score : float, the labels' score (with the cost when ``cost=True``); 0.0 for n = 0.

    Ties go to the smallest label at every backpointer and at the last item.
    """
    Ec, Ac, sc, ec = _sequence_scores(E, A, s, e)
    n, K = Ec.shape
    gold = _gold_labels(y, cost, n, K)
    labels = np.empty(n, dtype=np.int64)
    delta = np.empty(2 * K, dtype=np.float64)
    back = np.empty(max(n - 1, 0) * K, dtype=np.int64)
    cdef const double[::1] Ev = Ec.reshape(-1), Av = Ac.reshape(-1), sv = sc, ev = ec
    cdef double[::1] deltav = delta
    cdef int64_t[::1] backv = back, labelsv = labels
    cdef const int64_t[::1] goldv = gold if gold is not None else NO_GOLD
    cdef Py_ssize_t nn = n, KK = K
    cdef double score
    with nogil:
        score = viterbi_kernel(_in(Ev), &Av[0], &sv[0], &ev[0], nn, KK, _in(goldv),
                               &deltav[0], _out(backv), _out(labelsv), chosen_lanes())
    return labels, float(score)


def forward_backward(E, A, s, e):
    """log Z and the marginals of the linear-chain CRF ``p(y') = exp(score(y')) / Z``.

    Parameters
    ----------
    E, A, s, e : as `viterbi`.

    Returns
    -------
    logZ : float, ``log sum_{y'} exp(score(y'))`` (0.0 for n = 0).
    mu : array of shape (n, K), ``mu[i, k] = P(y'_i = k)``; ``mu[0]`` are the start
        marginals, ``mu[n-1]`` the stop marginals.
    xi : array of shape (K, K), ``xi[j, k] = sum_{i>=1} P(y'_{i-1} = j, y'_i = k)``.
    """
    Ec, Ac, sc, ec = _sequence_scores(E, A, s, e)
    n, K = Ec.shape
    mu = np.empty((n, K), dtype=np.float64)
    xi = np.empty((K, K), dtype=np.float64)
    work = np.empty(forward_backward_work(n, K), dtype=np.float64)
    cdef const double[::1] Ev = Ec.reshape(-1), Av = Ac.reshape(-1), sv = sc, ev = ec
    cdef double[::1] workv = work, muv = mu.reshape(-1), xiv = xi.reshape(-1)
    cdef Py_ssize_t nn = n, KK = K
    cdef double logZ
    with nogil:
        logZ = forward_backward_kernel(_in(Ev), &Av[0], &sv[0], &ev[0], nn, KK, &workv[0], _out(muv), &xiv[0],
                                       chosen_lanes())
    return float(logZ), mu, xi


def chu_liu_edmonds(S, gold=None, one_root=False):
    """The maximum spanning arborescence rooted at 0 (non-projective trees).

    Parameters
    ----------
    S : array of shape (n+1, n+1), ``S[h, m]`` the score of the arc h -> m.
    gold : array of n+1 integer heads (``gold[0]`` ignored), for cost-augmented
        decoding: each arc h -> m with h != gold[m] scores 1 more.
    one_root : bool, default=False
        Only trees whose root heads one word (CoNLL-U's, UD's); otherwise the
        root may head several words, as arc-factored training decodes.

    Returns
    -------
    heads : int64 array of shape (n+1,), ``heads[m]`` the head of word m, ``heads[0] = -1``.

    Deterministic: equal-scoring trees are broken by node order (see the kernel's
    notes).
    """
    return _decode_tree(S, gold, False, one_root)


def eisner(S, gold=None, one_root=False):
    """The best projective tree rooted at 0 (Eisner's algorithm).

    Parameters and return as `chu_liu_edmonds`; the tree has no crossing arcs. Ties
    go to the first best split point of each span.
    """
    return _decode_tree(S, gold, True, one_root)


cdef _decode_tree(S, gold, bint projective, bint one_root):
    """The heads `eisner` (projective) or `chu_liu_edmonds` returns."""
    Sc, goldc, n = _tree_scores(S, gold)
    if one_root:
        Sc = Sc.copy()          # (one_root may lower the root's arcs)
    cdef tree_decoder kernel = eisner_kernel if projective else chu_liu_edmonds_kernel
    heads = np.empty(n + 1, dtype=np.int64)
    work = np.empty(eisner_work(n) if projective else chu_liu_edmonds_work(n), dtype=np.float64)
    iwork = np.empty(eisner_iwork(n) if projective else chu_liu_edmonds_iwork(n), dtype=np.int64)
    cdef const double[::1] Sv = Sc.reshape(-1)
    cdef double[::1] workv = work
    cdef int64_t[::1] iworkv = iwork, headsv = heads
    cdef const int64_t[::1] goldv = goldc if goldc is not None else NO_GOLD
    cdef Py_ssize_t nn = n
    with nogil:
        if one_root:            # (on the copy above: writable)
            one_root_kernel(kernel, <double*>&Sv[0], nn, _in(goldv), &workv[0], &iworkv[0], &headsv[0])
        else:
            kernel(&Sv[0], nn, _in(goldv), &workv[0], &iworkv[0], &headsv[0])
    return heads


ctypedef fused number:
    double
    int64_t


cdef inline const number* _in(const number[::1] a) noexcept nogil:
    """The first element's address, NULL for an empty view (the kernels never read it then)."""
    return &a[0] if a.shape[0] > 0 else NULL


cdef inline number* _out(number[::1] a) noexcept nogil:
    """The first element's address, NULL for an empty view (the kernels never write it then)."""
    return &a[0] if a.shape[0] > 0 else NULL


def _scores(name, x, ndim, meaning):
    """x as a C-contiguous float64 array of `ndim` dimensions, or ValueError."""
    try:
        a = np.ascontiguousarray(x, dtype=np.float64)
    except (TypeError, ValueError) as error:
        raise ValueError(f"{name} must be an array of numbers ({meaning}): {error}") from None
    if a.ndim != ndim:
        raise ValueError(f"{name} must be {ndim}-D ({meaning}), got shape {a.shape}.")
    return a


def _check_finite(name, values, n):
    """ValueError unless every value is finite and small enough that sums of up to
    4(n+1) of them stay in the double range."""
    if values.size == 0:
        return
    if not np.isfinite(values).all():
        raise ValueError(f"{name} holds NaN or infinite scores; decoders need finite scores "
                         "(replace them, e.g. with np.nan_to_num, or fix what produced them).")
    bound = DBL_MAX / (4.0 * (n + 1))
    largest = float(np.abs(values).max())
    if largest > bound:
        raise ValueError(f"{name} holds a score of magnitude {largest:.3g}, beyond {bound:.3g}: sums "
                         f"over {n} items would overflow; rescale the scores.")


def _sequence_scores(E, A, s, e):
    """E, A, s, e checked and as contiguous float64 arrays."""
    E = _scores("E", E, 2, "emission scores, n items x K labels")
    n, K = E.shape
    if K == 0:
        raise ValueError(f"E has shape {E.shape}: it needs one column per label, K >= 1.")
    A = _scores("A", A, 2, "transition scores, K x K")
    s = _scores("s", s, 1, "start scores, one per label")
    e = _scores("e", e, 1, "stop scores, one per label")
    if A.shape != (K, K):
        raise ValueError(f"A must be K x K = {K} x {K} to match E's {K} labels (columns), got shape {A.shape}.")
    for name, v in (("s", s), ("e", e)):
        if v.shape != (K,):
            raise ValueError(f"{name} must have shape ({K},) to match E's {K} labels (columns), got {v.shape}.")
    for name, v in (("E", E), ("A", A), ("s", s), ("e", e)):
        _check_finite(name, v, n)
    return E, A, s, e


def _gold_labels(y, cost, n, K):
    """The gold labels as int64 when cost-augmented decoding asks for them, else None."""
    if not isinstance(cost, (bool, np.bool_)):
        raise ValueError(f"cost must be True or False, got {cost!r}.")
    if not cost:
        if y is not None:
            raise ValueError("y is used only by cost-augmented decoding: pass cost=True with it, or leave y out.")
        return None
    if y is None:
        raise ValueError("cost=True needs the gold labels y (n integers in 0..K-1).")
    return _integers("y", y, n, 0, K - 1, "one label per row of E")


def _integers(name, x, length, low, high, meaning):
    """x as a contiguous int64 array of `length` integers in low..high, or ValueError."""
    a = np.asarray(x)
    if a.ndim != 1 or a.shape[0] != length:
        raise ValueError(f"{name} must be 1-D of length {length} ({meaning}), got shape {a.shape}.")
    if a.size and a.dtype.kind not in "iu":
        raise ValueError(f"{name} must hold integers ({meaning}), got dtype {a.dtype}.")
    if length and (a.min() < low or a.max() > high):
        raise ValueError(f"{name} must hold integers in {low}..{high} ({meaning}), got values "
                         f"from {a.min()} to {a.max()}.")
    return np.ascontiguousarray(a, dtype=np.int64)


def _tree_scores(S, gold):
    """S checked (its arcs finite) and as a contiguous float64 array, the gold heads
    as int64 (or None), and n."""
    S = _scores("S", S, 2, "arc scores, (n+1) x (n+1) with S[h, m] the arc h -> m")
    if S.shape[0] != S.shape[1] or S.shape[0] == 0:
        raise ValueError(f"S must be square, (n+1) x (n+1) for n words and the root 0, got shape {S.shape}.")
    n = S.shape[0] - 1
    arcs = ~np.eye(n + 1, dtype=bool)
    arcs[:, 0] = False
    _check_finite("S", S[arcs], n)
    if gold is None:
        return S, None, n
    g = _integers("gold", gold, n + 1, -1, n, "the head of each word, gold[0] ignored")
    m = np.arange(1, n + 1)
    if (g[1:] < 0).any() or (g[1:] == m).any():
        raise ValueError("gold[m] must be the head of word m: an integer in 0..n other than m itself.")
    return S, g, n
