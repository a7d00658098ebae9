"""The LIBSVM indexing recorded in model files (``fitted.zero_based_``): `fastprox
train` records whether its files' indices started at 0, `predict`, `train -i` and
`train --test` read their files so unless told otherwise (--zero-based,
--one-based), version 8 files (nothing recorded) load and read as before, and a
bad record is refused naming it."""
import numpy as np
import pytest

from fastprox.cli import main
from fastprox.libsvm import load_libsvm
from fastprox.model_io import load_model
from fastprox.stream.model import StreamModel
from test_cli import run
from test_model_io import rewrite


def lines(rows, start, seed=0):
    """``rows`` LIBSVM lines of 3 features among indices start..start+7; the label
    says whether the lowest index is in the row (so that a shift changes the model)."""
    rng = np.random.default_rng(seed)
    out = []
    for i in range(rows):
        cols = np.sort(rng.choice(8, 3, replace=False)) + start
        y = 1 if (cols[0] == start) != (i % 5 == 0) else -1
        out.append(f"{y} " + " ".join(f"{c}:{rng.uniform(0.1, 2):.3f}" for c in cols))
    return "\n".join(out) + "\n"


@pytest.fixture
def zero_late(tmp_path):
    """A zero-based file whose first 200 rows hold no index 0 (the first rows cannot
    tell it from a one-based file), and the model trained on it with --zero-based."""
    text = lines(400, 0)
    rows = text.splitlines()
    late = [r for r in rows if " 0:" not in r] + [r for r in rows if " 0:" in r]
    assert all(" 0:" not in r for r in late[:200])
    data, model = tmp_path / "late.svm", tmp_path / "m.model"
    data.write_text("\n".join(late) + "\n")
    assert main([str(a) for a in ("train", data, "--zero-based", "--chunk-rows", 100, "-f", model,
                                  "--quiet")]) == 0
    return data, model


@pytest.mark.parametrize("start, options, recorded", [
    (0, [], True), (1, [], False), (1, ["--zero-based"], True), (1, ["--one-based"], False)])
def test_the_model_file_records_the_indexing(tmp_path, start, options, recorded):
    data, model = tmp_path / "d.svm", tmp_path / "m.model"
    data.write_text(lines(300, start))
    assert main([str(a) for a in ("train", data, *options, "-f", model, "--quiet")]) == 0
    assert StreamModel.from_file(model).zero_based is recorded
    assert load_model(model).t_ == 300          # (an estimator loads it as before)


def test_vw_text_records_no_indexing(tmp_path):
    data, model = tmp_path / "d.vw", tmp_path / "m.model"
    data.write_text("".join(f"{1 if i % 3 else -1} |a x{i % 7} y:{1 + i % 4}\n" for i in range(50)))
    assert main([str(a) for a in ("train", data, "-f", model, "--quiet")]) == 0
    assert StreamModel.from_file(model).zero_based is None


def test_predict_reads_as_training_did(zero_late, capsys):
    """Predictions without --zero-based are the model's on the rows as training read
    them (the first rows alone would take the file as one-based, and then fail)."""
    data, model = zero_late
    status, out, err = run(capsys, "predict", model, data, "--proba", "--chunk-rows", 100, "--quiet")
    assert status == 0, err
    X, _ = load_libsvm(data, n_features=8, zero_based=True)
    expected = load_model(model).predict_proba(X)[:, 1]
    written = np.array([line.split()[-1] for line in out.splitlines()[1:]], float)
    assert np.allclose(written, expected, rtol=1e-12, atol=0)
    assert run(capsys, "predict", model, data, "--proba", "--chunk-rows", 100, "--zero-based")[1] == out


def test_an_older_file_reads_each_file_as_before(zero_late, tmp_path, capsys):
    """A version 8 file records nothing: the first rows decide, as before, and this
    file's late index 0 is then an error naming --zero-based."""
    data, model = zero_late
    old = tmp_path / "old.model"
    old.write_bytes(model.read_bytes())
    rewrite(old, edit_header=as_version_8)
    assert StreamModel.from_file(old).zero_based is None
    assert load_model(old).t_ == 400
    status, _, err = run(capsys, "predict", old, data, "--chunk-rows", 100)
    assert status != 0 and "--zero-based" in err and "Traceback" not in err
    assert run(capsys, "predict", old, data, "--chunk-rows", 100, "--zero-based")[0] == 0


def as_version_8(h):
    h["version"] = 8
    del h["fitted"]["zero_based_"]


def test_a_given_indexing_wins_and_a_mismatch_names_the_fix(tmp_path, capsys):
    one, zero, model = tmp_path / "one.svm", tmp_path / "zero.svm", tmp_path / "m.model"
    one.write_text(lines(300, 1))
    zero.write_text(lines(300, 0, seed=1))
    assert main([str(a) for a in ("train", one, "-f", model, "--quiet")]) == 0
    status, _, err = run(capsys, "predict", model, zero)         # read one-based, as training was
    assert status != 0 and "index 0 in a one-based file; give --zero-based" in err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert run(capsys, "predict", model, zero, "--zero-based")[0] == 0
    status, _, err = run(capsys, "predict", model, zero, "--zero-based", "--one-based")
    assert status != 0 and "not allowed with argument" in err and "Traceback" not in err


def test_train_i_continues_as_one_run(zero_late, tmp_path):
    """-i reads the next file as the model's were read: bit for bit one run over both."""
    data, model = zero_late
    more = tmp_path / "more.svm"
    more.write_text("".join(r + "\n" for r in lines(300, 0, seed=2).splitlines() if " 0:" not in r))
    both, continued = tmp_path / "both.model", tmp_path / "continued.model"
    assert main([str(a) for a in ("train", data, more, "--zero-based", "--chunk-rows", 100, "-f", both,
                                  "--quiet")]) == 0
    assert main([str(a) for a in ("train", "-i", model, more, "--chunk-rows", 100, "-f", continued,
                                  "--quiet")]) == 0
    assert np.array_equal(load_model(both).coef_, load_model(continued).coef_)
    assert StreamModel.from_file(continued).zero_based is True


def test_train_test_reads_as_the_training_files(tmp_path, capsys):
    """train --test reads the test file with the indexing the training files were read with."""
    data, test, model = tmp_path / "d.svm", tmp_path / "t.svm", tmp_path / "m.model"
    data.write_text(lines(300, 0))
    test.write_text("".join(r + "\n" for r in lines(300, 0, seed=3).splitlines() if " 0:" not in r))
    status, out, err = run(capsys, "train", data, "--test", test, "-f", model, "--quiet")
    assert status == 0, err
    _, told, _ = run(capsys, "predict", model, test, "--zero-based")
    _, shifted, _ = run(capsys, "predict", model, test, "--one-based")
    assert told != shifted


def test_info_shows_the_indexing(zero_late, capsys):
    data, model = zero_late
    status, out, _ = run(capsys, "info", model)
    assert status == 0 and "input      LIBSVM, indices from 0 (--zero-based)" in out


@pytest.mark.parametrize("edit, message", [
    (lambda h: h["fitted"].update(zero_based_=1), "fitted.zero_based_=1 must be true or false"),
    (lambda h: h.update(version=8), "unknown entries ['zero_based_']"),
])
def test_a_bad_record_is_refused_naming_it(zero_late, edit, message):
    data, model = zero_late
    rewrite(model, edit_header=edit)
    with pytest.raises(ValueError) as info:
        load_model(model)
    assert message in str(info.value)
