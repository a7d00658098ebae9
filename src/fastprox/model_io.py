"""Model files: save a fitted ProxClassifier / ProxRegressor, load it back ready
to predict and to continue ``partial_fit`` exactly where it stopped.

Why not pickle: a pickle runs code when loaded, ties the file to the class
layout of one version, and stores every weight of an l1 model, zeros
included. This format stores only the features the model has touched, names
its version, and is read with ``allow_pickle=False``: loading an untrusted
file runs no code.

Format, version 3
-----------------
A NumPy ``.npz`` archive (a zip of ``.npy`` arrays, deflated but for
``state``, whose float64 values deflate by under a fifth at fifteen times the
cost of storing them; no object arrays), written to a temporary file next to the target and renamed over it,
so that readers never see half a file. The file name is used as given (no
``.npz`` is appended). Members:

``header``
    0-d unicode array holding a JSON object:

    - ``format``: ``"fastprox-model"``; ``version``: ``3``;
    - ``class``: ``"ProxClassifier"`` or ``"ProxRegressor"``;
    - ``params``: ``get_params()`` (``random_state`` must be None or an int;
      arrays such as ``groups`` become lists, a ``class_weight`` dict a list of
      [class, weight] pairs: JSON's keys are strings);
    - ``learner``: the kernel's own constructor arguments (``n_features``,
      ``n_outputs``, ``update``, ``schedule``, ``penalty``, ``loss``,
      ``alpha``, ``l1_ratio``, ``eta0``, ``delta``, ``rda_rho``,
      ``berhu_gamma``, ``epsilon``, ``fit_intercept``, ``ovr``,
      ``multinomial``; ``groups`` and ``group_weights`` are members of their
      own): they may differ from ``params`` after a ``set_params`` following
      the fit, and training continues with the kernel's;
    - ``scalars``: the kernel's counters ``t``, ``n_ops``, ``since_rebase``,
      ``heap_size`` and the scalar-FOBOS cumulants ``P``, ``Q`` (JSON floats
      are written as Python's shortest round-trip repr: exact);
    - ``fitted``: ``n_features_in_``, ``t_``, ``n_iter_``,
      ``progressive_loss_`` and ``sparse_coef`` (whether ``sparsify()`` was
      called).

``rows`` (int64, r) and ``state`` (float64, r x width)
    The rows of the kernel's (n_features, width) state array that differ,
    bit for bit, from the row of a never-touched feature, in increasing
    order. Every other row is that initial row. An l1 model stores only the
    features it has seen.
``groups`` (int64, n_features; only for models with user groups)
    The kernel's feature groups.
``group_weights`` (float64, one per group; only for models with group weights)
    The kernel's group penalty weights d_G.
``bstate``, ``gstamp``, ``gnorm`` and any other kernel array
    Stored whole under the kernel's name (intercepts, group stamps and norms:
    small).
``heap_items`` (int64, heap_size) and ``heap_keys`` (float64, heap_size)
    Berhu's heap of l2-phase entries (empty for other models); the heap's
    position index is rebuilt from ``heap_items``.
``classes`` (classifier only)
    ``classes_``; strings are stored as a unicode array.
``feature_names`` (only when fitted on a DataFrame)
    ``feature_names_in_`` as a unicode array.

Loading checks the format name, the version, the class, the parameters and
every shape, and raises ``ValueError`` naming the file and what is wrong.

Earlier versions load too. Version 2 differs only in FTRL's entries: always
(z, n), where version 3 keeps (z, n, sqrt(n)) when the kernel does (models of
up to 2^19 weights); loading adds the square roots.
Version 1 (before ``group_weights``) is version 2 with neither the member nor
the parameter; such files load as models without group weights.
"""
import io
import json
import numbers
import os
import struct
import sys
import zipfile
import zlib
from array import array
from collections import namedtuple

from ._core import python_floats
from ._kernels import SAVED_INT64, Learner
from ._numpy import np
from .libsvm import _atomic_write

__all__ = ["save_model", "load_model", "read_model", "SavedModel", "FORMAT", "VERSION"]

FORMAT = "fastprox-model"
VERSION = 3
_READS = (1, 2, 3)   # versions this fastprox reads (see the format's history above)

_CLASS_NAMES = ("ProxClassifier", "ProxRegressor")


def _classes():
    """name -> estimator class (imported on use: writing a file needs no scikit-learn)."""
    from .linear_model import ProxClassifier, ProxRegressor
    return {cls.__name__: cls for cls in (ProxClassifier, ProxRegressor)}
_LEARNER_ARGS = ("n_features", "n_outputs", "update", "schedule", "penalty", "loss", "alpha",
                 "l1_ratio", "eta0", "delta", "rda_rho", "berhu_gamma", "epsilon",
                 "fit_intercept", "ovr", "multinomial")
# Kernel arrays with their own encoding below; every other one is stored whole.
_SPECIAL = ("state", "heap_items", "heap_keys", "heap_pos")
_SCALARS = ("t", "n_ops", "since_rebase", "heap_size", "P", "Q")
_READ_ERRORS = (zipfile.BadZipFile, zlib.error, EOFError, KeyError, ValueError, OSError)


def save_model(est, path):
    """Write the fitted estimator ``est`` to ``path`` (format above), atomically.

    Raises ``ValueError`` if ``est`` is not a fitted ProxClassifier or
    ProxRegressor, or holds something the format cannot store without
    pickle (a RandomState as ``random_state``, non-string object classes).
    """
    name = type(est).__name__
    if _classes().get(name) is not type(est):
        raise ValueError(f"save_model saves ProxClassifier and ProxRegressor, not {name}.")
    from sklearn.utils.validation import check_is_fitted  # loaded already: est is an estimator
    from ._concurrency import lock_of
    check_is_fitted(est, "t_")
    with lock_of(est).reading():        # the model of one step, whatever trains meanwhile
        fitted = {"n_features_in_": int(est.n_features_in_), "t_": int(est.t_),
                  "n_iter_": int(est.n_iter_), "progressive_loss_": float(est.progressive_loss_),
                  "sparse_coef": bool(getattr(est, "_sparse_coef", False))}
        write_model(path, name, est.get_params(), est._learner, fitted, getattr(est, "classes_", None),
                    getattr(est, "feature_names_in_", None))


def write_model(path, name, params, learner, fitted, classes=None, feature_names=None):
    """The file for an estimator of class ``name`` (its ``get_params()``, kernel,
    fitted attributes, classes and feature names), without the estimator: the
    command line writes its models this way, without importing scikit-learn or,
    for numeric classes given as a list, NumPy."""
    if name not in _CLASS_NAMES:
        raise ValueError(f"model class {name!r} is not one of {_CLASS_NAMES}.")
    params = dict(params)
    if params["random_state"] is not None and not isinstance(params["random_state"], numbers.Integral):
        raise ValueError("random_state must be None or an int to be saved (a RandomState cannot "
                         "be written without pickle); call set_params(random_state=SEED) first.")
    params["random_state"] = None if params["random_state"] is None else int(params["random_state"])
    if isinstance(params.get("class_weight"), dict):
        params["class_weight"] = list(params["class_weight"].items())
    saved, scalars = learner.saved_arrays(), learner.scalars()
    rows, state = learner.changed_state()
    size = scalars["heap_size"]
    header = {
        "format": FORMAT, "version": VERSION, "class": name, "params": params,
        "learner": {key: getattr(learner, key) for key in _LEARNER_ARGS},
        "scalars": {key: scalars[key] for key in _SCALARS},
        "fitted": fitted,
    }
    members = {"header": _npy_text(json.dumps(header, default=_plain_json)),
               "rows": _npy(rows, (len(rows),)), "state": _npy(state, (len(rows), saved["state"][1][1])),
               "heap_items": _npy(saved["heap_items"][0][:size], (size,), "i8"),
               "heap_keys": _npy(saved["heap_keys"][0][:size], (size,), "f8")}
    members.update((name, _npy(a, shape, "i8" if name in SAVED_INT64 else "f8"))
                   for name, (a, shape) in saved.items() if name not in _SPECIAL)
    for name in ("groups", "group_weights"):
        if getattr(learner, name) is not None:
            members[name] = _npy_array(getattr(learner, name))
    if python_floats(classes):          # the command line's
        members["classes"] = _npy(array("d", classes), (len(classes),))
    elif classes is not None:
        members["classes"] = _npy_array(_plain_array("classes_", classes))
    if feature_names is not None:
        members["feature_names"] = _npy_array(_plain_array("feature_names_in_", feature_names))
    _atomic_write(os.fspath(path), lambda f: _write_npz(f, members), compress=False)


def _write_npz(f, members):
    """An archive that np.load reads as np.savez_compressed's, but with ``state``
    stored, not deflated (see the format above), and the rest deflated at level
    1, not 6 (deflating ``rows`` at level 6 took most of the time): a model of
    reuters is written in 1 ms instead of 15, to a file a fifth larger."""
    with zipfile.ZipFile(f, "w") as archive:
        for name, npy in members.items():
            archive.writestr(f"{name}.npy", npy, compresslevel=1, compress_type=(
                zipfile.ZIP_STORED if name == "state" else zipfile.ZIP_DEFLATED))


_ORDER = "<" if sys.byteorder == "little" else ">"


def _npy(values, shape, kind=None):
    """The ``.npy`` file (format 1.0) of a C-ordered buffer of numbers: an
    ``array.array`` (float64 "d", int64 "q") or a NumPy array; ``kind`` ("f8",
    "i8") is its type when it may be either (the kernel's buffers)."""
    kind = kind or {"d": "f8", "q": "i8"}[values.typecode]
    return _npy_bytes(_ORDER + kind, shape, memoryview(values).cast("B"))


def _npy_text(text):
    """The ``.npy`` file of a 0-d unicode array holding ``text``."""
    return _npy_bytes(f"{_ORDER}U{len(text)}", (), text.encode("utf-32-le" if _ORDER == "<" else "utf-32-be"))


def _npy_array(a):
    """The ``.npy`` file of a NumPy array (strings included), written here as
    the kernel's buffers are, so that a file is written one way."""
    a = np.ascontiguousarray(a)
    return _npy_bytes(a.dtype.str, a.shape, a.tobytes())


def _npy_bytes(descr, shape, data):
    """Format 1.0 of NumPy's ``.npy``: magic, header length, a dict literal padded
    with spaces to a multiple of 64 bytes, then the data (numpy.lib.format)."""
    header = "{'descr': %r, 'fortran_order': False, 'shape': %r, }" % (descr, tuple(shape))
    length = len(header) + 1
    length += -(10 + length) % 64
    return b"".join([b"\x93NUMPY\x01\x00", struct.pack("<H", length),
                     header.ljust(length - 1).encode("latin1"), b"\n", bytes(data)])


def load_model(path, cls=None):
    """Read an estimator written by :func:`save_model`.

    ``cls`` (ProxClassifier or ProxRegressor), when given, is the class the
    file must hold. A missing or unreadable file raises the usual
    ``OSError``; anything wrong inside it raises ``ValueError`` starting
    ``PATH:`` and saying what is wrong.
    """
    model = read_model(path)
    try:
        return _estimator(model, cls)
    except (KeyError, TypeError, ValueError) as e:
        raise _file_error(path, e) from e


def _estimator(model, expected):
    """The estimator for a SavedModel, of class ``expected`` unless that is None."""
    cls = _classes()[model.name]
    if expected is not None and cls is not expected:
        raise ValueError(f"holds a {cls.__name__}, not a {expected.__name__}")
    if isinstance(model.params.get("class_weight"), list):
        model.params["class_weight"] = dict(model.params["class_weight"])
    est = cls(**model.params)
    est._learner = model.learner
    for key in ("n_features_in_", "t_", "n_iter_", "progressive_loss_"):
        setattr(est, key, model.fitted[key])
    est._sparse_coef = model.fitted["sparse_coef"]
    if model.classes is not None:
        est.classes_ = model.classes
    if model.feature_names is not None:
        est.feature_names_in_ = model.feature_names.astype(object)
    return est


class SavedModel(namedtuple("SavedModel", "name params learner fitted classes feature_names")):
    """A model file's contents, checked, without the estimator: the class name,
    its parameters, the kernel, the fitted attributes (``n_features_in_``,
    ``t_``, ``n_iter_``, ``progressive_loss_``, ``sparse_coef``), the classes
    (None for a regressor) and the feature names (None if not saved).
    (A namedtuple, not typing's NamedTuple: typing's import would lengthen
    the command line's start-up.)"""
    __slots__ = ()


def read_model(path):
    """The :class:`SavedModel` in the file at ``path``, read and checked as
    :func:`load_model` does but without scikit-learn (whose import costs the
    command line's ``predict`` more than predicting a small file). Errors as
    for load_model."""
    path = os.fspath(path)
    with open(path, "rb") as f:
        content = f.read()
    try:
        with np.load(io.BytesIO(content), allow_pickle=False) as npz:
            members = {key: npz[key] for key in npz.files}
        header = json.loads(str(members.pop("header")))
    except _READ_ERRORS as e:
        raise ValueError(f"{path}: not a readable fastprox model file ({type(e).__name__}: {e}); "
                         f"it may be truncated or another kind of file") from e
    try:
        return _decode(header, members)
    except (KeyError, TypeError, ValueError) as e:
        raise _file_error(path, e) from e


def _file_error(path, e):
    """The ValueError naming ``path`` for what is wrong inside a model file."""
    what = f"missing entry {e}" if isinstance(e, KeyError) else str(e)
    return ValueError(f"{os.fspath(path)}: {what}")


def _decode(header, members):
    """The SavedModel a decoded file describes; ValueError/KeyError if inconsistent."""
    if not isinstance(header, dict) or header.get("format") != FORMAT:
        raise ValueError(f"not a fastprox model file (no format {FORMAT!r} in its header)")
    if header["version"] not in _READS:
        raise ValueError(f"model format version {header['version']!r}, but this fastprox reads "
                         f"versions {_READS[0]} to {_READS[-1]}; load it with the fastprox that "
                         "wrote it, or retrain")
    if header["class"] not in _CLASS_NAMES:
        raise ValueError(f"unknown model class {header['class']!r}; expected one of {sorted(_CLASS_NAMES)}")
    spec, scalars, fitted = header["learner"], header["scalars"], header["fitted"]
    try:
        learner = Learner(*(spec[key] for key in _LEARNER_ARGS), groups=members.get("groups"),
                          group_weights=members.get("group_weights"))
    except KeyError as e:
        raise ValueError(f"unknown kernel option {e} in the header's learner entry") from e
    saved = learner.__getstate__()
    arrays = saved["arrays"]
    d, K = spec["n_features"], spec["n_outputs"]
    if header["version"] < 3 and spec["update"] == "ftrl" and arrays["state"].shape[1] == 3 * K:
        _add_ftrl_roots(members, K)
    rows, state = members["rows"], members["state"]
    _check_shape("state", state, (len(rows), arrays["state"].shape[1]), np.float64)
    _check_shape("rows", rows, (len(rows),), np.int64)
    if len(rows) and (rows[0] < 0 or rows[-1] >= d or np.any(np.diff(rows) <= 0)):
        raise ValueError(f"rows must be increasing feature indices in [0, {d})")
    arrays["state"][rows] = state
    for name, a in arrays.items():
        if name not in _SPECIAL:
            _check_shape(name, members[name], a.shape, a.dtype)
            a[...] = members[name]
    size = scalars["heap_size"]
    if size and len(arrays["heap_items"]) < size:
        raise ValueError(f"heap_size={size} but this model has no Berhu heap of that size")
    _check_shape("heap_items", members["heap_items"], (size,), np.int64)
    _check_shape("heap_keys", members["heap_keys"], (size,), np.float64)
    items = members["heap_items"]
    if size and (items.min() < 0 or items.max() >= d * K):
        raise ValueError(f"heap_items must lie in [0, {d * K})")
    arrays["heap_items"][:size] = items
    arrays["heap_keys"][:size] = members["heap_keys"]
    arrays["heap_pos"][items] = np.arange(size)
    learner.__setstate__({"arrays": arrays, **{key: scalars[key] for key in _SCALARS}})
    if fitted["n_features_in_"] != d:
        raise ValueError(f"n_features_in_={fitted['n_features_in_']} but the model has {d} features")
    classes = None
    if header["class"] == "ProxClassifier":
        classes = members["classes"]
        n_classes = 2 if K == 1 else K
        if classes.ndim != 1 or len(classes) != n_classes:
            raise ValueError(f"classes has shape {classes.shape}, but the model has {K} output(s)")
    feature_names = members.get("feature_names")
    if feature_names is not None:
        _check_shape("feature_names", feature_names, (d,), feature_names.dtype)
    return SavedModel(header["class"], header["params"], learner, fitted, classes, feature_names)


def _add_ftrl_roots(members, K):
    """Version 2's FTRL state as version 3's: each (z, n) entry gains sqrt(n)."""
    state = members["state"]
    if state.ndim == 2 and state.shape[1] == 2 * K:
        z_n = state.reshape(len(state), K, 2)
        members["state"] = np.concatenate([z_n, np.sqrt(z_n[:, :, 1:])], axis=2).reshape(len(state), 3 * K)


def _check_shape(name, a, shape, dtype):
    if a.shape != shape or a.dtype != dtype:
        raise ValueError(f"{name} has shape {a.shape} and dtype {a.dtype}; expected {shape} {np.dtype(dtype)}")


def _plain_json(value):
    """Array-valued parameters (such as ``groups``) as JSON lists."""
    if "numpy" in sys.modules and isinstance(value, (np.ndarray, np.generic)):
        return value.tolist()
    raise ValueError(f"parameter value {value!r} cannot be saved: use numbers, strings or arrays")


def _plain_array(name, values):
    """``values`` as an array np.load reads without pickle (object strings -> unicode)."""
    values = np.asarray(values)
    if values.dtype == object:
        if not all(isinstance(v, str) for v in values):
            raise ValueError(f"{name} holds Python objects other than strings, which cannot be "
                             f"saved without pickle; use numeric or string labels.")
        values = values.astype(str)
    return values
