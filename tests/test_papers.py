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


# ---------------------------------------------------------------- the verdict rule (_common)
def test_rule_orders_only_beyond_the_spread():
    assert _common.lower(0.10, 0.13, 0.01, 0.02) and not _common.lower(0.10, 0.11, 0.01, 0.02)
    assert not _common.lower(0.100, 0.101, floor=0.002) and _common.lower(0.1, 0.2, floor=0.002)
    assert _common.tied(0.020, 0.022, 0.002, 0.002) and not _common.tied(0.1, 0.2, 0.01, 0.01)
    assert _common.margin(0.01, 0.03, floor=0.02) == pytest.approx(0.03 * _common.SPREAD_FACTOR)


def test_quick_reports_mark_verdicts_and_list_differences(tmp_path, monkeypatch):
    full = tmp_path / "full"
    full.mkdir()
    (full / "x.md").write_text("# x\n\n- claim A: **holds**. why\n- claim B: **does not hold**. why\n")
    monkeypatch.setattr(_common, "FULL_DIR", str(full))
    args = type("Args", (), {"quick": True, "seed": 0})()
    lines = [_common.verdict(True, "claim A", "ok."), _common.verdict(True, "claim B", "ok.")]
    path = _common.write_report(str(tmp_path / "quick"), "x", "X", lines, 0.0, args)
    text = Path(path).read_text()
    assert "**holds (quick)**" in text and "**holds**." not in text
    assert "1 verdict(s) differ" in text and "claim B: quick *holds*, full run *does not hold*" in text
    assert _common.verdict_words(text) == {"claim A": "holds", "claim B": "holds"}


def test_every_report_is_listed_in_the_readme():
    readme = (Path(__file__).resolve().parents[1] / "bench" / "papers" / "README.md").read_text()
    from bench.papers import available
    for name, module in available().items():
        report = getattr(module, "REPORT", name)        # a module may name its report otherwise
        assert f"({report}.md)" in readme, name


# ---------------------------------------------------------------- mkl
def test_mkl_prox_is_alg2_and_matches_a_brute_force_minimizer():
    from scipy.optimize import minimize
    from bench.papers import mkl
    rng = np.random.default_rng(0)
    groups = np.repeat(np.arange(4), 3)
    for t in (0.05, 0.5, 3.0):
        V = rng.standard_normal((2, 12))
        Z = mkl.prox("squared_group", V, groups, 4, t)
        f = lambda z: 0.5 * np.sum((z - V.ravel()) ** 2) + t * mkl.regularizer(
            "squared_group", z.reshape(V.shape), groups, 4)
        assert f(Z.ravel()) <= minimize(f, V.ravel() * 0.5, method="Powell").fun + 1e-6
    Z = mkl.prox("l1_l2", V, groups, 4, 0.5)
    norms = mkl.group_norms(V, groups, 4)
    np.testing.assert_allclose(mkl.group_norms(Z, groups, 4), np.maximum(norms - 0.5, 0), atol=1e-12)


def test_mkl_batch_and_online_reach_the_same_objective():
    from bench.papers import mkl
    rng = np.random.default_rng(1)
    X = rng.standard_normal((300, 20))
    y = np.argmax(X[:, :3], axis=1)
    Ftr, Fte, groups = mkl.kernel_features(X, X[:50], seed=0, n_random=10)
    assert Ftr.shape == (300, 20 + 10 * 6) and groups.max() == len(mkl.KERNELS) - 1
    np.testing.assert_allclose([np.mean((Ftr[:, groups == k] ** 2).sum(1)) for k in range(5)], 1.0)
    W, b, trace = mkl.batch_solve("log", "squared_group", 1e-2, Ftr, y, groups, 7, 3, 300)
    assert np.all(np.diff(trace[:, 1]) <= 1e-9) or trace[-1, 1] <= trace[0, 1]
    online, clf = mkl.online("log", "MKL", 1e-2, 0.5, Ftr, y, Fte, y[:50], groups, 30, seed=0)
    assert online[-1, 1] >= trace[-1, 1] - 1e-6 and online[-1, 1] < online[0, 1]
    assert online[-1, 1] - trace[-1, 1] < 0.05 * trace[-1, 1] + 0.01
    assert clf.beta_.shape == (7,) and abs(clf.beta_.sum() - 1) < 1e-9


def test_mkl_dataset_and_report_on_a_small_run(tmp_path, monkeypatch):
    from bench.papers import mkl
    data = data_dir("satimage/satimage.scale", "satimage/satimage.scale.t")
    monkeypatch.setattr(mkl, "PASSES", 3)
    monkeypatch.setattr(mkl, "TUNE_PASSES", 1)
    monkeypatch.setattr(mkl, "CHECKPOINTS", (1, 3))
    monkeypatch.setattr(mkl, "ALPHAS", (1e-3,))
    monkeypatch.setattr(mkl, "ETAS", (0.5,))
    monkeypatch.setattr(mkl, "N_RANDOM", 8)
    monkeypatch.setattr(mkl, "PATH_ALPHAS", (1e-3, 1.0))
    monkeypatch.setattr(mkl, "batch_solve", lambda *a, **k: (
        np.zeros((6, a[3].shape[1])), np.zeros(6), np.array([[0.01, 9.0], [0.02, 0.1]])))
    res = {"satimage": mkl.run_dataset(data, "satimage", 120, 2, log=lambda *a, **k: None)}
    lines = mkl.verdicts(res)
    assert len(lines) == 8 and all("**" in line for line in lines)
    assert "beta_ (MKL)" in mkl.weights_table(res) and "noise 2" in mkl.path_table(res) and "batch / online" in mkl.speed_table(res)
    assert all((tmp_path / os.path.basename(p)).stat().st_size > 10_000 for p in mkl.plots(res, str(tmp_path)))


# ---------------------------------------------------------------- adagrad_mnist, rda_params
def test_adagrad_mnist_methods_are_fastprox_rules_and_pa_learns():
    from fastprox._rules import RULES
    from bench.papers import adagrad_mnist
    allowed = {(r.update, r.schedule, r.penalty) for r in RULES}
    for spec in adagrad_mnist.METHODS.values():
        assert spec is None or ("rda", spec[0], spec[1]) in allowed
    rng = np.random.default_rng(0)
    X = rng.standard_normal((400, 10))
    y = np.argmax(X[:, :3], axis=1)
    W, b, mistakes = adagrad_mnist.passive_aggressive(X, y, 1.0, 3)
    assert np.mean((X @ W.T + b).argmax(1) != y) < 0.15 and mistakes[:50].sum() > mistakes[-50:].sum()


def test_adagrad_mnist_experiment_and_verdicts(tmp_path, monkeypatch):
    from bench.papers import adagrad_mnist
    monkeypatch.setattr(adagrad_mnist, "TUNE_ROWS", 100)
    monkeypatch.setattr(adagrad_mnist, "STEPS", (0.1, 1.0))
    monkeypatch.setattr(adagrad_mnist, "PA_C", (1.0,))
    rng = np.random.default_rng(0)
    X = rng.random((300, 40))
    y = np.argmax(X[:, :4], axis=1)
    params, lambdas, out = adagrad_mnist.experiment(X[:200], y[:200], X[200:], y[200:], 2, 0,
                                                    log=lambda *a, **k: None)
    assert lambdas["a"] < lambdas["b"]
    assert set(out) == set(adagrad_mnist.METHODS) and all(len(v["err"]) == 2 for v in out.values())
    assert out["RDA"]["mistakes"][0].shape == (200,)
    lines = adagrad_mnist.verdicts(out)
    assert len(lines) == 7 and all("**" in line for line in lines)
    assert "paper error" in adagrad_mnist.table(out, params)
    adagrad_mnist.plot_mistakes(out, tmp_path / "f5.png")
    assert (tmp_path / "f5.png").stat().st_size > 10_000


def test_rda_params_sweep_overfitting_and_verdicts(tmp_path, monkeypatch):
    from bench.papers import rda_params
    monkeypatch.setattr(rda_params, "GAMMAS", (1000.0, 5000.0))
    monkeypatch.setattr(rda_params, "FIG8_LAMBDAS", (0.01, 1.0))
    monkeypatch.setattr(rda_params, "SUBSETS", 2)
    X, y = digits(160)
    Xtr, ytr, Xte, yte = rda_mnist.pair_split(X, y, 0, 1, seed=0)
    sweep = rda_params.gamma_sweep(Xtr, ytr, Xte, yte, 2, 1, 0, log=lambda *a, **k: None)
    assert set(sweep[1.0]) == {"batch", 1000.0, 5000.0} and len(sweep[1.0][1000.0]["err"]) == 2
    over, nnzs, size = rda_params.overfitting(Xtr, ytr, Xte, yte, 2, 1, 0, log=lambda *a, **k: None)
    assert len(over[0.01]["batch"]) == 2 and len(over[0.01]["RDA w_T"]) == 4
    lines = rda_params.verdicts(sweep, over)
    assert len(lines) == 7 and all("**" in line for line in lines)
    assert "Jaccard" in rda_params.sweep_table(sweep) and "batch" in rda_params.fig8_table(over, nnzs)
    assert all(os.path.getsize(p) > 5_000 for p in rda_params.plots(sweep, over, str(tmp_path)))


def test_rda_gamma_reaches_the_learner():
    X, y = digits(100)
    Xtr, ytr, _, _ = rda_mnist.pair_split(X, y, 0, 1, seed=0)
    order = np.arange(Xtr.shape[0])
    w1, _ = rda_mnist.final_model(rda_mnist.ERDA, 0.5, Xtr, ytr, order, gamma=1000.0)
    w2, _ = rda_mnist.final_model(rda_mnist.ERDA, 0.5, Xtr, ytr, order)
    assert rda_mnist.learner(rda_mnist.ERDA, 0.5, 10, 1000.0).get_params()["rda_rho"] == 0.025
    assert not np.allclose(w1, w2)
