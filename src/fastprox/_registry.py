"""The table of rules: every (update, schedule, penalty) fastprox computes exactly
and lazily, with how (docs/contract.md gives the mathematics).

Everything that lists combinations derives from this one table: the parameter
checks and their errors (`_validation`), the kernel's setup (which penalties are
separable or grouped, which fast row kernel serves a rule: `_kernels.Learner`),
the tests' parametrization, and the README's table (a test checks that the README
shows `markdown_table()`). Penalty families are attributes here, never the order
of a list. Pure Python without NumPy: the command line imports it at start-up.
"""
from collections import namedtuple

UPDATES = ("fobos", "rda", "ftrl")
SCHEDULES = ("constant", "invsqrt", "inv", "adagrad", "normalized")
SCALAR_SCHEDULES = ("constant", "invsqrt", "inv")       # one eta_t for every coordinate
#: The forward step of fobos: the linearized gradient step, or the exact flow along
#: the row (importance-invariant, every schedule, one row per step, no multinomial).
STEPS = ("gradient", "invariant")

Penalty = namedtuple("Penalty", "name family l1_share")
Penalty.__doc__ = """A penalty: its `family` says how its prox acts and composes:
"separable" (coordinate-wise proxes whose successive applications compose into a
closed form: none, l1, l2, elasticnet), "berhu" (coordinate-wise, but its branch
changes along the way) or "group" (a prox per block of W). `l1_share` is the l1
part of the threshold (rho1): a number, or "l1_ratio" for the elastic nets."""

PENALTIES = {p.name: p for p in (
    Penalty("none", "separable", 0.0),
    Penalty("l1", "separable", 1.0),
    Penalty("l2", "separable", 0.0),
    Penalty("elasticnet", "separable", "l1_ratio"),
    Penalty("berhu", "berhu", 1.0),
    Penalty("l1_l2", "group", 0.0),
    Penalty("l1_linf", "group", 0.0),
    Penalty("sparse_group", "group", "l1_ratio"),
    Penalty("squared_group", "group", 0.0),
)}

Rule = namedtuple("Rule", "update schedule penalty layout catch_up fast_rows")
Rule.__doc__ = """One supported combination: the state each feature keeps (`layout`),
how an untouched feature is caught up (`catch_up`), and the hand-fused kernel that
serves its single rows where one exists (`fast_rows`: "fobos", "adagrad", "normalized", "dual",
"rows" (l1_l2 / l1_linf over W's rows, without user groups or weights), or None for
the general step)."""

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

_LAYOUT = {
    ("fobos", "scalar", "separable"): "per feature: P stamp, Q stamp (as the penalty needs); per entry: w",
    ("fobos", "scalar", "berhu"): "per entry: w, phase, stamp; Berhu's heap",
    ("fobos", "adagrad", "separable"): "per feature: last step; per entry: w, G, eta",
    ("fobos", "adagrad", "berhu"): "per feature: last step; per entry: w, G, eta",
    ("fobos", "normalized", "separable"): "per feature: cumulant stamp (l1 only), scale m; per entry: "
                                          "w, G, step factor eta0 / (m sqrt(G)) (l1 only)",
    ("rda", "invsqrt", "separable"): "per entry: s (gradient sum)",
    ("rda", "adagrad", "separable"): "per entry: s, G",
    ("ftrl", "adagrad", "separable"): "per entry: z, n (and sqrt(n) up to 2^19 weights)",
    ("fobos", "scalar", "group"): "per entry: w; per group: stamp (and norm for squared_group)",
    ("rda", "invsqrt", "group"): "per entry: s; per group: the step's weights cache",
    ("rda", "adagrad", "group"): "per entry: s, G; per group: the step's weights cache",
}


def _kind(update, schedule):
    """How a rule's steps are indexed: "scalar" (one eta_t), "adagrad" (fobos with
    per-coordinate steps), "normalized" (fobos with per-coordinate, scale-free
    steps), "dual" (rda, ftrl: weights are closed forms)."""
    if update != "fobos":
        return "dual"
    return schedule if schedule in ("adagrad", "normalized") else "scalar"


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
    layout = _LAYOUT.get((update, schedule, family)) or _LAYOUT[(update, kind, family)]
    fast = None
    if family == "separable":
        fast = {"scalar": "fobos", "adagrad": "adagrad", "dual": "dual", "normalized": "normalized"}[kind]
    elif penalty in ("l1_l2", "l1_linf") and kind == "scalar":
        fast = "rows"
    return Rule(update, schedule, penalty, layout, _CATCH_UP[key], fast)


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
                            "README's table of rules gives their penalties)."))
    penalties = tuple(r.penalty for r in RULES if r.update == update and r.schedule == schedule)
    pairs = [f"update={r.update!r} with schedule={r.schedule!r}" for r in RULES if r.penalty == penalty]
    raise ValueError(f"penalty={penalty!r} has no exact lazy form under update={update!r} with "
                     f"schedule={schedule!r} (docs/contract.md says why); it has one with "
                     f"{', '.join(pairs)}; or use penalty in {penalties}.")


def defaults_for(update, penalty, batch_size, multinomial):
    """(schedule, step) for schedule=None and step=None: the data-free defaults.

    The normalized schedule with the invariant step (Vowpal Wabbit's update) where
    the rule takes them: fobos, penalty "none" or "l1", one row per step, a single
    output or one-vs-rest; elsewhere AdaGrad and, under fobos with one row per step
    and no multinomial loss, still the invariant step. Neither choice reads the
    data, so a partial_fit stream trains what one fit pass over its rows trains.
    """
    single_rows = batch_size == 1 and not multinomial
    normalized = update == "fobos" and penalty in ("none", "l1") and single_rows
    step = "invariant" if update == "fobos" and single_rows else "gradient"
    return ("normalized" if normalized else "adagrad"), step


def penalties_of(family):
    """The names of the penalties of one family, in the table's order."""
    return tuple(p.name for p in PENALTIES.values() if p.family == family)


def markdown_table():
    """The README's table of what is supported: a row per (update, catch-up), with
    the schedules and penalties it covers."""
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
