"""Feature templates (fastprox.structured.features): CRF++'s semantics against a
string-by-string reference, placeholders at the sequence edges, vocabulary and
hashing agreeing, a block of columns and a group per template, plain-data state,
the feature functions and every template error."""
import gzip
import hashlib
import json
import pickle
import re

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from fastprox.structured.features import (AttributeFeatures, TemplateFeatures, parse_crfpp, parse_expressions,
                                          read_crfpp, shape)
from fastprox.structured.features import keys as keys_module
from fastprox.structured.features.defaults import NAMED
from fastprox.structured.io import read_conll, read_crfsuite

SENTENCES = [
    {"w": ["He", "reckons", "the", "current", "account"], "pos": ["PRP", "VBZ", "DT", "JJ", "NN"]},
    {"w": ["Yes"], "pos": ["UH"]},
    {"w": ["He", "said", "yes"], "pos": ["PRP", "VBD", "UH"]},
]


def crfpp_strings(line, rows, pos):
    """CRF++'s expansion of a template line at item ``pos`` of ``rows`` (each a
    list of the item's columns), written from its getIndex/applyRule: the
    reference, string by string."""
    out, i = [], 0
    while i < len(line):
        match = re.compile(r"%x\[(-?\d+),(\d+)\]").match(line, i)
        if match is None:
            out.append(line[i])
            i += 1
            continue
        at = pos + int(match.group(1))
        out.append(f"_B-{-at}" if at < 0 else f"_B+{at - len(rows) + 1}" if at >= len(rows)
                   else rows[at][int(match.group(2))])
        i = match.end()
    return "".join(out)


def reference_rows(lines, sequences, columns):
    """Each item's set of CRF++ feature strings."""
    out = []
    for s in sequences:
        rows = list(zip(*(s[c] for c in columns)))
        for pos in range(len(rows)):
            out.append({crfpp_strings(line, rows, pos) for line in lines if line.startswith("U")})
    return out


def row_names(fx, X):
    names = fx.get_feature_names_out()
    return [set(names[X.indices[X.indptr[i]:X.indptr[i + 1]]]) for i in range(X.shape[0])]


def conll_lines():
    return [line for line in NAMED["conll2000"].splitlines() if line and not line.startswith("#")]


# --- CRF++ semantics ---------------------------------------------------------------

def test_conll2000_template_matches_crfpp_strings_by_hand():
    fx = TemplateFeatures("conll2000", columns=("w", "pos"))
    X = fx.fit_transform(SENTENCES)
    assert X.shape[0] == 9 and fx.transitions_ and len(fx.templates_) == 19
    assert row_names(fx, X) == reference_rows(conll_lines(), SENTENCES, ("w", "pos"))
    names = row_names(fx, X)
    assert {"U00:_B-2", "U01:_B-1", "U03:_B+1", "U04:_B+2", "U05:_B-1/Yes", "U22:UH/_B+1/_B+2",
            "U20:_B-2/_B-1/UH"} <= names[5]
    assert {"U00:_B-1", "U05:He/reckons", "U14:JJ"} <= names[1]


def test_placeholders_up_to_crfpp_limit():
    lines = ["U0:%x[-8,0]", "U1:%x[8,0]", "U2:%x[-3,0]/%x[3,0]"]
    fx = TemplateFeatures(parse_crfpp("\n".join(lines)), columns=("w",))
    X = fx.fit_transform([{"w": ["a", "b"]}])
    assert row_names(fx, X) == [{"U0:_B-8", "U1:_B+7", "U2:_B-3/_B+2"}, {"U0:_B-7", "U1:_B+8", "U2:_B-2/_B+3"}]


def test_conll2000_train_has_crfpps_feature_count(shared_structured):
    """CRF++ reports 1,679,700 parameters for this template on CoNLL-2000 train
    with -f 3 (Bottou's crf/README.txt): 76,328 unigram strings x 22 labels plus
    22 x 22 transitions."""
    (train,) = shared_structured("conll2000/train.txt")
    seqs = list(read_conll(train, ("w", "pos", "y"), "y"))
    fx = TemplateFeatures(min_count=3).fit(seqs)
    assert fx.n_features_ == 76_328 and fx.n_features_ * 22 + 22 * 22 == 1_679_700
    head = seqs[:300]
    X = TemplateFeatures().fit_transform(head)
    assert X.shape == (sum(map(len, head)), X.shape[1]) and X.nnz == 19 * X.shape[0]
    fx = TemplateFeatures().fit(head)
    assert row_names(fx, fx.transform(head)) == reference_rows(conll_lines(), head, ("w", "pos"))


def test_read_crfpp_file_compressed(tmp_path):
    with gzip.open(tmp_path / "template.gz", "wt") as f:
        f.write("# words\n  U00:%x[0,0]  \n\nB\n")
    templates = read_crfpp(tmp_path / "template.gz")
    assert [t.text for t in templates] == ["U00:%x[0,0]"] and templates.transitions
    assert templates.source == str(tmp_path / "template.gz")


@pytest.mark.parametrize("text,line,expected", [
    ("U00:%x[0,0]\nX01:%x[0,0]", 2, "template 'X01:%x[0,0]' starts with neither U"),
    ("U00:%x[0, 0]", 1, "bad macro at column 5"),
    ("U00:%x[+1,0]", 1, "bad macro"),
    ("U00:%y[1,0]", 1, "bad macro"),
    ("U00:%x[9,0]", 1, "row 9 of %x[9,0] is beyond CRF++'s -8..8"),
    ("U00:%x[0,0]\nB01:%x[0,0]", 2, "bigram template 'B01:%x[0,0]' has %x macros"),
    ("U00:%x[0,0]\n#\nU00:%x[0,0]", 3, "template 'U00:%x[0,0]' repeats line 1"),
])
def test_crfpp_errors_name_line_and_fix(text, line, expected):
    with pytest.raises(ValueError) as e:
        parse_crfpp(text, "tpl")
    assert str(e.value).startswith(f"tpl:{line}: {expected}")


def test_crfpp_without_unigram_lines():
    with pytest.raises(ValueError, match="tpl: no U template"):
        parse_crfpp("# nothing\nB\n", "tpl")


@pytest.fixture
def conll_file(tmp_path):
    path = tmp_path / "small.txt"
    path.write_text("He PRP B-NP\nsaid VBD B-VP\n\nYes UH O\n")
    return path


def test_crfpp_column_beyond_the_items(conll_file):
    fx = TemplateFeatures(parse_crfpp("U00:%x[0,0]\nU01:%x[0,2]", "tpl"))
    seqs = list(read_conll(conll_file, ("w", "pos", "y"), "y"))
    with pytest.raises(ValueError, match=r"tpl:2: 'U01:%x\[0,2\]' reads column 2, but the items have 2 \(w, pos"):
        fx.fit(seqs)


def test_crfpp_needs_column_names_for_mappings():
    with pytest.raises(ValueError, match="pass columns="):
        TemplateFeatures("conll2000").fit(SENTENCES)


def test_columns_come_from_the_reader_label_excluded(conll_file):
    seqs = list(read_conll(conll_file, ("w", "pos", "y"), "y"))
    X = TemplateFeatures(parse_crfpp("U:%x[0,1]")).fit_transform(seqs)
    assert X.shape == (3, 3)
    with pytest.raises(ValueError, match="reads the label column 'y'"):
        TemplateFeatures(["y[-1]"]).fit(seqs)
    with pytest.raises(ValueError, match="reads column 'lemma', which the sequences do not have"):
        TemplateFeatures(["lemma[0]"]).fit(seqs)


# --- expressions and functions ---------------------------------------------------

def test_expressions_names_and_functions():
    templates = ["w[0]", "lower(w[-1])|pos[0]", "shape(w[0])", "prefix2(w[0])", "suffix2(lower(w[1]))",
                 "isupper(w[0])", "istitle(w[0])", "isdigit(w[0])", "bias", "w[-3]|w[4]"]
    fx = TemplateFeatures(templates)
    X = fx.fit_transform(SENTENCES)
    names = row_names(fx, X)
    assert names[0] == {"w[0]=He", "lower(w[-1])|pos[0]=_B-1|PRP", "shape(w[0])=Xx", "prefix2(w[0])=He",
                        "suffix2(lower(w[1]))=ns", "isupper(w[0])=False", "istitle(w[0])=True",
                        "isdigit(w[0])=False", "bias", "w[-3]|w[4]=_B-3|account"}
    assert "lower(w[-1])|pos[0]=he|VBZ" in names[1] and "w[-3]|w[4]=_B-2|_B+3" in names[7]
    assert fx.groups_.max() == len(templates) - 1


@pytest.mark.parametrize("word,expected", [("McDonald's", "XxXx'x"), ("1,000.5", "d,d.d"), ("U.S.", "X.X."),
                                           ("iPhone15", "xXxd"), ("", ""), ("--", "-")])
def test_shape(word, expected):
    assert shape(word) == expected


@pytest.mark.parametrize("expressions,expected", [
    (["w[0]", "w[0] "], "expression 2 'w[0]' repeats expression 1"),
    (["w[0"], "expression 1 'w[0', column 4: expected ']'"),
    (["w(0)"], "unknown function 'w'"),
    (["upper(w[0])"], "unknown function 'upper'"),
    (["w[x]"], "expected an integer offset"),
    (["w[0]|"], "expected a column name or a function"),
    (["w[0] pos[0]"], "expected '|' between terms"),
    (["1w[0]"], "expected a column name or a function, not '1'"),
    ([], "no feature expression"),
    ("w[0]", "as a list of strings"),
])
def test_expression_errors(expressions, expected):
    with pytest.raises(ValueError) as e:
        parse_expressions(expressions, "expr")
    assert expected in str(e.value)


def test_unknown_named_template_set():
    with pytest.raises(ValueError, match="unknown template set 'conll2003'; the named ones are conll2000"):
        TemplateFeatures("conll2003").fit(SENTENCES)


# --- numbering: vocabulary, hashing, groups ------------------------------------------

WORDS = st.sampled_from(["a", "b", "Ab", "c1", "_B-1"])


@st.composite
def sequences(draw):
    n = draw(st.integers(1, 5))
    return [{"w": draw(st.lists(WORDS, min_size=k, max_size=k)), "p": draw(st.lists(WORDS, min_size=k, max_size=k))}
            for k in draw(st.lists(st.integers(0, 4), min_size=n, max_size=n))]


TERMS = ["w[0]", "w[-1]", "p[2]", "lower(w[1])", "shape(p[-2])", "suffix1(w[0])"]


@settings(max_examples=60, deadline=None)
@given(sequences(), st.lists(st.lists(st.sampled_from(TERMS), min_size=1, max_size=3), min_size=1, max_size=4,
                             unique_by=lambda t: "|".join(t)))
def test_expressions_against_reference_and_hashing(seqs, templates):
    """Vocabulary names equal the values read by hand; hashing puts two items in
    one column of a template exactly when the vocabulary does."""
    expressions = ["|".join(t) for t in templates]
    fx = TemplateFeatures(expressions, batch_items=3)
    X = fx.fit_transform(seqs)
    expected = []
    for s in seqs:
        n = len(s["w"])
        for i in range(n):
            names = set()
            for expression in expressions:
                values = []
                for term in expression.split("|"):
                    col, offset = re.search(r"([wp])\[(-?\d+)\]", term).groups()
                    at = i + int(offset)
                    if at < 0 or at >= n:
                        values.append(f"_B{at - (n - 1) if at >= n else at:+d}")
                        continue
                    v = s[col][at]
                    v = v.lower() if term.startswith("lower") else shape(v) if term.startswith("shape") \
                        else v[-1:] if term.startswith("suffix1") else v
                    values.append(v)
                names.add(expression + "=" + "|".join(values))
            expected.append(names)
    assert row_names(fx, X) == expected
    H = TemplateFeatures(expressions, bits=40).fit_transform(seqs)
    assert H.indices.dtype == np.int64 and X.shape[0] == H.shape[0] == len(expected)
    vocab = X.indices.reshape(-1, len(expressions))     # one feature per template and item
    hashed = H.indices.reshape(-1, len(expressions))
    for t in range(len(expressions)):
        assert np.array_equal(vocab[:, t, None] == vocab[None, :, t], hashed[:, t, None] == hashed[None, :, t])


def test_groups_and_blocks_per_template():
    for bits in (None, 12):
        fx = TemplateFeatures("conll2000", columns=("w", "pos"), bits=bits)
        X = fx.fit_transform(SENTENCES)
        assert fx.groups_.dtype == np.int64 and len(fx.groups_) == fx.n_features_ == X.shape[1]
        assert np.array_equal(np.diff(fx.groups_) >= 0, np.ones(len(fx.groups_) - 1, bool))
        assert fx.offsets_[-1] == fx.n_features_ and len(fx.offsets_) == 20
        table = X.indices.reshape(-1, 19)
        assert (fx.groups_[table] == np.arange(19)).all()      # column t of each row is template t's
        assert X.has_sorted_indices and (np.diff(table, axis=1) > 0).all()
    assert fx.offsets_[1] == 1 << (12 - 5)


def documented_bucket(template, values, block_bits):
    """The bucket the documentation gives, in plain Python integers: BLAKE2b-64
    of the UTF-8 strings, folded by fmix64((h * golden) XOR value) from the
    template's seed, then fastprox.hashing's multiplicative hash."""
    def blake(text):
        return int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "little")

    def fmix64(x):
        for shift, factor in ((33, 0xFF51AFD7ED558CCD), (33, 0xC4CEB9FE1A85EC53), (33, 1)):
            x ^= x >> shift
            x = x * factor % 2**64
        return x

    golden = 0x9E3779B97F4A7C15
    h = blake(template)
    for value in values:
        h = fmix64((h * golden % 2**64) ^ blake(value))
    return (h * golden % 2**64) >> (64 - block_bits)


def test_hashing_is_stable_across_runs_and_platforms():
    """The buckets are the documented function of the strings, whatever the salt
    of Python's hash: pinned numbers, and the formula in plain integers."""
    fx = TemplateFeatures(["w[0]", "w[-1]|w[0]"], bits=20)
    X = fx.fit_transform([{"w": ["hello", "world"]}])
    assert fx.offsets_.tolist() == [0, 1 << 19, 1 << 20]
    block = 1 << 19
    expected = [documented_bucket("w[0]", ["hello"], 19), block + documented_bucket("w[-1]|w[0]", ["_B-1", "hello"], 19),
                documented_bucket("w[0]", ["world"], 19), block + documented_bucket("w[-1]|w[0]", ["hello", "world"], 19)]
    assert X.indices.tolist() == expected == [293155, 787228, 485937, 1012160]


def test_min_count_and_unseen_features():
    fx = TemplateFeatures(["w[0]"], min_count=2)
    X = fx.fit_transform(SENTENCES)
    assert list(fx.get_feature_names_out()) == ["w[0]=He"]
    assert X.getnnz(axis=1).tolist() == [1, 0, 0, 0, 0, 0, 1, 0, 0]
    Xt = fx.transform([{"w": ["He", "unseen"]}])
    assert Xt.toarray().tolist() == [[1.0], [0.0]]
    with pytest.raises(ValueError, match="a sequence has no column 'w'"):
        fx.transform([{"word": ["He"]}])
    with pytest.raises(ValueError, match="column 'pos' has 1 values for 2 items"):
        TemplateFeatures(["w[0]", "pos[0]"]).fit([{"w": ["a", "b"], "pos": ["A"]}])


def test_float32_int64_and_empty_inputs():
    fx = TemplateFeatures(["w[0]", "w[-1]|w[0]"], dtype=np.float32)
    X = fx.fit_transform(SENTENCES + [{"w": [], "pos": []}])
    assert X.dtype == np.float32 and X.indices.dtype == np.int32 and X.shape[0] == 9
    assert fx.transform([]).shape == (0, fx.n_features_)
    assert fx.transform([{"w": []}]).shape == (0, fx.n_features_)
    H = TemplateFeatures(["w[0]"], bits=33).fit_transform(SENTENCES)
    assert H.indices.dtype == np.int64 and H.indptr.dtype == np.int64 and H.shape[1] == 1 << 33
    with pytest.raises(ValueError, match="at least one sequence"):
        TemplateFeatures().fit([])


def test_streams_batches_and_folds_give_the_same_matrix(monkeypatch):
    expressions = ["w[-1]|w[0]|pos[0]|w[1]", "pos[0]", "bias"]
    whole = TemplateFeatures(expressions).fit_transform(SENTENCES)
    streamed = TemplateFeatures(expressions, batch_items=1)
    assert (streamed.fit_transform(iter(SENTENCES)) != whole).nnz == 0
    assert (streamed.transform(iter(SENTENCES)) != whole).nnz == 0
    monkeypatch.setattr(keys_module, "KEY_LIMIT", 40)       # fold partial keys after every atom or two
    folded = TemplateFeatures(expressions)
    assert (folded.fit_transform(SENTENCES) != whole).nnz == 0
    assert folded.tables_[0].folds and list(folded.get_feature_names_out()) == \
        list(TemplateFeatures(expressions).fit(SENTENCES).get_feature_names_out())
    assert (folded.transform(SENTENCES[::-1]) != TemplateFeatures(expressions).fit(SENTENCES)
            .transform(SENTENCES[::-1])).nnz == 0


@pytest.mark.parametrize("kwargs", [dict(), dict(bits=16), dict(templates=["shape(w[0])|w[1]", "bias"])])
def test_state_as_plain_data_and_pickle(kwargs):
    fx = TemplateFeatures(columns=("w", "pos"), **kwargs).fit(SENTENCES)
    state = fx.to_dict()
    as_json = json.loads(json.dumps(state, default=lambda a: a.tolist()))
    again = TemplateFeatures.from_dict(as_json)
    other = [{"w": ["He", "said", "no"], "pos": ["PRP", "VBD", "DT"]}]
    for copy in (again, pickle.loads(pickle.dumps(fx))):
        assert (copy.transform(other) != fx.transform(other)).nnz == 0
        assert copy.n_features_ == fx.n_features_ and np.array_equal(copy.groups_, fx.groups_)
    if "bits" not in kwargs:
        assert list(again.get_feature_names_out()) == list(fx.get_feature_names_out())
    with pytest.raises(ValueError, match="malformed"):
        TemplateFeatures.from_dict({k: v for k, v in state.items() if k != "views"})
    with pytest.raises(ValueError, match="not a fastprox.TemplateFeatures"):
        TemplateFeatures.from_dict(dict(state, version=99))
    if "bits" not in kwargs:        # tables that pack and fit could not have made
        for table, match in [(dict(keys=[3, 2]), "keys are not strictly increasing"),
                             (dict(keys=[10**12]), "keys are not strictly increasing"),
                             (dict(radices=[1] * len(state["tables"][0]["radices"])), "radices"),
                             (dict(fold_at=[0], fold_keys=[[0]]), "folds do not match")]:
            broken = dict(state, tables=[dict(state["tables"][0], **table)] + state["tables"][1:])
            with pytest.raises(ValueError, match=match):
                TemplateFeatures.from_dict(broken)
        with pytest.raises(ValueError, match="tables for"):
            TemplateFeatures.from_dict(dict(state, tables=state["tables"][1:]))
        views = [dict(state["views"][0], vocabulary=state["views"][0]["vocabulary"][2:])] + state["views"][1:]
        with pytest.raises(ValueError, match="lacks placeholders|radices"):
            TemplateFeatures.from_dict(dict(state, views=views))


@pytest.mark.parametrize("kwargs,match", [(dict(bits=0), "bits must be None"), (dict(bits=63), "bits must be"),
                                          (dict(bits=4), "bits=4 leaves no bucket"),
                                          (dict(bits=20, min_count=2), "min_count counts"),
                                          (dict(min_count=0), "min_count must be"),
                                          (dict(dtype=np.int32), "dtype must be"),
                                          (dict(batch_items=0), "batch_items must be")])
def test_parameters_checked(kwargs, match):
    with pytest.raises(ValueError, match=match):
        TemplateFeatures("conll2000", columns=("w", "pos"), **kwargs).fit(SENTENCES)


def test_hashed_features_have_no_names():
    with pytest.raises(ValueError, match="no names"):
        TemplateFeatures(["w[0]"], bits=10).fit(SENTENCES).get_feature_names_out()


# --- CRFsuite attributes ------------------------------------------------------------

def test_attribute_features(tmp_path):
    path = tmp_path / "a.crf"
    path.write_text("B\tw=He\tpos=PRP\tw=He:2\nI\tw=said:0.5\n\nO\tw=.\tnew:3\n")
    seqs = list(read_crfsuite(path))
    fx = AttributeFeatures()
    X = fx.fit_transform(seqs[:1])
    assert list(fx.get_feature_names_out()) == ["w=He", "pos=PRP", "w=said"]
    assert X.toarray().tolist() == [[3.0, 1.0, 0.0], [0.0, 0.0, 0.5]] and fx.groups_.tolist() == [0, 0, 0]
    assert fx.transform(seqs[1:]).toarray().tolist() == [[0.0, 0.0, 0.0]]
    H = AttributeFeatures(bits=30, dtype=np.float32).fit_transform(seqs)
    assert H.dtype == np.float32 and H.shape == (3, 1 << 30) and sorted(H.data.tolist()) == [0.5, 1, 1, 3, 3]
    assert H.has_canonical_format
    again = AttributeFeatures.from_dict(json.loads(json.dumps(fx.to_dict())))
    assert (again.transform(seqs) != fx.transform(seqs)).nnz == 0
    assert sp.issparse(pickle.loads(pickle.dumps(fx)).transform(seqs))


def test_ud_pos_reads_form_alone():
    """The named set of CoNLL-U taggers reads FORM and nothing else, what a tagger of raw
    text has (the other fields of a file to tag may be empty or gold), and names the
    features by their expressions."""
    from fastprox.structured.features import TemplateFeatures
    from fastprox.structured.features.defaults import as_templates
    templates = as_templates("ud-pos")
    assert templates.kind == "expressions" and len(templates) == 20
    assert {atom.column for t in templates for atom in t.atoms} == {"FORM"}
    words = [{"FORM": ("Dogs", "bark", "."), "UPOS": ("NOUN", "VERB", "PUNCT")}]
    features = TemplateFeatures("ud-pos").fit(words)
    assert "suffix3(lower(FORM[0]))=ogs" in set(features.get_feature_names_out())
