"""The parallel mode of fastprox.dask run in one process: its own tasks
(`fastprox.dask._tasks`: ``start``, ``train_block``, ``contribute``, ``add`` on
the tree ``_run._tree`` builds (`TreeSum`), ``mix``) called in turn, so that accuracy with
W workers is measured with the real code's semantics (each group's learner
starts every round from the same global model, then the mix) without W
processes. Used by ``bench.dask_cluster`` (the simulated cluster) and for the
mixes' accuracy table of docs/dask.md.

The data are the benchmark's (``bench.dask_workload.generate``'s distribution: rows of
60 Zipf-ranked features of d = 2^20, labels a fixed sparse linear rule with
10% flipped), made in memory: ``rows`` rows cut into shares.
"""
import time

import numpy as np

from bench.dask_workload import D, PER_ROW, RULE
from bench.throughput import zipf_text


def zipf_rows(n, seed):
    """n rows and labels of the benchmark's distribution (file ``seed``'s rows as
    bench.dask_workload.generate writes them: ids are Zipf ranks, the labels the fixed
    rule's)."""
    truth_rng = np.random.default_rng(12345)
    truth = truth_rng.normal(size=D) * (truth_rng.random(D) < 0.1)
    X, _ = zipf_text(n, D, PER_ROW, seed)
    rank = np.argsort(np.random.default_rng(seed).permutation(D))
    X.indices = rank[X.indices].astype(X.indices.dtype)
    X.has_sorted_indices = False
    X.sort_indices()
    y = np.where(X @ truth > 0, 1.0, -1.0)
    flip = np.random.default_rng(10_000 + seed).random(n) < 0.1
    y[flip] = -y[flip]
    return X, y


def blocks_of(X, y, n_blocks):
    """(X, y) cut into ``n_blocks`` consecutive blocks of about equal rows."""
    edges = np.linspace(0, X.shape[0], n_blocks + 1).astype(int)
    return [(X[a:b], y[a:b]) for a, b in zip(edges[:-1], edges[1:])]


def chunked(block):
    """A block as a bag partition of chunks of `fastprox.stream.files.CHUNK_ROWS` rows
    (as a file's reader yields them: a worker's round is seen chunk by chunk)."""
    from fastprox.stream.files import CHUNK_ROWS
    X, y = block
    return [(X[a:a + CHUNK_ROWS], y[a:a + CHUNK_ROWS]) for a in range(0, X.shape[0], CHUNK_ROWS)]


def estimator(**params):
    """The benchmark's rule as a StreamModel with the parallel mode's parameters."""
    from fastprox import ProxClassifier
    from fastprox._mixing import parallel_params
    from fastprox.stream.model import StreamModel
    return StreamModel(parallel_params(ProxClassifier(**{**RULE, **params}).get_params()), False, [-1.0, 1.0])


class TreeSum:
    """Contributions added as they come on the tree `fastprox.dask._run._tree` builds
    (pairs, level by level: the same pairs when their number is a power of 2), each
    node `_tasks.add`, holding one partial sum per level (memory: log2 W
    contributions, not W). ``levels[k]``: the slowest addition at level k in CPU
    seconds (a level's additions run at once on a cluster); ``sent[k]``: the largest
    contribution (bytes) sent to an addition at level k (sums of sparse
    contributions grow denser up the tree)."""

    def __init__(self):
        self.stack, self.levels, self.sent = [], [], []

    def add(self, part):
        from fastprox.dask import _tasks
        level = 0
        while self.stack and self.stack[-1][0] == level:
            part = self._timed(level, _tasks.add, self.stack.pop()[1], part)
            level += 1
        self.stack.append((level, part))

    def total(self):
        """The sum (the levels not completed added in turn, each a level more)."""
        from fastprox.dask import _tasks
        while len(self.stack) > 1:
            right = self.stack.pop()[1]
            level = len(self.levels)
            self.stack[-1] = (self.stack[-1][0], self._timed(level, _tasks.add, self.stack[-1][1], right))
        return self.stack[0][1]

    def _timed(self, level, add, left, right):
        began = time.process_time()
        out = add(left, right)
        self.levels += [0.0] * (level + 1 - len(self.levels))
        self.levels[level] = max(self.levels[level], time.process_time() - began)
        self.sent += [0] * (level + 1 - len(self.sent))
        self.sent[level] = max(self.sent[level], left.nbytes, right.nbytes)
        return out


def parallel(blocks, n_groups, passes, est=None, rounds=1, each_pass=None):
    """The parallel mode over in-memory ``blocks`` (each a share) dealt to
    ``n_groups`` groups as `fastprox.dask._shares.deal` deals them, ``rounds``
    mixes per pass (each group's shares cut into that many consecutive runs of
    shares; ``rounds`` 1: a mix per pass, the Dask collections' case).
    ``each_pass(p, model)`` is called after each pass. Returns the final
    StreamModel."""
    from fastprox._mixing import mix_kind
    from fastprox.dask import _tasks
    from fastprox.dask._shares import BlockShare, deal
    est = est if est is not None else estimator()
    shares = [BlockShare("sim", i, X.shape[0]) for i, (X, _) in enumerate(blocks)]
    blocks = [chunked(b) for b in blocks]
    kind = mix_kind(est.params["update"], est.params["schedule"], est.params["penalty"])
    groups = deal(shares, n_groups)
    model = _tasks.start(est, shares, *blocks[:1])
    for p in range(passes):
        for r in range(rounds):
            tree = TreeSum()
            for g, members in enumerate(groups):
                cut = np.linspace(0, len(members), rounds + 1).astype(int)
                trainer = None
                for i in members[cut[r]:cut[r + 1]]:
                    trainer = _tasks.train_block(model, trainer, shares[i], blocks[i])
                if trainer is not None:
                    tree.add(_tasks.contribute(model, trainer, g, (0, 0), kind))
            model = _tasks.mix(model, tree.total(), kind)
        if each_pass is not None:
            each_pass(p, model)
    return model


def accuracy(model, X, y):
    """Test accuracy of a binary StreamModel on (X, y) (labels -1, 1)."""
    learner = model.learner
    W = learner.coef()
    d = min(W.shape[-1], X.shape[1])
    margin = X[:, :d] @ W[0, :d] + learner.intercept()[0]
    return float(np.mean(np.where(margin > 0, 1.0, -1.0) == y))


def by_pass(blocks, test, n_groups, passes, **options):
    """Test accuracy after each pass of `parallel` (a list)."""
    found = []
    parallel(blocks, n_groups, passes, each_pass=lambda p, m: found.append(accuracy(m, *test)), **options)
    return found
