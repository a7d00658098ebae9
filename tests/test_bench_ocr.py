"""The MKL paper's Table 1 benchmark (bench/papers/ocr_table1.py, _ocr_data.py): the OCR
letters' reader on the shared file and on broken ones, the kernels' explicit maps
against the kernels they stand for, and (marked slow) the quick mode end to end."""
import argparse

import numpy as np
import pytest
import scipy.sparse as sp

from bench.papers import _ocr_data, ocr_table1

LETTERS = "ocr/letter.data"


def line(id_, letter, next_id, word, position, fold, pixels=None):
    pixels = [0] * 128 if pixels is None else pixels
    return "\t".join(map(str, [id_, letter, next_id, word, position, fold] + list(pixels))) + "\t"


def write(tmp_path, lines):
    path = tmp_path / "letter.data"
    path.write_text("\n".join(lines))
    return path


def test_the_shared_letters(shared_structured):
    path, = shared_structured(LETTERS)
    X, y, lengths, folds = _ocr_data.load_letters(path)
    assert X.shape == (52152, 128) and set(np.unique(X.data)) == {1.0}
    assert lengths.sum() == 52152 and len(lengths) == 6877 and lengths.min() >= 1
    assert y.min() == 0 and y.max() == 25 and len(np.unique(y)) == 26
    assert np.array_equal(np.bincount(folds), [626, 704, 684, 698, 693, 651, 739, 717, 690, 675])
    assert "".join(_ocr_data.LETTERS[c] for c in y[:lengths[0]]) == "ommanding"   # ("commanding": the
    # data set leaves out every word's first, capital, letter)


def test_words_follow_the_next_id_chain_not_the_file_order(tmp_path):
    """Word 7's characters stored out of order come back in chain order; words by id."""
    pixels = [[1] + [0] * 127, [0, 1] + [0] * 126, [0, 0, 1] + [0] * 125]
    path = write(tmp_path, [line(3, "c", -1, 7, 3, 2, pixels[2]), line(1, "a", 2, 7, 1, 2, pixels[0]),
                            line(9, "z", -1, 4, 1, 5), line(2, "b", 3, 7, 2, 2, pixels[1])])
    X, y, lengths, folds = _ocr_data.load_letters(path)
    assert lengths.tolist() == [1, 3] and folds.tolist() == [5, 2]
    assert y.tolist() == [25, 0, 1, 2]
    assert np.array_equal(X.toarray()[1:, :3], np.eye(3))


@pytest.mark.parametrize("lines, match", [
    ([line(1, "a", -1, 1, 1, 0)[:-4]], "line 1: not 134 tab-separated fields"),
    ([line(1, "a", -1, 1, 1, 0), line(2, "A", -1, 2, 1, 0)], "line 2: the letter 'A' is not one of a-z"),
    ([line(1, "a", -1, 1, 1, 0, [2] + [0] * 127)], "line 1: a pixel is not 0 or 1"),
    ([line(1, "a", -1, 1, 1, "x")], "line 1: an id, next_id, word_id, position or fold is not an integer"),
    ([line(1, "a", 2, 1, 1, 0), line(2, "b", -1, 1, 3, 0)], "line 2: .* position 2 but says word 1, position 3"),
    ([line(1, "a", 5, 1, 1, 0)], "line 1: next_id 5 is no character's id"),
    ([line(1, "a", 2, 1, 1, 0), line(2, "b", -1, 1, 2, 3)], "characters lie in different folds"),
])
def test_a_broken_file_names_its_line(tmp_path, lines, match):
    with pytest.raises(ValueError, match=match):
        _ocr_data.load_letters(write(tmp_path, lines))


def test_a_missing_file_names_the_sources(tmp_path):
    with pytest.raises(FileNotFoundError, match="SOURCES.md"):
        _ocr_data.load_letters(tmp_path / "ocr" / "letter.data")


def images(n=60, seed=0):
    rng = np.random.default_rng(seed)
    return sp.csr_matrix((rng.random((n, 128)) < 0.25).astype(float))


def normalized(K):
    d = np.sqrt(np.diag(K))
    return K / np.outer(d, d)


@pytest.mark.parametrize("kernel, exact", [
    ("linear", lambda A: normalized(A @ A.T)),
    ("quadratic", lambda A: normalized((1.0 + A @ A.T) ** 2)),
])
def test_exact_maps_give_their_kernel_at_unit_diagonal(kernel, exact):
    X = images()
    F = _ocr_data.transform(_ocr_data.fit_map(kernel, X, 0, None), X)
    np.testing.assert_allclose((F @ F.T).toarray(), exact(X.toarray()), atol=1e-12)


@pytest.mark.parametrize("kernel", ["gaussian", "b1spline"])
def test_nystroem_maps_are_exact_on_their_landmarks(kernel):
    """Between landmarks the Nystroem map gives the kernel (its positive part: for the
    B1-spline, the landmarks' kernel matrix projected on the PSD cone)."""
    X = images(40)
    fitted = _ocr_data.fit_map(kernel, X, 0, 40)
    F = _ocr_data.transform(fitted, X).toarray()
    A = X.toarray()
    D = np.sqrt(((A[:, None, :] - A[None, :, :]) ** 2).sum(-1))
    K = np.exp(-D ** 2 / (2 * _ocr_data.SIGMA2)) if kernel == "gaussian" else np.maximum(0, 1 - D / fitted["h"])
    lam, U = np.linalg.eigh(K)
    np.testing.assert_allclose(F @ F.T, (U * np.maximum(lam, 0)) @ U.T, atol=1e-8)


def test_random_fourier_features_approximate_the_gaussian():
    """--gaussian-map rff: D random features whose inner products are the Gaussian kernel
    up to an error of order 1/sqrt(D)."""
    A = np.repeat(images(1).toarray(), 16, axis=0)
    for k in range(16):                         # image k differs from image 0 in k pixels
        A[k, :k] = 1 - A[k, :k]
    X = sp.csr_matrix(A)
    F = _ocr_data.transform(_ocr_data.fit_map("gaussian", X, 0, 20000, method="rff"), X).toarray()
    K = np.exp(-((A[:, None, :] - A[None, :, :]) ** 2).sum(-1) / (2 * _ocr_data.SIGMA2))
    assert F.shape == (16, 20000) and K.min() < 0.3 and np.abs(F @ F.T - K).max() < 0.03


def test_b1_width_gives_the_share_of_zeros_nearest_95_percent():
    distances = np.sqrt(np.arange(1, 101, dtype=float))
    h = _ocr_data.b1_width(distances)
    assert h == np.sqrt(6.0)          # 5 of 100 pairs closer than h: 95% zeros


def test_rows_combine_kernels_as_average_or_groups():
    blocks = {"linear": sp.csr_matrix(np.ones((2, 3))), "quadratic": sp.csr_matrix(np.ones((2, 2))),
              "gaussian": sp.csr_matrix(np.ones((2, 1)))}
    X, groups = ocr_table1.features(blocks, "Average (L+Q+G)/3")
    assert groups is None and np.allclose(X.toarray(), 1 / np.sqrt(3))
    X, groups = ocr_table1.features(blocks, "MKL b1 L + b2 Q + b3 G")
    assert groups.tolist() == [0, 0, 0, 1, 1, 2] and np.allclose(X.toarray(), 1.0)


def test_the_objective_is_the_mean_hinge_by_brute_force_plus_the_penalty():
    """objective = mean over words of max_y' (score(y') + Hamming(y, y')) - score(y), by
    enumerating every labelling of short words, + alpha R(W) (squared group norm here)."""
    import itertools
    rng = np.random.default_rng(3)
    lengths = np.array([3, 1, 4, 2])
    X = sp.csr_matrix(rng.standard_normal((lengths.sum(), 5)) * (rng.random((lengths.sum(), 5)) < 0.6))
    y = rng.integers(0, 3, lengths.sum()) + 10          # labels 10, 11, 12: columns 0, 1, 2
    groups = np.array([0, 0, 1, 1, 1])
    model = ocr_table1.tagger("MKL b1 L + b2 Q + b3 G", 10.0, 0.5, len(lengths), groups, 2, 0).fit(X, y, lengths)
    W, b, A, s, e = model.coef_, model.intercept_, model.transitions_, model.start_, model.stop_

    def score(E, labels):
        return (sum(E[i, k] for i, k in enumerate(labels)) + s[labels[0]] + e[labels[-1]]
                + sum(A[j, k] for j, k in zip(labels[:-1], labels[1:])))

    losses, at = [], 0
    for n in lengths:
        E, gold = X[at:at + n] @ W + b, y[at:at + n] - 10
        best = max(score(E, c) + np.sum(np.array(c) != gold) for c in itertools.product(range(3), repeat=n))
        losses.append(max(0.0, best - score(E, gold)))
        at += n
    norms = [np.linalg.norm(W[groups == g]) for g in (0, 1)]
    expected = np.mean(losses) + model.alpha * 0.5 * sum(norms) ** 2
    assert np.mean(losses) > 0
    assert ocr_table1.objective(model, X, y, lengths, groups) == pytest.approx(expected, rel=1e-12)


@pytest.mark.slow
def test_quick_mode_writes_the_table(shared_structured, tmp_path):
    path, = shared_structured(LETTERS)
    parser = ocr_table1.add_arguments(argparse.ArgumentParser())
    args = parser.parse_args(["--quick", "--out-dir", str(tmp_path), "--data-dir", str(path.parent.parent),
                              "--folds", "2"])
    assert ocr_table1.run(args) == 0
    report = (tmp_path / "mkl.md").read_text()
    assert "python -m bench.papers.ocr_table1 --quick --seed 0 --folds 2`" in report
    for row in ocr_table1.ROWS:
        assert f"| {row} |" in report
    assert report.count("(quick)**.") == 7
