"""Reading model files: `read_model` (without scikit-learn: the kernel, the
parameters and the fitted attributes, checked before the kernel runs on them) and
`load_model` (the estimator). Loading trusts nothing in the file: anything a
model written by fastprox.model_io.writer cannot hold raises ValueError naming
the file and the entry at fault."""
import os
from collections import namedtuple

from .._core import check_same_groups
from .._kernels import SAVED_INT64, Learner
from .._numpy import np
from .._registry import OtherModelFile
from .._validation import GROUP_PENALTIES, check_groups, check_memory
from .archive import Members, Unreadable
from .checks import (at_most, check_finite, check_heap, check_layout, check_saved_classes, classes_of,
                     exactly, strings)
from .format import LEARNER_ARGS, SPECIAL, VALUES_PER_GROUP, VALUES_PER_OUTPUT, estimator_classes
from .header import check_header, class_weight_of, in_section
from .upgrades import prefix_stamps, state_upgrade

def load_model(path, cls=None):
    """Read an estimator written by `save_model` (or ``fastprox train --model``).

    Nothing in the file is trusted: its members are read without pickle and
    checked before any is used.

    Parameters
    ----------
    path : str or path-like
        The model file.
    cls : {ProxClassifier, ProxRegressor} or None, default=None
        The class the file must hold; None takes the file's.

    Returns
    -------
    ProxClassifier or ProxRegressor
        The fitted estimator, ready to predict and to continue training.

    Raises
    ------
    ValueError
        Anything wrong inside the file, the message starting ``PATH:`` and
        saying what is wrong (a missing or unreadable file raises the usual
        OSError).
    """
    model = read_model(path)
    try:
        return estimator_of(model, cls)
    except (KeyError, TypeError, ValueError) as e:
        raise _file_error(path, e) from e


def estimator_of(model, expected=None):
    """The estimator for a SavedModel, of class ``expected`` unless that is None:
    what `load_model` returns, and fastprox.dask's fit for the model it trained."""
    cls = estimator_classes()[model.name]
    if expected is not None and cls is not expected:
        raise ValueError(f"holds a {cls.__name__}, not a {expected.__name__}")
    est = cls(**{**model.params, "class_weight": class_weight_of(model.params["class_weight"])}
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
            return _decode(Members(f))
        except Unreadable as e:
            raise ValueError(f"{path}: not a readable fastprox model file ({e}); "
                             f"it may be truncated or another kind of file") from e
        except OtherModelFile as e:
            raise e.at(path) from None
        except (KeyError, TypeError, ValueError) as e:
            raise _file_error(path, e) from e


def _file_error(path, e):
    """The ValueError naming ``path`` for what is wrong inside a model file (its
    message cut short where it would quote a long value of the file)."""
    what = f"missing entry {e}" if isinstance(e, KeyError) else str(e)
    return ValueError(f"{os.fspath(path)}: {what if len(what) <= 1000 else what[:1000] + ' ...'}")



def _decode(members):
    """The SavedModel a model file's members describe, checked before the kernel
    runs on them; ValueError if anything is inconsistent."""
    header = check_header(members.header())
    spec, scalars = header.learner, header.scalars
    d, K = spec["n_features"], spec["n_outputs"]
    groups = weights = None
    if "groups" in members:
        groups = check_groups(members.array("groups", exactly("groups", (d,), np.int64)), d)
    n_groups = 0
    if spec["penalty"] in GROUP_PENALTIES:       # as the kernel counts them
        n_groups = d if groups is None else int(groups.max(initial=-1)) + 1
    check_memory(8 * (VALUES_PER_GROUP * n_groups + VALUES_PER_OUTPUT * K),
                 f"{n_groups} groups and {K} output(s)")
    if "group_weights" in members:
        weights = members.array("group_weights", at_most("group_weights", n_groups, np.float64))
    learner = _learner(spec, groups, weights)    # (which checks the group weights)
    check_same_groups(header.params, groups, learner.group_weights)
    arrays = {name: np.frombuffer(a, dtype=np.int64 if name in SAVED_INT64 else np.float64).reshape(shape)
              for name, (a, shape) in learner.saved_arrays().items()}   # the kernel's, written in place
    average = _average_state(members, learner, scalars, header.version)
    prefix = None
    if header.version < 12 and learner.avg_prefix:     # (`upgrades.prefix_stamps`, from the history)
        history, average["avg_history"] = average["avg_history"], np.empty((0, 4))
        prefix = _PrefixUpgrade(history, scalars, learner.average)
        scalars = prefix.scalars
    _read_state(members, header, arrays, scalars, prefix)
    learner.__setstate__({"arrays": arrays, **scalars, **average})
    classes = None
    if header.name == "ProxClassifier":
        with in_section("classes"):
            classes = check_saved_classes(members.array("classes", classes_of(K)))
    elif "classes" in members:
        raise ValueError("a ProxRegressor has no classes, but the file holds some")
    feature_names = None
    if "feature_names" in members:
        feature_names = members.array("feature_names", strings("feature_names", d))
    return SavedModel(header.name, header.params, learner, header.fitted, classes, feature_names)


class _PrefixUpgrade:
    """A version 11 file's averaged l2 rows made the kernel's (`upgrades.prefix_stamps`
    from the file's history): the state's upgrade, and the scalars with the prefix sum
    of P it gives, which the checks of the rows then read."""

    def __init__(self, history, scalars, average):
        self.history, self.average = history, average
        self.scalars = dict(scalars)

    def __call__(self, state, K):
        rows, self.scalars["SP"], self.scalars["SP_lo"] = prefix_stamps(state, self.history, self.scalars,
                                                                         self.average)
        return rows


def _average_state(members, learner, scalars, version):
    """The averaged iterate's members of a model with ``average`` (none otherwise),
    finite and of the shapes the kernel keeps: the intercepts' sums, and the
    cumulants' history since the rebase with its Q >= 0 and its P in (0, 1] (that of
    a version 11 file whose rows take the prefix sums of P: `prefix_stamps`)."""
    if not learner.average:
        return {}
    kept = learner.keeps_history or (version < 12 and learner.avg_prefix)
    n = scalars["since_rebase"] + 1 if kept else 0
    if n > learner.rebase_period + 1:
        raise ValueError(f"since_rebase={scalars['since_rebase']} is beyond the rebase period")
    bavg = members.array("bavg", exactly("bavg", (learner.n_outputs + learner.n_unpenalized,), np.float64))
    history = members.array("avg_history", exactly("avg_history", (n, 4), np.float64))
    check_finite("bavg", bavg)
    check_finite("avg_history", history)
    if not (np.all(history[:, 0] >= 0) and np.all((history[:, 1] > 0) & (history[:, 1] <= 1))):
        raise ValueError("avg_history holds cumulants the kernel never writes (Q >= 0, 0 < P <= 1)")
    return {"bavg": bavg, "avg_history": history}


def _learner(spec, groups, weights):
    """The kernel the header's learner entry describes, its state not yet read; a
    model too large for the memory available is refused before it is allocated
    (ModelTooLarge, a ValueError) or, if its allocation fails, after."""
    try:
        return Learner(**{key: spec[key] for key in LEARNER_ARGS}, groups=groups, group_weights=weights)
    except MemoryError as e:
        if isinstance(e, ValueError):
            raise
        raise ValueError(f"the model's {spec['n_features']} features x {spec['n_outputs']} output(s) "
                         "do not fit in the memory available") from None


def _read_state(members, header, arrays, scalars, prefix):
    """Read the state's members into the kernel's arrays, checking every value:
    finite, and holding the kernel's invariants (those of the rows a version 11
    file's are made, `prefix`, if it is not None, with the scalars it gives)."""
    spec = header.learner
    d, K = spec["n_features"], spec["n_outputs"]
    width = arrays["state"].shape[1]
    stored, upgrade = state_upgrade(header.version, spec, width)
    if prefix is not None:
        stored = width - 1
    rows = members.array("rows", at_most("rows", d, np.int64))
    state = members.array("state", exactly("state", (len(rows), stored), np.float64))
    if not (np.all((0 <= rows) & (rows < d)) and np.all(rows[1:] > rows[:-1])):   # (np.diff overflows)
        raise ValueError(f"rows must be increasing feature indices in [0, {d})")
    for name, a in arrays.items():
        if name not in SPECIAL:
            a[...] = members.array(name, exactly(name, a.shape, a.dtype))
            check_finite(name, a)
    check_finite("state", state)
    if prefix is not None:
        state = prefix(state, K)
        scalars = prefix.scalars
    check_layout(spec, scalars, state, arrays)
    if upgrade is not None:
        state = upgrade(state, K)
    size = scalars["heap_size"]
    if size > len(arrays["heap_items"]):
        raise ValueError(f"heap_size={size} but this model has no Berhu heap of that size")
    items = members.array("heap_items", exactly("heap_items", (size,), np.int64))
    keys = members.array("heap_keys", exactly("heap_keys", (size,), np.float64))
    if len(arrays["heap_items"]):
        check_heap(spec, scalars, rows, state, items, keys)
    arrays["state"][rows] = state
    arrays["heap_items"][:size] = items
    arrays["heap_keys"][:size] = keys
    arrays["heap_pos"][items] = np.arange(size)


