"""Vowpal Wabbit's holdout for several passes: every K-th example of a pass (K the
holdout period, 10 by default; the K-th, 2K-th, ... counted from 1 in each pass,
as VW's ``in_pass_counter % holdout_period == 0``) is held out of training in
every pass, the first included, and scored by the model of the moment instead
(the loss it would have had, no step). At the end of each pass the pass's mean
holdout loss is compared with the best so far: a pass that does not improve
on it counts against the run, and after ``early_terminate`` such passes in a
row (3 by default) the run stops. With ``after`` N (VW's ``--holdout_after``) the
examples after the first N of each pass are held out instead (VW's
``in_pass_counter > holdout_after``).

The model kept is VW's: VW writes the model file at every pass that improved
the holdout loss, and at the end of the run unless it stopped early
(``finalize_regressor`` skips the write once ``early_terminate`` is set). So a
run that stops early keeps the best pass's model, and one that runs all its
passes keeps the last pass's, even if an earlier one held out better.
`Holdout` keeps a copy of the best pass's kernel (O(model) memory) to return
it when the run stops early; told the run's number of passes, only where it
can: a best pass with fewer than ``early_terminate`` passes after it is never
returned to (``--passes 3`` under the default 3 copies nothing).
"""
import copy

#: VW's defaults: --holdout-period and --early-terminate.
HOLDOUT_PERIOD, EARLY_TERMINATE = 10, 3


class Holdout:
    """Which rows a pass holds out (every ``period``-th, or those after the first
    ``after`` when given), and the stopping rule over the passes' holdout losses
    (``early_terminate`` passes without improvement)."""

    def __init__(self, period=HOLDOUT_PERIOD, early_terminate=EARLY_TERMINATE, after=None, passes=None):
        """``passes``: the run's number of passes (None: not known; every best pass's
        model is then copied)."""
        self.period, self.early_terminate, self.after, self.passes = period, early_terminate, after, passes
        self.best_loss, self.best_pass, self.best_learner = float("inf"), None, None
        self.no_win = 0
        self.losses = []            # each pass's mean holdout loss (None: no rows held out)
        self.stopped = None         # the pass after which the run stopped early

    def rows(self, seen, n):
        """The rows of a chunk of ``n`` rows held out, ``seen`` rows of the pass before it."""
        if self.after is not None:
            return range(min(max(self.after - seen, 0), n), n)
        return range((-(seen + 1)) % self.period, n, self.period)

    def end_pass(self, number, total, weight, learner):
        """Take pass ``number``'s holdout (rows of importance weights summing to
        ``weight`` and of summed weighted loss ``total``: their mean is VW's, the
        model ``learner`` at its end); whether the run stops here."""
        loss = total / weight if weight > 0 else None
        self.losses.append(loss)
        if loss is not None and loss < self.best_loss:
            self.best_loss, self.best_pass, self.no_win = loss, number, 0
            # (the run stops early on this pass's model only after early_terminate more passes)
            can_stop = self.passes is None or number + self.early_terminate <= self.passes
            self.best_learner = copy.copy(learner) if can_stop else None    # (__copy__: arrays of its own)
            return False
        if loss is not None or self.best_pass is not None:
            self.no_win += 1
        if self.no_win >= self.early_terminate:
            self.stopped = number
            return True
        return False
