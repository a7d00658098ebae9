"""The model file format: what a file holds, its versions, the bounds a reader
keeps to (the package's modules write, read and check it as this says).

Why not pickle: a pickle runs code when loaded, ties the file to the class
layout of one version, and stores every weight of an l1 model, zeros
included. This format stores only the features the model has touched, names
its version, and is read without pickle: loading an untrusted file runs no
code.

Format, version 12
------------------
A NumPy ``.npz`` archive (a zip of ``.npy`` arrays, deflated but for
``state`` and ``rows``, whose float64 values and sorted indices deflate by under a
fifth and about two thirds at fifteen and twenty times the cost of storing them; no
object arrays), written to a temporary file next to the target and renamed over it,
so that readers never see half a file (fastprox._writes: a symbolic link's target is
replaced, the link kept; a device or a FIFO is written directly). The file name is used as given (no
``.npz`` is appended). Members:

``header``
    0-d unicode array holding a JSON object:

    - ``format``: ``"fastprox-model"``; ``version``: ``12``;
    - ``class``: ``"ProxClassifier"`` or ``"ProxRegressor"``;
    - ``params``: ``get_params()`` (``random_state`` must be None or an int;
      arrays such as ``groups`` become lists, a ``class_weight`` dict a list of
      [class, weight] pairs: JSON's keys are strings);
    - ``learner``: the kernel's own constructor arguments (``n_features``,
      ``n_outputs``, ``update``, ``schedule``, ``penalty``, ``loss``,
      ``alpha``, ``l1_ratio``, ``eta0``, ``t0`` (the schedule's offset: the
      parameter, or learning_rate="optimal"'s), ``delta``, ``rda_rho``,
      ``berhu_gamma``, ``epsilon``, ``fit_intercept``, ``intercept_scaling``
      (the intercept feature's value), ``ovr``, ``multinomial``, ``average`` (the first step averaged, 0: none); ``groups`` and ``group_weights`` are members of their
      own). The numbers may differ from ``params`` after a ``set_params``
      following the fit, and training continues with the kernel's; the
      model's kind may not: ``update``, ``schedule``, ``penalty``, ``loss``,
      ``fit_intercept``, ``groups``, ``group_weights`` and (K > 2 classes)
      ``multi_class`` are the kernel's, or the file is not written;
    - ``scalars``: the kernel's counters ``t``, ``n_ops``, ``since_rebase``,
      ``heap_size``, the scalar-FOBOS cumulants ``P``, ``Q``, the normalized
      schedule's ``N``, and ``SP``, ``SP_lo``: the averaged l2 rows' prefix sum of
      P (double-double; 0 for other models) (JSON floats are written as Python's
      shortest round-trip repr: exact);
    - ``fitted``: ``n_features_in_``, ``t_`` (the kernel's ``t``),
      ``n_iter_``, ``progressive_loss_``, ``sparse_coef`` (whether
      ``sparsify()`` was called) and ``hash_bits_``: the model's input
      transform, the hashing of X's ids into 2^hash_bits_ columns (null: none),
      which prediction applies (`fastprox predict` and the estimator's
      predict): it equals ``params.hash_bits``, and the model then has
      2^hash_bits_ features. Files written by ``fastprox train`` also hold
      ``progress_``, the stream's counters that ``train --initial-model``
      continues as one run would (`PROGRESS`: examples trained and their summed
      loss, the table's last line, the features read, the label
      statistics); other writers leave it out. Files of ``fastprox train`` on VW
      text, or crossing LIBSVM groups, also hold ``input_`` (`INPUT`), how the
      reader made the model's columns, which ``fastprox predict`` and ``train -i``
      apply: ``format`` (``"vw"`` or ``"libsvm"``), ``interactions`` (the terms
      crossed, each as ``--interactions`` spells it: namespaces' first characters
      such as ``"ab"``, or LIBSVM group ids joined by commas such as ``"0,1"``;
      VW's deduplication applied) and ``bits`` (VW text: its ``-b``, the model
      having 2^bits features; LIBSVM groups: each term's block of 2^bits crossed
      columns after the group file's features); VW text's also ``ignore`` or
      ``keep``, and ``ignore_linear``, where namespaces were selected (``--ignore``,
      ``--keep``, ``--ignore-linear``: strings of namespaces' first characters in
      byte order, ``\\xNN`` outside printable ASCII; absent, as in files written
      before, every namespace is read). Files of ``fastprox train`` on
      LIBSVM text also hold ``zero_based_`` (true or false): whether the training
      files' indices were read as starting at 0 (``--zero-based``, or decided by
      the files themselves), which ``fastprox predict`` and ``train -i`` apply to
      their files unless given ``--zero-based`` or ``--one-based``; it is left
      out where the files were read both ways, or for VW text (hashed names).

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
``bavg`` (float64, n_outputs) and ``avg_history`` (float64, r x 4; only for models with ``average``)
    The averaged iterate's sums of the intercepts, and the scalar-FOBOS cumulants'
    history since the rebase (Q, P and two Fenwick trees' nodes per step, the
    prefix sums the kernel keeps beside them rebuilt from P and Q on load; r is
    since_rebase + 1, or 0 where no penalty stamps a row or the rows keep the
    prefix sums of P, l2's): what continuing the average needs beside the state
    rows, whose fields then end with A (scalar schedules; under l2 the prefix sum
    of P at the row's stamp, SP and SP_lo) and each entry's S
    (`_registry.state_fields`).
``classes`` (classifier only)
    ``classes_``; strings are stored as a unicode array.
``feature_names`` (only when fitted on a DataFrame)
    ``feature_names_in_`` as a unicode array, one name a column (a model of
    ``grow_features`` or ``hash_bits`` whose names are those of fewer columns
    than its width keeps none).

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

Earlier versions load too. Version 11 differs from version 12 only in the
averaged scalar-FOBOS models whose rows keep a P stamp alone (l2; elastic net of
l1_ratio 0): their rows' A is the step of their stamp, and ``avg_history`` holds
since_rebase + 1 steps, where version 12 keeps in A the prefix sum of P over the
averaged steps at that step (SP, SP_lo; the scalars ``SP``, ``SP_lo`` now's) and
no history; loading sums the history's P into those prefix sums as the kernel
sums them (other files load with SP = SP_lo = 0).
Version 10 differs from version 11 only in having no
``intercept_scaling`` parameter and learner entry: such files load as models of
intercept_scaling = 1 (the intercept the weight of a constant feature of value 1).
Version 9 differs from version 10 only in having no
``t0`` parameter and learner entry: such files load as models of t0 = 0 (the
schedules without an offset). Version 8 differs from version 9 only in having no
``zero_based_`` entry: such files' LIBSVM indices are decided per file, as when
neither ``--zero-based`` nor ``--one-based`` is given (the first rows decide).
Version 7 differs from version 8 only in having no
``input_`` entry: such files load as models of their columns as given (no
interactions recorded; `fastprox predict` takes ``-q`` as given).
Version 6 differs from version 7 only in having no
``average`` parameter and learner entry and no ``bavg`` and ``avg_history`` members:
such files load as models without the averaged iterate.
Version 5 differs from version 6 only in having no
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

from .._kernels import SAVED
from .._registry import FLAT_MODEL

FORMAT = FLAT_MODEL
VERSION = 12
READS = (1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12)   # versions this fastprox reads (see the format's history above)

CLASS_NAMES = ("ProxClassifier", "ProxRegressor")


def estimator_classes():
    """name -> estimator class (imported on use: writing a file needs no scikit-learn)."""
    from ..linear_model import ProxClassifier, ProxRegressor
    return {cls.__name__: cls for cls in (ProxClassifier, ProxRegressor)}



# The header's entries and their JSON types (a number is an int or a float; bool is no int).
_INT, _NUMBER, _BOOL, _NAME = (int,), (int, float), (bool,), (str,)
LEARNER = dict(n_features=_INT, n_outputs=_INT, update=_NAME, schedule=_NAME, penalty=_NAME, loss=_NAME,
                step=_NAME, alpha=_NUMBER, l1_ratio=_NUMBER, eta0=_NUMBER, t0=_NUMBER, delta=_NUMBER,
                rda_rho=_NUMBER,
                berhu_gamma=_NUMBER, epsilon=_NUMBER, fit_intercept=_BOOL, ovr=_BOOL, multinomial=_BOOL,
                average=_INT, intercept_scaling=_NUMBER)
SCALARS = dict(t=_INT, n_ops=_INT, since_rebase=_INT, heap_size=_INT, P=_NUMBER, Q=_NUMBER, N=_NUMBER,
               SP=_NUMBER, SP_lo=_NUMBER)
FITTED = dict(n_features_in_=_INT, t_=_INT, n_iter_=_INT, progressive_loss_=_NUMBER, sparse_coef=_BOOL,
               hash_bits_=(type(None), int))
#: ``fitted.progress_`` (optional): the progressive table's counters (its last line's too) and
#: the label statistics (``labels``: [[label, count], ...] of a classifier, [n, mean, m2] of a regressor).
PROGRESS = dict(examples=_INT, loss_sum=_NUMBER, last_examples=_INT, last_loss_sum=_NUMBER, features=_INT,
                labels=(list,))
#: ``fitted.progress_``'s optional counters: the examples' importance weights summed (VW's
#: weighted example sum, which the means divide by), and at the table's last line; a file
#: without them (written before) takes the examples' counts (`check_progress`).
PROGRESS_WEIGHTS = dict(weight_sum=_NUMBER, last_weight_sum=_NUMBER)
#: ``fitted.input_`` (optional, version 8): how the reader made the columns (VW text's
#: hashing, the interactions crossed), for predict and train -i to read as training did;
#: VW text's may also hold ``ignore`` or ``keep``, and ``ignore_linear`` (strings:
#: fastprox.vw.reader.SELECTIONS, the namespaces selected; none in files written before).
INPUT = dict(format=_NAME, interactions=(list,), bits=_INT)
#: ``fitted.zero_based_`` (optional, version 9): whether the LIBSVM training files'
#: indices started at 0, for predict and train -i to read their files as training did.
ZERO_BASED = _BOOL
PARAMS = dict(loss=_NAME, penalty=_NAME + (type(None),), alpha=_NUMBER, l1_ratio=_NUMBER, update=_NAME,
               schedule=_NAME + (type(None),), step=_NAME + (type(None),),
               eta0=_NUMBER + _NAME, t0=_NUMBER, delta=_NUMBER + _NAME, rda_rho=_NUMBER, berhu_gamma=_NUMBER,
               batch_size=_INT, fit_intercept=_BOOL, intercept_scaling=_NUMBER, max_iter=_INT, shuffle=_BOOL,
               random_state=(type(None), int), warm_start=_BOOL, epsilon=_NUMBER,
               groups=(type(None), list), group_weights=(type(None), list), multi_class=_NAME,
               grow_features=_BOOL, verbose=_INT + _BOOL, class_weight=(type(None), str, list),
               hash_bits=(type(None), int), average=_BOOL + _INT, tol=(type(None),) + _NUMBER,
               n_iter_no_change=_INT, early_stopping=_BOOL, validation_fraction=_NUMBER,
               learning_rate=(type(None),) + _NAME, power_t=_NUMBER, n_jobs=(type(None), int))
# sparse_group's skipped proxes do not compose: reading a group replays one per step
# since its stamp. Files written now have none pending; earlier ones may have some,
# a bounded number (a hostile stamp far behind t would otherwise hang the reader).
MAX_REPLAYS = 1 << 24
HEADER = ("format", "version", "class", "params", "learner", "scalars", "fitted")
KIND_NAMES = {int: "an integer", float: "a number", bool: "true or false", str: "a string",
               list: "a list", type(None): "null"}
LEARNER_ARGS = tuple(LEARNER)
# Kernel arrays with their own encoding (the writer's and the loader's); every other one is stored whole.
SPECIAL = ("state", "heap_items", "heap_keys", "heap_pos")
# Members a file may hold (as NAME.npy); heap_pos is rebuilt, never stored.
MEMBERS = ("header", "rows", "groups", "group_weights", "classes", "feature_names", "bavg", "avg_history") + tuple(
    name for name in SAVED if name != "heap_pos")

# Bounds on what a file declares before its header says what it holds.
HEADER_CHARS = 1 << 20          # JSON characters of a header, besides params' lists (below)
LIST_BYTES = 16                 # header bytes allowed per byte of the groups and group_weights
                                # members (a JSON number takes at most 26 characters, 104 bytes
                                # in UTF-32, per 8-byte value)
DIRECTORY_BYTES = 1 << 16       # the zip's central directory (a dozen entries of ~60 bytes)
NPY_HEADER_BYTES = 4096         # a member's .npy header (the writer's take 128 bytes)
NAME_CHARS = 256                # characters per class or feature name, beyond TEXT_BYTES in all
TEXT_BYTES = 1 << 24
# Counters: the kernel's C long long, and steps below 2^53 (its stamps hold step counts in doubles).
LONG_MAX, INT_MAX, MAX_STEPS = 2**63 - 1, 2**31 - 1, 2**53
# Kernel values per group and per output besides its state (stamps, norms, marks, intercepts,
# margins, gradients, scratch, the members read), which its own memory check does not count.
VALUES_PER_GROUP = VALUES_PER_OUTPUT = 16
BERHU_L1, BERHU_L2 = 0.0, 1.0  # Berhu entries' phases (`_kernel/rules/berhu.pxd`); FRESH never outlasts a step
