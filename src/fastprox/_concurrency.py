"""What an estimator shared between threads relies on: one training call at a
time, and reads that see the model between two steps, never during one, served
in their turn.

The kernel trains without the GIL, so without a lock a `predict` running
beside `partial_fit` reads weights half-way through a step, and two training
calls step the same state at once. `ModelLock` gives the estimators:

- ``training()``: held by a whole `fit` / `partial_fit` call. A second
  training call waits for the first to end (training calls are serialized:
  none is lost, none is refused).
- ``reading()``: held by `predict`, `coef_`, pickling, `save_model`, ... A
  read waits until no step runs: before or after a training call, or at one
  of the pauses a training call makes at step boundaries.
- ``pause()``: called by the training call at step boundaries (the kernel
  calls it where it already looks at signals, every 65,536 rows, and between
  passes). If reads are waiting, it lets those that arrived before it run on
  the model as it is after the last completed step, then resumes; if none
  wait it costs one attribute read.

Fair: every read and every training call takes an arrival ticket, and each
is served in the order of the tickets, but that the reads waiting when a call
pauses run at the pause. A training call does not start before the reads that
arrived earlier are served (back-to-back `partial_fit` calls cannot starve a
reader: a read waits for the call in progress, to its end or its next pause),
and a read does not start before the training calls that arrived earlier,
unless one of them holds the model and is paused (a stream of reads cannot
starve training: a call waits for the reads that arrived before it). A read
or a training call interrupted (Ctrl-C) while it waits gives its ticket back:
the calls behind it, and a pause serving the reads before it, would otherwise
wait for it for ever.

Re-entrant per thread: a read inside a read (``save_model`` reads
``coef_``) or inside the thread's own training call runs at once instead of
waiting for itself; a training call inside a read of the same model raises
RuntimeError. Each read is of one step: to read several attributes of the
same step, read a copy (``copy.deepcopy(est)`` or a pickle is one read).
"""
import threading
from collections import deque

_GUARD = threading.Lock()       # makes each object's lock once, whichever thread asks first


def lock_of(owner):
    """The ModelLock of `owner` (kept in its ``__dict__`` as ``_lock``), made on
    first use."""
    lock = owner.__dict__.get("_lock")
    if lock is None:
        with _GUARD:
            lock = owner.__dict__.setdefault("_lock", ModelLock())
    return lock


class ModelLock:
    """Serialized training calls, reads between steps, both in their arrival order
    (the module's contract)."""

    def __init__(self):
        self._cond = threading.Condition(threading.Lock())
        self._next = 0              # the next arrival ticket
        self._trainer = None        # ident of the thread whose training call holds the model
        self._stepping = False      # the trainer is taking steps (reads must wait)
        self._queued = deque()      # tickets of the training calls waiting for the model, in order
        self._waiting = set()       # tickets of the reads waiting
        self._served = 0            # a paused call serves the reads whose tickets are below this
        self._readers = 0           # reads running
        self._local = threading.local()     # this thread's depth of reads

    def __reduce__(self):
        """A copy or a pickle of its owner gets a lock of its own, free."""
        return ModelLock, ()

    def training(self):
        """Context manager around one training call."""
        return _Held(self, True)

    def reading(self):
        """Context manager around one read of the model."""
        return _Held(self, False)

    def _ticket(self):
        """The next arrival ticket (the caller holds the condition's lock)."""
        ticket = self._next
        self._next += 1
        return ticket

    def _earlier_read(self, ticket):
        """Whether a read that arrived before ``ticket`` still waits."""
        return bool(self._waiting) and min(self._waiting) < ticket

    def _begin_training(self):
        with self._cond:
            ticket = self._ticket()
            self._queued.append(ticket)
            try:
                while (self._trainer is not None or self._readers or self._queued[0] != ticket
                       or self._earlier_read(ticket)):
                    self._cond.wait()
            except BaseException:
                self._left(self._queued.remove, ticket)
                raise
            self._queued.popleft()
            self._trainer = threading.get_ident()
            self._stepping = True

    def _left(self, remove, ticket):
        """A call interrupted (Ctrl-C) while it waits for the model: ``remove(ticket)``
        takes its ticket out, and the calls behind it are woken, which it no longer
        holds up (the caller holds the condition's lock)."""
        remove(ticket)
        self._cond.notify_all()

    def _end_training(self):
        with self._cond:
            self._trainer = None
            self._stepping = False
            self._cond.notify_all()

    def _may_read(self, ticket):
        """Whether the read of ``ticket`` may start: no step runs, and either a call
        holds the model, paused for the reads that arrived before the pause, or no
        training call that arrived earlier waits."""
        if self._stepping:
            return False
        if self._trainer is not None:
            return ticket < self._served
        return not self._queued or self._queued[0] > ticket

    def _begin_reading(self):
        with self._cond:
            ticket = self._ticket()
            self._waiting.add(ticket)
            try:
                while not self._may_read(ticket):
                    self._cond.wait()
            except BaseException:
                self._left(self._waiting.discard, ticket)
                raise
            self._waiting.discard(ticket)
            self._readers += 1

    def _end_reading(self):
        with self._cond:
            self._readers -= 1
            self._cond.notify_all()

    def pause(self):
        """Let the reads that wait now run on the model as it is, then return. Only
        the training call's own thread calls it, between two steps; reads that
        arrive meanwhile wait for the next pause or the call's end. Interrupted
        (Ctrl-C), it lets no other read start and raises once the reads running
        have ended: the interrupted call then puts its estimator back as it was
        (`restored_on_failure`), which a read must not see half done."""
        if not self._waiting:
            return
        with self._cond:
            self._served = self._next
            self._stepping = False
            self._cond.notify_all()
            try:
                while self._earlier_read(self._served) or self._readers:
                    self._cond.wait()
            finally:
                self._stepping = True
                while self._readers:    # interrupted (Ctrl-C): the reads running end first
                    self._cond.wait()


class _Held:
    """``with lock.training():`` / ``with lock.reading():``, re-entrant per thread: a
    read inside a read or inside the thread's own training call, or a training call
    inside its own, runs at once. A training call inside a read would have to wait
    for itself: it raises RuntimeError."""

    __slots__ = ("lock", "train", "nested")

    def __init__(self, lock, train):
        self.lock, self.train = lock, train

    def __enter__(self):
        lock, local = self.lock, self.lock._local
        reads = getattr(local, "reads", 0)
        self.nested = lock._trainer == threading.get_ident() or (reads and not self.train)
        if self.train and reads and not self.nested:
            raise RuntimeError("fit or partial_fit was called while this thread reads the same "
                               "model (inside predict, pickling or save_model); call it after the read.")
        if not self.nested:
            lock._begin_training() if self.train else lock._begin_reading()
        if not self.train:
            local.reads = reads + 1

    def __exit__(self, *exc):
        lock = self.lock
        if not self.train:
            lock._local.reads -= 1
        if not self.nested:
            lock._end_training() if self.train else lock._end_reading()


class LearnerState:
    """A pickled owner's kernel: its `Learner.__reduce__`, taken under the read lock,
    so that pickling finishes on that snapshot whatever trains meanwhile (the
    estimators', the structured learners')."""

    __slots__ = ("reduced",)

    def __init__(self, reduced):
        self.reduced = reduced

    def __reduce__(self):
        return self.reduced

    def learner(self):
        """The Learner itself (for copy.copy, which keeps the state's objects as they are)."""
        make, args, state = self.reduced
        learner = make(*args)
        learner.__setstate__(state)
        return learner
