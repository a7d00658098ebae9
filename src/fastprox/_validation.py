"""Checks of hyper-parameters and inputs, with errors that say how to fix them.

Which combinations of update, schedule and penalty are supported, and why, is the
table of rules' (`_registry`); this module checks names, numbers and what the table
does not cover (rda_rho with a group penalty, groups with a penalty that ignores
them).
"""
import math
import numbers

from ._numpy import np
from ._sklearn_names import check_n_jobs, check_optimal, schedule_of
from ._registry import (LOSSES, SCHEDULES, STEPS, UPDATES, averaging, defaults_for, losses_of, penalties_of, rule,
                        takes_offset)

#: The penalties of W's entries one by one, and those of its blocks (`_registry.PENALTIES`).
COORDINATE_PENALTIES = penalties_of("separable") + penalties_of("berhu")
GROUP_PENALTIES = penalties_of("group")
CLASSIFICATION_LOSSES = losses_of("binary")
REGRESSION_LOSSES = losses_of("regression")
MULTI_CLASS = ("ovr", "multinomial")
MULTINOMIAL_LOSSES = losses_of("binary", multinomial=True)
# scikit-learn's spellings (SGDClassifier, SGDRegressor) of the kernel's names:
# accepted as given (get_params returns them), the kernel gets its own name.
LOSS_ALIASES = {"log_loss": "log", "squared_error": "squared"}
#: What to give for an eta0 <= 0: SGDClassifier's eta0 defaulted to 0.0 in the scikit-learn
#: releases fastprox supports (>= 1.6) before it became 0.01, a value its default "optimal"
#: rate never reads, so scripts ported from them pass it.
ETA0_FIX = "use eta0='auto' (the default: the rule's own base step) or a positive step"


def check_one_of(name, value, allowed):
    if value not in allowed:
        raise ValueError(f"{name}={value!r} is not supported; use one of {', '.join(map(repr, allowed))}.")


def check_number(name, value, low, low_open=False, high=None, integer=False, auto=False, fix=None):
    """Refuse what is not a finite number in range (or, where `auto`, the string "auto"),
    the message ending with `fix` where given (what to use instead)."""
    if auto and isinstance(value, str) and value == "auto":
        return
    kind = numbers.Integral if integer else numbers.Real
    if isinstance(value, bool) or not isinstance(value, kind) or not _finite_number(value):
        either = '"auto" or ' if auto else ""
        raise ValueError(f"{name}={value!r} must be {either}a finite {'integer' if integer else 'number'}.")
    if value < low or (low_open and value == low) or (high is not None and value > high):
        bound = f"{'>' if low_open else '>='} {low}" + (f" and <= {high}" if high is not None else "")
        raise ValueError(f"{name}={value!r} must be {bound}" + (f"; {fix}." if fix else "."))


def _finite_number(value):
    """math.isfinite, and False for an integer too large for a float (10**400)."""
    try:
        return math.isfinite(value)
    except OverflowError:
        return False


def kernel_loss(loss):
    """The kernel's name of a loss: "log" for scikit-learn's "log_loss", "squared"
    for "squared_error", any other value as it is."""
    return LOSS_ALIASES.get(loss, loss) if isinstance(loss, str) else loss


def kernel_penalty(penalty):
    """The kernel's name of a penalty: "none" for scikit-learn's None."""
    return "none" if penalty is None else penalty


def check_params(est, losses):
    """Raise ValueError for an unknown option, a value out of range or an unsupported
    combination. `losses` are the kernel's names; their scikit-learn spellings
    (LOSS_ALIASES) and penalty=None are accepted too.

    ``est`` is an estimator, the parameters of one (a model file's, upgraded by
    `model_io.upgrades`; the command line's), or a model file's learner entry (the
    kernel's arguments). The parameters read with getattr are those that some of
    these lack, taking their defaults: a regressor has no class_weight, multi_class
    nor n_jobs, and the learner entry none of the estimator's own parameters (fit's
    stopping and splitting, hash_bits, grow_features, verbose, learning_rate,
    power_t); every one has the kernel's, read as attributes."""
    if kernel_loss(est.loss) not in losses:
        check_one_of("loss", est.loss, losses + tuple(a for a, name in LOSS_ALIASES.items() if name in losses))
    check_one_of("update", est.update, UPDATES)
    check_one_of("schedule", est.schedule, tuple(SCHEDULES) + (None,))
    check_one_of("step", est.step, STEPS + (None,))
    check_one_of("penalty", est.penalty, COORDINATE_PENALTIES + GROUP_PENALTIES + (None,))
    penalty = kernel_penalty(est.penalty)
    check_number("batch_size", est.batch_size, 1, high=2**31 - 1, integer=True)    # the kernel's C int
    schedule, step = schedule_and_step(vars(est), getattr(est, "multi_class", "ovr") == "multinomial")
    chosen = est.schedule is None and getattr(est, "learning_rate", None) is None
    naming_the_choice(rule, schedule, chosen, est.update, schedule, penalty)
    if penalty in GROUP_PENALTIES and est.update == "rda" and est.rda_rho != 0:
        raise ValueError("rda_rho adds an l1 term that has no closed form with a group penalty; "
                         "use rda_rho=0 (or penalty='sparse_group' for l1 within groups).")
    for name in ("groups", "group_weights"):
        if getattr(est, name, None) is not None:
            check_grouped(name, penalty)
    check_number("alpha", est.alpha, 0.0)
    check_number("l1_ratio", est.l1_ratio, 0.0, high=1.0)
    check_number("eta0", est.eta0, 0.0, low_open=True, auto=True, fix=ETA0_FIX)
    check_offset(est.t0, est.update, schedule)
    check_intercept_scaling(est.intercept_scaling)
    check_optimal(getattr(est, "learning_rate", None), est.alpha, est.eta0, est.t0)
    check_number("delta", est.delta, 0.0, auto=True)
    check_number("rda_rho", est.rda_rho, 0.0)
    check_number("berhu_gamma", est.berhu_gamma, 0.0, low_open=True)
    check_number("epsilon", est.epsilon, 0.0)
    check_number("max_iter", est.max_iter, 1, integer=True)
    check_step(step, est.update, schedule, est.batch_size)
    check_invariant_loss(step, est.loss)
    check_average(est.average, est.update, schedule, penalty, chosen)
    check_hash_bits(getattr(est, "hash_bits", None))
    for name in ("fit_intercept", "shuffle", "warm_start", "grow_features"):
        check_flag(name, getattr(est, name, False))
    _check_verbose(getattr(est, "verbose", 0))
    _check_class_weight(getattr(est, "class_weight", None))
    check_stopping(est)
    check_number("power_t", getattr(est, "power_t", 0.5), 0.0)
    check_n_jobs(getattr(est, "n_jobs", None))
    check_seed(getattr(est, "random_state", None))


def check_seed(value):
    """random_state, the seed of the shuffles (and of early_stopping's split): what
    scikit-learn's check_random_state takes, None, an int in [0, 2**32 - 1] or a
    numpy.random.RandomState, refused otherwise by its name (check_random_state's own
    error names no parameter, and came only where a shuffle used it)."""
    if value is None or isinstance(value, np.random.RandomState):
        return
    if not (isinstance(value, numbers.Integral) and 0 <= value <= 2**32 - 1):
        raise ValueError(f"random_state={value!r} cannot seed the shuffles: give None, an int in "
                         "[0, 2**32 - 1] or a numpy.random.RandomState.")


def check_flag(name, value):
    """A flag is True or False (NumPy's bools too): a string such as "no", truthy,
    would otherwise silently mean True."""
    if type(value).__name__ not in ("bool", "bool_"):    # NumPy's too, without importing it
        raise ValueError(f"{name}={value!r} must be True or False.")


def check_intercept_scaling(value):
    """intercept_scaling, the value s of the intercepts' constant feature (the
    intercept is s times its weight): a finite number > 0."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not _finite_number(value) or value <= 0:
        raise ValueError(f"intercept_scaling={value!r} is the value of the intercept's constant feature (the "
                         "intercept is intercept_scaling times its weight) and must be a finite number > 0: "
                         "use 1.0 (the default), or 0.1 for sparse SGDClassifier's intercept updates under "
                         "its scalar schedules.")


def check_offset(t0, update, schedule, lowest=0.0):
    """t0, the offset of the decaying scalar schedules (eta0 / sqrt(t + t0), eta0 / (t +
    t0)): a finite number >= ``lowest``, and 0 unless the rule's steps take it
    (`_registry.takes_offset`).

    Parameters
    ----------
    t0 : float
        The offset.
    update, schedule : str
        The rule (the schedule resolved).
    lowest : float, default=0.0
        The least offset: a parameter's is >= 0; the kernel's is > -1 (which keeps
        t + t0 > 0 from t = 1 on), as learning_rate="optimal" makes it where alpha > 1.

    Raises
    ------
    ValueError
        Naming the fix.
    """
    check_number("t0", t0, lowest, low_open=lowest < 0)
    if t0 != 0 and not takes_offset(update, schedule):
        raise ValueError(f"t0={t0!r} offsets the decaying scalar schedules of update='fobos' (eta0 / "
                         f"sqrt(t + t0), eta0 / (t + t0)); update={update!r} with schedule={schedule!r} has "
                         "none: use t0=0, or update='fobos' with schedule='invsqrt' or 'inv'.")


def check_stopping(est):
    """Refuse stopping parameters out of scikit-learn's ranges, naming the fix.

    Parameters
    ----------
    est : object
        With ``tol``, ``n_iter_no_change``, ``early_stopping`` and
        ``validation_fraction`` (absent ones, in a model file's learner entry, take their defaults).

    Raises
    ------
    ValueError
        tol not None nor a number >= 0, n_iter_no_change not an integer >= 1,
        early_stopping not a bool, validation_fraction not in (0, 1).
    """
    tol = getattr(est, "tol", None)
    if tol is not None:
        check_number("tol", tol, 0.0)
    check_number("n_iter_no_change", getattr(est, "n_iter_no_change", 5), 1, integer=True)
    check_flag("early_stopping", getattr(est, "early_stopping", False))
    fraction = getattr(est, "validation_fraction", 0.1)
    check_number("validation_fraction", fraction, 0.0, low_open=True, high=1.0)
    if fraction == 1.0:
        raise ValueError("validation_fraction=1.0 leaves no row to train on; use a fraction in (0, 1).")


def average_from(average):
    """The first step the averaged iterate sums, from scikit-learn's ``average``
    (True: 1, the first step; an integer a >= 1: the a-th; False or 0: none, 0)."""
    if type(average).__name__ in ("bool", "bool_"):     # NumPy's too, without importing it
        return int(average)
    if isinstance(average, numbers.Integral) and average >= 0:
        return int(average)
    raise ValueError(f"average={average!r} must be True, False or an integer >= 0 (averaging starts "
                     "once that many steps are taken, scikit-learn's meaning).")


def check_average(average, update, schedule, penalty, chosen):
    """The first step averaged (`average_from`); ValueError where the rule keeps no
    exact lazy average (`_registry.averaging`), naming the schedule the defaults
    chose (``chosen``: schedule=None) and those that keep one."""
    first = average_from(average)
    if first:
        naming_the_choice(averaging, schedule, chosen, update, schedule, penalty)
    return first


def naming_the_choice(check, schedule, chosen, *args):
    """check(*args); its ValueError says which schedule the defaults chose where
    they chose it (``chosen``: schedule=None and no learning_rate), as the user
    named none."""
    try:
        return check(*args)
    except ValueError as e:
        if not chosen:
            raise
        raise ValueError(f"{e} (schedule=None chose {schedule!r} for these parameters.)") from None


#: The most hash bits: the hash's 64 bits less a sign bit and one for the width, 2^bits.
MAX_HASH_BITS = 62


def check_hash_bits(bits):
    """hash_bits: None (the ids are the columns) or an integer in [1, MAX_HASH_BITS]."""
    if bits is not None:
        check_number("hash_bits", bits, 1, high=MAX_HASH_BITS, integer=True)


def schedule_and_step(params, multinomial):
    """The (schedule, step) a model trains with: the parameters given (scikit-learn's
    learning_rate and power_t mapped onto the schedule, `_sklearn_names.schedule_of`),
    None resolved to the rule's data-free default (`_registry.defaults_for`; the
    gradient step for a loss the invariant step does not take); a missing step
    (model files before it) is "gradient"."""
    schedule = schedule_of(params.get("learning_rate"), params.get("power_t", 0.5), params["schedule"],
                           params["batch_size"])
    step = params.get("step", "gradient")
    if schedule is None or step is None:
        chosen = defaults_for(params["update"], kernel_penalty(params["penalty"]),
                              params["batch_size"], multinomial)
        schedule = chosen[0] if schedule is None else schedule
        if step is None:
            step = chosen[1] if kernel_loss(params["loss"]) in INVARIANT_LOSSES else "gradient"
    return schedule, step


#: The losses the importance-invariant step takes (`_registry.Loss.invariant`).
INVARIANT_LOSSES = tuple(name for name, loss in LOSSES.items() if loss.invariant)


def check_invariant_loss(step, loss):
    """The invariant step follows the loss's flow; a loss without one (the perceptron's
    stops at margin 0, where every model starts) takes the gradient step.

    Parameters
    ----------
    step : str
        The step the model trains with (None resolved).
    loss : str
        The loss, in the kernel's or scikit-learn's spelling.

    Raises
    ------
    ValueError
        step="invariant" with a loss whose registry row says ``invariant=False``.
    """
    if step == "invariant" and kernel_loss(loss) not in INVARIANT_LOSSES:
        raise ValueError(f"step='invariant' is not defined for loss={loss!r} (its flow stops at "
                         "margin 0, where the model starts, and would never move it); use "
                         "step='gradient' (or step=None, which chooses it).")


def check_step(step, update, schedule, batch_size):
    """step: "gradient" or "invariant" (fobos only); both the invariant step and the
    normalized schedule take one row per step (their per-row quantities, the flow's
    step norm and N_t's row norm, have no mini-batch form in the contract)."""
    check_one_of("step", step, STEPS)
    if step == "invariant" and update != "fobos":
        raise ValueError(f"step='invariant' is fobos's forward step; update={update!r} has none "
                         "(its weights are closed forms of gradient sums): use update='fobos' or "
                         "step='gradient'.")
    for name, value in (("step", "invariant"), ("schedule", "normalized")):
        if (step if name == "step" else schedule) == value and batch_size != 1:
            raise ValueError(f"{name}={value!r} takes one row per step; got batch_size={batch_size}: "
                             f"use batch_size=1, or {name}={'gradient' if name == 'step' else 'adagrad'!r}.")


def check_single_rows(step, schedule, multinomial):
    """The invariant step and the normalized schedule are defined for single-output
    and one-vs-rest models, not for the multinomial losses (a flow along K coupled
    scores has no closed form)."""
    if multinomial and (step == "invariant" or schedule == "normalized"):
        what = "step='invariant'" if step == "invariant" else "schedule='normalized'"
        raise ValueError(f"{what} is defined for binary and one-vs-rest models, not multinomial "
                         "ones; use multi_class='ovr', or step='gradient' with schedule='adagrad'.")


#: What the contract leaves undefined for structured outputs (its "Structured outputs"):
#: the normalized schedule (its row norms N_t) and the invariant step (a flow along one
#: row's loss), which have no form for a structured example's gradient.
STRUCTURED_SCHEDULES = tuple(s for s in SCHEDULES if s != "normalized")


def check_structured(step, schedule):
    """A structured learner (gradients from its caller, one example per step) takes the
    gradient step under every rule of the table but the normalized schedule."""
    if schedule not in STRUCTURED_SCHEDULES:
        raise ValueError(f"schedule={schedule!r} is not defined for structured outputs (its per-row "
                         "norms have no structured form); use schedule in "
                         f"{STRUCTURED_SCHEDULES}: every rule of the table of rules takes a "
                         "structured example's gradient under them.")
    if step != "gradient":
        raise ValueError(f"step={step!r} is not defined for structured outputs (the invariant step "
                         "follows one row's loss, a structured example has no such flow); use "
                         "step='gradient', under every rule of the table of rules but "
                         "schedule='normalized'.")


def _check_verbose(value):
    """verbose: an integer >= 0, or a bool (as scikit-learn's estimators take it)."""
    if not (isinstance(value, int) and value >= 0):     # bools are ints
        check_number("verbose", value, 0, integer=True)


def _check_class_weight(value):
    """class_weight: None, "balanced" or a dict {class: weight} of finite weights >= 0
    (its classes are checked against the data's when training)."""
    if value is None or (isinstance(value, str) and value == "balanced"):
        return
    if not isinstance(value, dict):
        raise ValueError(f"class_weight={value!r} is not supported; use None, 'balanced' or a dict "
                         "{class: weight}.")
    for label, weight in value.items():
        check_number(f"class_weight[{label!r}]", weight, 0.0)


def check_groups(groups, n_features):
    """None (each feature's row of W is a group) or a vector of ids 0..p-1, -1 = unpenalized."""
    if groups is None:
        return None
    ids = np.asarray(groups)
    if ids.ndim != 1 or ids.shape[0] != n_features:
        raise ValueError(f"groups must be a vector of length n_features={n_features}; got shape {ids.shape}.")
    if not np.issubdtype(ids.dtype, np.integer):
        raise ValueError("groups must hold integer group ids (0, 1, ...; -1 = unpenalized).")
    if ids.size and ids.min() < -1:
        raise ValueError("groups ids must be >= -1 (-1 marks an unpenalized feature).")
    return ids.astype(np.int64)


def check_grouped(name, penalty):
    if penalty not in GROUP_PENALTIES:
        raise ValueError(f"{name}= is used by the group penalties {GROUP_PENALTIES}; "
                         f"penalty={penalty!r} ignores it: drop {name} or change the penalty.")


#: Largest group weight: squared_group's Alg. 4 sums d_G^2 over groups.
MAX_GROUP_WEIGHT = 1e150


def check_group_weights(weights, penalty, n_groups):
    """None (every group weight 1) or a float64 vector of one weight d_G >= 0 per group:
    n_groups = n_features with groups=None, else max(groups) + 1; d_G = 0 leaves group
    G without its group part (sparse_group's l1 part applies to every entry)."""
    if weights is None:
        return None
    check_grouped("group_weights", penalty)
    try:
        d = np.array(weights, dtype=np.float64, order="C")
    except (TypeError, ValueError):
        raise ValueError(f"group_weights must be numbers, one per group; got {weights!r}.") from None
    if d.ndim != 1 or d.shape[0] != n_groups:
        raise ValueError(f"group_weights must be a vector with one weight per group, {n_groups} here "
                         f"(n_features with groups=None, else max(groups) + 1); got shape {d.shape}.")
    if not np.all(np.isfinite(d)) or np.any(d < 0):
        raise ValueError("group_weights must be finite and >= 0 (0 leaves a group unpenalized); "
                         "replace the negative, NaN or infinite entries.")
    if np.any(d > MAX_GROUP_WEIGHT):
        raise ValueError(f"group_weights above {MAX_GROUP_WEIGHT:g} overflow the weighted proxes (they "
                         "square the weights); divide the weights by a constant and multiply alpha by it.")
    return d


def canonical(X):
    """X with sorted, unique indices in every row (duplicates summed, as scipy does):
    X itself if it has them, else a copy."""
    if not X.has_canonical_format:
        X = X.copy()
        X.sum_duplicates()
    return X


def float_csr(X):
    """X (a scipy sparse matrix, or what scipy makes one of) in CSR with float32 or
    float64 values, as the kernels read them: X itself when it is one, else a copy
    with float64 values (integer and boolean counts)."""
    import scipy.sparse as sp
    X = X.tocsr() if sp.issparse(X) else sp.csr_matrix(X)
    return X if X.dtype in (np.float32, np.float64) else X.astype(np.float64)


def kernel_arrays(X):
    """CSR arrays the kernel reads without copying: float32/64 values, sorted
    unique int32/int64 indices (`canonical`). X is a scipy matrix or a LIBSVM
    reader's chunk (NumPy or ``array.array`` buffers)."""
    X = canonical(X)
    indices, indptr = X.indices, X.indptr
    if indices.itemsize != indptr.itemsize:
        indices, indptr = indices.astype(np.int64), indptr.astype(np.int64)
    return X.data, indices, indptr


def as_float_array(name, values, n):
    """A C-contiguous float64 vector of length n with finite values."""
    values = np.ascontiguousarray(values, dtype=np.float64).reshape(-1)
    if values.shape[0] != n:
        raise ValueError(f"{name} has {values.shape[0]} entries, but X has {n} rows.")
    if not np.all(np.isfinite(values)):
        raise ValueError(f"{name} contains NaN or infinity; remove or replace those rows.")
    return values


class ModelTooLarge(MemoryError, ValueError):
    """A model whose state would not fit in memory, refused before anything is
    allocated. A MemoryError (what it is) and a ValueError (what callers that
    check their input catch: the model file reader, the command line)."""


def available_memory():
    """Bytes this process could allocate now: Linux's MemAvailable, else the
    physical memory the OS reports, else None (unknown: nothing is refused)."""
    try:
        with open("/proc/meminfo", "rb") as f:
            for line in f:
                if line.startswith(b"MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        import os
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (AttributeError, OSError, ValueError):
        return None


def readable_size(n):
    """n bytes as a short human-readable size."""
    for unit in ("bytes", "KiB", "MiB", "GiB", "TiB", "PiB"):
        if n < 1024 or unit == "PiB":
            return f"{n:.0f} {unit}" if unit == "bytes" else f"{n:.1f} {unit}"
        n /= 1024


#: States up to this size are allocated without asking what memory is available: reading
#: /proc/meminfo takes about a tenth of a millisecond, as long as a whole fit of a thousand
#: short rows, and a process that has imported NumPy and SciPy holds several times this much.
CHECKED_BYTES = 16 << 20


#: ModelTooLarge's advice (the command line's tag and parse name their own options).
FEWER_FEATURES = "use fewer features (hash them into fewer buckets, or drop rare ones)"


def check_memory(n_bytes, what):
    """Refuse (ModelTooLarge) a state of `n_bytes` that would not fit in the memory
    available now; `what` says what it holds (e.g. "2^31 features x 1 output"). A state
    of at most CHECKED_BYTES always fits: not asked."""
    if n_bytes <= CHECKED_BYTES:
        return
    free = available_memory()
    if free is not None and n_bytes > free:
        raise ModelTooLarge(
            f"the model's state for {what} needs {readable_size(n_bytes)}, but only {readable_size(free)} of "
            f"memory is available; {FEWER_FEATURES}.")


class NonFiniteMargin(ValueError):
    """A step's margin was NaN or infinite: `row` is its row of X, `detail` the cause
    and the fix (the command line names the row in its file)."""

    def __init__(self, row, detail):
        super().__init__(f"row {row}: {detail}")
        self.row, self.detail = row, detail
