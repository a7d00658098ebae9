"""Model files: save a fitted ProxClassifier / ProxRegressor, load it back ready
to predict and to continue ``partial_fit`` exactly where it stopped.

Why not pickle: a pickle runs code when loaded, ties the file to the class
layout of one version, and stores every weight of an l1 model, zeros
included. This format stores only the features the model has touched, names
its version, and is read without pickle: loading an untrusted file runs no
code.

Format, version 6
-----------------
A NumPy ``.npz`` archive (a zip of ``.npy`` arrays, deflated but for
``state`` and ``rows``, whose float64 values and sorted indices deflate by under a
fifth and about two thirds at fifteen and twenty times the cost of storing them; no
object arrays), written to a temporary file next to the target and renamed over it,
so that readers never see half a file (fastprox._writes: a symbolic link's target is
replaced, the link kept; a device or a FIFO is written directly). The file name is used as given (no
``.npz`` is appended). Members:

``header``
    0-d unicode array holding a JSON object:

    - ``format``: ``"fastprox-model"``; ``version``: ``6``;
    - ``class``: ``"ProxClassifier"`` or ``"ProxRegressor"``;
    - ``params``: ``get_params()`` (``random_state`` must be None or an int;
      arrays such as ``groups`` become lists, a ``class_weight`` dict a list of
      [class, weight] pairs: JSON's keys are strings);
    - ``learner``: the kernel's own constructor arguments (``n_features``,
      ``n_outputs``, ``update``, ``schedule``, ``penalty``, ``loss``,
      ``alpha``, ``l1_ratio``, ``eta0``, ``delta``, ``rda_rho``,
      ``berhu_gamma``, ``epsilon``, ``fit_intercept``, ``ovr``,
      ``multinomial``; ``groups`` and ``group_weights`` are members of their
      own). The numbers may differ from ``params`` after a ``set_params``
      following the fit, and training continues with the kernel's; the
      model's kind may not: ``update``, ``schedule``, ``penalty``, ``loss``,
      ``fit_intercept``, ``groups``, ``group_weights`` and (K > 2 classes)
      ``multi_class`` are the kernel's, or the file is not written;
    - ``scalars``: the kernel's counters ``t``, ``n_ops``, ``since_rebase``,
      ``heap_size`` and the scalar-FOBOS cumulants ``P``, ``Q`` (JSON floats
      are written as Python's shortest round-trip repr: exact);
    - ``fitted``: ``n_features_in_``, ``t_`` (the kernel's ``t``),
      ``n_iter_``, ``progressive_loss_``, ``sparse_coef`` (whether
      ``sparsify()`` was called) and ``hash_bits_``: the model's input
      transform, the hashing of X's ids into 2^hash_bits_ columns (null: none),
      which prediction applies (`fastprox predict` and the estimator's
      predict): it equals ``params.hash_bits``, and the model then has
      2^hash_bits_ features.

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

Loading trusts nothing in the file: it raises ``ValueError`` naming the file
and the entry at fault for anything a model written by this module cannot
hold, before the kernel uses it. The header is a JSON object of exactly these
entries with values of their types and in their ranges, and the parameters
pass the estimator's own checks; every member's shape and type is the one
the header implies; the state is finite and holds the kernel's invariants
(stamps within the cumulants, AdaGrad's steps and FTRL's roots as its sums
make them, Berhu's heap a max-heap of exactly the entries in its l2 phase,
keyed as the kernel keys them). Its memory is bounded by the model the file
declares: no member is decompressed before its declared size is known to be
the one the header implies, and the header itself is bounded (a million
characters, and 16 bytes per byte of the groups and group_weights members,
which ``params`` may repeat as lists); a model that would not fit in the
memory available is refused before it is allocated. Writing refuses what
loading would (a parameter changed after the fit, a model whose steps
overflowed), so that every file written loads.

Earlier versions load too. Version 5 differs from version 6 only in having no
``hash_bits`` parameter and no ``hash_bits_`` fitted entry: such files load as
models without hashing (a version 5 file of a model trained on hashed ids does not
say so; `fastprox predict --hash-bits` then hashes for it, as it had to).
Version 4 differs from version 5 only in the rows of
normalized models without a penalty (penalty "none" or alpha 0): (R0, m) then per
output (w, G, c), where version 5 keeps m then (w, G), the fields those models
read; loading checks the dropped fields as version 4's reader did, then drops them.
Version 3 differs from version 4 only in having no
``step`` parameter and learner entry and no ``N`` scalar (the invariant step and the
normalized schedule came with version 4): they load as "gradient" and 0.
Version 2 differs only in FTRL's entries: always
(z, n), where version 3 keeps (z, n, sqrt(n)) when the kernel does (models of
up to 2^19 weights); loading adds the square roots.
Version 1 (before ``group_weights``) is version 2 with neither the member nor
the parameter; such files load as models without group weights.
"""
import json
import math
import numbers
import os
import struct
import sys
import zipfile
from array import array
from collections import namedtuple
from contextlib import contextmanager
from types import SimpleNamespace

from .._arrays import all_finite
from .._core import (CLASSIFIER_DEFAULTS, REGRESSOR_DEFAULTS, check_classes, check_same_groups,
                    check_same_hashing, check_same_kernel, python_floats)
from .._kernels import LOSSES, PENALTIES, SAVED, SAVED_INT64, SCHEDULES, UPDATES, Learner
from .._numpy import np
from .._validation import (CLASSIFICATION_LOSSES, GROUP_PENALTIES, MULTI_CLASS, MULTINOMIAL_LOSSES,
                          REGRESSION_LOSSES, check_number, check_one_of, check_groups, check_hash_bits, check_memory,
                          check_params, check_single_rows)
from .._writes import atomic_write

__all__ = ["save_model", "load_model", "read_model", "SavedModel", "FORMAT", "VERSION"]

FORMAT = "fastprox-model"
VERSION = 6
_READS = (1, 2, 3, 4, 5, 6)   # versions this fastprox reads (see the format's history above)

_CLASS_NAMES = ("ProxClassifier", "ProxRegressor")


def _classes():
    """name -> estimator class (imported on use: writing a file needs no scikit-learn)."""
    from ..linear_model import ProxClassifier, ProxRegressor
    return {cls.__name__: cls for cls in (ProxClassifier, ProxRegressor)}


# The header's entries and their JSON types (a number is an int or a float; bool is no int).
_INT, _NUMBER, _BOOL, _NAME = (int,), (int, float), (bool,), (str,)
_LEARNER = dict(n_features=_INT, n_outputs=_INT, update=_NAME, schedule=_NAME, penalty=_NAME, loss=_NAME,
                step=_NAME, alpha=_NUMBER, l1_ratio=_NUMBER, eta0=_NUMBER, delta=_NUMBER, rda_rho=_NUMBER,
                berhu_gamma=_NUMBER, epsilon=_NUMBER, fit_intercept=_BOOL, ovr=_BOOL, multinomial=_BOOL)
_SCALARS = dict(t=_INT, n_ops=_INT, since_rebase=_INT, heap_size=_INT, P=_NUMBER, Q=_NUMBER, N=_NUMBER)
_FITTED = dict(n_features_in_=_INT, t_=_INT, n_iter_=_INT, progressive_loss_=_NUMBER, sparse_coef=_BOOL,
               hash_bits_=(type(None), int))
_PARAMS = dict(loss=_NAME, penalty=_NAME + (type(None),), alpha=_NUMBER, l1_ratio=_NUMBER, update=_NAME,
               schedule=_NAME + (type(None),), step=_NAME + (type(None),),
               eta0=_NUMBER + _NAME, delta=_NUMBER + _NAME, rda_rho=_NUMBER, berhu_gamma=_NUMBER,
               batch_size=_INT, fit_intercept=_BOOL, max_iter=_INT, shuffle=_BOOL,
               random_state=(type(None), int), warm_start=_BOOL, epsilon=_NUMBER,
               groups=(type(None), list), group_weights=(type(None), list), multi_class=_NAME,
               grow_features=_BOOL, verbose=_INT + _BOOL, class_weight=(type(None), str, list),
               hash_bits=(type(None), int))
# sparse_group's skipped proxes do not compose: reading a group replays one per step
# since its stamp. Files written now have none pending; earlier ones may have some,
# a bounded number (a hostile stamp far behind t would otherwise hang the reader).
_MAX_REPLAYS = 1 << 24
# Parameters newer than some files of this version: absent, they take these values.
_LATER_PARAMS = dict(grow_features=False, verbose=0, class_weight=None, step="gradient", hash_bits=None)
# Entries of the learner and scalars sections that versions before 4 lack, and their values.
_BEFORE_4 = {"learner": dict(step="gradient"), "scalars": dict(N=0.0)}
# Entries of the fitted section that versions before 6 lack, and their values.
_BEFORE_6 = dict(hash_bits_=None)
_HEADER = ("format", "version", "class", "params", "learner", "scalars", "fitted")
_KIND_NAMES = {int: "an integer", float: "a number", bool: "true or false", str: "a string",
               list: "a list", type(None): "null"}
_LEARNER_ARGS = tuple(_LEARNER)
# Kernel arrays with their own encoding below; every other one is stored whole.
_SPECIAL = ("state", "heap_items", "heap_keys", "heap_pos")
# Members a file may hold (as NAME.npy); heap_pos is rebuilt, never stored.
_MEMBERS = ("header", "rows", "groups", "group_weights", "classes", "feature_names") + tuple(
    name for name in SAVED if name != "heap_pos")

# Bounds on what a file declares before its header says what it holds.
_HEADER_CHARS = 1 << 20         # JSON characters of a header, besides params' lists (below)
_LIST_BYTES = 16                # header bytes allowed per byte of the groups and group_weights
                                # members (a JSON number takes at most 26 characters, 104 bytes
                                # in UTF-32, per 8-byte value)
_DIRECTORY_BYTES = 1 << 16      # the zip's central directory (a dozen entries of ~60 bytes)
_NPY_HEADER_BYTES = 4096        # a member's .npy header (the writer's take 128 bytes)
_NAME_CHARS = 256               # characters per class or feature name, beyond _TEXT_BYTES in all
_TEXT_BYTES = 1 << 24
# Counters: the kernel's C long long, and steps below 2^53 (its stamps hold step counts in doubles).
_LONG_MAX, _INT_MAX, _MAX_STEPS = 2**63 - 1, 2**31 - 1, 2**53
# Kernel values per group and per output besides its state (stamps, norms, marks, intercepts,
# margins, gradients, scratch, the members read), which its own memory check does not count.
_VALUES_PER_GROUP = _VALUES_PER_OUTPUT = 16
_BERHU_L1, _BERHU_L2 = 0.0, 1.0  # Berhu entries' phases (`_berhu.pxd`); FRESH never outlasts a step


def save_model(est, path):
    """Write the fitted estimator ``est`` to ``path`` (format above), atomically.

    Raises ``ValueError`` if ``est`` is not a fitted ProxClassifier or
    ProxRegressor, holds something the format cannot store without
    pickle (a RandomState as ``random_state``, non-string object classes),
    or something a model file may not hold: parameters changed by
    ``set_params`` since the fit in ways the kernel does not follow (its
    loss, update, schedule, penalty, intercept, groups), invalid ones, or
    a model whose steps overflowed (NaN or infinite weights).
    """
    name = type(est).__name__
    if _classes().get(name) is not type(est):
        raise ValueError(f"save_model saves ProxClassifier and ProxRegressor, not {name}.")
    from sklearn.utils.validation import check_is_fitted  # loaded already: est is an estimator
    from .._concurrency import lock_of
    check_is_fitted(est, "t_")
    with lock_of(est).reading():        # the model of one step, whatever trains meanwhile
        fitted = {"n_features_in_": int(est.n_features_in_), "t_": est._learner.t,
                  "n_iter_": int(est.n_iter_), "progressive_loss_": float(est.progressive_loss_),
                  "sparse_coef": bool(getattr(est, "_sparse_coef", False)),
                  "hash_bits_": getattr(est, "hash_bits_", None)}
        write_model(path, name, est.get_params(), est._learner, fitted, getattr(est, "classes_", None),
                    getattr(est, "feature_names_in_", None))


def write_model(path, name, params, learner, fitted, classes=None, feature_names=None):
    """The file for an estimator of class ``name`` (its ``get_params()``, kernel,
    fitted attributes, classes and feature names), without the estimator: the
    command line writes its models this way, without importing scikit-learn or,
    for numeric classes given as a list, NumPy. Its header passes the checks
    of loading first, and its state must be finite."""
    if name not in _CLASS_NAMES:
        raise ValueError(f"model class {name!r} is not one of {_CLASS_NAMES}.")
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
        "learner": {key: getattr(learner, key) for key in _LEARNER_ARGS},
        "scalars": {key: scalars[key] for key in _SCALARS},
        "fitted": fitted,
    }
    text = json.dumps(header, default=_plain_json)
    try:
        _check_written(json.loads(text), learner, [state] + [a for key, (a, _) in saved.items()
                                                             if key not in _SPECIAL + SAVED_INT64])
    except ValueError as e:
        raise ValueError(f"the model cannot be saved: {e}") from None
    members = {"header": _npy_text(text),
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
    atomic_write(path, lambda f: _write_npz(f, members), compress=False)


def _check_written(header, learner, float_buffers):
    """Refuse to write what loading would refuse: the header as the file will hold
    it, the kernel's groups against the parameters', and NaN or infinity in the
    state (a step overflowed: the model is lost, and a file never holds one)."""
    header = _check_header(header)
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
    est = cls(**{**model.params, "class_weight": _class_weight(model.params["class_weight"])}
              if "class_weight" in model.params else model.params)
    est._learner = model.learner
    for key in ("n_features_in_", "t_", "n_iter_", "progressive_loss_", "hash_bits_"):
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
    ``t_``, ``n_iter_``, ``progressive_loss_``, ``sparse_coef``, ``hash_bits_``:
    the hashing prediction applies to the input's ids, None for none), the classes
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
        try:
            return _decode(_Members(f))
        except _Unreadable as e:
            raise ValueError(f"{path}: not a readable fastprox model file ({e}); "
                             f"it may be truncated or another kind of file") from e
        except (KeyError, TypeError, ValueError) as e:
            raise _file_error(path, e) from e


def _file_error(path, e):
    """The ValueError naming ``path`` for what is wrong inside a model file (its
    message cut short where it would quote a long value of the file)."""
    what = f"missing entry {e}" if isinstance(e, KeyError) else str(e)
    return ValueError(f"{os.fspath(path)}: {what if len(what) <= 1000 else what[:1000] + ' ...'}")


class _Unreadable(Exception):
    """What zip or .npy cannot read: a truncated, corrupt or foreign file."""


@contextmanager
def _reading(what):
    """Raise what the zip, .npy and JSON parsers raise on bytes they cannot read as
    _Unreadable, naming ``what``. Their exceptions vary (BadZipFile, zlib.error,
    EOFError, ValueError, struct.error, RuntimeError for encrypted entries and
    unknown compressions, RecursionError for JSON nested too deep, tokenize's
    TokenError from NumPy's .npy header filter, ...): all but MemoryError, which
    says that the memory is short, not that the file is bad."""
    try:
        yield
    except MemoryError:
        raise
    except Exception as e:
        raise _Unreadable(f"{what}: {type(e).__name__}: {e}") from e


class _Members:
    """A model file's ``.npy`` members by name (``state`` for ``state.npy``), each
    decompressed only once its ``.npy`` header declares the shape and type the
    model's header implies, and its zip entry that size: a file cannot make the
    reader hold more than the model it declares."""

    def __init__(self, f):
        _check_directory(f)
        with _reading("zip"):
            self._archive = zipfile.ZipFile(f)
        self._infos = {}
        for info in self._archive.infolist():
            name = info.filename[:-4] if info.filename.endswith(".npy") else None
            if name not in _MEMBERS:
                raise ValueError(f"unknown member {info.filename!r}; a model file holds "
                                 f"{', '.join(n + '.npy' for n in _MEMBERS)}")
            if name in self._infos:
                raise ValueError(f"member {info.filename!r} appears twice")
            if info.flag_bits & 1 or info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
                raise _Unreadable(f"{info.filename} is encrypted or compressed as model files are not")
            self._infos[name] = info
        check_memory(sum(info.file_size for info in self._infos.values()), "the members of the file")

    def __contains__(self, name):
        return name in self._infos

    def header(self):
        """The header's JSON value. Its bound: _HEADER_CHARS characters (4 bytes each
        in UTF-32) and _LIST_BYTES per byte of the groups and group_weights members,
        whose values ``params`` may hold as lists; the members' sizes are checked
        against the header's n_features once it is read."""
        limit = 4 * _HEADER_CHARS + _LIST_BYTES * sum(self._infos[name].file_size for name in
                                                     ("groups", "group_weights") if name in self)

        def text(shape, dtype):
            if shape != () or dtype.kind != "U":
                raise ValueError(f"header has shape {shape} and dtype {dtype}; expected a string")
            if dtype.itemsize > limit:
                raise ValueError(f"header holds {dtype.itemsize} bytes, more than the {limit} a "
                                 "header may (a million characters, and its parameters' lists)")

        value = self.array("header", text)
        with _reading("header"):
            return json.loads(value.item())

    def array(self, name, expect):
        """Member ``name`` once ``expect(shape, dtype)``, which raises ValueError
        for what the header does not imply, accepts what its .npy header declares,
        and its zip entry declares exactly those bytes."""
        info = self._infos.get(name)
        if info is None:
            raise ValueError(f"missing entry {name!r}")
        with _reading(info.filename), self._archive.open(info) as f:
            version = np.lib.format.read_magic(f)
            if version not in ((1, 0), (2, 0)):
                raise ValueError(f".npy format version {version}; model files are written in 1.0")
            read = np.lib.format.read_array_header_1_0 if version == (1, 0) else \
                np.lib.format.read_array_header_2_0
            shape, _, dtype = read(f, max_header_size=_NPY_HEADER_BYTES)
            offset = f.tell()
        if dtype.hasobject:
            raise _Unreadable(f"{info.filename} holds Python objects (a pickle), which this reader never loads")
        expect(shape, dtype)
        if info.file_size != offset + math.prod(shape) * dtype.itemsize:
            raise ValueError(f"{name} declares {info.file_size} bytes, but its shape {shape} of "
                             f"{dtype} takes {offset + math.prod(shape) * dtype.itemsize}")
        with _reading(info.filename), self._archive.open(info) as f:
            a = np.lib.format.read_array(f, allow_pickle=False, max_header_size=_NPY_HEADER_BYTES)
            f.read(1)       # at the entry's end: the zip checks its CRC
        return a


_END = struct.Struct("<4s4H2LH")        # zip's end of central directory record (APPNOTE 4.3.16)
_END64 = struct.Struct("<4sQ2H2L4Q")    # its zip64 version (4.3.14), before a 20-byte locator


def _check_directory(f):
    """Refuse a zip whose central directory is larger than a model file's dozen
    members need, before zipfile reads it (its entries take memory, about six
    times their bytes). The end records are those zipfile reads: the last 22
    bytes (model files have no zip comment), and the zip64 record before its
    locator, where there is one."""
    f.seek(0, 2)
    size = f.tell()
    f.seek(max(0, size - _END.size - 20 - _END64.size))
    tail = f.read()
    f.seek(0)
    end = tail[-_END.size:]
    if len(end) < _END.size or not end.startswith(b"PK\x05\x06") or not end.endswith(b"\0\0"):
        raise _Unreadable("no zip end record at its end")
    directory = _END.unpack(end)[5]
    locator, end64 = tail[-_END.size - 20:-_END.size], tail[:-_END.size - 20]
    if locator.startswith(b"PK\x06\x07") and len(end64) == _END64.size and end64.startswith(b"PK\x06\x06"):
        directory = _END64.unpack(end64)[8]
    if directory > _DIRECTORY_BYTES:
        raise _Unreadable(f"its zip directory declares {directory} bytes, more than a model "
                          f"file's {_DIRECTORY_BYTES}")


# --- the header -----------------------------------------------------------------------

_Header = namedtuple("_Header", "version name params learner scalars fitted")


def _check_header(header):
    """The header's sections, once it is a model's: a JSON object of exactly the
    format's entries, each of its JSON type and in its range, the parameters
    valid and the kernel's kind theirs (ValueError naming the entry otherwise)."""
    if type(header) is not dict or header.get("format") != FORMAT:
        raise ValueError(f"not a fastprox model file (no format {FORMAT!r} in its header)")
    version = header.get("version")
    if type(version) is not int or version not in _READS:
        raise ValueError(f"model format version {_short(version)}, but this fastprox reads "
                         f"versions {_READS[0]} to {_READS[-1]}; load it with the fastprox that "
                         "wrote it, or retrain")
    _check_keys("header", header, _HEADER)
    name = header["class"]
    if name not in _CLASS_NAMES:
        raise ValueError(f"unknown model class {_short(name)}; expected one of {sorted(_CLASS_NAMES)}")
    losses = CLASSIFICATION_LOSSES if name == "ProxClassifier" else REGRESSION_LOSSES
    sections = {key: header[key] for key in ("learner", "scalars")}
    if version < 4:
        sections = {key: {**_BEFORE_4[key], **entries} if type(entries) is dict else entries
                    for key, entries in sections.items()}
    spec = _check_learner(_typed("learner", sections["learner"], _LEARNER), losses)
    scalars = _check_scalars(_typed("scalars", sections["scalars"], _SCALARS), spec)
    fitted = header["fitted"]
    if version < 6 and type(fitted) is dict:
        fitted = {**_BEFORE_6, **fitted}
    fitted = _check_fitted(_typed("fitted", fitted, _FITTED), spec, scalars)
    params = _check_params(header["params"], name, version, losses)
    _check_kind(name, params, spec)
    check_same_hashing(params, fitted["hash_bits_"])
    return _Header(version, name, params, spec, scalars, fitted)


def _check_keys(section, entries, keys):
    """Refuse a section that is not a JSON object of exactly these keys."""
    if type(entries) is not dict:
        raise ValueError(f"the header's {section} entry is {_short(entries)}, not a JSON object")
    missing, unknown = sorted(set(keys) - entries.keys()), sorted(entries.keys() - set(keys))
    if missing or unknown:
        raise ValueError(f"the header's {section} entry " + " and ".join(
            [f"lacks {missing}"] * bool(missing) + [f"has unknown entries {_short(unknown)}"] * bool(unknown)))


def _typed(section, entries, types):
    """The section ``entries`` once it holds exactly the keys of ``types``, each
    value of one of its JSON types (integers of 64 bits at most)."""
    _check_keys(section, entries, types)
    for key, kinds in types.items():
        value = entries[key]
        if type(value) not in kinds or (type(value) is int and not -_LONG_MAX - 1 <= value <= _LONG_MAX):
            raise ValueError(f"{section}.{key}={_short(value)} must be "
                             f"{' or '.join(_KIND_NAMES[kind] for kind in kinds)}"
                             f"{' of 64 bits at most' if int in kinds else ''}")
    return entries


def _short(value):
    """repr(value), cut short (a file's value may be long)."""
    text = repr(value)
    return text if len(text) <= 80 else text[:80] + "..."


@contextmanager
def _in(section):
    """Prefix the ValueErrors of the checks of a section with its name."""
    try:
        yield
    except ValueError as e:
        raise ValueError(f"{section}: {e}") from None


def _check_learner(spec, losses):
    """The kernel's arguments, checked as the estimator checks its parameters
    (the resolved eta0 and delta are numbers, never "auto")."""
    for key, options in (("update", UPDATES), ("schedule", SCHEDULES), ("penalty", PENALTIES),
                         ("loss", LOSSES)):
        if spec[key] not in options:
            raise ValueError(f"unknown kernel option {_short(spec[key])} in the header's learner entry")
    with _in("learner"):
        check_number("n_features", spec["n_features"], 0, high=_LONG_MAX, integer=True)
        check_number("n_outputs", spec["n_outputs"], 1, high=_INT_MAX, integer=True)
        check_params(SimpleNamespace(**spec, batch_size=1, max_iter=1), losses)
        check_single_rows(spec["step"], spec["schedule"], spec["multinomial"])
        if spec["ovr"] and spec["multinomial"]:
            raise ValueError("ovr and multinomial are both true")
        if spec["multinomial"]:
            check_one_of("loss", spec["loss"], MULTINOMIAL_LOSSES)
    return spec


def _check_scalars(scalars, spec):
    """The kernel's counters and cumulants in their ranges."""
    with _in("scalars"):
        check_number("t", scalars["t"], 0, high=_MAX_STEPS, integer=True)
        for key in ("n_ops", "since_rebase"):
            check_number(key, scalars[key], 0, high=_LONG_MAX, integer=True)
        check_number("heap_size", scalars["heap_size"], 0, high=spec["n_features"] * spec["n_outputs"], integer=True)
        check_number("P", scalars["P"], 0.0, low_open=True, high=1.0)
        check_number("Q", scalars["Q"], 0.0)
        check_number("N", scalars["N"], 0.0)
    return scalars


def _check_fitted(fitted, spec, scalars):
    """The fitted attributes, those the kernel also holds equal to its."""
    if fitted["n_features_in_"] != spec["n_features"]:
        raise ValueError(f"n_features_in_={fitted['n_features_in_']} but the model has "
                         f"{spec['n_features']} features")
    if fitted["t_"] != scalars["t"]:
        raise ValueError(f"t_={fitted['t_']} but the kernel has taken {scalars['t']} steps")
    with _in("fitted"):
        check_number("n_iter_", fitted["n_iter_"], 0, integer=True)
        check_hash_bits(fitted["hash_bits_"])
    bits = fitted["hash_bits_"]
    if bits is not None and spec["n_features"] != 1 << bits:
        raise ValueError(f"hash_bits_={bits} but the model has {spec['n_features']} features, not 2^{bits}")
    return fitted


def _check_params(params, name, version, losses):
    """get_params() of the class: its keys (version 1 had no group_weights), and
    values that its fit accepts and that the kernel can take (batch_size is a C int)."""
    keys = [key for key in (CLASSIFIER_DEFAULTS if name == "ProxClassifier" else REGRESSOR_DEFAULTS)
            if version > 1 or key != "group_weights"]
    if isinstance(params, dict):
        params = {**{key: value for key, value in _LATER_PARAMS.items() if key in keys}, **params}
    params = _typed("params", params, {key: _PARAMS[key] for key in keys})
    with _in("params"):
        check_params(SimpleNamespace(**{**params, "class_weight": _class_weight(params.get("class_weight"))}),
                     losses)
        check_number("batch_size", params["batch_size"], 1, high=_INT_MAX, integer=True)
        if "multi_class" in params:
            check_one_of("multi_class", params["multi_class"], MULTI_CLASS)
    return params


def _class_weight(value):
    """A saved class_weight as the estimator takes it: its (class, weight) pairs (JSON
    has no dict with number keys) as a dict."""
    if not isinstance(value, list):
        return value
    if not all(isinstance(pair, list) and len(pair) == 2 and isinstance(pair[0], (int, float, str))
               for pair in value):
        raise ValueError("class_weight must be a list of [class, weight] pairs")
    return dict(map(tuple, value))


def _check_kind(name, params, spec):
    """The model's kind is the parameters': the kernel's arguments are theirs
    (`check_same_kernel`), its outputs those of its class (one for a regressor and
    for two classes; K one-vs-rest or multinomial ones for K > 2 classes)."""
    K, ovr, multinomial = spec["n_outputs"], spec["ovr"], spec["multinomial"]
    if name == "ProxRegressor" or K == 1:
        if K != 1 or ovr or multinomial:
            raise ValueError(f"learner: a {name} of {K} output(s) with ovr={ovr} and multinomial="
                             f"{multinomial}; expected one output, neither ovr nor multinomial")
    elif K == 2 or ovr == multinomial:
        raise ValueError(f"learner: {K} outputs with ovr={ovr} and multinomial={multinomial}; a "
                         "classifier of K > 2 classes has K outputs, either one-vs-rest or multinomial")
    check_same_kernel(params, SimpleNamespace(**spec))


# --- the kernel and its state ------------------------------------------------------------

def _decode(members):
    """The SavedModel a model file's members describe, checked before the kernel
    runs on them; ValueError if anything is inconsistent."""
    header = _check_header(members.header())
    spec, scalars = header.learner, header.scalars
    d, K = spec["n_features"], spec["n_outputs"]
    groups = weights = None
    if "groups" in members:
        groups = check_groups(members.array("groups", _exactly("groups", (d,), np.int64)), d)
    n_groups = 0
    if spec["penalty"] in GROUP_PENALTIES:       # as the kernel counts them
        n_groups = d if groups is None else int(groups.max(initial=-1)) + 1
    check_memory(8 * (_VALUES_PER_GROUP * n_groups + _VALUES_PER_OUTPUT * K),
                 f"{n_groups} groups and {K} output(s)")
    if "group_weights" in members:
        weights = members.array("group_weights", _at_most("group_weights", n_groups, np.float64))
    learner = _learner(spec, groups, weights)    # (which checks the group weights)
    check_same_groups(header.params, groups, learner.group_weights)
    arrays = {name: np.frombuffer(a, dtype=np.int64 if name in SAVED_INT64 else np.float64).reshape(shape)
              for name, (a, shape) in learner.saved_arrays().items()}   # the kernel's, written in place
    _read_state(members, header, arrays)
    learner.__setstate__({"arrays": arrays, **scalars})
    classes = None
    if header.name == "ProxClassifier":
        with _in("classes"):
            classes = _check_classes(members.array("classes", _classes_of(K)))
    elif "classes" in members:
        raise ValueError("a ProxRegressor has no classes, but the file holds some")
    feature_names = None
    if "feature_names" in members:
        feature_names = members.array("feature_names", _text("feature_names", d))
    return SavedModel(header.name, header.params, learner, header.fitted, classes, feature_names)


def _learner(spec, groups, weights):
    """The kernel the header's learner entry describes, its state not yet read; a
    model too large for the memory available is refused before it is allocated
    (ModelTooLarge, a ValueError) or, if its allocation fails, after."""
    try:
        return Learner(**{key: spec[key] for key in _LEARNER_ARGS}, groups=groups, group_weights=weights)
    except MemoryError as e:
        if isinstance(e, ValueError):
            raise
        raise ValueError(f"the model's {spec['n_features']} features x {spec['n_outputs']} output(s) "
                         "do not fit in the memory available") from None


def _read_state(members, header, arrays):
    """Read the state's members into the kernel's arrays, checking every value:
    finite, and holding the kernel's invariants."""
    spec, scalars = header.learner, header.scalars
    d, K = spec["n_features"], spec["n_outputs"]
    width = arrays["state"].shape[1]
    stored, upgrade = width, None
    if header.version < 3 and spec["update"] == "ftrl" and width == 3 * K:
        stored, upgrade = 2 * K, _add_ftrl_roots
    elif header.version < 5 and spec["schedule"] == "normalized" and width == 1 + 2 * K:
        stored, upgrade = 2 + 3 * K, _drop_normalized_stamps
    rows = members.array("rows", _at_most("rows", d, np.int64))
    state = members.array("state", _exactly("state", (len(rows), stored), np.float64))
    if not (np.all((0 <= rows) & (rows < d)) and np.all(rows[1:] > rows[:-1])):   # (np.diff overflows)
        raise ValueError(f"rows must be increasing feature indices in [0, {d})")
    for name, a in arrays.items():
        if name not in _SPECIAL:
            a[...] = members.array(name, _exactly(name, a.shape, a.dtype))
            _check_finite(name, a)
    _check_finite("state", state)
    _check_layout(spec, scalars, state, arrays)
    if upgrade is not None:
        state = upgrade(state, K)
    size = scalars["heap_size"]
    if size > len(arrays["heap_items"]):
        raise ValueError(f"heap_size={size} but this model has no Berhu heap of that size")
    items = members.array("heap_items", _exactly("heap_items", (size,), np.int64))
    keys = members.array("heap_keys", _exactly("heap_keys", (size,), np.float64))
    if len(arrays["heap_items"]):
        _check_heap(spec, scalars, rows, state, items, keys)
    arrays["state"][rows] = state
    arrays["heap_items"][:size] = items
    arrays["heap_keys"][:size] = keys
    arrays["heap_pos"][items] = np.arange(size)


def _add_ftrl_roots(state, K):
    """Version 2's FTRL rows, (z, n) per output, as the kernel keeps them: (z, n, sqrt(n))."""
    z_n = state.reshape(len(state), K, 2)
    return np.concatenate([z_n, np.sqrt(np.maximum(z_n[:, :, 1:], 0))], axis=2).reshape(len(state), 3 * K)


def _drop_normalized_stamps(state, K):
    """Version 4's rows of a normalized model without a penalty, (R0, m) then (w, G, c)
    per output, as the kernel keeps them: m, then (w, G)."""
    entries = state[:, 2:].reshape(len(state), K, 3)[:, :, :2].reshape(len(state), 2 * K)
    return np.concatenate([state[:, 1:2], entries], axis=1)


def _exactly(name, shape, dtype):
    """The check of a member of exactly this shape and dtype."""
    def expect(found_shape, found_dtype):
        if found_shape != shape or found_dtype != dtype:
            raise ValueError(f"{name} has shape {found_shape} and dtype {found_dtype}; expected "
                             f"{shape} {np.dtype(dtype)}")
    return expect


def _at_most(name, n, dtype):
    """The check of a vector of this dtype with at most n values (the kernel checks
    how many: group_weights' message says why)."""
    def expect(shape, found_dtype):
        if len(shape) != 1 or not 0 <= shape[0] <= n or found_dtype != dtype:
            raise ValueError(f"{name} has shape {shape} and dtype {found_dtype}; expected a vector "
                             f"of at most {n} {np.dtype(dtype)}")
    return expect


def _text(name, n):
    """The check of a vector of n strings (feature names, classes) of at most
    _NAME_CHARS characters each, or _TEXT_BYTES in all."""
    def expect(shape, dtype):
        if shape != (n,) or dtype.kind != "U":
            raise ValueError(f"{name} has shape {shape} and dtype {dtype}; expected {n} strings")
        if dtype.itemsize > 4 * _NAME_CHARS and n * dtype.itemsize > _TEXT_BYTES:
            raise ValueError(f"{name} holds {n} strings of up to {dtype.itemsize // 4} characters, "
                             f"more than {_NAME_CHARS} each or {_TEXT_BYTES} bytes in all")
    return expect


def _classes_of(K):
    """The check of the classes of a classifier of K outputs: 2 for one, else K;
    numbers or strings."""
    n = 2 if K == 1 else K

    def expect(shape, dtype):
        if shape != (n,):
            raise ValueError(f"classes has shape {shape}, but the model has {K} output(s)")
        if dtype.kind == "U":
            _text("classes", n)(shape, dtype)
        elif dtype.kind not in "biuf":
            raise ValueError(f"classes has dtype {dtype}; expected numbers or strings")
    return expect


def _check_classes(classes):
    """classes_ as a fit makes it: sorted distinct labels, finite numbers (a fit
    refuses NaN and infinity in y) or strings, not continuous values."""
    if not np.all(classes[1:] > classes[:-1]):
        raise ValueError(f"{_short(classes.tolist())} are not sorted and distinct, as classes_ is")
    if classes.dtype.kind == "f" and not np.all(np.isfinite(classes)):
        raise ValueError(f"{_short(classes.tolist())} are not finite, as a fit's labels are")
    check_classes(classes)
    return classes


def _check_finite(name, a):
    if a.dtype.kind == "f" and not np.all(np.isfinite(a)):
        raise ValueError(f"{name} holds NaN or infinity, which a model's state never does")


def _layout(spec, width):
    """(row fields, entry fields) of the kernel's state rows for these arguments,
    the table of `_kernels`: a row is its fields, then K entries of its entry
    fields. P and Q are stamps of the scalar-FOBOS cumulants, t0 AdaGrad's
    last step, eta its step, root FTRL's sqrt(n); R0 the normalized schedule's stamp
    of its cumulant (the scalar Q), m a feature's scale, c its step factor."""
    update, schedule, penalty, K = spec["update"], spec["schedule"], spec["penalty"], spec["n_outputs"]
    row = ()
    if penalty in GROUP_PENALTIES:
        entry = ("w",) if update == "fobos" else ("s", "G") if schedule == "adagrad" else ("s",)
    elif update == "fobos" and schedule == "adagrad":
        row, entry = ("t0",), ("w", "G", "eta")
    elif update == "fobos" and schedule == "normalized" and width == 2 + 3 * K:
        row, entry = ("R0", "m"), ("w", "G", "c")     # l1 (and version 4 without a penalty)
    elif update == "fobos" and schedule == "normalized":
        row, entry = ("m",), ("w", "G")
    elif update == "fobos" and penalty == "berhu":
        entry = ("w", "phase", "stamp")
    elif update == "fobos":     # the stamps of the cumulants the penalty moves (none without one)
        entry = ("w",)
        l1 = {"l1": 1.0, "elasticnet": spec["l1_ratio"]}.get(penalty, 0.0)
        row = {0: (), 2: ("P", "Q"), 1: ("P",) if l1 < 1 else ("Q",)}[width - K]
    elif update == "rda":
        entry = ("s", "G") if schedule == "adagrad" else ("s",)
    else:
        entry = ("z", "n", "root") if width == 3 * K else ("z", "n")
    return row, entry


def _check_layout(spec, scalars, state, arrays):
    """The stored rows' fields within the values the kernel gives them: stamps
    within the cumulants and steps so far, sums of squares >= 0, AdaGrad's step
    and FTRL's root the functions of them the kernel computes, bit for bit,
    Berhu's phases L1 or L2; the intercepts' sums of squares and the groups'
    stamps and norms likewise. (Rows not stored are the initial row.)"""
    row, entry = _layout(spec, state.shape[1])
    K, t, P, Q = spec["n_outputs"], scalars["t"], scalars["P"], scalars["Q"]
    fields = {name: state[:, i] for i, name in enumerate(row)}
    entries = state[:, len(row):].reshape(len(state), K, len(entry))
    fields.update((name, entries[:, :, i]) for i, name in enumerate(entry))
    checks = {"P": lambda v: (P <= v) & (v <= 1), "Q": lambda v: (0 <= v) & (v <= Q),
              "t0": lambda v: (0 <= v) & (v <= t) & (v == np.floor(v)),
              "G": lambda v: v >= 0, "n": lambda v: v >= 0,
              "phase": lambda v: (v == _BERHU_L1) | (v == _BERHU_L2)}
    checks["eta"] = lambda v: v == _adagrad_steps(spec, fields["G"])   # (after G >= 0)
    checks["R0"] = checks["Q"]
    checks["m"] = lambda v: v >= 0
    checks["c"] = lambda v: v == _normalized_factors(spec, fields["G"], fields["m"])  # (after G, m)
    checks["root"] = lambda v: v == np.sqrt(fields["n"])                # (after n >= 0)
    for name, holds in checks.items():
        if name in fields and not np.all(holds(fields[name])):
            raise ValueError(f"state holds {name} fields the kernel never writes (see its layout: "
                             f"row fields {row}, entry fields {entry})")
    group_stamps = arrays["gstamp"]
    if spec["penalty"] == "sparse_group":    # the step of each group's last update
        valid = (0 <= group_stamps) & (group_stamps <= t) & (group_stamps == np.floor(group_stamps))
        pending = float(np.sum(t - group_stamps[valid]))
        if pending > _MAX_REPLAYS:
            raise ValueError(f"gstamp: the sparse_group groups would replay {pending:.0f} skipped proxes "
                             f"when read (at most {_MAX_REPLAYS} are taken; save_model writes every "
                             "group caught up, with none)")
    else:                                   # the threshold sum Q at it
        valid = (0 <= group_stamps) & (group_stamps <= Q)
    if not np.all(valid) or np.any(arrays["gnorm"] < 0) or np.any(arrays["bstate"][:, 1] < 0):
        raise ValueError("gstamp, gnorm or bstate hold values the kernel never writes (stamps beyond "
                         "the steps or cumulants so far, negative norms or sums of squares)")


def _adagrad_steps(spec, G):
    """AdaGrad's steps eta0 / (delta + sqrt(G)), 0 where that is not positive, as the
    kernel computes them (`adagrad_step`)."""
    H = spec["delta"] + np.sqrt(G)
    return np.divide(spec["eta0"], H, out=np.zeros_like(H), where=H > 0)


def _normalized_factors(spec, G, m):
    """The normalized schedule's step factors eta0 / (m sqrt(G)) where G > 0, else 0,
    as the kernel computes them; infinite (never equal to a stored finite value)
    where G > 0 with scale m = 0, which the kernel never writes."""
    H = m[:, None] * np.sqrt(G)
    with np.errstate(divide="ignore"):
        return np.where(G > 0, spec["eta0"] / H, 0.0)


def _check_heap(spec, scalars, rows, state, items, keys):
    """Berhu's heap: exactly the entries in the l2 phase, each once, keyed by
    P_s / |w| as `heap_schedule` computes it, in max-heap order; the l2 entries
    with |w| > gamma and stamps P_s in [P, 1], the l1 ones with stamps Q_s in [0, Q]
    (the kernel's catch-ups and heap operations trust all of it)."""
    K, P, Q = spec["n_outputs"], scalars["P"], scalars["Q"]
    entries = state.reshape(len(state), K, 3)
    w, phase, stamp = entries[:, :, 0], entries[:, :, 1], entries[:, :, 2]
    l2 = phase == _BERHU_L2
    if np.any(l2 & ~((np.abs(w) > spec["berhu_gamma"]) & (P <= stamp) & (stamp <= 1))):
        raise ValueError("state holds l2-phase Berhu entries with |w| <= berhu_gamma or stamps "
                         "outside [P, 1]")
    if np.any(~l2 & ~((0 <= stamp) & (stamp <= Q))):
        raise ValueError("state holds l1-phase Berhu entries with stamps outside [0, Q]")
    if len(np.unique(items)) != len(items):
        raise ValueError("heap_items holds a repeated entry; each l2-phase entry is in the heap once")
    in_l2 = (rows[:, None] * K + np.arange(K))[l2]      # increasing entry indices j K + k
    order = np.argsort(items)
    if not np.array_equal(items[order], in_l2):
        raise ValueError(f"heap_items lists {len(items)} entries, but the state has {len(in_l2)} "
                         "entries in the l2 phase; the heap holds exactly those")
    if not np.array_equal(keys[order], stamp[l2] / np.abs(w[l2])):
        raise ValueError("heap_keys are not the entries' exit keys P_s / |w|")
    if len(keys) > 1 and not np.all(keys[(np.arange(1, len(keys)) - 1) // 2] >= keys[1:]):
        raise ValueError("heap_keys are not in max-heap order")


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
        _text(name, len(values))(values.shape, values.dtype)
    return values
