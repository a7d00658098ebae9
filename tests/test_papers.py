"""Smoke tests of the paper experiments (bench.papers): each module's core
functions on tiny inputs, checked for shapes, keys and a few exact properties; seconds, not
the minutes of a --quick run."""
import os
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

from bench.papers import _common, adagrad_text, fobos_synthetic, rda_mnist

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"


def data_dir(*needed):
    """The shared data dir; a test needing a missing file fails under CI=true, is skipped elsewhere."""
    if not all((DATA / f).is_file() for f in needed):
        if os.environ.get("CI") == "true":
            pytest.fail(f"shared data missing at {DATA} (CI=true)")
        pytest.skip(f"shared data missing at {DATA}")
    return DATA


def test_common_data_dir_is_the_repositorys_sibling():
    assert _common.DATA_DIR == DATA


def test_load_missing_file_names_the_sources():
    with pytest.raises(FileNotFoundError, match="SOURCES.md"):
        _common.load("/nonexistent", "x/y")


# ---------------------------------------------------------------- rda_mnist
def digits(n=240, seed=0):
    """A stand-in for MNIST: 'digits' 0-2, gray levels 0-255 on 784 pixels, class-dependent."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 3, n).astype(float)
    X = rng.random((n, 784)) * (rng.random((n, 784)) < 0.2) * 255
    X[:, :50] += 100 * y[:, None]
    return sp.csr_matrix(X), y


def test_pair_split_labels_and_sizes():
    X, y = digits()
    Xtr, ytr, Xte, yte = rda_mnist.pair_split(X, y, 0, 2, seed=1)
    n = int(np.sum((y == 0) | (y == 2)))
    assert Xtr.shape[0] + Xte.shape[0] == n and Xte.shape[0] == round(0.25 * n)
    assert set(np.unique(np.concatenate([ytr, yte]))) == {-1.0, 1.0}


def test_truncated_gradient_with_k1_is_fastprox_fobos():
    """TG with K = 1 and theta = inf is FOBOS with l1 (Xiao Sec. 5): the benchmark's NumPy TG
    and fastprox's fobos/constant must agree to rounding, and so must the paths."""
    X, y = digits()
    Xtr, ytr, _, _ = rda_mnist.pair_split(X, y, 0, 1, seed=0)
    order = np.arange(Xtr.shape[0])
    for lam in (0.1, 10.0):
        w, b = rda_mnist.final_model(rda_mnist.TG1, lam, Xtr, ytr, order)
        *_, (w_tg, b_tg) = rda_mnist.truncated_gradient(Xtr.toarray(), ytr, lam,
                                                         rda_mnist.sgd_step(len(order)), 1)
        np.testing.assert_allclose(w, w_tg, rtol=1e-9, atol=1e-15)
        assert abs(b - b_tg) < 1e-12


def test_rda_parameters_are_xiaos_enhanced_l1_rda():
    """eta0 = 1/gamma and rda_rho = rho give Xiao's Algorithm 2 with beta_t = gamma sqrt(t):
    w_{t+1} = -(sqrt(t)/gamma) (gbar_t - lambda_t sgn gbar_t) where |gbar_t| > lambda_t =
    lambda + gamma rho / sqrt(t), else 0; the bias unpenalized. Written out here in NumPy."""
    X, y = digits(150)
    Xtr, ytr, _, _ = rda_mnist.pair_split(X, y, 0, 1, seed=0)
    dense, gamma, rho, lam = Xtr.toarray(), rda_mnist.GAMMA, rda_mnist.GAMMA_RHO / rda_mnist.GAMMA, 0.5
    w, b, s, s_b = np.zeros(784), 0.0, np.zeros(784), 0.0
    for t, (x, label) in enumerate(zip(dense, ytr), start=1):
        slope = -label / (1.0 + np.exp(label * (x @ w + b)))
        s, s_b = s + slope * x, s_b + slope
        gbar, threshold = s / t, lam + gamma * rho / np.sqrt(t)
        w = np.where(np.abs(gbar) > threshold, -(np.sqrt(t) / gamma) * (gbar - threshold * np.sign(gbar)), 0.0)
        b = -(np.sqrt(t) / gamma) * s_b / t
    w_fp, b_fp = rda_mnist.final_model(rda_mnist.ERDA, lam, Xtr, ytr, np.arange(Xtr.shape[0]))
    np.testing.assert_allclose(w_fp, w, rtol=1e-9, atol=1e-15)
    assert abs(b_fp - b) < 1e-12 and _common.nnz(w) < 784


def test_tracked_pass_ends_where_the_untracked_one_does():
    X, y = digits(120)
    Xtr, ytr, _, _ = rda_mnist.pair_split(X, y, 0, 1, seed=0)
    order = np.random.default_rng(0).permutation(Xtr.shape[0])
    for method in rda_mnist.METHODS:
        run = rda_mnist.tracked_pass(method, 1.0, Xtr, ytr, order)
        w, b = rda_mnist.final_model(method, 1.0, Xtr, ytr, order)
        np.testing.assert_allclose(run["w"], w, rtol=1e-12, atol=1e-15)
        assert run["path"].shape == (len(order),) and run["wbar"].shape == (784,)


def test_rda_mnist_sweep_summary_verdicts_and_plots(tmp_path, monkeypatch):
    X, y = digits(120)
    Xtr, ytr, Xte, yte = rda_mnist.pair_split(X, y, 1, 2, seed=0)
    results = rda_mnist.sweep(Xtr, ytr, Xte, yte, (0.1, 10.0), n_perms=2, n_tracked=1, seed=0)
    assert set(results) == {0.1, 10.0}
    cell = results[0.1]
    assert set(cell) == set(rda_mnist.METHODS) | {"batch"}
    assert len(cell[rda_mnist.RDA]["err"]) == 2 and len(cell[rda_mnist.RDA]["err_bar"]) == 1
    assert len(cell[rda_mnist.ERDA]["path"]) == Xtr.shape[0]
    pairs = rda_mnist.all_pairs(X, y, [(0, 1), (1, 2)], n_perms=2, seed=0)
    assert [p["pair"] for p in pairs] == [(0, 1), (1, 2)]
    assert all(p["lambda_max"] > 0 and len(p["err"]) == 2 for p in pairs)
    lines = rda_mnist.verdicts(results, pairs)
    assert len(lines) == 12 and all("**" in line for line in lines)
    assert "lambda" in rda_mnist.sweep_table(results)
    rda_mnist.plot_paths(results, Xtr.shape[0], tmp_path / "f3.png")
    rda_mnist.plot_sweep(results, tmp_path / "f4.png")
    rda_mnist.plot_pairs(pairs, tmp_path / "f7.png")
    assert all((tmp_path / f).stat().st_size > 10_000 for f in ("f3.png", "f4.png", "f7.png"))


def test_batch_lambda_max_zeroes_the_batch_optimum():
    X, y = digits(200)
    Xtr, ytr, _, _ = rda_mnist.pair_split(X, y, 0, 1, seed=0)
    top = rda_mnist.lambda_max(Xtr, ytr)
    assert _common.nnz(rda_mnist.batch_optimum(1.05 * top, Xtr, ytr)[0]) == 0
    assert _common.nnz(rda_mnist.batch_optimum(0.5 * top, Xtr, ytr)[0]) > 0


def test_rda_mnist_on_the_real_digits():
    X, y = _common.load(data_dir("mnist_t10k/mnist_t10k"), "mnist_t10k/mnist_t10k", n_features=784)
    assert X.shape == (10_000, 784) and X.max() == 255.0
    Xtr, ytr, Xte, yte = rda_mnist.pair_split(X, y, 6, 7, seed=0)
    assert Xtr.shape[0] + Xte.shape[0] == 958 + 1028


# ---------------------------------------------------------------- adagrad_text
def text(n=300, d=60, seed=0):
    rng = np.random.default_rng(seed)
    X = sp.random(n, d, density=0.1, format="csr", random_state=seed)
    w = rng.standard_normal(d)
    y = np.where(X @ w > 0, 1.0, -1.0)
    return X, y


@pytest.mark.parametrize("baseline", ["PA", "AROW"])
def test_dense_baselines_learn_separable_data(baseline):
    X, y = text(600)
    w, b, progressive = adagrad_text.train(baseline, X, y, 0.01)
    assert w.shape == (60,) and np.isfinite(b) and progressive > 0
    assert adagrad_text.test_error(w, b, X, y) < 0.2


def test_table1_census_and_sweep_shapes(tmp_path, monkeypatch):
    X, y = text()
    s = adagrad_text.table1_set(X, y, 60, runs=2, seed=0)
    assert set(s["results"]) == set(adagrad_text.TABLE1_METHODS)
    assert all(len(v) == 2 and 0 <= v[0][1] <= 1 for v in s["results"].values())
    lam = adagrad_text.lambda_for_sparsity(X, y, s["params"]["RDA"], 60, iterations=12)
    assert lam > 0
    sweep = adagrad_text.sparsity_sweep(X, y, 60, 1.0, 1.0, runs=2, lambdas=(1e-6, 1e-1), seed=0)
    assert len(sweep["arow"]) == 2 and set(sweep["curve"]) == {1e-6, 1e-1}
    s.update(rows=300, n_features=60)
    census = {"results": {m: {p: [(0.1, 0.5)] for p in adagrad_text.PROPORTIONS}
                          for m in adagrad_text.TABLE4_METHODS}, "n_features": 60}
    lines = adagrad_text.verdicts({"toy": s}, census, sweep)
    assert len(lines) == 12 and all("**" in line for line in lines)
    assert "paper: RCV1 ECAT" in adagrad_text.table1_markdown({"toy": s})
    assert "paper (KDD census)" in adagrad_text.table4_markdown(census)
    adagrad_text.plot_sweep(sweep, tmp_path / "f7.png")
    assert (tmp_path / "f7.png").stat().st_size > 10_000


def test_table4_on_a9a_head(monkeypatch):
    monkeypatch.setattr(adagrad_text, "CENSUS_TUNE_ROWS", 500)
    monkeypatch.setattr(adagrad_text, "PROPORTIONS", (0.01, 0.02))
    census = adagrad_text.table4(data_dir("a9a/a9a", "a9a/a9a.t"), shuffles=1, seed=0)
    assert census["n_features"] == 123
    assert set(census["results"]) == set(adagrad_text.TABLE4_METHODS)
    assert all(len(v[0.01]) == 1 for v in census["results"].values())


# ---------------------------------------------------------------- fobos_synthetic
def test_correlated_covariance_hits_the_mean_correlation():
    cov = fobos_synthetic.correlated_covariance(60, np.random.default_rng(0))
    scale = np.sqrt(np.diag(cov))
    corr = np.abs(cov / np.outer(scale, scale))[~np.eye(60, dtype=bool)]
    assert abs(corr.mean() - 0.2) < 1e-6


def test_sensitivity_data_rows_have_unit_max():
    X, y = fobos_synthetic.sensitivity_data(np.random.default_rng(0), n=30, d=40)
    np.testing.assert_allclose(np.abs(X).max(axis=1), 1.0)
    assert set(np.unique(y)) <= {-1.0, 1.0}


def test_sensitivity_comparison_verdicts_and_plots(tmp_path, monkeypatch):
    monkeypatch.setattr(fobos_synthetic, "SENS_N", 40)
    monkeypatch.setattr(fobos_synthetic, "SENS_D", 30)
    monkeypatch.setattr(fobos_synthetic, "SENS_ROWS", 800)
    monkeypatch.setattr(fobos_synthetic, "STEP_GRID", (0.1, 1.0, 10.0))
    monkeypatch.setattr(fobos_synthetic, "PEG_N", 50)
    monkeypatch.setattr(fobos_synthetic, "PEG_D", 20)
    monkeypatch.setattr(fobos_synthetic, "CHECKPOINTS", 8)
    sens = fobos_synthetic.sensitivity(1, seed=0)
    assert set(sens["gaps"]) == {(p[0], s) for p in fobos_synthetic.PANELS for s in fobos_synthetic.SCHEDULES}
    cell = sens["gaps"][fobos_synthetic.PANELS[1][0], "inv"]
    assert set(cell) == {0.1, 1.0, 10.0, "auto", "auto_eta", "marks"}
    assert cell["auto"].shape == cell["marks"].shape and cell["auto"].min() >= 0
    comp = fobos_synthetic.comparison(1, seed=0, steps=300)
    assert set(comp["curves"]["hinge"]) == {"FOBOS (fastprox)", "Pegasos", "Pegasos + projection"}
    assert all(c.shape == comp["marks"].shape and c.min() >= 0
               for curves in comp["curves"].values() for c in curves.values())
    lines = fobos_synthetic.verdicts(sens, comp)
    assert len(lines) == 9 and all("**" in line for line in lines)
    fobos_synthetic.plot_sensitivity(sens, tmp_path / "s.png")
    fobos_synthetic.plot_comparison(comp, tmp_path / "p.png")
    assert (tmp_path / "s.png").stat().st_size > 10_000 and (tmp_path / "p.png").stat().st_size > 10_000


def test_pegasos_projection_keeps_the_norm_bound():
    rng = np.random.default_rng(0)
    X, y = fobos_synthetic.pegasos_data(rng, n=50, d=10)
    lam = 0.5
    rows = rng.integers(0, 50, 200)
    marks = fobos_synthetic.checkpoints(200, 10)
    plain = fobos_synthetic.pegasos(X, y, rows, "hinge", lam, False, marks)
    projected = fobos_synthetic.pegasos(X, y, rows, "hinge", lam, True, marks)
    assert plain.shape == projected.shape == marks.shape
    best = fobos_synthetic.optimum(X, y, "hinge", "l2", lam)
    assert projected[-1] >= best - 1e-9 and plain[-1] >= best - 1e-9
