"""Taskar's OCR handwriting words (the MKL paper's Table 1 data) and the explicit kernel maps
of its rows.

* `load_letters`: ``letter.data`` (SOURCES.md of the shared structured data: one
  character a line, ``id, letter, next_id, word_id, position, fold`` and 128 pixels)
  as the pixel rows X (one per character, the words' characters in order), labels y
  (a-z as 0..25), ``lengths`` (characters per word) and each word's fold.
* The kernels of the paper's Table 1 as explicit feature maps, rows of unit norm (the
  paper normalizes its kernels to unit diagonal; the Gaussian's diagonal is 1 already):

  - ``linear``: x / ||x||;
  - ``quadratic``: the exact map of (1 + x.x')^2, every monomial of degree <= 2
    (scikit-learn's PolynomialFeatures) weighted by the square root of its
    coefficient in (1 + x.x')^2, divided by its norm 1 + x.x;
  - ``gaussian``: exp(-||x - x'||^2 / (2 sigma^2)), sigma^2 = 5 (the paper's), by
    random Fourier features (scikit-learn's RBFSampler, gamma = 1 / (2 sigma^2));
  - ``b1spline``: the generalized B1-spline max(0, 1 - ||x - x'|| / h), h the 5%
    quantile of the distances between training characters (so that ~95% of the
    kernel matrix is 0, as the paper chooses h), by the Nystroem map on landmarks
    drawn from the training characters: K(x, Z) U diag(lambda)^(-1/2) over the
    eigenpairs of K(Z, Z) with lambda > 1e-10 lambda_max (the kernel is not positive
    definite in 128 dimensions: its negative part is dropped).

A map is fitted on the training fold (`fit_map`, which only the B1-spline needs) and
applied to any characters (`transform`).
"""
from pathlib import Path

import numpy as np
import scipy.sparse as sp

LETTERS = "abcdefghijklmnopqrstuvwxyz"
KERNELS = ("linear", "quadratic", "gaussian", "b1spline")
PIXELS = 128                   # 16 x 8 binary images
FIELDS = 6 + PIXELS            # id, letter, next_id, word_id, position, fold, pixels
SIGMA2 = 5.0                   # the paper's Gaussian kernel (Table 1)
B1_ZEROS = 0.95                # the B1-spline kernel matrix's share of zeros (the paper's "~95%")
NYSTROEM_TOL = 1e-10           # eigenvalues kept: above this share of the largest


def load_letters(path):
    """(X, y, lengths, folds) of letter.data: X a CSR (characters x 128) of the 0/1
    pixels, y the labels 0..25, lengths the characters of each word, folds each word's
    fold 0..9; words in the order of their ids, characters in their order in the word
    (the file's next_id links, checked against the positions). A malformed file stops
    with ValueError naming the line."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"{path} not found: the OCR letters are described in "
                                f"{path.parent.parent / 'SOURCES.md'} (pass --data-dir to point elsewhere)")
    with open(path) as f:
        lines = f.read().rstrip("\n").split("\n")
    head, pixels = [], bytearray()
    for number, line in enumerate(lines, start=1):
        fields = line.rstrip("\t").split("\t", 6)
        body = fields[-1]
        if len(fields) != 7 or len(body) != 2 * PIXELS - 1 or body[1::2] != "\t" * (PIXELS - 1):
            raise ValueError(f"{path}, line {number}: not {FIELDS} tab-separated fields (id, letter, "
                             f"next_id, word_id, position, fold, {PIXELS} pixels); is this Taskar's "
                             "letter.data?")
        if len(fields[1]) != 1 or fields[1] not in LETTERS:
            raise ValueError(f"{path}, line {number}: the letter {fields[1]!r} is not one of a-z.")
        if body[::2].strip("01"):
            raise ValueError(f"{path}, line {number}: a pixel is not 0 or 1.")
        try:
            head.append([int(v) for v in fields[:1] + fields[2:6]] + [LETTERS.index(fields[1])])
        except ValueError:
            raise ValueError(f"{path}, line {number}: an id, next_id, word_id, position or fold is not "
                             "an integer.") from None
        pixels += body[::2].encode()
    ids, nexts, words, positions, folds, letters = np.asarray(head, dtype=np.int64).T
    pixels = (np.frombuffer(bytes(pixels), dtype=np.uint8) - ord("0")).reshape(-1, PIXELS).astype(np.float64)
    order = _word_order(path, ids, nexts, words, positions)
    words, folds = words[order], folds[order]
    starts = np.flatnonzero(np.r_[True, words[1:] != words[:-1]])
    lengths = np.diff(np.r_[starts, len(order)])
    word_folds = folds[starts]
    if (np.repeat(word_folds, lengths) != folds).any():
        raise ValueError(f"{path}: a word whose characters lie in different folds.")
    return sp.csr_matrix(pixels[order]), letters[order], lengths.astype(np.int64), word_folds


def _word_order(path, ids, nexts, words, positions):
    """The rows' order: words by id, each word's characters by its next_id chain from the
    character no other one points to; ValueError where a chain and the positions disagree."""
    row_of = {i: r for r, i in enumerate(ids.tolist())}
    if len(row_of) != len(ids):
        raise ValueError(f"{path}: character ids repeat.")
    pointed = set(nexts[nexts != -1].tolist())
    heads = sorted((w, r) for r, (i, w) in enumerate(zip(ids.tolist(), words.tolist())) if i not in pointed)
    order = []
    for word, row in heads:
        position = 1
        while True:
            if words[row] != word or positions[row] != position:
                raise ValueError(f"{path}, line {row + 1}: character {ids[row]} follows word {word}'s "
                                 f"chain at position {position} but says word {words[row]}, position "
                                 f"{positions[row]}.")
            order.append(row)
            if nexts[row] == -1:
                break
            if nexts[row] not in row_of:
                raise ValueError(f"{path}, line {row + 1}: next_id {nexts[row]} is no character's id.")
            row, position = row_of[nexts[row]], position + 1
    if len(order) != len(ids):
        raise ValueError(f"{path}: {len(ids) - len(order)} characters lie on no word's chain.")
    return np.asarray(order)


def word_rows(lengths, words):
    """The character rows of the given words (indices into the words), in order."""
    starts = np.r_[0, np.cumsum(lengths)]
    return np.concatenate([np.arange(starts[w], starts[w + 1]) for w in words])


# ---------------------------------------------------------------- the kernels' feature maps
def _unit_rows(F):
    """F (sparse or dense) with every row scaled to norm 1 (zero rows stay 0)."""
    norms = np.sqrt(np.asarray(F.multiply(F).sum(1)).ravel() if sp.issparse(F) else (F ** 2).sum(1))
    scale = np.divide(1.0, norms, out=np.zeros_like(norms), where=norms > 0)
    return sp.csr_matrix(F.multiply(scale[:, None])) if sp.issparse(F) else F * scale[:, None]


def squared_distances(A, B):
    """||a - b||^2 between the rows of A and B (dense) by one matrix product (exact for
    the 0/1 pixels: every term is an integer)."""
    return np.maximum(0.0, (A * A).sum(1)[:, None] + (B * B).sum(1)[None, :] - 2.0 * (A @ B.T))


def _kernel(fitted, A, B):
    """The Gaussian or B1-spline kernel matrix between the rows of A and B (dense)."""
    D2 = squared_distances(A, B)
    if fitted["kernel"] == "gaussian":
        return np.exp(-D2 / (2.0 * SIGMA2))
    return np.maximum(0.0, 1.0 - np.sqrt(D2) / fitted["h"])


def fit_map(kernel, X_train, seed, n_components, method="nystroem"):
    """The fitted map of `kernel` (KERNELS' keys) on the training characters X_train:
    what `transform` needs. n_components: the landmarks of a Nystroem map (the
    Gaussian's and the B1-spline's), or the Gaussian's random Fourier features with
    ``method="rff"``."""
    if kernel == "linear":
        return {"kernel": kernel}
    if kernel == "quadratic":
        from sklearn.preprocessing import PolynomialFeatures
        poly = PolynomialFeatures(degree=2).fit(X_train)
        powers = poly.powers_
        # (1 + u)^2 = sum over alpha, |alpha| <= 2, of 2! / ((2 - |alpha|)! prod alpha_i!) u^alpha
        degree = powers.sum(1)
        coefficient = 2.0 / (np.array([2.0, 1.0, 1.0])[degree] * np.prod(
            np.where(powers == 2, 2.0, 1.0), axis=1))
        return {"kernel": kernel, "poly": poly, "weights": np.sqrt(coefficient)}
    if kernel == "gaussian" and method == "rff":
        from sklearn.kernel_approximation import RBFSampler
        return {"kernel": kernel, "rff": RBFSampler(gamma=1.0 / (2.0 * SIGMA2), n_components=n_components,
                                                    random_state=seed).fit(X_train)}
    if kernel in ("gaussian", "b1spline"):
        rng = np.random.default_rng([seed, 1])
        dense = X_train.toarray()
        fitted = {"kernel": kernel}
        if kernel == "b1spline":
            sample = dense[rng.choice(len(dense), min(2000, len(dense)), replace=False)]
            fitted["h"] = b1_width(np.sqrt(squared_distances(sample, sample)[np.triu_indices(len(sample), 1)]))
        landmarks = dense[rng.choice(len(dense), min(n_components, len(dense)), replace=False)]
        lam, U = np.linalg.eigh(_kernel(fitted, landmarks, landmarks))
        keep = lam > NYSTROEM_TOL * lam.max()
        fitted.update(landmarks=landmarks, projection=U[:, keep] / np.sqrt(lam[keep]), dropped=int((~keep).sum()))
        return fitted
    raise ValueError(f"unknown kernel {kernel!r}")


def b1_width(distances):
    """h of the B1-spline: the distance d among those observed for which the share of
    pairs closer than d (the kernel's non-zeros) is nearest 1 - B1_ZEROS (distances
    between binary images take few values, so no h gives exactly 5%)."""
    values = np.unique(distances)
    below = np.searchsorted(np.sort(distances), values) / len(distances)
    return float(values[np.argmin(np.abs(below - (1.0 - B1_ZEROS)))])


def transform(fitted, X):
    """The fitted map's features of the characters X (CSR pixels): a CSR matrix."""
    kernel = fitted["kernel"]
    if kernel == "linear":
        return _unit_rows(X)
    if kernel == "quadratic":
        return _unit_rows(sp.csr_matrix(fitted["poly"].transform(X).multiply(fitted["weights"][None, :])))
    if "rff" in fitted:
        return _dense_csr(fitted["rff"].transform(X))
    return _dense_csr(_kernel(fitted, X.toarray(), fitted["landmarks"]) @ fitted["projection"])


def _dense_csr(F):
    """The dense matrix F as a CSR matrix of all its entries (no scan for zeros: these
    maps' features are dense)."""
    n, d = F.shape
    return sp.csr_matrix((F.ravel(), np.tile(np.arange(d, dtype=np.int32), n),
                          np.arange(0, n * d + 1, d, dtype=np.int64)), shape=(n, d))
