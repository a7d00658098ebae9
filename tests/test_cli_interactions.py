"""The interactions of the command line recorded in model files (``fitted.input_``):
predict and train -i read the data as training did without being told again, a
differing option is refused naming both values, version 7 files load as before,
fastprox info shows the record; and -q over LIBSVM --groups."""

import numpy as np
import pytest

from fastprox.cli import main
from fastprox.model_io import load_model
from fastprox.stream.model import StreamModel
from test_cli import run
from test_model_io import rewrite

VW_LINES = "".join(f"{1 if i % 3 else -1} |a x{i % 7} y:{1 + i % 4} |b z{i % 5} w |c k{i % 2}\n"
                   for i in range(300))


@pytest.fixture
def vw(tmp_path):
    """A VW text file and a model trained on it with -q ab --cubic abc, 2^12 columns."""
    data, model = tmp_path / "train.vw", tmp_path / "m.model"
    data.write_text(VW_LINES)
    assert main([str(a) for a in ("train", data, "-q", "ab", "--cubic", "abc", "--hash-bits", 12, "-f", model,
                                  "--quiet")]) == 0
    return data, model


def test_the_model_file_records_the_interactions(vw):
    data, model = vw
    assert StreamModel.from_file(model).input == {"format": "vw", "interactions": ["ab", "abc"], "bits": 12}
    assert load_model(model).t_ == 300         # (an estimator loads it as before)


def test_predict_reads_as_training_did(vw, tmp_path, capsys):
    data, model = vw
    status, told, _ = run(capsys, "predict", model, data, "--proba", "-q", "ab", "--cubic", "abc",
                          "--hash-bits", 12)
    assert status == 0
    status, recorded, _ = run(capsys, "predict", model, data, "--proba")
    assert status == 0 and recorded == told
    # without the interactions the predictions differ: the record is what made them equal
    stripped = tmp_path / "old.model"
    stripped.write_bytes(model.read_bytes())
    rewrite(stripped, edit_header=as_version_7)
    assert run(capsys, "predict", stripped, data, "--proba")[1] != told
    assert run(capsys, "predict", stripped, data, "--proba", "-q", "ab", "--cubic", "abc")[1] == told


def as_version_7(h):
    h["version"] = 7
    del h["fitted"]["input_"]


@pytest.mark.parametrize("options, message", [
    (["-q", "ac"], "-q ac (the model's: --interactions ab --interactions abc)"),
    (["-q", "ba", "--cubic", "abc"], "-q ba --cubic abc (the model's:"),    # (VW's ba hashes otherwise)
    (["--hash-bits", "13"], "--hash-bits 13 (the model's: 12)"),
    (["--format", "libsvm"], "--format libsvm (the model's: vw)"),
])
@pytest.mark.parametrize("command", ["predict", "train -i"])
def test_a_differing_option_is_refused_naming_both(vw, tmp_path, capsys, options, message, command):
    data, model = vw
    argv = ["predict", model, data] if command == "predict" else ["train", "-i", model, data, "--quiet"]
    status, out, err = run(capsys, *argv, *options)
    assert status != 0 and message in err and "drop these options" in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1


@pytest.mark.parametrize("command", ["predict", "train -i"])
def test_data_of_the_other_format_is_refused_naming_both(vw, tmp_path, capsys, command):
    """Under --format auto, data whose first line reads as the other format than the
    model's record are refused, naming the file, both formats and the option that
    reads them as the model's: a LIBSVM file given to a VW model was read as VW text,
    a label and a tag a line without a feature, and scored (found by hand: accuracy
    1.0 for a line '1 3:nan'). --format given as the model's reads it as told."""
    data, model = vw
    svm = tmp_path / "d.svm"
    svm.write_text("1 3:0.5\n-1 1:2\n")
    argv = ["predict", model, svm] if command == "predict" else ["train", "-i", model, svm, "--quiet"]
    status, out, err = run(capsys, *argv)
    assert status != 0 and out == "" and "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert f"{svm} reads as LIBSVM text (its first data line has no '|'), but " in err
    assert (f"{model} was trained on Vowpal Wabbit's text: give data in the model's format, or --format vw to "
            f"read this file as Vowpal Wabbit's text") in err
    assert run(capsys, *argv, "--format", "vw")[0] == 0
    libsvm_model = tmp_path / "l.model"        # (LIBSVM: the file records the indexing alone)
    assert run(capsys, "train", svm, "-f", libsvm_model, "--quiet")[0] == 0
    argv = ["predict", libsvm_model, data] if command == "predict" else ["train", "-i", libsvm_model, data,
                                                                         "--quiet"]
    status, out, err = run(capsys, *argv)
    assert status != 0 and f"{data} reads as Vowpal Wabbit's text (its first data line holds '|'), " in err
    assert "--format libsvm to read this file as LIBSVM text" in err
    status, out, err = run(capsys, *argv, "--format", "vw")
    assert status != 0 and "records how its data were read: --format vw (the model's: libsvm)" in err


def test_the_same_options_are_accepted(vw, capsys):
    data, model = vw
    assert run(capsys, "predict", model, data, "--cubic", "abc", "-q", "ab")[0] == 0
    assert run(capsys, "predict", model, data, "--interactions", "bca", "-q", "ab")[0] != 0
    assert run(capsys, "predict", model, data, "--interactions", "abc", "-q", "ab", "--hash-bits", 12)[0] == 0


def test_train_i_continues_with_the_recorded_reading(vw, tmp_path, capsys):
    """train -i on VW text takes the model's -b and interactions: the continued model is
    the one a single run over both files makes, byte for byte."""
    data, model = vw
    both, continued = tmp_path / "both.model", tmp_path / "continued.model"
    assert run(capsys, "train", data, data, "-q", "ab", "--cubic", "abc", "--hash-bits", 12, "-f", both,
               "--quiet")[0] == 0
    assert run(capsys, "train", "-i", model, data, "-f", continued, "--quiet")[0] == 0
    assert continued.read_bytes() == both.read_bytes()


def test_info_shows_the_record(vw, tmp_path, capsys):
    data, model = vw
    status, out, _ = run(capsys, "info", model)
    assert status == 0
    assert "input      VW text, --hash-bits 12, --interactions ab --interactions abc" in out
    old = tmp_path / "old.model"
    old.write_bytes(model.read_bytes())
    rewrite(old, edit_header=as_version_7)
    assert "input      as given (nothing recorded)" in run(capsys, "info", old)[1]


BAD_INPUT = {
    "format": ({"format": "csv"}, "format='csv' must be one of ['vw', 'libsvm']"),
    "bits": ({"bits": 0}, "bits=0"),
    "width": ({"bits": 13}, "VW text of bits=13 but the model has 4096 features"),
    "term": ({"interactions": ["a"]}, "are not terms of vw data"),
    "duplicate": ({"interactions": ["ab", "ba"]}, "are not terms of vw data"),
    "type": ({"interactions": [1]}, "are not terms of vw data"),
    "unknown": ({"seed": 1}, "has unknown entries ['seed']"),
}


@pytest.mark.parametrize("change, message", BAD_INPUT.values(), ids=BAD_INPUT.keys())
def test_a_bad_record_is_refused_naming_it(vw, change, message):
    data, model = vw
    rewrite(model, edit_header=lambda h: h["fitted"]["input_"].update(change))
    with pytest.raises(ValueError, match="fitted.input_") as info:
        load_model(model)
    assert message in str(info.value)


def test_a_version_7_file_with_a_record_is_refused(vw):
    data, model = vw
    rewrite(model, edit_header=lambda h: h.update(version=7))
    with pytest.raises(ValueError, match="unknown entries"):
        load_model(model)


# -q over LIBSVM --groups

FNV = 16777619
M64 = (1 << 64) - 1


def brute_crossed(X, groups, terms, bits):
    """The rows with their interactions, built row by row from the docstring of
    fastprox.stream.groups: a list of {column: value} in the order entries are summed."""
    n, out = len(groups), []
    for i in range(X.shape[0]):
        row = X.getrow(i)
        feats = list(zip(row.indices.tolist(), row.data.tolist()))
        cells = {}

        def add(column, value):
            cells[column] = cells[column] + value if column in cells else value

        for c, v in feats:
            add(c, v)
        for k, term in enumerate(terms):
            per_group = [[(j, c, v) for j, (c, v) in enumerate(feats) if groups[c] == g] for g in term]

            def walk(position, start, h, value):
                for place, (j, c, v) in enumerate(per_group[position]):
                    if place < start:
                        continue
                    last = position == len(term) - 1
                    hashed = ((FNV * c) & M64 if position == 0 else
                              (h ^ c) if last else (FNV * (h ^ c)) & M64)
                    product = v if position == 0 else value * v
                    if last:
                        add(n + (k << bits) + (hashed & ((1 << bits) - 1)), product)
                    else:
                        same = term[position + 1] == term[position]
                        walk(position + 1, place if same else 0, hashed, product)

            walk(0, 0, 0, 1.0)
        out.append(cells)
    return out


def as_csr(rows, width):
    import scipy.sparse as sp
    indptr, indices, data = [0], [], []
    for cells in rows:
        for c in sorted(cells):
            indices.append(c)
            data.append(cells[c])
        indptr.append(len(indices))
    return sp.csr_matrix((np.array(data), np.array(indices, dtype=np.int64), np.array(indptr)), shape=(len(rows), width))


@pytest.mark.parametrize("seed", range(6))
def test_groups_crossed_as_the_brute_force(seed):
    """GroupCrossing's rows equal those built tuple by tuple (VW's order, a group named
    twice or three times, empty rows, collisions in few bits), values bit for bit."""
    import scipy.sparse as sp
    from fastprox.libsvm import Chunk
    from fastprox.stream.groups import GroupCrossing
    from fastprox._interactions import terms_of
    rng = np.random.default_rng(seed)
    n = int(rng.integers(3, 15))
    groups = rng.integers(-1, 4, size=n)
    groups[:3] = [0, 1, 2]
    X = sp.random(40, n, density=float(rng.uniform(0.05, 0.7)), random_state=seed, format="csr")
    X.data = np.round(X.data * 8 - 4, 1) + 0.25
    terms = terms_of("libsvm", ["0,1", "2,2"], ["0,2,1", "1,1,1"], ["2,0,2,1"])
    bits = int(rng.integers(1, 8))
    crossing = GroupCrossing(groups, terms, bits)
    chunk = Chunk(X.data, X.indices.astype(np.int32), X.indptr.astype(np.int32), np.zeros(40), np.zeros(40), n)
    got = crossing.crossed(chunk)
    want = as_csr(brute_crossed(X, groups, terms, bits), crossing.width)
    assert got.shape == want.shape
    assert np.array_equal(np.asarray(got.indptr), want.indptr)
    assert np.array_equal(np.asarray(got.indices), want.indices)
    assert np.asarray(got.data).tobytes() == want.data.tobytes()
    model_groups = crossing.model_groups()
    assert list(model_groups[:n]) == list(groups) and len(model_groups) == crossing.width
    first = int(groups.max()) + 1
    assert list(model_groups[n:]) == list(range(first, first + (len(terms) << bits)))


@pytest.fixture
def grouped(tmp_path):
    """A LIBSVM file of 12 features, their groups and group weights."""
    import scipy.sparse as sp
    from fastprox import dump_libsvm
    rng = np.random.default_rng(3)
    X = sp.random(500, 12, density=0.4, random_state=4, format="csr")
    y = np.where(X[:, 0].toarray().ravel() + X[:, 4].toarray().ravel() * X[:, 8].toarray().ravel()
                 + 0.1 * rng.standard_normal(500) > 0.3, 1.0, -1.0)
    groups = np.array([0, 0, 0, 1, 1, 1, 1, 2, 2, -1, 2, 2])
    data, gfile = tmp_path / "g.svm", tmp_path / "groups.txt"
    dump_libsvm(X, y, data)
    gfile.write_text(" ".join(map(str, groups)))
    return data, gfile, X.tocsr(), y, groups


GROUP_OPTIONS = ["--penalty", "l1_l2", "--schedule", "invsqrt", "--alpha", "1e-3"]


def test_train_crosses_groups_as_the_brute_force(grouped, tmp_path, capsys):
    """train -q over --groups equals a ProxClassifier fit on the brute-force crossed rows
    with the crossed columns' groups and weights; predict, -i and info read the record."""
    from fastprox import ProxClassifier
    data, gfile, X, y, groups = grouped
    model, weights = tmp_path / "m.model", tmp_path / "weights.txt"
    weights.write_text("0.5 2 1.5")
    argv = ["train", data, "--groups", gfile, "--group-weights", weights, "-q", "1,2", "--interactions", "2,2",
            "--hash-bits", 5, "--quiet", *GROUP_OPTIONS]
    assert run(capsys, *argv, "-f", model)[0] == 0
    terms = [(1, 2), (2, 2)]
    rows = as_csr(brute_crossed(X, groups, terms, 5), 12 + 2 * 32)
    est = ProxClassifier(groups=np.concatenate([groups, 3 + np.arange(64)]),
                         group_weights=np.r_[0.5, 2, 1.5, np.ones(64)], penalty="l1_l2", schedule="invsqrt",
                         alpha=1e-3)
    est.partial_fit(rows, y, classes=[-1, 1])
    saved = load_model(model)
    assert np.array_equal(saved.coef_, est.coef_) and np.array_equal(saved.intercept_, est.intercept_)
    assert StreamModel.from_file(model).input == {"format": "libsvm", "interactions": ["1,2", "2,2"], "bits": 5}
    status, out, _ = run(capsys, "predict", model, data, "--proba")
    assert status == 0
    assert np.allclose(np.loadtxt(out.splitlines()[1:])[:, 2], est.predict_proba(rows)[:, 1], rtol=0, atol=1e-12)
    assert "--interactions 1,2 --interactions 2,2" in run(capsys, "info", model)[1]
    both, continued = tmp_path / "both.model", tmp_path / "continued.model"
    assert run(capsys, *argv[:2], data, *argv[2:], "-f", both)[0] == 0
    assert run(capsys, "train", "-i", model, data, "-f", continued, "--quiet")[0] == 0
    assert continued.read_bytes() == both.read_bytes()


@pytest.mark.parametrize("options, message", [
    (["-q", "0,1"], "cross the groups of --groups FILE (-q 0,1): give --groups"),
    (["--groups", "G", "-q", "ab"], "-q 'ab': with LIBSVM data and --groups, give 2 group ids"),
    (["--groups", "G", "-q", "0,7"], "the interaction 0,7 names group(s) 7, which no feature of --groups has"),
    (["--groups", "G", "-q", "0,1", "--group-weights", "G"], "12 group weights, but the groups have 3 groups"),
    (["--groups", "G", "--hash-bits", "4"], "--hash-bits sets the width"),
    (["--groups", "G", "-q", "0,1", "--scheduler", "tcp://127.0.0.1:1"], "cross groups on this machine: drop --scheduler"),
    (["--groups", "G", "-q", "0,1", "--hash-bits", "4", "--zero-based"],     # (a one-based file: index 12)
     "index '12' is beyond the 12 features of --groups"),
])
def test_bad_group_crossings_are_refused(grouped, capsys, options, message):
    data, gfile, *_ = grouped
    options = [gfile if o == "G" else o for o in options]
    status, _, err = run(capsys, "train", data, *options, *GROUP_OPTIONS, "--quiet")
    assert status != 0 and message in err and "Traceback" not in err
