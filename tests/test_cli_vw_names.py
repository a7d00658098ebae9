"""Vowpal Wabbit's option names on the command line (fastprox.cli.vw_names): VW's
underscore spellings of fastprox's options and ``-b`` train the same model as
fastprox's spellings; VW's options that fastprox spells otherwise or does not need
are refused in one line that says what to give instead; no option is taken for an
abbreviation of another (VW's ``--l1 1e-6`` was read as ``--l1-ratio 1e-6``)."""
import re
from pathlib import Path

import pytest

from fastprox.cli.vw_names import VW_EQUIVALENTS, VW_PREDICT, dashed
from test_cli import run

DOCS = Path(__file__).resolve().parents[1] / "docs" / "from_vw.md"
VW_TEXT = "".join(f"{1 if i % 3 else -1} |a x{i % 7} y:{1 + i % 4} |b z{i % 5}\n" for i in range(200))


@pytest.fixture
def data(tmp_path):
    path = tmp_path / "d.vw"
    path.write_text(VW_TEXT)
    return path


def test_vw_spellings_train_the_same_model(data, tmp_path, capsys):
    ours, theirs = tmp_path / "ours.model", tmp_path / "theirs.model"
    readable_ours, readable_theirs = tmp_path / "ours.txt", tmp_path / "theirs.txt"
    assert run(capsys, "train", data, "-f", ours, "--passes", 3, "--holdout-period", 5, "--early-terminate", 2,
               "--hash-bits", 12, "--readable-model", readable_ours, "--quiet")[0] == 0
    assert run(capsys, "train", data, "-f", theirs, "--passes", 3, "--holdout_period", 5, "--early_terminate=2",
               "-b", 12, "--readable_model", readable_theirs, "--quiet")[0] == 0
    assert ours.read_bytes() == theirs.read_bytes()
    assert readable_ours.read_text() == readable_theirs.read_text()
    status, out, err = run(capsys, "predict", ours, data, "-b", 12)
    assert status == 0 and out == run(capsys, "predict", ours, data, "--hash-bits", 12)[1]


@pytest.mark.parametrize("argv, hint", [
    (["-c"], "VW's -c: drop it: fastprox needs no cache"),
    (["--loss_function", "logistic"], "VW's --loss_function: use --loss log for logistic"),
    (["-l", "0.3"], "VW's -l: use --eta0"),
    (["--l1", "1e-6"], "VW's --l1: use --penalty l1 --alpha L"),       # (not --l1-ratio's abbreviation)
    (["--l2=1e-6"], "VW's --l2=1e-6: use --penalty l2 --alpha L"),
    (["--sgd", "--adaptive"], "VW's --sgd: use --schedule invsqrt --step gradient; VW's --adaptive: use"),
    (["--noconstant", "--random_seed", "3"], "VW's --noconstant: use --no-intercept; VW's --random_seed: use --seed"),
    (["--save_resume"], "VW's --save_resume: drop it: a fastprox model file always holds what -i MODEL needs"),
    (["--initial_t", "10"], "VW's --initial_t: use --t0"),
    (["-r", "raw.txt"], "VW's -r: use -p FILE (fastprox train: each example's raw score"),
    (["--audit"], "VW's --audit: use --invert-hash FILE"),
    (["--bfgs"], "VW's --bfgs: drop it: fastprox trains online; --passes N"),
    (["--ect", "3"], "VW's --ect: use --classes 1,2,...,K"),
    (["--csoaa", "3"], "VW's --csoaa: fastprox reads one label per example, not costs"),
])
def test_vw_options_spelled_otherwise_are_refused_saying_what_to_give(data, tmp_path, capsys, argv, hint):
    status, out, err = run(capsys, "train", data, "-f", tmp_path / "m", *argv)
    assert status == 2 and out == "" and "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert err.startswith("fastprox: error: unrecognized arguments: ") and hint in err
    assert "docs/from_vw.md" in err and not (tmp_path / "m").exists()


@pytest.mark.parametrize("argv, hints", [
    (["tag", "predict", "-m", "M", "{d}", "-t", "-o", "out"],
     "(CRFsuite's and crf_test's -m: give the model as the first argument: fastprox tag predict MODEL FILE; "
     "CRFsuite's -t: drop it: a labelled file is scored (--quiet: not); crf_test's and MaltParser's -o: use "
     "--out PRED) (see"),
    (["tag", "train", "{d}", "--format", "conll", "-c", "4", "-f", "3", "-b", "9", "--l1", "1"],
     "(CRF++'s -c: use --alpha, the penalty's strength (a larger C is a smaller --alpha); CRF++'s -f: use "
     "--min-count N; VW's -b: use --bits B; VW's --l1: use --penalty l1 --alpha L; docs/from_vw.md) (see"),
    (["parse", "predict", "-c", "M", "-i", "{d}", "-m", "parse", "--outfile", "out", "--l1"],
     "(MaltParser's -c: give the model as the first argument: fastprox parse predict MODEL FILE; MaltParser's "
     "-i: give the file as the second argument: fastprox parse predict MODEL FILE; MaltParser's -m: drop it: "
     "parse predict parses; UDPipe's --outfile: use --out PRED) (see"),
])
def test_structured_tools_options_are_refused_saying_what_to_give(data, capsys, argv, hints):
    """CRFsuite's, CRF++'s, UDPipe's and MaltParser's options typed at tag and parse
    are refused saying what to give; tag and parse gave VW's hints, which name
    options they lack (CRFsuite's -t, which scores, was told "use fastprox predict
    MODEL DATA"; CRF++'s -c "drop it: fastprox needs no cache"), and VW's learner
    hints at predict, which has no learner options."""
    status, out, err = run(capsys, *[a.replace("{d}", str(data)) for a in argv])
    assert status == 2 and out == "" and len(err.strip().splitlines()) == 1
    assert hints in err, err


def test_vws_test_line_is_refused_saying_what_predict_takes(data, tmp_path, capsys):
    """``vw -t -i MODEL -d DATA -p OUT`` typed as ``fastprox predict``: each of VW's
    options is named with what predict takes instead (train's -i and -d are
    predict's arguments, -t is implied)."""
    model = tmp_path / "m"
    assert run(capsys, "train", data, "-f", model, "--quiet")[0] == 0
    status, out, err = run(capsys, "predict", "-t", "-i", model, "-d", data, "-p", tmp_path / "p", "-r", "raw")
    assert status == 2 and out == "" and len(err.strip().splitlines()) == 1
    for hint in ("VW's -t: drop it: fastprox predict never trains",
                 "VW's -i: give the model as the first argument: fastprox predict MODEL DATA",
                 "VW's -d: give the data as the second argument", "VW's -r: use --raw (each row's raw score"):
        assert hint in err, err
    assert "use fastprox predict MODEL DATA" not in err       # (train's hint for -t)
    assert not (tmp_path / "p").exists()


@pytest.mark.parametrize("argv, help_of", [
    (["train", "{d}"], "fastprox train"), (["predict", "m", "{d}"], "fastprox predict"),
    (["info", "{d}"], "fastprox info"), (["tag", "train", "{d}", "--format", "conll"], "fastprox tag train"),
    (["tag", "predict", "m", "{d}"], "fastprox tag predict"), (["parse", "train", "{d}"], "fastprox parse train"),
    (["parse", "predict", "m", "{d}"], "fastprox parse predict"),
])
def test_unrecognized_arguments_name_their_commands_help(data, capsys, argv, help_of):
    """An unknown option of a command points at that command's help, which lists
    its options, not at the top parser's, which lists the commands."""
    status, out, err = run(capsys, *(a.format(d=data) for a in argv), "--bogus", "-c")
    assert status == 2 and out == "" and len(err.strip().splitlines()) == 1
    assert err.startswith("fastprox: error: unrecognized arguments: --bogus -c ("), err
    assert ("VW's -c: drop it" in err) == (argv[0] not in ("tag", "parse")), err    # (CRF++'s -c is C)
    assert err.rstrip().endswith(f"(see '{help_of} --help')"), err


def test_no_option_is_an_abbreviation(data, tmp_path, capsys):
    for argv in (["--hash", "12"], ["--holdout", "5"], ["--l1", "0.5"]):
        status, _, err = run(capsys, "train", data, "-f", tmp_path / "m", *argv)
        assert status == 2 and f"unrecognized arguments: {' '.join(argv)}" in err


def test_dashed_reads_known_options_up_to_a_bare_double_dash():
    options = {"--holdout-off", "--readable-model"}
    assert dashed(["--holdout_off", "--readable_model=r", "--not_known", "--", "--holdout_off"], options) == [
        "--holdout-off", "--readable-model=r", "--not_known", "--", "--holdout_off"]


def test_the_docs_table_names_every_vw_option_the_errors_name():
    text = DOCS.read_text()
    assert [name for name in {**VW_EQUIVALENTS, **VW_PREDICT} if not re.search(rf"`{re.escape(name)}\b", text)] == []


@pytest.mark.parametrize("command", ["train", "predict", "tag", "parse"])
def test_an_option_given_twice_with_two_values_is_refused(command, data, tmp_path, capsys):
    """As VW refuses ``--passes 2 --passes 3`` ("Disagreeing option values"), each
    command refuses a single-valued option given twice with different values, in any
    spelling, naming both; rather than training with the last one silently."""
    twice = {"train": [data, "--passes", 2, "--passes", 3], "predict": [data, data, "-b", 12, "--hash-bits", 14],
             "tag": ["train", data, "--format", "conll", "--passes", 2, "--passes=3"], "parse": ["train", data, "--bits", 8, "--bits", 9]}
    status, out, err = run(capsys, command, *twice[command])
    assert status == 2 and out == "" and "Traceback" not in err
    assert "two values for one option; give it once" in err and re.search(r"(\S+) (\S+) and (\S+) (\S+)", err)


def test_an_option_given_twice_with_one_value_or_added_up_is_kept(data, tmp_path, capsys):
    """The same value twice (VW accepts it too) trains as once; -q adds up."""
    once, twice, crossed = tmp_path / "once.model", tmp_path / "twice.model", tmp_path / "q.model"
    assert run(capsys, "train", data, "-f", once, "--passes", 2, "--quiet")[0] == 0
    assert run(capsys, "train", data, "-f", twice, "--passes", 2, "--passes=2", "--quiet")[0] == 0
    assert once.read_bytes() == twice.read_bytes()
    assert run(capsys, "train", data, "-f", crossed, "-q", "ab", "-q", "aa", "--quiet")[0] == 0
    assert "--interactions ab --interactions aa" in run(capsys, "info", crossed)[1]
