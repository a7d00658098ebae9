"""Vowpal Wabbit's text format (fastprox.vw, fastprox._vw): VW's own column indices
(recorded from VW 9.11's --audit, and compared live when the vowpalwabbit package is
installed), interactions, labels, weights and tags, errors named by line, chunked
reading equal to a whole read, standard input and gzip, the commands' --format vw."""
import gzip
import io
import re
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fastprox._vw import hash_string
from fastprox.cli import main
from fastprox.vw import interaction_terms, iter_vw_chunks, load_vw

from tests.support.cli_process import cli_command

SAMPLE = (b"1 2.0 'first|a x y:2 12 |b z w:0.5 |c q\n"
          b"-1 |a x |b z z\n"
          b"0 tagged| price:0.25 1234 |animal:2 dog cat:3 |b x:-1.5 :3 :4 colour:red\n"
          b"1 |a UPPER lower_case  \xc3\xbcn\xc3\xafcode |c 7 x\n")

#: VW 9.11's columns and values of SAMPLE (python -m vowpalwabbit --audit -b 18
#: --noconstant [--interactions T]; a column met twice in a row summed).
VW_AUDIT = {
    '': [[(42847, 2.0), (55432, 1.0), (92606, 1.0), (114093, 0.5), (124687, 1.0), (144850, 1.0)], [(55432, 1.0), (124687, 2.0)], [(1234, 1.0), (8212, 6.0), (20494, 1.0), (143313, -1.5), (163331, 3.0), (163332, 4.0), (180906, 2.0), (229902, 0.25)], [(131909, 1.0), (141087, 1.0), (185958, 1.0), (244746, 1.0), (249612, 1.0)]] ,
    'ab': [[(37141, 1.0), (42847, 2.0), (52151, 0.5), (55432, 1.0), (80151, 1.0), (91061, 0.5), (92606, 1.0), (114093, 0.5), (124687, 1.0), (144850, 1.0), (171394, 2.0), (182048, 1.0)], [(55432, 1.0), (80151, 2.0), (124687, 2.0)], [(376, 24.0), (383, 18.0), (1234, 1.0), (8212, 6.0), (8592, 2.0), (20494, 1.0), (20653, -9.0), (135066, 8.0), (135069, 6.0), (143218, 6.0), (143313, -1.5), (155215, -3.0), (163331, 3.0), (163332, 4.0), (180906, 2.0), (229902, 0.25)], [(131909, 1.0), (141087, 1.0), (185958, 1.0), (244746, 1.0), (249612, 1.0)]] ,
    'aa': [[(1680, 1.0), (8100, 1.0), (31047, 2.0), (42847, 2.0), (55432, 1.0), (92606, 1.0), (112550, 1.0), (114093, 0.5), (124687, 1.0), (135987, 2.0), (144850, 1.0), (253394, 4.0)], [(1680, 1.0), (55432, 1.0), (124687, 2.0)], [(1234, 1.0), (8212, 6.0), (20494, 1.0), (20874, 12.0), (143313, -1.5), (155496, 36.0), (163331, 3.0), (163332, 4.0), (176948, 4.0), (180906, 2.0), (229902, 0.25)], [(66176, 1.0), (75482, 1.0), (111314, 1.0), (131909, 1.0), (141087, 1.0), (180148, 1.0), (185958, 1.0), (196859, 1.0), (205985, 1.0), (244746, 1.0), (249612, 1.0)]] ,
    'abc': [[(42847, 2.0), (55432, 1.0), (82610, 1.0), (92606, 1.0), (114093, 0.5), (114749, 0.5), (124687, 1.0), (144850, 1.0), (152029, 1.0), (165063, 0.5), (191207, 1.0), (247412, 2.0)], [(55432, 1.0), (124687, 2.0)], [(1234, 1.0), (8212, 6.0), (20494, 1.0), (143313, -1.5), (163331, 3.0), (163332, 4.0), (180906, 2.0), (229902, 0.25)], [(131909, 1.0), (141087, 1.0), (185958, 1.0), (244746, 1.0), (249612, 1.0)]] ,
    'abca': [[(33068, 2.0), (42847, 2.0), (44394, 1.0), (55432, 1.0), (59145, 4.0), (72395, 1.0), (82879, 0.5), (92606, 1.0), (114093, 0.5), (114815, 1.0), (118133, 0.5), (124687, 1.0), (132926, 1.0), (144850, 1.0), (160961, 0.5), (187872, 2.0), (257205, 1.0), (259379, 2.0)], [(55432, 1.0), (124687, 2.0)], [(1234, 1.0), (8212, 6.0), (20494, 1.0), (143313, -1.5), (163331, 3.0), (163332, 4.0), (180906, 2.0), (229902, 0.25)], [(131909, 1.0), (141087, 1.0), (185958, 1.0), (244746, 1.0), (249612, 1.0)]] ,
}


def rows(X):
    return [sorted(zip(X.indices[X.indptr[i]:X.indptr[i + 1]].tolist(), X.data[X.indptr[i]:X.indptr[i + 1]].tolist()))
            for i in range(X.shape[0])]


@pytest.mark.parametrize("term", sorted(VW_AUDIT))
def test_columns_equal_vw_audit(term):
    X, y, w, tags = load_vw(io.BytesIO(SAMPLE), 18, interactions=[term] if term else [])
    assert X.shape == (4, 1 << 18)
    assert rows(X) == [[tuple(p) for p in r] for r in VW_AUDIT[term]]
    assert y.tolist() == [1, -1, 0, 1] and w.tolist() == [2, 1, 1, 1] and tags == ["first", "", "tagged", ""]


def test_columns_equal_live_vw(tmp_path):
    """The same against the installed VW, on more lines and interactions (values as its
    audit prints them, to 6 digits, from its float32)."""
    pytest.importorskip("vowpalwabbit")
    lines = [b"%d |a %s |b %s |c n%d:%g" % (i % 2, b" ".join(b"w%d" % (i * j % 17) for j in range(i % 5 + 1)),
                                              b" ".join(b"%d:%g" % (j, j / 4) for j in range(i % 3 + 1)), i, i / 3 + 1)
             for i in range(40)]
    path = tmp_path / "d.vw"
    path.write_bytes(b"\n".join(lines) + b"\n")
    for terms in ([], ["ab"], ["bb", "ca"], ["abc"], ["aab"], ["abca", "cc"], ["abcab"]):
        args = [sys.executable, "-m", "vowpalwabbit", "-d", str(path), "--audit", "-b", "16", "--noconstant"]
        for t in terms:
            args += ["--interactions", t]
        out = subprocess.run(args, capture_output=True, text=True, check=True).stdout
        expected = []
        for line in out.splitlines():
            if line.startswith("\t"):
                row = {}
                for feature in line.split("\t")[1:]:
                    _, column, value, _ = feature.rsplit(":", 3)
                    row[int(column)] = row.get(int(column), 0.0) + float(value)
                expected.append(sorted(row.items()))
        X = load_vw(path, 16, interactions=terms)[0]
        assert [[(c, pytest.approx(v, rel=1e-4)) for c, v in r] for r in expected] == rows(X), terms


def test_hash_string_is_vw_hashstring():
    assert hash_string(b"123", 7) == 130 and hash_string(b" 12 ") == 12 and hash_string(b"") == 0
    assert hash_string(b"x", 0) != hash_string(b"x", 1) != hash_string(b"X", 1)


def test_interaction_terms_as_vw():
    assert interaction_terms(["ab", "ba"], ["aba"], ["ac"]) == [b"ab", b"aab", b"ac"]
    for bad in (dict(quadratic=["abc"]), dict(cubic=["ab"]), dict(interactions=["abcdefghi"]),
                dict(interactions=["a:"]), dict(quadratic=["\u00e9a"])):
        with pytest.raises(ValueError, match="--interactions|-q|--cubic"):
            interaction_terms(**bad)


@pytest.mark.parametrize("line, message", [
    (b"x |a f", "label 'x' is not a finite number"),
    (b"nan |a f", "label 'nan'"),
    (b"1 -2 |a f", "importance weight '-2'"),
    (b"1 w |a f", "importance weight 'w'"),
    (b"1:0.5 2:1 |a f", r"'1:0.5' before the first '\|' holds a ':', as VW's cost-sensitive \(--csoaa"),  # (said
    (b"1:2:0.5 |a f", r"'1:2:0.5' before the first '\|' holds a ':'.*contextual-bandit \(--cb"),   # "not a number")
    (b"1 2:0.5 |a f", r"'2:0.5' before the first '\|' holds a ':'.*give one number as the label"),
    (b"1 1 0.5 9 |a f", r"'0.5 9' before the first '\|': only 'label \[importance\]' and a tag are read \(VW's other "
                        r"label types"),
    (b"1 1 -0.5 'r7|a f", r"'-0.5' after 'label importance': VW's initial prediction, an offset of the row's "
                          r"margin, is not read; drop it, or give it as a feature \('\|i initial:-0.5'\)"),
    (b"|a f", r"no label before the first '\|': fastprox trains on every line it reads, where VW would predict "
              r"without learning; give every line a label, e\.g\. '1 \|a x', and predict the lines without one "
              r"with fastprox predict"),
    (b"1 |a f:", "feature 'f:' has no value"),
    (b"1 |a f: g", "feature 'f:' has no value"),
    (b"1 |a f:1x", "value '1x' is not a number"),
    (b"1 |a f:nan", "non-finite value 'nan'"),
    (b"1 |a f:-inf", "non-finite value '-inf'"),
    (b"1 |a:zz f", "bad namespace"),
    (b"1 |:2 f", "bad namespace"),
    (b"1 |a f\0", "NUL byte"),
])
def test_malformed_lines_named_by_line(line, message):
    with pytest.raises(ValueError, match="^<stream>:3: " + message):
        load_vw(io.BytesIO(b"1 |a x\n\n" + line + b"\n1 |a y\n"))


def test_overlong_line_named():
    with pytest.raises(ValueError, match="^<stream>:2: line longer than max_line_bytes=64"):
        load_vw(io.BytesIO(b"1 |a x\n1 |a " + b"y" * 100 + b"\n"), max_line_bytes=64)


def test_byte_order_mark_opening_the_file_is_skipped(tmp_path):
    """A UTF-8 byte order mark opening the file is skipped, as VW skips it; not at the
    start of a span that does not open the file (a parallel reader's), where one pass
    finds it inside the file, in a label."""
    from fastprox.vw.reader import vw_reader
    plain = b"1 'a|a x\n-1 |a y\n"
    X, y, w, tags = load_vw(io.BytesIO(b"\xef\xbb\xbf" + plain), 10)
    X_ref, *rest = load_vw(io.BytesIO(plain), 10)
    assert rows(X) == rows(X_ref) and [y.tolist(), w.tolist(), tags] == [r if isinstance(r, list) else r.tolist() for r in rest]
    path = tmp_path / "later.vw"
    path.write_bytes(plain + b"\xef\xbb\xbf1 |a z\n")
    with pytest.raises(ValueError, match=r"later.vw:3: .*label"):
        load_vw(path, 10)
    with pytest.raises(ValueError, match=r"label"):
        list(vw_reader(path, 10, [], 100, span=(len(plain), None)))


def test_empty_namespaces_examples_and_zero_values():
    X, y, w, tags = load_vw(io.BytesIO(b"1 |\n-1 |a |b\n\n1 |a x:0 |b y:0.0\n-1 | |a:0 x\r\n1 2 tag|\n"), 10)
    assert X.shape == (5, 1024) and X.nnz == 0 and y.tolist() == [1, -1, 1, -1, 1]
    assert w.tolist() == [1, 1, 1, 1, 2] and tags == ["", "", "", "", "tag"]


def test_carriage_returns_inside_a_line_separate_features():
    """A CR inside a line separates features, as a space (it once stopped the reader's
    progress: an endless row)."""
    X = load_vw(io.BytesIO(b"1 |a x\ry\r|\r z\r\n"), 18)[0]
    assert rows(X) == rows(load_vw(io.BytesIO(b"1 |a x y | z\n"), 18)[0])


def test_string_values_and_namespace_values():
    X = load_vw(io.BytesIO(b"1 |a:2 x:3 colour:red"), 20)[0]
    colour = hash_string(b"red", hash_string(b"colour", hash_string(b"a")))
    assert rows(X) == [sorted([(hash_string(b"x", hash_string(b"a")) & 0xFFFFF, 6.0), (colour & 0xFFFFF, 1.0)])]


def test_chunks_equal_whole_read_and_names():
    text = b"".join(b"%d |a w%d w%d |b %d:%d\n" % (i % 2, i % 7, i % 11, i, i + 1) for i in range(500))
    X = load_vw(io.BytesIO(text), 12, quadratic=["ab"])[0]
    names = {}
    chunks = list(iter_vw_chunks(io.BytesIO(text), 12, [b"ab"], chunk_rows=37, names=names, block_bytes=100))
    assert len(chunks) == 14 and all(c.shape[1] == 4096 for c in chunks)
    assert sum((rows(c.csr()) for c in chunks), []) == rows(X)
    assert names[hash_string(b"w3", hash_string(b"a")) & 4095] == "a^w3"


def test_stdin_and_gzip(tmp_path):
    text = b"1 |a x y\n-1 2 |b z\n"
    path = tmp_path / "d.vw.gz"
    path.write_bytes(gzip.compress(text))
    assert rows(load_vw(path)[0]) == rows(load_vw(io.BytesIO(text))[0])
    command, env = cli_command("info", "--format", "vw", "-")
    out = subprocess.run(command, env=env, input=text, capture_output=True, check=True).stdout.decode()
    assert "rows       2" in out and "features   262144" in out


def test_train_reads_vw_as_the_reader(tmp_path, capsys):
    """fastprox train recognizes VW text by its '|', hashes with -q as load_vw, and
    predicts it back; the model equals an estimator's fit on load_vw's rows."""
    from fastprox import ProxClassifier
    text = b"".join(b"%s %s|a w%d w%d |b v%d\n" % (b"1" if i % 3 else b"-1", b"2" if i % 5 == 0 else b"",
                                                    i % 7, i % 11, (i * 7) % 5) for i in range(300))
    path = tmp_path / "train.vw"
    path.write_bytes(text)
    model = tmp_path / "m.npz"
    assert main(["train", str(path), "-q", "ab", "--hash-bits", "12", "--model", str(model), "--quiet"]) == 0
    X, y, w, _ = load_vw(path, 12, quadratic=["ab"])
    est = ProxClassifier().partial_fit(X, y, classes=[-1, 1], sample_weight=w)
    from fastprox import load_model
    saved = load_model(str(model))
    assert np.array_equal(saved.coef_, est.coef_) and np.array_equal(saved.intercept_, est.intercept_)
    capsys.readouterr()
    assert main(["predict", str(model), str(path), "-q", "ab", "--quiet"]) == 0
    predicted = np.array([line.split()[0] for line in capsys.readouterr().out.splitlines()], dtype=float)  # (then a tag)
    assert np.array_equal(predicted, est.predict(X))
    unlabelled = tmp_path / "new.vw"
    unlabelled.write_bytes(b"".join(b"|" + line.split(b"|", 1)[1] + b"\n" for line in text.splitlines()[:50]))
    assert main(["predict", str(model), str(unlabelled), "-q", "ab"]) == 0
    out, err = capsys.readouterr()
    assert np.array_equal(np.array(out.split(), dtype=float), est.predict(X[:50])) and "accuracy" not in err
    assert main(["train", str(unlabelled), "--quiet"]) != 0
    assert "new.vw:1: no label before the first '|'" in capsys.readouterr().err
    assert main(["predict", str(model), str(unlabelled), "-q", "ab", "--hash-bits", "13"]) != 0
    assert "--hash-bits 13 (the model's: 12)" in capsys.readouterr().err    # (the file records -b)


def test_interactions_need_vw_text(tmp_path, capsys):
    path = tmp_path / "d.svm"
    path.write_bytes(b"1 1:1\n-1 2:1\n")
    assert main(["train", str(path), "-q", "ab"]) != 0
    assert "--format vw" in capsys.readouterr().err


def reference_rows(lines, bits, terms):
    """The rows of simple VW lines (``label |ns name[:value] ...``), hashed and crossed
    eagerly from hash_string as the module's docstring says."""
    mask, out = (1 << bits) - 1, []
    for line in lines:
        spaces = {}
        for part in line.split(b"|")[1:]:
            name, *features = part.split(b" ")
            seed = hash_string(name)
            for f in filter(None, features):
                word, _, value = f.partition(b":")
                spaces.setdefault(name[:1], []).append((hash_string(word, seed), float(value or 1)))
        row = {}
        for h, v in (p for fs in spaces.values() for p in fs):
            row[h & mask] = row.get(h & mask, 0.0) + v
        for term in map(str.encode, terms):
            a, b = spaces.get(term[:1], []), spaces.get(term[1:2], [])
            for i, (ha, va) in enumerate(a):
                for hb, vb in (b[i:] if term[0] == term[1] else b):
                    key = (((16777619 * ha) % 2**64) ^ hb) & mask
                    row[key] = row.get(key, 0.0) + va * vb
        out.append(sorted(row.items()))
    return out


@pytest.mark.parametrize("bits", [4, 18, 31, 40])
@pytest.mark.parametrize("width", [3, 20, 40, 70])
def test_long_rows_sorted_and_merged_as_the_reference(bits, width):
    """Rows of up to 70 x 70 crossed pairs (the sort's insertion, two-digit, one-byte
    and byte-by-byte paths) equal the eager reference, few bits (many merged) or many."""
    rng = np.random.default_rng(bits * 100 + width)
    lines = [b"1 |a " + b" ".join(b"w%d:%d" % (rng.integers(1000), rng.integers(1, 4)) for _ in range(width))
             + b" |b " + b" ".join(b"%d" % rng.integers(10**6) for _ in range(width)) for _ in range(5)]
    X = load_vw(io.BytesIO(b"\n".join(lines)), bits, quadratic=["ab", "aa"])[0]
    got = rows(X)
    assert all(r == sorted(r) and len({c for c, _ in r}) == len(r) for r in got)
    assert got == [[(c, pytest.approx(v)) for c, v in r] for r in reference_rows(lines, bits, ["ab", "aa"])]


def test_auto_format_reads_the_head_once_more(tmp_path, monkeypatch):
    """--format auto reads the first file's first 64 kB once more (sniffed_format: VW
    where its first data line holds a '|'); a source read once (a pipe, a file
    object) is not sniffed: LIBSVM unless --format vw."""
    from fastprox.libsvm import sources
    from fastprox.vw.reader import SNIFF_BYTES, sniffed_format
    path = tmp_path / "d.vw"
    path.write_bytes(b"\n1 |a x\n")
    assert sniffed_format(path) == "vw" and sniffed_format(io.BytesIO(b"1 |a x\n")) is None
    svm = tmp_path / "d.svm"
    svm.write_bytes(b"1 1:1 # a|b\n")
    assert sniffed_format(svm) == "libsvm"
    blank = tmp_path / "blank"
    blank.write_bytes(b"\n# only a comment\n")
    assert sniffed_format(blank) is None
    read = []
    real = sources.read_head
    monkeypatch.setattr(sources, "read_head", lambda f, size: read.append(size) or real(f, size))
    assert main(["info", str(path)]) == 0
    assert read.count(SNIFF_BYTES) == 1


def test_names_of_columns_as_vw_invert_hash():
    """names: each column's first feature, crossed ones joined by '*', as VW's audit
    names them (its output for SAMPLE with --interactions ab)."""
    names = {}
    load_vw(io.BytesIO(SAMPLE), 18, quadratic=["ab"], names=names)
    assert {c: names[c] for c in (55432, 42847, 92606, 80151, 37141, 171394)} == {
        55432: "a^x", 42847: "a^y", 92606: "a^12", 80151: "a^x*b^z", 37141: "a^12*b^z", 171394: "a^y*b^z"}
    assert names[hash_string(b"red", hash_string(b"colour", hash_string(b"b"))) & 0x3FFFF] == "b^colour:red"
    assert names[1234] == "^1234" and names[163331] == names[163332] == "b^"    # anonymous
    three = {}
    load_vw(io.BytesIO(b"1 |a x |b y |c z\n"), 18, cubic=["abc"], names=three)
    assert sorted(three.values()) == ["a^x", "a^x*b^y*c^z", "b^y", "c^z"]


@settings(max_examples=500, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["", "1 |", "-1 2 |a ", "0 'tag|b x:"]),
                          st.text(alphabet=" \t|:'-.0123456789abeinfx\r\u00e9", max_size=40)).map("".join),
                max_size=6),
       st.sampled_from([(), ("ab",), ("aa", "ab")]), st.booleans())
def test_any_text_reads_or_names_its_line(lines, cross, cube):
    """Lines of VW's significant characters are read (canonical rows, finite values),
    or refused by a ValueError naming a line; the same whole and a row and 7 bytes at
    a time."""
    text = "\n".join(lines).encode()
    kwargs = dict(interactions=list(cross), cubic=["abx"] if cube else [])
    terms = interaction_terms(**kwargs)

    def chunked():
        return sum((rows(c.csr()) for c in iter_vw_chunks(io.BytesIO(text), 6, terms, 1, block_bytes=7)), [])
    try:
        X, y, w, tags = load_vw(io.BytesIO(text), 6, **kwargs)
    except ValueError as e:
        assert re.match(r"<stream>:\d+: ", str(e)), e
        with pytest.raises(ValueError) as again:
            chunked()
        assert str(again.value) == str(e)
        return
    assert np.isfinite(X.data).all() and np.isfinite(y).all() and (w >= 0).all() and len(tags) == len(y)
    assert all(len(set(r)) == len(r) and [c for c, _ in r] == sorted(c for c, _ in r) for r in rows(X))
    assert chunked() == rows(X)
