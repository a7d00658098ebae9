"""Train one fastprox model on a Dask cluster, from data where it lies.

``pip install "fastprox[dask]"``; ``import fastprox`` does not import Dask,
this module does. docs/dask.md describes the modes, what is mixed for each
update rule and why it is sound, and what is refused.

    from fastprox import ProxClassifier
    from fastprox.dask import fit
    clf = fit(ProxClassifier(update="ftrl"), "logs/day-*.svm.gz", passes=3, client=client)

`fit` returns an ordinary fitted ProxClassifier or ProxRegressor (pickle,
``save_model``, ``predict``; dask_ml's ``ParallelPostFit`` predicts with it
over a Dask collection, and ``Incremental`` trains it block after block).
"""
import math
import numbers
import os
import sys
import warnings
from collections.abc import Iterable

from .._mixing import parallel_params, params_kind
from ..stream.files import CHUNK_ROWS
from ..stream.model import StreamModel
from ..stream.spelling import PYTHON_CALL
from .._numpy import np

try:
    import distributed  # noqa: F401  (the client and workers of every run: _run's, _tasks')
except ImportError as error:
    raise ImportError('fastprox.dask needs Dask\'s distributed scheduler, which fastprox\'s dask extra '
                      'installs: pip install "fastprox[dask]"', name=error.name) from error

from ._labels import Labels
from ._run import MIN_SYNC_ROWS, TIMEOUT, ClusterError, Watch, check_sync_rows, closed, connected, quiet, run
from ._shares import BlockShare, file_shares

__all__ = ["fit", "ClusterError", "MIN_SYNC_ROWS"]


def fit(estimator, data, y=None, *, client=None, passes=None, sequential=False, sync_rows=None,
        classes=None, n_features=None, chunk_rows=CHUNK_ROWS, hash_bits=None, zero_based="auto",
        n_workers=None, progress=False, timeout=TIMEOUT, sample_weight=None):
    """Train ``estimator``'s model on a Dask cluster; a fitted copy of it.

    Bad input raises the reader's or the kernel's ValueError naming the file
    and line (or block and row), and a directory among the files is named;
    a task lost with its worker is run again by Dask on another worker, and
    past Dask's allowed failures (or ``timeout`` without workers) the call
    raises ClusterError: no model is ever returned without a share.

    Parameters
    ----------
    estimator : ProxClassifier or ProxRegressor
        The parameters of the model to train; it is copied, not changed.
    data : str, list of str, dask.array, dask.dataframe.DataFrame or dask.bag
        A path, a glob pattern or a list of them (LIBSVM files, plain or
        compressed: each read by the worker its task runs on, chunk by chunk,
        never through the client); a dask.array of rows (sparse or dense
        chunks; its blocks across the columns are joined) or a DataFrame of
        numeric columns (its names, all strings and no hashing, become the
        model's ``feature_names_in_``, as a flat fit on a pandas DataFrame's);
        or a dask.bag whose items are ``(X, y)`` blocks or
        ``(X, y, sample_weight)`` triples (the rows' importance weights, as
        ``partial_fit``'s; the progressive losses are means over them). The
        shares are the files, the array's row blocks (or the DataFrame's
        partitions), or the bag's partitions.
    y : dask.array, dask.dataframe.Series or None, default=None
        The labels of a dask.array's or a DataFrame's rows (one column: an
        (n, 1) column warns, as scikit-learn's ``DataConversionWarning``). Rechunked
        as X's rows where both have known block sizes; else taken in X's blocks,
        one of y's for each of X's (the same DataFrame's partitions).
    client : distributed.Client or None, default=None
        The cluster's client (None: the current one).
    passes : int or None, default=None
        Passes over the data (None: the estimator's max_iter), all of them: no
        stopping rule (``tol``, ``early_stopping``) on a cluster. Rows are visited
        in the shares' order, never shuffled (as ``fastprox train``).
    sequential : bool, default=False
        False: the parallel mode. The shares are dealt to ``n_workers`` groups;
        each pass, or each ``sync_rows`` rows per group, every group trains its
        own copy of the current model on its next rows, and the copies are
        mixed on the cluster (a tree reduction) into the next model
        (docs/dask.md). The normalized schedule has no sound mix:
        ``schedule=None`` (the estimator's default) trains with "adagrad" here,
        and the fitted copy's params say so. True: the model visits the shares
        one after another, on the workers that hold them, and is the
        single-machine model over the same rows, bit for bit.
    sync_rows : int or None, default=None
        Mix every this many rows per group (None: once per pass); files only;
        at least MIN_SYNC_ROWS (1,000): a round costs a few trips through the
        scheduler, tens of milliseconds, which fewer rows would spend on mixing
        rather than training. A group's next round resumes the file it stopped
        inside from its reader, left open on the worker that ran the round.
    classes : array-like or None, default=None
        Every label. None: numeric labels are recognized as ``fastprox train``
        does, two from the first share's rows (several classes need them);
        labels that are not numbers (strings, categories) are a dask.array's or
        Series' distinct labels, read once before training (a bag's need
        them). The fitted copy's ``classes_`` are the labels, of their type, as
        a flat fit's.
    n_features : int or None, default=None
        The width of files' rows, as ``fastprox train --n-features`` (None: the
        model grows with the features met).
    chunk_rows : int, default=10000
        Rows read at a time from files (``--chunk-rows``).
    hash_bits : int or None, default=None
        Hash the ids into 2^hash_bits columns, files and collections alike
        (None: the estimator's ``hash_bits``; given both, they must agree); the
        fitted copy remembers it (``hash_bits_``), as a model trained on one
        machine does.
    zero_based : bool or "auto", default="auto"
        The files' indices, as ``fastprox train --zero-based``.
    n_workers : int or None, default=None
        The parallel mode's groups (None: the cluster's workers). The model
        depends on the number of groups: give it for the same model whatever
        the workers connected at the call.
    progress : bool or callable, default=False
        True to print progress on standard error (the sequential mode's
        progressive validation table, as ``fastprox train``'s; a line per
        round in parallel mode), or a function taking each line.
    timeout : float, default=60
        Seconds after which a cluster that has had no worker ends the call with
        ClusterError (Dask's tasks would wait for workers for ever: its
        no-workers timeout is off by default).
    sample_weight : dask.array, dask.dataframe.Series or None, default=None
        The importance weights of a dask.array's or a DataFrame's rows, as
        ``partial_fit``'s ``sample_weight`` (finite, >= 0; the progressive losses
        are means over them), cut as X's rows as ``y`` is. A bag's items carry
        theirs, ``(X, y, sample_weight)``; files have none.

    Returns
    -------
    ProxClassifier or ProxRegressor
        A fitted copy of ``estimator``.
    """
    from ..linear_model import ProxClassifier, ProxRegressor
    from ..model_io import SavedModel, estimator_of
    if not isinstance(estimator, (ProxClassifier, ProxRegressor)):
        raise ValueError(f"fastprox.dask.fit trains a ProxClassifier or ProxRegressor, not "
                         f"{type(estimator).__name__}")
    check_sync_rows(sync_rows)
    sync_rows = None if sync_rows is None else int(sync_rows)
    if n_workers is not None and (isinstance(n_workers, bool) or not isinstance(n_workers, numbers.Integral)
                                  or n_workers < 1):
        raise ValueError(f"n_workers must be None (the cluster's workers) or a positive integer, the parallel "
                         f"mode's groups, not {n_workers!r}")
    if not (isinstance(timeout, (int, float)) and timeout > 0):
        raise ValueError(f"timeout must be a positive number of seconds, not {timeout!r}")
    params = estimator.get_params() if sequential else parallel_params(estimator.get_params())
    if hash_bits is not None and params["hash_bits"] not in (None, hash_bits):
        raise ValueError(f"hash_bits={hash_bits} but the estimator's hash_bits={params['hash_bits']}: give one")
    params = dict(params, hash_bits=params["hash_bits"] if hash_bits is None else hash_bits)
    if params.get("class_weight") is not None:
        raise ValueError("class_weight is not supported on a cluster: weigh the rows' classes in the "
                         "data, or train on one machine")
    if params.get("early_stopping"):
        raise ValueError("early_stopping is not supported on a cluster (no rows are held out): give "
                         "passes, or train on one machine")
    if params.get("average") and not sequential:
        raise ValueError("average is not mixed across workers (each keeps its own sums): use "
                         "sequential=True, or average=False on a cluster")
    regression = isinstance(estimator, ProxRegressor)
    if classes is not None and regression:
        raise ValueError("classes are a classifier's: a ProxRegressor takes none")
    est = StreamModel(params, regression)
    est.width_origin = "the largest feature index in the data"
    est.spelling = PYTHON_CALL
    if not sequential:
        params_kind(params)
    names = _feature_names(data) if params["hash_bits"] is None else None
    client = client if client is not None else _default_client()
    if closed(client):
        raise ValueError("the Dask client is closed: pass an open one (or none: the current client)")
    data, y, sample_weight = _arrays(data, y, sample_weight)
    shares, blocks = _shares(client, data, y, dict(chunk_rows=chunk_rows, n_features=n_features,
                                                   hash_bits=params["hash_bits"], zero_based=zero_based),
                             sample_weight)
    labels = None if regression else _labels(classes, y, shares, blocks,
                                             lambda work: Watch(client, timeout).result(client.compute(work)))
    est.classes = None if regression else labels.stream
    if blocks is not None and sync_rows is not None:
        raise ValueError("sync_rows is for files: a Dask collection's groups mix once per pass (cut "
                         "it into more blocks and give n_workers for smaller groups)")
    passes = params["max_iter"] if passes is None else passes
    if isinstance(passes, bool) or not isinstance(passes, numbers.Integral) or passes < 1:
        raise ValueError(f"passes must be a positive integer, not {passes!r}")
    passes = int(passes)
    n_workers = int(n_workers) if n_workers is not None else max(1, len(connected(client)))
    result = run(client, est, shares, blocks, passes, sequential, sync_rows, n_workers, _say(progress), timeout)
    model = result.est
    learner = model.learner
    rows = sum(n for _, n in result.losses)
    fitted = {"n_features_in_": learner.n_features, "t_": learner.t, "n_iter_": passes,
              "progressive_loss_": sum(loss * n for loss, n in result.losses) / max(rows, 1),
              "sparse_coef": False, "hash_bits_": params["hash_bits"]}
    out_classes = None if regression else labels.fitted(model.classes)
    if names is not None and len(names) != learner.n_features:     # (n_features widened the model)
        names = None
    fitted_est = estimator_of(SavedModel(type(estimator).__name__, params, learner, fitted, out_classes, names))
    fitted_est.cluster_rounds_ = result.rounds
    return fitted_est


def _default_client():
    from distributed import get_client
    try:
        return get_client()
    except ValueError:
        raise ValueError("no Dask client: pass client=, or create a distributed.Client first") from None


def _feature_names(data):
    """A dask DataFrame's column names where they are all strings, as a flat estimator
    fitted on a pandas DataFrame keeps them (scikit-learn's rule, read from the
    DataFrame's empty pandas template: no partition is computed); None otherwise."""
    dd = sys.modules.get("dask.dataframe")
    if dd is None or not isinstance(data, dd.DataFrame):
        return None
    from sklearn.utils.validation import _get_feature_names
    return _get_feature_names(data._meta)


def _arrays(data, y, sample_weight):
    """(data, y, sample_weight) with a dask DataFrame and Series as their dask.arrays:
    row blocks, the partitions. A Series of pandas' own types is taken as scikit-learn takes it in a flat
    fit: nullable numbers as floats, strings and categories as Python objects (Dask
    would take those with a warning).
    dask.dataframe (like dask.array and dask.bag in `_shares`) is looked up, not
    imported: data of its have imported it already, and a run over files should not
    pay for its import on its critical path."""
    dd = sys.modules.get("dask.dataframe")
    if dd is None:
        return data, y, sample_weight
    if isinstance(y, dd.Series) and not isinstance(y.dtype, np.dtype):
        numbers = getattr(getattr(y.dtype, "numpy_dtype", None), "kind", "O") in "biuf"
        y = y.astype(np.float64 if numbers else object)
    with warnings.catch_warnings():     # (older Dask takes object back to its pyarrow strings, then warns
        warnings.filterwarnings("ignore", "Dask currently has limited support for converting pandas "
                                "extension dtypes", UserWarning)     # as it makes them objects again)
        return tuple(v.to_dask_array() if isinstance(v, (dd.DataFrame, dd.Series)) else v
                     for v in (data, y, sample_weight))


def _labels(classes, y, shares, blocks, compute):
    """A classifier's `Labels` (``classes`` given or None, ``y`` the labels of a
    dask.array's rows or None), the shares of a collection told how to code theirs;
    ``compute``: a Dask collection -> its value, computed on the run's cluster."""
    da = sys.modules.get("dask.array")
    labels = Labels(classes, y if da is not None and isinstance(y, da.Array) else None, compute)
    if labels.coded is not None and blocks is None:
        raise ValueError(f"the files' labels are numbers: classes must be numbers too, not "
                         f"{', '.join(map(repr, labels.coded.tolist()))}")
    for share in shares if blocks is not None else ():
        share.classes = labels.coded
    return labels


def _shares(client, data, y, reading, sample_weight=None):
    """(shares, their data as Delayed blocks, or None) for files, a dask.array (a
    DataFrame's, `_arrays`) or a dask.bag."""
    da, db = (sys.modules.get(f"dask.{name}") for name in ("array", "bag"))
    if da is not None and isinstance(data, da.Array):
        return _array_shares(da, data, y, reading["hash_bits"], sample_weight)
    if sample_weight is not None:
        raise ValueError("sample_weight is for a dask.array's or a DataFrame's rows: a dask.bag's items carry "
                         "theirs, (X, y, sample_weight) triples, and files have none")
    if db is not None and isinstance(data, db.Bag):
        if y is not None:
            raise ValueError("a dask.bag's items hold their labels, (X, y) blocks: pass y only with a "
                             "dask.array X")
        parts = data.to_delayed()
        return [BlockShare(data.name, i, hash_bits=reading["hash_bits"]) for i in range(len(parts))], parts
    if hasattr(data, "shape") or not isinstance(data, (str, os.PathLike, Iterable)):      # (rows in memory)
        raise ValueError(f"data must be a path, a glob pattern or a list of them, a dask.array, a dask.dataframe or "
                         f"a dask.bag, not {type(data).__module__}.{type(data).__qualname__} (an array in memory: "
                         f"dask.array.from_array(X, chunks=ROWS) spreads it, or train on this machine)")
    if y is not None:
        raise ValueError("y is read from the files' labels: pass y only with a dask.array X")
    return file_shares(data, **reading), None


def _array_shares(da, X, y, hash_bits, sample_weight=None):
    """The row blocks of the dask.array ``X`` (blocks across its columns joined) with
    the labels ``y`` (and the rows' ``sample_weight``, if given) cut as them. Blocks of
    unknown sizes (a DataFrame's partitions, a boolean selection) are taken as they
    are, paired with y's blocks in turn (each pair's rows and labels counted where it
    is read, `BlockShare.chunks`): dealt to the groups by count, not rows."""
    if y is None:
        raise ValueError("a dask.array X needs y, a dask.array of labels chunked as X's rows")
    if X.ndim != 2:
        raise ValueError(f"a dask.array X is a matrix of rows, not an array of shape {X.shape}")
    if X.dtype.kind not in "biuf":
        raise ValueError(f"X's values must be numbers, not {X.dtype} (a DataFrame's columns: select the numeric ones)")
    if len(X.chunks[1]) != 1:
        X = X.rechunk({1: -1})
    y = da.asarray(y)
    if y.ndim == 2 and y.shape[1] == 1:     # a column of labels, taken and warned of as column_or_1d does
        from sklearn.exceptions import DataConversionWarning
        warnings.warn("A column-vector y was passed when a 1d array was expected: y's shape should be "
                      "(n_samples,), for example y[:, 0] or a Series.", DataConversionWarning, stacklevel=4)
        y = y[:, 0]
    columns = [_cut_as_rows(X, y, "y", "label")]
    if sample_weight is not None:
        columns.append(_cut_as_rows(X, da.asarray(sample_weight), "sample_weight", "weight"))
    blocks = [_tuple(Xb, *vb) for Xb, *vb in zip(X.to_delayed()[:, 0], *(v.to_delayed() for v in columns))]
    sizes = [0 if math.isnan(n) else n for n in X.chunks[0]]
    return [BlockShare(X.name, i, n, hash_bits) for i, n in enumerate(sizes)], blocks


def _cut_as_rows(X, v, name, per_row):
    """``v`` (a dask.array named ``name``, one ``per_row`` for each of X's rows) cut
    as X's row blocks; of unknown sizes, the same number of blocks as X's."""
    if v.ndim != 1:
        raise ValueError(f"{name} must hold one {per_row} per row of X, not an array of shape {v.shape}")
    unknown = any(math.isnan(n) for n in X.chunks[0] + v.chunks[0])
    if unknown and len(X.chunks[0]) != len(v.chunks[0]):
        raise ValueError(f"X and {name} have row blocks of unknown sizes, X {len(X.chunks[0])} and {name} "
                         f"{len(v.chunks[0])} of them: give {name} in X's blocks (the same DataFrame's "
                         f"partitions), or call compute_chunk_sizes() on both")
    if unknown:
        return v
    if v.shape[0] != X.shape[0]:
        raise ValueError(f"X has {X.shape[0]} rows but {name} has {v.shape[0]} {per_row}s")
    return v.rechunk({0: X.chunks[0]})


def _tuple(*parts):
    from dask import delayed
    return delayed(tuple)(list(parts))


def _say(progress):
    """progress -> a function taking a line (or `quiet`)."""
    if callable(progress):
        return progress
    if progress:
        return lambda line: print(line, file=sys.stderr, flush=True)
    return quiet
