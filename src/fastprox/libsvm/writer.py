"""dump_libsvm: X and y written as LIBSVM text, atomically."""
import io

from .._libsvm import format_rows
from .._numpy import np
from .._writes import atomic_write

_WRITE_ROWS = 1 << 16


def dump_libsvm(X, y, path, *, zero_based=False, query_id=None, allow_nonfinite=False):
    """Write ``X`` and ``y`` to a LIBSVM file, atomically, so that it reads back bit for bit.

    Lines are ``label [qid:INT] index:value ...``; stored entries are written,
    explicit zeros included, with Python's shortest round-trip repr, so that
    `load_libsvm` gives back exactly the same matrix. The file is written to a
    temporary file in the same directory and renamed over ``path``: readers
    never see half a file (a symbolic link's target is replaced, the link kept;
    a device or a FIFO is written directly).

    Parameters
    ----------
    X : {array-like, sparse matrix} of shape (n_samples, n_features)
        The rows.
    y : array-like of shape (n_samples,)
        The labels.
    path : str, path-like or binary file object
        The file; a name ending in ``.gz``, ``.bz2`` or ``.xz`` is compressed
        accordingly. A file object opened for writing bytes (as
        ``sklearn.datasets.dump_svmlight_file`` takes) is written at its position,
        neither atomically nor compressed: its owner decides both.
    zero_based : bool, default=False
        Write indices from 0 rather than 1.
    query_id : array-like of int of shape (n_samples,) or None, default=None
        Each row's ``qid:``, written after its label.
    allow_nonfinite : bool, default=False
        Write NaN and infinite labels or values, refused by default (the
        reader refuses them by default too).
    """
    from scipy.sparse import csr_matrix
    X = csr_matrix(X)
    if np.iscomplexobj(X.data):
        raise ValueError("X holds complex numbers, which LIBSVM text cannot: write their real "
                         "and imaginary parts as columns of their own")
    if not X.has_canonical_format:
        X = X.copy()
        X.sum_duplicates()
    y = _real_numbers(y)
    if y.shape != (X.shape[0],):
        raise ValueError(f"y must be 1-D with one label per row of X ({X.shape[0]}), "
                         f"not of shape {y.shape}")
    qids = np.asarray([], dtype=np.int64) if query_id is None else _integers(query_id)
    if query_id is not None and qids.shape != y.shape:
        raise ValueError(f"query_id must be 1-D with one id per row of X ({X.shape[0]}), "
                         f"not of shape {qids.shape}")
    data = X.data.astype(np.float64, copy=False)
    if not allow_nonfinite and not (np.isfinite(data).all() and np.isfinite(y).all()):
        raise ValueError("X or y holds NaN or infinity, which load_libsvm refuses by "
                         "default; pass allow_nonfinite=True to write them anyway")
    indices = X.indices.astype(np.int64, copy=False)
    indptr = X.indptr.astype(np.int64, copy=False)

    def write(out):
        for start in range(0, X.shape[0], _WRITE_ROWS):
            stop = min(start + _WRITE_ROWS, X.shape[0])
            a, b = indptr[start], indptr[stop]
            out.write(format_rows(data[a:b], indices[a:b], indptr[start:stop + 1] - a,
                                  y[start:stop], qids[start:stop], int(not zero_based)))

    if hasattr(path, "write"):      # a binary file object, written where it stands (scikit-learn's f)
        if isinstance(path, io.TextIOBase):
            raise ValueError("dump_libsvm writes bytes: open the file in binary mode ('wb'), or give its path")
        write(path)
    else:
        atomic_write(path, write)


def _real_numbers(y):
    """The labels y as float64, or ValueError: a LIBSVM label is a real number, so
    that class names and complex numbers are refused instead of failing in NumPy
    or losing their imaginary parts."""
    try:
        if np.iscomplexobj(y):
            raise TypeError
        return np.asarray(y, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError("y must hold real numbers (a LIBSVM label is a number): encode class "
                         "names first, e.g. with sklearn.preprocessing.LabelEncoder") from None


def _integers(query_id):
    """query_id as int64, or ValueError unless every id is an integer (a float id
    such as 1.5 would be written truncated)."""
    ids = np.asarray(query_id)
    if ids.dtype.kind in "biu":
        return ids.astype(np.int64)
    try:
        values = _real_numbers(ids)
    except ValueError:
        raise ValueError("query_id must hold integers, one per row") from None
    whole = np.isfinite(values) & (values == np.round(values))
    if not whole.all():
        raise ValueError(f"query_id must hold integers, one per row; got {values[~whole][0]:g}")
    return values.astype(np.int64)
