"""The fastprox command line, run in-process: training equals the estimator,
predict/info agree with the library, and user mistakes give one line on
stderr and a non-zero exit status."""
import os
import re
import subprocess

import numpy as np
import pytest

from fastprox import ProxClassifier, ProxRegressor, dump_libsvm, load_libsvm
from fastprox.cli import main
from fastprox.stream.synthetic import text_like
from fastprox.model_io import load_model, save_model
from tests.support.cli_process import cli_command



def run(capsys, *argv):
    """(exit status, stdout, stderr) of ``fastprox ARGV``."""
    status = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return status, out, err


def value(out, name):
    """The number after ``name:`` in the output of train."""
    return float(re.search(rf"^{re.escape(name)}: ([-0-9.e]+)", out, re.M).group(1))


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """Small binary train/test files, a multiclass one and a regression one."""
    d = tmp_path_factory.mktemp("data")
    X, y, X_test, y_test = text_like(2500, 400, seed=5)
    dump_libsvm(X, y, d / "train.svm")
    dump_libsvm(X_test[:, :390], y_test, d / "test.svm.gz")
    labels = 1.0 + (np.arange(X.shape[0]) % 3)
    dump_libsvm(X, labels, d / "multi.svm")
    dump_libsvm(X, np.asarray(X.sum(axis=1)).ravel() * 3 + y, d / "reg.svm")
    return d


@pytest.fixture(scope="module")
def a9a(shared_data):
    return shared_data("a9a/a9a", "a9a/a9a.t")


# --- train --------------------------------------------------------------------

def test_train_equals_one_pass_of_the_estimator(files, tmp_path, capsys):
    model = tmp_path / "m.npz"
    status, out, err = run(capsys, "train", files / "train.svm", "--test", files / "test.svm.gz",
                           "--model", model, "--chunk-rows", 300, "--update", "rda", "--alpha", 1e-4)
    assert status == 0 and "finished run" in err
    X, y = load_libsvm(files / "train.svm")
    est = ProxClassifier(update="rda", alpha=1e-4, shuffle=False).fit(X, y)
    saved = load_model(model)
    np.testing.assert_array_equal(saved.coef_, est.coef_)
    np.testing.assert_array_equal(saved.intercept_, est.intercept_)
    assert value(out, "progressive loss") == pytest.approx(est.progressive_loss_, abs=1e-6)
    X_test, y_test = load_libsvm(files / "test.svm.gz", n_features=X.shape[1])
    assert value(out, "test accuracy") == pytest.approx(est.score(X_test, y_test), abs=1e-6)
    assert 0.0 < value(out, "test log-loss") < 0.7 and 0.5 < value(out, "test AUC") <= 1
    assert f"non-zero weights: {np.count_nonzero(est.coef_)} of {X.shape[1]}" in out
    assert f"model saved: {model}" in out


def test_groups_and_weights_from_files(files, tmp_path, capsys):
    """--groups and --group-weights train what the estimator's groups= and
    group_weights= do, and the saved model keeps them."""
    groups = np.arange(400) // 8 - 1                  # 50 groups of 8 features, the first unpenalized
    weights = np.sqrt(np.arange(1, 50) % 7 + 1.0)
    (tmp_path / "g.txt").write_text("# one id per feature\n" + "\n".join(map(str, groups)) + "\n")
    (tmp_path / "w.txt").write_text(" ".join(map(repr, weights.tolist())))
    model = tmp_path / "m.npz"
    status, out, err = run(capsys, "train", files / "train.svm", "--penalty", "l1_l2", "--schedule",
                           "invsqrt", "--alpha", 0.01, "--groups", tmp_path / "g.txt",
                           "--group-weights", tmp_path / "w.txt", "--model", model)
    assert status == 0
    X, y = load_libsvm(files / "train.svm")
    est = ProxClassifier(penalty="l1_l2", schedule="invsqrt", alpha=0.01, groups=groups,
                         group_weights=weights, shuffle=False).fit(X, y)
    saved = load_model(model)
    np.testing.assert_array_equal(saved.coef_, est.coef_)
    np.testing.assert_array_equal(saved.group_weights, weights)
    zero_groups = (np.abs(est.coef_[0]).reshape(50, 8).sum(axis=1) == 0).sum()
    assert 0 < zero_groups < 50


def test_given_width_and_classes_are_hints(files, tmp_path, capsys):
    """--n-features and --classes given train the model that growing and recognizing
    the labels gives (the two spellings of --classes alike)."""
    a, b, c = tmp_path / "a.npz", tmp_path / "b.npz", tmp_path / "c.npz"
    assert run(capsys, "train", files / "train.svm", "--model", a)[0] == 0
    assert run(capsys, "train", files / "train.svm", "--model", b, "--n-features", 400,
               "--classes", -1, 1)[0] == 0
    assert run(capsys, "train", files / "train.svm", "--model", c, "--classes", "-1,1")[0] == 0
    for other in (b, c):
        np.testing.assert_array_equal(load_model(a).coef_, load_model(other).coef_)
        np.testing.assert_array_equal(load_model(a).classes_, load_model(other).classes_)


def test_passes_continue_the_stream(files, tmp_path, capsys):
    model = tmp_path / "m.npz"
    status, out, _ = run(capsys, "train", files / "train.svm", "--passes", 3, "--model", model,
                         "--schedule", "invsqrt", "--batch-size", 5, "--seed", 1, "--holdout-off")
    X, y = load_libsvm(files / "train.svm")
    est = ProxClassifier(schedule="invsqrt", batch_size=5)
    for _ in range(3):
        est.partial_fit(X, y, classes=[-1, 1])
    assert status == 0 and "last pass mean loss" in out and "3 passes" in out
    np.testing.assert_array_equal(load_model(model).coef_, est.coef_)


def test_multiclass_and_regression(files, capsys):
    status, out, _ = run(capsys, "train", files / "multi.svm", "--test", files / "multi.svm",
                         "--classes", "1,2,3")
    assert status == 0 and "(one-vs-rest mean)" in out and 0 <= value(out, "test accuracy") <= 1
    status, out, _ = run(capsys, "train", files / "reg.svm", "--regression", "--loss", "huber",
                         "--test", files / "reg.svm")
    X, y = load_libsvm(files / "reg.svm")
    est = ProxRegressor(loss="huber", shuffle=False).fit(X, y)
    rmse = np.sqrt(np.mean((est.predict(X) - y) ** 2))
    assert status == 0 and value(out, "test RMSE") == pytest.approx(rmse, rel=1e-6)


def test_embedded_default_is_seeded(capsys):
    argv = ("train", "--rows", 3000, "--n-features", 4096, "--penalty", "elasticnet")
    status, out, err = run(capsys, *argv)
    assert status == 0 and "number of examples = 2400" in err
    assert "embedded default" in out and "2400 rows x 4096 features" in out
    assert 0.55 < value(out, "test accuracy") < 1
    again = run(capsys, *argv)[1]
    strip = lambda text: [line for line in text.splitlines() if not line.startswith("time:")]
    assert strip(again) == strip(out)
    assert strip(run(capsys, *argv, "--seed", 9)[1]) != strip(out)


def test_a9a(a9a, capsys):
    train, test = a9a
    status, out, err = run(capsys, "train", train, "--test", test)
    assert status == 0 and "number of examples = 32561" in err
    assert "32561 rows x 123 features" in out and "16281 rows" in out
    assert value(out, "test accuracy") > 0.84 and value(out, "test AUC") > 0.89


def test_a_hashed_model_predicts_what_it_was_trained_on(a9a, tmp_path, capsys):
    """train --hash-bits records the hashing in the model file: predict applies it
    without --hash-bits (the issue's case: a9a.t accuracy 0.850 fell to 0.764 without
    a word), refuses another --hash-bits, and the estimator of load_model hashes the
    raw rows as the command did; a model without hashing refuses --hash-bits."""
    train, test = a9a
    model = tmp_path / "hashed.npz"
    status, out, _ = run(capsys, "train", train, "--hash-bits", 10, "--test", test, "--model", model)
    trained = value(out, "test accuracy")
    assert status == 0 and trained > 0.84
    for given in ([], ["--hash-bits", 10]):
        status, out, err = run(capsys, "predict", model, test, *given)
        assert status == 0 and value(err, "accuracy") == trained
    predicted = out
    status, out, err = run(capsys, "predict", model, test, "--hash-bits", 11)
    assert status == 2 and err == (f"fastprox: error: --hash-bits 11, but {model} was trained with "
                                   "--hash-bits 10 (which predict applies): drop --hash-bits, or give 10\n")
    est = load_model(model)
    X, y = load_libsvm(test)
    assert est.hash_bits_ == 10 and round(est.score(X, y), 6) == trained
    np.testing.assert_array_equal(np.array(predicted.split(), dtype=float), est.predict(X))
    plain = tmp_path / "plain.npz"
    assert run(capsys, "train", train, "--model", plain, "--quiet")[0] == 0
    status, _, err = run(capsys, "predict", plain, test, "--hash-bits", 10)
    assert status == 2 and "was trained without hashing: drop --hash-bits" in err


# --- predict and info -----------------------------------------------------------

def test_predict_round_trip(files, tmp_path, capsys):
    model, out_file = tmp_path / "m.npz", tmp_path / "pred.txt"
    run(capsys, "train", files / "train.svm", "--model", model)
    est = load_model(model)
    X, _ = load_libsvm(files / "test.svm.gz", n_features=est.n_features_in_)
    status, out, err = run(capsys, "predict", model, files / "test.svm.gz", "--out", out_file,
                           "--chunk-rows", 77, "--quiet")
    assert (status, out, err) == (0, "", "")
    np.testing.assert_array_equal(np.loadtxt(out_file), est.predict(X))
    status, out, _ = run(capsys, "predict", model, files / "test.svm.gz", "--proba")
    lines = out.splitlines()
    assert status == 0 and lines[0] == "labels -1 1" and len(lines) == X.shape[0] + 1
    table = np.array([line.split() for line in lines[1:]], dtype=float)
    np.testing.assert_array_equal(table[:, 0], est.predict(X))
    np.testing.assert_array_equal(table[:, 1:], est.predict_proba(X))


def test_predict_regression_is_exact(files, tmp_path, capsys):
    X, y = load_libsvm(files / "reg.svm")
    model = tmp_path / "r.npz"
    save_model(ProxRegressor().fit(X, y), model)
    status, out, _ = run(capsys, "predict", model, files / "reg.svm")
    np.testing.assert_array_equal(np.array(out.split(), dtype=float), load_model(model).predict(X))


def info_numbers(out):
    rows, features, nnz = (int(re.search(rf"{k}\s+(\d+)", out).group(1))
                           for k in ("rows", "features", "non-zeros"))
    labels = dict(pair.split(":") for pair in re.search(r"labels\s+(.*)", out).group(1).split())
    return rows, features, nnz, {float(k): int(n) for k, n in labels.items()}


def expected_info(path):
    X, y = load_libsvm(path)
    return X.shape[0], X.shape[1], X.nnz, dict(zip(*map(np.ndarray.tolist, np.unique(y, return_counts=True))))


def test_info_equals_load_libsvm(files, capsys):
    for name in ("train.svm", "test.svm.gz", "multi.svm"):
        status, out, _ = run(capsys, "info", files / name, "--chunk-rows", 333)
        assert status == 0 and info_numbers(out) == expected_info(files / name)


def test_info_of_an_empty_file_says_it_has_no_labels(tmp_path, capsys):
    """The labels line was empty: it says none (the width is load_libsvm's 1)."""
    (tmp_path / "empty.svm").write_bytes(b"")
    status, out, _ = run(capsys, "info", tmp_path / "empty.svm")
    assert status == 0 and out.splitlines()[1:] == ["  rows       0", "  features   1", "  non-zeros  0 (0.00 per row)",
                                                    "  labels     none (no rows)"]


def test_info_a9a(a9a, capsys):
    status, out, _ = run(capsys, "info", a9a[0])
    assert status == 0 and info_numbers(out) == expected_info(a9a[0])
    assert info_numbers(out) == (32561, 123, 451592, {-1.0: 24720, 1.0: 7841})


# --- user mistakes ----------------------------------------------------------------

@pytest.fixture(scope="module")
def broken(tmp_path_factory, files):
    """A file malformed on line 1500 (found in the middle of training), a hinge model."""
    d = tmp_path_factory.mktemp("broken")
    lines = (files / "train.svm").read_text().splitlines(keepends=True)
    lines[1499] = "1 3:x\n"
    (d / "bad.svm").write_text("".join(lines))
    X, y = load_libsvm(files / "train.svm")
    save_model(ProxClassifier(loss="hinge").fit(X, y), d / "hinge.npz")
    (d / "groups_short.txt").write_text("0 1 1\n")
    (d / "groups_bad.txt").write_text("0 1\n2 x\n")
    (d / "test.vw").write_text("1 |a x\n-1 |a y\n")
    return d


MISTAKES = {
    "missing data": (["train", "{d}/absent.svm"], "absent.svm: No such file or directory"),
    "missing test": (["train", "{f}/train.svm", "--test", "{d}/absent.svm"], "No such file"),
    "directory as data": (["info", "{d}"], "is a directory"),
    "malformed data": (["train", "{b}/bad.svm", "--n-features", "400", "--classes", "-1", "1",
                        "--chunk-rows", "100"], "bad.svm:1500: value 'x' is not a number"),
    "negative alpha": (["train", "{f}/train.svm", "--alpha", "-1"], "--alpha -1.0 must be >= 0.0"),
    "non-numeric option": (["train", "--alpha", "x"], "argument --alpha: invalid float value: 'x'"),
    "unknown choice": (["train", "--update", "adam"], "invalid choice: 'adam'"),
    "step neither auto nor a number": (["train", "--eta0", "fast"], "argument --eta0: must be auto or a number"),
    "zero step": (["train", "--rows", "50", "--eta0", "0"], "--eta0 0.0 must be > 0.0"),
    "negative offset": (["train", "--rows", "50", "--schedule", "inv", "--t0", "-2"], "--t0 -2.0 must be >= 0.0"),
    "offset without its schedule": (["train", "--rows", "50", "--t0", "2"],
                                    "--t0 2.0 offsets the decaying scalar schedules"),
    "zero intercept scaling": (["train", "--rows", "50", "--intercept-scaling", "0"],
                               "--intercept-scaling 0.0 is the value of the intercept's constant feature"),
    "bad combination": (["train", "--update", "rda", "--schedule", "inv"],
                        "--update rda is not defined with --schedule inv; with 'rda' use --schedule in"),
    "zero passes": (["train", "--passes", "0"], "--passes must be at least 1"),
    "negative seed": (["train", "--rows", "50", "--seed", "-1"],
                      "argument --seed: must be an integer from 0 to 4294967295, not '-1'"),
    "zero chunk rows": (["train", "{f}/train.svm", "--chunk-rows", "0"], "--chunk-rows must be at least 1"),
    "one row": (["train", "--rows", "1"], "--rows must be at least 2"),
    "rows with data": (["train", "{f}/train.svm", "--rows", "10"],
                       "--rows sets the size of the embedded data, which DATA replaces: drop it"),
    "holdout of every example": (["train", "{f}/train.svm", "--passes", "3", "--holdout-period", "1"],
                                 "--holdout-period 1 holds out every example, leaving none to train on"),
    "width too small": (["train", "{f}/train.svm", "--n-features", "10"],
                        "beyond --n-features 10 (the largest allowed index is 10); give a larger "
                        "--n-features, or none to let the model grow with the data"),
    "classes missing a label": (["train", "{f}/multi.svm", "--classes", "1", "2"],
                                "multi.svm:3: label 3 is not among the classes 1,2: give --classes "
                                "with every label"),
    "third label": (["train", "{f}/multi.svm"], "multi.svm:3: a third label, 3, after 1 and 2: this "
                    "looks like a multiclass stream: give --classes 1,2,3 (every label of the stream)"),
    "one class given": (["train", "{f}/train.svm", "--classes", "1"], "--classes needs two integer labels"),
    "data after classes": (["train", "--classes", "1,2,3", "{f}/multi.svm"],
                           "multi.svm' (--classes takes the words up to the next option: give DATA before it, "
                           "or with -d)"),
    "fractional classes": (["train", "{f}/train.svm", "--classes", "0.5,1"], "--classes needs two integer"),
    "multinomial hinge-squared": (["train", "{f}/multi.svm", "--classes", "1,2,3", "--multi-class",
                                   "multinomial", "--loss", "squared_hinge"],
                                  "--multi-class multinomial takes --loss in ('log', 'hinge')"),
    "hash bits and width": (["train", "{f}/train.svm", "--hash-bits", "10", "--n-features", "9"],
                            "--hash-bits sets the width"),
    "zero hash bits": (["train", "{f}/train.svm", "--hash-bits", "0"], "--hash-bits must be at least 1"),
    "regression with classes": (["train", "--regression", "--classes", "1", "2"], "--classes is for classification"),
    "test in another format": (["train", "{f}/train.svm", "--test", "{b}/test.vw"],
                               "test.vw reads as Vowpal Wabbit's text (its first data line holds '|'), but "),
    "unknown test labels": (["train", "{f}/train.svm", "--test", "{f}/multi.svm"], "labels [2.0, 3.0]"),
    "model directory missing": (["train", "--rows", "50", "--model", "{d}/no/m.npz"], "does not exist"),
    "unknown command": (["fit"], "invalid choice: 'fit'"),
    "no command": ([], "required: COMMAND"),
    "benchmarks are not a command": (["bench", "table1"], "invalid choice: 'bench'"),
    "missing model": (["predict", "{d}/absent.npz", "{f}/train.svm"], "absent.npz: No such file"),
    "data as model": (["predict", "{f}/train.svm", "{f}/train.svm"], "not a readable fastprox model"),
    "proba without probabilities": (["predict", "{b}/hinge.npz", "{f}/train.svm", "--proba"],
                                    "--proba needs a classifier with loss 'log'"),
    "info without file": (["info"], "required: DATA"),
    "groups not integers": (["train", "{f}/train.svm", "--penalty", "l1_l2", "--schedule", "invsqrt",
                             "--groups", "{b}/groups_bad.txt"], "groups_bad.txt:2: 'x' is not an integer"),
    "groups too short": (["train", "{f}/train.svm", "--penalty", "l1_l2", "--schedule", "invsqrt",
                          "--groups", "{b}/groups_short.txt"],
                         "train.svm:1: index '10' is beyond the 3 features of --groups "),
    "groups without a group penalty": (["train", "{f}/train.svm", "--groups", "{b}/groups_short.txt"],
                                       "--groups is used by the group penalties"),
    "predict zero chunk rows": (["predict", "{b}/hinge.npz", "{f}/train.svm", "--chunk-rows", "0"],
                                "--chunk-rows must be at least 1"),
    "predict hash bits of another width": (["predict", "{b}/hinge.npz", "{f}/train.svm", "--hash-bits", "4"],
                                           "--hash-bits 4 gives 16 features, but"),
    "info zero chunk rows": (["info", "{f}/train.svm", "--chunk-rows", "0"], "--chunk-rows must be at least 1"),
    "continued with other options": (["train", "{f}/train.svm", "-i", "{b}/hinge.npz", "--alpha", "1"],
                                     "--alpha 1.0 (the model's: 0.0): drop these options"),
    "tag negative alpha": (["tag", "train", "{f}/train.svm", "--format", "conll", "--alpha", "-1"],
                           "--alpha -1.0 must be >= 0.0"),
    "tag zero bits": (["tag", "train", "{f}/train.svm", "--format", "crfsuite", "--bits", "0"],
                      "--bits must be an integer in 1..62"),
    "tag zero min count": (["tag", "train", "{f}/train.svm", "--format", "conll", "--min-count", "0"],
                           "--min-count must be a positive integer"),
    "tag label not a column": (["tag", "train", "{f}/train.svm", "--format", "conll", "--columns", "w,y",
                                "--label", "q"], "--label 'q' is not one of --columns"),
    "tag one column": (["tag", "train", "{f}/train.svm", "--format", "conll", "--columns", "w"],
                       "--columns 'w' must name at least two columns"),
    "parse zero passes": (["parse", "train", "{f}/train.svm", "--passes", "0"], "--passes 0 must be >= 1"),
    "parse unknown template": (["parse", "train", "{f}/train.svm", "--templates", "nope"],
                               "unknown arc template 'nope'"),
    "parse average without its lazy form": (["parse", "train", "{f}/train.svm", "--penalty", "l1_l2"],
                                            "average has no exact lazy form"),
}


#: The MISTAKES of the command line itself, argparse's and the option values refused
#: after it (fastprox.cli.options.OptionError), checked before any data is read, in
#: every command: exit status 2, as argparse's; those of the files, the data and the
#: models exit with 1.
COMMAND_LINE_MISTAKES = {
    "negative alpha", "non-numeric option", "unknown choice", "step neither auto nor a number", "zero step",
    "negative offset", "offset without its schedule", "zero intercept scaling", "bad combination", "zero passes",
    "negative seed", "zero chunk rows", "rows with data", "holdout of every example", "one class given",
    "data after classes", "fractional classes", "hash bits and width",
    "zero hash bits", "regression with classes", "unknown command", "no command", "benchmarks are not a command",
    "info without file", "groups without a group penalty", "one row", "multinomial hinge-squared",
    "proba without probabilities", "predict zero chunk rows", "predict hash bits of another width",
    "info zero chunk rows", "continued with other options", "tag negative alpha", "tag zero bits",
    "tag zero min count", "tag label not a column", "tag one column", "parse zero passes", "parse unknown template",
    "parse average without its lazy form"}


@pytest.mark.parametrize("name, argv, message", [(name, *m) for name, m in MISTAKES.items()], ids=MISTAKES.keys())
def test_user_mistakes_give_one_line(files, broken, tmp_path, capsys, name, argv, message):
    argv = [a.format(f=files, b=broken, d=tmp_path) for a in argv]
    status, out, err = run(capsys, *argv, *(["--quiet"] if argv and argv[0] == "train" else []))
    assert status == (2 if name in COMMAND_LINE_MISTAKES else 1) and out == "", (status, err)
    assert err.count("\n") == 1 and err.startswith("fastprox: error: ")
    assert message in err


#: A path given empty (``--model "$OUT"`` with OUT unset), each where it was read as
#: no option at all (train -f: no model saved, -i: a new model, --test: no test) or
#: refused in words that named no option (predict -p: "No such file or directory").
EMPTY_PATHS = {
    "train data": (["train", ""], "DATA"), "train -d": (["train", "-d", ""], "-d/--data"),
    "train --test": (["train", "{f}/train.svm", "--test", ""], "--test"),
    "train -f": (["train", "{f}/train.svm", "-f", ""], "-f/--model"),
    "train -i": (["train", "{f}/train.svm", "-i", ""], "-i/--initial-model"),
    "train --readable-model": (["train", "{f}/train.svm", "--readable-model", ""], "--readable-model"),
    "train --invert-hash": (["train", "{f}/train.svm", "--invert-hash", ""], "--invert-hash"),
    "train -p": (["train", "{f}/train.svm", "-p", ""], "-p/--predictions"),
    "train --groups": (["train", "{f}/train.svm", "--groups", ""], "--groups"),
    "train --group-weights": (["train", "{f}/train.svm", "--group-weights", ""], "--group-weights"),
    "predict model": (["predict", "", "{f}/train.svm"], "MODEL"),
    "predict data": (["predict", "{b}/hinge.npz", ""], "DATA"),
    "predict -p": (["predict", "{b}/hinge.npz", "{f}/train.svm", "-p", ""], "-p/--out"),
    "info": (["info", ""], "DATA"),
    "tag train --model": (["tag", "train", "{f}/train.svm", "--format", "conll", "--model", ""], "--model"),
    "tag train --templates": (["tag", "train", "{f}/train.svm", "--format", "conll", "--templates", ""],
                              "--templates"),
    "tag predict --out": (["tag", "predict", "{b}/hinge.npz", "{f}/train.svm", "--out", ""], "--out"),
    "parse train --test": (["parse", "train", "{f}/train.svm", "--test", ""], "--test"),
    "parse predict model": (["parse", "predict", "", "{f}/train.svm"], "MODEL"),
}


@pytest.mark.parametrize("argv, option", EMPTY_PATHS.values(), ids=EMPTY_PATHS.keys())
def test_an_empty_path_is_refused_naming_its_option(files, broken, tmp_path, capsys, argv, option):
    argv = [a.format(f=files, b=broken) for a in argv]
    status, out, err = run(capsys, *argv)
    assert status == 2 and out == "" and err.count("\n") == 1, err
    assert err.startswith(f"fastprox: error: argument {option}: an empty path: give a file path"), err


FULL = "; free some space, or write to another disk"
#: Outputs that cannot be written, found only when written (a full device; a
#: directory that takes no new files): the error names the option, the path and the
#: fix, where it named no file or no option.
WRITE_FAILURES = {
    "train -f /proc": (["train", "{f}/train.svm", "-f", "/proc/m"],
                       "--model /proc/m: directory /proc takes no new files"),
    "train -f full": (["train", "{f}/train.svm", "-f", "/dev/full"], "--model /dev/full: No space left on device" + FULL),
    "train -p full": (["train", "{f}/train.svm", "-p", "/dev/full"], "--predictions /dev/full: No space left"),
    "train --readable-model": (["train", "{f}/train.svm", "--readable-model", "/dev/full"],
                               "--readable-model /dev/full: No space left"),
    "train --invert-hash": (["train", "{f}/train.svm", "--invert-hash", "/proc/h"], "--invert-hash /proc/h: directory"),
    "predict -p full": (["predict", "{b}/hinge.npz", "{f}/train.svm", "-p", "/dev/full"],
                        "-p/--out /dev/full: No space left on device" + FULL),
    "predict -p /proc": (["predict", "{b}/hinge.npz", "{f}/train.svm", "-p", "/proc/p"],
                         "-p/--out /proc/p: directory /proc takes no new files"),
}


@pytest.mark.skipif(not os.path.exists("/proc/self") or not os.path.exists("/dev/full"), reason="Linux's devices")
@pytest.mark.parametrize("argv, message", WRITE_FAILURES.values(), ids=WRITE_FAILURES.keys())
def test_a_failed_write_names_its_option_and_the_fix(files, broken, capsys, argv, message):
    status, out, err = run(capsys, *(a.format(f=files, b=broken) for a in argv), "--quiet")
    assert status == 1 and err.count("\n") == 1 and err.startswith(f"fastprox: error: {message}"), err


@pytest.mark.skipif(not os.path.exists("/proc/self/mem"), reason="Linux's /proc")
@pytest.mark.parametrize("argv", [["train"], ["train", "--format", "vw"], ["info"], ["predict", "{b}/hinge.npz"],
                                  ["tag", "train", "--format", "conll"]], ids=" ".join)
def test_a_failed_read_names_its_file(broken, capsys, argv):
    """A read the system fails (EIO: /proc/self/mem at offset 0 stands for a failing
    disk) names the file, where the error was a bare "Input/output error"."""
    argv = [a.format(b=broken) for a in argv]
    status, out, err = run(capsys, *argv[:1 + (argv[0] in ("predict", "tag"))], "/proc/self/mem",
                           *argv[1 + (argv[0] in ("predict", "tag")):])
    assert status == 1 and err == "fastprox: error: /proc/self/mem: Input/output error\n", err


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="a full device")
@pytest.mark.parametrize("buffered", [False, True])
def test_a_full_standard_output_is_named(files, broken, buffered):
    """``> /dev/full``: one line naming standard output and the fix, exit status 1,
    with Python's buffering or without (PYTHONUNBUFFERED: each print fails at once),
    and no second complaint from the interpreter's last flush."""
    for argv in (["predict", broken / "hinge.npz", files / "train.svm", "--quiet"], ["info", files / "train.svm"],
                 ["train", files / "train.svm"]):
        command, env = cli_command(*argv)
        env = {k: v for k, v in env.items() if k != "PYTHONUNBUFFERED"} if buffered else {**env, "PYTHONUNBUFFERED": "1"}
        with open("/dev/full", "w") as full:
            done = subprocess.run(command, env=env, stdout=full, stderr=subprocess.PIPE, text=True, timeout=120)
        last = done.stderr.splitlines()[-1:]
        assert done.returncode == 1 and last == [f"fastprox: error: standard output: No space left on device{FULL}"], (
            argv, done.stderr)
        assert "Traceback" not in done.stderr and "Exception ignored" not in done.stderr


def test_overflow_names_the_file_and_its_row_and_writes_no_model(tmp_path, capsys):
    """Values too large for the steps (their gradient could overflow the state, before
    the next margin overflows): one line naming the file and the data row (counted
    over the file, across chunks), and no model file."""
    path = tmp_path / "huge.svm"
    path.write_text("1 1:1 2:1\n-1 1:1 3:1\n-1 1:1e300 2:1e300\n1 1:1e300 3:1e300\n1 2:1e300\n")
    model = tmp_path / "m.npz"
    status, out, err = run(capsys, "train", path, "--schedule", "invsqrt", "--chunk-rows", 2, "--model", model)
    assert status == 1 and err.endswith("\n") and err.count("fastprox: error:") == 1
    assert err.splitlines()[-1].startswith(f"fastprox: error: {path}:3: its gradient")
    assert not model.exists()


def test_a_margin_that_overflows_names_the_file_and_line_in_predict_and_test(tmp_path, capsys):
    """predict and train --test refuse a row whose margin overflows (finite values,
    inf - inf), naming its line across chunks, where they printed class 0 and NaN
    probabilities; a huge finite loss prints with an exponent, not 300 digits."""
    train = tmp_path / "train.svm"
    rng = np.random.default_rng(0)
    X = rng.uniform(0, 0.01, (2000, 2))
    dump_libsvm(X, np.where(X[:, 0] > X[:, 1], 1, -1), train)
    model = tmp_path / "m.npz"
    assert run(capsys, "train", train, "--model", model, "--quiet")[0] == 0
    data = tmp_path / "test.svm"
    data.write_text("1 1:0.01\n-1 2:0.01\n1 1:0.01\n-1 1:1e308 2:1e308\n")
    for argv in (["predict", model, data, "--proba"], ["train", train, "--test", data]):
        status, out, err = run(capsys, *argv, "--chunk-rows", 2)
        assert status == 1
        assert err.splitlines()[-1] == (f"fastprox: error: {data}:4: the margin overflowed: the values are "
                                        "finite but too large for the model's weights; scale them as the "
                                        "training data were scaled.")
    data.write_text("-1 1:1e305\n-1 2:0.01\n")
    status, out, err = run(capsys, "predict", model, data)
    assert status == 0 and out == "1\n-1\n"
    assert re.match(r"loss: \d\.\d{6}e\+30\d \(log loss, 2 rows", err), err


def test_auto_steps_are_reported_and_match_the_estimator(files, capsys):
    """The report shows each "auto" step with the number chosen, over the first rows
    whatever --chunk-rows; a number given is shown as given."""
    status, out, err = run(capsys, "train", files / "train.svm", "--chunk-rows", 7, "--eta0", 0.2)
    X, y = load_libsvm(files / "train.svm")
    est = ProxClassifier(eta0=0.2, shuffle=False).fit(X, y)
    assert status == 0 and "eta0=0.2, delta='auto' (%.4g)" % est.delta_ in out
    assert value(out, "progressive loss") == pytest.approx(est.progressive_loss_, abs=1e-6)


def test_label_counts_stop_past_the_limit(files, capsys):
    """scan counts labels (fastprox._libsvm.count_labels, added chunk by chunk) up
    to MAX_LABELS distinct values; past it the file is taken as regression targets."""
    from array import array
    from fastprox._libsvm import count_labels
    counts = {2.0: 5}
    assert count_labels(array("d", [1, 2, 2, 3, 1, 1]), counts, 3) and counts == {1.0: 3, 2.0: 7, 3.0: 1}
    assert not count_labels(array("d", [4, 1]), counts, 3)
    assert count_labels(array("d"), counts, 3)
    status, out, _ = run(capsys, "info", files / "reg.svm")
    assert status == 0 and "labels     more than 1000 distinct values" in out
    status, _, err = run(capsys, "train", files / "reg.svm")
    assert status == 1 and "is not a class (classes are integers); for real-valued targets give --regression" in err


def test_metrics_equal_scikit_learns():
    from sklearn.metrics import log_loss as sk_log_loss, roc_auc_score
    from fastprox.cli.metrics import log_losses, roc_auc
    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, 500).astype(bool)
    scores = np.round(rng.normal(size=500) + y, 1)          # rounded: many ties
    weights = rng.exponential(size=500) * (rng.random(500) > 0.1)      # a tenth weigh 0
    assert roc_auc(y, scores) == pytest.approx(roc_auc_score(y, scores), rel=1e-12)
    assert roc_auc(y, scores, weights) == pytest.approx(roc_auc_score(y, scores, sample_weight=weights), rel=1e-12)
    proba = rng.dirichlet(np.ones(3), 500)
    labels = rng.integers(0, 3, 500)
    assert np.mean(log_losses(labels, proba)) == pytest.approx(sk_log_loss(labels, proba, labels=[0, 1, 2]),
                                                               rel=1e-12)


def test_importance_weights_weigh_the_metrics_as_vw_and_scikit_learn_do(tmp_path, capsys):
    """predict and --test on VW text with importance weights: every metric weighs
    the rows (VW's average loss; scikit-learn's sample_weight); unweighted before,
    where the progressive and holdout losses were weighted."""
    from sklearn.metrics import accuracy_score, log_loss, roc_auc_score
    rng = np.random.default_rng(3)
    n = 300
    y = rng.integers(0, 2, n) * 2 - 1
    w = np.round(rng.exponential(size=n), 3)
    x = rng.normal(size=(n, 3)) + y[:, None] * 0.5
    lines = [f"{y[i]} {w[i]} |f a:{x[i, 0]:.4f} b:{x[i, 1]:.4f} c:{x[i, 2]:.4f}" for i in range(n)]
    (tmp_path / "d.vw").write_text("\n".join(lines) + "\n")
    model, out = tmp_path / "m.model", tmp_path / "p.txt"
    status, trained, _ = run(capsys, "train", tmp_path / "d.vw", "--model", model, "--test", tmp_path / "d.vw")
    assert status == 0
    status, _, err_predict = run(capsys, "predict", model, tmp_path / "d.vw", "--proba", "--out", out)
    assert status == 0
    rows = [line.split() for line in out.read_text().splitlines()[1:]]
    predicted = np.array([float(r[0]) for r in rows])
    proba = np.array([[float(v) for v in r[1:]] for r in rows])
    values = dict(line.split(": ")[:2] for line in err_predict.strip().splitlines())
    values = {k: float(v.split()[0]) for k, v in values.items()}
    assert values["accuracy"] == pytest.approx(accuracy_score(y, predicted, sample_weight=w), abs=1e-6)
    assert values["log-loss"] == pytest.approx(log_loss(y, proba, sample_weight=w), abs=1e-6)
    assert values["loss"] == pytest.approx(log_loss(y, proba, sample_weight=w), abs=1e-6)
    assert values["AUC"] == pytest.approx(roc_auc_score(y, proba[:, 1], sample_weight=w), abs=1e-6)
    assert "log loss, weighted, 300 rows of" in err_predict
    assert f"test accuracy: {values['accuracy']}" in trained


def imported(argv):
    """The exit status of ``fastprox ARGV`` run in a fresh interpreter, and the
    packages among numpy, scipy and sklearn that it imported."""
    import subprocess
    import sys
    code = ("import sys; from fastprox.cli import main; "
            f"status = main({[str(a) for a in argv]!r}); "
            "print(status, *sorted({m.split('.')[0] for m in sys.modules} & {'numpy', 'scipy', 'sklearn'}))")
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True).stdout.strip().splitlines()[-1]


@pytest.mark.parametrize("name, argv", [
    ("binary", ["train", "{f}/train.svm", "--model", "{f}/imports.npz"]),
    ("multiclass", ["train", "{f}/multi.svm", "--classes", "1,2,3", "--model", "{f}/imports.npz",
                    "--quiet"]),
    ("regression", ["train", "{f}/reg.svm", "--regression", "--model", "{f}/imports.npz", "--quiet"]),
    ("binary, the table", ["train", "{f}/train.svm", "--model", "{f}/imports.npz"]),
    ("hashed", ["train", "{f}/train.svm", "--hash-bits", "12"]),
    ("given width and classes", ["train", "{f}/train.svm", "--n-features", "400", "--classes", "-1", "1"]),
    ("info", ["info", "{f}/train.svm"]),
    ("several passes: the holdout's best pass copied", ["train", "{f}/train.svm", "--passes", "4", "--quiet",
                                                        "--model", "{f}/imports.npz"]),
    ("predictions", ["train", "{f}/train.svm", "--passes", "2", "-p", "{f}/p.txt", "--quiet"]),
])
def test_training_from_files_imports_no_numpy(files, name, argv):
    """Start-up matters on small files: training from LIBSVM files and saving the
    model, or describing a file, import neither NumPy nor scipy nor scikit-learn.
    (The table's "current predict" of a model whose loss is not the log loss is its
    margin, which reads the model with NumPy: those runs are --quiet here.)"""
    assert imported([a.format(f=files) for a in argv]) == "0"


def test_testing_and_predicting_import_neither_scipy_nor_scikit_learn(files, tmp_path):
    """Testing a model and predicting need NumPy, not scipy or scikit-learn."""
    model = tmp_path / "m.npz"
    assert imported(["train", files / "train.svm", "--test", files / "test.svm.gz", "--model", model]) == "0 numpy"
    assert imported(["predict", model, files / "test.svm.gz", "--proba", "--out", tmp_path / "p"]) == "0 numpy"


def test_read_ahead_keeps_order_and_raises_in_order():
    from fastprox.stream.files import read_ahead

    def items():
        yield from range(5)
        raise ValueError("bad line")

    seen = []
    with pytest.raises(ValueError, match="bad line"):
        for item in read_ahead(items()):
            seen.append(item)
    assert seen == [0, 1, 2, 3, 4]
    assert list(read_ahead(iter(range(100)), depth=1)) == list(range(100))


@pytest.mark.parametrize("case", ["one-based", "zero-based", "zero in the second half",
                                  "no feature in the first half", "bad line in the second half",
                                  "many labels", "gzip"])
def test_scan_in_halves_equals_one_pass(tmp_path, monkeypatch, case):
    """Large plain files are scanned in two halves at once; the summary is the one
    pass's, and whatever one pass would refuse is refused with the same message
    (the halves defer to one pass)."""
    from fastprox.libsvm import load as libsvm_load
    from fastprox.cli import info
    rng = np.random.default_rng(2)
    lines = [f"{rng.choice([-1, 1])} " + " ".join(f"{j}:{rng.normal():.3f}" for j in
                                                   np.sort(rng.choice(np.arange(1, 60), 5, replace=False)))
             for _ in range(400)]
    if case == "zero-based":
        lines[3] = "1 0:1.5 7:2"
    if case == "zero in the second half":
        lines[350] = "1 0:1.5 7:2"
    if case == "no feature in the first half":
        lines[:390] = ["-1"] * 390
    if case == "bad line in the second half":
        lines[300] = "1 3:x"
    if case == "many labels":
        lines = [f"{i}.5 {line.split(' ', 1)[1]}" for i, line in enumerate(lines * 3)]
    path = tmp_path / ("data.svm.gz" if case == "gzip" else "data.svm")
    opener = __import__("gzip").open if case == "gzip" else open
    with opener(path, "wt") as f:
        f.write("\n".join(lines) + "\n")

    def summary(split_bytes):
        monkeypatch.setattr(libsvm_load, "SPLIT_BYTES", split_bytes)
        try:
            s = info.scan([path, path], 50)
        except ValueError as e:
            return str(e)
        return s.rows, s.nnz, s.n_features, s.labels

    monkeypatch.setattr(libsvm_load, "SPLIT_BYTES", 0)
    halves = info._scan_halves(path, 50)
    assert (halves is None) == (case in ("zero in the second half", "no feature in the first half",
                                         "bad line in the second half", "gzip"))
    assert summary(0) == summary(1 << 40)


def test_predict_lines_are_the_estimators_predictions_zero_margins_included(tmp_path, capsys):
    """predict writes its lines in one call a chunk (`format_predictions`, a binary
    margin m taken as the outputs (0, m)): at margins of exactly 0 and -0 (every weight
    0), the smaller class, as the estimator's predict decides (m > 0: the larger), and
    a multiclass model's first largest output."""
    X = np.random.default_rng(0).normal(size=(50, 3))
    for y, fitted in ((np.where(X[:, 0] > 0, 3, 7), dict(penalty="l1", alpha=1e3, fit_intercept=False)),
                      (np.arange(50) % 3 + 1, dict(penalty="l1", alpha=1e3, fit_intercept=False)),
                      (np.where(X[:, 0] > 0, 3, 7), {})):
        est = ProxClassifier(**fitted).fit(X, y)
        save_model(est, tmp_path / "m.npz")
        dump_libsvm(X, y, tmp_path / "d.svm")
        assert main(["predict", str(tmp_path / "m.npz"), str(tmp_path / "d.svm"), "--quiet"]) == 0
        assert capsys.readouterr().out.split() == [str(v) for v in est.predict(X)]
