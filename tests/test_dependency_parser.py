"""DependencyParser (issue 37): the compiled loop against a Python driver of
StructuredLearner.step_rows (same bits) and against the eager update (lazy = eager),
decoding against brute force over all trees, both ways in (rows given, CoNLL-U by
templates), partial_fit and pickles mid-stream, bad input."""
import io
import pickle
import re
import sys

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings, strategies as st

from fastprox import _decoders
from fastprox._registry import PENALTIES as PENALTY_TABLE, RULES as ALL_RULES
from fastprox.structured import StructuredLearner
from fastprox.structured.arcs import ArcFeatures
from fastprox.structured.io import read_conllu
from fastprox.structured.parser import DependencyParser
from tests.support.reference import assert_contract_close
from tests.support.structured_reference import best_tree_score, trees
from tests.support.structured_update_reference import StructuredUpdateReference

RULES = [(r.update, r.schedule, r.penalty) for r in ALL_RULES if r.schedule != "normalized"]
IDS = ["-".join(r) for r in RULES]
SETTINGS = settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# A small treebank: three sentences, a multiword token and an empty node (skipped).
CONLLU = """\
# sent_id = a
1\tThe\tthe\tDET\tDT\t_\t2\tdet\t_\t_
2\tdog\tdog\tNOUN\tNN\t_\t3\tnsubj\t_\t_
3\tbarks\tbark\tVERB\tVBZ\t_\t0\troot\t_\t_
4\t.\t.\tPUNCT\t.\t_\t3\tpunct\t_\t_

# sent_id = b
1-2\tdon't\t_\t_\t_\t_\t_\t_\t_\t_
1\tdo\tdo\tAUX\tVBP\t_\t3\taux\t_\t_
2\tn't\tnot\tPART\tRB\t_\t3\tadvmod\t_\t_
3\trun\trun\tVERB\tVB\t_\t0\troot\t_\t_
3.1\tgo\tgo\tVERB\tVB\t_\t_\t_\t_\t_
4\t!\t!\tPUNCT\t.\t_\t3\tpunct\t_\t_

# sent_id = c
1\tcats\tcat\tNOUN\tNNS\t_\t2\tnsubj\t_\t_
2\tsleep\tsleep\tVERB\tVBP\t_\t0\troot\t_\t_

"""


def parsed(conllu):
    """The CoNLL-U text ``conllu`` as parse predict writes it when it finds its heads:
    DEPREL root on the root's word and dep elsewhere, DEPS _, every other field and
    line as it was."""
    lines = []
    for line in conllu.split("\n"):
        fields = line.split("\t")
        if len(fields) == 10 and fields[0].isdigit():
            fields[7:9] = ["root" if fields[6] == "0" else "dep", "_"]
        lines.append("\t".join(fields))
    return "\n".join(lines)


def random_treebank(rng, n_sentences, d, longest=4, density=0.4):
    """Random arc rows (every sentence's (n + 1) n rows stacked), lengths and gold heads
    drawn among the trees."""
    lengths = rng.integers(1, longest + 1, n_sentences)
    blocks, heads = [], []
    for n in lengths.tolist():
        X = sp.random((n + 1) * n, d, density=density, format="csr", random_state=rng,
                      data_rvs=lambda k: rng.uniform(-1, 1, k))
        blocks.append(X)
        all_trees = trees(n)
        heads.append(all_trees[rng.integers(len(all_trees))][1:])
    return sp.vstack(blocks, format="csr"), lengths, np.concatenate(heads)


def arc_matrix(scores, n):
    """The (n + 1) x (n + 1) arc scores of a sentence's row scores (diagonal and column 0: 0)."""
    S = np.zeros((n + 1, n + 1))
    for h in range(n + 1):
        for m in range(1, n + 1):
            if h != m:
                S[h, m] = scores[h * n + m - 1]
    return S


def drive(learner, X, lengths, heads, loss, projective, weights=None, scores=None):
    """One pass in order, driven from Python as the compiled loop steps: the rows'
    scores (`scores(block)`, the learner's by default), the decoder, then
    `step_rows` with the decoded arcs' rows then the gold arcs' negated, word by word."""
    decode = _decoders.eisner if projective else _decoders.chu_liu_edmonds
    first, word = 0, 0
    for s, n in enumerate(lengths.tolist()):
        block = X[first:first + (n + 1) * n]
        gold = np.concatenate([[-1], heads[word:word + n]])
        S = arc_matrix((scores or (lambda B: learner.scores(B)[:, 0]))(block), n)
        y = decode(S, gold if loss == "hinge" else None)
        wrong = [m for m in range(1, n + 1) if y[m] != gold[m]]
        margin = 0.0
        for m in wrong:
            margin += S[y[m], m] - S[gold[m], m]
        if loss == "hinge":
            margin += len(wrong)
        features, G = [], []
        if wrong and (margin > 0 or loss == "perceptron"):
            for m in wrong:
                for row, sign in ((y[m] * n + m - 1, 1.0), (gold[m] * n + m - 1, -1.0)):
                    lo, hi = block.indptr[row], block.indptr[row + 1]
                    features += block.indices[lo:hi].tolist()
                    G += (sign * block.data[lo:hi]).tolist()
        h = 1.0 if weights is None else float(weights[s])
        yield np.array(features, np.int64), np.array(G).reshape(-1, 1), h
        first, word = first + (n + 1) * n, word + n


def rule_params(rule, rng, d):
    update, schedule, penalty = rule
    params = dict(update=update, schedule=schedule, penalty=penalty, alpha=0.01, eta0=0.5, delta=1e-8)
    if PENALTY_TABLE[penalty].family == "group":
        params["groups"] = rng.integers(0, 3, d)
    return params


@pytest.mark.parametrize("loss", ["hinge", "perceptron"])
@pytest.mark.parametrize("projective", [False, True])
def test_compiled_loop_gives_the_bits_of_step_rows_driven_from_python(loss, projective):
    rng = np.random.default_rng(1)
    X, lengths, heads = random_treebank(rng, 30, 12)
    params = dict(update="fobos", schedule="adagrad", penalty="l1", alpha=0.01, eta0=0.5)
    parser = DependencyParser(loss=loss, projective=projective, max_iter=2, shuffle=False, average=False,
                              **params)
    parser.fit(X, lengths, heads)
    learner = StructuredLearner(12, 1, fit_intercept=False, **params)
    for _ in range(2):
        for features, G, h in drive(learner, X, lengths, heads, loss, projective):
            learner.step_rows(features, G, sample_weight=h)
    assert parser.t_ == learner.t_ == 60
    assert parser.coef_.tobytes() == learner.coef_[0].tobytes()
    assert np.abs(parser.coef_).sum() > 0


@pytest.mark.parametrize("rule", RULES, ids=IDS)
@SETTINGS
@given(seed=st.integers(0, 2**32 - 1), loss=st.sampled_from(["hinge", "perceptron"]),
       projective=st.booleans(), weighted=st.booleans())
def test_lazy_equals_eager(rule, seed, loss, projective, weighted):
    """Every rule (group penalties over random groups, as templates are), the eager
    update decoding from its own scores."""
    rng = np.random.default_rng(seed)
    d = 8
    X, lengths, heads = random_treebank(rng, 6, d)
    weights = rng.uniform(0.2, 2.0, len(lengths)) if weighted else None
    params = rule_params(rule, rng, d)
    parser = DependencyParser(loss=loss, projective=projective, max_iter=2, shuffle=False, average=False,
                              **params)
    parser.fit(X, lengths, heads, sample_weight=weights)
    update, schedule, penalty = params.pop("update"), params.pop("schedule"), params.pop("penalty")
    eager = StructuredUpdateReference(d, 1, 0, update, schedule, penalty, fit_intercept=False, **params)
    for _ in range(2):
        for features, G, h in drive(None, X, lengths, heads, loss, projective, weights,
                                    scores=lambda B: eager.scores(B.toarray())[:, 0]):
            eager.step_rows(features, G, np.zeros(1), np.zeros(0), h)
    assert parser.t_ == eager.t
    assert_contract_close(parser.coef_, eager.coef()[0])


@pytest.mark.parametrize("projective", [False, True])
def test_predict_is_the_best_tree_by_brute_force(projective):
    rng = np.random.default_rng(2)
    X, lengths, heads = random_treebank(rng, 40, 10, longest=5)
    parser = DependencyParser(loss="perceptron", projective=projective, max_iter=1, penalty=None).fit(X, lengths, heads)
    predicted = parser.predict(X, lengths)
    w = parser.coef_
    first, word = 0, 0
    for n in lengths.tolist():
        S = arc_matrix(X[first:first + (n + 1) * n] @ w, n)
        y = np.concatenate([[-1], predicted[word:word + n]])
        assert y.tolist() in trees(n, projective).tolist()
        assert np.isclose(S[y[1:], np.arange(1, n + 1)].sum(), best_tree_score(S, projective=projective))
        gold = np.concatenate([[-1], heads[word:word + n]])
        decoded = (_decoders.eisner if projective else _decoders.chu_liu_edmonds)(S, gold)
        assert np.isclose(S[decoded[1:], np.arange(1, n + 1)].sum() + (decoded[1:] != gold[1:]).sum(),
                          best_tree_score(S, gold, projective))
        first, word = first + (n + 1) * n, word + n


def test_a_learnable_treebank_is_learned():
    """Heads that follow from the arcs' features (a feature per true arc) are learned."""
    rng = np.random.default_rng(3)
    lengths = rng.integers(1, 7, 60)
    blocks, heads = [], []
    for n in lengths.tolist():
        gold = trees(n)[rng.integers(len(trees(n)))] if n <= 5 else np.concatenate([[-1], np.arange(n)])
        rows = np.array([int(h != m and gold[m] == h) for h in range(n + 1) for m in range(1, n + 1)])
        noise = rng.integers(1, 6, len(rows))
        blocks.append(sp.csr_matrix((np.ones(2 * len(rows)), np.stack([rows, noise], 1).ravel(),
                                     np.arange(0, 2 * len(rows) + 1, 2)), shape=(len(rows), 6)))
        heads.append(gold[1:])
    X, heads = sp.vstack(blocks, format="csr"), np.concatenate(heads)
    parser = DependencyParser(max_iter=3, eta0=0.1).fit(X, lengths, heads)
    assert parser.score(X, lengths, heads) == 1.0


def test_partial_fit_and_pickle_mid_stream_continue_bit_for_bit():
    rng = np.random.default_rng(4)
    X, lengths, heads = random_treebank(rng, 20, 10)
    a = DependencyParser(penalty="l1", alpha=0.01).partial_fit(X, lengths, heads)
    b = pickle.loads(pickle.dumps(a))
    for p in (a, b):
        p.partial_fit(X, lengths, heads)
        p.partial_fit(X[:(lengths[0] + 1) * lengths[0]], lengths[:1], heads[:lengths[0]])
    assert a.coef_.tobytes() == b.coef_.tobytes() and a.t_ == b.t_ == 2 * len(lengths) + 1
    c = DependencyParser(penalty="l1", alpha=0.01, max_iter=2, shuffle=False).fit(X, lengths, heads)
    d = DependencyParser(penalty="l1", alpha=0.01).partial_fit(X, lengths, heads).partial_fit(X, lengths, heads)
    assert c.coef_.tobytes() == d.coef_.tobytes()


def test_rows_of_any_dtype_give_the_same_model():
    rng = np.random.default_rng(5)
    X, lengths, heads = random_treebank(rng, 15, 9)
    X.data = X.data.astype(np.float32).astype(np.float64)
    models = []
    for dtype, itype in ((np.float64, np.int32), (np.float32, np.int64)):
        Y = X.astype(dtype)
        Y.indices, Y.indptr = Y.indices.astype(itype), Y.indptr.astype(itype)
        models.append(DependencyParser(max_iter=2, random_state=0).fit(Y, lengths, heads.astype(np.int32)).coef_)
    assert models[0].tobytes() == models[1].tobytes()


@pytest.fixture
def treebank(tmp_path):
    path = tmp_path / "small.conllu"
    path.write_text(CONLLU)
    return path


@pytest.mark.parametrize("penalty", [None, "squared_group"])
def test_treebank_sentences_step_as_their_template_rows(treebank, penalty):
    """fit(sentences) (rows made per sentence in the loop) gives the bits of fit(rows)
    with the same templates' rows stacked; groups='templates' are the templates."""
    sentences = list(read_conllu(treebank, heads=True))
    params = dict(penalty=penalty, schedule="invsqrt" if penalty else "adagrad", alpha=0.01, bits=12,
                  max_iter=3, shuffle=True, random_state=7, average=False)
    by_text = DependencyParser(**params).fit(sentences)
    features = ArcFeatures(by_text.features_.template_names, bits=12)
    X = sp.vstack([features.transform(s) for s in sentences], format="csr")
    lengths = np.array([len(s) for s in sentences])
    heads = np.concatenate([s.heads for s in sentences])
    if penalty:
        params["groups"] = features.groups
    by_rows = DependencyParser(**params).fit(X, lengths, heads)
    assert by_text.coef_.tobytes() == by_rows.coef_.tobytes()
    predicted = by_text.predict(treebank)
    assert [len(p) for p in predicted] == [4, 4, 2]
    assert np.concatenate(predicted).tolist() == by_rows.predict(X, lengths).tolist()
    assert by_text.score(sentences) == 1.0


def test_bad_rows_heads_and_lengths_name_the_sentence_and_the_fix():
    X = sp.csr_matrix(np.ones((6 + 2, 3)))         # a sentence of 2 words (6 rows), one of 1 (2 rows)
    parser = DependencyParser()
    cases = [
        (dict(lengths=[2, 1], heads=[0, 3, 0]), "sentence 0, word 2 (heads[1]): head 3 is outside 0..2"),
        (dict(lengths=[2, 1], heads=[0, 2, 0]), "head 2 is the word itself"),
        (dict(lengths=[2, 1], heads=[2, 1, 0]), "sentence 0: the heads form a cycle through words 1 -> 2"),
        (dict(lengths=[2, 0, 1], heads=[0, 1, 0]), "sentence 1 has 0 words; a sentence has at least one"),
        (dict(lengths=[2, 2], heads=[0, 1, 0, 1]), "the arcs have 8 rows where sentences of these lengths have 12"),
        (dict(lengths=[2, 1], heads=[0, 1]), "heads has 2 entries for the 3 words"),
        (dict(lengths=None, heads=[0, 1, 0]), "need lengths="),
        (dict(lengths=[2, 1]), "arcs given as rows need heads= to train"),     # crashed the process
    ]
    for kwargs, message in cases:
        with pytest.raises(ValueError, match=re.escape(message)):
            parser.fit(X, **kwargs)
    parser.fit(X, [2, 1], [0, 1, 0])
    with pytest.raises(ValueError, match="need heads= to score"):             # scored 0.0
        parser.score(X, [2, 1])
    X.data[0] = np.nan
    with pytest.raises(ValueError, match="NaN or infinity"):
        parser.fit(X, [2, 1], [0, 1, 0])


def test_bad_treebank_names_file_and_line(tmp_path):
    path = tmp_path / "bad.conllu"
    path.write_text(CONLLU.replace("2\tdog\tdog\tNOUN\tNN\t_\t3", "2\tdog\tdog\tNOUN\tNN\t_\t9"))
    with pytest.raises(ValueError, match=r"bad.conllu:3: .*HEAD"):
        DependencyParser().fit(path)
    path.write_text(CONLLU.replace("1\tThe\tthe\tDET\tDT\t_\t2", "1\tThe\tthe\tDET\tDT\t_\t2").replace(
        "3\tbarks\tbark\tVERB\tVBZ\t_\t0", "3\tbarks\tbark\tVERB\tVBZ\t_\t1"))
    with pytest.raises(ValueError, match=r"bad.conllu:1: .*cycle"):
        DependencyParser().fit(path)


def test_a_refused_sentence_names_it_and_keeps_the_sentences_before():
    rng = np.random.default_rng(6)
    X, lengths, heads = random_treebank(rng, 5, 6, density=1.0)
    parser = DependencyParser(loss="perceptron", eta0=1e10, schedule="constant", penalty="none", shuffle=False)
    parser.partial_fit(X, lengths, heads)
    before = parser.coef_
    X = X.tolil()
    X[(lengths[0] + 1) * lengths[0], 0] = 1e300        # sentence 1's first arc
    X = X.tocsr()
    with pytest.raises(ValueError, match=r"example sentence 1 \(arc rows"):
        parser.partial_fit(X, lengths, heads)
    assert parser.t_ == len(lengths) + 1 and np.all(np.isfinite(parser.coef_))
    assert not np.array_equal(before, parser.coef_) or parser.t_ == len(lengths) + 1
    with pytest.raises(ValueError, match=r"example sentence 1 \(arc rows"):   # a fit is undone
        DependencyParser(loss="perceptron", eta0=1e10, schedule="constant", penalty="none", shuffle=False).fit(X, lengths, heads)


def test_the_weights_refuse_writes_that_would_be_lost():
    """coef_ is the model's snapshot, read-only (a write was lost), without a copy."""
    parser = DependencyParser().fit(sp.csr_matrix(np.ones((2, 3))), [1], [0])
    with pytest.raises(ValueError, match="read-only"):
        parser.coef_[0] = 1.0
    with pytest.raises(AttributeError, match="coef_ is read from the model's state"):
        parser.coef_ = np.zeros(3)
    assert parser.coef_ is parser.coef_


def test_unfitted_and_mixed_inputs_are_refused(treebank):
    with pytest.raises(ValueError, match="not fitted yet"):
        DependencyParser().predict(treebank)
    X = sp.csr_matrix(np.ones((2, 3)))
    parser = DependencyParser().fit(X, [1], [0])
    with pytest.raises(ValueError, match="trained on arc rows"):
        parser.predict(treebank)
    with pytest.raises(ValueError, match="reads treebank sentences"):
        DependencyParser(bits=10).fit(treebank).predict(X, [1])
    with pytest.raises(ValueError, match="loss='log' is not supported"):
        DependencyParser(loss="log").fit(X, [1], [0])
    with pytest.raises(ValueError, match="groups='templates' needs treebank"):
        DependencyParser(penalty="squared_group").fit(X, [1], [0])


@pytest.mark.parametrize("change", [{"bits": 11}, {"templates": "all"}, {"lowercase": True}, {"pos": "XPOS"}])
def test_arc_feature_parameters_changed_after_the_fit_are_refused(treebank, change):
    """set_params of a feature parameter after the fit would continue the model on
    other columns: partial_fit and a warm start refuse it, and go on once set back."""
    parser = DependencyParser(bits=10, max_iter=1).fit(treebank)
    before = parser.coef_.copy()
    key, = change
    kept = getattr(parser, key)
    parser.set_params(**change)
    with pytest.raises(ValueError, match=f"cannot continue training the model: {key}="):
        parser.partial_fit(treebank)
    with pytest.raises(ValueError, match=f"{key}=.*set it back, or fit again with warm_start=False"):
        parser.set_params(warm_start=True).fit(treebank)
    np.testing.assert_array_equal(parser.coef_, before)
    parser.set_params(**{key: kept}).partial_fit(treebank)
    assert parser.t_ > 0


@pytest.mark.parametrize("projective", [False, True])
def test_treebank_sentences_are_parsed_with_one_word_on_the_root(tmp_path, projective):
    """A CoNLL-U tree has one word on the root (the UD scorer refuses a file with
    more); the best tree of a sentence's arc scores may hang several from it (here,
    after one pass over 12 random sentences of 2 to 4 words). predict gives the best
    tree of those with one, and parse predict writes it, DEPREL root there and dep
    elsewhere."""
    from fastprox.cli import main
    from fastprox.structured.parser import save_parser
    rng = np.random.default_rng(9)
    words = [("run", "VERB"), ("dogs", "NOUN"), ("fast", "ADV"), ("the", "DET"), ("see", "VERB"), ("cats", "NOUN")]
    lines = []
    for n in rng.integers(2, 5, 12).tolist():
        one_root = trees(n)[(trees(n)[:, 1:] == 0).sum(axis=1) == 1]
        heads = one_root[rng.integers(len(one_root))]
        for m in range(1, n + 1):
            form, upos = words[rng.integers(len(words))]
            lines.append(f"{m}\t{form}\t{form}\t{upos}\t_\t_\t{heads[m]}\t{'root' if heads[m] == 0 else 'dep'}\t_\t_")
        lines.append("")
    path = tmp_path / "random.conllu"
    path.write_text("\n".join(lines) + "\n")
    parser = DependencyParser(bits=10, max_iter=1, random_state=0, projective=projective).fit(path)
    decoder = _decoders.eisner if projective else _decoders.chu_liu_edmonds
    sentences = list(read_conllu(path))
    predicted = parser.predict(sentences)
    several = 0
    for sentence, heads in zip(sentences, predicted):
        S = parser.features_.scores(sentence, parser.coef_)
        several += (decoder(S)[1:] == 0).sum() > 1
        assert heads.tolist() == decoder(S, one_root=True)[1:].tolist()
    assert several > 0                  # (the case: predict gave their best trees)
    save_parser(parser, tmp_path / "m.npz")
    assert main(["parse", "predict", str(tmp_path / "m.npz"), str(path), "--out", str(tmp_path / "out.conllu")]) == 0
    written = [sentence.split("\n") for sentence in (tmp_path / "out.conllu").read_text().split("\n\n") if sentence]
    assert len(written) == len(predicted)
    for sentence, heads in zip(written, predicted):
        fields = [line.split("\t") for line in sentence]
        assert [f[6] for f in fields] == [str(h) for h in heads]
        assert [f[7] for f in fields] == ["root" if h == 0 else "dep" for h in heads]
        assert [f[7] for f in fields].count("root") == 1 and {f[8] for f in fields} == {"_"}


def test_save_and_load_predict_the_same(treebank, tmp_path):
    from fastprox.structured.parser import load_parser, save_parser
    model = DependencyParser(bits=12, max_iter=2, random_state=0).fit(treebank)
    save_parser(model, tmp_path / "m.npz")
    loaded, extras = load_parser(tmp_path / "m.npz")
    assert loaded.coef_.tobytes() == model.coef_.tobytes() and loaded.t_ == model.t_
    assert [p.tolist() for p in loaded.predict(treebank)] == [p.tolist() for p in model.predict(treebank)]
    with pytest.raises(ValueError, match="model file"):
        loaded.partial_fit(treebank)
    (tmp_path / "bad.npz").write_bytes(b"not a model")
    with pytest.raises(ValueError, match="bad.npz: not a readable"):
        load_parser(tmp_path / "bad.npz")


def test_command_line_trains_predicts_and_scores(treebank, tmp_path, capsys, monkeypatch):
    from fastprox.cli import main
    model, out = tmp_path / "m.npz", tmp_path / "pred.conllu"
    assert main(["parse", "train", str(treebank), "--test", str(treebank), "--model", str(model),
                 "--bits", "12", "--passes", "3"]) == 0
    err = capsys.readouterr().err
    assert "example" in err and "finished run" in err
    assert "test: 3 sentences, 10 words, UAS 100.00% (all words), 100.00% (without punctuation)" in err
    assert main(["parse", "predict", str(model), str(treebank), "--out", str(out)]) == 0
    assert out.read_text() == parsed(CONLLU)     # learned: every head as it was, every other line too
    assert "UAS 100.00%" in capsys.readouterr().err
    unlabelled = tmp_path / "unlabelled.conllu"
    unlabelled.write_text("1\tdogs\tdog\tNOUN\tNNS\t_\t_\t_\t_\t_\n2\tbark\tbark\tVERB\tVBP\t_\t_\t_\t_\t_\n\n")
    assert main(["parse", "predict", str(model), str(unlabelled)]) == 0
    captured = capsys.readouterr()
    assert [line.split("\t")[6] for line in captured.out.splitlines() if line] == ["2", "0"]
    assert captured.err == ""
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(unlabelled.read_bytes())))
    assert main(["parse", "predict", str(model), "-"]) == 0       # (read twice: "-: no sentences to parse")
    captured = capsys.readouterr()
    assert [line.split("\t")[6] for line in captured.out.splitlines() if line] == ["2", "0"]
    assert captured.err == ""
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(treebank.read_bytes())))
    assert main(["parse", "predict", str(model), "-", "--out", str(out)]) == 0
    assert capsys.readouterr().err.startswith("<stdin>: ")          # (not "-: ")
    punctuation = tmp_path / "punctuation.conllu"      # (found by hand: exit 1, "uas: no words to score")
    punctuation.write_text("1\t.\t.\tPUNCT\t.\t_\t0\troot\t_\t_\n\n")
    assert main(["parse", "predict", str(model), str(punctuation)]) == 0
    captured = capsys.readouterr()
    assert "1 sentences, 1 words, UAS 100.00% (all words), n/a (without punctuation)" in captured.err
    assert captured.out.split("\t")[6] == "0"
    bad = tmp_path / "bad.conllu"
    bad.write_text(CONLLU.replace("3\tbarks\tbark\tVERB\tVBZ\t_\t0", "3\tbarks\tbark\tVERB\tVBZ\t_\t7"))
    assert main(["parse", "train", str(bad)]) == 1
    assert f"{bad}:4: HEAD 7 of word 3 is outside 0..4" in capsys.readouterr().err
    assert main(["parse", "train", str(treebank), "--test", str(bad), "--model", str(tmp_path / "lost.npz")]) == 1
    err = capsys.readouterr().err         # (was: after the whole training, its model lost)
    assert f"{bad}:4: HEAD 7 of word 3 is outside 0..4" in err and "finished run" not in err
    (tmp_path / "empty.conllu").write_text("")
    assert main(["parse", "train", str(treebank), "--test", str(tmp_path / "empty.conllu")]) == 1
    err = capsys.readouterr().err
    assert "--test " in err and "no sentences to score the model on" in err and "finished run" not in err
    assert main(["parse", "predict", str(model), str(bad)]) == 0     # (it printed no score, and no reason)
    captured = capsys.readouterr()
    assert captured.err == (f"fastprox: warning: {bad}:4: HEAD 7 of word 3 is outside 0..4 (the sentence has "
                            f"4 words); HEAD is 0 for the root or the ID of a word of the same sentence; the "
                            f"file is parsed, not scored\n")
    assert captured.out == parsed(CONLLU)
    assert main(["parse", "train", str(treebank), "--templates", "hp.mp,nonsense"]) == 2     # (an option's value)
    assert "unknown arc template 'nonsense'" in capsys.readouterr().err


@pytest.mark.parametrize("penalty", ["squared_group", "l1_l2"])
def test_template_groups_lazy_equal_eager(treebank, penalty):
    """Sentences through the templates (2 columns a template, groups = templates)
    against the eager update decoding from its own scores of the same rows."""
    sentences = list(read_conllu(treebank, heads=True))
    params = dict(update="fobos", schedule="invsqrt", penalty=penalty, alpha=0.05, eta0=0.5)
    parser = DependencyParser(**params, templates="all", bits=9, max_iter=3, shuffle=False,
                              average=False).fit(sentences)
    features = parser.features_
    X = sp.vstack([features.transform(s) for s in sentences], format="csr")
    lengths = np.array([len(s) for s in sentences])
    heads = np.concatenate([s.heads for s in sentences])
    update, schedule, penalty = params.pop("update"), params.pop("schedule"), params.pop("penalty")
    eager = StructuredUpdateReference(features.n_features, 1, 0, update, schedule, penalty, fit_intercept=False,
                                      groups=features.groups, **params)
    for _ in range(3):
        for rows, G, h in drive(None, X, lengths, heads, "hinge", False,
                                scores=lambda B: eager.scores(B.toarray())[:, 0]):
            eager.step_rows(rows, G, np.zeros(1), np.zeros(0), h)
    assert parser.t_ == eager.t == 9
    assert_contract_close(parser.coef_, eager.coef()[0])
    norms = np.sqrt(np.add.reduceat(parser.coef_ ** 2, features.offsets[:-1]))
    assert norms[[features.template_names.index(t) for t in ("mw", "mp", "mw.mp")]].tolist() == [0, 0, 0]


def test_command_line_averages_as_the_estimator_unless_told_not_to(treebank, tmp_path, capsys):
    """parse train keeps the averaged iterate, as DependencyParser() does (its default);
    --no-average the last iterate: the bits of the estimator's fit either way."""
    from fastprox.cli import main
    from fastprox.structured.parser import load_parser
    for flag, average in (([], True), (["--no-average"], False)):
        model = tmp_path / f"m{len(flag)}.npz"
        assert main(["parse", "train", str(treebank), "--model", str(model), "--bits", "10", "--quiet", *flag]) == 0
        parser, _ = load_parser(model)
        expected = DependencyParser(bits=10, random_state=0, average=average).fit(treebank)
        assert parser.average == average and parser.coef_.tobytes() == expected.coef_.tobytes()
    assert DependencyParser().average is True


def test_an_empty_sentence_in_a_treebank_names_its_line(tmp_path):
    path = tmp_path / "empty.conllu"
    path.write_text(CONLLU.replace("# sent_id = c\n", "# sent_id = c\n\n# sent_id = d\n"))
    with pytest.raises(ValueError, match=r"empty.conllu:\d+: .*without words"):
        DependencyParser().fit(path)


def test_threads_predict_while_one_trains(treebank):
    from concurrent.futures import ThreadPoolExecutor
    parser = DependencyParser(bits=10, max_iter=1).fit(treebank)

    def read():
        return {tuple(len(p) for p in parser.predict(treebank)) for _ in range(20)}
    with ThreadPoolExecutor(3) as pool:
        readers = [pool.submit(read) for _ in range(3)]
        for _ in range(20):
            parser.partial_fit(treebank)
        assert all(r.result() == {(4, 4, 2)} for r in readers)      # (a reader's error raises here)
    assert parser.t_ == 3 * 21


def test_a_sentence_whose_arcs_exceed_the_memory_is_refused_naming_its_line(treebank, tmp_path, capsys,
                                                                           monkeypatch):
    """A sentence's (n + 1) * n arcs are held at once: a 10,000-word sentence (an
    unsplit document) needs about 28 GiB under the default templates. It was
    allocated until the system ran out (or refused as "no memory for the arcs of
    sentence 1", no file or line); it is refused before any work, naming its line,
    its words and what it needs, in parse predict, parse train and --test. The
    memory available is made small here: a sentence of 300 words needs 25 MiB."""
    import fastprox.structured.parser as parser_module
    from fastprox.cli import main
    model = tmp_path / "m.npz"
    assert main(["parse", "train", str(treebank), "--model", str(model), "--bits", "12", "--quiet"]) == 0
    long = tmp_path / "long.conllu"
    long.write_text(CONLLU + "".join(f"{i}\tw{i}\t_\tX\t_\t_\t{i - 1}\t_\t_\t_\n" for i in range(1, 301)) + "\n")
    monkeypatch.setattr(parser_module, "available_memory", lambda: 20 << 20, raising=False)
    said = (f"{long}:19: the sentence starting here has 300 words, whose 90300 candidate arcs need 25.5 MiB to "
            f"parse, but only 20.0 MiB of memory is available (it grows with the square of a sentence's length); "
            f"split it into sentences\n")
    for argv in (["parse", "predict", str(model), str(long)], ["parse", "train", str(long), "--quiet"],
                 ["parse", "train", str(treebank), "--test", str(long)]):
        assert main(argv) == 1
        assert capsys.readouterr() == ("", f"fastprox: error: {said}")
    monkeypatch.setattr(parser_module, "available_memory", lambda: 30 << 20)
    assert main(["parse", "predict", str(model), str(long), "--quiet"]) == 0


def test_arc_rows_as_a_dense_array_are_read_as_the_sparse_matrix():
    """Arc rows given as a 2-d NumPy array train, predict and score as the same rows
    in a sparse matrix do, bit for bit, as scikit-learn's estimators take either
    (before: a ValueError taking the array for sentences, "lengths= and heads= go
    with arcs given as a sparse matrix")."""
    X, lengths, heads = random_treebank(np.random.default_rng(7), 15, 6)
    sparse = DependencyParser(random_state=0).fit(X, lengths, heads)
    dense = DependencyParser(random_state=0).fit(X.toarray(), lengths, heads)
    assert np.array_equal(dense.coef_, sparse.coef_)
    assert np.array_equal(dense.predict(X.toarray(), lengths), sparse.predict(X, lengths))
    assert dense.score(X.toarray(), lengths, heads) == sparse.score(X, lengths, heads)
