"""The structured decoders (fastprox._decoders) against brute force over every
output of short inputs (tests/support/structured_reference.py, from the contract)."""
import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from hypothesis.extra.numpy import arrays

from fastprox import _kernels
from fastprox._decoders import chu_liu_edmonds, eisner, forward_backward, viterbi
from tests.support import forward_backward_scalar, structured_reference as ref

EXAMPLES = settings(max_examples=150, deadline=None)
FLOATS = st.floats(-5.0, 5.0, allow_nan=False)
# Small integers: sums are exact, ties are frequent.
INTEGERS = st.integers(-2, 2).map(float)


@st.composite
def chains(draw, values, n_max=5, K_max=3):
    """(E, A, s, e) of a random chain, n in 0..n_max items and K in 1..K_max labels."""
    n = draw(st.integers(0, n_max))
    K = draw(st.integers(1, K_max))
    E = draw(arrays(np.float64, (n, K), elements=values))
    A = draw(arrays(np.float64, (K, K), elements=values))
    s = draw(arrays(np.float64, (K,), elements=values))
    e = draw(arrays(np.float64, (K,), elements=values))
    return E, A, s, e


@st.composite
def arc_scores(draw, values, n_min=0, n_max=5):
    """A (n+1) x (n+1) arc-score matrix."""
    n = draw(st.integers(n_min, n_max))
    return draw(arrays(np.float64, (n + 1, n + 1), elements=values))


@st.composite
def with_gold_labels(draw, chain_strategy):
    """A chain and gold labels for it."""
    E, A, s, e = draw(chain_strategy)
    n, K = E.shape
    y = draw(arrays(np.int64, (n,), elements=st.integers(0, K - 1)))
    return (E, A, s, e), y


@st.composite
def with_gold_heads(draw, scores_strategy):
    """Arc scores and gold heads for them (any head per word but itself; a tree or not,
    the Hamming cost counts words)."""
    S = draw(scores_strategy)
    n = S.shape[0] - 1
    gold = [-1] + [draw(st.integers(0, n - 1).map(lambda h, m=m: h if h < m else h + 1)) for m in range(1, n + 1)]
    return S, np.array(gold, dtype=np.int64)


def sequence_score(E, A, s, e, y):
    return float(ref.sequence_scores(E, A, s, e, np.asarray(y)[None, :])[0])


def tree_score(S, heads):
    return float(ref.tree_scores(S, np.asarray(heads)[None, :])[0])


# Viterbi


@EXAMPLES
@given(chains(FLOATS))
def test_viterbi_score_is_the_maximum_and_its_labels_reach_it(chain):
    labels, score = viterbi(*chain)
    best, _ = ref.best_sequences(*chain)
    assert labels.dtype == np.int64 and labels.shape == (chain[0].shape[0],)
    assert score == pytest.approx(best, rel=1e-12, abs=1e-12)
    assert sequence_score(*chain, labels) == pytest.approx(best, rel=1e-12, abs=1e-12)


@EXAMPLES
@given(chains(INTEGERS))
def test_viterbi_ties_go_to_the_smallest_sequence_from_the_end(chain):
    labels, score = viterbi(*chain)
    best, optimal = ref.best_sequences(*chain)
    assert score == best
    assert labels.tolist() == ref.smallest_from_the_end(optimal)


@EXAMPLES
@given(with_gold_labels(chains(INTEGERS)))
def test_cost_augmented_viterbi_maximizes_score_plus_hamming(case):
    chain, y = case
    labels, score = viterbi(*chain, y=y, cost=True)
    best, optimal = ref.best_sequences(*chain, gold=y)
    assert score == best
    assert labels.tolist() == ref.smallest_from_the_end(optimal)
    assert sequence_score(*chain, labels) + ref.hamming(y, labels[None, :])[0] == best


def test_viterbi_all_tied_gives_all_zeros():
    labels, score = viterbi(np.zeros((4, 3)), np.zeros((3, 3)), np.zeros(3), np.zeros(3))
    assert labels.tolist() == [0, 0, 0, 0] and score == 0.0


def test_viterbi_one_item_uses_start_and_stop():
    E = np.array([[0.0, 1.0, 0.5]])
    labels, score = viterbi(E, np.zeros((3, 3)), np.array([0.0, 0.0, 1.0]), np.array([2.0, 0.0, 0.0]))
    assert labels.tolist() == [0] and score == 2.0   # 0 + 0 + 2 beats 1 and 0.5 + 1


def test_viterbi_one_label():
    E = np.array([[1.0], [2.0], [3.0]])
    labels, score = viterbi(E, np.array([[0.5]]), np.array([0.25]), np.array([0.125]))
    assert labels.tolist() == [0, 0, 0] and score == 6.0 + 1.0 + 0.25 + 0.125


def test_viterbi_empty_sequence():
    labels, score = viterbi(np.zeros((0, 2)), np.zeros((2, 2)), np.ones(2), np.ones(2))
    assert labels.shape == (0,) and labels.dtype == np.int64 and score == 0.0
    labels, score = viterbi(np.zeros((0, 2)), np.zeros((2, 2)), np.ones(2), np.ones(2), y=[], cost=True)
    assert labels.shape == (0,) and score == 0.0


def test_viterbi_huge_scores_stay_finite():
    rng = np.random.default_rng(0)
    E, A = rng.choice([-1e300, 1e300], (6, 3)), rng.choice([-1e300, 1e300], (3, 3))
    labels, score = viterbi(E, A, np.full(3, 1e300), np.full(3, -1e300))
    assert math.isfinite(score)
    assert score == pytest.approx(ref.best_sequences(E, A, np.full(3, 1e300), np.full(3, -1e300))[0], rel=1e-12)


# Forward-backward


def assert_marginals_match(chain, rtol=1e-9):
    logZ, mu, xi = forward_backward(*chain)
    logZ_ref, mu_ref, xi_ref = ref.crf_marginals(*chain)
    n, K = chain[0].shape
    assert mu.shape == (n, K) and xi.shape == (K, K)
    assert logZ == pytest.approx(logZ_ref, rel=rtol, abs=rtol)
    np.testing.assert_allclose(mu, mu_ref, rtol=rtol, atol=1e-300)
    np.testing.assert_allclose(xi, xi_ref, rtol=rtol, atol=1e-300)
    np.testing.assert_allclose(mu.sum(axis=1), 1.0, rtol=1e-12)
    assert xi.sum() == pytest.approx(max(n - 1, 0), rel=1e-12, abs=1e-12)
    return logZ, mu, xi


@EXAMPLES
@given(chains(FLOATS))
def test_forward_backward_matches_enumeration(chain):
    assert_marginals_match(chain)


# Transitions far apart (beyond the kernel's product form, FB_SAFE = 300) take the
# direct log-sum-exp for some sums: the same results.
WIDE = st.builds(lambda base, jump: base + jump, FLOATS, st.sampled_from([0.0, -400.0, 400.0, -800.0, 800.0]))


@EXAMPLES
@given(chains(FLOATS).flatmap(lambda c: st.tuples(
    st.just(c[0]), arrays(np.float64, c[1].shape, elements=WIDE), st.just(c[2]), st.just(c[3]))))
def test_forward_backward_with_far_apart_transitions_matches_enumeration(chain):
    assert_marginals_match(chain)


@st.composite
def lane_chains(draw):
    """A chain of every width the products in lanes split K into (a K below one
    vector, a multiple of it, a masked last vector: K = 1, 2, 3, 4, 5, 8, 22, 23),
    scores near or far apart (far apart, some positions and not others take the direct
    log-sum-exp, splitting the pair marginals' product into runs), or small integers
    (Viterbi's ties)."""
    n = draw(st.integers(0, 7))
    K = draw(st.sampled_from([1, 2, 3, 4, 5, 8, 22, 23]))
    values = draw(st.sampled_from([FLOATS, WIDE, INTEGERS]))
    E = draw(arrays(np.float64, (n, K), elements=values))
    A = draw(arrays(np.float64, (K, K), elements=values))
    s = draw(arrays(np.float64, (K,), elements=FLOATS))
    e = draw(arrays(np.float64, (K,), elements=FLOATS))
    return E, A, s, e


@settings(max_examples=60, deadline=None)
@given(lane_chains(), st.data())
def test_sequence_decoders_give_the_same_bits_in_every_set_of_lanes(chain, data):
    """The decoders' K x K steps in lanes (_kernel/lanes/chain.h) in each instruction set this
    CPU runs: forward-backward against its algorithm one scalar operation at a time (every
    bit of log Z, mu and xi), Viterbi (plain and cost-augmented) against the portable
    code's labels and score (the portable code's own against the scalar loop: tests/c/lanes.c)."""
    logZ, mu, xi = forward_backward_scalar.forward_backward(*(x.tolist() for x in chain))
    n, K = chain[0].shape
    want = np.float64(logZ).tobytes() + np.array(mu, np.float64).reshape(n, K).tobytes() + np.array(xi).tobytes()
    gold = data.draw(arrays(np.int64, (n,), elements=st.integers(0, K - 1)))
    best = {}
    before = _kernels.lanes()
    try:
        for name in _kernels.lanes_available():
            _kernels.use_lanes(name)
            got = forward_backward(*chain)
            assert np.float64(got[0]).tobytes() + got[1].tobytes() + got[2].tobytes() == want, name
            best[name] = [(labels.tobytes(), np.float64(score).tobytes())
                          for labels, score in (viterbi(*chain), viterbi(*chain, y=gold, cost=True))]
    finally:
        _kernels.use_lanes(before)
    assert all(found == best["portable"] for found in best.values()), list(best)


def test_forward_backward_one_item_and_one_label():
    E, s, e = np.array([[0.0, math.log(3.0)]]), np.zeros(2), np.zeros(2)
    logZ, mu, xi = forward_backward(E, np.zeros((2, 2)), s, e)
    assert logZ == pytest.approx(math.log(4.0), rel=1e-15)
    np.testing.assert_allclose(mu, [[0.25, 0.75]], rtol=1e-15)
    assert (xi == 0.0).all()
    logZ, mu, xi = forward_backward(np.array([[1.0], [2.0]]), np.array([[0.5]]), np.array([0.25]), np.array([0.125]))
    assert logZ == 3.875 and (mu == 1.0).all() and xi.tolist() == [[1.0]]


def test_forward_backward_empty_sequence():
    logZ, mu, xi = forward_backward(np.zeros((0, 3)), np.ones((3, 3)), np.ones(3), np.ones(3))
    assert logZ == 0.0 and mu.shape == (0, 3) and (xi == 0.0).all() and xi.shape == (3, 3)


# Multiples of 2**990 (~1e298): their sums are exact, and any two different sequence
# scores differ by at least 2**990, so p is uniform over the best sequences.
HUGE = st.integers(-3, 3).map(lambda k: math.ldexp(k, 990))


@EXAMPLES
@given(chains(HUGE))
def test_forward_backward_huge_scores_stay_finite(chain):
    logZ, mu, xi = forward_backward(*chain)
    logZ_ref, mu_ref, xi_ref = ref.crf_marginals(*chain)
    n, K = chain[0].shape
    assert math.isfinite(logZ) and np.isfinite(mu).all() and np.isfinite(xi).all()
    # At this scale a log-sum-exp adds log(number of tied paths) below rounding: up to
    # n log K lost (exact where the best sequence is unique).
    assert abs(logZ - logZ_ref) <= n * math.log(K) + 1e-9 * abs(logZ_ref)
    np.testing.assert_allclose(mu.sum(axis=1), 1.0, rtol=1e-12)
    assert xi.sum() == pytest.approx(max(n - 1, 0), rel=1e-12, abs=1e-12)
    _, optimal = ref.best_sequences(*chain)
    if len(optimal) == 1:
        assert logZ == logZ_ref
        np.testing.assert_array_equal(mu, mu_ref)
        np.testing.assert_array_equal(xi, xi_ref)


# Chu-Liu-Edmonds and Eisner


def assert_tree(heads, n, projective=False):
    assert heads.dtype == np.int64 and heads.shape == (n + 1,) and heads[0] == -1
    assert ref.is_tree(heads.tolist())
    if projective:
        assert ref.is_projective(heads.tolist())


@pytest.mark.parametrize("decoder, projective", [(chu_liu_edmonds, False), (eisner, True)])
@EXAMPLES
@given(S=arc_scores(FLOATS))
def test_tree_decoders_find_the_best_tree(decoder, projective, S):
    heads = decoder(S)
    n = S.shape[0] - 1
    assert_tree(heads, n, projective)
    assert tree_score(S, heads) == pytest.approx(ref.best_tree_score(S, projective=projective), rel=1e-12, abs=1e-12)


@pytest.mark.parametrize("decoder, projective", [(chu_liu_edmonds, False), (eisner, True)])
@EXAMPLES
@given(S=arc_scores(INTEGERS))
def test_tree_decoders_with_ties_return_a_best_tree_deterministically(decoder, projective, S):
    heads = decoder(S)
    assert_tree(heads, S.shape[0] - 1, projective)
    assert tree_score(S, heads) == ref.best_tree_score(S, projective=projective)
    assert decoder(S.copy()).tolist() == heads.tolist()


@pytest.mark.parametrize("decoder, projective", [(chu_liu_edmonds, False), (eisner, True)])
@EXAMPLES
@given(case=with_gold_heads(arc_scores(INTEGERS, n_min=1)))
def test_cost_augmented_tree_decoders_maximize_score_plus_hamming(decoder, projective, case):
    S, gold = case
    heads = decoder(S, gold=gold)
    assert_tree(heads, S.shape[0] - 1, projective)
    augmented = tree_score(S, heads) + ref.hamming(gold[1:], heads[None, 1:])[0]
    assert augmented == ref.best_tree_score(S, gold=gold, projective=projective)


@pytest.mark.parametrize("decoder, projective", [(chu_liu_edmonds, False), (eisner, True)])
@pytest.mark.parametrize("values", [INTEGERS, FLOATS], ids=["integers", "floats"])
@EXAMPLES
@given(data=st.data(), costed=st.booleans())
def test_one_root_tree_decoders_find_the_best_tree_with_one_word_on_the_root(decoder, projective, values, data,
                                                                             costed):
    """CoNLL-U's trees (one word with HEAD 0): the best of them by brute force, S left
    as it was, and the free decoder's tree itself when it has one root."""
    S, gold = data.draw(with_gold_heads(arc_scores(values, n_min=1)))
    gold = gold if costed else None
    given_S = S.copy()
    heads = decoder(S, gold=gold, one_root=True)
    assert_tree(heads, S.shape[0] - 1, projective)
    assert (heads[1:] == 0).sum() == 1
    assert np.array_equal(S, given_S)
    score = tree_score(S, heads) + (0 if gold is None else ref.hamming(gold[1:], heads[None, 1:])[0])
    assert score == pytest.approx(ref.best_tree_score(S, gold, projective, one_root=True), rel=1e-12, abs=1e-12)
    free = decoder(S, gold=gold)
    if (free[1:] == 0).sum() == 1:
        assert heads.tolist() == free.tolist()


def test_one_root_lowers_the_root_arcs_only_when_the_best_tree_has_several():
    # The best tree hangs both words from the root (3 + 3); with one root, 0 -> 1 -> 2 (3 + 1).
    S = np.array([[0.0, 3.0, 3.0], [0.0, 0.0, 1.0], [0.0, 0.0, 0.0]])
    for decoder in (chu_liu_edmonds, eisner):
        assert decoder(S).tolist() == [-1, 0, 0]
        assert decoder(S, one_root=True).tolist() == [-1, 0, 1]
    assert chu_liu_edmonds(np.zeros((1, 1)), one_root=True).tolist() == [-1]


def test_chu_liu_edmonds_breaks_a_cycle_the_best_heads_close():
    # Words 1 and 2 prefer each other (score 10); the root's arcs score 1 and 0.
    S = np.array([[0.0, 1.0, 0.0], [0.0, 0.0, 10.0], [0.0, 10.0, 0.0]])
    assert chu_liu_edmonds(S).tolist() == [-1, 0, 1]
    # A non-projective best tree: 0 -> 2, 2 -> 1... and 1 -> 3 crossing 0 -> 2.
    S = np.full((4, 4), -5.0)
    S[0, 2], S[2, 1], S[1, 3] = 1.0, 1.0, 1.0
    assert chu_liu_edmonds(S).tolist() == [-1, 2, 0, 1]
    assert ref.is_projective([-1, 2, 0, 1]) is False
    assert ref.is_projective(eisner(S).tolist())


@pytest.mark.parametrize("decoder", [chu_liu_edmonds, eisner])
def test_tree_decoders_small_and_empty(decoder):
    assert decoder(np.zeros((1, 1))).tolist() == [-1]
    assert decoder(np.zeros((1, 1)), gold=[-1]).tolist() == [-1]
    assert decoder(np.array([[0.0, -7.0], [3.0, 0.0]])).tolist() == [-1, 0]
    # The diagonal and column 0 are not arcs: anything there is ignored.
    S = np.array([[np.nan, 2.0, 1.0], [np.inf, np.nan, 3.0], [-np.inf, 0.0, np.nan]])
    assert decoder(S).tolist() == [-1, 0, 1]


@pytest.mark.parametrize("decoder, projective", [(chu_liu_edmonds, False), (eisner, True)])
def test_tree_decoders_on_realistic_sizes_return_trees(decoder, projective):
    rng = np.random.default_rng(7)
    for n in (16, 40, 80):
        heads = decoder(rng.normal(size=(n + 1, n + 1)))
        assert_tree(heads, n, projective)


def test_chu_liu_edmonds_is_at_least_eisner():
    rng = np.random.default_rng(3)
    for n in (8, 16, 40):
        S = rng.normal(size=(n + 1, n + 1))
        assert tree_score(S, chu_liu_edmonds(S)) >= tree_score(S, eisner(S)) - 1e-12


def test_references_count_every_tree():
    # Rooted labelled trees: (n+1)^(n-1); projective ones: C(3n, n) / (2n + 1).
    for n in range(1, 6):
        assert len(ref.trees(n)) == (n + 1) ** (n - 1)
        assert len(ref.trees(n, projective=True)) == math.comb(3 * n, n) // (2 * n + 1)


# Input types and threads


def test_decoders_take_any_real_dtype_and_read_only_arrays():
    rng = np.random.default_rng(5)
    E, A, s, e = (rng.integers(-3, 4, shape) for shape in ((5, 3), (3, 3), (3,), (3,)))
    S = rng.integers(-3, 4, (6, 6))
    y = [0, 1, 2, 0, 1]
    floats = [x.astype(np.float64) for x in (E, A, s, e)]
    expected = (viterbi(*floats)[0], viterbi(*floats, y=y, cost=True)[0], forward_backward(*floats),
                chu_liu_edmonds(S.astype(np.float64)), eisner(S.astype(np.float64)))
    for convert in (lambda x: x, lambda x: x.astype(np.float64), lambda x: x.astype(np.float32),
                    lambda x: x.tolist(), lambda x: np.asfortranarray(x.astype(np.float64))):
        chain = [convert(x) for x in (E, A, s, e)]
        for x in chain:
            if isinstance(x, np.ndarray):
                x.setflags(write=False)
        assert viterbi(*chain)[0].tolist() == expected[0].tolist()
        assert viterbi(*chain, y=np.array(y, dtype=np.int32), cost=True)[0].tolist() == expected[1].tolist()
        logZ, mu, xi = forward_backward(*chain)
        assert logZ == pytest.approx(expected[2][0], rel=1e-15)
        np.testing.assert_allclose(mu, expected[2][1], rtol=1e-14)
        np.testing.assert_allclose(xi, expected[2][2], rtol=1e-14)
        assert chu_liu_edmonds(convert(S)).tolist() == expected[3].tolist()
        assert eisner(convert(S)).tolist() == expected[4].tolist()


def test_decoders_run_concurrently_without_the_gil():
    from concurrent.futures import ThreadPoolExecutor
    rng = np.random.default_rng(11)
    cases = [rng.normal(size=(n + 1, n + 1)) for n in rng.integers(1, 60, 40)]
    chains = [(rng.normal(size=(n, 7)), rng.normal(size=(7, 7)), rng.normal(size=7), rng.normal(size=7))
              for n in rng.integers(0, 30, 40)]
    alone = [(chu_liu_edmonds(S).tolist(), eisner(S).tolist()) for S in cases]
    alone_chains = [(viterbi(*c)[0].tolist(), forward_backward(*c)[0]) for c in chains]
    with ThreadPoolExecutor(4) as pool:
        together = list(pool.map(lambda S: (chu_liu_edmonds(S).tolist(), eisner(S).tolist()), cases))
        together_chains = list(pool.map(lambda c: (viterbi(*c)[0].tolist(), forward_backward(*c)[0]), chains))
    assert together == alone and together_chains == alone_chains


# Bad input


CHAIN = (np.zeros((3, 2)), np.zeros((2, 2)), np.zeros(2), np.zeros(2))


@pytest.mark.parametrize("index, value, message", [
    (0, np.zeros(3), "E must be 2-D"),
    (0, np.zeros((3, 0)), "K >= 1"),
    (0, [["a", "b"]], "E must be an array of numbers"),
    (1, np.zeros((2, 3)), "A must be K x K = 2 x 2"),
    (2, np.zeros(3), r"s must have shape \(2,\)"),
    (3, np.zeros((2, 1)), "e must be 1-D"),
    (0, np.array([[0.0, np.nan]] * 3), "E holds NaN or infinite"),
    (1, np.array([[0.0, np.inf], [0.0, 0.0]]), "A holds NaN or infinite"),
    (3, np.array([1e308, 0.0]), "rescale"),
])
def test_sequence_decoders_refuse_bad_scores(index, value, message):
    chain = list(CHAIN)
    chain[index] = value
    for decoder in (viterbi, forward_backward):
        with pytest.raises(ValueError, match=message):
            decoder(*chain)


@pytest.mark.parametrize("kwargs, message", [
    ({"y": [0, 1, 0]}, "pass cost=True"),
    ({"cost": True}, "needs the gold labels"),
    ({"cost": 1, "y": [0, 1, 0]}, "cost must be True or False"),
    ({"cost": True, "y": [0, 1]}, "length 3"),
    ({"cost": True, "y": [0, 2, 0]}, r"in 0\.\.1"),
    ({"cost": True, "y": [0.0, 1.0, 0.0]}, "must hold integers"),
])
def test_viterbi_refuses_bad_gold_labels(kwargs, message):
    with pytest.raises(ValueError, match=message):
        viterbi(*CHAIN, **kwargs)


@pytest.mark.parametrize("S, gold, message", [
    (np.zeros((2, 3)), None, "S must be square"),
    (np.zeros((0, 0)), None, "S must be square"),
    (np.zeros(3), None, "S must be 2-D"),
    (np.array([[0.0, np.nan], [0.0, 0.0]]), None, "S holds NaN"),
    (np.array([[0.0, 1.0, 1e308], [0.0, 0.0, 0.0], [0.0, 0.0, 0.0]]), None, "rescale"),
    (np.zeros((3, 3)), [-1, 0], "length 3"),
    (np.zeros((3, 3)), [-1, 1, 1], "other than m itself"),
    (np.zeros((3, 3)), [-1, 0, 3], r"in -1\.\.2"),
    (np.zeros((3, 3)), [-1, 0, -1], "other than m itself"),
])
@pytest.mark.parametrize("decoder", [chu_liu_edmonds, eisner])
def test_tree_decoders_refuse_bad_input(decoder, S, gold, message):
    with pytest.raises(ValueError, match=message):
        decoder(S, gold=gold)
