"""`fastprox train` reads its input once: the model grows with the features it
meets and the classes are recognized as the labels come (or hashed with
--hash-bits), and equals the estimator's, bit for bit. Its progressive
validation table, --quiet, and predict's metrics and warnings."""
import math
import re
import subprocess

import numpy as np
import pytest

from tests.support.cli_process import cli_command
from fastprox import ProxClassifier, dump_libsvm, hash_features, load_libsvm, libsvm
from fastprox.cli import main, train
from fastprox.stream import trainer
from fastprox.stream.losses import best_binary_constant, binary_loss
from fastprox.stream.synthetic import text_like
from fastprox.model_io import load_model
from test_cli import run


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    """A binary file (labels -1/1, 2,000 rows x 400 features), its test file."""
    d = tmp_path_factory.mktemp("one_pass")
    X, y, X_test, y_test = text_like(2500, 400, seed=3)
    dump_libsvm(X, y, d / "train.svm")
    dump_libsvm(X_test, y_test, d / "test.svm")
    return d, X, y


def same_model(path, est):
    """The model file holds the estimator's model, bit for bit."""
    saved = load_model(path)
    np.testing.assert_array_equal(saved.coef_, est.coef_)
    np.testing.assert_array_equal(saved.intercept_, est.intercept_)
    if hasattr(est, "classes_"):
        np.testing.assert_array_equal(saved.classes_, est.classes_)
        assert saved.classes_.tolist() == sorted(saved.classes_.tolist())
    return saved


def test_a_file_is_opened_once_and_equals_the_estimator(data, tmp_path, capsys, monkeypatch):
    """Neither width nor classes given: the file is opened (read) once, and the model
    is ProxClassifier().fit with the rows in order, whatever --chunk-rows; the CLI's
    defaults are the estimator's (its saved parameters compare equal), but for
    grow_features: the model grew with the data, and its file says so, so that
    load_model(path).partial_fit grows it as train -i does. (The format given:
    --format auto reads the first file's first 64 kB once more to recognise it,
    tests/test_vw_format.py.)"""
    d, X, y = data
    opened = []
    real_open = libsvm.sources.open_source
    monkeypatch.setattr(libsvm.sources, "open_source", lambda source: opened.append(source) or real_open(source))
    for chunk_rows in (10_000, 333):
        model = tmp_path / f"m{chunk_rows}.npz"
        opened.clear()
        assert main(["train", str(d / "train.svm"), "--model", str(model), "--quiet",
                     "--chunk-rows", str(chunk_rows), "--format", "libsvm"]) == 0
        assert opened == [str(d / "train.svm")]
        est = ProxClassifier(shuffle=False).fit(X, y)
        saved = same_model(model, est)
        assert saved.get_params() == ProxClassifier(grow_features=True).get_params()
    assert capsys.readouterr() == ("", "")


def test_widths_grow_as_met(tmp_path, capsys):
    """Rows whose largest index grows chunk after chunk (the first ones narrow) train
    the model built with the final width."""
    rng = np.random.default_rng(1)
    rows = [f"{rng.choice([-1, 1])} " + " ".join(f"{j}:{rng.normal():.4f}" for j in
                                                 sorted(rng.choice(np.arange(1, 5 + 40 * i), 3, replace=False)))
            for i in range(300)]
    path = tmp_path / "growing.svm"
    path.write_text("\n".join(rows) + "\n")
    model = tmp_path / "m.npz"
    assert main(["train", str(path), "--model", str(model), "--chunk-rows", "7", "--quiet"]) == 0
    X, y = load_libsvm(path)
    same_model(model, ProxClassifier(shuffle=False).fit(X, y))
    assert load_model(model).n_features_in_ == X.shape[1] > 10_000


@pytest.mark.parametrize("negative, positive", [(-1, 1), (0, 1), (1, 2), (3, 7), (7, 3)])
def test_labels_are_recognized_as_they_come(data, tmp_path, negative, positive):
    """Any two labels: the larger is the positive class (scikit-learn's rule), the
    model is the estimator's on the same labels, classes saved sorted."""
    d, X, y = data
    labels_ = np.where(y > 0, positive, negative).astype(float)
    path, model = tmp_path / "two.svm", tmp_path / "m.npz"
    dump_libsvm(X, labels_, path)
    assert main(["train", str(path), "--model", str(model), "--quiet", "--chunk-rows", "100"]) == 0
    same_model(model, ProxClassifier(shuffle=False).fit(X, labels_))


def long_first_run(tmp_path, X, y, first, second):
    """A file whose first 1,000 rows have the label ``first``, the others ``second``
    where y is positive: a label buffer of a few chunks fills with one label."""
    labels_ = np.where(np.arange(len(y)) < 1000, first, np.where(y > 0, second, first)).astype(float)
    path = tmp_path / f"run{first}_{second}.svm"
    dump_libsvm(X, labels_, path)
    return path, labels_


def test_t0_is_the_estimators(data, tmp_path):
    """--t0 trains the estimator's t0 (saved with the model, and checked by train -i)."""
    d, X, y = data
    model = tmp_path / "t0.npz"
    options = ["--schedule", "inv", "--t0", "12.5", "--step", "gradient", "--penalty", "l2", "--alpha", "1e-4"]
    assert main(["train", str(d / "train.svm"), "--model", str(model), "--quiet", *options]) == 0
    saved = same_model(model, ProxClassifier(shuffle=False, schedule="inv", t0=12.5, step="gradient",
                                             penalty="l2", alpha=1e-4).fit(X, y))
    assert saved.t0 == saved.t0_ == 12.5
    assert main(["train", "-i", str(model), str(d / "train.svm"), "--quiet", "--t0", "3"]) == 2


@pytest.mark.parametrize("first, second", [(0, 1), (-1, 1), (1, 0), (1, -1)])
def test_a_buffer_of_one_label_falls_back_to_the_conventions(data, tmp_path, monkeypatch, first, second):
    """The buffer fills with one label only: -1 and 0 are taken as negative, +1 as
    positive; the other label, met later on its side, completes the classes."""
    d, X, y = data
    monkeypatch.setattr(trainer, "LABEL_BUFFER_BYTES", 20_000)     # a few chunks of 100 rows
    path, labels_ = long_first_run(tmp_path, X, y, first, second)
    model = tmp_path / "m.npz"
    assert main(["train", str(path), "--model", str(model), "--quiet", "--chunk-rows", "100",
                 "--eta0", "0.5", "--delta", "1"]) == 0     # numbers: no rows held for "auto" steps
    same_model(model, ProxClassifier(shuffle=False, eta0=0.5, delta=1.0).fit(X, labels_))


@pytest.mark.parametrize("first, second, message", [
    (3, 7, "rows all have label 3, and a class needs two labels to tell which is positive: give "
           "--classes with both (e.g. --classes 3,OTHER)"),
    (1, 2, "run1_2.svm:1001: label 2, but the first rows' label 1 was taken as the positive class "
           "(by convention -1 and 0 are negative, +1 positive) and the larger label is the positive "
           "one: give --classes 1,2"),
])
def test_a_buffer_of_one_label_without_convention_names_classes(data, tmp_path, monkeypatch, capsys,
                                                                first, second, message):
    d, X, y = data
    monkeypatch.setattr(trainer, "LABEL_BUFFER_BYTES", 20_000)
    path, _ = long_first_run(tmp_path, X, y, first, second)
    status, out, err = run(capsys, "train", path, "--quiet", "--chunk-rows", "100", "--eta0", "0.5",
                           "--delta", "1")
    assert status == 1 and err.count("\n") == 1 and message in err


def test_one_label_only(tmp_path, capsys):
    """A file of one conventional label trains (its classes by the conventions)."""
    path, model = tmp_path / "ones.svm", tmp_path / "m.npz"
    path.write_text("1 1:1\n1 2:1\n")
    assert run(capsys, "train", path, "--model", model, "--quiet")[0] == 0
    assert load_model(model).classes_.tolist() == [-1.0, 1.0]
    path.write_text("0 1:1\n")
    assert run(capsys, "train", path, "--model", model, "--quiet")[0] == 0
    assert load_model(model).classes_.tolist() == [0.0, 1.0]


def test_a_third_label_names_its_line_and_classes(tmp_path, capsys):
    """Comments and blank lines count as lines, not rows; the label buffer (before
    the model starts) and the stream after it alike."""
    text = "# comment\n-1 1:1\n\n1 2:1\n" + "-1 1:1\n" * 20 + "2 1:1\n"
    path = tmp_path / "three.svm"
    path.write_text(text)
    for chunk_rows in ("1", "100"):
        status, _, err = run(capsys, "train", path, "--chunk-rows", chunk_rows, "--eta0", "1",
                             "--delta", "1", "--quiet")
        assert status == 1
        assert err == (f"fastprox: error: {path}:25: a third label, 2, after -1 and 1: this looks "
                       f"like a multiclass stream: give --classes -1,1,2 (every label of the stream)\n")
    status, _, err = run(capsys, "train", path, "--classes", "-1,1,2", "--quiet")
    assert status == 0


def test_hash_bits_equal_hashing_then_training(data, tmp_path, capsys):
    """--hash-bits B: the model of the hashed rows (fastprox.hash_features), 2^B wide;
    predict --hash-bits B predicts what the estimator does on the hashed test rows."""
    d, X, y = data
    model = tmp_path / "h.npz"
    assert run(capsys, "train", d / "train.svm", "--hash-bits", 6, "--model", model, "--quiet")[0] == 0
    X_all, y_all = load_libsvm(d / "train.svm")
    est = ProxClassifier(shuffle=False).fit(hash_features(X_all, 6), y_all)
    same_model(model, est)
    X_test, _ = load_libsvm(d / "test.svm")
    status, out, _ = run(capsys, "predict", model, d / "test.svm", "--hash-bits", 6, "--quiet")
    np.testing.assert_array_equal(np.array(out.split(), dtype=float), est.predict(hash_features(X_test, 6)))
    status, _, err = run(capsys, "predict", model, d / "test.svm", "--hash-bits", 7)
    assert status == 2 and "was trained with --hash-bits 6 (which predict applies)" in err


def test_huge_ids_hash(tmp_path, capsys):
    """64-bit ids (beyond any model) train with --hash-bits; an index beyond 2^63 - 2 is
    read by no option, hashed or not: the error says to renumber the features or write
    them as VW names (it used to advise --hash-bits, which refused it the same way)."""
    path = tmp_path / "ids.svm"
    path.write_text("1 9223372036854775000:1\n-1 12:1 4611686018427387904:2\n")
    assert run(capsys, "train", path, "--hash-bits", 10, "--quiet")[0] == 0
    for index in ("9223372036854775807", "99999999999999999999"):
        path.write_text(f"1 {index}:1\n")
        for hashing in ((), ("--hash-bits", 10)):
            status, _, err = run(capsys, "train", path, *hashing, "--quiet")
            assert status == 1 and f"index '{index}' is too large" in err
            assert "give --hash-bits" not in err and "renumber the features" in err and "--format vw" in err
    vw = tmp_path / "ids.vw"
    vw.write_text("1 | 99999999999999999999:1\n-1 | 12:1\n")
    assert run(capsys, "train", vw, "--format", "vw", "--quiet")[0] == 0


def per_row_losses(X, y, **params):
    """Each row's progressive loss, the estimator trained a row at a time."""
    est, losses = ProxClassifier(**params), []
    for i in range(X.shape[0]):
        est.partial_fit(X[i:i + 1], y[i:i + 1], classes=[-1.0, 1.0])
        losses.append(est.progressive_loss_)
    return np.array(losses)


def test_progress_table_in_a_file(data, tmp_path):
    """``train FILE 2> log``: the table is printed into a file (no terminal), lines
    at examples 1, 2, 4, ..., 1024 whatever the chunks, their losses the estimator's
    progressive losses; the summary ends it, with the best constant (log(n+/n-))
    and its loss (the labels' entropy)."""
    d, X, y = data
    command, env = cli_command("train", d / "train.svm", "--eta0", 0.5, "--delta", 1, "--chunk-rows", 300)
    with open(tmp_path / "log", "w") as log:
        assert subprocess.run(command, env=env, stderr=log, stdout=subprocess.DEVNULL).returncode == 0
    lines = (tmp_path / "log").read_text().splitlines()
    assert lines[0] == "(current predict: P(label = the larger class), from the example's loss)"
    assert lines[1].split() == ["average", "since", "example", "current", "current", "current"]
    table = [line.split() for line in lines[3:14]]
    losses = per_row_losses(X, y, eta0=0.5, delta=1.0)
    counts = [int(row[2]) for row in table]
    assert counts == [2 ** k for k in range(11)]
    for k, (average, since, count, label, predict, features) in enumerate(table):
        n = int(count)
        assert float(average) == pytest.approx(losses[:n].mean(), abs=2e-6)
        assert float(since) == pytest.approx(losses[n // 2 if n > 1 else 0:n].mean(), abs=2e-6)
        assert float(label) == y[n - 1] and int(features) == X[n - 1].nnz
        p_true = math.exp(-losses[n - 1])
        assert float(predict) == pytest.approx(p_true if y[n - 1] > 0 else 1 - p_true, abs=1e-4)
    summary = dict(line.split(" = ") for line in lines[15:] if " = " in line)
    positives = int((y > 0).sum())
    p = positives / len(y)
    assert summary["number of examples"] == str(len(y))
    assert float(summary["average loss"]) == pytest.approx(losses.mean(), abs=2e-6)
    assert float(summary["best constant"].split()[0]) == pytest.approx(math.log(p / (1 - p)), abs=1e-5)
    assert float(summary["best constant's loss"]) == pytest.approx(
        -(p * math.log(p) + (1 - p) * math.log(1 - p)), abs=2e-6)
    assert int(summary["total feature number"]) == X.nnz


def test_table_of_a_regression_and_a_batch(data, tmp_path, capsys):
    """Regression: the prediction column holds values, the best constant is the mean
    (loss half the variance). With --batch-size 8, lines come at the end of the
    step holding each count."""
    d, X, y = data
    targets = np.asarray(X.sum(axis=1)).ravel() * 3 + y
    path = tmp_path / "reg.svm"
    dump_libsvm(X, targets, path)
    status, out, err = run(capsys, "train", path, "--regression", "--batch-size", 8)
    assert status == 0 and "(current predict: the predicted value)" in err
    counts = [int(line.split()[2]) for line in err.splitlines()[3:] if line and line[0].isdigit()]
    assert counts == [8, 16, 32, 64, 128, 256, 512, 1024]
    assert f"best constant = {targets.mean():.6g}" in err
    assert f"best constant's loss = {targets.var() / 2:.6f}" in err


@pytest.mark.parametrize("loss", ["log", "hinge", "squared_hinge", "modified_huber"])
def test_best_constant_is_the_minimum(loss):
    """The 1-D minimization finds the grid's minimum of the mean loss, or better."""
    for positives, negatives in ((30, 70), (1, 999), (50, 50), (7, 0)):
        c, value = best_binary_constant(loss, positives, negatives)
        grid = np.linspace(-40, 40, 160_001)
        mean = (positives * binary_loss(loss, grid, np) + negatives * binary_loss(loss, -grid, np)) / (
            positives + negatives)
        assert value <= mean.min() + 1e-9


def test_quiet_prints_nothing(data, tmp_path, capsys):
    d, _, _ = data
    model = tmp_path / "q.npz"
    assert run(capsys, "train", d / "train.svm", "--model", model, "--quiet") == (0, "", "")
    assert model.exists()


def test_predict_reports_metrics_and_warnings(data, tmp_path, capsys):
    """On a labelled file: loss, accuracy, log-loss and AUC on stderr (scikit-learn's
    numbers, over the rows whose label the model knows), and one warning line each for
    features beyond the model's width and for labels it does not know."""
    from sklearn.metrics import log_loss, roc_auc_score
    d, X, y = data
    model = tmp_path / "m.npz"
    assert run(capsys, "train", d / "train.svm", "--model", model, "--quiet")[0] == 0
    est = load_model(model)
    X_test, y_test = load_libsvm(d / "test.svm", n_features=est.n_features_in_)
    y_odd = y_test.copy()
    y_odd[:3] = 5.0
    wide = X_test.tolil()
    wide.resize(X_test.shape[0], 500)
    wide[0, 450] = 1.0
    path = tmp_path / "odd.svm"
    dump_libsvm(wide.tocsr(), y_odd, path)
    status, out, err = run(capsys, "predict", model, path)
    lines = err.splitlines()
    assert status == 0 and len(out.split()) == len(y_test)
    assert lines[0] == (f"fastprox: warning: {path} has features beyond the model's "
                        f"{est.n_features_in_} (up to 451); they weigh 0")
    assert lines[1].startswith(f"fastprox: warning: {path} has 3 rows with labels the model does not "
                               f"know (5; its classes: -1, 1)")
    known = slice(3, None)
    proba = est.predict_proba(X_test[known])
    values = {line.split(":")[0]: float(line.split()[1]) for line in lines[2:]}
    assert values["loss"] == pytest.approx(log_loss(y_test[known], proba), abs=1e-6)
    assert values["accuracy"] == pytest.approx(est.score(X_test[known], y_test[known]), abs=1e-6)
    assert values["AUC"] == pytest.approx(roc_auc_score(y_test[known], proba[:, 1]), abs=1e-6)
    assert f", {len(y_test) - 3} rows of {path})" in lines[2]


def test_predict_regression_reports_rmse(data, tmp_path, capsys):
    d, X, y = data
    targets = np.asarray(X.sum(axis=1)).ravel() * 3 + y
    path, model = tmp_path / "reg.svm", tmp_path / "r.npz"
    dump_libsvm(X, targets, path)
    assert run(capsys, "train", path, "--regression", "--model", model, "--quiet")[0] == 0
    status, out, err = run(capsys, "predict", model, path)
    residual = load_model(model).predict(X) - targets
    values = {line.split(":")[0]: float(line.split()[1]) for line in err.splitlines()}
    assert values["RMSE"] == pytest.approx(np.sqrt(np.mean(residual ** 2)), abs=1e-6)
    assert values["loss"] == pytest.approx(np.mean(residual ** 2) / 2, abs=1e-6)


def test_multiclass_needs_classes_and_reports(tmp_path, capsys):
    X, y, _, _ = text_like(900, 50, seed=2)
    labels_ = 1.0 + np.arange(X.shape[0]) % 3
    path, model = tmp_path / "multi.svm", tmp_path / "m.npz"
    dump_libsvm(X, labels_, path)
    status, _, err = run(capsys, "train", path, "--classes", "1,2,3", "--multi-class", "multinomial",
                         "--model", model)
    assert status == 0 and "(current predict: the predicted class)" in err
    same_model(model, ProxClassifier(shuffle=False, multi_class="multinomial").fit(X, labels_))
    status, _, err = run(capsys, "predict", model, path)
    assert status == 0 and re.search(r"^AUC: [0-9.]+ \(one-vs-rest mean\)$", err, re.M)


# --- help, version, errors ---------------------------------------------------------

def option_helps(command):
    """{option: its help as printed} for every option of ``fastprox COMMAND``."""
    from fastprox.cli import build_parser, _Formatter
    parser = build_parser(command)
    sub = next(a for a in parser._actions if a.dest == "command").choices[command]
    formatter = _Formatter("fastprox")
    return {action.option_strings[-1]: formatter._expand_help(action) for action in sub._actions
            if action.option_strings and action.dest != "help"}


@pytest.mark.parametrize("command", ["train", "predict", "info"])
def test_every_option_has_a_meaning_and_a_default(command, capsys):
    helps = option_helps(command)
    assert helps and all("default" in text and len(text) > 20 for text in helps.values()), helps
    with pytest.raises(SystemExit) as exit_:
        main([command, "--help"])
    out = capsys.readouterr().out
    assert exit_.value.code == 0 and all(option in out for option in helps)


def test_top_level_help_and_version(capsys):
    """Each command on one line of `fastprox --help`; `--version` prints the version."""
    from fastprox import __version__
    with pytest.raises(SystemExit):
        main(["--help"])
    out = capsys.readouterr().out
    for command in ("train", "predict", "info"):
        assert re.search(rf"^    {command} +\S.*\.$", out, re.M), out
    assert not re.search(r"^    bench ", out, re.M), out      # benchmarks: python -m bench.NAME
    with pytest.raises(SystemExit) as exit_:
        main(["--version"])
    assert exit_.value.code == 0 and capsys.readouterr().out == f"fastprox {__version__}\n"


FORMATS = {
    "csv": ("1,0.5,3\n0,1.5,2\n", "label '1,0.5,3' holds commas: this looks like a CSV file (commas)"),
    "vw": ("1 |f 13:3.9 24:1\n", "feature '|f' has no ':': this looks like Vowpal Wabbit's text "
                                 "format ('|'), not LIBSVM text (LABEL INDEX:VALUE ...): give --format vw"),
    "vw without label": ("|f a b\n", "this looks like Vowpal Wabbit's text format ('|')"),
    "vw importance": ("1 2.0 |f a b\n", "feature '2.0' has no ':': this looks like Vowpal Wabbit's text format"),
    "vw tag": ("1 'row7|f a b\n", "feature ''row7|f' has no ':': this looks like Vowpal Wabbit's text format"),
    "nan": ("1 3:nan\n", "non-finite number 'nan'; fastprox takes finite numbers only: remove or "
                         "replace NaN and infinity"),
    "conll": ("-DOCSTART- -X- O\n\nConfidence NN B-NP\nin IN B-PP\n",
              "label '-DOCSTART-' is not a number: this looks like CoNLL columns (one token a line, its label "
              "last), not LIBSVM text (LABEL INDEX:VALUE ...): fastprox tag train FILE --format conll reads them"),
    "crfsuite": ("B-NP\tw=He\tpos=PRP\nB-VP\tw=reckons\n",
                 "this looks like CRFsuite items (one token a line: its label, then attributes, separated by "
                 "tabs), not LIBSVM text (LABEL INDEX:VALUE ...): fastprox tag train FILE --format crfsuite"),
    "conllu": ("# sent_id = 1\n# text = From the AP\n1\tFrom\tfrom\tADP\tIN\t_\t3\tcase\t3:case\t_\n",
               "conllu.txt:3: feature 'From' has no ':': this looks like CoNLL-U dependency trees (one word a line, "
               "ten columns separated by tabs), not LIBSVM text (LABEL INDEX:VALUE ...): fastprox parse train"),
    "word label": ("spam 1:1 2:1\n", "label 'spam' is not a number; each line must start with a numeric label"),
    "late zero": ("1 3:1\n" * 3 + "-1 0:1\n", "index 0, but the file was taken as one-based from its "
                                              "first chunk (lines 1-3, no index 0); give --zero-based"),
}


@pytest.mark.parametrize("name", FORMATS)
@pytest.mark.parametrize("command", ["train", "info"])
def test_other_formats_are_named(tmp_path, capsys, name, command):
    text, message = FORMATS[name]
    path = tmp_path / f"{name}.txt"
    path.write_text(text)
    status, out, err = run(capsys, command, path, "--chunk-rows", 3, "--format", "libsvm")  # (VW: its own)
    assert status == 1 and err.count("\n") == 1 and message in err, err
    assert "zero_based" not in err and "allow_nonfinite" not in err


def test_late_zero_trains_with_zero_based(tmp_path, capsys):
    path = tmp_path / "zero.svm"
    path.write_text("1 3:1\n" * 3 + "-1 0:1\n")
    assert run(capsys, "train", path, "--chunk-rows", 3, "--zero-based", "--quiet")[0] == 0


def test_no_traceback_for_the_unexpected(monkeypatch, capsys):
    def run_(args):
        raise RuntimeError("something broke")

    monkeypatch.setattr(train, "run", run_)
    status, out, err = run(capsys, "train")
    assert status == 1 and err == ("fastprox: error: internal error (RuntimeError: something broke); "
                                   "please report it with the command line that gave it\n")


def test_no_traceback_in_a_fresh_interpreter(tmp_path):
    """Mistakes in a fresh interpreter, as a user meets them: one line each."""
    bad = tmp_path / "bad.csv"
    bad.write_text("a,b\n1,2\n")
    for argv, status in ((["train", bad], 1), (["predict", bad, bad], 1), (["info", bad], 1),
                         (["train", "--alpha", "-1"], 2), (["train", "--classes", "1"], 2)):
        command, env = cli_command(*argv)
        done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=120)
        assert done.returncode == status and "Traceback" not in done.stderr
        assert done.stderr.count("\n") == 1 and done.stderr.startswith("fastprox: error: "), done.stderr


def test_pump_passes_a_pipe_through_whole(tmp_path):
    """A pipe read through fastprox.stream.files.Pump (a thread drains it as its writer
    writes) gives its bytes in order, whatever the sizes written and read (the
    commands read through it: tests/test_channels.py)."""
    import os
    import threading
    from fastprox.stream.files import Pump
    rng = np.random.default_rng(0)
    payload = rng.integers(0, 256, 3_000_000, dtype=np.uint8).tobytes()
    r, w = os.pipe()

    def write():
        at = 0
        while at < len(payload):
            step = int(rng.integers(1, 300_000))
            os.write(w, payload[at:at + step])
            at += step
        os.close(w)

    writer = threading.Thread(target=write)
    writer.start()
    pump, got = Pump(r, "<pipe>"), bytearray()
    while True:
        block = bytearray(int(rng.integers(1, 2_000_000)))
        n = pump.readinto(block)
        if not n:
            break
        got += block[:n]
    writer.join()
    os.close(r)
    assert bytes(got) == payload and pump.readinto(bytearray(10)) == 0
