"""bench.file_to_model's VW-format pieces: the rows written in three namespaces read
back as fastprox hashes them, and the report's section replaced, the rest kept."""
import io

import numpy as np
import scipy.sparse as sp

from bench.file_to_model import VW_SECTION, replace_section, vw_lines
from fastprox._vw import hash_string
from fastprox.vw import load_vw


def test_vw_lines_deal_columns_to_three_namespaces():
    X = sp.csr_matrix(np.array([[0, 1.0, 0, 2.5], [3.0, 0, 0, 0]]))
    text = vw_lines(X, np.array([1.0, 0.0]))
    assert text.splitlines() == ["1 |a 3:2.5 |b 1 |c ", "-1 |a 0:3.0 |b  |c "]
    Z, y = load_vw(io.BytesIO(text.encode()), 18)[:2]
    assert y.tolist() == [1, -1]
    column = lambda ns, j: hash_string(str(j).encode(), hash_string(ns)) & (2**18 - 1)
    assert sorted(Z[0].indices.tolist()) == sorted([column(b"a", 3), column(b"b", 1)])


def test_replace_section_keeps_the_rest(tmp_path):
    path = tmp_path / "r.md"
    path.write_text("# Report\n\ntable\n\n" + VW_SECTION + "\n\nold\n\n## Later\n\nkept\n")
    text = replace_section(path, VW_SECTION + "\n\nnew\n")
    assert text == "# Report\n\ntable\n\n" + VW_SECTION + "\n\nnew\n## Later\n\nkept\n"
    path.write_text("# Report\n")
    assert replace_section(path, VW_SECTION + "\n") == "# Report\n\n" + VW_SECTION + "\n"


def test_vw_section_judges_the_clean_interpreter(monkeypatch):
    """Both interpreters' times and ratios in the table; the verdict on the clean one."""
    import bench.file_to_model as ftm
    monkeypatch.setattr(ftm, "skipped_start", lambda clean: "(skipped)")
    row = {"name": "a9a", "rows": 10, "mb": 1.0, "test": "test", "fp_loss": 0.3, "vw_loss": 0.3, "fp_acc": 0.8,
           "vw_acc": 0.8, "fp_loss -q ab": 0.3, "vw_loss -q ab": 0.3, "fp_acc -q ab": 0.8, "vw_acc -q ab": 0.8,
           "fastprox": 0.10, "vw": 0.12, "fastprox clean": 0.06, "vw clean": 0.10,
           "fastprox -q ab": 0.10, "vw -q ab": 0.12, "fastprox -q ab clean": 0.06, "vw -q ab clean": 0.10}
    start = {f"{name}{t}": 0.01 for name in ftm.startup_commands("python") for t in ("", " clean")}
    text = ftm.vw_text_section([row], 1, (1.0, 1.0), 1.5, start, "clean/bin/python")
    assert "| 0.100 / 0.060 | 0.120 / 0.100 | 1.20 / **1.67** |" in text
    assert "clean interpreter: a9a (this machine's: none)" in text
