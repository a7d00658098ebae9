"""Smoke test of bench/early_stopping.py in its quick mode: the table's rows (every
learner and each of its settings), the verdicts and the
report's machine and load lines; no timings."""
from bench import early_stopping


def test_quick_run_writes_the_table(tmp_path, capsys):
    out = tmp_path / "early_stopping.md"
    text = early_stopping.main(["--quick", "--runs", "1", "--out", str(out)])
    assert out.read_text() == text
    assert "- Machine: " in text and "family" in text and "- Load average" in text
    cells = [[c.strip() for c in line.strip().strip("|").split("|")] for line in text.splitlines()
             if line.startswith("| text-like")]
    verdicts = [c for c in cells if c[-3] in ("met", "not met")]
    table = [c for c in cells if c not in verdicts]
    assert {(c[1], c[2]) for c in table} == {(lib, s) for lib, _, _, s, _ in early_stopping.learners()}
    for name, library, setting, epochs, cpu, wall, accuracy in table:
        assert 1 <= int(epochs) <= 1000 and float(wall) > 0 and float(cpu) >= 0 and 0 <= float(accuracy) <= 1
    assert len(verdicts) == 1 and verdicts[0][-2] in ("0 of 1", "1 of 1") and verdicts[0][-1] == "n/a"
    assert (verdicts[0][-3] == "met") == (verdicts[0][-2] == "1 of 1")


def test_seeds_give_medians_and_count_the_seeds_met(tmp_path):
    """--seeds 3: each figure the median over the seeds' fits (a fake `measure` whose
    results depend on the seed), the verdict judged on those medians and the count of
    seeds whose own fits meet the target."""
    def measure(problem, runs, seed):
        fast = {0: 0.5, 1: 2.0, 2: 0.7}[seed]         # fastprox's wall time: beats 1.0 at seeds 0 and 2
        return {(lib, setting): dict(epochs=seed + 1, cpu=fast if lib != "sklearn" else 1.0,
                                     wall=fast if lib != "sklearn" else 1.0,
                                     accuracy=0.9 if lib != "sklearn" else 0.8 + 0.01 * seed)
                for lib, _, _, setting, _ in early_stopping.learners()}

    class Problem:
        name = "fake"
    rows, verdict = early_stopping.rows_of(Problem, [measure(None, 1, seed) for seed in range(3)])
    assert {r[3] for r in rows} == {"2"} and {r[5] for r in rows if r[1] == "fastprox"} == {"0.700"}
    assert {r[6] for r in rows if r[1] == "sklearn"} == {"0.8100"}
    assert verdict[-3:-1] == ["met", "2 of 3"]
    # seed pairs (j, k), j != k: fastprox at k beats scikit-learn at j where k is 0 or 2 (4
    # pairs); scikit-learn at k is as accurate as at j where k > j, never faster (1.0 s): 0
    assert verdict[-1] == "4 / 0 of 6"


def test_seed_pairs_count_scikit_learn_against_itself():
    """The noise floor: scikit-learn at seed k against its best at seed j (j != k), the
    same judgement as fastprox's: as accurate and faster."""
    def result(accuracy, wall):
        return dict(epochs=1, cpu=wall, wall=wall, accuracy=accuracy)
    per_seed = [{("sklearn", "average"): result(0.80, 1.0), ("sklearn", "early_stopping"): result(0.70, 0.1),
                 ("fastprox", "average"): result(0.79, 0.5)},
                {("sklearn", "average"): result(0.81, 0.9), ("sklearn", "early_stopping"): result(0.80, 0.8),
                 ("fastprox", "average"): result(0.81, 0.5)}]
    # j=0, k=1: scikit-learn's best at 0 is 0.80 in 1.0 s; at 1 its fastest as accurate is 0.80 in
    # 0.8 s (met), fastprox's 0.81 in 0.5 s (met). j=1, k=0: the best at 1 is 0.81 in 0.9 s; at 0
    # neither library reaches 0.81
    assert early_stopping.seed_pairs(per_seed) == "1 / 1 of 2"
    assert early_stopping.seed_pairs(per_seed[:1]) == "n/a"


def test_trace_gives_each_rules_values_pass_by_pass(tmp_path):
    """--trace: a row per learner and setting, a value and a counter per pass run (as
    many as the fit's epochs), the counter at n_iter_no_change where the fit stopped."""
    text = early_stopping.main(["--quick", "--runs", "1", "--trace", "--out", str(tmp_path / "out.md")])
    assert "--trace`" in text and "## What each stopping rule read" in text
    rows = [[c.strip() for c in line.strip().strip("|").split("|")] for line in text.splitlines()
            if line.startswith("| text-like") and ("held-out score" in line or "mean loss" in line)]
    assert {(r[1], r[2]) for r in rows} == {(lib, s) for lib, _, _, s, _ in early_stopping.learners()}
    for name, library, setting, read, values, waited, epochs in rows:
        assert read == ("held-out score" if setting == "early_stopping" else "mean loss")
        assert len(values.split()) == len(waited.split()) == int(epochs)
        assert int(waited.split()[-1]) == 5 or int(epochs) == early_stopping.COMMON["max_iter"]


def test_waits_is_sklearns_counter():
    assert early_stopping.waits([0.5, 0.5005, 0.6, 0.6, 0.6009], 1e-3, True) == [0, 1, 0, 1, 2]
    assert early_stopping.waits([1.0, 0.9, 0.8995, 0.95, 0.7], 1e-3, False) == [0, 0, 1, 2, 0]
