"""The client's side of a cluster run: the tasks of each round submitted, their
contributions added by a tree reduction on the cluster, the mixed model kept
there for the next round; or, in sequential mode, one task per share in turn,
the model moving from worker to worker. The client downloads the model once, at
the end, and prints progress as rounds (or shares) finish.
"""
import asyncio
import numbers
import time
import uuid

from distributed import KilledWorker, wait

from .._core import AUTO_ROWS
from .._mixing import params_kind, shardable
from ..stream.progress import decimal
from . import _open, _placement, _tasks
from ._shares import deal


class ClusterError(ConnectionError):
    """The cluster could not finish a run (a share's task failed on every worker
    Dask tried, or the cluster had no worker for the run's timeout): no model is
    returned."""


#: Seconds a run waits for a cluster without workers (fit's and train's timeout).
TIMEOUT = 60.0
#: The fewest rows per group between two mixes (sync_rows): a round costs a few trips
#: through the scheduler, tens of milliseconds, more than fewer rows take to train.
MIN_SYNC_ROWS = 1000


def check_sync_rows(sync_rows, name="sync_rows"):
    """Refuse a sync_rows (``name``: its option) that is not None or an integer of
    at least MIN_SYNC_ROWS, saying why."""
    if sync_rows is None:
        return
    if not isinstance(sync_rows, numbers.Integral) or isinstance(sync_rows, bool) or sync_rows < 1:
        raise ValueError(f"{name} must be None or a positive integer, not {sync_rows!r}")
    if sync_rows < MIN_SYNC_ROWS:
        raise ValueError(f"{name}={sync_rows} would mix the models every {sync_rows} rows per group: each "
                         f"mix is a round of trips through the scheduler (tens of milliseconds), which "
                         f"would take longer than the rows; give at least {MIN_SYNC_ROWS}")
#: The most contributions a round mixes as shards (reduce-scatter, `_mix`): W workers
#: cut their contributions into W ranges, W^2 small tasks a round; above, a tree.
SHARDED_UP_TO = 8
#: Seconds between two looks at the cluster's workers while a run waits.
_POLL = 1.0


class Watch:
    """``done(futures)``: wait for the futures, but end the run with ClusterError
    once the cluster has had no worker for ``timeout`` seconds (Dask's own
    no-workers timeout is off by default: its tasks would wait for ever)."""

    def __init__(self, client, timeout):
        self.client, self.timeout = client, timeout

    def done(self, futures):
        without = None      # since when the cluster has had no worker
        while True:
            try:
                wait(futures, timeout=min(_POLL, self.timeout))
                return futures
            except (TimeoutError, asyncio.TimeoutError):    # (asyncio's is builtins' from Python 3.11)
                pass
            if connected(self.client):
                without = None
                continue
            now = time.monotonic()
            without = now if without is None else without
            if now - without >= self.timeout:
                raise ClusterError(f"the cluster has had no workers for {self.timeout:g} s (timeout), so "
                                   f"the run cannot go on; no model was returned: start workers, or give a "
                                   f"longer timeout")

    def result(self, future):
        return self.done([future])[0].result()


class Result:
    """A finished run: the model (a StreamModel: kernel, parameters, classes), each
    pass's (mean progressive loss, rows), the sequential mode's trainer (its
    progress table and label statistics; None in parallel mode) and the rounds'
    records (rows, seconds, mixing time and bytes)."""

    def __init__(self, est, losses, trainer=None, rounds=()):
        self.est, self.losses, self.trainer, self.rounds = est, losses, trainer, list(rounds)


def run(client, est, shares, data, passes, sequential, sync_rows, n_groups, say, timeout=TIMEOUT):
    """Train ``est`` (a StreamModel not started) on ``shares`` (their data futures
    ``data``, or None for files) on ``client``; ``say(line)`` reports progress. A
    cluster without workers for ``timeout`` seconds ends the run (ClusterError)."""
    futures = []
    watch = Watch(client, timeout)
    try:
        if sequential:
            return _sequential(client, est, shares, data, passes, say, futures, watch)
        return _parallel(client, est, shares, data, passes, sync_rows, n_groups, say, futures, watch)
    except KilledWorker as e:
        raise ClusterError(f"a task of the run was lost with the workers that ran it ({e}); no model "
                           f"was returned: check the workers' memory and logs") from None
    except Exception:
        if closed(client):      # (Dask's own error names cancelled futures, not why)
            raise ClusterError("the Dask client was closed during the run; no model was returned") from None
        raise
    finally:
        if not closed(client):      # released, not cancelled: the scheduler's cancel also cancels
            for future in futures:  # the keys' dependents, and its assertion fails on one that no
                future.release()    # client holds (distributed 2026.8.0), logging a traceback


def closed(client):
    """Whether ``client`` is closed, or closing: it can send the scheduler nothing."""
    return client.status in ("closing", "closed")


def connected(client):
    """The addresses of the workers connected now, sorted, asked of the scheduler.
    (``client.scheduler_info()`` returns the client's copy of the scheduler's
    identity, which the client's periodic refresh, listing no worker, can overwrite
    between the call's own refresh and its return.)"""
    return sorted(client.nthreads())


def quiet(line):
    """``say`` for a run whose progress is not wanted (the sequential mode then asks
    for no progress reports)."""


def _sequential(client, est, shares, data, passes, say, futures, watch):
    """The chain of tasks, a share each, handing the trainer on, submitted as one graph
    of which the client wants the last trainer only (and the small progress reports):
    the scheduler releases a trainer as soon as the next share's task has read it, and
    its report if progress is wanted (a task reading it, run first: ``priority``), so
    the cluster holds O(1) models, not one per share. (A future per trainer, dropped
    by the client in turn, would be released by a message of the client's, which a
    loaded client sends after later shares' tasks have ended: a model per share.)"""
    from dask import annotate, delayed
    train, report_of = delayed(_tasks.train_in_turn, pure=False), delayed(_tasks.progress, pure=False)
    trainer, reports = None, []
    for p in range(passes):
        for k, share in enumerate(shares):
            trainer = train(trainer, est, share, k == 0, k == len(shares) - 1, *([data[k]] if data else []))
            if say is not quiet:
                with annotate(priority=1):
                    reports.append(report_of(trainer, 0))
    *reports, trainer = client.compute(reports + [trainer], optimize_graph=False)
    futures += reports + [trainer]
    seen = 0
    for report in reports:          # as each share finishes (the chain is in order)
        lines, _ = watch.result(report)
        for line in lines[seen:]:
            say(line)
        seen = max(seen, len(lines))
    trainer = watch.result(trainer)
    return Result(trainer.est, trainer.losses, trainer)


def _parallel(client, est, shares, data, passes, sync_rows, n_groups, say, futures, watch):
    _placement.register(client)     # (its tasks placed on workers: none waits for lost ones)
    kind = params_kind(est.params)
    groups = deal(shares, n_groups)
    homes = [] if data else connected(client)[:len(groups)]
    if homes:       # the start made on each worker (the same bits): no worker waits for another's
        models = [(client.submit(_tasks.start, est, shares, pure=False, **_at(w)), w) for w in homes]
    else:
        models = [(_submit(client, _tasks.start, est, shares, data=_head(shares, data)), None)]
    # The model without its learner, for the client to join the last round's mixed shards into (its
    # parameters and classes, the same every round): made now, where the start lies, before the
    # round's tasks queue behind it, not at the end, where an idle worker took it from the busy one
    # (the whole model fetched from a worker still training).
    home = models[0][1]
    shell = client.submit(_tasks.shell, models[0][0], pure=False, **(_at(home) if home else {}))
    futures.extend([m for m, _ in models] + [shell])
    resume = _Resume(client) if sync_rows is not None and not data else None
    try:
        return _rounds(client, models, shares, data, groups, passes, sync_rows, kind, say, futures, resume, watch,
                       shell, shardable(est.params["penalty"]))
    finally:
        if resume is not None:
            resume.close()


def _rounds(client, models, shares, data, groups, passes, sync_rows, kind, say, futures, resume, watch, shell,
            shards=False):
    """The parallel mode's passes from the start ``models``: rounds of the groups'
    tasks, their contributions tree-added and mixed into the next model (``shards``:
    a round of W workers mixed as W ranges of the features, `_mix`, the last one's
    shards joined by the client into ``shell``, the model without its learner). ``models``:
    copies of the global model, the same bits, each as (future, the worker asked to
    hold it, or None): group g trains from copy g (modulo their number) where it lies."""
    losses, rounds = [], []
    for p in range(passes):
        cursors = {g: (0, 0) for g in range(len(groups))}
        pass_rows, pass_loss, pass_weight, r = 0, 0.0, 0.0, 0
        while cursors:
            began = time.perf_counter()
            planned = [_group(client, models[g % len(models)], g, groups[g], shares, data, cursor, sync_rows, kind,
                              resume) for g, cursor in cursors.items()]
            parts = [f for f, _ in planned]
            futures.extend(parts)
            last = sync_rows is None and p + 1 == passes       # (its model goes to the client only)
            early = resume is None and all(w for _, w in planned)
            if early:       # the mix submitted with the round: a group's slices travel as soon as it ends
                models, info, pieces = _mix(client, models, planned, kind, shards, futures,
                                            0 if last else len(models), shell)
            watch.done(parts)
            trained = time.perf_counter()
            if resume is not None:
                resume.ran(dict(zip(cursors, parts)))
            if not early:
                held = client.who_has(parts)
                models, info, pieces = _mix(client, models, [(f, next(iter(held.get(f.key, ())), None))
                                                             for f in parts], kind, shards, futures,
                                            0 if last else len(models), shell)
            futures += [m for m, _ in models] + [info]
            info = watch.result(info)
            pieces = [watch.result(piece) for piece in pieces]     # (one travels while the next mixes)
            watch.done([m for m, _ in models])
            for model in [m for m, _ in models]:
                if model.status == "error":
                    model.result()      # raises the mixing task's error
            mixed = time.perf_counter()
            r += 1
            pass_rows += info["rows"]
            pass_loss += info["loss"]
            pass_weight += info["weight"]
            cursors = {g: c for g, c in info["cursors"].items() if c[0] < len(groups[g])}
            record = dict(pass_=p + 1, round=r, workers=len(parts), rows=info["rows"],
                          train_seconds=trained - began, mix_seconds=mixed - trained,
                          mix_bytes=info["nbytes"] * len(parts))
            rounds.append(record)
            say(f"pass {p + 1}/{passes}, round {r}: {len(parts)} worker(s), {info['rows']:,} rows "
                f"({pass_rows:,} this pass), progressive loss {decimal(_mean(info['loss'], info['weight']))}, "
                f"train {record['train_seconds']:.2f} s, mix {record['mix_seconds']:.3f} s")
            futures[:] = [m for m, _ in models]
        if not pass_rows:
            raise ValueError(f"{', '.join(s.name for s in shares)}: no rows to train on")
        losses.append((_mean(pass_loss, pass_weight), pass_rows))
    model = watch.result(models[0][0])
    return Result(_tasks.join(model, *pieces) if pieces else model, losses, None, rounds)


def _mean(loss, weight):
    """A progressive mean loss: the rows' summed (weighted) loss over their importance
    weights' sum, as `fastprox train`'s (VW's); 0 without weight."""
    return loss / weight if weight > 0 else 0.0


def _at(worker):
    """Placement on ``worker`` if it can (Dask may run the task elsewhere: the worker lost)."""
    return dict(workers=[worker], allow_other_workers=True)


def _mix(client, models, parts, kind, shards, futures, copies, shell):
    """The next model's copies (as ``models``: (future, worker or None); as many as
    ``copies`` at most), the future of the round's `_tasks.summary`, and the mixed
    shards still to join: ``copies`` 0 (the run's last round) has the client fetch
    the shards (`_mixing.unpacked`) from their workers, each as soon as it is mixed,
    and join them (`_tasks.join`) instead of a worker joining them for the client to
    fetch, the one copy being then ``shell``, the model without its learner
    (`_tasks.shell`); else none. With ``shards`` and 2 to SHARDED_UP_TO
    contributions (W), reduce-scatter then all-gather (as AllReduce does): the
    features cut into W ranges, each range's slices of the contributions tree-added
    and mixed on the worker holding the contribution of that index, so that the
    workers share the additions and the mix instead of one doing them while the
    others wait; the ranges joined into the model (the unsharded mix's bits) on
    the workers of the first ``copies`` of ``models``, each then holding its copy
    for the next round. ``parts``: the contributions' futures, each with the
    worker that holds it (or is asked to run it), or None."""
    model = models[0][0]
    parts, where = [f for f, _ in parts], [_at(w) if w else {} for _, w in parts]
    if not shards or not 2 <= len(parts) <= SHARDED_UP_TO:
        summed = _tree(client, parts, futures)
        return ([(client.submit(_tasks.mix, model, summed, kind, pure=False), None)],
                client.submit(_tasks.summary, summed, pure=False), [])
    n = len(parts)
    mixed, first = [], None
    for s in range(n):
        cuts = [client.submit(_tasks.cut, p, s, n, pure=False, **where[i]) for i, p in enumerate(parts)]
        futures.extend(cuts)
        summed = _tree(client, cuts, futures, **where[s])
        first = summed if s == 0 else first
        local = next((m for m, w in models if w in where[s].get("workers", ())), model)
        mixed.append(client.submit(_tasks.mix_shard, local, summed, s, n, kind, not copies, pure=False, **where[s]))
    futures.extend(mixed)
    info = client.submit(_tasks.summary, first, pure=False)
    if not copies:
        return [(shell, None)], info, mixed
    return ([(client.submit(_tasks.join, m, *mixed, pure=False, **(_at(w) if w else {})), w)
             for m, w in models[:copies]], info, [])


def _group(client, model, g, members, shares, data, cursor, sync_rows, kind, resume):
    """The future of group g's contribution to a round from ``model`` (future, worker
    or None), with the worker of the model's copy it is asked to run on (or None):
    one task streaming its files from ``cursor`` (``sync_rows`` rows, or to their
    end; with ``resume``, on the worker whose open reader it can resume, else where
    the model's copy lies); for a Dask collection, a chain of tasks, a block each,
    then its contribution (a pass per round), submitted as one graph of which the
    client wants the contribution only (the scheduler releases each block's trainer
    once the next has read it, whatever the client's pace: `_sequential`)."""
    model, home = model
    if not data:
        where = (resume.where(g) if resume else {}) or (_at(home) if home else {})
        return (client.submit(_tasks.train_group, model, g, [shares[i] for i in members], cursor, sync_rows,
                              kind, resume and resume.run, pure=False, **where), home)
    from dask import delayed
    trainer = None
    for i in members:
        trainer = delayed(_tasks.train_block, pure=False)(model, trainer, shares[i], data[i])
    contribution = delayed(_tasks.contribute, pure=False)(model, trainer, g, (len(members), 0), kind)
    return client.compute(contribution, optimize_graph=False), None


class _Resume:
    """The files' readers left open between ``sync_rows`` rounds (`_open`): the run's
    id naming them on the workers, and the worker each group's last round ran on,
    where its next round is asked to run (a preference: Dask may run it elsewhere,
    which then opens the file again)."""

    def __init__(self, client):
        self.client, self.run, self.workers = client, uuid.uuid4().hex, {}

    def ran(self, parts):
        """Note where each group's round ``parts[g]`` ran."""
        held = self.client.who_has(list(parts.values()))
        self.workers = {g: list(held.get(f.key, ())) for g, f in parts.items()}

    def where(self, g):
        workers = self.workers.get(g)
        return dict(workers=workers, allow_other_workers=True) if workers else {}

    def close(self):
        """Close the run's readers on every worker."""
        self.client.run(_open.close_run, self.run, on_error="ignore")


def _head(shares, data):
    """The first blocks of a Dask collection that hold AUTO_ROWS rows (all of them if
    their sizes are unknown, up to 16), which `_tasks.start` reads; none for files."""
    if not data:
        return []
    rows, k = 0, 0
    while k < min(len(shares), 16) and rows < AUTO_ROWS:
        rows += shares[k].size or 0
        k += 1
    return data[:k]


def _submit(client, func, *args, data=()):
    """A future of ``func(*args, *data)`` on the cluster; ``data``, blocks of a Dask
    collection (Delayed), are computed as the task's inputs, on demand, and
    released after it: a worker holds the blocks its running tasks read."""
    if not data:
        return client.submit(func, *args, pure=False)
    from dask import delayed
    return client.compute(delayed(func, pure=False)(*args, *data))


def _tree(client, parts, futures, fan_in=2, **where):
    """The sum of the contributions ``parts`` by a tree of additions on the cluster
    (depth ceil(log_fan_in(len(parts)))); ``where``: the additions' placement."""
    while len(parts) > 1:
        parts = [client.submit(_tasks.add, *parts[i:i + fan_in], pure=False, **where) if len(parts[i:i + fan_in]) > 1
                 else parts[i] for i in range(0, len(parts), fan_in)]
        futures.extend(parts)
    return parts[0]
