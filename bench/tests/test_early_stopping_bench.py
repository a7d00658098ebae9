"""Smoke test of bench/early_stopping.py in its quick mode: the table's rows (both
libraries and fastprox with scikit-learn's penalty, both settings), the verdicts and the
report's machine and load lines; no timings."""
from bench import early_stopping


def test_quick_run_writes_the_table(tmp_path, capsys):
    out = tmp_path / "early_stopping.md"
    text = early_stopping.main(["--quick", "--runs", "1", "--out", str(out)])
    assert out.read_text() == text
    assert "- Machine: " in text and "family" in text and "- Load average" in text
    cells = [[c.strip() for c in line.strip().strip("|").split("|")] for line in text.splitlines()
             if line.startswith("| text-like")]
    table, verdicts = [c for c in cells if len(c) == 7], [c for c in cells if len(c) == 6]
    assert {(c[1], c[2]) for c in table} == {(lib, s) for lib in early_stopping.LIBRARIES
                                             for s in early_stopping.SETTINGS}
    for name, library, setting, epochs, cpu, wall, accuracy in table:
        assert 1 <= int(epochs) <= 1000 and float(wall) > 0 and float(cpu) >= 0 and 0 <= float(accuracy) <= 1
    assert len(verdicts) == 1 and verdicts[0][-1] in ("met", "not met")
