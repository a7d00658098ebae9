"""bench.conll2000's timing: the learners' trainings interleaved round by round."""
from bench.conll2000 import Learner, interleaved


def test_trainings_are_interleaved_round_by_round_and_scored_from_the_last():
    order = []

    def learner(name, runs):
        def train(ready):
            order.append(name)
            return (name, order.count(name), ready)
        return Learner(name, runs, train, lambda result: {"last": result}, prepare=lambda: f"{name} ready")

    rows = interleaved([learner("a", 3), learner("once", 1), learner("b", 3)])
    assert order == ["a", "once", "b", "a", "b", "a", "b"]
    assert [r["learner"] for r in rows] == ["a", "once", "b"] and [r["runs"] for r in rows] == [3, 1, 3]
    assert rows[0]["last"] == ("a", 3, "a ready") and rows[1]["last"] == ("once", 1, "once ready")
    assert all(r["cpu"] >= 0 and r["wall"] >= 0 for r in rows)
