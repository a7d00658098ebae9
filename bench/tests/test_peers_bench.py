"""Smoke test of the peer suite's core (bench.peers) on a tiny
synthetic problem with the peers every test environment has (fastprox and
scikit-learn): the structure of the results and of the report, no timings."""
import argparse

import numpy as np
import pytest

from bench import peers
from bench.peers import data, registry, report, suite


@pytest.fixture(scope="module")
def result():
    problem = data.text_like(400, 2000, seed=1)
    learners, _ = registry.learners(1e-3, 50, only=["fastprox", "sklearn"])
    reference, _ = registry.reference(1e-3)
    try:
        yield suite.measure(problem, learners, reference, 1e-3, runs=2, file_runs=1, passes=2,
                            log=lambda *_: None)
    finally:
        problem.close()


def test_one_pass_table(result):
    names = set(result["one_pass"])
    assert {"fastprox fobos+invsqrt", "fastprox defaults", "sklearn SGD l1", "sklearn SGD l2"} <= names
    for row in result["one_pass"].values():
        assert len(row["all_seconds"]) == 2 and row["seconds"] > 0
        assert row["rows"] == result["rows"] and row["nnz"] == result["nnz"]
        assert 0 <= row["test_accuracy"] <= 1 and row["test_log_loss"] > 0
        assert row["objective"] > 0 and 0 <= row["nonzeros"] <= result["n_features"]


def test_file_table_has_fastprox_only(result):
    assert result["file"] and all(r["library"] == "fastprox" for r in result["file"].values())
    assert all(r["bytes"] > 0 and r["seconds"] > 0 for r in result["file"].values())


def test_passes_against_the_optimum(result):
    if "optimum" not in result:
        pytest.skip("liblinear-official is not installed")
    best = result["optimum"]["objective"]
    for row in result["curves"].values():
        assert [p for p, _, _ in row["curve"]] == [1, 2]
        assert all(f >= best * (1 - 1e-6) for _, _, f in row["curve"])   # nobody beats the optimum
        assert row["passes_to_gap"] in (None, 1, 2)


def test_report_names_every_learner(result):
    text = report.problem_section(result, passes=2) + report.targets([result])
    for name in result["one_pass"]:
        assert f"| {name} |" in text
    assert "sklearn SGD l1" in text and "x " in text


def test_missing_peers_are_named_not_fatal(monkeypatch):
    monkeypatch.setitem(registry.PEERS, "nosuch", ("no_such_module", "no-such-package"))
    learners, missing = registry.learners(1e-3, 10, only=["nosuch", "sklearn"])
    assert [p.library for p in learners] == ["scikit-learn", "scikit-learn"]
    assert "pip install no-such-package" in missing["nosuch"]


def test_command_line_options_parse():
    args = peers.add_arguments(argparse.ArgumentParser()).parse_args(["--quick", "--peers", "sklearn"])
    assert peers.settings(args)["runs"] == 2 and args.peers == ["sklearn"]


def test_vw_weights_map_back_onto_the_columns():
    pytest.importorskip("vowpalwabbit")
    from bench.peers.vw import VW
    problem = data.text_like(300, 500, seed=2)
    try:
        peer = VW("VW defaults", [])
        peer.prepare(problem)
        peer.fit_one_pass(problem.X_train, problem.y_train)
        import vowpalwabbit
        ws = vowpalwabbit.Workspace(arg_list=["-d", problem.vw_path(), "--cache_file", peer.cache,
                                              "--loss_function", "logistic", "--quiet", "-b", str(peer.bits)])
        with open(problem.vw_path()) as f:
            lines = [next(f) for _ in range(5)]
        theirs = [ws.predict(line) for line in lines]
        ws.finish()
        np.testing.assert_allclose(peer.decision(problem.X_train[:5]), theirs, rtol=1e-4, atol=1e-5)
    finally:
        problem.close()
