"""What earlier versions of the format lack or store otherwise (see the format's
history, fastprox.model_io.format), made what this version holds: entries added
since, with the values that mean what the file meant, and state rows of an
earlier layout converted to the kernel's."""
from .._core import CLASSIFIER_DEFAULTS, LATER_PARAMS, REGRESSOR_DEFAULTS
from .._numpy import np
from .._arrays import running_sums
# Entries of the learner and scalars sections that versions before 4 lack, and their values.
BEFORE_4 = {"learner": dict(step="gradient"), "scalars": dict(N=0.0)}
# Entries of the fitted section that versions before 6 lack, and their values.
BEFORE_6 = dict(hash_bits_=None)
# Entries of the learner section that versions before 7 lack (no averaged iterate).
BEFORE_7 = dict(average=0)
# Entries of the learner section that versions before 10 lack (no schedule offset).
BEFORE_10 = dict(t0=0.0)
# Entries of the learner section that versions before 11 lack (an unscaled intercept feature).
BEFORE_11 = dict(intercept_scaling=1.0)
# Entries of the scalars section that versions before 12 lack (no prefix sums of P: `prefix_stamps`
# gives those of the models that keep them).
BEFORE_12 = dict(SP=0.0, SP_lo=0.0)


def prefix_stamps(state, history, scalars, average):
    """Version 11's averaged rows with a P stamp alone (P, A, then the entries; A the
    step of the row's stamp) as the kernel keeps them since (P, SP, SP_lo, then the
    entries): the prefix sum of P over the averaged steps (>= ``average``) since the
    rebase up to A, from the history of P (``avg_history``'s second column, one row
    per step since the rebase), summed in double-double as the kernel sums it
    (`_arrays.running_sums`: the same additions, the same bits). Returns the rows and the
    prefix sum at the last step (SP, SP_lo); ValueError for a stamp A that is not a
    step since the rebase."""
    t, since = scalars["t"], scalars["since_rebase"]
    base = t - since
    averaged = base + np.arange(1, since + 1) >= average
    hi, lo = (np.frombuffer(a) for a in running_sums(np.ascontiguousarray(history[1:since + 1, 1][averaged])))
    before = np.concatenate([[0], np.cumsum(averaged)])     # the averaged steps up to each step since the rebase
    hi, lo = hi[before], lo[before]
    A = state[:, 1]
    if not np.all((base <= A) & (A <= t) & (A == np.floor(A))):
        raise ValueError(f"state holds A fields the kernel never writes (steps since the rebase, {base} to {t})")
    at = (A - base).astype(np.int64)
    rows = np.concatenate([state[:, :1], hi[at, None], lo[at, None], state[:, 2:]], axis=1)
    return rows, float(hi[-1]), float(lo[-1])


def upgraded_pickle(learner, d):
    """A `Learner.__getstate__` dict of a pickle from before the prefix sums of P (no
    ``SP``) as the learner reads it now: its averaged l2 rows' stamps the prefix sums
    (`prefix_stamps`, from its history, which the learner no longer keeps)."""
    d = {**BEFORE_12, **d}
    if learner.avg_prefix:
        state = d["arrays"]["state"]
        rows, d["SP"], d["SP_lo"] = prefix_stamps(state, d["avg_history"], d, learner.average)
        d["arrays"] = {**d["arrays"], "state": rows}
        d["avg_history"] = np.empty((0, 4))
    return d


def add_ftrl_roots(state, K):
    """Version 2's FTRL rows, (z, n) per output, as the kernel keeps them: (z, n, sqrt(n))."""
    z_n = state.reshape(len(state), K, 2)
    return np.concatenate([z_n, np.sqrt(np.maximum(z_n[:, :, 1:], 0))], axis=2).reshape(len(state), 3 * K)


def drop_normalized_stamps(state, K):
    """Version 4's rows of a normalized model without a penalty, (R0, m) then (w, G, c)
    per output, as the kernel keeps them: m, then (w, G)."""
    entries = state[:, 2:].reshape(len(state), K, 3)[:, :, :2].reshape(len(state), 2 * K)
    return np.concatenate([state[:, 1:2], entries], axis=1)


def param_keys(name, version):
    """The parameters of a model of class ``name`` in a file of ``version``: its
    estimator's (version 1 had no group_weights)."""
    defaults = CLASSIFIER_DEFAULTS if name == "ProxClassifier" else REGRESSOR_DEFAULTS
    return [key for key in defaults if version > 1 or key != "group_weights"]


def upgraded(header, version):
    """The header of a file of ``version`` (a JSON object of the format's entries)
    with the entries added since where its sections lack them (sections that are
    not JSON objects are left as they are, for the checks to refuse)."""
    header = dict(header)
    if version < 4:
        header.update((key, {**BEFORE_4[key], **header[key]}) for key in ("learner", "scalars")
                      if type(header[key]) is dict)
    if version < 7 and type(header["learner"]) is dict:
        header["learner"] = {**BEFORE_7, **header["learner"]}
    if version < 10 and type(header["learner"]) is dict:
        header["learner"] = {**BEFORE_10, **header["learner"]}
    if version < 11 and type(header["learner"]) is dict:
        header["learner"] = {**BEFORE_11, **header["learner"]}
    if version < 12 and type(header["scalars"]) is dict:
        header["scalars"] = {**BEFORE_12, **header["scalars"]}
    if version < 6 and type(header["fitted"]) is dict:
        header["fitted"] = {**BEFORE_6, **header["fitted"]}
    if isinstance(header["params"], dict):
        keys = param_keys(header["class"], version)
        header["params"] = {**{key: value for key, value in LATER_PARAMS.items() if key in keys},
                            **header["params"]}
    return header


def state_upgrade(version, spec, width):
    """(the width of the state rows a file of ``version`` stores for the kernel ``spec``
    whose rows are ``width`` wide, the function making them the kernel's rows or None
    where they are already)."""
    K = spec["n_outputs"]
    if version < 3 and spec["update"] == "ftrl" and width == 3 * K:
        return 2 * K, add_ftrl_roots
    if version < 5 and spec["schedule"] == "normalized" and width == 1 + 2 * K:
        return 2 + 3 * K, drop_normalized_stamps
    return width, None
