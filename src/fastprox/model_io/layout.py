"""The kernel's state rows as a model file stores them, per rule: the row fields
and the entry fields (`state_layout`, the registry's `state_fields`), and the
fields the kernel derives from others (AdaGrad's steps, the normalized
schedule's factors). The file's checks read them (fastprox.model_io.checks), and
so does the mixing of learners (fastprox._mixing)."""
from .._numpy import np
from .._registry import l1_share, state_fields


def state_layout(spec, width):
    """(row fields, entry fields) of the kernel's state rows for these arguments
    (`_registry.state_fields`): the variant of the rule whose rows are ``width``
    wide, the choices a kernel makes at run time (stamps and step factors only
    under a penalty, FTRL's roots up to 2^19 entries) read from the width, as a
    file of an earlier version may have made them otherwise (version 4's normalized
    rows without a penalty kept the l1 layout). Widths that no variant has get
    the penalized layout, which the checks then refuse."""
    rule = (spec["update"], spec["schedule"], spec["penalty"])
    share = l1_share(spec["penalty"], spec["l1_ratio"])
    variants = [state_fields(*rule, penalized=penalized, l1_share=share, ftrl_roots=roots,
                             average=spec.get("average", 0) > 0)
                for penalized in (True, False) for roots in (True, False)]
    return next((v for v in variants if len(v[0]) + spec["n_outputs"] * len(v[1]) == width), variants[0])


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


