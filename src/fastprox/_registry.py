"""The registry: every name fastprox computes with, written once, as scikit-learn's
`_loss` module generates its loss kernels from one table (`class_list`).

- `LOSSES`: each loss's kernel code (`_kernel/losses/losses.pxd`'s enum), its kind ("binary" or
  "regression"), whether it has a multinomial form, its probability link, and its
  value (the command line's reports).
- `PENALTIES` (kernel code, family, l1 share), `UPDATES`, `SCHEDULES` (kernel code,
  how its steps are indexed), `STEPS`.
- `RULES`: every (update, schedule, penalty) fastprox computes exactly and lazily,
  with how (docs/contract.md gives the mathematics).
- `state_fields`: the state a rule keeps per feature, as named row fields and entry
  fields (the kernel's `_state.set_layout`, the model files' members).
- `MODEL_FILES`: the two kinds of model file, by their header's format: what each
  holds, and what writes and reads it (each reader's error on a file of the other kind).

Everything that lists these derives from here: the kernel's name-to-code maps
(`codes`), the parameter checks and their errors (`_validation`), the command line's
loss values (`fastprox.stream.losses`), the model files' layouts and the mixing of
learners (`fastprox.model_io.layout`, `_mixing`), the tests' parametrization, and the
manual's table of rules (tests/test_docs.py checks that docs/guide/parameters.md shows
`markdown_table()`).
tests/test_registry.py checks the `.pxd` enums and `set_layout`'s widths against it.
Families and kinds are attributes here, never the order of a list. Pure Python
without NumPy: the command line imports it at start-up.
"""
from collections import namedtuple


def _relu(x):
    """max(x, 0), elementwise for arrays: x / 2 + |x| / 2 (halved first: x + |x|
    overflows from 2^1023 on), with arithmetic and ``abs`` only."""
    return x / 2 + abs(x) / 2


# The losses' values, in the margin z = y p of a binary loss (y = +-1) or the residual
# r = p - y of a regression loss, with arithmetic, ``abs`` and the ``exp`` and ``log1p``
# of a module given as ``m``: one definition serves Python floats (m = math: train,
# which imports no NumPy) and NumPy arrays (m = numpy: predict). What the kernel's
# loss_value gives (`_kernel/losses/losses.pxd`).
def _log(z, epsilon, m):
    return _relu(-z) + m.log1p(m.exp(-abs(z)))          # log(1 + e^-z) without overflow


def _hinge(z, epsilon, m):
    return _relu(1 - z)


def _squared_hinge(z, epsilon, m):
    u = _relu(1 - z)
    return u * u


def _modified_huber(z, epsilon, m):
    u = _relu(1 - z)
    beyond = _relu(u - 2)                               # (its square would overflow from 1.3e154 on)
    inside = u - beyond                                 # min(u, 2), exactly u up to 2
    return inside * inside + 4 * beyond                 # (1 - z)^2 for z >= -1, -4 z below, no cancellation


def _perceptron(z, epsilon, m):
    return _relu(-z)


def _squared(r, epsilon, m):
    r = abs(r)
    return r * r / 2


def _huber(r, epsilon, m):
    r = abs(r)
    beyond = _relu(r - epsilon)
    inside = r - beyond                                 # min(r, epsilon), exactly r up to epsilon
    return inside * inside / 2 + epsilon * beyond       # r^2 / 2 inside epsilon, linear beyond, no cancellation


def _epsilon_insensitive(r, epsilon, m):
    return _relu(abs(r) - epsilon)


def _squared_epsilon_insensitive(r, epsilon, m):
    u = _relu(abs(r) - epsilon)
    return u * u


Loss = namedtuple("Loss", "name code kind multinomial proba value invariant", defaults=(True,))
Loss.__doc__ = """A loss: its kernel `code` (`_kernel/losses/losses.pxd`), its `kind` ("binary": of the
margin y p, y = +-1; "regression": of the residual p - y), whether it has a
`multinomial` form over K scores (softmax, Crammer-Singer), its probability link
(`proba`: "logistic", "modified_huber" as scikit-learn, or None), its
`value(x, epsilon, m)` (m: the math module or NumPy) and whether the importance-invariant
step takes it (`invariant`: its flow has a sigma in `_kernel/losses/invariant.pxd`)."""

LOSSES = {loss.name: loss for loss in (
    Loss("log", 0, "binary", True, "logistic", _log),
    Loss("hinge", 1, "binary", True, None, _hinge),
    Loss("squared_hinge", 2, "binary", False, None, _squared_hinge),
    Loss("modified_huber", 3, "binary", False, "modified_huber", _modified_huber),
    Loss("squared", 4, "regression", False, None, _squared),
    Loss("huber", 5, "regression", False, None, _huber),
    Loss("epsilon_insensitive", 6, "regression", False, None, _epsilon_insensitive),
    # scikit-learn's perceptron: max(0, -z), derivative -y at z <= 0 (so that w = 0 moves).
    # The invariant step's flow stops at z = 0, where every model starts: it would never move.
    Loss("perceptron", 7, "binary", False, None, _perceptron, invariant=False),
    # scikit-learn's SGDRegressor loss: [|r| - epsilon]_+^2 (no 1/2, as scikit-learn's).
    Loss("squared_epsilon_insensitive", 8, "regression", False, None, _squared_epsilon_insensitive),
)}

Update = namedtuple("Update", "name code")
UPDATES = {u.name: u for u in (Update("fobos", 0), Update("rda", 1), Update("ftrl", 2))}

Schedule = namedtuple("Schedule", "name code kind")
Schedule.__doc__ = """A schedule: its kernel `code` (`_kernel/base/types.pxd`) and `kind`, how its steps
are indexed: "scalar" (one eta_t for every coordinate), "adagrad" (per coordinate),
"normalized" (per coordinate and scale-free)."""
SCHEDULES = {s.name: s for s in (
    Schedule("constant", 0, "scalar"),
    Schedule("invsqrt", 1, "scalar"),
    Schedule("inv", 2, "scalar"),
    Schedule("adagrad", 3, "adagrad"),
    Schedule("normalized", 4, "normalized"),
)}
#: The forward step of fobos: the linearized gradient step, or the exact flow along
#: the row (importance-invariant, every schedule, one row per step, no multinomial).
STEPS = ("gradient", "invariant")

Penalty = namedtuple("Penalty", "name code family l1_share")
Penalty.__doc__ = """A penalty: its kernel `code` (`_kernel/base/types.pxd`); its `family` says how its
prox acts and composes: "separable" (coordinate-wise proxes whose successive
applications compose into a closed form: none, l1, l2, elasticnet), "berhu"
(coordinate-wise, but its branch changes along the way) or "group" (a prox per block
of W). `l1_share` is the l1 part of the threshold (rho1): a number, or "l1_ratio" for
the elastic nets."""

PENALTIES = {p.name: p for p in (
    Penalty("none", 0, "separable", 0.0),
    Penalty("l1", 1, "separable", 1.0),
    Penalty("l2", 2, "separable", 0.0),
    Penalty("elasticnet", 3, "separable", "l1_ratio"),
    Penalty("berhu", 4, "berhu", 1.0),
    Penalty("l1_l2", 5, "group", 0.0),
    Penalty("l1_linf", 6, "group", 0.0),
    Penalty("sparse_group", 7, "group", "l1_ratio"),
    Penalty("squared_group", 8, "group", 0.0),
)}


def codes(table):
    """{name: kernel code} of a table (LOSSES, UPDATES, SCHEDULES, PENALTIES)."""
    return {name: entry.code for name, entry in table.items()}


def losses_of(kind, multinomial=False, invariant=False):
    """The names of the losses of one kind ("binary", "regression"), those with a
    multinomial form only if asked, those the invariant step takes only if asked, in
    the table's order."""
    return tuple(loss.name for loss in LOSSES.values() if loss.kind == kind and (loss.multinomial or not multinomial)
                 and (loss.invariant or not invariant))


def l1_share(penalty, l1_ratio):
    """The l1 part of a penalty's threshold (rho1) for this l1_ratio."""
    share = PENALTIES[penalty].l1_share
    return l1_ratio if share == "l1_ratio" else share


def state_fields(update, schedule, penalty, *, penalized=True, l1_share=0.0, ftrl_roots=True, average=False):
    """(row fields, entry fields): the state a rule keeps per feature, as the kernel
    lays it out (`_state.set_layout`): a feature's row is its row fields, then K
    entries of the entry fields. ``penalized``: alpha > 0 with a penalty (the stamps
    and step factors only a penalty's catch-up reads); ``l1_share``: the penalty's
    (`l1_share`); ``ftrl_roots``: FTRL keeps sqrt(n) (d K <= 2^19); ``average``: the
    averaged iterate is kept (`averaging`): each entry's running sum of its iterates
    S, last, and under a scalar or the normalized schedule the step A the row's sums
    are current at (last, but before the normalized schedule's scale m, which stays
    its row's last field); under l2 (a P stamp alone) the prefix sum of P over the
    averaged steps at that step instead, in double-double (SP, SP_lo).

    w: a weight; P, Q: the stamps of the scalar-FOBOS shrink and threshold cumulants;
    last: AdaGrad's last step, G its sum of squared gradients, eta its frozen step;
    R0: the normalized schedule's stamp of its cumulant, m a feature's scale, c its
    step factor; phase, stamp: Berhu's branch and its stamp; s: RDA's gradient sum;
    z, n, root: FTRL's sums and sqrt(n)."""
    row, entry = _state_fields(update, schedule, penalty, penalized, l1_share, ftrl_roots)
    if not average:
        return row, entry
    kind = _kind(update, schedule)
    if kind == "normalized":
        row = row[:-1] + ("A",) + row[-1:]
    elif kind == "scalar" and row == ("P",):      # (l2's: A the prefix sum of P, `Layout.avg_prefix`)
        row = row + ("SP", "SP_lo")
    elif kind in ("scalar", "dual"):
        row = row + ("A",)
    return row, entry + ("S",)


def _state_fields(update, schedule, penalty, penalized, l1_share, ftrl_roots):
    """`state_fields` without the averaged iterate's fields."""
    family = PENALTIES[penalty].family
    if family == "group":
        return (), ("w",) if update == "fobos" else ("s", "G") if schedule == "adagrad" else ("s",)
    if update == "fobos" and schedule == "adagrad":
        return ("last",), ("w", "G", "eta")
    if update == "fobos" and schedule == "normalized":
        return (("R0", "m"), ("w", "G", "c")) if penalized else (("m",), ("w", "G"))
    if update == "fobos" and family == "berhu":
        return (), ("w", "phase", "stamp")
    if update == "fobos":
        return ((("P",) if penalized and l1_share < 1 else ()) + (("Q",) if penalized and l1_share > 0 else ()),
                ("w",))
    if update == "rda":
        return (), ("s", "G") if schedule == "adagrad" else ("s",)
    return (), ("z", "n", "root") if ftrl_roots else ("z", "n")


Rule = namedtuple("Rule", "update schedule penalty catch_up fast_rows average")
Rule.__doc__ = """One supported combination: how an untouched feature is caught up
(`catch_up`), and the hand-fused kernel that serves its single rows where one exists
(`fast_rows`: "fobos", "adagrad", "normalized", "dual", "rows" (l1_l2 / l1_linf over W's
rows, without user groups or weights), or None for the general step); how the sum of
an untouched feature's skipped iterates is added in closed form for the averaged
iterate (`average`, docs/contract.md's "Averaged iterate"), None where it is not
kept. The state it keeps: `state_fields`."""

_CATCH_UP = {
    ("fobos", "scalar", "separable"): "one soft-threshold and shrink from two rebased cumulants "
                                      "(threshold sum, shrink product)",
    ("fobos", "scalar", "berhu"): "an indexed heap of the steps at which weights leave the l2 branch, "
                                  "then summed thresholds",
    ("fobos", "adagrad", "separable"): "closed form over the frozen per-coordinate step",
    ("fobos", "adagrad", "berhu"): "closed form over the frozen per-coordinate step",
    ("fobos", "normalized", "separable"): "one soft-threshold by the frozen step factor times a "
                                          "difference of the rebased cumulant sum sqrt(t / N_t)",
    ("rda", "dual", "separable"): "none needed: a weight is a closed form of its gradient sum",
    ("ftrl", "dual", "separable"): "none needed: a closed form of `(z, n)`",
    ("fobos", "scalar", "group"): "one group prox with the summed threshold, times the group's weight "
                                  "(`squared_group`: the summed shared threshold τ)",
    ("fobos", "scalar", "sparse_group"): "the skipped proxes replayed on the block (they do not compose)",
    ("rda", "dual", "group"): "none needed: a block's weights are a closed form of its gradient sums",
}


_AVERAGE = {
    ("fobos", "scalar", "separable"): "the skipped iterates' sum from prefix sums of the cumulants since "
                                      "the rebase (P, P Q), to the step where the soft threshold reaches 0",
    ("fobos", "adagrad", "separable"): "geometric (l2) or arithmetic (l1) series over the frozen step, "
                                       "to the step where the weight reaches 0",
    ("fobos", "normalized", "separable"): "the weight's frozen step factor times a sum of the cumulant R "
                                          "since the rebase, to the step where the soft threshold reaches 0",
    ("rda", "dual", "separable"): "an arithmetic series: with AdaGrad's beta frozen, the weight's l1 "
                                  "threshold T alpha grows by alpha a step, to where it reaches |s|",
    ("ftrl", "dual", "separable"): "an arithmetic series: with beta frozen, the weight's l1 threshold "
                                   "T alpha grows by alpha a step, to where it reaches |z|",
}


def _kind(update, schedule):
    """How a rule's steps are indexed: "scalar" (one eta_t), "adagrad" (fobos with
    per-coordinate steps), "normalized" (fobos with per-coordinate, scale-free
    steps), "dual" (rda, ftrl: weights are closed forms)."""
    return SCHEDULES[schedule].kind if update == "fobos" else "dual"


def _rule(update, schedule, penalty):
    """The Rule of a combination, or None where it has no exact lazy form."""
    family = PENALTIES[penalty].family
    kind = _kind(update, schedule)
    if update == "rda" and schedule not in ("invsqrt", "adagrad"):
        return None         # rda needs the schedule's proximal weight beta_t
    if update == "ftrl" and schedule != "adagrad":
        return None         # ftrl's steps are per-coordinate by construction
    if family == "berhu" and update != "fobos":
        return None         # no closed form of its weights
    if schedule == "normalized" and (update != "fobos" or penalty not in ("none", "l1")):
        return None         # defined for fobos only; l2's shrink factors have no global cumulant
    if family == "group" and (kind == "adagrad" or update == "ftrl"
                              or (update == "rda" and penalty == "squared_group")):
        return None         # the skipped proxes do not compose; squared_group couples all groups
    key = (update, kind, "sparse_group" if penalty == "sparse_group" and update == "fobos" else family)
    fast = None
    if family == "separable":
        fast = {"scalar": "fobos", "adagrad": "adagrad", "dual": "dual", "normalized": "normalized"}[kind]
    elif penalty in ("l1_l2", "l1_linf") and kind == "scalar":
        fast = "rows"
    # the dual rules' weights are closed forms of T: summable where beta is frozen (AdaGrad's)
    # and the threshold linear in T (l1 or none; l2's denominator grows with T)
    averaged = update == "fobos" or (schedule == "adagrad" and penalty in ("none", "l1"))
    return Rule(update, schedule, penalty, _CATCH_UP[key], fast, _AVERAGE.get(key) if averaged else None)


RULES = tuple(r for r in (_rule(u, s, p) for u in UPDATES for s in SCHEDULES for p in PENALTIES) if r)
_BY_KEY = {(r.update, r.schedule, r.penalty): r for r in RULES}


def rule(update, schedule, penalty):
    """The Rule of a supported combination; ValueError naming what is supported otherwise."""
    found = _BY_KEY.get((update, schedule, penalty))
    if found is not None:
        return found
    schedules = tuple(s for s in SCHEDULES if any(r.update == update and r.schedule == s for r in RULES))
    if schedule not in schedules:
        others = tuple(u for u in UPDATES if (u, schedule, penalty) in _BY_KEY)
        hosts = tuple(u for u in UPDATES if any(r.update == u and r.schedule == schedule for r in RULES))
        raise ValueError(f"update={update!r} is not defined with schedule={schedule!r}; "
                         f"with {update!r} use schedule in {schedules}"
                         + (f", or update in {others} with schedule={schedule!r}." if others else
                            f"; schedule={schedule!r} is defined for update in {hosts} (the "
                            "manual's table of rules, docs/guide/parameters.md, gives their penalties)."))
    penalties = tuple(r.penalty for r in RULES if r.update == update and r.schedule == schedule)
    pairs = [f"update={r.update!r} with schedule={r.schedule!r}" for r in RULES if r.penalty == penalty]
    raise ValueError(f"penalty={penalty!r} has no exact lazy form under update={update!r} with "
                     f"schedule={schedule!r} (docs/contract.md says why); it has one with "
                     f"{', '.join(pairs)}; or use penalty in {penalties}.")


def averaging(update, schedule, penalty, schedules=None):
    """The Rule of a combination whose averaged iterate is kept exactly and lazily;
    ValueError naming those that are otherwise (or `rule`'s, if it has no rule), under
    the caller's ``schedules`` (None: all; a learner that refuses some names only the
    others), led by the changes of one parameter that keep it (`_one_change`): the
    averaged perceptron, ``SequenceTagger(loss="perceptron", average=True)``, asked
    under the tagger's default rda + l2, is one ``penalty`` away."""
    found = rule(update, schedule, penalty)
    if found.average is not None:
        return found
    allowed = tuple(SCHEDULES if schedules is None else schedules)
    kept = {}               # (update, its penalties) -> the schedules that keep them
    for u in UPDATES:
        for s in allowed:
            penalties = tuple(r.penalty for r in RULES if (r.update, r.schedule) == (u, s) and r.average)
            if penalties:
                kept.setdefault((u, penalties), []).append(s)
    nearest = _one_change(dict(update=update, schedule=schedule, penalty=penalty),
                          [r for r in RULES if r.average and r.schedule in allowed])
    raise ValueError(f"average has no exact lazy form under update={update!r}, schedule={schedule!r}, "
                     f"penalty={penalty!r}; " + (f"one change keeps it: {nearest}; " if nearest else "")
                     + "the rules that keep it: " + "; ".join(
                         f"update={u!r}, schedule in {tuple(s)} and penalty in {p}" for (u, p), s in kept.items())
                     + " (docs/contract.md, 'Averaged iterate'); or turn average off.")


def _one_change(given, rules):
    """The values of one parameter of ``given`` (update, schedule, penalty) that make it
    one of ``rules``, the others as given: "penalty in ('none', 'l1') or update='fobos'"
    ('' when no one change does)."""
    changes = {}
    for r in rules:
        other = {name: getattr(r, name) for name in given}
        differ = [name for name in given if other[name] != given[name]]
        if len(differ) == 1:
            changes.setdefault(differ[0], []).append(other[differ[0]])
    return " or ".join(f"{name}={values[0]!r}" if len(values) == 1 else f"{name} in {tuple(values)}"
                       for name, values in changes.items())


def defaults_for(update, penalty, batch_size, multinomial):
    """(schedule, step) for schedule=None and step=None: the data-free defaults.

    The normalized schedule with the invariant step (Vowpal Wabbit's update) where
    the rule takes them: fobos, penalty "none" or "l1", one row per step, a single
    output or one-vs-rest; elsewhere AdaGrad, or 1/sqrt(t) where the penalty has no
    exact lazy form under AdaGrad (the group penalties under fobos), and, under fobos
    with one row per step and no multinomial loss, still the invariant step. Neither
    choice reads the data, so a partial_fit stream trains what one fit pass over its
    rows trains.
    """
    single_rows = batch_size == 1 and not multinomial
    normalized = update == "fobos" and penalty in ("none", "l1") and single_rows
    step = "invariant" if update == "fobos" and single_rows else "gradient"
    schedule = "normalized" if normalized else "adagrad"
    if (update, schedule, penalty) not in _BY_KEY and (update, "invsqrt", penalty) in _BY_KEY:
        schedule = "invsqrt"
    return schedule, step


def takes_offset(update, schedule):
    """Whether a rule's steps take the offset t0 of the scalar schedules, eta0 / sqrt(t +
    t0) and eta0 / (t + t0) (constant's ignore it): fobos's. The dual rules' weights
    read sqrt(t) / eta0 in closed forms the offset is not defined for; AdaGrad's and the
    normalized schedule's steps have no t to offset."""
    return update == "fobos" and SCHEDULES[schedule].kind == "scalar"


def penalties_of(family):
    """The names of the penalties of one family, in the table's order."""
    return tuple(p.name for p in PENALTIES.values() if p.family == family)


def markdown_table():
    """The manual's table of what is supported (docs/guide/parameters.md): a row per
    (update, catch-up), with the schedules and penalties it covers."""
    rows = {}
    for r in RULES:
        key = (r.update, r.catch_up)
        schedules, penalties = rows.setdefault(key, ([], []))
        if r.schedule not in schedules:
            schedules.append(r.schedule)
        if r.penalty not in penalties:
            penalties.append(r.penalty)
    lines = ["| `update` | `schedule` | `penalty` | lazy catch-up of an untouched feature |",
             "|---|---|---|---|"]
    for (update, catch_up), (schedules, penalties) in rows.items():
        lines.append(f"| `{update}` | {', '.join(f'`{s}`' for s in schedules)} | "
                     f"{', '.join(f'`{p}`' for p in penalties)} | {catch_up} |")
    return "\n".join(lines)


ModelFile = namedtuple("ModelFile", "format classes written_by read_by")
#: The model files fastprox writes: the flat estimators' (fastprox.model_io) and the
#: structured ones' (fastprox.structured.model_file), by their header's ``format``.
MODEL_FILES = {m.format: m for m in (
    ModelFile("fastprox-model", ("ProxClassifier", "ProxRegressor"), "fastprox train or save_model",
              "fastprox predict, or fastprox.load_model"),
    ModelFile("fastprox-structured-model", ("SequenceTagger", "DependencyParser"),
              "fastprox tag train or parse train", "fastprox tag predict or parse predict, or "
              "fastprox.structured.tagger.load_tagger or parser.load_parser"),
)}
FLAT_MODEL, STRUCTURED_MODEL = MODEL_FILES


class OtherModelFile(ValueError):
    """A model file of the other kind than a reader reads (`other_model_file`);
    ``format``: the file's (fastprox info describes either)."""

    def __init__(self, message, format):
        super().__init__(message)
        self.format = format

    def at(self, path):
        """The same error naming the file ``path``."""
        return OtherModelFile(f"{path}: {self}", self.format)


def other_model_file(header, wanted):
    """The OtherModelFile for a reader of ``wanted`` model files (a format of
    `MODEL_FILES`) given a file whose ``header`` (its JSON object) says it is of the
    other kind, naming what the file holds and what reads it; None where it does not."""
    found = header.get("format") if isinstance(header, dict) else None
    if found not in MODEL_FILES or found == wanted:
        return None
    f, w = MODEL_FILES[found], MODEL_FILES[wanted]
    held = header.get("class") if header.get("class") in f.classes else " or ".join(f.classes)
    return OtherModelFile(f"holds a {held} ({f.written_by}), not a {' or '.join(w.classes)}: read it "
                          f"with {f.read_by}", found)
