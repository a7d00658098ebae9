"""VW's namespace selection, --ignore, --keep and --ignore_linear, in the reader
(fastprox.vw's ``ignore``, ``keep``, ``ignore_linear``) and the commands: the rows
are those of the file with the namespaces deleted by hand, or of an eager reference
for the linear terms; a model file records the selection for predict and train -i;
VW 9.11 keeps the same features; bad arguments are one-line usage errors."""
import io
import re
import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fastprox._vw import hash_string
from fastprox.model_io import load_model
from fastprox.stream.model import StreamModel
from fastprox.vw import interaction_terms, load_vw, namespace_selection
from fastprox.vw.reader import selection_table
from test_cli import run
from test_model_io import rewrite

FNV = 16777619
BITS = 12
NAMESPACES = ["", "a", "ab", "b", "c", "bz"]     # ("": the default namespace, byte ' ')
VALUES = [None, 1.0, 2.0, 0.5, -1.5, 3.0]         # (dyadic: every sum and product exact)

segment = st.tuples(st.sampled_from(NAMESPACES),
                    st.lists(st.tuples(st.sampled_from(["x", "y", "7", "42", ""]), st.sampled_from(VALUES)),
                             max_size=4))
line = st.tuples(st.sampled_from(["1", "-1", "0 2", "1 'tag"]), st.lists(segment, min_size=1, max_size=5))
arguments = st.lists(st.sampled_from([" ", "a", "b", "ab", "c", "\\x20", "z", "b\\x61"]), max_size=2)
selections = st.fixed_dictionaries({"ignore": arguments, "keep": st.one_of(st.just([]), arguments),
                                    "ignore_linear": arguments})
TERMS = [(), ("ab",), ("aa", "ab"), (" a",), ("bc", "bb")]


def text(segments):
    """A segment as VW text: ``|ns f f:v :v``; an anonymous feature always has a value."""
    ns, features = segments
    words = [name + (f":{value!r}" if value is not None else (":1.0" if not name else ""))
             for name, value in features]
    return f"|{ns} " + " ".join(words)


def first_bytes(arguments):
    """The namespace bytes of a selection's arguments, read independently of the reader."""
    return {ord(" ") if c == "\\x20" else ord(c)
            for a in arguments for c in re.findall(r"\\x[0-9a-fA-F]{2}|.", a.replace("\\x61", "a"))}


def dropped_and_linear(selection):
    """VW's parse_args: --keep after --ignore, all but the kept ignored; --ignore_linear."""
    if selection["keep"]:
        dropped = set(range(256)) - first_bytes(selection["keep"])
    else:
        dropped = first_bytes(selection["ignore"])
    return dropped, first_bytes(selection["ignore_linear"])


def ns_byte(ns):
    return ord(ns[0]) if ns else ord(" ")


def reference_row(segments, dropped, linear, terms):
    """One row, eagerly: each feature hashed by hash_string (anonymous ones: the
    namespace's hash plus their rank), the linear terms in order, then each term's
    pairs in VW's order; a column's values summed in that order (as the reader's
    merge), masked to BITS."""
    mask, kept, by_ns = (1 << BITS) - 1, [], {}
    for ns, features in segments:
        b = ns_byte(ns)
        seed, anon = (hash_string(ns.encode()) if ns else 0), 0
        for name, value in features:
            if name:
                h = hash_string(name.encode(), seed)
            else:
                h, anon = seed + anon, anon + 1
            v = 1.0 if value is None else value
            if b in dropped:
                continue
            by_ns.setdefault(b, []).append((h, v))
            if b not in linear:
                kept.append((h & mask, v))
    for term in terms:
        a, c = by_ns.get(term[0], []), by_ns.get(term[1], [])
        for i, (ha, va) in enumerate(a):
            for hc, vc in (c[i:] if term[0] == term[1] else c):
                kept.append(((((FNV * ha) & (2**64 - 1)) ^ hc) & mask, va * vc))
    row = {}
    for column, v in kept:
        row[column] = row[column] + v if column in row else v
    return sorted(row.items())


def rows(X):
    return [list(zip(X.indices[X.indptr[i]:X.indptr[i + 1]].tolist(), X.data[X.indptr[i]:X.indptr[i + 1]].tolist()))
            for i in range(X.shape[0])]


@settings(max_examples=300, deadline=None)
@given(st.lists(line, min_size=1, max_size=6), selections, st.sampled_from(TERMS))
def test_selected_rows_are_the_file_with_the_namespaces_deleted(lines, selection, terms):
    """--ignore and --keep read the rows of the file whose dropped namespaces' segments
    are deleted by hand (each ``|ns ...`` becoming an empty ``|``), bit for bit, with
    the interactions; every selection (with --ignore_linear) the eager reference's."""
    whole = "".join(f"{head} " + " ".join(map(text, segments)) + "\n" for head, segments in lines)
    dropped, linear = dropped_and_linear(selection)
    deleted = "".join(f"{head} " + " ".join("|" if ns_byte(s[0]) in dropped else text(s) for s in segments) + "\n"
                      for head, segments in lines)
    X, y, w, tags = load_vw(io.BytesIO(whole.encode()), BITS, interactions=list(terms), **selection)
    terms_bytes = interaction_terms(interactions=list(terms))
    assert rows(X) == [reference_row(segments, dropped, linear - dropped, terms_bytes) for _, segments in lines]
    if linear - dropped:
        return
    Xd, yd, wd, tagsd = load_vw(io.BytesIO(deleted.encode()), BITS, interactions=list(terms))
    assert (X.indptr.tolist(), X.indices.tolist(), X.data.tobytes()) == (
        Xd.indptr.tolist(), Xd.indices.tolist(), Xd.data.tobytes())
    assert (y.tobytes(), w.tobytes(), tags) == (yd.tobytes(), wd.tobytes(), tagsd)


def test_selection_as_vw_parse_args():
    """--keep replaces --ignore (VW ignores every namespace but the kept); a namespace
    both ignored and linear-ignored is dropped; \\x20 and ' ' are the default
    namespace; one spelling (sorted, distinct), the parser's table from it."""
    assert namespace_selection(ignore="ba", keep=["b"], ignore_linear="ab") == {"keep": "b", "ignore_linear": "b"}
    assert namespace_selection(ignore=["b", "a"], ignore_linear=["a", "c"]) == {"ignore": "ab", "ignore_linear": "c"}
    assert namespace_selection(ignore="\\x20a\\x5c\\xe9") == {"ignore": " \\x5ca\\xe9"}    # (in byte order)
    assert namespace_selection(ignore=" \\x5ca\\xe9") == {"ignore": " \\x5ca\\xe9"}     # (its own spelling)
    assert namespace_selection(ignore="\\x2") == {"ignore": "2\\x5cx"}     # (no hex pair: the characters)
    assert namespace_selection() == {} and selection_table({}) == b""
    table = selection_table({"keep": "ab", "ignore_linear": "a"})
    assert (table[ord("a")], table[ord("b")], table[ord("c")], table[ord(" ")]) == (2, 0, 1, 1)


@pytest.mark.parametrize("kwargs, message", [
    ({"ignore": ""}, "--ignore '': give the namespaces' first characters"),
    ({"keep": [""]}, "--keep '': give"),
    ({"ignore_linear": ["a", 1]}, "--ignore-linear 1: give"),
    ({"ignore": "\u00e9"}, "write a byte outside ASCII as \\xNN"),
])
def test_bad_arguments_are_refused(kwargs, message):
    with pytest.raises(ValueError) as info:
        load_vw(io.BytesIO(b"1 |a x\n"), **kwargs)
    assert message in str(info.value)


def test_names_leave_out_the_linear_terms_ignored():
    """names (--invert-hash's) holds the columns read: a namespace's features crossed
    only name their crossed columns, not their own."""
    names = {}
    X = load_vw(io.BytesIO(b"1 |a x |b z\n"), 18, quadratic=["ab"], ignore_linear="a", names=names)[0]
    assert sorted(names.values()) == ["a^x*b^z", "b^z"] and sorted(names) == sorted(X.indices.tolist())


VW_LINES = "".join(f"{1 if i % 3 else -1} |a x{i % 7} y:{1 + i % 4} |b z{i % 5} w | d{i % 3} |c k{i % 2}\n"
                   for i in range(300))


def filtered(text, dropped):
    """VW text with the segments of namespaces ``dropped`` (first characters) deleted."""
    return "".join(" ".join("|" if p[0] == "|" and (p[1:2] or " ") in dropped else p for p in re.split(r" (?=\|)", line)) + "\n"
                   for line in text.splitlines())


@pytest.fixture
def vw(tmp_path, capsys):
    """The VW file, the same with a and the default namespace deleted by hand, and a
    model trained with --ignore 'a ' -q bc, 2^12 columns."""
    data, deleted, model = tmp_path / "train.vw", tmp_path / "deleted.vw", tmp_path / "m.model"
    data.write_text(VW_LINES)
    deleted.write_text(filtered(VW_LINES, "a "))
    assert run(capsys, "train", data, "--ignore", "a", "--ignore", " ", "-q", "bc", "-b", 12, "-f", model,
               "--quiet")[0] == 0
    return data, deleted, model


def test_train_equals_training_on_the_deleted_file(vw, tmp_path, capsys):
    data, deleted, model = vw
    plain = tmp_path / "plain.model"
    assert run(capsys, "train", deleted, "-q", "bc", "-b", 12, "-f", plain, "--quiet")[0] == 0
    got, want = load_model(model), load_model(plain)
    assert got.coef_.tobytes() == want.coef_.tobytes() and got.intercept_.tobytes() == want.intercept_.tobytes()
    assert StreamModel.from_file(model).input == {"format": "vw", "interactions": ["bc"], "bits": 12,
                                                  "ignore": " a"}
    assert "input      VW text, --hash-bits 12, --interactions bc, --ignore ' a'" in run(capsys, "info", model)[1]
    # predict reapplies the selection: the predictions of the deleted file's model on it
    status, told, _ = run(capsys, "predict", model, data, "--proba")
    assert status == 0 and told == run(capsys, "predict", plain, deleted, "--proba")[1]
    assert run(capsys, "predict", model, data, "--proba", "--ignore", "\\x20a")[1] == told
    # the record is what reads so: the dropped features, in columns that kept ones share
    # (2^2 columns), would move the predictions of a file without it
    small, stripped = tmp_path / "small.model", tmp_path / "stripped.model"
    assert run(capsys, "train", data, "--ignore", "a", "-b", 2, "-f", small, "--quiet")[0] == 0
    stripped.write_bytes(small.read_bytes())
    rewrite(stripped, edit_header=lambda h: h["fitted"]["input_"].pop("ignore"))
    assert run(capsys, "predict", small, data, "--proba")[1] != run(capsys, "predict", stripped, data, "--proba")[1]
    status, _, err = run(capsys, "predict", stripped, data, "--ignore", "a")   # (no record: none selected)
    assert status == 2 and "--ignore a (the model's: all namespaces read)" in err


def test_train_i_continues_with_the_selection(vw, tmp_path, capsys):
    data, deleted, model = vw
    both, continued = tmp_path / "both.model", tmp_path / "continued.model"
    assert run(capsys, "train", data, data, "--ignore", " a", "-q", "bc", "-b", 12, "-f", both, "--quiet")[0] == 0
    assert run(capsys, "train", "-i", model, data, "-f", continued, "--quiet")[0] == 0
    assert continued.read_bytes() == both.read_bytes()


@pytest.mark.parametrize("options, message", [
    (["--ignore", "a"], "--ignore a (the model's: --ignore ' a')"),
    (["--keep", "bc"], "--keep bc (the model's: --ignore ' a')"),
    (["--ignore_linear", "b"], "--ignore-linear b (the model's: --ignore ' a')"),
])
@pytest.mark.parametrize("command", ["predict", "train -i"])
def test_a_differing_selection_is_refused_naming_both(vw, capsys, options, message, command):
    data, deleted, model = vw
    argv = ["predict", model, data] if command == "predict" else ["train", "-i", model, data, "--quiet"]
    status, out, err = run(capsys, *argv, *options)
    assert status == 2 and message in err and "drop these options" in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1


@pytest.mark.parametrize("argv, message", [
    (["--ignore", ""], "argument --ignore: give the namespaces' first characters, as --ignore ab"),
    (["--keep", "\u00e9"], "argument --keep: a namespace is known by its first byte"),
    (["--ignore_linear", ""], "argument --ignore-linear: give"),
])
def test_a_bad_argument_is_a_usage_error(vw, capsys, argv, message):
    data, deleted, model = vw
    status, out, err = run(capsys, "train", data, *argv)
    assert status == 2 and message in err and len(err.strip().splitlines()) == 1


def test_libsvm_data_are_refused(tmp_path, capsys):
    svm = tmp_path / "d.svm"
    svm.write_text("1 1:1\n-1 2:1\n")
    for option in ("--ignore", "--keep", "--ignore_linear"):
        status, out, err = run(capsys, "train", svm, option, "a", "--quiet")
        assert status == 1 and len(err.strip().splitlines()) == 1 and "Traceback" not in err
        assert "select the namespaces of VW's text format; LIBSVM data have none" in err


BAD_SELECTION = {
    "order": ({"ignore": "ba"}, "ignore='ba' are not namespaces as fastprox records them"),
    "both": ({"ignore": "a", "keep": "b"}, "are not namespaces as fastprox records them"),
    "empty": ({"ignore_linear": ""}, "are not namespaces"),
    "type": ({"keep": 1}, "fitted.input_.keep=1 must be a string"),
}


@pytest.mark.parametrize("change, message", BAD_SELECTION.values(), ids=BAD_SELECTION.keys())
def test_a_bad_recorded_selection_is_refused(vw, change, message):
    data, deleted, model = vw
    rewrite(model, edit_header=lambda h: h["fitted"]["input_"].update(change))
    with pytest.raises(ValueError, match="fitted.input_") as info:
        load_model(model)
    assert message in str(info.value)


def vw_names(tmp_path, data, options):
    """The features of VW 9.11's --invert_hash after training on ``data`` (all labels
    1: every weight read is not 0), its default namespace's written ``^name``."""
    out = tmp_path / "vw.inv"
    subprocess.run([sys.executable, "-m", "vowpalwabbit", "-d", str(data), "--quiet", "--noconstant", "-b", "18",
                    "--invert_hash", str(out), *options], check=True)
    return sorted({("" if "^" in f.split("*")[0] else "^") + f for f in features(out)})


def features(inverted):
    """The feature names of an --invert_hash file: its lines ``name:hash:weight[ ...]``."""
    return [m.group(1) for m in re.finditer(r"^(.+):\d+:[-+0-9.eE]+(?: .*)?$", inverted.read_text(), re.M)]


@pytest.mark.parametrize("options", [["--ignore", "a"], ["--keep", "b "], ["--keep", "b", "--ignore", "b"],
                                     ["--ignore", "\\x20"], ["-q", "ab", "--ignore_linear", "a"],
                                     ["-q", "ab", "-q", "bb", "--ignore_linear", "ab", "--ignore", "c"]])
def test_the_features_kept_are_vw_s(tmp_path, capsys, options):
    pytest.importorskip("vowpalwabbit")
    data = tmp_path / "d.vw"
    data.write_text("1 |a x y:2 |b z q |abc w\n1 | d e |b q2\n1 |c r |a x\n")
    assert run(capsys, "train", data, *options, "-f", tmp_path / "m", "--invert-hash", tmp_path / "fp.inv",
               "--quiet")[0] == 0
    assert sorted(set(features(tmp_path / "fp.inv"))) == vw_names(tmp_path, data, options)


def test_spans_read_in_parallel_keep_the_selection(tmp_path, monkeypatch):
    """A file of more than two spans is parsed a span at a time (stream.files.vw_chunks),
    each span's reader with the selection: the rows of one reader."""
    from fastprox.stream import files
    monkeypatch.setattr(files, "SPAN_BYTES", 4096)
    path = tmp_path / "d.vw"
    path.write_text(VW_LINES)
    selection = {"ignore": " ", "ignore_linear": "b"}
    chunks = list(files.chunks_of(str(path), format="vw", vw_bits=BITS, terms=[b"bc"], chunk_rows=64,
                                  selection=selection))
    assert len(chunks) > 2
    X = load_vw(path, BITS, quadratic=["bc"], **selection)[0]
    assert sum((rows(c.csr()) for c in chunks), []) == rows(X)
