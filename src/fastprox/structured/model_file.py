"""Structured model files: a fitted structured estimator (SequenceTagger; a parser)
with what turns raw input into its rows (a feature extractor's ``to_dict``, the
reader's columns), ready to predict, read without pickle and checked before use.

Format ``fastprox-structured-model``, version 1: a NumPy ``.npz`` archive written
atomically (fastprox._writes: a temporary file renamed over the target) holding

``header``
    0-d unicode array, a JSON object: ``format``, ``version``, ``class`` (the
    estimator's class name), ``params`` (its ``get_params()``; arrays are members,
    see below), ``fitted`` (scalars: ``t_``, ``n_features_in_``, ...), ``shapes``
    (each model member's shape) and ``extras`` (plain data the estimator's caller
    keeps with the model: the feature extractor's state, the reader's columns).
``coef_rows`` (int64, r) and ``coef_values`` (float64, r x K)
    The rows of W (n_features x K) that are not all zero, in increasing order:
    an l1 model stores the features it kept.
other model members (float64), ``classes`` (unicode or numbers)
    As the estimator lists them (SequenceTagger: ``intercept`` K, ``unpenalized``
    K^2 + 2K; ``classes``).
``array_N`` members
    Arrays inside ``params`` and ``extras`` (group ids, an extractor's key tables),
    each replaced in the JSON by ``{"__array__": N}``; int64, float64 or unicode only.

Reading trusts nothing: every member's declared type and size are read first (numbers
or text only, all of them within the memory available), the archive is opened with
``allow_pickle=False`` (no object arrays, no code run), the header must be a JSON object of exactly these entries,
every member must have the shape and type the header implies, W's rows must be
increasing and within the features, every number finite; anything else raises
ValueError naming the file and what is wrong. The file holds the model for
prediction, not the kernel's lazy state: training continues from a pickle of the
estimator, or starts again.
"""
import json
import os
import zipfile

import numpy as np

from .._registry import STRUCTURED_MODEL, OtherModelFile, other_model_file
from .._validation import check_memory
from .._writes import atomic_write

__all__ = ["write_structured_model", "read_structured_model", "StructuredModel", "FORMAT", "VERSION"]

FORMAT = STRUCTURED_MODEL
VERSION = 1
_HEADER_KEYS = {"format", "version", "class", "params", "fitted", "shapes", "extras"}
#: The most characters of a header (the extractor's vocabularies are members).
MAX_HEADER = 1 << 26


class StructuredModel:
    """A structured model file's contents, checked: ``name`` (the class), ``params``,
    ``fitted``, ``arrays`` (name -> array: ``coef`` (n_features, K) dense, the
    estimator's other members, ``classes``) and ``extras``."""

    __slots__ = ("name", "params", "fitted", "arrays", "extras")

    def __init__(self, name, params, fitted, arrays, extras):
        self.name, self.params, self.fitted, self.arrays, self.extras = name, params, fitted, arrays, extras


def write_structured_model(path, name, params, fitted, coef, arrays, classes, extras=None):
    """Write a model file (the module's format) atomically.

    Parameters
    ----------
    path : str or path
    name : str, the estimator's class name.
    params : dict, its get_params() (JSON values, or NumPy arrays).
    fitted : dict of JSON scalars (``t_``, ``n_features_in_``, ...).
    coef : ndarray (n_features, K), W.
    arrays : dict name -> float64 ndarray, the model's other members.
    classes : ndarray of the labels.
    extras : dict of plain data (JSON values, lists, dicts, NumPy arrays), optional.
    """
    members = {}
    coef = np.asarray(coef, dtype=np.float64)
    rows = np.flatnonzero(np.any(coef != 0, axis=1)).astype(np.int64)
    model = {"coef_values": coef[rows], **{k: np.asarray(v, dtype=np.float64) for k, v in arrays.items()}}
    for key, value in model.items():
        if not np.all(np.isfinite(value)):
            raise ValueError(f"the model cannot be saved: {key} holds NaN or infinity (a step overflowed); "
                             "train it again with a smaller eta0 or scaled features")
    header = {"format": FORMAT, "version": VERSION, "class": name,
              "params": _plain(params, members), "fitted": _plain(fitted, members),
              "shapes": {"coef": list(coef.shape), **{k: list(np.shape(v)) for k, v in arrays.items()}},
              "extras": _plain(extras or {}, members)}
    members.update(model, coef_rows=rows, classes=_labels(classes))
    members["header"] = np.array(json.dumps(header))

    def write(f):
        with zipfile.ZipFile(f, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=1) as archive:
            for key, value in members.items():
                with archive.open(f"{key}.npy", "w", force_zip64=True) as out:
                    np.lib.format.write_array(out, np.asarray(value, order="C"), allow_pickle=False)

    atomic_write(path, write, compress=False)


def read_structured_model(path, expected=None):
    """The StructuredModel in the file at ``path`` (of class ``expected`` unless
    None), checked as the module's docstring says. OSError for a missing file;
    ValueError starting ``PATH:`` for anything wrong inside it."""
    path = os.fspath(path)
    with open(path, "rb") as f:
        try:
            return _read(f, expected)
        except (zipfile.BadZipFile, EOFError, OSError) as e:
            raise ValueError(f"{path}: not a readable fastprox structured model file ({e}); it may be "
                             "truncated or another kind of file (a flat model: fastprox predict)") from None
        except OtherModelFile as e:
            raise e.at(path) from None
        except (KeyError, TypeError, ValueError) as e:
            what = f"missing entry {e}" if isinstance(e, KeyError) else str(e)
            raise ValueError(f"{path}: {what}") from None


def _check_sizes(f):
    """Before any member is read: every member an ``.npy`` array of numbers or text
    (no object arrays), and their sizes together within the memory available (a
    file cannot make the reader allocate what the machine does not have)."""
    total = 0
    with zipfile.ZipFile(f) as archive:
        for info in archive.infolist():
            with archive.open(info) as member:
                version = np.lib.format.read_magic(member)
                shape, _, dtype = (np.lib.format.read_array_header_1_0(member) if version == (1, 0)
                                   else np.lib.format.read_array_header_2_0(member))
            if dtype.hasobject or dtype.kind not in "iufUb":
                raise ValueError(f"member {info.filename!r} holds {dtype} values, not numbers or text")
            total += int(np.prod(shape, dtype=object)) * dtype.itemsize
    check_memory(total, "the model file's arrays")
    f.seek(0)


def _read(f, expected):
    if not zipfile.is_zipfile(f):
        raise zipfile.BadZipFile("not a zip archive")
    f.seek(0)
    _check_sizes(f)
    with np.load(f, allow_pickle=False) as archive:
        names = {n[:-4] if n.endswith(".npy") else n for n in archive.files}
        if "header" not in names:
            raise ValueError("no header: not a fastprox structured model file")
        text = archive["header"]
        if text.dtype.kind != "U" or text.shape != () or len(str(text)) > MAX_HEADER:
            raise ValueError("the header is not a JSON text of at most 2^26 characters")
        header = json.loads(str(text))
        other = other_model_file(header, FORMAT)
        if other:
            raise other
        if not isinstance(header, dict) or set(header) != _HEADER_KEYS:
            raise ValueError(f"the header must hold exactly {sorted(_HEADER_KEYS)}")
        if header["format"] != FORMAT or header["version"] != VERSION:
            raise ValueError(f"format {header['format']!r} version {header['version']!r}; this fastprox "
                             f"reads {FORMAT!r} version {VERSION}")
        name = header["class"]
        if expected is not None and name != expected:
            raise ValueError(f"holds a {name}, not a {expected}")
        for section in ("params", "fitted", "shapes", "extras"):
            if not isinstance(header[section], dict):
                raise ValueError(f"header.{section} must be a JSON object")
        arrays = {}

        def member(key):
            if key not in names:
                raise ValueError(f"missing member {key!r}")
            return archive[key]

        shapes = header["shapes"]
        coef_shape = _shape("coef", shapes["coef"], 2)
        d, K = coef_shape
        rows, values = member("coef_rows"), member("coef_values")
        if rows.dtype != np.int64 or rows.ndim != 1 or values.dtype != np.float64 or values.shape != (len(rows), K):
            raise ValueError(f"coef_rows must be int64 (r,) and coef_values float64 (r, {K})")
        if len(rows) and (rows[0] < 0 or rows[-1] >= d or np.any(np.diff(rows) <= 0)):
            raise ValueError(f"coef_rows must be increasing feature ids in [0, {d})")
        coef = np.zeros(coef_shape)
        coef[rows] = values
        arrays["coef"] = coef
        for key, shape in shapes.items():
            if key == "coef":
                continue
            value = member(key)
            if value.dtype != np.float64 or value.shape != _shape(key, shape, None):
                raise ValueError(f"member {key!r} must be float64 of shape {tuple(shape)}")
            arrays[key] = value
        for key, value in arrays.items():
            if not np.all(np.isfinite(value)):
                raise ValueError(f"member {key!r} holds NaN or infinity")
        classes = member("classes")
        if classes.dtype.kind not in "Uif" or classes.shape != (K,) or len(np.unique(classes)) != K:
            raise ValueError(f"classes must be {K} distinct strings or numbers")
        arrays["classes"] = classes
        params = _restored(header["params"], archive, names)
        fitted = _restored(header["fitted"], archive, names)
        extras = _restored(header["extras"], archive, names)
    return StructuredModel(name, params, fitted, arrays, extras)


def _shape(key, shape, ndim):
    if (not isinstance(shape, list) or not all(isinstance(n, int) and not isinstance(n, bool) and 0 <= n
                                               for n in shape) or (ndim is not None and len(shape) != ndim)):
        raise ValueError(f"shapes.{key} must be a list of {ndim or 'some'} sizes >= 0")
    return tuple(shape)


def _labels(classes):
    classes = np.asarray(classes)
    if classes.dtype.kind not in "Uif":
        classes = classes.astype(str)
    return classes


def _plain(value, members):
    """value as JSON, its NumPy arrays moved to ``members`` (``{"__array__": N}``)."""
    if isinstance(value, dict):
        return {str(k): _plain(v, members) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v, members) for v in value]
    if isinstance(value, np.ndarray):
        if value.dtype.kind not in "iufUb":
            raise ValueError(f"an array of {value.dtype} cannot be saved without pickle")
        key = f"array_{sum(k.startswith('array_') for k in members)}"
        members[key] = value
        return {"__array__": key}
    if isinstance(value, np.generic):
        return value.item()
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, type):         # a dtype given as a type (np.float64)
        return np.dtype(value).name
    raise ValueError(f"{type(value).__name__} values cannot be saved without pickle: {value!r:.60}")


def _restored(value, archive, names):
    """value from JSON, ``{"__array__": N}`` replaced by its member."""
    if isinstance(value, dict):
        if set(value) == {"__array__"}:
            key = value["__array__"]
            if not isinstance(key, str) or not key.startswith("array_") or key not in names:
                raise ValueError(f"an array entry names no member ({key!r:.40})")
            return archive[key]
        return {k: _restored(v, archive, names) for k, v in value.items()}
    if isinstance(value, list):
        return [_restored(v, archive, names) for v in value]
    return value
