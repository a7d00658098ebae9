"""The parallel mode's placements stay preferences when every worker is lost at once.

The run asks for its tasks where their inputs lie (``workers=[address],
allow_other_workers=True``: Dask's loose restrictions). A task that Dask decides
while no worker runs (the cluster's only worker died, or all of them together)
waits in the scheduler's "no-worker" state, and a joining worker is given only
the waiting tasks whose restrictions name it (``Scheduler.add_worker``: a loose
restriction whose workers have all left allows no one there), so those tasks
waited for ever beside idle restarted workers. This scheduler plugin drops, as a
worker joins, the worker restrictions of the waiting tasks that are loose and name
no connected worker: the task may then run on any worker, as its
``allow_other_workers`` says.

The module imports nothing of fastprox, and is pickled by value: the scheduler
needs no fastprox to run the plugin.
"""
import sys

import cloudpickle
from distributed.diagnostics.plugin import SchedulerPlugin


class LoosePlacements(SchedulerPlugin):
    """On a joining worker: the waiting tasks' loose restrictions to lost workers
    dropped, before the scheduler hands the joining worker its waiting tasks."""

    name = "fastprox-loose-placements"
    idempotent = True       # (one instance on a scheduler, whichever run registered it)

    def add_worker(self, scheduler, worker):
        for ts in scheduler.unrunnable:
            if ts.loose_restrictions and ts.worker_restrictions and scheduler.workers.keys().isdisjoint(
                    ts.worker_restrictions):
                ts.worker_restrictions = None


def register(client):
    """Register `LoosePlacements` on ``client``'s scheduler (once a scheduler)."""
    client.register_plugin(LoosePlacements())


cloudpickle.register_pickle_by_value(sys.modules[__name__])
