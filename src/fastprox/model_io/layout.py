"""The kernel's state rows as a model file stores them, per rule: the row fields
and the entry fields (`state_layout`, the table of `fastprox._kernels`), and the
fields the kernel derives from others (AdaGrad's steps, the normalized
schedule's factors). The file's checks read them (fastprox.model_io.checks), and
so does the mixing of learners (fastprox._mixing)."""
from .._numpy import np
from .._validation import GROUP_PENALTIES

def state_layout(spec, width):
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



def adagrad_steps(spec, G):
    """AdaGrad's steps eta0 / (delta + sqrt(G)), 0 where that is not positive, as the
    kernel computes them (`adagrad_step`)."""
    H = spec["delta"] + np.sqrt(G)
    return np.divide(spec["eta0"], H, out=np.zeros_like(H), where=H > 0)


def normalized_factors(spec, G, m):
    """The normalized schedule's step factors eta0 / (m sqrt(G)) where G > 0, else 0,
    as the kernel computes them; infinite (never equal to a stored finite value)
    where G > 0 with scale m = 0, which the kernel never writes."""
    H = m[:, None] * np.sqrt(G)
    with np.errstate(divide="ignore"):
        return np.where(G > 0, spec["eta0"] / H, 0.0)


