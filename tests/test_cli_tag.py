"""`fastprox tag train` and `fastprox tag predict` end to end on small files (CoNLL
columns, CRFsuite attributes, LIBSVM with qid), and the structured model file
(fastprox.structured.model_file) read back exactly and refused when tampered with."""
import io
import json
import pickle
import re
import subprocess
import sys
import zipfile

import numpy as np
import pytest
import scipy.sparse as sp

from fastprox.cli import main
from fastprox.structured.tagger import SequenceTagger, load_tagger, save_tagger

SENTENCES = [
    [("He", "PRP", "B-NP"), ("reckons", "VBZ", "B-VP"), ("the", "DT", "B-NP"), ("deficit", "NN", "I-NP"),
     (".", ".", "O")],
    [("The", "DT", "B-NP"), ("cat", "NN", "I-NP"), ("sat", "VBD", "B-VP"), ("on", "IN", "B-PP"),
     ("the", "DT", "B-NP"), ("mat", "NN", "I-NP"), (".", ".", "O")],
    [("Rates", "NNS", "B-NP"), ("rose", "VBD", "B-VP"), ("in", "IN", "B-PP"), ("May", "NNP", "B-NP")],
]


def conll(path, sentences=SENTENCES, columns=3):
    path.write_text("\n\n".join("\n".join(" ".join(t[:columns]) for t in s) for s in sentences) + "\n")
    return str(path)


def run(capsys, *argv):
    status = main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


def test_train_and_predict_conll(tmp_path, capsys):
    train = conll(tmp_path / "train.txt", SENTENCES * 5)
    test = conll(tmp_path / "test.txt")
    model = str(tmp_path / "m.model")
    status, out, err = run(capsys, "tag", "train", train, "--format", "conll", "--test", test, "--model", model,
                           "--passes", "3", "--seed", "1")
    assert status == 0, err
    lines = err.splitlines()
    assert lines[0].split() == ["average", "since", "example", "current", "current", "current"]
    example, items, errors, features = map(int, lines[2].split()[2:])
    assert example == 1 and items in (4, 5, 7) and 0 < errors <= items and features == 19 * items
    assert [line.split()[2] for line in lines[2:] if line and line[0].isdigit()] == ["1", "2", "4", "8", "16", "32"]
    assert "number of examples = 45" in err and "number of items = 240" in err
    assert "test: 3 sequences, 16 items, per-item accuracy 100.00%" in err
    assert "chunks (conlleval): precision 100.00%, recall 100.00%, F1 100.00" in err
    status, out, err = run(capsys, "tag", "predict", model, test)
    assert status == 0, err
    assert out.splitlines()[:2] == ["He PRP B-NP B-NP", "reckons VBZ B-VP B-VP"]
    assert "per-item accuracy 100.00%" in err
    unlabelled = conll(tmp_path / "raw.txt", columns=2)
    pred = tmp_path / "pred.txt"
    status, out, err = run(capsys, "tag", "predict", model, unlabelled, "--out", str(pred))
    assert status == 0 and out == "" and err == ""
    assert pred.read_text().splitlines()[2] == "the DT B-NP"
    empty = tmp_path / "empty.txt"       # (no item: no accuracy, not 100%)
    empty.write_text("")
    status, out, err = run(capsys, "tag", "predict", model, str(empty))
    assert status == 0 and out == "" and f"{empty}: 0 sequences, 0 items, per-item accuracy n/a" in err


@pytest.mark.parametrize("fmt, text", [("conll", ""), ("conll", "-DOCSTART- -X- O\n\n"), ("conllu", "\n")])
def test_training_files_without_a_sequence_are_named(tmp_path, capsys, fmt, text):
    """tag train of a CoNLL or CoNLL-U file without a sequence said "fit needs at
    least one sequence", naming no file (CRFsuite and LIBSVM files were named), and
    an empty --test was scored after the training as "0 sequences, n/a"; both are
    refused naming the file, the test before any training (as parse train does)."""
    empty = tmp_path / "empty"
    empty.write_text(text)
    status, out, err = run(capsys, "tag", "train", str(empty), "--format", fmt)
    assert (status, out, err) == (1, "", f"fastprox: error: {empty}: no sequences to train on (the files hold no "
                                         f"items)\n")
    train = conll(tmp_path / "train.txt") if fmt == "conll" else conllu(tmp_path / "train.conllu")
    status, out, err = run(capsys, "tag", "train", train, "--format", fmt, "--test", str(empty))
    assert (status, out, err) == (1, "", f"fastprox: error: --test {empty}: no sequences to score the model on\n")


@pytest.mark.parametrize("fmt, text, why", [
    ("crfsuite", "He PRP B-NP\nruns VBZ B-VP\n\n", "fields are separated by tabs; columns separated by spaces "
                                                     "are CoNLL's: --format conll"),
    ("libsvm", "1 qid:1\n2 qid:1\n", "every row is empty"),
])
def test_training_data_without_a_feature_is_refused(tmp_path, capsys, fmt, text, why):
    """A training set in which no item has a feature teaches nothing: refused, saying
    why in the format's terms (found by hand: a CoNLL file given as --format crfsuite
    trained, each line's whole text taken as a label without attributes)."""
    path = tmp_path / "train.txt"
    path.write_text(text)
    status, out, err = run(capsys, "tag", "train", str(path), "--format", fmt, "--model", str(tmp_path / "m"))
    assert status == 1 and f"{path}: no item has a feature, nothing to learn from" in err and why in err
    assert not (tmp_path / "m").exists()


def test_predict_names_a_file_in_the_other_format_and_a_missing_label_column(tmp_path, capsys):
    """tag predict of CoNLL text with a CRFsuite model (each line's text read as a label
    without attributes) said the labels were unknown and advised --unknown-labels
    wrong; a CoNLL file whose later lines lack the label column advised Python's
    label=None. Each is now said in the command's terms."""
    crfsuite = tmp_path / "a.crf"
    crfsuite.write_text("B-NP\tw=He\tp=PRP\nB-VP\tw=runs\tp=VBZ\n\nB-NP\tw=The\nI-NP\tw=cat\n")
    model = tmp_path / "crf.model"
    assert run(capsys, "tag", "train", str(crfsuite), "--format", "crfsuite", "--quiet", "--model", str(model))[0] == 0
    status, out, err = run(capsys, "tag", "predict", str(model), conll(tmp_path / "c.txt"))
    assert status == 1 and out == "" and err.startswith(
        f"fastprox: error: {tmp_path / 'c.txt'}: no item has an attribute, nothing to tag by (the model reads "
        f"CRFsuite's lines")
    conll_model = tmp_path / "conll.model"
    assert run(capsys, "tag", "train", conll(tmp_path / "c.txt"), "--format", "conll", "--quiet", "--model",
               str(conll_model))[0] == 0
    mixed = tmp_path / "mixed.txt"
    mixed.write_text("He PRP B-NP\nruns VBZ\n")
    status, out, err = run(capsys, "tag", "predict", str(conll_model), str(mixed))
    assert status == 1 and err == (f"fastprox: error: {mixed}:2: 2 columns, expected 3 (w pos y): the label "
                                   f"column 'y' is missing. Every item of labelled data needs its label "
                                   f"(fastprox tag predict reads files whose lines all leave it out)\n")


def test_train_predict_crfsuite_and_libsvm(tmp_path, capsys):
    items = tmp_path / "train.crfsuite"
    items.write_text("B-NP\tw=He\tpos=PRP\nB-VP\tw=runs\tpos=VBZ:2.0\n\nB-NP\tw=She\tpos=PRP\nB-VP\tw=sat\n\n" * 4)
    model = str(tmp_path / "a.model")
    assert run(capsys, "tag", "train", str(items), "--format", "crfsuite", "--model", model, "--quiet")[0] == 0
    status, out, err = run(capsys, "tag", "predict", model, str(items))
    assert status == 0, err
    assert out.split("\n\n")[0].split() == ["B-NP", "B-VP"]
    svm = tmp_path / "train.svm"
    svm.write_text("1 qid:1 1:1 3:1\n2 qid:1 2:1\n1 qid:2 1:1\n2 qid:2 2:1 3:0.5\n" * 3)
    model = str(tmp_path / "b.model")
    status, out, err = run(capsys, "tag", "train", str(svm), "--format", "libsvm", "--model", model, "--test",
                           str(svm), "--loss", "log", "--passes", "5")
    assert status == 0, err
    assert "per-item accuracy 100.00%" in err
    status, out, err = run(capsys, "tag", "predict", model, str(svm))
    assert status == 0, err
    assert out.split("\n\n")[0].split() == ["1", "2"]


@pytest.mark.parametrize("lines, message", [
    ("He PRP B-NP\nruns VBZ\n", "train.txt:2: 2 columns, expected 3"),
    ("He PRP B-NP extra\n", "train.txt:1: 4 columns, expected 3"),
])
def test_malformed_training_files_name_file_and_line(tmp_path, capsys, lines, message):
    (tmp_path / "train.txt").write_text(lines)
    status, out, err = run(capsys, "tag", "train", str(tmp_path / "train.txt"), "--format", "conll")
    assert status == 1 and message in err and "Traceback" not in err
    assert err.startswith("fastprox: error:")


#: A learner's or a reader's value out of range, and the message in the options' words.
BAD_VALUES = {("--passes", "0"): "--passes 0 must be >= 1", ("--alpha", "-1"): "--alpha -1.0 must be >= 0.0",
              ("--l1-ratio", "3"): "--l1-ratio 3.0 must be >= 0.0 and <= 1.0",
              ("--rda-rho", "-1"): "--rda-rho -1.0 must be >= 0.0",
              ("--seed", "-1"): "argument --seed: must be an integer from 0 to 4294967295, not '-1'",
              ("--seed", "4294967296"): "argument --seed: must be an integer from 0 to 4294967295",
              ("--update", "ftrl", "--schedule", "constant"):
                  "--update ftrl is not defined with --schedule constant; with 'ftrl' use --schedule in",
              ("--min-count", "0"): "--min-count must be a positive integer, not 0",
              ("--bits", "0"): "--bits must be an integer in 1..62, not 0",
              ("--columns", "w,w,y"): "--columns must not repeat a name",
              ("--bits", "10", "--min-count", "2"):     # (it said "--bits None", which the option does not take)
                  "--min-count counts features in a vocabulary; with bits (hashing) nothing is counted: "
                  "pass --min-count 1 or drop --bits"}


@pytest.mark.parametrize("options", BAD_VALUES)
def test_bad_values_are_named_by_their_options(tmp_path, capsys, options):
    """tag train's and parse train's values out of range are refused in the options'
    words, as train's are: they named the estimator's parameters (max_iter=0,
    l1_ratio=3.0, min_count, bits) or none (scikit-learn's "Seed must be between 0 and
    2**32 - 1"). They are the command line's errors, exit status 2, found before a file is
    read (they exited 1, as a file's error, once the data were read and the training
    began): a malformed training file does not hide them."""
    malformed = tmp_path / "bad.txt"
    malformed.write_text("He PRP B-NP\nruns\n")
    status, out, err = run(capsys, "tag", "train", str(malformed), "--format", "conll", "--quiet", *options)
    assert status == 2 and err.startswith(f"fastprox: error: {BAD_VALUES[options]}"), err
    status, out, err = run(capsys, "tag", "train", conll(tmp_path / "t.txt"), "--format", "conll", "--quiet",
                           *options)
    assert status == 2 and out == "" and err.count("\n") == 1
    assert err.startswith(f"fastprox: error: {BAD_VALUES[options]}"), err
    if options[0] in ("--min-count", "--columns"):
        return
    treebank = tmp_path / "t.conllu"
    treebank.write_text("1\tHe\the\tPRON\tPRP\t_\t2\tnsubj\t_\t_\n2\truns\trun\tVERB\tVBZ\t_\t0\troot\t_\t_\n\n")
    options = ("--bits", "40") if options[0] == "--bits" else options
    status, out, err = run(capsys, "parse", "train", str(treebank), "--quiet", *options)
    expected = BAD_VALUES[options] if options in BAD_VALUES else "--bits must be an integer in 1..31"
    assert status == 2 and out == "" and err.startswith(f"fastprox: error: {expected}"), err


def test_unknown_gold_labels_stop_or_are_scored_wrong_and_foreign_files_refused(tmp_path, capsys):
    model = str(tmp_path / "m.model")
    assert run(capsys, "tag", "train", conll(tmp_path / "t.txt"), "--format", "conll", "--model", model,
               "--quiet", "--passes", "10")[0] == 0
    bad = tmp_path / "bad.txt"
    bad.write_text("He PRP B-NP\nsaw VBD B-XYZ\n")
    out_path = tmp_path / "pred.txt"
    status, out, err = run(capsys, "tag", "predict", model, str(bad), "--out", str(out_path))
    assert status == 1 and f"error: {bad}:2: label 'B-XYZ' is not one the model was trained on (1 item(s)" in err
    assert "--unknown-labels wrong" in err and not out_path.exists() and "Traceback" not in err
    status, out, err = run(capsys, "tag", "train", conll(tmp_path / "t.txt"), "--format", "conll", "--test",
                           str(bad), "--model", str(tmp_path / "m2.model"))
    assert status == 1 and f"{bad}:2: label 'B-XYZ'" in err and "average" not in err   # before training
    assert not (tmp_path / "m2.model").exists()
    status, out, err = run(capsys, "tag", "predict", model, str(bad), "--unknown-labels", "wrong")
    assert status == 0 and f"warning: {bad}:2: label 'B-XYZ' is not one the model was trained on (1 item(s)" in err
    assert "per-item accuracy 50.00%" in err
    status, out, err = run(capsys, "tag", "predict", str(bad), str(bad))
    assert status == 1 and "not a readable fastprox structured model file" in err
    assert "Traceback" not in err


def test_model_file_round_trip_and_tampering(tmp_path):
    rng = np.random.default_rng(0)
    X = sp.random(30, 8, density=0.4, format="csr", random_state=rng)
    lengths = [10, 5, 15]
    model = SequenceTagger(loss="log", penalty="l1", alpha=1e-3, max_iter=3, random_state=0)
    model.fit(X, np.array(["a", "b", "c"])[rng.integers(0, 3, 30)], lengths)
    path = tmp_path / "m.model"
    save_tagger(model, path, {"reader": {"format": "libsvm"}, "vocabulary": np.arange(4)})
    loaded, extras = load_tagger(path)
    for name in ("coef_", "intercept_", "transitions_", "start_", "stop_", "classes_"):
        assert np.array_equal(getattr(loaded, name), getattr(model, name)), name
    assert loaded.get_params() == model.get_params() and loaded.t_ == model.t_
    assert np.array_equal(loaded.predict_marginals(X, lengths), model.predict_marginals(X, lengths))
    assert np.array_equal(extras["vocabulary"], np.arange(4))
    assert np.array_equal(pickle.loads(pickle.dumps(loaded)).predict(X, lengths), model.predict(X, lengths))
    with pytest.raises(ValueError, match="read from a model file"):
        loaded.partial_fit(X, model.classes_[np.zeros(30, int)], lengths)

    def tampered(edit):
        with zipfile.ZipFile(path) as z:
            members = {n: z.read(n) for n in z.namelist()}
        edit(members)
        out = tmp_path / "t.model"
        with zipfile.ZipFile(out, "w") as z:
            for n, data in members.items():
                z.writestr(n, data)
        return out

    def header(members, change):
        h = json.loads(str(np.load(io.BytesIO(members["header.npy"]))))
        change(h)
        buf = io.BytesIO()
        np.save(buf, np.array(json.dumps(h)))
        members["header.npy"] = buf.getvalue()

    def npy(members, name, value):
        buf = io.BytesIO()
        np.save(buf, value)
        members[f"{name}.npy"] = buf.getvalue()

    def huge():
        """An .npy member that declares 10^14 float64 values and holds none."""
        buf = io.BytesIO()
        np.lib.format.write_array_header_1_0(buf, {"descr": "<f8", "fortran_order": False, "shape": (10**14,)})
        return buf.getvalue()

    cases = [
        (lambda m: header(m, lambda h: h.update(version=9)), "version 9"),
        (lambda m: header(m, lambda h: h.update({"class": "Other"})), "holds a Other, not a SequenceTagger"),
        (lambda m: header(m, lambda h: h["params"].update(loss="squared")), "loss"),
        (lambda m: npy(m, "intercept", np.array([np.nan, 0, 0])), "NaN or infinity"),
        (lambda m: npy(m, "coef_rows", np.array([5, 3], dtype=np.int64)), "coef_rows"),
        (lambda m: npy(m, "classes", np.array(["a", "a", "b"])), "distinct"),
        (lambda m: npy(m, "unpenalized", np.zeros(4)), "unpenalized"),
        (lambda m: m.pop("coef_values.npy"), "coef_values"),
        (lambda m: npy(m, "intercept", np.array([object()] * 3, dtype=object)), "object values"),
        (lambda m: m.update({"intercept.npy": huge()}), "needs .* of memory"),
    ]
    for edit, message in cases:
        with pytest.raises(ValueError, match=message):
            load_tagger(tampered(edit))


def test_the_command_line_starts_light():
    """`fastprox tag --help` imports neither NumPy nor scikit-learn."""
    code = ("import sys\nfrom fastprox.cli import build_parser\nbuild_parser('tag')\n"
            "print(sorted(m for m in ('numpy', 'sklearn', 'scipy') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


@pytest.mark.parametrize("command, says", [
    ("parse", ["--no-average keep the last iterate, not the averaged one (DependencyParser(average=False); "
               "--average 0 says the same) (default: off)",
               "as the estimator's average; default: 1, from the first example"]),
    ("tag", ["as the estimator's average (default: off)"]),
])
def test_the_averaging_options_help_says_what_happens_by_default(command, says, capsys):
    """parse train's --no-average read '(default: True)', as if it were on, and
    --average '(default: True)' for a number of steps: a flag's default is off, and
    the parser's averaging starts at step 1."""
    with pytest.raises(SystemExit) as stop:
        main([command, "train", "--help"])
    assert stop.value.code == 0
    text = " ".join(capsys.readouterr().out.split())
    for phrase in says:
        assert phrase in text
    assert "(default: True)" not in text


def test_the_averaging_refusal_names_the_option_that_turns_it_off(tmp_path, capsys):
    """parse train averages by default, so that --penalty berhu alone was refused with
    'or turn average off', naming no option: the structured commands name --average 0,
    train (where the user gave --average) says to drop it."""
    treebank = tmp_path / "t.conllu"
    treebank.write_text("1\tHe\the\tPRON\tPRP\t_\t2\tnsubj\t_\t_\n2\truns\trun\tVERB\tVBZ\t_\t0\troot\t_\t_\n\n")
    status, _, err = run(capsys, "parse", "train", str(treebank), "--quiet", "--bits", "10", "--penalty", "berhu")
    assert status == 2 and err.endswith("; or turn averaging off: --average 0 (parse train averages by default).\n")
    assert run(capsys, "parse", "train", str(treebank), "--quiet", "--bits", "10", "--penalty", "berhu",
               "--average", "0")[0] == 0
    rows = tmp_path / "rows.svm"
    rows.write_text("1 1:1\n-1 2:1\n")
    status, _, err = run(capsys, "train", str(rows), "--quiet", "--update", "ftrl", "--penalty", "l2", "--average")
    assert status == 2 and "; or drop --average. (--schedule None chose 'adagrad'" in err     # (an option's value)


def test_templates_file_and_hashing(tmp_path, capsys):
    """--templates reads a CRF++ template file; --bits hashes its features; the model
    file keeps both, so predict needs nothing else."""
    templates = tmp_path / "templates"
    templates.write_text("# words and tags\nU00:%x[0,0]\nU01:%x[0,1]\nU02:%x[-1,1]/%x[0,1]\n\nB\n")
    model = str(tmp_path / "m.model")
    train = conll(tmp_path / "train.txt", SENTENCES * 5)
    status, out, err = run(capsys, "tag", "train", train, "--format", "conll", "--templates", str(templates),
                           "--bits", "12", "--model", model, "--test", train, "--passes", "5")
    assert status == 0, err
    assert "total feature number = 3072" in err and "per-item accuracy 100.00%" in err     # 3 x 2^10
    status, out, err = run(capsys, "tag", "predict", model, train)
    assert status == 0 and "per-item accuracy 100.00%" in err


def test_info_counts_crfpp_unigram_templates_and_says_whether_b_is_there(tmp_path, capsys):
    """info counted a CRF++ file's B line (the bigram template: label transitions) as a
    template, "3 templates" for two U lines and B; it counts the U templates, as CRF++'s
    users do, and says whether B is there (without it the model has no transitions)."""
    train = conll(tmp_path / "train.txt", SENTENCES * 2)
    templates = tmp_path / "templates"
    model = str(tmp_path / "m.model")
    for text, said in [("U00:%x[0,0]\n# tags\nU01:%x[0,1]\n\nB\n", "2 CRF++ U templates and B (label bigrams)"),
                       ("U00:%x[0,0]\n", "1 CRF++ U template, no B (no label bigrams)")]:
        templates.write_text(text)
        assert run(capsys, "tag", "train", train, "--format", "conll", "--templates", str(templates), "--model", model,
                   "--quiet")[0] == 0
        assert run(capsys, "info", model)[1].splitlines()[-1] == f"  input      CoNLL columns w pos y (label y), {said}"


def test_the_columns_groups_are_built_for_a_group_penalty_only(tmp_path, capsys, monkeypatch):
    """A hashed extractor's groups_ is one int64 a column: `tag train --bits 30`
    built those 5 GB (32 s) for any penalty, before the state's memory check
    refused the width; they are read for a group penalty only."""
    from fastprox.structured.features import TemplateFeatures
    train = conll(tmp_path / "train.txt", SENTENCES * 2)
    real = TemplateFeatures.groups_
    reads = []
    monkeypatch.setattr(TemplateFeatures, "groups_", property(lambda self: reads.append(1) or real.fget(self)))
    assert run(capsys, "tag", "train", train, "--format", "conll", "--bits", "12", "--quiet")[0] == 0
    assert reads == []
    status, _, err = run(capsys, "tag", "train", train, "--format", "conll", "--bits", "12", "--quiet",
                         "--penalty", "l1_l2", "--alpha", "0.01")
    assert status == 0, err
    assert reads == [1]


def test_average_option_trains_the_estimators_averaged_model(tmp_path, capsys):
    from fastprox.structured.features import TemplateFeatures
    from fastprox.structured.io import labels_and_lengths, read_conll
    train = conll(tmp_path / "train.txt", SENTENCES * 5)
    model = str(tmp_path / "m.model")
    argv = ("tag", "train", train, "--format", "conll", "--penalty", "l1", "--alpha", "1e-3", "--passes", "3",
            "--seed", "1", "--model", model)
    status, _, err = run(capsys, *argv, "--average", "6")
    assert status == 0, err
    loaded, _ = load_tagger(model)
    assert loaded.get_params()["average"] == 6
    sentences = list(read_conll(train, ("w", "pos", "y"), label="y"))
    X = TemplateFeatures("conll2000").fit_transform(sentences)
    y, lengths = labels_and_lengths(sentences)
    python = SequenceTagger(**loaded.get_params()).fit(X, y, lengths)
    for name in ("coef_", "intercept_", "transitions_"):
        assert np.array_equal(getattr(loaded, name), getattr(python, name)), name
    status, _, err = run(capsys, *argv)                      # the default: the last iterate
    assert status == 0, err
    last = load_tagger(model)[0]
    assert last.get_params()["average"] == 0 and not np.array_equal(last.coef_, loaded.coef_)
    status, _, err = run(capsys, *argv, "--average", "-3")
    assert status != 0 and "--average -3 must be" in err and "Traceback" not in err


def test_info_describes_tagger_and_parser_files(tmp_path, capsys):
    """fastprox info describes the structured model files too (it refused them as
    flat model files with an unknown member): class, width, a tagger's labels and
    how its input becomes rows."""
    items = tmp_path / "train.crfsuite"
    items.write_text("B-NP\tw=He\tpos=PRP\nB-VP\tw=runs\n\n" * 3)
    model = str(tmp_path / "a.model")
    assert run(capsys, "tag", "train", str(items), "--format", "crfsuite", "--model", model, "--quiet")[0] == 0
    status, out, err = run(capsys, "info", model)
    assert status == 0 and err == ""
    assert out.splitlines()[1:] == ["  model      SequenceTagger(loss='log', penalty='l2')", "  features   3",
                                    "  classes    B-NP B-VP", "  input      CRFsuite attributes"]
    treebank = tmp_path / "t.conllu"
    treebank.write_text("1\tdogs\tdog\tNOUN\tNNS\t_\t2\tnsubj\t_\t_\n2\tbark\tbark\tVERB\tVBP\t_\t0\troot\t_\t_\n\n")
    parser = str(tmp_path / "p.model")
    assert run(capsys, "parse", "train", str(treebank), "--model", parser, "--bits", "10", "--quiet")[0] == 0
    status, out, err = run(capsys, "info", parser)
    assert status == 0 and out.splitlines()[1].startswith("  model      DependencyParser(")
    assert re.fullmatch(r"  input      CoNLL-U, \d+ templates", out.splitlines()[-1])



@pytest.mark.parametrize("command, advice", [("tag", "a smaller --bits, or a larger --min-count"),
                                             ("parse", "a smaller --bits")])
def test_out_of_memory_advises_the_commands_own_options(tmp_path, capsys, monkeypatch, command, advice):
    """A MemoryError while training (tag train --bits 40 asks NumPy for 4.75 TiB) was
    worded as train's: 'hash them into fewer buckets) or a smaller --chunk-rows', an
    option tag and parse do not have; each now names its own."""
    from fastprox.structured import _estimator

    def refuse(self, data, incremental):
        raise MemoryError("Unable to allocate 4.75 TiB for an array with shape (652835028992,) and data type int64")

    monkeypatch.setattr(_estimator.StructuredEstimator, "_training", refuse)
    data = conll(tmp_path / "train.txt") if command == "tag" else str(tmp_path / "train.conllu")
    if command == "parse":
        (tmp_path / "train.conllu").write_text("1\tHe\the\tPRON\tPRP\t_\t2\tnsubj\t_\t_\n"
                                               "2\tsat\tsit\tVERB\tVBD\t_\t0\troot\t_\t_\n\n")
    argv = [command, "train", data] + (["--format", "conll"] if command == "tag" else [])
    status, _, err = run(capsys, *argv, "--model", str(tmp_path / "m.model"), "--quiet")
    assert status == 1 and "out of memory (Unable to allocate 4.75 TiB" in err
    assert advice in err and "--chunk-rows" not in err


@pytest.mark.parametrize("command, advice", [("tag", "a smaller --bits, or a larger --min-count"),
                                             ("parse", "a smaller --bits")])
def test_a_state_too_large_advises_the_commands_own_options(tmp_path, capsys, monkeypatch, command, advice):
    """The state's memory check (`tag train --bits 30`: 133 GiB) advised train's
    'hash them into fewer buckets, or drop rare ones'; tag and parse name their own."""
    from fastprox import _validation
    monkeypatch.setattr(_validation, "available_memory", lambda: 1 << 20)
    data = conll(tmp_path / "train.txt") if command == "tag" else str(tmp_path / "train.conllu")
    if command == "parse":
        (tmp_path / "train.conllu").write_text("1\tHe\the\tPRON\tPRP\t_\t2\tnsubj\t_\t_\n"
                                               "2\tsat\tsit\tVERB\tVBD\t_\t0\troot\t_\t_\n\n")
    argv = [command, "train", data, "--bits", "22"] + (["--format", "conll"] if command == "tag" else [])
    status, _, err = run(capsys, *argv, "--quiet")
    assert status == 1 and "the model's state for" in err and "memory is available; use fewer features (" in err
    assert advice in err and "buckets" not in err


#: SENTENCES as CoNLL-U: UPOS, XPOS (the PTB tag), FEATS (`_` for most words).
_UPOS = {"PRP": "PRON", "VBZ": "VERB", "DT": "DET", "NN": "NOUN", ".": "PUNCT", "VBD": "VERB", "IN": "ADP",
         "NNS": "NOUN", "NNP": "PROPN"}
_FEATS = {"NN": "Number=Sing", "NNS": "Number=Plur", "VBD": "Tense=Past"}


def conllu(path, sentences=SENTENCES, blank=()):
    """``sentences`` as a CoNLL-U file with comments, a multiword token and an empty
    node; the fields named in ``blank`` written ``_``."""
    blocks = []
    for k, sentence in enumerate(sentences):
        lines = [f"# sent_id = s{k}", "# text = " + " ".join(w for w, _, _ in sentence)]
        for i, (word, xpos, _) in enumerate(sentence, 1):
            fields = [str(i), word, word.lower(), _UPOS[xpos], xpos, _FEATS.get(xpos, "_"), str(i - 1),
                      "dep" if i > 1 else "root", "_", "_"]
            for name in blank:
                fields[("UPOS", "XPOS", "FEATS").index(name) + 3] = "_"
            if i == 2:
                lines.append(f"2-3\t{word}x\t_\t_\t_\t_\t_\t_\t_\t_")
            lines.append("\t".join(fields))
            if i == 1:
                lines.append("1.1\tgone\tgo\tVERB\tVBN\t_\t_\t_\t0:root\t_")
        blocks.append("\n".join(lines) + "\n")
    path.write_text("\n".join(blocks) + "\n")
    return str(path)


@pytest.mark.parametrize("label, field", [(None, 3), ("XPOS", 4), ("FEATS", 5)])
def test_conllu_taggers_train_predict_and_write_the_label_field(tmp_path, capsys, label, field):
    """tag train --format conllu trains a UPOS (XPOS, FEATS) tagger from CoNLL-U, as
    UDPipe does, and tag predict writes the predicted tag into that field, every other
    field and line as it was (a UDPipe user could not train one from the shell)."""
    train = conllu(tmp_path / "train.conllu", SENTENCES * 5)
    test = conllu(tmp_path / "test.conllu")
    model = str(tmp_path / "m.model")
    options = ("--label", label) if label else ()
    status, out, err = run(capsys, "tag", "train", train, "--format", "conllu", *options, "--test", test,
                           "--model", model, "--passes", "5")
    assert status == 0, err
    assert "test: 3 sequences, 16 items, per-item accuracy 100.00%" in err and "chunks" not in err
    status, out, err = run(capsys, "info", model)
    assert out.splitlines()[-1] == f"  input      CoNLL-U (label {label or 'UPOS'}), 20 templates"
    blanked = conllu(tmp_path / "raw.conllu", blank=[label or "UPOS"])     # what a tagger of raw text reads
    pred = tmp_path / "pred.conllu"
    status, out, err = run(capsys, "tag", "predict", model, blanked, "--out", str(pred))
    assert status == 0 and out == "" and err == ""          # (no label: not scored)
    assert pred.read_text() == (tmp_path / "test.conllu").read_text()
    status, out, err = run(capsys, "tag", "predict", model, test)
    assert status == 0 and out == (tmp_path / "test.conllu").read_text()
    assert f"{test}: 3 sequences, 16 items, per-item accuracy 100.00%" in err
    if label != "FEATS":        # (FEATS's _ is a value)
        partly = tmp_path / "partly.conllu"
        lines = (tmp_path / "test.conllu").read_text().splitlines()
        at = lines.index("1\tThe\tthe\tDET\tDT\t_\t0\troot\t_\t_") + 1
        fields = lines[at - 1].split("\t")
        fields[field] = "_"
        lines[at - 1] = "\t".join(fields)
        partly.write_text("\n".join(lines) + "\n")
        status, out, err = run(capsys, "tag", "predict", model, str(partly))
        assert status == 0 and out == (tmp_path / "test.conllu").read_text()
        assert err == (f"fastprox: warning: {partly}:{at}: word 1 has no {label or 'UPOS'} ('_'); every word of "
                       f"labelled data needs its label: fill it in (fastprox tag predict reads files whose words "
                       f"all leave it out); the file is tagged, not scored\n")


def test_conllu_tagger_options_and_templates(tmp_path, capsys):
    """The reader options that do not fit the format are command-line errors (exit
    status 2); with CoNLL-U a CRF++ template numbers the ten fields from 0 (ID), and one
    that reads the label field is refused."""
    train = conllu(tmp_path / "train.conllu", SENTENCES * 5)
    for options, message in [
            (("--format", "conllu", "--label", "LEMMA"), "--label 'LEMMA': a CoNLL-U tagger predicts UPOS, XPOS, FEATS"),
            (("--format", "conllu", "--columns", "w,pos,y"), "--columns names CoNLL's columns; CoNLL-U's are its ten"),
            (("--format", "crfsuite", "--label", "y"), "--label is for CoNLL and CoNLL-U files"),
            (("--format", "conll", "--label", "z"), "--label 'z' is not one of --columns None")]:
        status, out, err = run(capsys, "tag", "train", train, "--quiet", *options)
        assert status == 2 and err.startswith(f"fastprox: error: {message}"), err
    templates = tmp_path / "templates"
    templates.write_text("U00:%x[0,1]\nU01:%x[-1,1]/%x[0,1]\nB\n")
    model = str(tmp_path / "m.model")
    status, out, err = run(capsys, "tag", "train", train, "--format", "conllu", "--templates", str(templates),
                           "--model", model, "--test", train, "--passes", "5")
    assert status == 0 and "per-item accuracy 100.00%" in err
    assert run(capsys, "info", model)[1].splitlines()[-1] == ("  input      CoNLL-U (label UPOS), 2 CRF++ U templates "
                                                              "and B (label bigrams)")
    templates.write_text("U00:%x[0,3]\n")
    status, out, err = run(capsys, "tag", "train", train, "--format", "conllu", "--templates", str(templates))
    assert status == 1 and "reads the label column 'UPOS', which is not known when predicting" in err


def test_crfsuite_items_with_placeholder_labels_are_tagged_not_scored(tmp_path, capsys):
    """CRFsuite's items begin with a label, also in the data `crfsuite tag` tags: it
    reads the first field as the label and scores it only with -t, so unlabelled
    data carry placeholders. tag predict stopped at them (labels the model was not
    trained on) or, with --unknown-labels wrong, scored them; a file none of whose
    labels the model knows is now tagged and not scored. A file with known labels is
    scored, and one that mixes known and unknown ones stops as before. Placeholders
    that happen to be a model label (a whole file of O) were scored as gold labels
    without a word: they are scored (gold labels may all be one), with a note. An
    unknown label is named at its item's line (it was the sequence's first)."""
    train = tmp_path / "train.crfsuite"
    train.write_text("B-NP\tw=He\tpos=PRP\nB-VP\tw=runs\tpos=VBZ\n\nB-NP\tw=She\tpos=PRP\nB-VP\tw=sat\n\n" * 4)
    model = str(tmp_path / "m.model")
    assert run(capsys, "tag", "train", str(train), "--format", "crfsuite", "--model", model, "--quiet")[0] == 0
    placeholders = tmp_path / "raw.crfsuite"
    placeholders.write_text("?\tw=He\tpos=PRP\n?\tw=runs\tpos=VBZ\n\nO\tw=She\n_\tw=sat\n")
    status, out, err = run(capsys, "tag", "predict", model, str(placeholders))
    assert status == 0 and out == "B-NP\nB-VP\n\nB-NP\nB-VP\n\n"
    assert err == (f"fastprox: note: {placeholders}: no label of the file is one the model knows ('?', 'O', '_'): "
                   f"read as placeholders, the file is tagged, not scored\n")
    assert run(capsys, "tag", "predict", model, str(placeholders), "--quiet")[2] == ""
    status, out, err = run(capsys, "tag", "predict", model, str(train))
    assert status == 0 and f"{train}: 8 sequences, 16 items, per-item accuracy 100.00%" in err
    same = tmp_path / "same.crfsuite"       # (placeholders that are a model label: scored, with a note)
    same.write_text("B-NP\tw=He\tpos=PRP\nB-NP\tw=runs\tpos=VBZ\n\nB-NP\tw=She\n")
    status, out, err = run(capsys, "tag", "predict", model, str(same))
    assert status == 0 and err == (f"fastprox: note: {same}: every item's label is 'B-NP', one of the model's: "
                                   f"scored as gold labels; if they are placeholders (crfsuite tag scores only "
                                   f"with -t), the scores mean nothing (--quiet prints none)\n"
                                   f"{same}: 2 sequences, 3 items, per-item accuracy 66.67%\n"
                                   f"{same}: chunks (conlleval): precision 66.67%, recall 66.67%, F1 66.67 (3 "
                                   f"chunks, 3 found, 2 correct)\n")
    assert run(capsys, "tag", "predict", model, str(same), "--quiet")[2] == ""
    empty = tmp_path / "empty.crfsuite"     # (as an empty CoNLL file; was a note: "no label ... knows ()")
    empty.write_text("")
    assert run(capsys, "tag", "predict", model, str(empty)) == (
        0, "", f"{empty}: 0 sequences, 0 items, per-item accuracy n/a\n")
    mixed = tmp_path / "mixed.crfsuite"     # (the unknown label's own line: it was the sequence's first)
    mixed.write_text("B-NP\tw=He\n@weight:2\n?\tw=runs\n")
    status, out, err = run(capsys, "tag", "predict", model, str(mixed))
    assert status == 1 and err == (f"fastprox: error: {mixed}:3: label '?' is not one the model was trained on (1 "
                                   f"item(s) have such labels): train on data that has it, or pass "
                                   f"--unknown-labels wrong to score those items as errors (as conlleval does)\n")
    status, out, err = run(capsys, "tag", "train", str(train), "--format", "crfsuite", "--quiet", "--test", str(mixed))
    assert status == 1 and f"{mixed}:3: label '?'" in err


def conlleval_accuracy(text):
    """conlleval's accuracy of a file of `word ... gold predicted` lines: every line
    but blank ones (and -X- boundaries) is a token, right when its last two fields
    are equal (its source: `if ($firstItem ne $boundary) {...; $tokenCounter++}`)."""
    tokens = [line.split() for line in text.splitlines() if line.strip() and line.split()[0] != "-X-"]
    return 100 * sum(t[-1] == t[-2] for t in tokens) / len(tokens)


def test_accuracy_counts_docstart_lines_as_conlleval_does(tmp_path, capsys):
    """conlleval counts a -DOCSTART- line as a token (only blank and -X- lines are
    boundaries), tagged right in the file tag predict writes (it repeats the line's
    label); the per-item accuracy skipped them, so it differed from conlleval's on
    CoNLL-2003 files. Files without them (CoNLL-2000's) score as before."""
    train = conll(tmp_path / "train.txt", SENTENCES * 5)
    model = str(tmp_path / "m.model")
    assert run(capsys, "tag", "train", train, "--format", "conll", "--model", model, "--quiet", "--passes", "1",
               "--no-shuffle")[0] == 0
    wrong = [[(w, p, "O") for w, p, _ in s] for s in SENTENCES]        # (gold labels the model misses)
    docs = tmp_path / "docs.txt"
    docs.write_text("-DOCSTART- -X- O\n\n" + "\n\n".join("\n".join(" ".join(t) for t in s) for s in SENTENCES[:2])
                    + "\n\n-DOCSTART- -X- O\n\n" + "\n".join(" ".join(t) for t in wrong[2]) + "\n")
    pred = tmp_path / "pred.txt"
    status, out, err = run(capsys, "tag", "predict", model, str(docs), "--out", str(pred))
    assert status == 0, err
    accuracy = conlleval_accuracy(pred.read_text())
    assert 0 < accuracy < 100
    assert (f"{docs}: 3 sequences, 16 items, per-item accuracy {accuracy:.2f}% (and 2 -DOCSTART- lines, tagged "
            f"right, as conlleval counts them)") in err
    status, out, err = run(capsys, "tag", "train", train, "--format", "conll", "--quiet", "--passes", "1",
                           "--no-shuffle", "--test", str(docs))
    assert f"test: 3 sequences, 16 items, per-item accuracy {accuracy:.2f}% (and 2 -DOCSTART-" in err
    plain = conll(tmp_path / "plain.txt", SENTENCES[:2] + wrong[2:])
    status, out, err = run(capsys, "tag", "predict", model, plain, "--out", str(pred))
    assert f"per-item accuracy {conlleval_accuracy(pred.read_text()):.2f}%\n" in err


def test_a_bare_docstart_line_is_written_as_read_and_not_counted(tmp_path, capsys):
    """A bare one-field -DOCSTART- in a file of three columns was written back as
    "-DOCSTART- -DOCSTART-" and counted as an item tagged right; conlleval stops at
    either ("unexpected number of features: 2 (4)"), so it is written as it was read
    and not counted. A -DOCSTART- line with the file's columns still is, one after
    the last sentence too (it was dropped from the written file)."""
    train = conll(tmp_path / "train.txt", SENTENCES * 5)
    model = str(tmp_path / "m.model")
    assert run(capsys, "tag", "train", train, "--format", "conll", "--model", model, "--quiet")[0] == 0
    docs = tmp_path / "docs.txt"
    docs.write_text("-DOCSTART-\n\n" + "\n".join(" ".join(t) for t in SENTENCES[0]) + "\n\n-DOCSTART- -X- O\n\n"
                    + "\n".join(" ".join(t) for t in SENTENCES[1]) + "\n\n-DOCSTART- -X- O\n")
    status, out, err = run(capsys, "tag", "predict", model, str(docs))
    assert status == 0, err
    assert out.splitlines()[:3] == ["-DOCSTART-", "", "He PRP B-NP B-NP"] and "-DOCSTART- -X- O O" in out
    assert out.endswith(". . O O\n\n-DOCSTART- -X- O O\n")       # (the last one was dropped)
    assert "2 sequences, 12 items, per-item accuracy 100.00% (and 2 -DOCSTART- lines, tagged right" in err


def test_unlabelled_files_on_standard_input_are_tagged(tmp_path, capsys, monkeypatch):
    """A file to tag is read again when it turns out unlabelled: from standard input the
    second read found nothing, and tag predict wrote nothing with exit status 0 (CoNLL
    and CoNLL-U alike). Standard input is named <stdin> in the scores, not "-"."""
    cases = [(conll(tmp_path / "train.txt", SENTENCES * 5), "conll", conll(tmp_path / "raw.txt", columns=2)),
             (conllu(tmp_path / "train.conllu", SENTENCES * 5), "conllu",
              conllu(tmp_path / "raw.conllu", blank=["UPOS"]))]
    for train, fmt, raw in cases:
        model = str(tmp_path / f"{fmt}.model")
        assert run(capsys, "tag", "train", train, "--format", fmt, "--model", model, "--quiet", "--passes", "5")[0] == 0
        expected = run(capsys, "tag", "predict", model, raw)[1]
        assert expected.count("\n") > 16
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(open(raw, "rb").read())))
        assert run(capsys, "tag", "predict", model, "-") == (0, expected, "")
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(open(train, "rb").read())))
        status, out, err = run(capsys, "tag", "predict", model, "-", "--out", str(tmp_path / "out"))
        assert status == 0 and err.startswith("<stdin>: 15 sequences, 80 items, per-item accuracy 100.00%")


def test_a_feats_file_is_read_once(tmp_path, capsys, monkeypatch):
    """tag predict of a FEATS tagger read a file whose FEATS are all _ twice (labelled,
    then again without the label) and standard input three times (spooled into
    memory, then those two reads); FEATS's _ passes the labelled read, so the file is
    read once, standard input unspooled. A CoNLL file whose label column is named
    FEATS is not CoNLL-U's FEATS: its _ labels are labels (it stopped: "2 columns,
    expected 1")."""
    import fastprox.structured.io.lines as lines
    train = conllu(tmp_path / "train.conllu", SENTENCES * 5)
    raw = conllu(tmp_path / "raw.conllu", blank=["FEATS"])
    model = str(tmp_path / "m.model")
    assert run(capsys, "tag", "train", train, "--format", "conllu", "--label", "FEATS", "--model", model,
               "--quiet")[0] == 0
    opened = []
    real = lines.open_source
    monkeypatch.setattr(lines, "open_source", lambda source: opened.append(source) or real(source))
    assert run(capsys, "tag", "predict", model, raw)[::2] == (0, "")         # (unlabelled: not scored)
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(open(raw, "rb").read())))
    assert run(capsys, "tag", "predict", model, "-")[::2] == (0, "")
    assert opened == [raw, "-"]
    columns = tmp_path / "columns.txt"
    columns.write_text("a X\nb _\n\nc X\n")
    templates = tmp_path / "templates"
    templates.write_text("U00:%x[0,0]\nB\n")
    assert run(capsys, "tag", "train", str(columns), "--format", "conll", "--columns", "w,FEATS", "--templates",
               str(templates), "--model", model, "--quiet")[0] == 0
    columns.write_text("a _\nb _\n")
    status, out, err = run(capsys, "tag", "predict", model, str(columns))
    assert status == 0 and out == "a _ X\nb _ _\n\n" and "2 items, per-item accuracy 50.00%" in err


@pytest.mark.parametrize("kind, fmt, says", [
    ("conllu", "conll", "4 columns, expected 3 (w pos y): this looks like CoNLL-U (ten fields separated by tabs), "
                        "which tag train --format conllu reads"),       # (its first line: "# sent_id = s0")
    ("conll", "conllu", "1 tab-separated field, expected 10 (ID FORM LEMMA UPOS XPOS FEATS HEAD DEPREL DEPS MISC): "
                        "this looks like CoNLL columns (separated by spaces), which tag train --format conll reads"),
    ("crfsuite", "conll", "2 columns, expected 3 (w pos y): this looks like CRFsuite items (a label, then "
                          "attributes, separated by tabs), which tag train --format crfsuite reads"),
])
def test_a_file_of_another_format_is_named_as_such(tmp_path, capsys, kind, fmt, says):
    """A CoNLL-U treebank given as --format conll (or a model of CoNLL columns), and the
    like, was refused by its width alone ("10 columns, expected 3 ... a token cannot
    contain a space"); the message now says what the file looks like and what reads it."""
    path = {"conllu": lambda: conllu(tmp_path / "a.conllu"), "conll": lambda: conll(tmp_path / "a.txt"),
            "crfsuite": lambda: str(tmp_path / "a.crf")}[kind]()
    (tmp_path / "a.crf").write_text("B-NP\tw=He\nB-VP\tw=runs\n\n")
    status, out, err = run(capsys, "tag", "train", path, "--format", fmt, "--quiet")
    assert status == 1 and err == f"fastprox: error: {path}:1: {says}\n"
