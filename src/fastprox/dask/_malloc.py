"""The C allocator's thresholds while a task of the run works on a worker (glibc).

Dask's nanny starts its workers with ``MALLOC_TRIM_THRESHOLD_=65536``
(``distributed.nanny.pre-spawn-environ``), so that they hand freed memory back
to the system at once. Set in the environment, a threshold also turns off
glibc's own rule that raises the mmap threshold to the blocks a program frees:
it stays at 128 KiB, and every block above it (each chunk's arrays the reader
parses, each copy of the model, each array of a contribution and a mix) is
mapped anew and its pages faulted in as they are first written: a round then
takes several times the page faults of ``fastprox train`` on the same files
(docs/dask.md, section 7). While a task of the run works, `lifted` sets the
thresholds that rule reaches (`fastprox._allocator.LIFTED`: blocks up to 32 MiB
from the heap, freed memory kept up to 64 MiB: a chunk's memory serves the next);
once the process has run
none of these tasks for RESTORE_AFTER seconds (the run's next task, the round's
mix after its training or the next round, comes within milliseconds and finds
the memory the last one freed), it puts the environment's thresholds back and
trims the heap (``malloc_trim``), as Dask wants it between runs. Where the environment
sets no threshold (glibc's rule at work), or the C library is not glibc,
nothing is changed. The model's bits do not depend on where its memory lies.
"""
import functools
import os
import threading

from .. import _allocator
from .._allocator import LIFTED, M_MMAP_THRESHOLD, M_TRIM_THRESHOLD

#: The environment variables that set mallopt's thresholds, and glibc's default for
#: each where they set none.
ENVIRON = {M_TRIM_THRESHOLD: "MALLOC_TRIM_THRESHOLD_", M_MMAP_THRESHOLD: "MALLOC_MMAP_THRESHOLD_"}
DEFAULT = 128 * 1024


def _glibc():
    """The allocator's calls (`fastprox._allocator`: mallopt, malloc_trim) if the C
    library is glibc, else None."""
    return _allocator if _allocator.GLIBC else None


def _setting(name):
    """The environment's threshold ``name`` in bytes, or None (unset or not a number)."""
    try:
        return int(os.environ[name])
    except (KeyError, ValueError):
        return None


#: Seconds without a task of a run after which a worker puts the environment's
#: thresholds back: longer than the gaps between a run's tasks on a worker (the
#: slices of a mix crossing, a round's next task), short against a user's pause.
RESTORE_AFTER = 1.0


class Thresholds:
    """The allocator's thresholds lifted while tasks work (a context manager; tasks
    of several threads of a worker share it): ``libc`` the C library (None: nothing
    to do), ``restore`` {mallopt parameter: bytes} put back (and the heap trimmed)
    once no task has worked for ``after`` seconds (a timer thread)."""

    def __init__(self, libc, restore, after=RESTORE_AFTER):
        self.libc, self.restore, self.after = libc, restore, after
        self.lock, self.working, self.up, self.timer = threading.Lock(), 0, False, None

    @classmethod
    def of_process(cls):
        """This process's: active where its environment fixes a threshold and its C
        library is glibc."""
        restore = {param: _setting(name) for param, name in ENVIRON.items()}
        if all(value is None for value in restore.values()):
            return cls(None, {})
        return cls(_glibc(), {param: DEFAULT if value is None else value for param, value in restore.items()})

    def __enter__(self):
        if self.libc is not None:
            with self.lock:
                if self.timer is not None:      # (a timer that already fired finds a task working)
                    self.timer.cancel()
                    self.timer = None
                if not self.up:
                    for param, value in LIFTED.items():
                        self.libc.mallopt(param, value)
                    self.up = True
                self.working += 1
        return self

    def __exit__(self, *exc):
        if self.libc is not None:
            with self.lock:
                self.working -= 1
                if not self.working:
                    self.timer = threading.Timer(self.after, self._lower)
                    self.timer.daemon = True
                    self.timer.start()
        return False

    def _lower(self):
        """The timer's: the environment's thresholds back, the heap trimmed, unless a
        task has begun since (or a later timer is the one to do it)."""
        with self.lock:
            if self.working or self.timer is not threading.current_thread():
                return
            self.timer = None
            for param, value in self.restore.items():
                self.libc.mallopt(param, value)
            self.up = False
        self.libc.malloc_trim(0)


#: This process's thresholds (made at the first task).
_PROCESS = []
_MADE = threading.Lock()


def _thresholds():
    with _MADE:
        if not _PROCESS:
            _PROCESS.append(Thresholds.of_process())
        return _PROCESS[0]


def lifted(task):
    """``task`` (a function of `fastprox.dask._tasks`) run with the thresholds lifted."""
    @functools.wraps(task)
    def run(*args, **kwargs):
        with _thresholds():
            return task(*args, **kwargs)
    return run
