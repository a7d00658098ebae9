"""Vowpal Wabbit's workflow in `fastprox train`, run in-process: -i continues a
saved model as one run over both files (the model file byte for byte, the table's
counters), and from Python as the command line would; --passes holds out every
K-th example and stops as VW stops; --readable-model and --invert-hash; -p writes
the progressive predictions; -P sets the table's lines; --quiet keeps the final
figures; every mistake is one line."""
import math
import re

import numpy as np
import pytest
import scipy.sparse as sp

from fastprox import ProxClassifier, ProxRegressor, dump_libsvm, hash_features, load_libsvm
from fastprox._registry import RULES
from fastprox.cli import main
from fastprox.model_io import load_model
from fastprox.stream.synthetic import text_like
from test_cli import run, value


@pytest.fixture(scope="module")
def halves(tmp_path_factory):
    """A binary file split in two (the second half wider: features the first never
    met), both halves in one file, a test file, the rows; multiclass and regression
    labels for the same rows."""
    d = tmp_path_factory.mktemp("vw_workflow")
    X, y, X_test, y_test = text_like(2250, 300, seed=11)
    assert X.shape[0] == 1800
    first, second = X[:1000, :250], X[1000:]
    dump_libsvm(first, y[:1000], d / "a.svm")
    dump_libsvm(second, y[1000:], d / "b.svm")
    dump_libsvm(X_test, y_test, d / "test.svm")
    classes = 1.0 + (np.arange(1800) % 3)
    dump_libsvm(first, classes[:1000], d / "a3.svm")
    dump_libsvm(second, classes[1000:], d / "b3.svm")
    target = np.asarray(X.sum(axis=1)).ravel() + y
    dump_libsvm(first, target[:1000], d / "ar.svm")
    dump_libsvm(second, target[1000:], d / "br.svm")
    return d, X, y


CONTINUED = {
    "default": ("", []),
    "rda adagrad, batches": ("", ["--update", "rda", "--schedule", "adagrad", "--eta0", "0.3", "--delta", "1",
                                  "--alpha", "1e-4", "--batch-size", "4"]),
    "l1 fobos invsqrt": ("", ["--schedule", "invsqrt", "--alpha", "1e-3"]),
    "hashed": ("", ["--hash-bits", "7"]),
    "multiclass": ("3", ["--classes", "1,2,3", "--multi-class", "multinomial", "--eta0", "0.7", "--delta", "0.2"]),
    "regression": ("r", ["--regression", "--loss", "huber", "--eta0", "0.1", "--delta", "1"]),
}
# (AdaGrad's "auto" steps are set by the first 10,000 rows, here fewer than A's: a
# run over A and B reads B's too, so the cases under AdaGrad give theirs.)


@pytest.mark.parametrize("case", CONTINUED)
def test_initial_model_continues_as_one_run(halves, tmp_path, capsys, case):
    """train A -f m1; train -i m1 B -f m2 writes the file of train A B -f m, byte for
    byte (its table's counters included), and the continued table's lines are the
    one run's lines past A (batches of 4: A's 1,000 rows are a whole number of them)."""
    d, _, _ = halves
    kind, options = CONTINUED[case]
    a, b = d / f"a{kind}.svm", d / f"b{kind}.svm"
    one, first, second = tmp_path / "one.npz", tmp_path / "m1.npz", tmp_path / "m2.npz"
    status, _, err_one = run(capsys, "train", a, b, "-f", one, "--chunk-rows", 300, *options)
    assert status == 0
    assert run(capsys, "train", "-d", a, "-f", first, "--chunk-rows", 300, *options)[0] == 0
    status, _, err_two = run(capsys, "train", "-i", first, "-d", b, "-f", second, "--chunk-rows", 300)
    assert status == 0
    assert second.read_bytes() == one.read_bytes()
    lines = [line for line in err_two.splitlines() if re.match(r"^\d", line)]
    assert len(lines) >= 1 and all(line in err_one for line in lines)
    assert "number of examples = 1800" in err_two


def test_continued_options_are_the_models_and_grow_from_python(halves, tmp_path, capsys):
    """Options not given are the model's; the model saved by the command line grows
    from Python (load_model(path).partial_fit on wider rows, no set_params) to the
    model train -i makes."""
    d, _, _ = halves
    first, second = tmp_path / "m1.npz", tmp_path / "m2.npz"
    assert run(capsys, "train", d / "a.svm", "-f", first, "--update", "ftrl", "--alpha", "1e-3", "--quiet")[0] == 0
    assert run(capsys, "train", "-i", first, d / "b.svm", "-f", second, "--quiet")[0] == 0
    continued = load_model(second)
    assert continued.update == "ftrl" and continued.alpha == 1e-3
    est = load_model(first)
    X, y = load_libsvm(d / "b.svm")
    assert X.shape[1] > est.n_features_in_
    est.partial_fit(X, y)
    assert est.coef_.tobytes() == continued.coef_.tobytes()
    assert est.intercept_.tobytes() == continued.intercept_.tobytes()


@pytest.mark.parametrize("options, message", [
    (["--loss", "hinge"], "--loss hinge (the model's: log)"),
    (["--hash-bits", "8"], "--hash-bits 8 (the model's: None)"),
    (["--regression"], "--regression (the model is a ProxClassifier)"),
    (["--classes", "1,2,3"], "--classes 1,2,3 (the model's: -1,1)"),
    (["--no-intercept"], "--no-intercept (the model fits an intercept)"),
    (["--alpha", "0.5", "--update", "rda"], "--update rda (the model's: fobos); --alpha 0.5 (the model's: 0.0)"),
])
def test_mismatched_options_are_refused_naming_them(halves, tmp_path, capsys, options, message):
    d, _, _ = halves
    model = tmp_path / "m.npz"
    assert run(capsys, "train", d / "a.svm", "-f", model, "--quiet")[0] == 0
    status, out, err = run(capsys, "train", "-i", model, d / "b.svm", *options)
    assert status == 2 and out == "" and message in err and "drop these options" in err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_bad_initial_models_give_one_line(halves, tmp_path, capsys):
    d, _, _ = halves
    broken = tmp_path / "broken.npz"
    broken.write_bytes(b"not a model")
    model = tmp_path / "m.npz"
    assert run(capsys, "train", d / "a.svm", "-f", model, "--quiet")[0] == 0
    truncated = tmp_path / "truncated.npz"
    truncated.write_bytes(model.read_bytes()[:-100])
    cases = {(tmp_path / "missing.npz",): ("No such file", 1),
             (broken,): ("not a readable fastprox model file", 1),
             (truncated,): ("truncated", 1),
             (model, "--holdout-off"): ("the holdout is for several passes", 2)}     # (an option's value)
    for (path, *more), (message, expected) in cases.items():
        status, out, err = run(capsys, "train", "-i", path, d / "b.svm", *more)
        assert status == expected and message in err and len(err.strip().splitlines()) == 1, err
    status, _, err = run(capsys, "train", "-i", model)
    assert status == 1 and "-i continues a model on data" in err


def test_a_label_the_continued_model_lacks_says_that_its_classes_cannot_change(halves, tmp_path, capsys):
    """-i of a model whose classes lack a label of the data: the advice was to give
    --classes with every label, which -i then refuses as differing from the model's;
    it is now to train a new model. Without -i, --classes is the advice still."""
    d, _, _ = halves
    model = tmp_path / "m.npz"
    assert run(capsys, "train", d / "a3.svm", "--classes", "1,2,3", "-f", model, "--quiet")[0] == 0
    status, out, err = run(capsys, "train", "-i", model, d / "b.svm", "--quiet")
    assert status == 1 and out == "" and err == (f"fastprox: error: {d / 'b.svm'}:1: label -1 is not among the "
                                                 f"classes 1,2,3: the model continued (-i) has these classes only: "
                                                 f"train a new model, without -i\n")
    status, out, err = run(capsys, "train", d / "b.svm", "--classes", "1,2,3", "--quiet")
    assert status == 1 and err.endswith(": label -1 is not among the classes 1,2,3: give --classes with every "
                                        "label of the stream\n")


def holdout_reference(X, y, passes, period, after=None, sample_weight=None, **params):
    """The eager holdout: per pass, the estimator steps over every row but the
    period-th ones (1-based; with ``after``, those after the first ``after``), each
    of which is scored by the model of its moment; the models after each pass and
    each pass's mean holdout log loss (over the held-out rows' weights, as VW's)."""
    est = ProxClassifier(**params)
    w = np.ones(X.shape[0]) if sample_weight is None else sample_weight
    models, losses = [], []
    held = [i for i in range(X.shape[0]) if ((i + 1) % period == 0 if after is None else i + 1 > after)]
    for _ in range(passes):
        total, start = 0.0, 0
        for i in held + [X.shape[0]]:
            if i > start:
                est.partial_fit(X[start:i], y[start:i], classes=[-1, 1], sample_weight=w[start:i])
            if i < X.shape[0]:
                margin = est.decision_function(X[i])[0]
                total += w[i] * math.log1p(math.exp(-margin if y[i] > 0 else margin))
            start = i + 1
        models.append((est.coef_.copy(), est.intercept_.copy()))
        losses.append(total / sum(w[i] for i in held))
    return models, losses


def test_passes_hold_out_every_kth_example(halves, tmp_path, capsys):
    """--passes 3 holds out the 7th, 14th, ... rows of each pass: the model is the
    estimator's over the other rows, the holdout losses the eager ones, the table's
    lines from the second pass on are the holdout's, marked h."""
    d, _, _ = halves
    model = tmp_path / "m.npz"
    status, out, err = run(capsys, "train", d / "a.svm", "--passes", 3, "--holdout-period", 7,
                           "--early-terminate", 5, "-f", model, "--chunk-rows", 128, "--schedule", "invsqrt")
    assert status == 0
    X, y = load_libsvm(d / "a.svm")
    models, losses = holdout_reference(X, y, 3, 7, schedule="invsqrt")
    saved = load_model(model)
    assert saved.coef_.tobytes() == models[-1][0].tobytes()
    shown = re.search(r"each pass: ([^;]*);", out).group(1).split(", ")
    assert [float(v) for v in shown] == pytest.approx(losses, abs=1e-6)
    assert "the model is the last pass's (3)" in out
    assert re.search(r"^[0-9.]+ +[0-9.a-z]+ +\d+ .* h$", err, re.M)
    assert "(1000 rows x 250 features, 3 passes, 142 held out per pass)" in out
    assert "passes used = 3" in err and re.search(r"^average loss = [0-9.]+ h$", err, re.M)


def test_holdout_after_holds_out_the_rest_of_each_pass(halves, tmp_path, capsys):
    """--holdout-after 900 (VW's --holdout_after) holds out the rows after the 900th
    of each pass, whatever the chunks: the model and the holdout losses the eager
    ones; given with --holdout-period, or without --passes, one line names the fix."""
    d, _, _ = halves
    model = tmp_path / "m.npz"
    status, out, _ = run(capsys, "train", d / "a.svm", "--passes", 3, "--holdout-after", 900,
                         "--early-terminate", 5, "-f", model, "--chunk-rows", 128, "--schedule", "invsqrt")
    X, y = load_libsvm(d / "a.svm")
    models, losses = holdout_reference(X, y, 3, None, after=900, schedule="invsqrt")
    assert status == 0 and load_model(model).coef_.tobytes() == models[-1][0].tobytes()
    shown = re.search(r"each pass: ([^;]*);", out).group(1).split(", ")
    assert [float(v) for v in shown] == pytest.approx(losses, abs=1e-6)
    assert "3 passes, 100 held out per pass" in out
    for options, message in ((["--holdout-after", 900, "--passes", 2, "--holdout-period", 5], "give one of them"),
                             (["--holdout-after", 900], "give --passes N"),
                             (["--passes", 2, "--holdout-after", 0], "at least 1")):
        status, _, err = run(capsys, "train", d / "a.svm", *options)
        assert status == 2 and message in err and "Traceback" not in err


def test_early_termination_keeps_the_best_pass(tmp_path, capsys):
    """Held-out rows whose labels contradict the rest: the holdout loss grows after
    the first pass, the run stops after --early-terminate 1 more, and the model
    saved is the first pass's (VW writes the model at each improving pass and not
    at the end of a run that stopped early)."""
    X, y, _, _ = text_like(750, 50, seed=2)
    y = y.copy()
    y[9::10] = -y[9::10]
    path = tmp_path / "flip.svm"
    dump_libsvm(X, y, path)
    model = tmp_path / "m.npz"
    status, out, _ = run(capsys, "train", path, "--passes", 6, "--early-terminate", 1, "-f", model, "--quiet")
    X, y = load_libsvm(path)
    models, losses = holdout_reference(X, y, 6, 10)
    best = int(np.argmin(losses[:2]))
    assert status == 0 and losses[1] > losses[0] and best == 0
    assert "stopped after pass 2" in out and "the model is pass 1's" in out
    assert load_model(model).coef_.tobytes() == models[0][0].tobytes()


@pytest.mark.parametrize("passes, early_terminate, losses, copied", [
    (3, 3, [3.0, 2.0, 1.0], []),            # (--passes 3: no pass has 3 after it)
    (4, 3, [3.0, 2.0, 1.0, 0.5], [1]),
    (None, 3, [3.0, 2.0, 1.0], [1, 2, 3]),  # (the passes not told: every best pass)
    (6, 1, [1.0, 2.0], [1]),                # (stops after pass 2 with pass 1's copy)
    (5, 2, [2.0, 1.0, 1.5, 0.5, 0.7], [1, 2])])
def test_the_holdout_copies_only_a_pass_it_can_return_to(monkeypatch, passes, early_terminate, losses, copied):
    """The holdout copies a best pass's model only where the run can still stop early
    on it (early_terminate passes remain after it): `train --passes 3` copied its
    model (48 MB on the Zipf set) at each improving pass, for nothing."""
    from types import SimpleNamespace
    from fastprox.stream import holdout as holdout_module
    made = []
    monkeypatch.setattr(holdout_module, "copy", SimpleNamespace(
        copy=lambda learner: made.append(learner) or ("copy of", learner)))
    holdout = holdout_module.Holdout(10, early_terminate, passes=passes)
    stops = [holdout.end_pass(number, loss, 1.0, number) for number, loss in enumerate(losses, 1)]
    assert made == copied and stops[:-1] == [False] * (len(losses) - 1)
    assert stops[-1] == (holdout.stopped == len(losses))
    if holdout.stopped:
        assert holdout.best_learner == ("copy of", holdout.best_pass)


def test_train_passes_3_copies_no_model(halves, tmp_path, capsys, monkeypatch):
    """fastprox train --passes 3 (early_terminate 3) makes no copy of its model, which it
    could never return to; --passes 4 makes one, at the first pass."""
    from fastprox.stream import holdout as holdout_module
    copies = []
    monkeypatch.setattr(holdout_module, "copy", __import__("types").SimpleNamespace(
        copy=lambda learner: copies.append(learner) or learner))
    d, _, _ = halves
    for passes, expected in ((3, 0), (4, 1)):
        copies.clear()
        assert run(capsys, "train", d / "a.svm", "--passes", passes, "--quiet")[0] == 0
        assert len(copies) == expected


def test_holdout_off_trains_on_every_row(halves, tmp_path, capsys):
    d, _, _ = halves
    model = tmp_path / "m.npz"
    status, out, _ = run(capsys, "train", d / "a.svm", "--passes", 2, "--holdout-off", "-f", model, "--quiet")
    X, y = load_libsvm(d / "a.svm")
    est = ProxClassifier()
    for _ in range(2):
        est.partial_fit(X, y, classes=[-1, 1])
    assert status == 0 and out == "" and load_model(model).coef_.tobytes() == est.coef_.tobytes()


def test_predictions_are_progressive_and_atomic(halves, tmp_path, capsys):
    """-p writes each row's raw score as VW's -p does (the margin of the model of the
    moment, before its step: the estimator's decision on the rows before it,
    exactly), a line per row and pass; a run that fails leaves no predictions file."""
    d, _, _ = halves
    out_path = tmp_path / "p.txt"
    status, out, _ = run(capsys, "train", d / "a.svm", "-p", out_path, "--schedule", "invsqrt", "--quiet")
    X, y = load_libsvm(d / "a.svm")
    est = ProxClassifier(schedule="invsqrt")
    expected = [0.0]        # the model of no step: margin 0
    for i in range(X.shape[0] - 1):
        est.partial_fit(X[i:i + 1], y[i:i + 1], classes=[-1, 1])
        expected.append(float(est.decision_function(X[i + 1])[0]))
    assert status == 0 and [float(v) for v in out_path.read_text().split()] == expected
    status, _, _ = run(capsys, "train", d / "a.svm", "--passes", 2, "-p", out_path, "--quiet")
    assert status == 0 and len(out_path.read_text().splitlines()) == 2 * X.shape[0]
    bad = tmp_path / "bad.svm"
    bad.write_text(open(d / "a.svm").read() + "1 5:nan-ish\n")
    fresh = tmp_path / "fresh.txt"
    status, _, err = run(capsys, "train", bad, "-p", fresh)
    assert status == 1 and "bad.svm" in err and not fresh.exists()
    assert not list(tmp_path.glob(".fresh.txt*"))


def test_progress_interval(halves, capsys):
    d, _, _ = halves
    counts = lambda err: [int(line.split()[2]) for line in err.splitlines() if re.match(r"^\d", line)]
    assert counts(run(capsys, "train", d / "a.svm", "-P", 300)[2]) == [300, 600, 900]
    assert counts(run(capsys, "train", d / "a.svm", "--progress", "3.0")[2]) == [1, 3, 9, 27, 81, 243, 729]
    for bad in ("0", "1.0", "x"):
        status, _, err = run(capsys, "train", d / "a.svm", "-P", bad)
        assert status == 2 and "--progress" in err


def readable_weights(text):
    """{(class, column): weight} of a readable model's lines, and its intercepts."""
    weights, intercepts, section = {}, {}, None
    body = text.split("\n")[text.split("\n").index(next(l for l in text.split("\n") if l.startswith("options:"))) + 1:]
    for line in body:
        if line.startswith("class:"):
            section = float(line[6:])
        elif line.startswith("Constant:"):
            intercepts[section] = float(line.split(":")[1])
        elif line:
            column, weight = line.split(":")
            weights[section, int(column)] = float(weight)
    return weights, intercepts


@pytest.mark.parametrize("options", [[], ["--classes", "1,2,3"]])
def test_readable_model_holds_every_nonzero_weight(halves, tmp_path, capsys, options):
    d, _, _ = halves
    path, model, text = (d / "a3.svm") if options else (d / "a.svm"), tmp_path / "m.npz", tmp_path / "r.txt"
    status, out, _ = run(capsys, "train", path, "-f", model, "--readable-model", text, "--alpha", "1e-3",
                         "--quiet", *options)
    assert status == 0
    est = load_model(model)
    weights, intercepts = readable_weights(text.read_text())
    classes = est.classes_.tolist() if options else [None]
    expected = {(classes[k], j): est.coef_[k, j] for k, j in zip(*np.nonzero(est.coef_))}
    assert weights == expected and len(weights) < est.coef_.size
    assert intercepts == dict(zip(classes, est.intercept_.tolist()))
    assert text.read_text().startswith("Version fastprox")


def test_readable_model_header_names_the_bits(halves, tmp_path, capsys):
    """The header's ``bits:`` line is VW's -b: --hash-bits, VW text's bits (its -b,
    recorded by the model), ``none`` for LIBSVM columns as given."""
    d, _, _ = halves
    vw, text = tmp_path / "d.vw", tmp_path / "r.txt"
    vw.write_text("1 |a x y:2 |b z\n-1 'tag|a w |b z\n" * 20)
    for source, options, bits in ((vw, [], "18"), (vw, ["--hash-bits", 12, "-q", "ab"], "12"),
                                  (d / "a.svm", ["--hash-bits", 7], "7"), (d / "a.svm", [], "none")):
        assert run(capsys, "train", source, "--readable-model", text, "--quiet", *options)[0] == 0
        assert f"\nbits:{bits}\n" in text.read_text()


def test_invert_hash_names_the_features_as_written(halves, tmp_path, capsys):
    """One-based LIBSVM: a column's name is its index as written (column + 1);
    hashed: every id written that falls in the bucket."""
    d, _, _ = halves
    plain, hashed = tmp_path / "plain.txt", tmp_path / "hashed.txt"
    assert run(capsys, "train", d / "a.svm", "--invert-hash", plain, "--quiet")[0] == 0
    for line in plain.read_text().splitlines()[7:]:
        if not line.startswith("Constant"):
            name, column, _ = line.split(":")
            assert int(name) == int(column) + 1
    assert run(capsys, "train", d / "a.svm", "--hash-bits", 5, "--invert-hash", hashed, "--quiet")[0] == 0
    lines = [line.split(":") for line in hashed.read_text().splitlines()[7:] if not line.startswith("Constant")]
    X, _ = load_libsvm(d / "a.svm")
    ids = sorted({int(name) for name, _, _ in lines})
    one_hot = sp.csr_matrix((np.ones(len(ids)), np.array(ids) - 1, np.arange(len(ids) + 1)),
                            shape=(len(ids), X.shape[1]))
    buckets = hash_features(one_hot, 5).indices
    assert {(i, int(b)) for i, b in zip(ids, buckets)} == {(int(n), int(c)) for n, c, _ in lines}
    assert len(ids) > 32


def test_quiet_keeps_the_final_figures(halves, capsys):
    d, _, _ = halves
    status, out, err = run(capsys, "train", d / "a.svm", "--test", d / "test.svm", "--quiet")
    assert status == 0 and err == "" and out.startswith("test loss: ") and "test accuracy: " in out
    assert value(out, "test accuracy") > 0.5 and "time:" not in out


def test_eta0_and_delta_have_their_own_help(capsys):
    with pytest.raises(SystemExit):
        main(["train", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    eta0 = re.search(r"--eta0 \{auto,NUMBER\} (.*?)--delta", text).group(1)
    delta = re.search(r"--delta \{auto,NUMBER\} (.*?)--batch-size", text).group(1)
    assert "base step size" in eta0 and "0.5" in eta0 and "offset" in delta and "1e-8" in delta
    assert eta0 != delta


def test_regression_continues_with_its_statistics(halves, tmp_path, capsys):
    """A regressor's best constant after -i is the one run's (its label moments kept)."""
    d, _, _ = halves
    one, first = tmp_path / "one.npz", tmp_path / "m1.npz"
    err_one = run(capsys, "train", d / "ar.svm", d / "br.svm", "--regression", "-f", one)[2]
    assert run(capsys, "train", d / "ar.svm", "--regression", "-f", first, "--quiet")[0] == 0
    err_two = run(capsys, "train", "-i", first, d / "br.svm", "--regression")[2]
    constant = lambda err: re.search(r"best constant = (.*)", err).group(1)
    assert constant(err_two) == constant(err_one)
    assert isinstance(load_model(one), ProxRegressor)


@pytest.mark.parametrize("options", [["--passes", "2", "--holdout-period", "2"], ["-p", "{tmp}/p.txt"]])
def test_a_row_that_overflows_is_named_between_held_out_rows(tmp_path, capsys, options):
    """The kernel's calls over parts of a chunk (cut at held-out rows, a step at a
    time for -p) name the failing row's line in its file; no model, no predictions."""
    path = tmp_path / "huge.svm"
    lines = ["1 1:1 2:1", "-1 1:1 3:1"] * 4 + ["-1 1:1e300 2:1e300", "1 1:1e300 3:1e300", "1 2:1e300"]
    path.write_text("\n".join(lines) + "\n")
    model = tmp_path / "m.npz"
    options = [option.format(tmp=tmp_path) for option in options]
    status, _, err = run(capsys, "train", path, "--schedule", "invsqrt", "--model", model, *options)
    assert status == 1 and err.count("fastprox: error:") == 1
    assert err.splitlines()[-1].startswith(f"fastprox: error: {path}:9: its gradient")
    assert not model.exists() and not (tmp_path / "p.txt").exists()


def test_a_model_saved_from_python_continues_at_its_width(halves, tmp_path, capsys):
    """save_model's estimator (grow_features=False, no table counters) continues at its
    width; a wider file is refused naming how to let it grow, which then works."""
    from fastprox import save_model
    d, _, _ = halves
    X, y = load_libsvm(d / "a.svm")
    fixed, growing = tmp_path / "fixed.npz", tmp_path / "growing.npz"
    save_model(ProxClassifier().fit(X, y), fixed)
    status, _, err = run(capsys, "train", "-i", fixed, d / "b.svm", "--quiet")
    assert status == 1 and "of the model of -i, which does not grow" in err and "grow_features=True" in err
    save_model(load_model(fixed).set_params(grow_features=True), growing)
    continued = tmp_path / "m2.npz"
    assert run(capsys, "train", "-i", growing, d / "b.svm", "-f", continued, "--quiet")[0] == 0
    est = load_model(growing)
    X_b, y_b = load_libsvm(d / "b.svm")
    est.partial_fit(X_b, y_b)
    assert load_model(continued).coef_.tobytes() == est.coef_.tobytes()


def test_predictions_carry_the_inputs_tags():
    """A reader whose chunks have ``tags`` (VW's text format) gets them after each
    prediction line, as VW's -p writes them."""
    from array import array

    from fastprox.libsvm import Chunk
    from fastprox.stream.model import StreamModel
    from fastprox.stream.progress import NoBar, Table
    from fastprox.stream.trainer import Trainer
    from fastprox._core import CLASSIFIER_DEFAULTS

    class Tagged(Chunk):
        __slots__ = ("tags",)

    chunk = Tagged(array("d", [1.0, 2.0, 1.0]), array("i", [0, 1, 2]), array("i", [0, 1, 2, 3]),
                   array("d", [1.0, -1.0, 1.0]), array("q", [0, 0, 0]), 3)
    chunk.tags = ["first", "second", "third"]

    class Source:
        name = "tagged"

        @staticmethod
        def locator(origin):
            return lambda i: f"tagged: row {i + 1}"

    written = []
    est = StreamModel(CLASSIFIER_DEFAULTS, False, [-1.0, 1.0])
    Trainer(est, Source(), Table(None, ""), NoBar(), predictions=written.append).one_pass([(chunk, chunk.y, 0)])
    lines = b"".join(written).decode().splitlines()
    assert [line.split()[1] for line in lines] == chunk.tags and len(lines) == 3


def test_predict_writes_the_tags_of_vw_text_as_vw_test_does(tmp_path, capsys):
    """fastprox predict on VW text writes each row's tag after its prediction, as
    ``vw -t -p`` does (how VW's users join predictions back to their rows; they were
    dropped); a row without one, its prediction alone; --proba keeps svm-predict's
    format."""
    data = tmp_path / "d.vw"
    data.write_text("1 'a1|a x\n-1 |a y\n1 2 'b\xe9|a x y\n" * 10, encoding="utf-8")
    model = tmp_path / "m"
    assert run(capsys, "train", data, "-f", model, "--quiet")[0] == 0
    status, out, _ = run(capsys, "predict", model, data, "--quiet")
    lines = out.splitlines()
    assert status == 0 and len(lines) == 30
    assert [line.split()[1:] for line in lines[:3]] == [["a1"], [], ["b\xe9"]]
    assert {line.split()[0] for line in lines} <= {"1", "-1"}
    status, out, _ = run(capsys, "predict", model, data, "--quiet", "--proba")
    assert out.splitlines()[0] == "labels -1 1" and {len(line.split()) for line in out.splitlines()[1:]} == {3}


def test_predict_raw_writes_the_margins_as_vw_test_does(tmp_path, capsys):
    """predict --raw writes each row's margin, the estimator's decision_function (VW's
    -t -p of a binary model without --binary or --link: its raw score), then the tag
    (predict wrote labels only, and VW's -r was refused); a regressor's values as
    without it; refused, exit 2, with --proba."""
    data = tmp_path / "d.vw"
    data.write_text("1 'a1|a x:0.5\n-1 |a y\n1 2 'b|a x y:2\n" * 10, encoding="utf-8")
    model = tmp_path / "m"
    assert run(capsys, "train", data, "-f", model, "--quiet")[0] == 0
    status, out, _ = run(capsys, "predict", model, data, "--quiet", "--raw")
    from fastprox.vw import load_vw
    X = load_vw(data)[0]
    margins = load_model(model).decision_function(X)
    assert status == 0 and [line.split()[0] for line in out.splitlines()] == [repr(float(m)) for m in margins]
    assert [line.split()[1:] for line in out.splitlines()[:3]] == [["a1"], [], ["b"]]
    libsvm = tmp_path / "r.svm"
    libsvm.write_text("0.5 1:1 2:0.5\n-1.25 2:1\n" * 10)
    assert run(capsys, "train", libsvm, "--regression", "-f", model, "--quiet")[0] == 0
    assert run(capsys, "predict", model, libsvm, "--quiet", "--raw")[1] == run(capsys, "predict", model, libsvm,
                                                                                 "--quiet")[1]
    status, out, err = run(capsys, "predict", model, data, "--raw", "--proba")
    assert status == 2 and out == "" and "give --proba or --raw, not both" in err


@pytest.mark.parametrize("multi_class", ["ovr", "multinomial"])
def test_predict_raw_writes_each_class_margin_as_vw_oaa_does(tmp_path, capsys, multi_class):
    """A multiclass model's --raw line is each class's margin, ``class:margin``
    separated by spaces in the order of its classes (decision_function's columns), as
    VW's -r with --oaa, then the tag (it was refused)."""
    data = tmp_path / "m.vw"
    data.write_text("1 'r1|a x:0.5\n2 |a y\n3 't3|a x y:2\n" * 5, encoding="utf-8")
    model = tmp_path / "m"
    assert run(capsys, "train", data, "--classes", "1,2,3", "--multi-class", multi_class, "-f", model,
               "--quiet")[0] == 0
    status, out, _ = run(capsys, "predict", model, data, "--quiet", "--raw")
    from fastprox.vw import load_vw
    margins = load_model(model).decision_function(load_vw(data)[0])
    lines = out.splitlines()
    assert status == 0 and len(lines) == 15
    assert [line.split()[:3] for line in lines] == [[f"{c}:{float(m)!r}" for c, m in zip((1, 2, 3), row)]
                                                    for row in margins]
    assert [line.split()[3:] for line in lines[:3]] == [["r1"], [], ["t3"]]
    labels = run(capsys, "predict", model, data, "--quiet")[1].splitlines()
    assert [line.split()[0] for line in labels] == [str(1 + int(row.argmax())) for row in margins]


@pytest.mark.parametrize("rule", sorted({(r.update, r.schedule, r.penalty) for r in RULES}))
def test_row_margins_are_the_margins_bit_for_bit(rule):
    """Learner.row_margins (one row, reading its features only: held-out rows and -p)
    gives `margins`' bits for every rule, one output or three, whatever the buffers."""
    from array import array
    update, schedule, penalty = rule
    rng = np.random.default_rng(4)
    X = sp.random(120, 30, density=0.2, format="csr", random_state=4)
    groups = np.arange(30) % 6
    for n_classes in (2, 3):
        y = rng.integers(0, n_classes, 120)
        est = ProxClassifier(update=update, schedule=schedule, penalty=penalty, alpha=1e-3, eta0=0.1,
                             delta=1.0, step="gradient", shuffle=False,
                             groups=groups if penalty in ("l1_l2", "l1_linf", "sparse_group", "squared_group")
                             else None).fit(X, y)
        learner = est._learner
        for i in range(0, 120, 7):
            a, b = X.indptr[i], X.indptr[i + 1]
            data, indices = X.data[a:b], X.indices[a:b]
            expected = list(learner.margins(data, indices, np.array([0, b - a], dtype=indices.dtype), 30)[0])
            for d, j in ((data, indices), (array("d", data), array("q", indices.astype(np.int64))),
                         (memoryview(data), memoryview(indices)), (list(data), list(indices))):
                assert learner.row_margins(d, j) == expected


def test_predict_takes_vws_p(halves, tmp_path, capsys):
    """fastprox predict MODEL DATA -p FILE writes what --out writes (VW's -t -i MODEL -p FILE)."""
    d, _, _ = halves
    model, by_p, by_out = tmp_path / "m.npz", tmp_path / "p.txt", tmp_path / "out.txt"
    assert run(capsys, "train", d / "a.svm", "-f", model, "--quiet")[0] == 0
    assert run(capsys, "predict", model, d / "test.svm", "-p", by_p, "--quiet")[0] == 0
    assert run(capsys, "predict", model, d / "test.svm", "--out", by_out, "--quiet")[0] == 0
    assert by_p.read_bytes() == by_out.read_bytes() and by_p.stat().st_size > 0


@pytest.mark.parametrize("kind", ["binary log", "binary hinge", "ovr", "multinomial log", "crammer-singer",
                                  "squared", "huber"])
def test_a_held_out_rows_loss_is_the_reports(kind):
    """example_loss (a held-out row's, in floats) equals the loss predict and --test
    report (fastprox.cli.metrics, in NumPy) at the same margins."""
    from fastprox.cli.metrics import Metrics
    from tests.support.reference import example_loss
    from fastprox.stream.model import StreamModel
    from fastprox._core import CLASSIFIER_DEFAULTS, REGRESSOR_DEFAULTS
    regression = kind in ("squared", "huber")
    loss = {"binary log": "log", "binary hinge": "hinge", "ovr": "log", "multinomial log": "log",
            "crammer-singer": "hinge", "squared": "squared_error", "huber": "huber"}[kind]
    classes = None if regression else ([-1.0, 1.0] if kind.startswith("binary") else [1.0, 2.0, 3.0])
    params = {**(REGRESSOR_DEFAULTS if regression else CLASSIFIER_DEFAULTS), "loss": loss}
    if not regression:
        params["multi_class"] = "multinomial" if kind in ("multinomial log", "crammer-singer") else "ovr"
    est = StreamModel(params, regression, classes)
    outputs = 1 if classes is None or len(classes) == 2 else 3
    X = sp.random(20, 4, density=0.5, format="csr", random_state=1)
    est.start(4, outputs, [X])
    rng = np.random.default_rng(0)
    for _ in range(20):
        scores = list(rng.normal(scale=2.0, size=outputs))
        if regression:
            y = float(rng.normal())
            target = y
        else:
            index = int(rng.integers(len(classes)))
            y, target = classes[index], (2.0 * index - 1 if outputs == 1 else float(index))
        metrics = Metrics(est)
        metrics.add(4, np.array([y]), np.array(scores if outputs == 1 else [scores]))
        assert example_loss(est, scores, target) == pytest.approx(metrics.loss_sum, rel=1e-12, abs=1e-12)


def test_a_model_files_progress_entry_is_checked(halves, tmp_path, capsys):
    """fitted.progress_ is read as the rest of a file is: anything it cannot hold is
    refused naming the entry; a good one round-trips."""
    import json

    from fastprox.model_io.header import check_progress
    d, _, _ = halves
    model = tmp_path / "m.npz"
    assert run(capsys, "train", d / "a.svm", "-f", model, "--quiet")[0] == 0
    good = json.loads(str(np.load(model)["header"]))["fitted"]["progress_"]
    assert check_progress(dict(good)) == good and good["examples"] == 1000
    bad = {"examples": -1, "loss_sum": float("nan"), "features": 1.5, "labels": [[1.0]], "extra": 0}
    for key, value in bad.items():
        with pytest.raises(ValueError, match=key if key != "labels" else "labels="):
            check_progress({**good, key: value})


def test_a_model_continued_into_its_own_file(halves, tmp_path, capsys):
    """-i m -f m replaces the model file with the continued model (it is read whole
    first, and written atomically), as VW's; other outputs onto an input are refused."""
    d, _, _ = halves
    model, one = tmp_path / "m.npz", tmp_path / "one.npz"
    assert run(capsys, "train", d / "a.svm", "-f", model, "--quiet")[0] == 0
    assert run(capsys, "train", "-i", model, d / "b.svm", "-f", model, "--quiet")[0] == 0
    assert run(capsys, "train", d / "a.svm", d / "b.svm", "-f", one, "--quiet")[0] == 0
    assert model.read_bytes() == one.read_bytes()
    status, _, err = run(capsys, "train", "-i", model, d / "b.svm", "--readable-model", model)
    assert status == 1 and "--readable-model" in err


def test_the_progressive_loss_divides_by_the_weight_sum(tmp_path, capsys):
    """With importance weights, the table's and the summary's mean loss is the summed
    weighted loss over the weights' sum, as VW's (not over the examples' count); the
    model file keeps the sum, which -i continues (the steps differ: AdaGrad's automatic
    ones are set from the rows a run reads first)."""
    import json
    rng = np.random.default_rng(3)
    lines = [f"{rng.choice([-1, 1])} {w} |a x{rng.integers(20)} y{rng.integers(20)} |b z{rng.integers(9)}"
             for w in rng.choice([0.0, 0.5, 1.0, 3.0], size=600)]
    a, b = tmp_path / "a.vw", tmp_path / "b.vw"
    a.write_text("\n".join(lines[:300]) + "\n")
    b.write_text("\n".join(lines[300:]) + "\n")
    weights = [float(line.split()[1]) for line in lines]
    model, first, second = tmp_path / "m.npz", tmp_path / "m1.npz", tmp_path / "m2.npz"
    status, out, err = run(capsys, "train", a, b, "-f", model, "--chunk-rows", 128)
    assert status == 0
    progress = json.loads(str(np.load(model)["header"]))["fitted"]["progress_"]
    assert progress["examples"] == 600 and progress["weight_sum"] == pytest.approx(sum(weights), rel=1e-12)
    mean = float(re.search(r"^average loss = ([0-9.]+)$", err, re.M).group(1))
    assert mean == pytest.approx(progress["loss_sum"] / sum(weights), abs=1e-6)
    assert value(out, "progressive loss") == pytest.approx(mean, abs=1e-6)
    assert abs(mean - progress["loss_sum"] / 600) > 1e-3        # (the count would give another mean)
    assert run(capsys, "train", a, "-f", first, "--chunk-rows", 128, "--quiet")[0] == 0
    assert run(capsys, "train", "-i", first, b, "-f", second, "--chunk-rows", 128, "--quiet")[0] == 0
    continued = json.loads(str(np.load(second)["header"]))["fitted"]["progress_"]
    assert continued["weight_sum"] == progress["weight_sum"] and continued["examples"] == 600


def test_a_progress_entry_without_weight_sums_takes_the_counts(halves, tmp_path, capsys):
    """A model file written before the weight sums were kept (no weight_sum,
    last_weight_sum) loads with the examples' counts as its sums: what they are when
    every weight is 1, as every such file's LIBSVM or unweighted VW input had."""
    import json

    from fastprox.model_io.header import check_progress
    d, _, _ = halves
    model = tmp_path / "m.npz"
    assert run(capsys, "train", d / "a.svm", "-f", model, "--quiet")[0] == 0
    good = json.loads(str(np.load(model)["header"]))["fitted"]["progress_"]
    assert good["weight_sum"] == good["examples"] == 1000
    old = {k: v for k, v in good.items() if k not in ("weight_sum", "last_weight_sum")}
    assert check_progress(dict(old)) == good
    with pytest.raises(ValueError, match="weight_sum"):
        check_progress({**good, "weight_sum": -1.0})


def test_the_holdout_loss_divides_by_the_held_out_weights(tmp_path, capsys):
    """With importance weights, a pass's holdout loss is the held-out rows' summed
    weighted loss over their weights' sum, as VW's: the eager reference's."""
    from fastprox.vw import load_vw
    rng = np.random.default_rng(4)
    lines = [f"{rng.choice([-1, 1])} {w} |a x{rng.integers(30)} y{rng.integers(30)} |b z{rng.integers(9)}"
             for w in rng.choice([0.5, 1.0, 4.0], size=400)]
    data = tmp_path / "w.vw"
    data.write_text("\n".join(lines) + "\n")
    status, out, _ = run(capsys, "train", data, "--passes", 3, "--holdout-period", 5, "--early-terminate", 5,
                         "--chunk-rows", 64, "--schedule", "invsqrt", "--hash-bits", 12, "--quiet")
    assert status == 0
    X, y, w, _ = load_vw(data, hash_bits=12)
    _, losses = holdout_reference(X, y, 3, 5, sample_weight=w, schedule="invsqrt")
    shown = re.search(r"each pass: ([^;]*);", out).group(1).split(", ")
    assert [float(v) for v in shown] == pytest.approx(losses, abs=1e-6)
    _, unweighted = holdout_reference(X, y, 3, 5, schedule="invsqrt")
    assert abs(losses[0] - unweighted[0]) > 1e-3
