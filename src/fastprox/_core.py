"""What the estimators and the command line share, without scikit-learn:
default parameters, label encoding, the kernel's construction, the pass loop
and the probability link. Importing scikit-learn costs a second or more, which
`fastprox train` on a small file must not pay; nor does it import NumPy
(`fastprox._numpy`): labels from a file (float64 ``array.array``) and
classes given as Python numbers are checked and encoded without it."""
from array import array
from math import isfinite, sqrt

from ._arrays import encode_targets, sum_squares
from ._kernels import Learner, loss_derivative
from ._numpy import np
from ._registry import LOSSES
from ._sklearn_names import optimal_init
from ._validation import (MULTINOMIAL_LOSSES, as_float_array, average_from, check_groups, kernel_arrays,
                          kernel_loss, kernel_penalty, schedule_and_step)

# Rows whose scale sets eta0="auto" and delta="auto": enough for a mean, few
# enough to cost little of a short pass (10,000 rows of 13 values: 17 us).
AUTO_ROWS = 10_000

DEFAULTS = dict(penalty="l1", alpha=0.0, l1_ratio=0.15, update="fobos", schedule=None,
                step=None, eta0="auto", t0=0.0, delta="auto", rda_rho=0.0, berhu_gamma=1.0, batch_size=1,
                fit_intercept=True, intercept_scaling=1.0, max_iter=1, shuffle=True, random_state=None,
                warm_start=False, epsilon=0.1, groups=None, group_weights=None, grow_features=False,
                hash_bits=None, verbose=0, average=False, tol=1e-3, n_iter_no_change=5, early_stopping=False,
                validation_fraction=0.1, learning_rate=None, power_t=0.5)
CLASSIFIER_DEFAULTS = dict(loss="log", **DEFAULTS, multi_class="ovr", class_weight=None, n_jobs=None)
REGRESSOR_DEFAULTS = dict(loss="squared", **DEFAULTS)
# Parameters newer than some model files and pickles: absent from one, they take these
# values, which mean what the file or pickle meant (`model_io.upgrades`, the estimators'
# __setstate__).
LATER_PARAMS = dict(t0=0.0, intercept_scaling=1.0, grow_features=False, verbose=0, class_weight=None,
                    step="gradient", hash_bits=None, average=False, tol=None, n_iter_no_change=5,
                    early_stopping=False, validation_fraction=0.1, learning_rate=None, power_t=0.5, n_jobs=None)


def distinct(y):
    """np.unique(y): for numbers with at most two distinct values (binary labels,
    the common case) found in three linear passes instead of a sort. (np.unique is
    asked for the counts too: without them it imports numpy.ma, 30 ms of
    `fastprox train`.)"""
    y = np.asarray(y)
    if y.dtype.kind in "biuf" and y.size:
        lo, hi = y.min(), y.max()
        if not np.any((y != lo) & (y != hi)):
            return np.array([lo] if lo == hi else [lo, hi], dtype=y.dtype)
    return np.unique(y, return_counts=True)[0]


def python_floats(values):
    """Whether values are a list of Python floats (the command line's labels and
    classes), which are checked and saved without NumPy."""
    return isinstance(values, list) and all(type(v) is float for v in values)


def check_classes(classes):
    """The sorted distinct labels; at least two, and not continuous values. A list
    of Python floats (the command line's) gives a list, anything else an array;
    strings in an object array give a NumPy string array (``<U1``), as
    scikit-learn's ``unique_labels`` makes classes_ (SGDClassifier's fit and
    partial_fit(classes=...))."""
    if python_floats(classes):
        classes = sorted(set(classes))
        continuous = any(not c.is_integer() for c in classes)
    else:
        classes = distinct(classes)
        continuous = classes.dtype.kind == "f" and np.any(classes != np.round(classes))
        if classes.dtype.kind == "O" and all(isinstance(c, str) for c in classes.tolist()):
            classes = np.array(classes.tolist(), dtype=str)
    if len(classes) < 2:
        raise ValueError(f"The classifier needs samples of at least 2 classes; got 1 class: {classes}.")
    if continuous:
        raise ValueError("Unknown label type: continuous. Maybe you are trying to fit a classifier, "
                         "which expects discrete classes on a regression target with continuous values.")
    return classes


def check_multinomial_loss(loss, n_classes, multi_class):
    """Whether ``n_classes`` classes under ``multi_class`` make a multinomial model
    (three or more); ValueError if ``loss`` has no multinomial form."""
    multinomial = n_classes > 2 and multi_class == "multinomial"
    if multinomial and kernel_loss(loss) not in MULTINOMIAL_LOSSES:
        raise ValueError(f"multi_class='multinomial' takes loss in {MULTINOMIAL_LOSSES} "
                         f"(softmax, Crammer-Singer); got loss={loss!r}.")
    return multinomial


def encode_labels(y, classes, multi_class, loss):
    """Kernel targets and model shape for labels y over sorted `classes`:
    (+-1 targets, 1 output) for two classes (the larger is +1), else
    (class indices, K outputs) one-vs-rest or multinomial.
    Returns (target, n_outputs, ovr, multinomial)."""
    K = len(classes)
    multinomial = check_multinomial_loss(loss, K, multi_class)
    if isinstance(y, array):
        targets = encode_targets(y, classes)
    else:
        labels, names = np.asarray(y), np.asarray(classes)
        try:
            targets = encode_targets(*_as_numbers(labels, names))
        except ValueError:
            raise _unknown_labels(labels, names) from None
    return targets, 1 if K == 2 else K, K > 2 and not multinomial, multinomial


def _unknown_labels(y, classes):
    """The ValueError for labels y not all among the model's classes: which, as
    given, and how to train on them."""
    unknown = np.unique(y[~np.isin(y, classes)]).tolist()
    return ValueError(f"y has labels {unknown[:10]!r} not in classes_ {classes.tolist()!r}: a model's classes "
                      "are fixed when it is made; pass every label of the stream as the first partial_fit's "
                      "classes, or train a new model (fit, with warm_start=False).")


def _as_numbers(y, classes):
    """(float64 labels, float classes) that compare as y and classes do: the labels
    themselves when they and the classes are numbers that float64 holds exactly
    (below 2^53), else each label's class index, and the indices 0 to K - 1."""
    if y.dtype.kind in "biuf" and classes.dtype.kind in "biuf" and np.all(np.abs(classes) < 2.0**53):
        return np.ascontiguousarray(y, dtype=np.float64), classes.astype(np.float64).tolist()
    index = np.minimum(np.searchsorted(classes, y), len(classes) - 1)
    if not np.all(classes[index] == y):
        raise _unknown_labels(y, classes)
    return index.astype(np.float64), list(range(len(classes)))


def new_learner(params, n_features, n_outputs, ovr, multinomial, head):
    """The kernel for checked parameters `params` (a mapping with the estimator's
    names and values, scikit-learn's spellings included), to be trained first on
    `head`, a list of CSR pieces (whose first AUTO_ROWS rows set "auto" steps)."""
    schedule, step = schedule_and_step(params, multinomial)
    eta0, delta = step_sizes(params, schedule, head)
    return Learner(n_features, n_outputs, params["update"], schedule,
                   kernel_penalty(params["penalty"]), kernel_loss(params["loss"]),
                   alpha=params["alpha"], l1_ratio=params["l1_ratio"],
                   eta0=eta0, t0=schedule_offset(params), delta=delta, rda_rho=params["rda_rho"],
                   berhu_gamma=params["berhu_gamma"], epsilon=params["epsilon"],
                   fit_intercept=params["fit_intercept"], ovr=ovr, multinomial=multinomial,
                   groups=check_groups(params["groups"], n_features),
                   group_weights=params["group_weights"], step=step,
                   average=average_from(params.get("average", False)),
                   intercept_scaling=params.get("intercept_scaling", 1.0))


def check_same_kernel(params, kernel):
    """Refuse parameters that no longer describe the trained kernel `kernel` (a Learner,
    or a model file's learner entry as attributes): those `new_learner` builds it from
    are fixed for its life, so a set_params after training would be ignored by the
    steps that continue it (partial_fit, a warm start) and misdescribe a saved model.
    eta0 and delta count where their value reads no data ("auto" under AdaGrad is the
    first rows' scale); multi_class where there are more than two classes."""
    names = dict(params, loss=kernel_loss(params["loss"]), penalty=kernel_penalty(params["penalty"]))
    names["schedule"], names["step"] = schedule_and_step(params, kernel.multinomial)
    names["average"] = average_from(params.get("average", False))
    names["t0"] = schedule_offset(params)
    names["intercept_scaling"] = params.get("intercept_scaling", 1.0)
    keys = ["update", "penalty", "loss", "fit_intercept", "schedule", "step",
            "alpha", "l1_ratio", "rda_rho", "berhu_gamma", "epsilon", "t0", "intercept_scaling", "average"]
    # (a model file's learner entries newer than the file are there too: `model_io.upgrades`)
    fitted = {key: getattr(kernel, key) for key in keys + ["eta0", "delta"]}
    if auto_steps(params, names["schedule"]):
        keys += [key for key in ("eta0", "delta") if params[key] != "auto"]
    else:
        names["eta0"], names["delta"] = step_sizes(params, names["schedule"], [])
        keys += ["eta0", "delta"]
    if kernel.n_outputs > 1 and "multi_class" in params:
        keys.append("multi_class")
        fitted["multi_class"] = "multinomial" if kernel.multinomial else "ovr"
    for key in keys:
        if names[key] != fitted[key]:
            given = f"{params.get(key)!r}" + (f" ({names[key]!r} with the other parameters)"
                                             if params.get(key) is None or params.get(key) == "auto" else "")
            raise ValueError(f"params.{key}={given} but the kernel was fitted with "
                             f"{key}={fitted[key]!r} (set_params after the fit); set it back, or fit again")


def check_same_groups(params, groups, group_weights):
    """The kernel's groups and group weights (None or arrays) are the parameters' (None,
    lists as a model file holds them, or arrays): refused as `check_same_kernel`
    refuses, and so are values of another kind (a float among a file's group ids)."""
    for key, kept, kinds in (("groups", groups, (int,)), ("group_weights", group_weights, (int, float))):
        listed = params.get(key)
        if listed is None or kept is None:
            same = listed is None and kept is None
        else:
            listed = listed.tolist() if isinstance(listed, np.ndarray) else listed
            same = len(listed) == len(kept) and all(type(v) in kinds for v in listed)
            try:
                same = same and np.array_equal(np.array(listed, dtype=kept.dtype), kept)
            except OverflowError:
                same = False
        if not same:
            raise ValueError(f"params.{key} differs from the kernel's {key} (set_params after the "
                             "fit); set it back, or fit again")


def check_same_hashing(params, hash_bits):
    """Refuse parameters whose hash_bits is not the hashing the model was trained
    with (`hash_bits`, None for none): as `check_same_kernel` refuses a kernel
    parameter, since the model's columns are the buckets of that hashing."""
    if params.get("hash_bits") != hash_bits:
        raise ValueError(f"params.hash_bits={params.get('hash_bits')!r} but the model was fitted with "
                         f"hash_bits_={hash_bits!r} (set_params after the fit); set it back, or fit again")


def reads_head(params, multinomial):
    """Whether `new_learner` reads its `head` rows for these checked parameters: where
    an "auto" step is set by them (`auto_steps`), so that a caller whose head is a
    subset of X (a validation split's training rows) copies it only then."""
    return auto_steps(params, schedule_and_step(params, multinomial)[0])


def auto_steps(params, schedule):
    """Whether eta0 or delta is "auto" under AdaGrad (`schedule`), set by the
    first rows' scale; no other schedule's steps read the data."""
    return schedule == "adagrad" and "auto" in (params["eta0"], params["delta"])


def step_sizes(params, schedule, head):
    """The kernel's (eta0, delta): the numbers given, or for "auto" the scale of the
    first AUTO_ROWS rows of the CSR pieces `head` (those a first training call
    sees first, before any shuffle). Under AdaGrad, eta0 = 1 / sqrt(mean
    ||(s, x)||^2) (s is the intercept's constant feature, ``intercept_scaling``,
    without fit_intercept 0) and delta = the root mean square of the stored values: a
    first step then moves a row's margin by about its norm over the mean norm,
    and scaling the features by k scales the weights by 1/k (exactly without
    intercept and penalty), as Vowpal Wabbit's normalized updates do. Rows
    without stored values give unit scale. The other schedules' steps shrink
    with t: their "auto" eta0 is 0.5 (learning_rate="optimal"'s is 1 / alpha,
    `optimal_steps`), and delta is unused (1e-8)."""
    eta0, delta = params["eta0"], params["delta"]
    if schedule != "adagrad":
        if params.get("learning_rate") == "optimal":
            eta0 = optimal_steps(params)[0]
        return 0.5 if eta0 == "auto" else eta0, 1e-8 if delta == "auto" else delta
    if not auto_steps(params, schedule):
        return eta0, delta
    values, rows = head_values(head)
    squares = sum_squares(values)
    if not isfinite(squares):           # a first fit's X is checked by the kernel, after this
        raise ValueError("Input X contains NaN or infinity in its first rows, or values so large that "
                         "their squares overflow; remove or replace them, or scale the features.")
    if eta0 == "auto":
        s = params.get("intercept_scaling", 1.0)
        norm2 = float(params["fit_intercept"]) * s * s + squares / max(rows, 1)
        eta0 = 1.0 / sqrt(norm2) if norm2 > 0 else 1.0
    if delta == "auto":
        delta = sqrt(squares / len(values)) if squares > 0 else 1.0
    return eta0, delta


def schedule_offset(params):
    """The kernel's t0: the parameter, or learning_rate="optimal"'s (`optimal_steps`)."""
    if params.get("learning_rate") == "optimal":
        return optimal_steps(params)[1]
    return params.get("t0", 0.0)        # (model files before it: none)


def optimal_steps(params):
    """(eta0, t0) of learning_rate="optimal" for the checked parameters ``params``:
    scikit-learn's steps 1 / (alpha (optimal_init + t - 1)) as schedule="inv"'s eta0 /
    (t + t0), eta0 = 1 / alpha and t0 = optimal_init - 1, optimal_init by scikit-learn's
    heuristic (`_sklearn_names.optimal_init`) from the model's loss (its kernel's
    derivative; a multinomial model's, of the binary form)."""
    loss, alpha = kernel_loss(params["loss"]), params["alpha"]
    init = optimal_init(alpha, lambda p: loss_derivative(loss, p, 1.0, params["epsilon"]))
    return 1.0 / alpha, init - 1.0


def head_values(pieces):
    """(the stored values of the first AUTO_ROWS rows of the CSR pieces as one
    buffer, those rows' count): one piece's are a view, several pieces' are
    joined, so that rows in chunks give the same buffer, and sum, as whole.
    Pieces of float32 and float64 values (a Dask collection's blocks) are joined
    as float64, which `sum_squares` reads as the same figures."""
    parts, rows = [], 0
    for X in pieces:
        data, _, indptr = kernel_arrays(X)
        n = min(AUTO_ROWS - rows, len(indptr) - 1)
        parts.append(memoryview(data)[indptr[0]:indptr[n]])
        rows += n
        if rows == AUTO_ROWS:
            break
    if len(parts) == 1:
        return parts[0], rows
    if len({part.format for part in parts}) > 1:
        parts = [part if part.format == "d" else memoryview(array("d", part.tolist())) for part in parts]
    return memoryview(b"".join(parts)).cast(parts[0].format), rows


def run_passes(learner, X, target, sample_weight, batch_size, passes=1, rng=None, pause=None,
               after_pass=None, rows=None):
    """`passes` passes over the CSR rows X (shuffled by `rng` if given), `batch_size`
    rows per step; returns the summed progressive loss. `pause` (if given) is called
    between passes and where the kernel looks at signals (`Learner.fit_rows`);
    `after_pass` (if given) after each pass, with its index and its summed loss: a
    true value returned stops the passes (a stopping rule). `rows` (int64 indices,
    if given) are the rows the passes visit, in this order unless shuffled (the
    training rows of a validation split), X's others left out."""
    data, indices, indptr = kernel_arrays(X)
    n = X.shape[0]
    sw = None
    if sample_weight is not None:
        sw = as_float_array("sample_weight", sample_weight, n)
        if np.any(sw < 0):
            raise ValueError("sample_weight must be non-negative.")
    total = 0.0
    for i in range(passes):     # a call per pass (it reacts to Ctrl-C itself): X checked once
        if i and pause is not None:
            pause()
        loss = learner.fit_rows(data, indices, indptr, target, sw, pass_order(n, rows, rng), batch_size, pause)
        total += loss
        if after_pass is not None and after_pass(i, loss):
            break
    return total


def pass_order(n, rows, rng):
    """The rows a pass visits, in order: `rows` (int64 indices; None: all n rows),
    shuffled by `rng` if given, as ``rows[rng.permutation(len(rows))]`` shuffles them
    (``np.arange(n)`` for None): the same draws and the same order. A copy shuffled in
    place, without the permutation's index array and the gather through it; None
    where the rows are all n in order (the kernel needs no order then)."""
    if rng is None:
        return rows
    order = np.arange(n, dtype=np.int64) if rows is None else rows.astype(np.int64, copy=True)
    rng.shuffle(order)
    return order


def margins(learner, X):
    """<w_k, x> + b_k: (n,) for one output, (n, K) for K. X is a scipy CSR matrix or a
    LIBSVM reader's chunk (no scipy needed); columns beyond the model's width,
    features it never saw, weigh 0. Its CSR arrays are checked as training checks
    them, and a margin that is not finite raises `NonFiniteMargin` naming its row
    (`Learner.margins`)."""
    scores = learner.margins(*kernel_arrays(X), X.shape[1], averaged=learner.average > 0)
    return scores.ravel() if scores.shape[1] == 1 else scores


def model_coef(learner):
    """The weights the estimators read (coef_, predictions): the averaged iterate's
    where the learner keeps one (scikit-learn's meaning of ``average``), else the
    last iterate's; training continues from the last iterate either way."""
    return learner.coef(averaged=learner.average > 0)


def model_nonzeros(learner):
    """`model_coef`'s weights for reads of their values and non-zeros only (``coef_``
    after ``sparsify()``, ``n_nonzero_rows_``, ``group_norms_``): a calloc'd model's
    -0.0 weights, RDA's and FTRL's untouched features, left +0.0 and unwritten
    (`Learner.coef_zeros_unsigned`), so that a 2^28-feature model reads as the pages
    training touched."""
    return learner.coef_zeros_unsigned(averaged=learner.average > 0)


def model_intercept(learner):
    """The intercepts the estimators read (`model_coef`)."""
    return learner.averaged_intercept() if learner.average else learner.intercept()


def model_array(read, name, advice, doc, state="the model's state"):
    """The fitted attribute ``name`` of every estimator (``coef_``, ``intercept_``, a
    tagger's ``transitions_``, ...): the array (or CSR matrix) ``read(estimator)``,
    read-only. The model is the learner's state (a closed form of its sums, a ball's
    tree), which a write into the array could not reach: the write raises instead of
    being lost, and so does assigning the attribute, naming ``advice``. No copy is
    made here: ``read`` gives an array of its own or a snapshot nothing writes."""
    def get(self):
        return read_only(read(self))

    def refuse(self, value):
        raise AttributeError(f"{name} is read from {state} and cannot be set: {advice}.")
    return property(get, refuse, doc=doc)


def read_only(a):
    """The array (or CSR matrix) a, its writes refused."""
    for part in (a.data, a.indices, a.indptr) if hasattr(a, "indptr") else (a,):
        part.flags.writeable = False
    return a


def predictions(scores, classes):
    """What a model predicts from its margins ``scores`` ((n,) for one output, (n, K)
    for K): the values themselves for a regressor (``classes`` None); else, of the
    sorted ``classes``, the positive one where the margin is positive (two classes)
    or the one with the largest score. The estimators' predict and the stream
    model's (`fastprox.stream.model`) both give this."""
    if classes is None:
        return scores
    classes = np.asarray(classes)
    return classes[(scores > 0).astype(int) if scores.ndim == 1 else np.argmax(scores, axis=1)]


#: The losses whose classifiers give class probabilities (`probabilities`).
PROBA_LOSSES = tuple(loss.name for loss in LOSSES.values() if loss.proba)


def has_proba(loss):
    """Whether a classifier of this loss (scikit-learn's spellings too) gives class
    probabilities."""
    return kernel_loss(loss) in PROBA_LOSSES


def probabilities(scores, loss, multinomial):
    """Class probabilities from margins: softmax for a multinomial model; else the
    logistic (loss="log") or (clip(margin, -1, 1) + 1) / 2 ("modified_huber", as
    scikit-learn), one-vs-rest scores normalized to sum to one. Both links are
    scipy.special's formulas, written here: its import would triple the time
    `fastprox train --test` and `fastprox predict` take on a small file."""
    if multinomial:
        e = np.exp(scores - scores.max(axis=1, keepdims=True))
        return e / e.sum(axis=1, keepdims=True)
    if LOSSES[kernel_loss(loss)].proba == "logistic":
        z = np.exp(-np.abs(scores))     # the logistic without overflow, as scipy's expit
        prob = np.where(scores >= 0, 1.0 / (1.0 + z), z / (1.0 + z))
    else:
        prob = (np.clip(scores, -1, 1) + 1) / 2
    if prob.ndim == 1:
        return np.column_stack([1 - prob, prob])
    total = prob.sum(axis=1, keepdims=True)
    uniform = total[:, 0] == 0
    prob[uniform] = 1.0
    total[uniform] = prob.shape[1]
    return prob / total
