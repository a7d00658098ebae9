"""The structured step (src/fastprox/_structured_step.pxd, through
fastprox.structured.StructuredLearner) equals the contract's eager update of a
structured example (tests/support/structured_update_reference.py) for every rule it
supports: random short streams of examples (random CSR items, empty items and
examples, float32 / float64 values, int32 / int64 indices, score gradients that sum
to zero per item as mu - onehot does, unpenalized gradients, sample weights), both
gradient forms, with and without reads between the steps, a pickle mid-stream; the
two forms and a pickled learner give the same bits; the normalized schedule and the
invariant step are refused; long streams do not drift; a step's cost does not grow
with d; bad input raises ValueError and changes nothing."""
import pickle
import threading

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings, strategies as st

from fastprox._registry import PENALTIES as PENALTY_TABLE, RULES as ALL_RULES
from fastprox.structured import StructuredLearner
from tests.support.reference import assert_contract_close
from tests.support.reference_multiclass import random_group_weights
from tests.support.structured_update_reference import StructuredUpdateReference

RULES = [(r.update, r.schedule, r.penalty) for r in ALL_RULES if r.schedule != "normalized"]
REFUSED = [(r.update, r.schedule, r.penalty) for r in ALL_RULES if r.schedule == "normalized"]
IDS = ["-".join(r) for r in RULES]


def grouped(rule):
    return PENALTY_TABLE[rule[2]].family == "group"


def score_gradients(rng, n, K):
    """(n, K) score gradients mu_i - onehot(y_i): decoded one-hots (perceptron, hinge;
    zero rows where the decoder is right) or marginals (CRF)."""
    y = rng.integers(0, K, n)
    if rng.random() < 0.5:
        mu = np.eye(K)[rng.integers(0, K, n)]
    else:
        mu = rng.dirichlet(np.ones(K), n)
    return mu - np.eye(K)[y]


def example(rng, d, K, m):
    """One random example: (items CSR (n, d), Q (n, K), unpenalized gradient (m,), h)."""
    n = int(rng.integers(1, 5))
    density = float(rng.choice([0.0, 0.3, 0.7, 1.0]))
    X = sp.random(n, d, density=density, format="csr", random_state=rng,
                  data_rvs=lambda k: rng.uniform(-2, 2, k))
    u = rng.normal(0, 1, m) * (rng.random(m) < 0.7)
    h = float(rng.choice([1.0, 1.0, rng.uniform(0.1, 2.0), 0.0]))
    return X, score_gradients(rng, n, K), u, h


@st.composite
def streams(draw, rule):
    """A random stream of structured examples and the learner's parameters."""
    d = draw(st.integers(1, 10))
    K = draw(st.sampled_from([1, 2, 3]))
    m = draw(st.sampled_from([0, 1, 4]))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    examples = [example(rng, d, K, m) for _ in range(draw(st.integers(1, 8)))]
    params = dict(
        alpha=draw(st.sampled_from([0.0, 1e-3, 0.05, 0.5])),
        l1_ratio=draw(st.sampled_from([0.0, 0.3, 0.85, 1.0])),
        eta0=draw(st.sampled_from([0.01, 0.3, 1.0, 2.0])),
        delta=draw(st.sampled_from([0.0, 1e-8, 0.5])),
        # (not 0.01, an eta0: with delta 0 an entry's first gradient s gives rda's threshold
        # beta rda_rho = |s| rda_rho / eta0 = |s|, a tie whose side rounding decides)
        rda_rho=0.0 if grouped(rule) else draw(st.sampled_from([0.0, 0.02, 0.5])),
        berhu_gamma=draw(st.sampled_from([0.05, 0.5, 2.0])),
        fit_intercept=draw(st.booleans()),
    )
    if grouped(rule):
        groups = rng.integers(-1, draw(st.integers(1, 4)), d) if draw(st.booleans()) else None
        n_groups = d if groups is None else int(groups.max(initial=-1)) + 1
        params.update(groups=groups,
                      group_weights=random_group_weights(rng, n_groups) if draw(st.booleans()) else None)
    return dict(d=d, K=K, m=m, examples=examples, params=params)


def both(rule, s):
    """The lazy learner and the eager reference of a stream."""
    update, schedule, penalty = rule
    lazy = StructuredLearner(s["d"], s["K"], s["m"], update=update, schedule=schedule, penalty=penalty,
                             **s["params"])
    eager = StructuredUpdateReference(s["d"], s["K"], s["m"], update, schedule, penalty, **s["params"])
    return lazy, eager


def as_types(X, dtype, itype):
    X = X.astype(dtype)
    X.indices, X.indptr = X.indices.astype(itype), X.indptr.astype(itype)
    return X


def rows(X, Q):
    """W's gradient X^T Q as sparse rows summed in the kernel's order (items in order,
    their non-zeros in order), with the intercepts' gradient sum_i Q_i likewise: the
    features (in first-appearance order, or sorted), their rows G, and that sum."""
    X = X.tocsr()
    X.sum_duplicates()
    order = list(dict.fromkeys(X.indices.tolist()))
    position = {j: r for r, j in enumerate(order)}
    G = np.zeros((len(order), Q.shape[1]))
    b = np.zeros(Q.shape[1])
    for i in range(X.shape[0]):
        for nz in range(X.indptr[i], X.indptr[i + 1]):
            G[position[X.indices[nz]]] += Q[i] * np.float64(X.data[nz])
        b += Q[i]
    return np.array(order, dtype=np.int64), G, b


def take(lazy, X, Q, u, h, form, check=None):
    """One example through `step` (per-item form), `step_decoded` (the decoder called
    between the scores and the step; `check(scores, unpenalized)` sees what it reads) or
    `step_rows` (sparse rows)."""
    if form == "items":
        lazy.step(X, Q, u, h)
        return
    if form == "decoded":
        def decode(scores, unpenalized):
            if check is not None:
                check(scores, unpenalized)
            return Q, u
        lazy.step_decoded(X, decode, h)
        return
    features, G, b = rows(X, Q)
    if form == "sorted rows":
        by = np.argsort(features)
        features, G = features[by], G[by]
    lazy.step_rows(features, G, u, h, intercept_grad=b if lazy.fit_intercept else None)


def check_equal(lazy, eager):
    assert lazy.t_ == eager.t
    assert_contract_close(lazy.coef_, eager.coef())
    assert_contract_close(lazy.intercept_, eager.intercept())
    assert_contract_close(lazy.unpenalized_, eager.unpenalized())


def model_bits(lazy):
    return lazy.coef_.tobytes() + lazy.intercept_.tobytes() + lazy.unpenalized_.tobytes()


SETTINGS = settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@pytest.mark.parametrize("rule", RULES, ids=IDS)
@SETTINGS
@given(data=st.data(), split=st.floats(0, 1), dtype=st.sampled_from([np.float64, np.float32]),
       itype=st.sampled_from([np.int32, np.int64]),
       form=st.sampled_from(["items", "decoded", "rows", "sorted rows"]), read=st.booleans())
def test_lazy_equals_eager(rule, data, split, dtype, itype, form, read):
    """Every supported rule, each gradient form, a pickle round trip at a random
    example; what a decoder reads (the items' scores and the unpenalized entries, as
    `step_decoded` hands them over; with `read`, every feature's weights) is the
    eager model's at that step."""
    s = data.draw(streams(rule))
    lazy, eager = both(rule, s)
    cut = int(split * len(s["examples"]))
    for i, (X, Q, u, h) in enumerate(s["examples"]):
        if i == cut:
            lazy = pickle.loads(pickle.dumps(lazy))
        X = as_types(X, dtype, itype)
        Xd = X.toarray().astype(np.float64)
        W, b = eager.weights()

        def check(scores, unpenalized):
            bound = np.abs(Xd) @ np.abs(W.T) + np.abs(b[:s["K"]])      # the scores' rounding scale
            assert np.all(np.abs(scores - eager.scores(Xd)) <= 1e-9 * bound)
            assert_contract_close(unpenalized, eager.unpenalized())

        if read:
            assert_contract_close(lazy.weights(np.arange(s["d"])), W.T)
            check(lazy.scores(X), lazy.unpenalized())
        take(lazy, X, Q, u, h, form, check)
        eager.step(Xd, Q, u, h)
    check_equal(lazy, eager)


@pytest.mark.parametrize("rule", RULES, ids=IDS)
@settings(SETTINGS, max_examples=8)
@given(data=st.data())
def test_rows_of_any_decoder_equal_eager(rule, data):
    """`step_rows` with gradient rows that come from no items (a tree's arcs, a
    segmentation's segments: any feature ids, some listed twice) is the eager step
    with that gradient."""
    s = data.draw(streams(rule))
    lazy, eager = both(rule, s)
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    for _ in range(len(s["examples"]) + 2):
        features = rng.integers(0, s["d"], int(rng.integers(0, 6)))
        G = rng.normal(0, 1, (len(features), s["K"]))
        b, u, h = rng.normal(0, 1, s["K"]), rng.normal(0, 1, s["m"]), float(rng.uniform(0, 2))
        lazy.step_rows(features, G, u, h, intercept_grad=b if lazy.fit_intercept else None)
        eager.step_rows(features, G, b, u, h)
    check_equal(lazy, eager)


@pytest.mark.parametrize("rule", RULES, ids=IDS)
@settings(SETTINGS, max_examples=8)
@given(data=st.data(), split=st.floats(0, 1), read=st.booleans())
def test_forms_reads_and_pickles_give_the_same_bits(rule, data, split, read):
    """The same stream through `step`, through `step_rows` with the same gradient
    (features in first-appearance order or sorted), through `step` after the items'
    scores were read, through `step_decoded` (scores, decoder, step: the compiled
    callers' order) and through `step` with a pickle round trip mid-stream: the same
    model, bit for bit."""
    s = data.draw(streams(rule))
    learners = [both(rule, s)[0] for _ in range(6)]
    cut = int(split * len(s["examples"]))
    for i, (X, Q, u, h) in enumerate(s["examples"]):
        if i == cut:
            learners[4] = pickle.loads(pickle.dumps(learners[4]))
        take(learners[0], X, Q, u, h, "items")
        take(learners[1], X, Q, u, h, "rows")
        take(learners[2], X, Q, u, h, "sorted rows")
        if read:
            learners[3].scores(X)
        take(learners[3], X, Q, u, h, "items")
        take(learners[4], X, Q, u, h, "items")
        take(learners[5], X, Q, u, h, "decoded")
    bits = [model_bits(lazy) for lazy in learners]
    assert all(b == bits[0] for b in bits)
    states = [lazy._learner.__getstate__()["arrays"] for lazy in (learners[0], learners[4])]
    for name in ("state", "bstate", "gstamp", "gnorm"):
        assert states[0][name].tobytes() == states[1][name].tobytes(), name


@pytest.mark.parametrize("rule", REFUSED, ids=["-".join(r) for r in REFUSED])
def test_the_normalized_schedule_is_refused(rule):
    update, schedule, penalty = rule
    with pytest.raises(ValueError, match="schedule='normalized' is not defined for structured outputs.*"
                                         "'adagrad'"):
        StructuredLearner(5, 3, 2, update=update, schedule=schedule, penalty=penalty)


@pytest.mark.parametrize("rule", [("fobos", "adagrad", "l1"), ("fobos", "invsqrt", "l1_l2")],
                         ids=lambda r: "-".join(r))
def test_the_invariant_step_is_refused(rule):
    update, schedule, penalty = rule
    with pytest.raises(ValueError, match="step='invariant' is not defined for structured outputs.*"
                                         "step='gradient'"):
        StructuredLearner(5, 3, update=update, schedule=schedule, penalty=penalty, step="invariant")


def test_unsupported_rules_are_refused_as_the_estimators_refuse_them():
    with pytest.raises(ValueError, match="no exact lazy form"):
        StructuredLearner(5, 3, update="fobos", schedule="adagrad", penalty="l1_l2")
    with pytest.raises(ValueError, match="rda_rho"):
        StructuredLearner(5, 3, update="rda", schedule="invsqrt", penalty="l1_l2", rda_rho=0.1)
    with pytest.raises(ValueError, match="groups= is used by the group penalties"):
        StructuredLearner(5, 3, penalty="l1", groups=np.zeros(5, dtype=int))


LONG_RULES = [("fobos", "invsqrt", "l1"), ("fobos", "constant", "elasticnet"), ("fobos", "inv", "berhu"),
              ("fobos", "adagrad", "elasticnet"), ("fobos", "adagrad", "berhu"), ("rda", "adagrad", "l1"),
              ("rda", "invsqrt", "elasticnet"), ("ftrl", "adagrad", "elasticnet"),
              ("fobos", "invsqrt", "squared_group"), ("fobos", "inv", "sparse_group"),
              ("fobos", "constant", "l1_linf"), ("rda", "adagrad", "l1_l2")]


@pytest.mark.slow
@pytest.mark.parametrize("rule", LONG_RULES, ids=lambda r: "-".join(r))
def test_long_stream_no_drift(rule):
    """3000 examples (sequences of 1 to 6 items over 12 features, K = 3, transitions
    and starts and stops: m = 15); feature 0 appears in the first example only and is
    read at the end. No drift from the contract; strong l2 shrinkage rebases the
    cumulants on the way (fobos / constant / elasticnet)."""
    rng = np.random.default_rng(8)
    d, K, m, n = 12, 3, 15, 3000
    strong = rule == ("fobos", "constant", "elasticnet")
    params = dict(alpha=0.3 if strong else 1e-3, eta0=1.0 if strong else 0.2, l1_ratio=0.2, berhu_gamma=0.3,
                  delta=0.5)
    if grouped(rule):
        params["groups"] = np.array([0, 0, 1, 1, 1, 2, 2, 3, 3, -1, 4, 4])
    lazy, eager = both(rule, dict(d=d, K=K, m=m, params=params))
    for i in range(n):
        X, Q, u, h = example(rng, d, K, m)
        X = X.tolil()
        X[:, 0] = 0 if i else 1.5
        X = X.tocsr()
        lazy.step(X, Q, u, h)
        eager.step(X.toarray(), Q, u, h)
    assert eager.coef()[:, 0].any() or rule[2] in ("l1", "elasticnet", "berhu", "l1_linf")
    check_equal(lazy, eager)
    if strong:
        assert lazy._learner.since_rebase < n


def test_empty_examples_step_the_penalty_and_the_unpenalized_entries():
    """Examples whose items have no features (and an example of no items) still step: the
    penalty acts on W, the intercepts and unpenalized entries take their gradients."""
    rule = ("fobos", "invsqrt", "elasticnet")
    lazy, eager = both(rule, dict(d=4, K=2, m=3, params=dict(alpha=0.1, eta0=0.5, l1_ratio=0.5)))
    X = sp.csr_matrix(np.array([[1.0, 0, -2, 0], [0, 3, 0, 0]]))
    Q = np.array([[0.5, -0.5], [-1.0, 1.0]])
    for items, q in ((X, Q), (sp.csr_matrix((3, 4)), np.tile([[1.0, -1.0]], (3, 1))),
                     (sp.csr_matrix((0, 4)), np.zeros((0, 2))), (X, -Q)):
        lazy.step(items, q, np.array([1.0, 0.0, -2.0]), 1.0)
        eager.step(items.toarray(), q, np.array([1.0, 0.0, -2.0]), 1.0)
    check_equal(lazy, eager)
    assert lazy.t_ == 4


@pytest.mark.parametrize("rule", [r for r in RULES if r[2] != "squared_group"] +
                         [("fobos", "invsqrt", "squared_group")], ids=lambda r: "-".join(r))
def test_cost_proportional_to_nonzeros_not_d(rule):
    """A step's cost counter (n_ops) grows with its items' non-zeros times K and with m,
    not with d: the same 200 examples over the first 1000 features of 1000 or 100,000
    (squared_group: those 1000 features are row groups, the others unpenalized, as
    every step needs its p group norms)."""
    rng = np.random.default_rng(5)
    K, m = 3, 15
    stream = [example(rng, 1000, K, m) for _ in range(200)]
    stream = [(sp.random(X.shape[0], 1000, density=0.004, format="csr", random_state=rng), Q, u, h)
              for X, Q, u, h in stream]
    counts = []
    for d in (1_000, 100_000):
        params = dict(alpha=0.01, eta0=0.5)
        if rule[2] == "squared_group":
            params["groups"] = np.where(np.arange(d) < 1000, np.arange(d), -1)
        lazy = both(rule, dict(d=d, K=K, m=m, params=params))[0]
        for X, Q, u, h in stream:
            before = lazy.n_ops
            lazy.step(sp.csr_matrix((X.data, X.indices, X.indptr), shape=(X.shape[0], d)), Q, u, h)
            if not grouped(rule):
                assert lazy.n_ops - before <= 3 * X.nnz * K + m
        counts.append(lazy.n_ops)
    assert counts[0] == counts[1]


def test_bad_input_raises_and_changes_nothing():
    lazy = StructuredLearner(5, 2, 3, update="fobos", schedule="adagrad", penalty="l1", alpha=0.01, eta0=2.0)
    X = sp.csr_matrix(np.array([[1.0, 0, 2, 0, 0], [0, 0, 0, 3, 0]]))
    Q, u = np.array([[1.0, -1.0], [0.0, 0.0]]), np.zeros(3)
    lazy.step(X, Q, u)
    before = model_bits(lazy)
    cases = [
        (lambda: lazy.step(X, Q[:1], u), r"Q has shape \(1, 2\) where \(2, 2\)"),
        (lambda: lazy.step(X, Q, np.zeros(2)), r"unpenalized_grad has shape \(2,\) where \(3,\)"),
        (lambda: lazy.step(X, np.where(Q > 0, np.nan, Q), u), "Q contains NaN"),
        (lambda: lazy.step(X, Q, np.array([0.0, np.inf, 0.0])), "unpenalized_grad contains NaN"),
        (lambda: lazy.step(X * np.nan, Q, u), "items' values contain NaN"),
        (lambda: lazy.step(X, Q, u, sample_weight=-1.0), "sample_weight=-1.0 must be"),
        (lambda: lazy.step(sp.csr_matrix(np.ones((2, 6))), Q, u), r"feature 5 lies outside \[0, 5\)"),
        (lambda: lazy.step_rows([0, 5], np.ones((2, 2)), u, intercept_grad=np.zeros(2)),
         r"feature 5 lies outside \[0, 5\)"),
        (lambda: lazy.step_rows([0, -1], np.ones((2, 2)), u, intercept_grad=np.zeros(2)), "feature -1 lies"),
        (lambda: lazy.step_rows([0, 1], np.ones((2, 2)), u), "give intercept_grad"),
        (lambda: lazy.step_rows([0.5], np.ones((1, 2)), u, intercept_grad=np.zeros(2)), "integer feature ids"),
        (lambda: lazy.step_rows([0], np.ones((1, 2)), u, intercept_grad=np.zeros(3)),
         r"intercept_grad has shape \(3,\)"),
        (lambda: lazy.weights([7]), r"feature 7 lies outside"),
        (lambda: lazy.step(X * 1e300, Q, u), r"example at step 2: its gradient .* reached 2\^480"),
        (lambda: lazy.scores(sp.csr_matrix(np.full((1, 5), 1e300)) * 1e8), "a score of these items is NaN or infinite"),
        (lambda: lazy.step_decoded(sp.csr_matrix(np.full((1, 5), 1e300)) * 1e8, None),
         "example at step 2: a score is NaN or infinite"),
        (lambda: lazy.step_decoded(X, lambda scores, unpenalized: (Q[:1], u)), r"Q has shape \(1, 2\)"),
    ]
    for call, message in cases:
        with pytest.raises(ValueError, match=message):
            call()
    assert lazy.t_ == 1 and model_bits(lazy) == before
    lazy.step(X, Q, u)                  # and it steps on as if nothing happened
    assert lazy.t_ == 2
    with pytest.raises(ValueError, match="fit_intercept=False"):
        StructuredLearner(5, 2, fit_intercept=False).step_rows([0], np.ones((1, 2)), intercept_grad=np.ones(2))
    for name, value in (("n_outputs", 0), ("n_unpenalized", -1), ("eta0", 0.0), ("alpha", np.nan),
                        ("l1_ratio", 2.0), ("update", "sgd"), ("fit_intercept", "yes")):
        kwargs = dict(n_features=5, n_outputs=2, n_unpenalized=0)
        kwargs[name] = value
        with pytest.raises(ValueError, match=name):
            StructuredLearner(**kwargs)


@pytest.mark.parametrize("rule", [("fobos", "adagrad", "l2"), ("rda", "adagrad", "l2"),
                                  ("fobos", "constant", "l1")], ids=lambda r: "-".join(r))
@pytest.mark.parametrize("where", ["W", "intercept", "unpenalized"])
def test_a_gradient_of_2_to_the_480_is_refused_and_one_below_it_steps(rule, where):
    """The step's check at its boundary, for each gradient it scales (W's sums, the
    intercepts', the unpenalized entries') and each form of W's rows (fobos + AdaGrad's
    and rda + AdaGrad's own loops, the general step): a gradient of magnitude 2^480
    refuses the example, leaving the model as it was; the largest double below it
    steps."""
    top = 2.0 ** 480
    below = np.nextafter(top, 0.0)
    update, schedule, penalty = rule
    for size, refused in ((top, True), (below, False)):
        lazy = StructuredLearner(3, 2, 2, update=update, schedule=schedule, penalty=penalty, alpha=0.01)
        lazy.step(sp.csr_matrix(np.ones((1, 3))), np.array([[0.5, -0.5]]), np.array([1.0, -1.0]))
        before = model_bits(lazy)
        X = sp.csr_matrix(np.array([[1.0, 0.0, 2.0 ** -600]]))
        Q = np.array([[0.5, -0.5]])
        u = np.array([0.0, 1.0])
        if where == "W":                # the gradient x q of feature 0, label 1
            X, Q = sp.csr_matrix(np.array([[size, 0.0, 2.0 ** -600]])), np.array([[0.0, -1.0]])
        elif where == "intercept":      # sum_i q_i (W's x q is 2^-600 q: far below)
            X, Q = sp.csr_matrix(np.array([[0.0, 0.0, 2.0 ** -600]])), np.array([[size, -0.5]])
        else:
            u = np.array([0.0, -size])
        if refused:
            with pytest.raises(ValueError, match=r"example at step 2: its gradient .* reached 2\^480"):
                lazy.step(X, Q, u)
            assert lazy.t_ == 1 and model_bits(lazy) == before
        else:
            lazy.step(X, Q, u)
            assert lazy.t_ == 2


@pytest.mark.parametrize("rule", [("fobos", "inv", "berhu"), ("fobos", "invsqrt", "squared_group"),
                                  ("ftrl", "adagrad", "l1")], ids=lambda r: "-".join(r))
def test_a_refused_example_leaves_the_model_of_the_examples_before(rule):
    """An example refused mid-stream (its gradient would overflow the state), or whose
    decoder raised, changes nothing: the stream after it gives the model of the stream
    without it, to the contract's rounding (its items were caught up: under Berhu's
    heap, put back)."""
    rng = np.random.default_rng(3)
    s = dict(d=6, K=2, m=2, params=dict(alpha=0.05, eta0=0.5, berhu_gamma=0.05))
    lazy, eager = both(rule, s)
    stream = [example(rng, 6, 2, 2) for _ in range(60)]
    def failing(scores, unpenalized):
        raise RuntimeError("the decoder failed")

    for i, (X, Q, u, h) in enumerate(stream):
        if i == 20:
            with pytest.raises(ValueError, match="reached 2\\^480"):
                lazy.step(sp.csr_matrix(np.full((2, 6), 1e300)), np.array([[1.0, -1.0], [0.0, 0.0]]), u)
        if i == 40:
            with pytest.raises(RuntimeError, match="the decoder failed"):
                lazy.step_decoded(sp.csr_matrix(np.ones((1, 6))), failing)
        if i >= 20:         # feature 5, caught up by the examples that did not step, is left alone
            X = sp.csr_matrix(X.toarray() * (np.arange(6) < 5))
        lazy.step(X, Q, u, h)
        eager.step(X.toarray(), Q, u, h)
    check_equal(lazy, eager)


def test_a_grown_learner_equals_one_built_wide():
    """Features met as the stream goes (grow, a pickle on the way) join as never-touched
    coordinates: the model is, bit for bit, that of a learner built wide."""
    rng = np.random.default_rng(4)
    for rule in [("fobos", "inv", "berhu"), ("fobos", "adagrad", "elasticnet"), ("ftrl", "adagrad", "l1")]:
        wide, grown = (both(rule, dict(d=d, K=2, m=3, params=dict(alpha=0.01, eta0=0.5)))[0] for d in (30, 2))
        for i in range(60):
            X, Q, u, h = example(rng, 30, 2, 3)
            X = sp.csr_matrix(X.toarray() * (np.arange(30) < (i + 5) // 2))    # features met by and by
            grown.grow(X.indices.max(initial=-1) + 1)
            if i == 30:
                grown = pickle.loads(pickle.dumps(grown))
            wide.step(X, Q, u, h)
            grown.step(X[:, :grown.n_features], Q, u, h)
        grown.grow(30)
        assert model_bits(grown) == model_bits(wide)


def test_threads_read_while_one_steps():
    """Reads from another thread (coef_, unpenalized_, pickles) while one thread steps
    see the model between two steps and never crash; the stepping thread's model is
    the one a lone stream gives."""
    rng = np.random.default_rng(6)
    stream = [example(rng, 40, 3, 5) for _ in range(1500)]
    make = lambda: StructuredLearner(40, 3, 5, update="fobos", schedule="invsqrt", penalty="l1_l2", alpha=1e-3)
    shared, alone = make(), make()
    done, read = threading.Event(), threading.Event()

    def steps():
        for i, (X, Q, u, h) in enumerate(stream):
            shared.step(X, Q, u, h)
            if i == 0:          # a stream that outruns the reader still meets one read mid-stream
                read.wait(timeout=30)
        done.set()

    worker = threading.Thread(target=steps)
    worker.start()
    reads = 0
    while not done.is_set():
        copy = pickle.loads(pickle.dumps(shared))
        assert copy.coef_.shape == (3, 40) and np.all(np.isfinite(copy.unpenalized_))
        assert shared.coef_.shape == (3, 40)
        reads += 1
        read.set()
    worker.join()
    for X, Q, u, h in stream:
        alone.step(X, Q, u, h)
    assert reads > 0 and model_bits(shared) == model_bits(alone)
