"""SequenceTagger (fastprox.structured.tagger, its loops in structured/_tagger.pyx)
against references written from the contract's "Structured outputs":

- prediction: Viterbi equals the best labelling found by enumerating every label
  sequence of short inputs (the contract's tie rule included), the marginals equal
  the enumerated ones;
- training, lazy = eager: every rule of the table (but the normalized schedule) over
  random short streams of sequences, decoded by brute force on the eager model's
  scores and stepped by tests/support/structured_update_reference.py;
- the compiled loop's steps are bit for bit those of StructuredLearner.step_decoded
  driven from Python with the decoders' Python API, for the three losses;
- partial_fit and pickles mid-stream, clone and get_params, empty and one-item
  sequences, float32 and int64 input, sample weights, threads, bad input.
"""
import pickle
import threading

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, assume, given, settings, strategies as st
from sklearn.base import clone

from fastprox import _kernels
from fastprox._decoders import forward_backward, viterbi
from fastprox._registry import PENALTIES as PENALTY_TABLE, RULES as ALL_RULES
from fastprox.structured import SequenceTagger, StructuredLearner
from tests.support.reference import assert_contract_close
from tests.support.reference_multiclass import random_group_weights
from tests.support.structured_reference import (best_sequences, crf_marginals, hamming, label_sequences,
                                         sequence_scores, smallest_from_the_end)
from tests.support.structured_update_reference import StructuredUpdateReference

RULES = [(r.update, r.schedule, r.penalty) for r in ALL_RULES if r.schedule != "normalized"]
LOSSES = ("perceptron", "hinge", "log")
SETTINGS = settings(max_examples=6, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])


def random_sequences(rng, n_sequences, d, K, longest=4, density=0.5):
    """(X CSR, y codes, lengths) of random sequences of 0..longest items (values in
    [-2, 2], some items without features)."""
    lengths = rng.integers(0, longest + 1, n_sequences)
    lengths[0] = max(lengths[0], 1)
    n = int(lengths.sum())
    X = sp.random(n, d, density=density, format="csr", random_state=rng,
                  data_rvs=lambda k: rng.uniform(-2, 2, k))
    return X, rng.integers(0, K, n), lengths


def split(X, y, lengths):
    """Each sequence's (X rows, y)."""
    starts = np.concatenate([[0], np.cumsum(lengths)])
    return [(X[a:b], y[a:b]) for a, b in zip(starts[:-1], starts[1:])]


def counts(labels, K):
    """A labelling's transition, start and stop counts, in the unpenalized layout."""
    u = np.zeros(K * K + 2 * K)
    if len(labels):
        np.add.at(u, labels[:-1] * K + labels[1:], 1.0)
        u[K * K + labels[0]] += 1.0
        u[K * K + K + labels[-1]] += 1.0
    return u


def parts(U, K):
    """The unpenalized entries as (A, s, e)."""
    return U[:K * K].reshape(K, K), U[K * K:K * K + K], U[K * K + K:]


def gold_score(E, A, s, e, y):
    """score(y) summed in Viterbi's order (as the compiled loop sums it)."""
    g = E[0, y[0]] + s[y[0]]
    for i in range(1, len(y)):
        g = (g + A[y[i - 1], y[i]]) + E[i, y[i]]
    return g + e[y[-1]]


def python_decoder(loss, y, K):
    """The compiled loop's decoding written with the decoders' Python API: the
    (Q, u) StructuredLearner.step_decoded takes, from the items' scores and the
    unpenalized entries."""
    def decode(E, U):
        n, A, s, e, gold = len(y), *parts(U, K), counts(y, K)
        if n == 0:
            return np.zeros((0, K)), np.zeros(K * K + 2 * K)
        if loss == "log":
            _, mu, xi = forward_backward(E, A, s, e)
            Q = mu.copy()
            Q[np.arange(n), y] = mu[np.arange(n), y] - 1.0
            return Q, np.concatenate([xi.ravel(), mu[0], mu[-1]]) - gold
        labels, best = viterbi(E, A, s, e, y if loss == "hinge" else None, cost=loss == "hinge")
        if loss == "hinge" and not best - gold_score(E, A, s, e, y) > 0:
            return np.zeros((n, K)), np.zeros(K * K + 2 * K)
        Q = np.zeros((n, K))
        np.add.at(Q, (np.arange(n), labels), 1.0)
        np.add.at(Q, (np.arange(n), y), -1.0)
        return Q, counts(labels, K) - gold
    return decode


class Tie(Exception):
    """Two labellings (or the hinge's loss and 0) within rounding of each other: the
    lazy and the eager models, equal to rounding, may decide either way."""


def check_no_tie(E, A, s, e, gold, best):
    """Tie unless the best (augmented) score is clear of every other labelling's."""
    Y = label_sequences(*E.shape)
    scores = sequence_scores(E, A, s, e, Y) + (0 if gold is None else hamming(gold, Y))
    size = np.abs(E).sum() + np.abs(A).sum() + np.abs(s).sum() + np.abs(e).sum() + E.shape[0]
    scale = 1e-9 * max(1.0, size)
    if np.sum(scores >= best - scale) > 1:
        raise Tie
    return scale


def python_step(learner, loss, X, y, K, h):
    """A sequence's step as the compiled loop takes it, from Python: the CRF's by
    `step_decoded` (scores, decoder, step over all items); the perceptron's and the
    hinge's by the items' scores, the decoder, then `step` over the items whose score
    gradient is not 0 (the others' features stay untouched)."""
    if loss == "log":
        learner.step_decoded(X, python_decoder(loss, y, K), h)
        return
    Q, u = python_decoder(loss, y, K)(learner.scores(X), learner.unpenalized())
    wrong = np.any(Q != 0, axis=1)
    learner.step(X[wrong], Q[wrong], u, h)


def brute_force_decoder(loss, y, K):
    """The contract's gradient of a sequence from its scores, decoding by enumerating
    every labelling (the eager reference's decoder); Tie where rounding decides."""
    def decode(E, U):
        n, A, s, e, gold = len(y), *parts(U, K), counts(y, K)
        if n == 0:
            return np.zeros((0, K)), np.zeros(K * K + 2 * K)
        if loss == "log":
            _, mu, xi = crf_marginals(E, A, s, e)
            return mu - np.eye(K)[y], np.concatenate([xi.ravel(), mu[0], mu[-1]]) - gold
        best, rows = best_sequences(E, A, s, e, y if loss == "hinge" else None)
        labels = np.array(smallest_from_the_end(rows), dtype=np.int64)
        scale = check_no_tie(E, A, s, e, y if loss == "hinge" else None, best)
        if loss == "hinge" and abs(best - gold_score(E, A, s, e, y)) <= scale and np.any(labels != y):
            raise Tie
        if loss == "hinge" and not best - gold_score(E, A, s, e, y) > 0:
            return np.zeros((n, K)), np.zeros(K * K + 2 * K)
        return np.eye(K)[labels] - np.eye(K)[y], counts(labels, K) - gold
    return decode


def grouped(rule):
    return PENALTY_TABLE[rule[2]].family == "group"


@st.composite
def streams(draw, rule):
    """Random sequences and the tagger's rule parameters."""
    d = draw(st.integers(1, 6))
    K = draw(st.sampled_from([2, 3]))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    X, y, lengths = random_sequences(rng, draw(st.integers(1, 6)), d, K, longest=3)
    params = dict(alpha=draw(st.sampled_from([0.0, 1e-3, 0.05])),
                  l1_ratio=draw(st.sampled_from([0.3, 0.85])),
                  eta0=draw(st.sampled_from([0.05, 0.3, 1.0])),
                  delta=draw(st.sampled_from([1e-8, 0.5])),
                  rda_rho=0.0 if grouped(rule) else draw(st.sampled_from([0.0, 0.02])),
                  berhu_gamma=draw(st.sampled_from([0.05, 0.5])),
                  fit_intercept=draw(st.booleans()))
    if grouped(rule):
        groups = rng.integers(-1, draw(st.integers(1, 3)), d) if draw(st.booleans()) else None
        n_groups = d if groups is None else int(groups.max(initial=-1)) + 1
        params.update(groups=groups,
                      group_weights=random_group_weights(rng, n_groups) if draw(st.booleans()) else None)
    weights = rng.uniform(0.2, 2.0, len(lengths)) if draw(st.booleans()) else None
    return dict(d=d, K=K, X=X, y=y, lengths=lengths, weights=weights, params=params,
                loss=draw(st.sampled_from(LOSSES)))


def tagger(rule, s, **more):
    update, schedule, penalty = rule
    return SequenceTagger(loss=s["loss"], update=update, schedule=schedule, penalty=penalty, shuffle=False,
                          max_iter=1, **s["params"], **more)


def model_bits(model):
    return b"".join(a.tobytes() for a in (model.coef_, model.intercept_, model.transitions_, model.start_,
                                          model.stop_))


# ---------------------------------------------------------------------- prediction
@pytest.mark.parametrize("seed", range(12))
def test_predict_and_marginals_equal_brute_force(seed):
    """Viterbi's labelling is the best of all label sequences (the smallest from the
    end among ties: integer weights make ties), forward-backward's marginals the
    enumerated ones."""
    rng = np.random.default_rng(seed)
    K, d = int(rng.integers(2, 4)), 5
    X, y, lengths = random_sequences(rng, 6, d, K, longest=5)
    if seed % 3 == 0:
        X.data = np.round(X.data)           # integer scores: ties
    model = SequenceTagger(loss="log", max_iter=2, random_state=seed, penalty=None, eta0=0.7)
    model.fit(X, np.array(["a", "b", "c"])[y], lengths)
    W, b, A, s, e = model.coef_, model.intercept_, model.transitions_, model.start_, model.stop_
    if seed % 3 == 0:
        W, b, A, s, e = (np.round(v * 2) for v in (W, b, A, s, e))
        model._snapshot = (model.t_, W, b, A, s, e)
    predicted, marginals = model.predict(X, lengths), model.predict_marginals(X, lengths)
    for (Xs, _), first in zip(split(X, y, lengths), np.concatenate([[0], np.cumsum(lengths)])):
        n = Xs.shape[0]
        if n == 0:
            continue
        E = Xs.toarray() @ W + b
        _, rows = best_sequences(E, A, s, e)
        assert list(model.classes_.searchsorted(predicted[first:first + n])) == smallest_from_the_end(rows)
        _, mu, _ = crf_marginals(E, A, s, e)
        np.testing.assert_allclose(marginals[first:first + n], mu, rtol=1e-10, atol=1e-12)


def test_predict_marginals_is_for_the_log_loss_only():
    assert hasattr(SequenceTagger(loss="log"), "predict_marginals")
    assert not hasattr(SequenceTagger(loss="hinge"), "predict_marginals")


# ---------------------------------------------------------------------- training
def seen_mask(X, y, K):
    """(d, K): whether an item with feature j (a stored entry of X) is labelled k."""
    structure = sp.csr_matrix((np.ones(X.nnz), X.indices, X.indptr), shape=X.shape)
    return np.asarray((structure.T @ np.eye(K)[y]) > 0)


def check_lazy_equals_eager(rule, data, label_features="all"):
    s = data.draw(streams(rule))
    K = s["K"]
    model = tagger(rule, s, label_features=label_features)
    model.partial_fit(s["X"], s["y"], s["lengths"], classes=np.arange(K), sample_weight=s["weights"])
    eager = StructuredUpdateReference(s["d"], K, K * K + 2 * K, *rule, **s["params"])
    mask = seen_mask(s["X"], s["y"], K) if label_features == "seen" else np.ones((s["d"], K), bool)
    for r, (Xs, ys) in enumerate(split(s["X"], s["y"], s["lengths"])):
        Xd = Xs.toarray()
        try:
            Q, u = brute_force_decoder(s["loss"], ys, K)(eager.scores(Xd), eager.unpenalized())
        except Tie:
            assume(False)
        assume(not (rule[1] == "adagrad" and s["loss"] == "log" and cancels(Xd, Q, u)))
        h = 1.0 if s["weights"] is None else s["weights"][r]
        if label_features == "seen":        # W's gradient outside the seen pairs dropped
            eager.step_rows(np.arange(s["d"]), (Xd.T @ Q) * mask, Q.sum(axis=0), u, h)
        else:
            eager.step(Xd, Q, u, h)
    assert model.t_ == eager.t
    U = eager.unpenalized()
    close = assert_contract_close if s["loss"] != "log" else assert_close_to_rounded_zeros
    close(model.coef_, eager.coef().T)
    close(model.intercept_, eager.intercept())
    close(model.transitions_.ravel(), U[:K * K])
    close(model.start_, U[K * K:K * K + K])
    close(model.stop_, U[K * K + K:])


def cancels(Xd, Q, u):
    """Whether an entry of the CRF's gradient (features, intercepts, transitions and
    ends) sums terms that cancel to within rounding of 0. Enumeration and forward-
    backward round such a sum differently (an exact 0 in one, a few ulps in the other),
    and AdaGrad's step, scale-free, turns that residue r into a weight change of
    eta0 r / delta (delta = 1e-8): rounding decides the step, as in a tie."""
    tiny = 64 * np.finfo(float).eps
    g, scale = np.concatenate([Xd.T @ Q, Q.sum(axis=0, keepdims=True)]), np.abs(Xd).T @ np.abs(Q)
    scale = np.concatenate([scale, np.abs(Q).sum(axis=0, keepdims=True)])
    return bool(np.any((np.abs(g) <= tiny * scale) & (scale > 0))
                or np.any(np.abs(u) <= tiny * max(1, len(Q))))


def assert_close_to_rounded_zeros(lazy, eager):
    """assert_contract_close for the CRF, whose eager marginals are enumerated and the
    kernel's computed by forward-backward, equal to rounding: a gradient that cancels
    exactly in one cancels to a rounding residue in the other, so the eager model's
    exact zeros are matched by values within 1e-12 of the largest weight."""
    lazy = np.array(lazy, dtype=float)
    residue = (eager == 0) & (np.abs(lazy) <= 1e-12 * max(1.0, np.max(np.abs(eager), initial=0.0)))
    lazy[residue] = 0.0
    assert_contract_close(lazy, eager)


@pytest.mark.parametrize("rule", RULES, ids=["-".join(r) for r in RULES])
@settings(SETTINGS, max_examples=12)
@given(data=st.data())
def test_lazy_equals_eager(rule, data):
    """Every rule, the three losses: the tagger's model after one pass equals the
    eager reference's, which decodes each sequence by brute force on its own scores
    and steps densely."""
    check_lazy_equals_eager(rule, data)


@pytest.mark.parametrize("rule", RULES, ids=["-".join(r) for r in RULES])
@settings(SETTINGS, max_examples=8)
@given(data=st.data())
def test_seen_label_features_lazy_equals_eager(rule, data):
    """label_features="seen": every rule, the three losses: the tagger's model after
    one partial_fit equals the eager reference's stepped with W's gradient masked to
    the (feature, gold label) pairs of the data (the contract's update of the model
    whose feature map is Phi restricted to those pairs); W is 0 outside them."""
    check_lazy_equals_eager(rule, data, label_features="seen")


@pytest.mark.slow
@pytest.mark.parametrize("rule", RULES, ids=["-".join(r) for r in RULES])
@settings(SETTINGS, max_examples=150)
@given(data=st.data())
def test_lazy_equals_eager_at_length(rule, data):
    """test_lazy_equals_eager with more examples."""
    check_lazy_equals_eager(rule, data)


@pytest.mark.parametrize("rule", [("fobos", "adagrad", "l1"), ("fobos", "invsqrt", "berhu"),
                                  ("rda", "adagrad", "elasticnet"), ("ftrl", "adagrad", "l1"),
                                  ("fobos", "constant", "squared_group"), ("fobos", "inv", "sparse_group"),
                                  ("rda", "adagrad", "l1_linf")],
                         ids=lambda r: "-".join(r) if isinstance(r, tuple) else r)
@pytest.mark.parametrize("loss", LOSSES)
@settings(SETTINGS, max_examples=4)
@given(data=st.data(), dtype=st.sampled_from([np.float64, np.float32]),
       itype=st.sampled_from([np.int32, np.int64]))
def test_compiled_loop_equals_step_decoded(rule, loss, data, dtype, itype):
    """fit_sequences' steps are StructuredLearner's driven from Python with the
    decoders' Python API (`python_step`): the same bits (float32 values and int64
    indices too)."""
    s = data.draw(streams(rule))
    s["loss"] = loss
    K = s["K"]
    X = s["X"].astype(dtype)
    X.indices, X.indptr = X.indices.astype(itype), X.indptr.astype(itype)
    model = tagger(rule, s).partial_fit(X, s["y"], s["lengths"], classes=np.arange(K),
                                        sample_weight=s["weights"])
    update, schedule, penalty = rule
    learner = StructuredLearner(s["d"], K, K * K + 2 * K, update=update, schedule=schedule, penalty=penalty,
                                **s["params"])
    for r, (Xs, ys) in enumerate(split(X, s["y"], s["lengths"])):
        python_step(learner, loss, Xs, ys, K, 1.0 if s["weights"] is None else s["weights"][r])
    U = learner.unpenalized_
    assert model.coef_.T.tobytes() == learner.coef_.tobytes()
    assert model.intercept_.tobytes() == learner.intercept_.tobytes()
    assert np.concatenate([model.transitions_.ravel(), model.start_, model.stop_]).tobytes() == U.tobytes()


@pytest.mark.parametrize("label_features", ["all", "seen"])
@pytest.mark.parametrize("penalty, rho", [("l1", 0.0), ("l1", 0.5), ("none", 0.0)])
def test_rda_adagrad_rows_equal_the_general_step(penalty, rho, label_features):
    """rda with AdaGrad and a separable penalty scores and updates the CRF's rows by
    its own loops (`steps/structured.pxd`: `dual_adagrad_rows`), the averaged iterate
    kept or not: the same state, bit for bit, as the general step's, over several
    passes with sample weights, empty sequences, the averaging begun mid-pass, not
    yet begun (average past the last step) or from the first step, an l1 threshold
    that zeroes entries between their visits (the skipped iterates' sums stop where
    they reach 0), and a warm start. With label_features="seen" the loops visit the
    seen entries only: the same model."""
    rng = np.random.default_rng(3)
    X, y, lengths = (random_sequences(rng, 40, 30, 4, longest=7) if label_features == "all" else
                     random_sequences(rng, 40, 200, 4, longest=7, density=0.02))
    assert label_features == "all" or not seen_mask(X, y, 4).all()
    weights = rng.uniform(0.5, 2.0, len(lengths))
    assert (lengths == 0).any()
    for loss in LOSSES:
        for average in (False, 1, 57, 10 ** 6):
            params = dict(loss=loss, update="rda", schedule="adagrad", penalty=penalty, alpha=1e-2, rda_rho=rho,
                          eta0=0.5, max_iter=3, average=average, random_state=0, warm_start=True,
                          label_features=label_features)
            assert_rows_equal_the_general_step(params, X, y, lengths, weights, 4)


@pytest.mark.parametrize("K", [3, 11])
def test_rda_adagrad_rows_in_every_set_of_lanes_equal_the_general_step(K):
    """The rows' loops over a feature's K entries run in lanes (`_kernel/lanes/structured_rows.h`,
    `Ctx.lanes`): with every set this CPU runs (`_kernels.use_lanes`; K = 3 and 11, whose
    last entries take the portable code at every width) the kernel state is the general
    step's, bit for bit, under l1 with rho > 0 averaged from mid-pass and under l2; and
    each set leaves the upper halves of the vector registers unused."""
    rng = np.random.default_rng(5)
    X, y, lengths = random_sequences(rng, 40, 30, K, longest=7)
    weights = rng.uniform(0.5, 2.0, len(lengths))
    before = _kernels.lanes()
    try:
        for name in _kernels.lanes_available():
            _kernels.use_lanes(name)
            for penalty, rho, average in (("l1", 0.5, 57), ("l2", 0.0, False)):
                params = dict(loss="log", update="rda", schedule="adagrad", penalty=penalty, alpha=1e-2,
                              rda_rho=rho, eta0=0.5, max_iter=3, average=average, random_state=0,
                              warm_start=True, label_features="all")
                assert_rows_equal_the_general_step(params, X, y, lengths, weights, K)
            assert not _kernels.upper_state_in_use(), name
    finally:
        _kernels.use_lanes(before)


def state_bytes(model):
    """The bytes of a tagger's whole kernel state: its arrays (the state rows with the
    averaged sums and stamps), the unpenalized entries' sums and the scalars."""
    state = model._learner._learner.__getstate__()
    arrays = {**state.pop("arrays"), **{k: v for k, v in state.items() if isinstance(v, np.ndarray)}}
    scalars = {k: v for k, v in state.items() if not isinstance(v, np.ndarray)}
    return b"".join(arrays[k].tobytes() for k in sorted(arrays)), scalars


class GeneralStepTagger(SequenceTagger):
    """A SequenceTagger whose kernel takes the general structured step for every rule
    (`Learner._use_general_step`: no row loops of its own)."""

    def new_learner(self, n_features, n_outputs, n_unpenalized):
        learner = super().new_learner(n_features, n_outputs, n_unpenalized)
        learner._learner._use_general_step()
        return learner


def assert_rows_equal_the_general_step(params, X, y, lengths, weights, K):
    """A tagger of `params` (warm_start) trained by the rows' own loops and one by the
    general step (`GeneralStepTagger`), each a fit with sample weights and two more
    passes: the same kernel state, bit for bit (with label_features="seen" the same
    model, the entries outside the seen pairs 0)."""
    fast, general = SequenceTagger(**params), GeneralStepTagger(**params)
    for model in (fast, general):
        model.fit(X, y, lengths, sample_weight=weights)
        model.set_params(max_iter=2).fit(X, y, lengths)
    if params["label_features"] == "all":
        assert state_bytes(fast) == state_bytes(general)
    assert model_bits(fast) == model_bits(general)
    if params["label_features"] == "seen":
        assert np.all(fast.coef_[~seen_mask(X, y, K)] == 0)


@pytest.mark.parametrize("label_features", ["all", "seen"])
@pytest.mark.parametrize("penalty, l1_ratio", [("l2", 0.15), ("l1", 0.15), ("elasticnet", 0.3), ("none", 0.15)])
@pytest.mark.parametrize("K", [3, 4, 11])
def test_fobos_adagrad_rows_equal_the_general_step(penalty, l1_ratio, K, label_features):
    """fobos with AdaGrad and a separable penalty scores and updates the structured
    rows by its own loops (`steps/structured.pxd`: `adagrad_rows`), the averaged
    iterate kept or not: the same state, bit for bit, as the general step's, over
    several passes with sample weights, empty sequences, an odd and an even K (and one
    past a block of `l2_powers`' lanes), the averaging begun mid-pass or not at all (a
    row's first catch-up after it began takes only the averaged iterates), and a warm
    start. With label_features="seen" the loops visit the seen entries only and the
    general step masks the others' gradient: the same model (the entries outside,
    0 in both, differ only in AdaGrad's frozen step, which no weight reads)."""
    rng = np.random.default_rng(K)
    X, y, lengths = (random_sequences(rng, 30, 25, K, longest=7) if label_features == "all" else
                     random_sequences(rng, 30, 200, K, longest=7, density=0.03))
    assert label_features == "all" or not seen_mask(X, y, K).all()
    weights = rng.uniform(0.5, 2.0, len(lengths))
    assert (lengths == 0).any()
    for loss in LOSSES:
        for average in (False, 45):
            params = dict(loss=loss, update="fobos", schedule="adagrad", penalty=penalty, alpha=0.05,
                          l1_ratio=l1_ratio, eta0=0.5, max_iter=3, average=average, random_state=1,
                          warm_start=True, label_features=label_features)
            assert_rows_equal_the_general_step(params, X, y, lengths, weights, K)


@pytest.mark.parametrize("K", [1, 3, 4, 22, 23])
@pytest.mark.parametrize("loss", LOSSES)
def test_every_set_of_lanes_trains_the_same_model(K, loss):
    """The decoders take their K x K steps in the lanes `_kernels` chose (`use_lanes`):
    every set this CPU runs trains the same model, bit for bit, and predicts the same labels
    and (log) marginals (K below a vector, a multiple of one, CoNLL-2000's 22 and one more)."""
    rng = np.random.default_rng(K)
    X, y, lengths = random_sequences(rng, 25, 30, K, longest=9)
    before = _kernels.lanes()
    results = []
    try:
        for name in _kernels.lanes_available():
            _kernels.use_lanes(name)
            model = SequenceTagger(loss=loss, max_iter=2, random_state=3, penalty="l1", alpha=1e-3).fit(X, y, lengths)
            results.append(model_bits(model) + model.predict(X, lengths).tobytes()
                           + (model.predict_marginals(X, lengths).tobytes() if loss == "log" else b""))
    finally:
        _kernels.use_lanes(before)
    assert len(results) >= 2 and all(bits == results[0] for bits in results)


@pytest.mark.parametrize("loss", LOSSES)
def test_partial_fit_and_pickles_mid_stream_give_the_same_bits(loss):
    """fit with one pass, partial_fit over two halves, and the same with a pickle
    round trip between them: the same model, bit for bit; shuffled passes repeat
    with the same random_state."""
    rng = np.random.default_rng(1)
    X, y, lengths = random_sequences(rng, 40, 30, 3, longest=6)
    labels = np.array(["B-NP", "I-NP", "O"])[y]
    one = SequenceTagger(loss=loss, shuffle=False, max_iter=1, penalty="l1", alpha=1e-3).fit(X, labels, lengths)
    cut = int(lengths[:20].sum())
    halves = SequenceTagger(loss=loss, penalty="l1", alpha=1e-3)
    halves.partial_fit(X[:cut], labels[:cut], lengths[:20], classes=np.unique(labels))
    pickled = pickle.loads(pickle.dumps(halves))
    for model in (halves, pickled):
        model.partial_fit(X[cut:], labels[cut:], lengths[20:])
    assert model_bits(one) == model_bits(halves) == model_bits(pickled)
    assert one.t_ == halves.t_ == pickled.t_ == 40
    a, b = (SequenceTagger(loss=loss, max_iter=3, random_state=5).fit(X, labels, lengths) for _ in range(2))
    assert model_bits(a) == model_bits(b) and a.t_ == 120
    warm = SequenceTagger(loss=loss, max_iter=1, random_state=5, warm_start=True).fit(X, labels, lengths)
    assert warm.fit(X, labels, lengths).t_ == 80


@pytest.mark.parametrize("update", ["rda", "fobos"])
def test_seen_label_features_grow_with_partial_fit(update):
    """label_features="seen": each partial_fit adds its sequences' (feature, gold
    label) pairs before its steps. A label first seen in the second call learns
    nothing before it (its column is 0) and then learns on its features; a pickle
    between the calls continues to the same bits; one partial_fit of all equals
    fit's one pass in the same order; switching label_features mid-stream is refused."""
    rng = np.random.default_rng(7)
    X, y, lengths = random_sequences(rng, 40, 200, 4, longest=6, density=0.05)
    cut = int(lengths[:20].sum())
    y[:cut][y[:cut] == 3] = 0                       # label 3 only in the second half
    assert (y[cut:] == 3).any()
    params = dict(update=update, label_features="seen", alpha=1e-3)
    halves = SequenceTagger(**params).partial_fit(X[:cut], y[:cut], lengths[:20], classes=np.arange(4))
    assert np.all(halves.coef_[:, 3] == 0) and np.any(halves.coef_ != 0)
    assert np.all(halves.coef_[~seen_mask(X[:cut], y[:cut], 4)] == 0)
    pickled = pickle.loads(pickle.dumps(halves))
    for model in (halves, pickled):
        model.partial_fit(X[cut:], y[cut:], lengths[20:])
    assert model_bits(halves) == model_bits(pickled)
    assert np.all(halves.coef_[~seen_mask(X, y, 4)] == 0) and np.any(halves.coef_[:, 3] != 0)
    one = SequenceTagger(shuffle=False, max_iter=1, **params).fit(X, y, lengths)
    whole = SequenceTagger(**params).partial_fit(X, y, lengths, classes=np.arange(4))
    assert model_bits(one) == model_bits(whole)
    assert not np.array_equal(one.coef_, SequenceTagger(shuffle=False, max_iter=1, update=update,
                                                        alpha=1e-3).fit(X, y, lengths).coef_)
    with pytest.raises(ValueError, match="label_features='all' but the model was fitted with the other"):
        halves.set_params(label_features="all").partial_fit(X, y, lengths)
    with pytest.raises(ValueError, match="label_features"):
        SequenceTagger(label_features="some").fit(X, y, lengths)


def test_clone_get_params_and_set_params():
    model = SequenceTagger(loss="log", penalty="squared_group", update="fobos", schedule="constant", alpha=0.01,
                           groups=[0, 0, 1])
    copy = clone(model)
    assert copy.get_params() == {**model.get_params(), "groups": copy.groups}
    assert model.set_params(alpha=0.5).alpha == 0.5
    rng = np.random.default_rng(0)
    X, y, lengths = random_sequences(rng, 8, 3, 2)
    model.fit(X, y, lengths)
    with pytest.raises(ValueError, match="alpha=0.1 but the model was fitted with alpha=0.5"):
        model.set_params(alpha=0.1).partial_fit(X, y, lengths)


def test_empty_and_one_item_sequences():
    """An empty sequence is an example with nothing to learn (t_ counts it, its
    prediction is empty); one-item sequences are learnt with the others (separable
    data: the perceptron fits it)."""
    X = sp.csr_matrix(np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]))
    model = SequenceTagger(loss="perceptron", penalty=None, update="fobos", schedule="constant", eta0=1.0,
                           shuffle=False,
                           max_iter=10)
    model.fit(X, ["x", "y", "x"], [0, 1, 0, 2, 0])
    assert model.t_ == 50
    assert list(model.predict(X, [1, 0, 2])) == ["x", "y", "x"]
    assert model.predict(X[:0], [0, 0]).shape == (0,)
    assert model.predict(X[:0], []).shape == (0,)


def test_sample_weights_weigh_sequences():
    """A sequence's weight multiplies its gradient (weight 0: a step with none), as
    StructuredLearner's sample_weight."""
    rng = np.random.default_rng(3)
    X, y, lengths = random_sequences(rng, 4, 5, 3)
    params = dict(loss="log", penalty="l2", alpha=0.01, update="fobos", schedule="constant", eta0=0.1, shuffle=False,
                  max_iter=1)
    zero = SequenceTagger(**params).fit(X, y, lengths, sample_weight=[1, 0, 1, 1])
    with pytest.raises(ValueError, match="one weight per sequence"):
        SequenceTagger(**params).fit(X, y, lengths, sample_weight=[1, 1])
    assert zero.t_ == 4
    ref = StructuredLearner(5, 3, 15, penalty="l2", alpha=0.01, schedule="constant")
    for r, (Xs, ys) in enumerate(split(X, y, lengths)):
        python_step(ref, "log", Xs, ys, 3, [1, 0, 1, 1][r])
    assert zero.coef_.T.tobytes() == ref.coef_.tobytes()


def test_a_reader_while_partial_fit_runs():
    """predict from other threads while partial_fit runs: every read sees a model
    between two sequences (it predicts), none crashes, no sequence is lost."""
    rng = np.random.default_rng(0)
    X, y, lengths = random_sequences(rng, 3000, 200, 4, longest=8, density=0.05)
    model = SequenceTagger(loss="hinge").partial_fit(X[:lengths[0]], y[:lengths[0]], lengths[:1],
                                                     classes=np.arange(4))
    errors, done = [], threading.Event()

    def read():
        while not done.is_set():
            try:
                assert model.predict(X[:50], [50]).shape == (50,) if X.shape[0] >= 50 else True
                pickle.loads(pickle.dumps(model))
            except Exception as e:      # pragma: no cover - reported below
                errors.append(e)

    readers = [threading.Thread(target=read) for _ in range(2)]
    for r in readers:
        r.start()
    for _ in range(3):
        model.partial_fit(X, y, lengths)
    done.set()
    for r in readers:
        r.join()
    assert not errors
    assert model.t_ == 1 + 3 * 3000


@pytest.mark.parametrize("call, message", [
    (lambda m, X, y, l: m.fit(X, y, [2, 2]), "lengths sum to 4 but X has 6 rows"),
    (lambda m, X, y, l: m.fit(X, y, [3, -1, 4]), "lengths must be >= 0"),
    (lambda m, X, y, l: m.fit(X, y[:5], l), "one label per item"),
    (lambda m, X, y, l: m.partial_fit(X, y, l), "classes must be given at the first partial_fit"),
    (lambda m, X, y, l: m.partial_fit(X, y, l, classes=["a"]), "label 'b' is not one of the model's classes"),
    (lambda m, X, y, l: m.set_params(loss="squared").fit(X, y, l), "loss"),
    (lambda m, X, y, l: m.set_params(schedule="normalized").fit(X, y, l), "schedule='normalized' is not defined"),
    (lambda m, X, y, l: m.fit(sp.csr_matrix(np.full((6, 2), np.nan)), y, l), "NaN or infinity"),
    (lambda m, X, y, l: m.fit(X, y, l, sample_weight=[1, -1]), "finite and >= 0"),
    (lambda m, X, y, l: m.set_params(random_state="x").fit(X, y, l), "random_state='x' cannot seed the shuffles"),
    (lambda m, X, y, l: m.fit(X, np.array([1, "b"] * 3, dtype=object), l), "the labels mix types that do not sort"),
    (lambda m, X, y, l: m.partial_fit(X, np.array(["a", 1] * 3, dtype=object), l, classes=["a", "b"]),
     "the labels and the model's classes mix types"),
])
def test_bad_input_raises_value_error_naming_the_fix(call, message):
    X = sp.csr_matrix(np.eye(6, 2))
    y = np.array(["a", "b", "a", "b", "a", "b"])
    model = SequenceTagger()
    with pytest.raises(ValueError, match=message):
        call(model, X, y, [3, 3])
    assert not hasattr(model, "t_")


def test_a_dataframe_s_column_names_are_kept_and_checked_as_scikit_learn_does():
    """Trained on a DataFrame, the tagger keeps its column names (feature_names_in_);
    prediction and partial_fit refuse a DataFrame whose columns differ, reordered
    included (its values would meet the wrong weights), and warn for X without names,
    with scikit-learn's own words; a fit on X without names forgets them. (Before,
    the names were neither kept nor checked: a reordered DataFrame was tagged
    silently with the wrong weights.)"""
    pd = pytest.importorskip("pandas")
    X, y, lengths = random_sequences(np.random.default_rng(0), 20, 5, 3)
    frame = pd.DataFrame(X.toarray(), columns=list("abcde"))
    model = SequenceTagger(random_state=0).fit(frame, y, lengths)
    assert list(model.feature_names_in_) == list("abcde")
    assert np.array_equal(model.predict(frame, lengths),
                          SequenceTagger(random_state=0).fit(X, y, lengths).predict(X, lengths))
    for call in (lambda Z: model.predict(Z, lengths), lambda Z: model.partial_fit(Z, y, lengths)):
        with pytest.raises(ValueError, match="The feature names should match those that were passed during fit"):
            call(frame[list("edcba")])
    with pytest.warns(UserWarning, match="X does not have valid feature names, but SequenceTagger was fitted"):
        model.predict(X, lengths)
    model.fit(X, y, lengths)
    assert not hasattr(model, "feature_names_in_")
    with pytest.warns(UserWarning, match="X has feature names, but SequenceTagger was fitted without"):
        model.predict(frame, lengths)


def test_the_averaging_refusal_lists_only_the_schedules_structured_models_take():
    """average under a rule without an averaged form: the refusal named schedule in
    ('normalized',) among the rules that keep one, which structured models refuse."""
    X = sp.csr_matrix(np.eye(6, 2))
    y = np.array(["a", "b", "a", "b", "a", "b"])
    model = SequenceTagger(update="ftrl", schedule="adagrad", penalty="elasticnet", average=True)
    with pytest.raises(ValueError, match="average has no exact lazy form under update='ftrl'") as error:
        model.fit(X, y, [3, 3])
    assert "normalized" not in str(error.value)
    assert "update='rda', schedule in ('adagrad',) and penalty in ('none', 'l1')" in str(error.value)


@pytest.mark.parametrize("name", ["coef_", "intercept_", "transitions_", "start_", "stop_"])
def test_the_model_arrays_refuse_writes_that_would_be_lost(name):
    """A write into a fitted array (a snapshot of the learner's state) raised
    nothing and was lost at the next read after training; it raises now, as
    assigning does, and predictions are unchanged."""
    X = sp.csr_matrix(np.eye(6, 2))
    model = SequenceTagger(random_state=0).fit(X, [0, 1, 0, 1, 0, 1], [3, 3])
    before = model.predict(X, [3, 3])
    with pytest.raises(ValueError, match="read-only"):
        getattr(model, name)[0] = 1.0
    with pytest.raises(AttributeError, match=f"{name} is read from the model's state.*warm_start"):
        setattr(model, name, np.zeros_like(getattr(model, name)))
    np.testing.assert_array_equal(model.predict(X, [3, 3]), before)
    getattr(model, name).copy()[0] = 1.0        # a copy is the caller's own


def test_predict_checks_its_input():
    X = sp.csr_matrix(np.eye(6, 2))
    model = SequenceTagger().fit(X, [0, 1, 0, 1, 0, 1], [3, 3])
    with pytest.raises(ValueError, match="lengths sum to 5 but X has 6 rows"):
        model.predict(X, [5])
    with pytest.raises(ValueError, match="X has 3 features, but SequenceTagger is expecting 2"):
        model.predict(sp.csr_matrix(np.eye(6, 3)), [6])
    with pytest.raises(ValueError, match="NaN or infinity"):
        model.predict(sp.csr_matrix(np.full((2, 2), np.inf)), [2])
    with pytest.raises(ValueError, match=r"score weighs each item \(6,\)"):   # was numpy's TypeError
        model.score(X, [0, 1, 0, 1, 0, 1], [3, 3], sample_weight=[1, 1])
    with pytest.raises(ValueError, match="too large"):
        model._snapshot = (model.t_, np.full((2, 2), 1e308), *model._snapshot[2:])
        model.predict(sp.csr_matrix(np.full((2, 2), 1e300)), [2])


def test_a_refused_sequence_names_itself_and_keeps_the_steps_before():
    X = sp.csr_matrix(np.array([[1.0], [1.0], [1e300], [1.0]]))
    model = SequenceTagger(loss="log", update="fobos", schedule="constant", eta0=1e300, penalty=None,
                           shuffle=False)
    with pytest.raises(ValueError, match="example"):
        model.partial_fit(X, [0, 1, 0, 1], [2, 1, 1], classes=[0, 1])


@pytest.mark.parametrize("loss", LOSSES)
def test_a_steps_cost_does_not_grow_with_the_features(loss):
    """The same sequences in a model of 20 or 200,000 features: the same entries
    visited (n_ops), O(nnz K + n K^2) per sequence, never O(d)."""
    rng = np.random.default_rng(4)
    X, y, lengths = random_sequences(rng, 30, 20, 4, longest=6, density=0.3)
    ops = []
    for d in (20, 200_000):
        wide = sp.csr_matrix((X.data, X.indices, X.indptr), shape=(X.shape[0], d))
        model = SequenceTagger(loss=loss, penalty="l1", alpha=1e-3, max_iter=2, random_state=0)
        ops.append(model.fit(wide, y, lengths)._learner.n_ops)
    assert ops[0] == ops[1] > 0
