"""Writing model files (fastprox.model_io.format): an estimator's (`save_model`),
or a kernel's with its parameters, without scikit-learn (`write_model`, the
command line's). Each member goes out as its ``.npy`` header, then its data
straight from the kernel's buffer; the file is replaced atomically
(fastprox._writes). What loading would refuse is not written."""
import json
import numbers
import struct
import sys
import zipfile
from array import array

from .._arrays import all_finite
from .._core import check_same_groups, python_floats
from .._kernels import SAVED_INT64
from .._numpy import np
from .._writes import atomic_write
from .checks import strings
from .format import CLASS_NAMES, FORMAT, LEARNER_ARGS, SCALARS, SPECIAL, VERSION, estimator_classes
from .header import check_header

#: How the estimators save_model does not save are saved.
_SAVED_BY = {"SequenceTagger": "save it with fastprox.structured.tagger.save_tagger",
             "DependencyParser": "save it with fastprox.structured.parser.save_parser"}


def save_model(est, path):
    """Write the fitted estimator ``est`` to a model file at ``path``, atomically.

    The file (the module's format: no pickle) holds the parameters and the
    kernel's whole state, so that the loaded model predicts and continues
    training as ``est`` would.

    Parameters
    ----------
    est : ProxClassifier or ProxRegressor
        A fitted estimator.
    path : str or path-like
        Where to write it (a temporary file renamed over it).

    Raises
    ------
    ValueError
        If ``est`` is not a fitted ProxClassifier or ProxRegressor, holds
        something the format cannot store without pickle (a RandomState as
        ``random_state``, non-string object classes), or something a model file
        may not hold: parameters changed by ``set_params`` since the fit in ways
        the kernel does not follow (its loss, update, schedule, penalty,
        intercept, groups), invalid ones, or a model whose steps overflowed
        (NaN or infinite weights).
    """
    name = type(est).__name__
    if estimator_classes().get(name) is not type(est):
        way = _SAVED_BY.get(name, "pickle it (pickle.dump, joblib.dump)")
        raise ValueError(f"save_model saves ProxClassifier and ProxRegressor, not {name}: {way}.")
    from sklearn.utils.validation import check_is_fitted  # loaded already: est is an estimator
    from .._concurrency import lock_of
    check_is_fitted(est, "t_")
    with lock_of(est).reading():        # the model of one step, whatever trains meanwhile
        fitted = {"n_features_in_": int(est.n_features_in_), "t_": est._learner.t,
                  "n_iter_": int(est.n_iter_), "progressive_loss_": float(est.progressive_loss_),
                  "sparse_coef": bool(getattr(est, "_sparse_coef", False)),
                  "hash_bits_": getattr(est, "hash_bits_", None)}
        names = getattr(est, "feature_names_in_", None)
        if names is not None and len(names) != fitted["n_features_in_"]:
            names = None    # (grow_features' or hashing's names of X's first columns: the file keeps one a column)
        write_model(path, name, est.get_params(), est._learner, fitted, getattr(est, "classes_", None), names)


def write_model(path, name, params, learner, fitted, classes=None, feature_names=None):
    """The file for an estimator of class ``name`` (its ``get_params()``, kernel,
    fitted attributes, classes and feature names), without the estimator: the
    command line writes its models this way, without importing scikit-learn or,
    for numeric classes given as a list, NumPy. Its header passes the checks
    of loading first, and its state must be finite."""
    if name not in CLASS_NAMES:
        raise ValueError(f"model class {name!r} is not one of {CLASS_NAMES}.")
    params = dict(params)
    if params["random_state"] is not None and not isinstance(params["random_state"], numbers.Integral):
        raise ValueError("random_state must be None or an int to be saved (a RandomState cannot "
                         "be written without pickle); call set_params(random_state=SEED) first.")
    params["random_state"] = None if params["random_state"] is None else int(params["random_state"])
    if isinstance(params.get("class_weight"), dict):
        params["class_weight"] = list(params["class_weight"].items())
    learner = learner.caught_up()       # sparse_group: no replay left for the reader
    saved, scalars = learner.saved_arrays(), learner.scalars()
    rows, state = learner.changed_state()
    size = scalars["heap_size"]
    header = {
        "format": FORMAT, "version": VERSION, "class": name, "params": params,
        "learner": {key: getattr(learner, key) for key in LEARNER_ARGS},
        "scalars": {key: scalars[key] for key in SCALARS},
        "fitted": fitted,
    }
    text = json.dumps(header, default=_plain_json)
    try:
        _check_written(json.loads(text), learner, [state] + [a for key, (a, _) in saved.items()
                                                             if key not in SPECIAL + SAVED_INT64])
    except ValueError as e:
        raise ValueError(f"the model cannot be saved: {e}") from None
    members = {"header": _npy_text(text),
               "rows": _npy(rows, (len(rows),)), "state": _npy(state, (len(rows), saved["state"][1][1])),
               "heap_items": _npy(saved["heap_items"][0][:size], (size,), "i8"),
               "heap_keys": _npy(saved["heap_keys"][0][:size], (size,), "f8")}
    members.update((name, _npy(a, shape, "i8" if name in SAVED_INT64 else "f8"))
                   for name, (a, shape) in saved.items() if name not in SPECIAL)
    for name in ("groups", "group_weights"):
        if getattr(learner, name) is not None:
            members[name] = _npy_array(getattr(learner, name))
    for name, a in learner.average_state().items():     # (models with average only)
        members[name] = _npy_array(a)
    if python_floats(classes):          # the command line's
        members["classes"] = _npy(array("d", classes), (len(classes),))
    elif classes is not None:
        members["classes"] = _npy_array(_plain_array("classes_", classes))
    if feature_names is not None:
        members["feature_names"] = _npy_array(_plain_array("feature_names_in_", feature_names))
    atomic_write(path, lambda f: _write_npz(f, members), compress=False)


def _check_written(header, learner, float_buffers):
    """Refuse to write what loading would refuse: the header as the file will hold
    it, the kernel's groups against the parameters', and NaN or infinity in the
    state (a step overflowed: the model is lost, and a file never holds one)."""
    header = check_header(header)
    check_same_groups(header.params, learner.groups, learner.group_weights)
    if not all(all_finite(a) for a in float_buffers):
        raise ValueError("its state holds NaN or infinity (a step overflowed); train it again "
                         "with a smaller eta0 or scaled features")


#: Members stored, not deflated: deflating a 2^21-feature model's 577,531 rows at
#: level 1 took 29 ms, as long as the rest of its write, and saved 3 MB of 23.
_STORED = ("state", "rows")


def _write_npz(f, members):
    """An archive that np.load reads as np.savez_compressed's, but with ``state``
    and ``rows`` stored, not deflated (see the format above), and the rest
    deflated at level 1, not 6: a model of reuters is written in 1 ms instead of
    15. Each member goes out as its ``.npy`` header, then its data straight from
    the kernel's buffer (no copy of either joined)."""
    with zipfile.ZipFile(f, "w", compresslevel=1) as archive:
        for name, (header, data) in members.items():
            archive.compression = zipfile.ZIP_STORED if name in _STORED else zipfile.ZIP_DEFLATED
            size = len(header) + len(data)
            with archive.open(f"{name}.npy", "w", force_zip64=size > _ZIP64_BYTES) as out:
                out.write(header)
                out.write(data)


#: zipfile's own limit for members without zip64 extensions.
_ZIP64_BYTES = (1 << 31) - 1


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
    """Format 1.0 of NumPy's ``.npy`` as (header, data): magic, header length, a
    dict literal padded with spaces to a multiple of 64 bytes, then the data
    (numpy.lib.format), a byte view of the buffer given."""
    header = "{'descr': %r, 'fortran_order': False, 'shape': %r, }" % (descr, tuple(shape))
    length = len(header) + 1
    length += -(10 + length) % 64
    return (b"".join([b"\x93NUMPY\x01\x00", struct.pack("<H", length),
                      header.ljust(length - 1).encode("latin1"), b"\n"]), memoryview(data).cast("B"))



def _plain_json(value):
    """Array-valued parameters (such as ``groups``) as JSON lists."""
    if "numpy" in sys.modules and isinstance(value, (np.ndarray, np.generic)):
        return value.tolist()
    raise ValueError(f"parameter value {value!r} cannot be saved: use numbers, strings or arrays")


def _plain_array(name, values):
    """``values`` as an array np.load reads without pickle (object strings -> unicode),
    of names loading accepts (see `_text`)."""
    values = np.asarray(values)
    if values.dtype == object:
        if not all(isinstance(v, str) for v in values):
            raise ValueError(f"{name} holds Python objects other than strings, which cannot be "
                             f"saved without pickle; use numeric or string labels.")
        values = values.astype(str)
    if values.dtype.kind == "U":
        strings(name, len(values))(values.shape, values.dtype)
    return values

