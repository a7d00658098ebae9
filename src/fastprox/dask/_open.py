"""Readers a group's round leaves open, on the worker that ran it, for the group's
next round (``sync_rows``): that round, run on the same worker (the client asks
for it), resumes the file inside its open reader instead of opening it again and
parsing it up to the row where the round stopped. A round run elsewhere (the
worker was busy or died) opens the file again: the same rows in the same order,
so the same model bit for bit (a model's bits do not depend on how its rows are
cut into chunks); only the parsing is repeated.

Memory: one open reader per group on a worker (its reader thread's chunks parsed
ahead and the tail of a cut chunk: O(one block)); a group's older reader is
closed when it leaves a new one, and the client closes a run's readers when the
run ends.
"""
import threading


class OpenReaders:
    """Open readers keyed by (run, group, share, row): what remains of a share from
    that row, as an iterator of the share's (rows, labels, first row) triples."""

    def __init__(self):
        self._open, self._lock = {}, threading.Lock()

    def take(self, run, group, share, row):
        """The group's reader at (share, row), or None; removed from the keep."""
        with self._lock:
            return self._open.pop((run, group, share, row), None)

    def keep(self, run, group, share, row, rest):
        """Keep ``rest`` (a generator of the share's triples from ``row``, `Window.rest`)
        for the group's next round; its older readers are closed."""
        with self._lock:
            old = self._pop(lambda key: key[:2] == (run, group))
            self._open[(run, group, share, row)] = rest
        _close(old)

    def close(self, run):
        """Close the run's readers (the run ended, or failed)."""
        with self._lock:
            old = self._pop(lambda key: key[0] == run)
        _close(old)

    def _pop(self, stale):
        return [self._open.pop(key) for key in [key for key in self._open if stale(key)]]


def _close(readers):
    for reader in readers:
        reader.close()


#: This worker process's open readers.
OPEN = OpenReaders()


def close_run(run):
    """Run on every worker by the client at a run's end: close its readers."""
    OPEN.close(run)
