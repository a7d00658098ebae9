"""Arc features (fastprox.structured.arcs): every row of the compiled kernel against
a slow reference written from the template table (atom strings, the documented
hash), root and boundary placeholders, McDonald's in-between POS and distance
bins, one block per template, empty h = m rows, determinism and pinned columns,
one-word sentences, one sentence's buffers over a whole file, scores, state and
every error."""
import functools
import hashlib
import os
import pickle
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from itertools import islice

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import fastprox
from fastprox._arcs import ArcKernel
from fastprox.structured.arcs import BASES, TEMPLATES, ArcFeatures, TokenEncoder, select
from fastprox.structured.arcs import tokens as tokens_module
from fastprox.structured.arcs.plan import compile_plan
from fastprox.structured.arcs.templates import (FEATS_CONTEXT, KINDS, MKL_EWT_FEATS_CONTEXT, SURROUNDING_BACKOFF,
                                                direction_distance, parse)
from fastprox.structured.features.stable_hash import combine, seed, string_hashes
from fastprox.structured.io import read_conllu

DEV = "ud_english_ewt/en_ewt-ud-dev.conllu"
MASK = (1 << 64) - 1
GOLDEN = 0x9E3779B97F4A7C15


# --- the reference, from the template table and the documented hash ----------

def C(h, v):
    """stable_hash's combine on Python ints: fmix64((h * golden) XOR v)."""
    x = ((h * GOLDEN) & MASK) ^ v
    x ^= x >> 33
    x = (x * 0xFF51AFD7ED558CCD) & MASK
    x ^= x >> 33
    x = (x * 0xC4CEB9FE1A85EC53) & MASK
    return x ^ (x >> 33)


def F(s, values):
    for v in values:
        s = C(s, v)
    return s


def text(sentence, i, kind, lowercase=False, pos="UPOS"):
    """The string an atom of `kind` reads at position i (-1..n+1)."""
    n = len(sentence["FORM"])
    if i == -1:
        return "_B-1"
    if i == 0:
        return "_ROOT"
    if i == n + 1:
        return "_B+1"
    word = sentence["FORM"][i - 1].lower() if lowercase else sentence["FORM"][i - 1]
    return {"w": word, "l": sentence["LEMMA"][i - 1], "f": word[:5], "p": tag(sentence, i, pos),
            "x": tag(sentence, i, "UPOS+FEATS")}[kind]


def field(sentence, name, i):
    """Word i's value of the field, or "_" where the sentence has no such field."""
    try:
        return sentence[name][i - 1]
    except KeyError:
        return "_"


def tag(sentence, i, pos):
    """What a POS atom reads at word i (1..n): the field, or UPOS|FEATS."""
    if pos == "UPOS+FEATS":
        return field(sentence, "UPOS", i) + "|" + field(sentence, "FEATS", i)
    return sentence[pos][i - 1]


seed_of = functools.cache(seed)


def dd_text(h, m):
    d = abs(h - m)
    return ("R" if h < m else "L") + (str(d) if d <= 5 else "6-10" if d <= 10 else "11+")


@functools.cache
def H(s):
    """A string's stable hash."""
    return int(string_hashes([s])[0])


def reference(sentence, names=TEMPLATES, bits=20, lowercase=False, pos="UPOS"):
    """Each row's sorted columns and the feature strings behind them."""
    n = len(sentence["FORM"])
    order = sorted(names, key=TEMPLATES.index)
    width = bits - (len(order) - 1).bit_length()
    rows, strings = [], []
    for h in range(n + 1):
        for m in range(1, n + 1):
            row, named = [], []
            for t, name in enumerate(order if h != m else ()):
                atoms = name.split(".")
                conjoined = atoms[-1] == "dd"
                atoms = atoms[:-1] if conjoined else atoms
                s = int(seed_of(".".join(atoms)))
                sides = {"h": [], "m": []}
                for atom in atoms:
                    if atom != "bp":
                        at = (h if atom[0] == "h" else m) + int(atom[2:] or 0)
                        sides[atom[0]].append(text(sentence, at, atom[1], lowercase, pos))
                x = C(C(s, F(s, map(H, sides["h"]))), F(s, map(H, sides["m"])))
                values = [(x, sides["h"] + sides["m"])]
                if "bp" in atoms:
                    between = dict.fromkeys(tag(sentence, i, pos) for i in range(min(h, m) + 1, max(h, m)))
                    values = [(C(x, H(b)), v + [b]) for b in between for x, v in values]
                if conjoined:
                    values = [(C(x, H(dd_text(h, m))), v + [dd_text(h, m)]) for x, v in values]
                for x, v in values:
                    row.append((t << width) + (((x * GOLDEN) & MASK) >> (64 - width)))
                    named.append(f"{name}={'|'.join(v)}")
            rows.append(sorted(row))
            strings.append(named)
    return rows, strings


def kernel_rows(fx, sentence):
    indices, indptr = fx.rows(sentence)
    return [indices[indptr[r]:indptr[r + 1]].tolist() for r in range(len(indptr) - 1)]


def sentence_of(forms, tags, lemmas=None, xpos=None):
    return {"FORM": list(forms), "LEMMA": list(lemmas or [w.lower() for w in forms]), "UPOS": list(tags),
            "XPOS": list(xpos or tags)}


@pytest.fixture(scope="module")
def dev(shared_structured):
    (path,) = shared_structured(DEV)
    return path


@pytest.fixture(scope="module")
def dev_sentences(dev):
    """Some dev sentences: the first ten, the longest of the first 300 up to 50 words
    (arcs of every distance bin, many POS between) and a one-word one."""
    first = list(islice(read_conllu(dev, heads=True), 300))
    one = [s for s in first if len(s) == 1][:1]
    return first[:10] + [max((s for s in first if len(s) <= 50), key=len)] + one


def test_reference_hash_is_stable_hash():
    rng = np.random.default_rng(0)
    h, v = rng.integers(0, 2**63, 50, dtype=np.uint64) * 2 + 1, rng.integers(0, 2**63, 50, dtype=np.uint64)
    assert [C(int(a), int(b)) for a, b in zip(h, v)] == combine(h, v).tolist()


def test_every_row_equals_the_reference(dev_sentences):
    fx = ArcFeatures(bits=20)
    assert len({len(s) for s in dev_sentences}) > 5 and max(map(len, dev_sentences)) >= 40
    assert min(map(len, dev_sentences)) == 1
    for sentence in dev_sentences:
        assert kernel_rows(fx, sentence) == reference(sentence)[0]


@pytest.mark.parametrize("options", [dict(lowercase=True), dict(pos="XPOS"), dict(pos="UPOS+FEATS"), dict(bits=31),
                                     dict(bits=9)])
def test_options_equal_the_reference(dev_sentences, options):
    fx = ArcFeatures(**options)
    for sentence in dev_sentences[:4]:
        assert kernel_rows(fx, sentence) == reference(sentence, **{"bits": 24, **options})[0]


@pytest.mark.parametrize("name", TEMPLATES)
def test_each_template_alone_equals_the_reference(name):
    sentence = sentence_of(["The", "old", "man", "saw", "the", "old", "boats", "yesterday", "."],
                           ["DET", "ADJ", "NOUN", "VERB", "DET", "ADJ", "NOUN", "ADV", "PUNCT"])
    fx = ArcFeatures([name], bits=12)
    rows, strings = reference(sentence, [name], bits=12)
    assert kernel_rows(fx, sentence) == rows
    assert all(s.startswith(name + "=") for row in strings for s in row)


HAND_BUILT = sentence_of(["The", "old", "man", "saw", "the", "old", "boats", "yesterday", "."],
                         ["DET", "ADJ", "NOUN", "VERB", "DET", "ADJ", "NOUN", "ADV", "PUNCT"])


@pytest.mark.parametrize("name, value", [
    ("hp+1.mp-1.mp", "DET|ADJ|NOUN"), ("hp.mp-1.mp", "VERB|ADJ|NOUN"), ("hp.hp+1.mp", "VERB|DET|NOUN"),
    ("hp.hp+1.mp-1", "VERB|DET|ADJ"), ("hp-1.mp-1.mp", "NOUN|ADJ|NOUN"), ("hp-1.hp.mp", "NOUN|VERB|NOUN"),
    ("hp-1.hp.mp-1", "NOUN|VERB|ADJ"), ("hp+1.mp.mp+1", "DET|NOUN|ADV"), ("hp.mp.mp+1", "VERB|NOUN|ADV"),
    ("hp.hp+1.mp+1", "VERB|DET|ADV"), ("hp-1.mp.mp+1", "NOUN|NOUN|ADV"), ("hp-1.hp.mp+1", "NOUN|VERB|ADV"),
    ("hp-1.hp.mp+1.dd", "NOUN|VERB|ADV|R3"),
])
def test_surrounding_backoffs_read_what_they_name(name, value):
    """MSTParser's trigram back-offs on the arc saw (4) -> boats (7): the POS they name."""
    row = 4 * 9 + 7 - 1
    rows, strings = reference(HAND_BUILT, [name], bits=12)
    assert strings[row] == [f"{name}={value}"]
    assert kernel_rows(ArcFeatures([name], bits=12), HAND_BUILT)[row] == rows[row]


HAND_BUILT_FEATS = {**HAND_BUILT, "LEMMA": ["the", "old", "man", "see", "the", "old", "boat", "yesterday", "."],
                    "FEATS": ["Definite=Def", "Degree=Pos", "Number=Sing", "Tense=Past", "Definite=Def",
                              "Degree=Pos", "Number=Plur", "_", "_"]}


@pytest.mark.parametrize("name, value", [
    ("hl.mx", "see|NOUN|Number=Plur"), ("hx.ml", "VERB|Tense=Past|boat"),
    ("hx.mx.mp+1", "VERB|Tense=Past|NOUN|Number=Plur|ADV"), ("hp-1.hx.mx", "NOUN|VERB|Tense=Past|NOUN|Number=Plur"),
    ("hx.mp-1.mx", "VERB|Tense=Past|ADJ|NOUN|Number=Plur"), ("hx.hp+1.mx", "VERB|Tense=Past|DET|NOUN|Number=Plur"),
    ("hx.hp+1.mx.dd", "VERB|Tense=Past|DET|NOUN|Number=Plur|R3"), ("hp-1.hx", "NOUN|VERB|Tense=Past"),
    ("hx.hp+1", "VERB|Tense=Past|DET"), ("mp-1.mx", "ADJ|NOUN|Number=Plur"), ("mx.mp+1", "NOUN|Number=Plur|ADV"),
])
def test_feats_context_templates_read_what_they_name(name, value):
    """The UPOS|FEATS context templates (FEATS_CONTEXT) on the arc saw (4) -> boats (7)."""
    assert name.removesuffix(".dd") in FEATS_CONTEXT
    row = 4 * 9 + 7 - 1
    rows, strings = reference(HAND_BUILT_FEATS, [name], bits=12)
    assert strings[row] == [f"{name}={value}"]
    assert kernel_rows(ArcFeatures([name], bits=12), HAND_BUILT_FEATS)[row] == rows[row]


def test_feats_in_between_reads_the_tags_and_each_pos_between():
    """hx.bp.mx (FEATS_BETWEEN) on saw (4) -> boats (7): the pair's UPOS|FEATS tags with
    each distinct POS between (DET, ADJ), beside McDonald's hp.bp.mp in a row of its own
    blocks: both in-between templates, plain and with dd, in one plan."""
    row = 4 * 9 + 7 - 1
    names = ["hp.bp.mp", "hp.bp.mp.dd", "hx.bp.mx", "hx.bp.mx.dd"]
    rows, strings = reference(HAND_BUILT_FEATS, ["hx.bp.mx"], bits=12)
    assert sorted(strings[row]) == ["hx.bp.mx=VERB|Tense=Past|NOUN|Number=Plur|ADJ",
                                    "hx.bp.mx=VERB|Tense=Past|NOUN|Number=Plur|DET"]
    assert kernel_rows(ArcFeatures(["hx.bp.mx"], bits=12), HAND_BUILT_FEATS) == rows
    for subset in (names, names[1:], names[::2], ["hw", *names[1:3]]):
        fx = ArcFeatures(subset, bits=14)
        assert kernel_rows(fx, HAND_BUILT_FEATS) == reference(HAND_BUILT_FEATS, subset, bits=14)[0]
        indices, indptr = fx.rows(HAND_BUILT_FEATS)
        assert (np.diff(indices[indptr[row]:indptr[row + 1]]) > 0).all()           # sorted, block by block


def test_upos_feats_tags_join_upos_and_feats():
    sentence = {**sentence_of(["He", "saw", "it"], ["PRON", "VERB", "PRON"]),
                "FEATS": ["Case=Nom", "Tense=Past", "_"]}
    rows, strings = reference(sentence, ["hp.mp", "hp.bp.mp"], bits=12, pos="UPOS+FEATS")
    assert strings[2 * 3 + 1 - 1] == ["hp.mp=VERB|Tense=Past|PRON|Case=Nom"]
    assert strings[3 * 3 + 1 - 1][1] == "hp.bp.mp=PRON|_|PRON|Case=Nom|VERB|Tense=Past"
    assert kernel_rows(ArcFeatures(["hp.mp", "hp.bp.mp"], bits=12, pos="UPOS+FEATS"), sentence) == rows
    with pytest.raises(ValueError, match="without the field 'FEATS'"):
        ArcFeatures(pos="UPOS+FEATS").rows(sentence_of(["He"], ["PRON"]))


def test_feats_templates_read_upos_and_feats():
    """The x atoms read UPOS|FEATS (UPOS|_ where a sentence has no FEATS field)."""
    plain = sentence_of(["He", "saw", "it"], ["PRON", "VERB", "PRON"])
    sentence = {**plain, "FEATS": ["Case=Nom", "Tense=Past", "_"]}
    names = ["hx.mx", "hw.mx.dd"]
    rows, strings = reference(sentence, names, bits=12)
    assert strings[2 * 3 + 1 - 1] == ["hx.mx=VERB|Tense=Past|PRON|Case=Nom", "hw.mx.dd=saw|PRON|Case=Nom|L1"]
    assert kernel_rows(ArcFeatures(names, bits=12), sentence) == rows
    rows, strings = reference(plain, names, bits=12)
    assert strings[2 * 3 + 1 - 1] == ["hx.mx=VERB|_|PRON|_", "hw.mx.dd=saw|PRON|_|L1"]
    assert kernel_rows(ArcFeatures(names, bits=12), plain) == rows


WORDS = st.sampled_from(["a", "Bb", "cccccccc", "Dddddd", "e", "_", "x y", "été"])


@st.composite
def sentences(draw):
    n = draw(st.integers(1, 14))
    return sentence_of(draw(st.lists(WORDS, min_size=n, max_size=n)),
                       draw(st.lists(st.sampled_from("ABCD"), min_size=n, max_size=n)),
                       draw(st.lists(WORDS, min_size=n, max_size=n)))


@settings(max_examples=60, deadline=None)
@given(sentences(), st.sets(st.sampled_from(TEMPLATES), min_size=1, max_size=12), st.integers(6, 16))
def test_template_subsets_equal_the_reference(sentence, names, bits):
    fx = ArcFeatures(list(names), bits=bits)
    assert kernel_rows(fx, sentence) == reference(sentence, names, bits)[0]


# --- the layout ------------------------------------------------------------------

def test_layout_rows_and_empty_diagonal(dev_sentences):
    fx = ArcFeatures()
    singles = sum(not parse(t).between for t in TEMPLATES)
    per_value = len(TEMPLATES) - singles              # the in-between templates: one feature per POS between
    for sentence in dev_sentences:
        n = len(sentence)
        indices, indptr = fx.rows(sentence)
        assert indices.dtype == np.int32 and indptr.dtype == np.int64
        assert len(indptr) == (n + 1) * n + 1 and indptr[0] == 0 and indptr[-1] == len(indices)
        lengths = np.diff(indptr).reshape(n + 1, n)
        for h in range(n + 1):
            for m in range(1, n + 1):
                if h == m:
                    assert lengths[h, m - 1] == 0
                else:
                    between = len(set(sentence["UPOS"][min(h, m):max(h, m) - 1]))
                    assert lengths[h, m - 1] == singles + per_value * between
        assert (np.diff(indices[indptr[1]:indptr[2]]) >= 0).all()


def test_one_word_sentence():
    fx = ArcFeatures()
    X = fx.transform(sentence_of(["Hi"], ["INTJ"]))
    singles = sum(not parse(t).between for t in TEMPLATES)
    assert X.shape == (2, fx.n_features)
    assert X.indptr.tolist() == [0, singles, singles]    # no word in between
    assert X.data.tolist() == [1.0] * singles


def test_root_arcs_read_the_root_codes():
    codes = TokenEncoder().sentence(sentence_of(["a", "b", "c"], ["X", "Y", "Z"]))
    assert (codes[0] == string_hashes(["_B-1"])).all() and (codes[1] == string_hashes(["_ROOT"])).all()
    assert (codes[-1] == string_hashes(["_B+1"])).all() and codes.shape == (6, 5)
    rows = kernel_rows(ArcFeatures(["hw"], bits=12), sentence_of(["a", "b", "c"], ["X", "Y", "Z"]))
    heads = [{row[0] for row in rows[h * 3:(h + 1) * 3] if row} for h in range(4)]
    assert all(len(h) == 1 for h in heads) and len(set.union(*heads)) == 4   # the root's own hw
    # A word whose attributes are the root's placeholder reads as the root does.
    rows_root = kernel_rows(ArcFeatures(["hw"], bits=12), sentence_of(["_ROOT", "b"], ["_ROOT", "Y"]))
    assert rows_root[1 * 2 + 2 - 1] == rows[0]


def test_in_between_pos_is_each_distinct_pos_between():
    sentence = sentence_of(list("abcdef"), ["A", "B", "A", "C", "B", "A"])
    fx = ArcFeatures(["hp.bp.mp"], bits=20)
    rows = kernel_rows(fx, sentence)
    n = 6

    def row(h, m):
        return rows[h * n + m - 1]
    assert row(1, 2) == [] and row(2, 1) == []                    # adjacent: none
    assert len(row(1, 5)) == 3 and len(row(5, 1)) == 3            # B, A, C between
    assert len(row(1, 3)) == 1 and len(row(0, 6)) == 3             # B; A, B, C
    assert len(row(2, 6)) == 3 and len(row(6, 4)) == 1             # A, C, B; B
    assert row(1, 3) == row(3, 1) != row(3, 5)                     # (A, B, A) either way; (A, C, B)
    _, strings = reference(sentence, ["hp.bp.mp"], 20)
    assert sorted(strings[1 * n + 5 - 1]) == ["hp.bp.mp=A|B|A", "hp.bp.mp=A|B|B", "hp.bp.mp=A|B|C"]


def test_direction_and_distance_bins():
    assert [direction_distance(h, m) for h, m in [(0, 1), (3, 1), (1, 6), (1, 7), (1, 11), (1, 12), (20, 4)]] \
        == ["R1", "L2", "R5", "R6-10", "R6-10", "R11+", "L11+"]
    n = 30
    sentence = sentence_of(["w"] * n, ["P"] * n)
    fx = ArcFeatures(["hp.dd"], bits=20)
    rows = kernel_rows(fx, sentence)
    col = {(h, m): rows[h * n + m - 1][0] for h in range(n + 1) for m in range(1, n + 1) if h != m}
    # Same head POS and direction-distance: one feature; otherwise distinct.
    for (h, m), c in col.items():
        for (h2, m2), c2 in islice(col.items(), 0, None, 7):
            if (h == 0) == (h2 == 0):
                assert (c == c2) == (direction_distance(h, m) == direction_distance(h2, m2))
    assert len(set(col.values())) == 2 * 14 - 7                      # the root's arcs all go right


def test_blocks_and_groups(dev_sentences):
    fx = ArcFeatures(bits=22)
    T = len(TEMPLATES)
    assert fx.template_names == TEMPLATES and T == 2 * len(BASES) == 136
    assert fx.n_features == T << (22 - 8) and fx.n_features <= 1 << 22
    assert fx.offsets.tolist() == [t << 14 for t in range(T + 1)]
    groups = fx.groups
    assert groups.dtype == np.int64 and len(groups) == fx.n_features
    assert (np.bincount(groups) == 1 << 14).all()
    _, strings = reference(dev_sentences[0], bits=22)
    indices, indptr = fx.rows(dev_sentences[0])
    for r, named in enumerate(strings):
        cols = indices[indptr[r]:indptr[r + 1]]
        assert sorted(groups[cols].tolist()) == sorted(TEMPLATES.index(s.split("=")[0]) for s in named)


def test_selection_keeps_table_order_and_names_its_blocks():
    fx = ArcFeatures(["hp.bp.mp.dd", "hw", "hp.mp.dd"], bits=10)
    assert fx.template_names == ("hw", "hp.mp.dd", "hp.bp.mp.dd")
    assert fx.offsets.tolist() == [0, 256, 512, 768]
    assert [t.name for t in select(["mw", "hw"])] == ["hw", "mw"]


def test_the_set_without_prefixes():
    """'ewt-no-prefix': the defaults' set less exactly its templates of 5-character prefixes."""
    kept = [t.name for t in select("ewt-no-prefix")]
    dropped = set(MKL_EWT_FEATS_CONTEXT) - set(kept)
    assert set(kept) < set(MKL_EWT_FEATS_CONTEXT) and len(kept) == 70 and len(dropped) == 10
    f = KINDS.index("f")
    assert all(any(a.kind == f for a in parse(n).head + parse(n).modifier) for n in dropped)
    assert not any(a.kind == f for n in kept for a in parse(n).head + parse(n).modifier)


def test_table_is_mcdonalds():
    assert TEMPLATES[-4:] == ("hp.bp.mp", "hp.bp.mp.dd", "hx.bp.mx", "hx.bp.mx.dd")  # in-between last
    assert {"hw.hp.mw.mp", "hp.mw.mp", "hw.mw.mp", "hw.hp.mp", "hw.hp.mw", "hw.mw", "hp.mp",
            "hp.hp+1.mp-1.mp", "hp-1.hp.mp-1.mp", "hp.hp+1.mp.mp+1", "hp-1.hp.mp.mp+1"} <= set(BASES)
    assert all(name + ".dd" in TEMPLATES for name in BASES)
    for word in "lf":      # the word templates again with lemmas and prefixes (not those of UPOS|FEATS)
        assert {name.replace("w", word) for name in BASES if "w" in name and "x" not in name} <= set(BASES)
    assert {"hp.hp+1.mp", "hp-1.hp.mp", "hp.mp-1.mp", "hp.mp.mp+1"} <= set(SURROUNDING_BACKOFF) <= set(BASES)


# --- determinism, scores, state ---------------------------------------------------

PINNED = [1417, 5002, 12205, 15393, 17781, 20858, 26699, 31975]


def test_pinned_columns_and_other_processes():
    """The columns are the same in every process and release (the hash is fixed)."""
    sentence = sentence_of(["He", "saw", "it"], ["PRON", "VERB", "PRON"], ["he", "see", "it"])
    indices, indptr = ArcFeatures(bits=20).rows(sentence)
    assert indices[:8].tolist() == PINNED
    code = ("import hashlib; from fastprox.structured.arcs import ArcFeatures; "
            f"i, p = ArcFeatures(bits=20).rows({sentence!r}); "
            "print(hashlib.sha256(i.tobytes() + p.tobytes()).hexdigest())")
    here = hashlib.sha256(indices.tobytes() + indptr.tobytes()).hexdigest()
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env={**os.environ, "PYTHONHASHSEED": "12345"})     # str hashes differ: no matter
    assert out.stdout.strip() == here


def test_scores_are_rows_times_weights(dev_sentences):
    fx = ArcFeatures(bits=18)
    w = np.random.default_rng(1).standard_normal(fx.n_features)
    for sentence in dev_sentences[:5]:
        n = len(sentence)
        S = fx.scores(sentence, w)
        expected = np.zeros((n + 1, n + 1))
        expected[:, 1:] = (fx.transform(sentence) @ w).reshape(n + 1, n)
        assert S.shape == (n + 1, n + 1)
        assert np.array_equal(S, expected)         # the same sums in the same order


def test_state_and_pickle(dev_sentences):
    fx = ArcFeatures(["hw", "hp.bp.mp.dd", "mf.mp"], bits=16, lowercase=True, pos="XPOS")
    for other in (ArcFeatures.from_dict(fx.to_dict()), pickle.loads(pickle.dumps(fx))):
        assert other.to_dict() == fx.to_dict()
        for sentence in dev_sentences[:3]:
            assert kernel_rows(other, sentence) == kernel_rows(fx, sentence)


def test_tokens_and_corpus_agree(dev_sentences):
    fx = ArcFeatures(bits=16)
    tokens, starts = fx.corpus(dev_sentences)
    assert tokens.dtype == np.uint64 and tokens.shape == (sum(map(len, dev_sentences)) + 3 * len(dev_sentences), 5)
    for s, sentence in enumerate(dev_sentences):
        codes = tokens[starts[s]:starts[s + 1]]
        assert np.array_equal(codes, fx.tokens(sentence))
        assert kernel_rows(fx, codes) == kernel_rows(fx, sentence)


def test_the_encoders_memory_is_bounded(dev_sentences, monkeypatch):
    monkeypatch.setattr(tokens_module, "CACHE_STRINGS", 40)
    encoder, fresh = TokenEncoder(), TokenEncoder
    for sentence in dev_sentences * 2:
        assert np.array_equal(encoder.sentence(sentence), fresh().sentence(sentence))
        assert len(encoder._hashes) <= max(40, 4 * len(sentence) + 3)


# --- one sentence at a time ------------------------------------------------------

def test_a_pass_over_a_file_holds_one_sentence(dev):
    fx = ArcFeatures()
    longest = total = count = 0
    for sentence, indices, indptr in fx.iter_conllu(dev):
        assert len(indptr) == (len(sentence) + 1) * len(sentence) + 1
        longest, total, count = max(longest, len(indices)), total + len(indices), count + 1
    capacity = fx.kernel.capacity
    assert count == 2001
    assert longest <= capacity["indices"] <= 1.5 * longest        # grown to the longest sentence only
    assert longest < total / 20
    n = max(len(s) for s in read_conllu(dev))
    assert capacity["indptr"] <= 1.5 * ((n + 1) * n + 1)


def test_threads_sharing_an_extractor(dev_sentences):
    fx = ArcFeatures(bits=18)
    w = np.random.default_rng(2).standard_normal(fx.n_features)
    sentences = dev_sentences * 3
    expected = [(fx.rows(s), fx.scores(s, w)) for s in sentences]

    def work(order):
        return [(i, fx.rows(sentences[i]), fx.scores(sentences[i], w)) for i in order]
    with ThreadPoolExecutor(4) as pool:
        done = pool.map(work, [range(len(sentences)), reversed(range(len(sentences)))] * 2)
    for results in done:
        for i, (indices, indptr), S in results:
            assert np.array_equal(indices, expected[i][0][0]) and np.array_equal(indptr, expected[i][0][1])
            assert np.array_equal(S, expected[i][1])


def test_rows_are_made_lazily():
    seen = []

    def sentences():
        for i in range(1000):
            seen.append(i)
            yield sentence_of(["a", "b"], ["X", "Y"])
    rows = ArcFeatures().iter_rows(sentences())
    next(rows)
    assert seen == [0]


C_CALLER = """
# cython: language_level=3
import numpy as np
from libc.stdint cimport int32_t, int64_t, uint64_t
from libc.string cimport memset
from fastprox._arcs cimport ArcKernel
from fastprox._kernel.structured.arcs cimport ArcRows, arc_rows, arc_rows_free

def corpus_rows(ArcKernel kernel, const uint64_t[:, ::1] tokens, const int64_t[::1] starts):
    cdef ArcRows rows
    cdef Py_ssize_t s, n
    cdef int status
    memset(&rows, 0, sizeof(ArcRows))
    out = []
    try:
        for s in range(starts.shape[0] - 1):
            n = starts[s + 1] - starts[s] - 3
            with nogil:
                status = arc_rows(&kernel.plan, &tokens[starts[s], 0], n, &rows)
            if status:
                raise MemoryError
            out.append((np.asarray(<int32_t[:rows.nnz]>rows.indices).copy(),
                        np.asarray(<int64_t[:rows.n_rows + 1]>rows.indptr).copy()))
    finally:
        arc_rows_free(&rows)
    return out
"""


@pytest.mark.slow
def test_the_c_api_from_another_compiled_module(tmp_path, dev_sentences):
    """A module that cimports the kernel, as the parser's loop will, makes the same
    rows without the GIL in buffers of its own."""
    (tmp_path / "arcs_caller.pyx").write_text(C_CALLER)
    src = os.path.dirname(os.path.dirname(os.path.abspath(fastprox.__file__)))
    build = ("import numpy as np; from setuptools import setup, Extension; from Cython.Build import cythonize; "
             f"setup(ext_modules=cythonize([Extension('arcs_caller', ['arcs_caller.pyx'], "
             f"include_dirs=[{src!r}, np.get_include()], extra_compile_args=['-O0'])], "
             f"include_path=[{src!r}], quiet=True), "
             "script_args=['build_ext', '--inplace', '-q'])")
    subprocess.run([sys.executable, "-c", build], cwd=tmp_path, check=True, capture_output=True)
    sys.path.insert(0, str(tmp_path))
    try:
        import arcs_caller
    finally:
        sys.path.remove(str(tmp_path))
    fx = ArcFeatures(bits=20)
    tokens, starts = fx.corpus(dev_sentences)
    for (indices, indptr), sentence in zip(arcs_caller.corpus_rows(fx.kernel, tokens, starts), dev_sentences):
        expected = fx.rows(sentence)
        assert np.array_equal(indices, expected[0]) and np.array_equal(indptr, expected[1])


# --- errors ------------------------------------------------------------------------

@pytest.mark.parametrize("kwargs, message", [
    (dict(templates=["hw", "nope"]), "unknown arc template 'nope'"),
    (dict(templates=["hw", "hw"]), "names a template twice"),
    (dict(templates=[]), "selects no template"),
    (dict(bits=0), "bits must be an integer in 1..31"),
    (dict(bits=32), "bits must be an integer in 1..31"),
    (dict(bits=6), "bits=6 leaves no bucket per template for 136 templates; use bits >= 9"),
    (dict(pos="LEMMA"), "pos='LEMMA'"),
])
def test_bad_parameters(kwargs, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace("[", r"\[").replace("+", r"\+")):
        ArcFeatures(**kwargs)


@pytest.mark.parametrize("name, message", [
    ("hq", "'hq' is not an atom"), ("dd.hw", "dd last"), ("hp.bp.bp.mp", "once each"), ("bp.dd", "neither"),
])
def test_bad_template_names(name, message):
    with pytest.raises(ValueError, match=message):
        parse(name)


def test_bad_sentences_and_tokens():
    fx = ArcFeatures(["hw"], bits=8)
    with pytest.raises(ValueError, match="without the field 'LEMMA'"):
        fx.rows({"FORM": ["a"], "UPOS": ["X"]})
    with pytest.raises(ValueError, match="at least one word"):
        fx.rows({"FORM": [], "LEMMA": [], "UPOS": []})
    with pytest.raises(ValueError, match="as many FORM, LEMMA"):
        fx.rows({"FORM": ["a", "b"], "LEMMA": ["a"], "UPOS": ["X", "Y"]})
    with pytest.raises(ValueError, match="with 1 FEATS values; give one a word"):
        fx.rows({**sentence_of(["a", "b"], ["X", "Y"]), "FEATS": ["_"]})
    with pytest.raises(ValueError, match="n \\+ 3 rows of 5 codes"):
        fx.kernel.fill(np.zeros((3, 4), np.uint64))
    with pytest.raises(ValueError, match="n \\+ 3 rows of 5 codes"):
        fx.kernel.fill(np.zeros((5, 3), np.uint64))
    with pytest.raises(ValueError, match="weights of length 3"):
        fx.scores(sentence_of(["a"], ["X"]), np.zeros(3))
    with pytest.raises(ValueError, match="not a fastprox.ArcFeatures version 1 state"):
        ArcFeatures.from_dict({"format": "x"})


@pytest.mark.parametrize("field, value, message", [
    ("plain_at", [5], "do not fill the 1 places of a row once each"),
    ("conj_at", [0], "do not fill the 1 places of a row once each"),
    ("head_kind", None, "reads outside the tokens"),
    ("n_head", [7], "too many atoms"),
    ("n_both", 1, "do not add up to its 1 bases"),
    ("n_between", 1, "plan between_offset: 0 entries, expected 2"),
    ("per_value", 2, "each in-between base needs a selected template, per_value their number"),
    ("shift", 10, "shift 10 outside 33..63"),
    ("plain_offset", [-5], "negative block offset"),
    ("seed", [1, 2], "plan n_head: 1 entries, expected 2"),
    ("dd", [1, 2], "plan dd: 2 entries, expected 14"),
])
def test_kernel_checks_its_plan(field, value, message):
    plan = compile_plan(select(["hw"]), 8)
    plan[field] = np.full(4, 9) if value is None else value
    with pytest.raises(ValueError, match=message):
        ArcKernel(plan)
