"""A training call that fails or is interrupted leaves its estimator as it was: what
the flat and the structured estimators share."""
import copy
from contextlib import contextmanager


@contextmanager
def restored_on_failure(est, keep, model=True):
    """Around a training call of ``est``: if it raises (errors, Ctrl-C), put back the
    estimator's attributes as they were on entry, when ``keep`` (a fit, a first
    partial_fit); with ``model``, its kernel ``_learner`` too (a copy: the call steps
    it in place). Without ``keep`` (a later partial_fit) the steps completed stay."""
    before = None
    if keep:
        before = dict(vars(est))
        if model:
            before["_learner"] = copy.copy(est._learner)
    try:
        yield
    except BaseException:
        if before is not None:
            vars(est).clear()
            vars(est).update(before)
        raise
