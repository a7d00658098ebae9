"""bench.conll2000's timing: every training paired with one of the reference beside it."""
from bench.conll2000 import Learner, paired


def test_every_training_is_timed_beside_one_of_the_reference_and_judged_by_the_pairs():
    order = []

    def learner(name, runs):
        def train(ready):
            order.append(name)
            return (name, order.count(name), ready)
        return Learner(name, runs, train, lambda result: {"last": result}, prepare=lambda: f"{name} ready")

    rows = paired(learner("ref", 1), [learner("a", 3), learner("once", 1), learner("b", 3)])
    assert order == ["ref", "a", "ref", "once", "ref", "b",      # round 1: the reference first
                     "a", "ref", "b", "ref",                       # round 2: second
                     "ref", "a", "ref", "b"]
    assert [r["learner"] for r in rows] == ["ref", "a", "once", "b"]
    assert [r["runs"] for r in rows] == [7, 3, 1, 3] and [len(r["pairs"]) for r in rows] == [1, 3, 1, 3]
    assert rows[1]["last"] == ("a", 3, "a ready") and rows[2]["last"] == ("once", 1, "once ready")
    assert rows[0]["ratio"] == 1.0 and all(r["ratio"] > 0 and r["cpu"] >= 0 and r["wall"] >= 0 for r in rows)


def test_a_pair_ratio_is_the_learners_time_over_the_reference_beside_it(monkeypatch):
    import bench.conll2000 as bench
    clock = iter([0.0, 2.0, 2.0, 3.0,      # round 1: ref 2 s, then a 1 s
                  3.0, 7.0, 7.0, 9.0])     # round 2: a 4 s, then ref 2 s
    monkeypatch.setattr(bench.time, "process_time", lambda: next(clock))
    rows = paired(Learner("ref", 1, lambda _: None, lambda _: {}),
                  [Learner("a", 2, lambda _: None, lambda _: {})])
    assert rows[1]["pairs"] == [0.5, 2.0] and rows[1]["ratio"] == 1.25
    assert rows[0]["cpu"] == 2.0 and rows[1]["cpu"] == 2.5
