"""Read sequences from LIBSVM files whose ``qid:`` numbers them.

Each line is an item, ``LABEL qid:ID INDEX:VALUE ...``, as svm-rank and
svmlight write them; consecutive lines with the same ``qid`` form one
sequence (a ``qid`` met again after another starts a new sequence). The
rows are read by :mod:`fastprox.libsvm` (``query_id=True``), so everything
that reader accepts and checks holds here, and its errors name the line;
every line must carry a ``qid:``.
"""
import numpy as np
import scipy.sparse as sp

from ...libsvm import iter_libsvm, load_libsvm

__all__ = ["load_libsvm_sequences", "iter_libsvm_sequences"]

_MISSING_QID = "but query_id=True; give every line a qid:INTEGER or pass query_id=False"
_MISSING_QID_HERE = ("but sequences are told apart by their qid; give every line a qid:INTEGER "
                     "(consecutive lines with the same qid form a sequence)")


def load_libsvm_sequences(path, n_features=None, dtype="float64", zero_based="auto",
                          allow_nonfinite=False):
    """Read a whole LIBSVM file of sequences.

    Parameters
    ----------
    path, n_features, dtype, zero_based, allow_nonfinite
        As for :func:`fastprox.libsvm.load_libsvm`.

    Returns
    -------
    X : scipy.sparse.csr_matrix
        One row per item, all sequences stacked in file order.
    y : ndarray of float64
        The items' labels.
    lengths : ndarray of int64
        The number of items of each sequence, in order.
    qids : ndarray of int64
        Each sequence's qid.
    """
    with _qid_messages():
        X, y, qid = load_libsvm(path, n_features, dtype, zero_based, True, allow_nonfinite)
    lengths, qids = _runs(qid)
    return X, y, lengths, qids


def iter_libsvm_sequences(path, chunk_rows=10_000, n_features=None, dtype="float64",
                          zero_based="auto", allow_nonfinite=False):
    """Yield ``(X, y, lengths, qids)`` chunks of whole sequences.

    The file is read ``chunk_rows`` lines at a time (:func:`fastprox.libsvm.iter_libsvm`);
    the last sequence of a chunk is held back until its end is seen, so a
    sequence is never split and memory holds a chunk plus the longest
    sequence. Chunks may thus hold more or fewer rows than ``chunk_rows``.
    An empty file yields one chunk without rows. Arguments are as for
    :func:`load_libsvm_sequences`; ``zero_based="auto"`` and the width of
    ``X`` follow iter_libsvm's rules for streams.
    """
    chunks = iter_libsvm(path, chunk_rows, n_features, dtype, zero_based, True, allow_nonfinite)
    return _whole_sequences(_renamed(chunks))


def _renamed(chunks):
    with _qid_messages():
        yield from chunks


def _whole_sequences(chunks):
    held, emitted = None, False
    for X, y, qid in chunks:
        if held is not None:
            X, y, qid = _stack(held, (X, y, qid))
        if not len(qid):
            held = (X, y, qid)
            continue
        changes = np.flatnonzero(qid[1:] != qid[:-1])
        last = int(changes[-1]) + 1 if len(changes) else 0      # where the last sequence starts
        if last:
            lengths, qids = _runs(qid[:last])
            emitted = True
            yield X[:last], y[:last], lengths, qids
        held = (X[last:], y[last:], qid[last:])
    if held is not None and (len(held[2]) or not emitted):
        lengths, qids = _runs(held[2])
        yield held[0], held[1], lengths, qids


def _stack(a, b):
    """Rows of ``a`` then of ``b`` (X widened to ``b``'s width, which never shrinks)."""
    width = max(a[0].shape[1], b[0].shape[1])
    X = sp.vstack([sp.csr_matrix(m, shape=(m.shape[0], width)) for m in (a[0], b[0])], format="csr")
    return X, np.concatenate([a[1], b[1]]), np.concatenate([a[2], b[2]])


def _runs(qid):
    """(lengths, qids) of the runs of equal consecutive values of ``qid``."""
    if not len(qid):
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    starts = np.flatnonzero(np.concatenate([[True], qid[1:] != qid[:-1]]))
    lengths = np.diff(np.append(starts, len(qid))).astype(np.int64)
    return lengths, qid[starts].astype(np.int64)


class _qid_messages:
    """Rephrase the LIBSVM reader's missing-qid error, whose advice (drop
    query_id) does not apply when qids are what tells sequences apart."""

    def __enter__(self):
        return self

    def __exit__(self, kind, error, traceback):
        if kind is ValueError and _MISSING_QID in str(error):
            raise ValueError(str(error).replace(_MISSING_QID, _MISSING_QID_HERE)) from None
        return False
