"""What runs on the workers: module-level functions of picklable arguments, each
a pure function of its inputs (Dask may run a task again, on another worker,
when the worker that held it or its result dies; it then computes the same).

The model travels as a `fastprox.stream.model.StreamModel` (the parameters, the
classes, the kernel), trained by the stream's `Trainer`, `fastprox train`'s own:
the same label checks, growth, chunking and error messages naming a file's line.
"""
import collections
import copy
import time

from .._core import AUTO_ROWS
from .._mixing import (Midpoint, contribution, copied, joined, mixed, mixed_shard, params_kind, shard_bounds, sharded,
                       unpacked)
from .._validation import kernel_arrays
from ..stream.labels import LABEL_BUFFER_BYTES
from ..stream.progress import NoBar, Table
from ..stream.trainer import Trainer, predicts
from ._malloc import lifted
from ._open import OPEN
from ._shares import Window, rows_of


class Lines:
    """A progress table's ``write``: the lines kept, for the client to print."""

    def __init__(self):
        self.lines = []

    def __call__(self, text):
        self.lines.append(text)


def _trainer(est, share, lines):
    return Trainer(est, share, Table(Lines() if lines else None, predicts(est)), NoBar())


@lifted
def start(est, shares, *data):
    """The global model at step 0, from the first rows of the shares (in order) as
    one machine starts it: "auto" steps from the first AUTO_ROWS rows, the classes
    (unless given) recognized from their labels (stream.labels: two, the larger
    positive; a lone label by the conventions), the width of those rows.
    ``data``: the first shares' blocks (Dask collections), as many as given."""
    est = copy.copy(est)
    trainer = _trainer(est, shares[0], False)
    held, rows, nbytes = [], 0, 0
    for k, share in enumerate(shares[:len(data)] if data else shares):
        for X, y, row in share.chunks(data[k] if data else None, ahead=False):     # (no rows parsed beyond)
            if trainer.classes is not None:
                trainer.classes.meet(y, share.locator(row))
            held.append(X)
            rows += X.shape[0]
            nbytes += sum(memoryview(a).nbytes for a in kernel_arrays(X))
            settled = trainer.classes is None or trainer.classes.settled
            if (rows >= AUTO_ROWS and settled) or nbytes >= LABEL_BUFFER_BYTES:
                break
        else:
            continue
        break
    name = ", ".join(s.name for s in shares[:3]) + (", ..." if len(shares) > 3 else "")
    if not rows:
        raise ValueError(f"{name}: no rows to train on")
    if trainer.classes is not None and not trainer.classes.settled:
        trainer.classes.fall_back(name, rows)
    outputs = 1 if trainer.classes is None else trainer.classes.n_outputs
    est.start(max(X.shape[1] for X in held), outputs, held)
    if trainer.classes is not None:
        est.classes = trainer.classes.final()
    return est


@lifted
def train_group(est, group, shares, cursor, limit, kind, run=None):
    """A worker's part of a round: from the global model ``est``, train on the
    group's ``shares`` from ``cursor`` (share index, row) for ``limit`` rows (None:
    to the end); its `Contribution` to the mix, with the new cursor. With a ``run``
    id, a file the round stops inside is left open on this worker for the group's
    next round, which resumes it if it runs here (`_open`)."""
    trainer = _round_trainer(est)
    i, skip = cursor
    while i < len(shares) and (limit is None or trainer.pass_rows < limit):
        trainer.source = shares[i]
        before = trainer.pass_rows
        left = limit if limit is None else limit - before
        resumed = None if run is None else OPEN.take(run, group, i, skip)
        window = Window(resumed, 0, left) if resumed is not None else Window(shares[i].chunks(), skip, left)
        trainer.feed(_marked(window, trainer))
        if window.more:
            skip += trainer.pass_rows - before
            if run is not None:
                OPEN.keep(run, group, i, skip, window.rest)
        else:                               # the share ended
            i, skip = i + 1, 0
    return contribute(est, trainer, group, (i, skip), kind)


def _round_trainer(est):
    """A trainer of a copy of the global model ``est``, for a round's rows."""
    local = copy.copy(est)
    local.learner = copied(est.learner)
    trainer = _trainer(local, None, False)
    trainer.begin_pass()
    trainer.midpoint = Midpoint(params_kind(est.params))
    return trainer


#: Rows a round reads ahead before it trains (a few chunks, parsed as they would be
#: anyway): what it then knows it holds spares the copies of the part-way points
#: that cannot be read (1, 2, 4, ... up to a quarter of those rows: `Midpoint.note`).
AHEAD_ROWS = 1 << 15


def _marked(items, trainer):
    """``items`` for ``trainer`` to train on, cut where the round's rows reach 1, 2,
    4, ... so that its weights are noted there (`Midpoint`): the same rows in the
    same order, so the same model. The first AHEAD_ROWS rows of the round are read
    before the first is trained, so that the points they show can never be read
    are not copied."""
    point = trainer.midpoint
    items, ahead, known = iter(items), collections.deque(), trainer.pass_rows
    while point.active and known < AHEAD_ROWS:
        item = next(items, None)
        if item is None:
            break
        ahead.append(item)
        known += item[0].shape[0]
    for X, y, origin in _ahead_then(ahead, items):
        a, n = 0, X.shape[0]
        while a < n:
            point.note(trainer.est.learner, trainer.pass_rows, known)
            b = n if not point.active else min(n, a + point.next - trainer.pass_rows)
            yield (X, y, origin) if (a, b) == (0, n) else (rows_of(X, a, b), y[a:b], origin + a)
            a = b


def _ahead_then(ahead, items):
    """The triples read ahead (a deque, each let go as it is handed on), then ``items``."""
    while ahead:
        yield ahead.popleft()
    yield from items


@lifted
def train_block(est, trainer, share, data):
    """A group's part of a round over a Dask collection, one block per task (a worker
    holds the block it trains on): ``trainer`` (None for the group's first block: a
    copy of the global model ``est``) trains on the block; returned for the next."""
    trainer = trainer if trainer is not None else _round_trainer(est)
    trainer.source = share
    trainer.feed(_marked(share.chunks(data), trainer))
    return trainer


@lifted
def contribute(est, trainer, group, cursor, kind):
    """The group's `Contribution` to the mix: what ``trainer``'s model, trained from
    the global model ``est`` this round, adds; with the group's new cursor."""
    result = contribution(est.learner, trainer.est.learner, trainer.pass_rows, trainer.pass_loss, kind,
                          trainer.midpoint.early(trainer.pass_rows))
    result.cursors = {group: cursor}
    result.seconds = 0.0
    result.weight = trainer.pass_weight         # the rows' importance weights, summed (the loss's divisor)
    result.start_width = est.learner.n_features
    return result


@lifted
def cut(part, s, n):
    """Shard ``s`` of ``n`` of a contribution (`_mixing.sharded`, the ranges of the
    start's features), its cursors kept: one worker's part of a shard's sum."""
    lo, hi = shard_bounds(part.start_width, n)[s]
    result = sharded(part, lo, hi)
    result.cursors, result.seconds, result.weight = part.cursors, part.seconds, part.weight
    return result


@lifted
def mix_shard(est, summed, s, n, kind, parts=False):
    """Shard ``s`` of ``n`` of the next global model's learner: the start ``est``'s
    features of that range mixed with ``summed`` (the sum of the workers' `cut`s);
    ``parts``: as its `unpacked` parts (the run's last round: for the client to join)."""
    lo, hi = shard_bounds(est.learner.n_features, n)[s]
    out = mixed_shard(est.learner, summed, lo, hi, kind)
    return unpacked(out) if parts else out


@lifted
def join(est, *shards):
    """The next global model: ``est`` with the learner whose features are the mixed
    ``shards``' in turn."""
    out = copy.copy(est)
    out.learner = joined(shards)
    return out


def shell(est):
    """``est`` without its learner (its parameters and classes: a few bytes), which the
    client joins the last round's mixed shards into (`join`)."""
    out = copy.copy(est)
    out.learner = None
    return out


@lifted
def add(*contributions):
    """The sum of contributions (a node of the tree reduction), their cursors joined."""
    started = time.perf_counter()
    result = contributions[0]
    for c in contributions[1:]:
        cursors = {**result.cursors, **c.cursors}
        seconds, weight = max(result.seconds, c.seconds), result.weight + c.weight
        result = result + c
        result.cursors, result.seconds, result.weight = cursors, seconds, weight
    result.seconds += time.perf_counter() - started
    return result


@lifted
def mix(est, summed, kind):
    """The next global model: ``est`` with the mixed kernel."""
    out = copy.copy(est)
    out.learner = mixed(est.learner, summed, kind)
    return out


def summary(summed):
    """What the client prints and schedules by: rows, steps, summed loss and the
    importance weights' sum it is a mean over, cursors, the bytes of one
    contribution, the slowest path's adding time."""
    return dict(rows=summed.rows, steps=summed.steps, loss=summed.loss, weight=summed.weight,
                cursors=summed.cursors, nbytes=summed.nbytes, seconds=summed.seconds)


@lifted
def train_in_turn(trainer, est, share, first, last, data=None):
    """Sequential mode: the trainer (None: a new one, for ``est``) takes the share's
    rows where they are, as `fastprox train` takes a file's: the same model, bit
    for bit, as one machine reading the shares in this order. ``first`` and
    ``last`` mark the pass's first and last shares."""
    if trainer is None:
        trainer = _trainer(copy.copy(est), share, True)
        trainer.losses = []
    trainer.source = share
    if first:
        trainer.begin_pass()
    trainer.feed(share.chunks(data))
    if last:
        trainer.losses.append(trainer.end_pass())
    return trainer


def progress(trainer, seen):
    """The progress table's lines after the first ``seen``, and the rows so far."""
    return trainer.table.write.lines[seen:], trainer.table.rows
