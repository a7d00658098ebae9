"""The readable model's ``options:`` line is a command line `fastprox train` reads
back and that rebuilds the same learner: for every rule of the registry and every
output kind the command line trains, train, parse the line with the command line's
parser, train again from it on the same data, and the two models are the same bit
for bit (the readable models' exact weights, the model files' arrays)."""
import shlex

import numpy as np
import pytest

from fastprox import dump_libsvm
from fastprox._registry import PENALTIES, RULES
from fastprox.cli import build_parser
from fastprox.model_io import load_model
from fastprox.stream.synthetic import text_like
from test_cli import run

N_FEATURES = 60


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    """Small binary, three-class and regression files, a group file, and VW text."""
    d = tmp_path_factory.mktemp("readable_options")
    X, y, _, _ = text_like(500, N_FEATURES, seed=3)
    dump_libsvm(X, y, d / "binary.svm")
    dump_libsvm(X, 1.0 + np.arange(X.shape[0]) % 3, d / "three.svm")
    dump_libsvm(X, np.asarray(X.sum(axis=1)).ravel() + y, d / "target.svm")
    (d / "groups.txt").write_text("\n".join(str(j // 6) for j in range(N_FEATURES)))
    rng = np.random.default_rng(0)
    (d / "rows.vw").write_text("".join(
        f"{rng.choice([-1, 1])} |a w{rng.integers(20)} w{rng.integers(20)}:0.5 |b u{rng.integers(9)}\n"
        for _ in range(300)))
    return d


def _rule_case(r):
    grouped = PENALTIES[r.penalty].family == "group"
    given = ["--update", r.update, "--schedule", r.schedule, "--penalty", r.penalty, "--alpha", "1e-3"]
    return ("binary.svm", given, ["--groups", "{d}/groups.txt"] if grouped else [])


#: case -> (data file or None for the embedded data, the options of the first run,
#: the options of both runs that are data, not the learner: files named).
CASES = {f"{r.update}-{r.schedule}-{r.penalty}": _rule_case(r) for r in RULES}
CASES.update({
    "defaults": ("binary.svm", [], []),
    "average": ("binary.svm", ["--schedule", "invsqrt", "--penalty", "l2", "--alpha", "1e-3", "--average"], []),
    "average from 50": ("binary.svm", ["--schedule", "inv", "--t0", "3.5", "--average", "50"], []),
    "gradient step, batches": ("binary.svm", ["--step", "gradient", "--batch-size", "3", "--eta0", "0.25"], []),
    "intercept scaling": ("binary.svm", ["--intercept-scaling", "0.1", "--schedule", "inv", "--step", "gradient",
                                         "--penalty", "l2", "--alpha", "1e-4"], []),
    "invariant hinge": ("binary.svm", ["--step", "invariant", "--loss", "hinge", "--schedule", "constant"], []),
    "no intercept, seed": ("binary.svm", ["--no-intercept", "--seed", "4"], []),
    "width fixed": ("binary.svm", ["--n-features", "80"], []),
    "hashed": ("binary.svm", ["--hash-bits", "5"], []),
    "ovr": ("three.svm", ["--classes", "1,2,3"], []),
    "multinomial": ("three.svm", ["--classes", "1", "2", "3", "--multi-class", "multinomial",
                                  "--penalty", "l1_l2", "--schedule", "invsqrt", "--alpha", "1e-3"], []),
    "regression": ("target.svm", ["--regression", "--loss", "huber", "--epsilon", "0.5", "--delta", "0.5"], []),
    "vw interactions": ("rows.vw", ["-q", "ab", "--hash-bits", "10"], []),
    "embedded data": (None, ["--rows", "400", "--n-features", "64", "--seed", "2"], ["--rows", "400"]),
})


def _train(capsys, d, case, options, prefix):
    path, _, fixed = CASES[case]
    fixed = [word.format(d=d) for word in fixed]
    model, readable = d / f"{prefix}-{case}.npz", d / f"{prefix}-{case}.txt"
    status, _, err = run(capsys, "train", *([d / path] if path else []), *options, *fixed, "--quiet",
                         "-f", model, "--readable-model", readable, "--chunk-rows", 128)
    assert status == 0, err
    text = readable.read_text()
    return model, text, next(line for line in text.splitlines() if line.startswith("options:"))[8:]


@pytest.mark.parametrize("case", CASES)
def test_the_options_line_rebuilds_the_same_model(data, capsys, case):
    _, given, _ = CASES[case]
    first, text, line = _train(capsys, data, case, given, "given")
    words = shlex.split(line)
    parsed = build_parser("train").parse_args(["train", *words])       # the command line's own parser
    assert "False" not in words and "None" not in words
    assert parsed.schedule in (None, *{r.schedule for r in RULES})
    second, again, line_again = _train(capsys, data, case, words, "rebuilt")
    assert line_again == line
    assert again == text                   # every weight written exactly
    a, b = load_model(first), load_model(second)
    assert a.get_params() == b.get_params()
    np.testing.assert_array_equal(a.coef_, b.coef_)
    np.testing.assert_array_equal(a.intercept_, b.intercept_)


def test_the_line_says_auto_for_the_automatic_choices_and_flags_only_when_set(data, capsys):
    _, _, line = _train(capsys, data, "defaults", [], "auto")
    words = shlex.split(line)
    for option in ("--schedule", "--step", "--eta0", "--delta"):
        assert words[words.index(option) + 1] == "auto"
    for flag in ("--average", "--no-intercept", "--regression", "--seed", "--hash-bits"):
        assert flag not in words
    status, _, err = run(capsys, "train", "--rows", "50", "--schedule", "often")
    assert status == 2 and "invalid choice: 'often' (choose from auto, constant" in err
