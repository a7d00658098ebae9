"""Mixing learner states: several learners that started from one model and
trained on different rows, combined into the next global model (the parallel
mode of `fastprox.dask`; docs/dask.md says what is mixed for each rule and why
it is sound).

A worker's result is a `Contribution`: sums over workers that add up in any
order and grouping (a tree reduction adds them pairwise), of O(model size):

- fobos, scalar schedule, entry-wise or group penalties: the worker's caught-up
  weights W_{T+1} times its rows, and its rows. The mix is their average
  weighted by rows (iterative parameter mixing, McDonald et al. 2010).
- fobos + adagrad: each worker's moves rescaled from its own AdaGrad steps to
  the steps of the summed accumulators (delayed-gradient AdaGrad: where one
  worker met a coordinate, its move; where several did, their rescaled moves
  added where they still moved at a steady rate (a worker's weights part-way
  through its rows, `Midpoint`, tell) and averaged where they had settled,
  between MOST_MOVES and MOST_STEADY_MOVES of one worker's), then the shrinking of the
  workers whose rows did not meet the coordinate; G becomes the start's G plus
  every increment (the sum of squared gradients over all rows, as on one
  machine).
- rda, ftrl: the increments of the dual sums (s and G; z and n), added to the
  start's (distributed dual averaging, Duchi et al. 2012): no weight is
  averaged, a weight stays a closed form of its sums and the global step count.
  The increments of the main sum (s; z) of the workers that met a coordinate are
  added where they grew at a steady rate and averaged where they had settled
  (their sums part-way through the round tell, as for fobos + adagrad's moves);
  the accumulators (G; n) and the intercepts' sums are added whole.

The step count of the mix is the start's plus every worker's steps, but for
the rows-weighted averages, where it is the start's plus the workers' mean
steps (W models averaged move as one model whose steps take W rows' mean
gradient: the contract's mini-batch count, docs/contract.md §7). Nothing
here runs a kernel: the states are read and written through the arrays a
pickle keeps (`Learner.__reduce__`), laid out as `model_io.layout` describes them, and
every weight is read caught up (`Learner.coef`), so the mixed state owes no
lazy catch-up. Pure NumPy, no Dask.
"""
from ._kernels import SAVED_INT64, Learner
from ._numpy import np
from ._registry import PENALTIES
from ._sklearn_names import schedule_of
from .model_io.layout import adagrad_steps, state_layout

#: What a rule mixes: "average" (weights by rows), "adagrad" (moves rescaled to
#: the summed accumulators' steps), "dual" (sums of increments).
MIXES = ("average", "adagrad", "dual")


def parallel_params(params):
    """The parameters the parallel mode trains with: schedule=None (the data-free
    default, the normalized schedule where the rule takes it) becomes "adagrad",
    whose mix is sound (`mix_kind`); a schedule given, or named by scikit-learn's
    learning_rate, is kept, and checked there (`params_kind`)."""
    if params["schedule"] is None and params.get("learning_rate") is None:
        return dict(params, schedule="adagrad")
    return params


def params_kind(params):
    """`mix_kind` of a model's parameters (`parallel_params`'), the schedule that
    scikit-learn's learning_rate names taken for it."""
    schedule = schedule_of(params.get("learning_rate"), params.get("power_t", 0.5), params["schedule"],
                           params["batch_size"])
    return mix_kind(params["update"], schedule, params["penalty"])


def mix_kind(update, schedule, penalty, step="gradient"):
    """How learners of this rule are mixed (MIXES); ValueError for the rules the
    parallel mode refuses, saying why and what to use instead."""
    penalty = "none" if penalty is None else penalty
    if schedule is None:
        raise ValueError("schedule=None reached the parallel mix unresolved: pass the parameters "
                         "through parallel_params first")
    if update in ("rda", "ftrl"):
        return "dual"
    if schedule == "normalized":
        why = ("schedule='normalized' cannot be trained in parallel: each worker rescales its weights "
               "by the largest value it met, so the workers' weights are in different units and their "
               "accumulators do not add up")
    elif schedule == "adagrad":
        return "adagrad"
    elif PENALTIES[penalty].family == "berhu":
        why = ("penalty='berhu' under a scalar schedule cannot be trained in parallel: its lazy state "
               "(the heap of weights in the l2 branch) has no mixed form here")
    else:
        return "average"
    raise ValueError(f"{why}; use schedule='adagrad', or the sequential mode (fit(..., sequential=True), "
                     f"fastprox train --sequential).")


class Contribution:
    """A worker's share of the next global model, as sums that add up across
    workers (`__add__`): ``rows`` and ``steps`` taken, the summed progressive
    ``loss``, the kernel's ``n_ops``, and named arrays of shape (K, d) or (K,)
    (the intercepts), d the worker's width; adding pads the narrower with the
    never-touched state (zeros).

    Sparse (``index``, the increasing features held, and ``width``, d): the
    (K, d) arrays but those of DENSE_ARRAYS hold only the columns of ``index``,
    shape (K, len(index)), every other entry being +0.0. A worker that met few
    of the model's features sends those only (`compact`); a sum is dense (its
    entries +0.0 where a side held none: the dense sum's bits). Sums of sparse
    sums were tried: their unions and scatters cost more CPU than the bytes
    they save (docs/dask.md)."""

    def __init__(self, rows, steps, loss, n_ops, arrays, parts=None, index=None, width=None):
        self.rows, self.steps, self.loss, self.n_ops, self.arrays = rows, steps, loss, n_ops, arrays
        self.parts = int(rows > 0) if parts is None else parts      # workers summed that trained
        self.index, self.width = index, width

    def __add__(self, other):
        a, b = self.dense(), other.dense()
        arrays = {name: _padded_sum(x, b.arrays[name]) for name, x in a.arrays.items()}
        return Contribution(self.rows + other.rows, self.steps + other.steps, self.loss + other.loss,
                            self.n_ops + other.n_ops, arrays, self.parts + other.parts)

    def _sparse_names(self):
        return [name for name, a in self.arrays.items() if a.ndim == 2 and name not in DENSE_ARRAYS]

    def dense(self):
        """This contribution with every array dense (itself if it is)."""
        if self.index is None:
            return self
        arrays = {name: _scattered(a, self.width, self.index) if name in self._sparse_names() else a
                  for name, a in self.arrays.items()}
        return Contribution(self.rows, self.steps, self.loss, self.n_ops, arrays, self.parts)

    def compact(self):
        """This contribution, sparse if its arrays (those of DENSE_ARRAYS aside) hold
        entries other than +0.0 on at most SPARSE_SHARE of the features."""
        names = self._sparse_names()
        if self.index is not None or not names:
            return self
        width = self.arrays[names[0]].shape[-1]
        held = np.zeros(width, dtype=bool)
        for name in names:          # an entry is held unless it is +0.0 (-0.0 is held)
            a = self.arrays[name]
            held |= np.any((a != 0) | np.signbit(a), axis=0)
            if np.count_nonzero(held) > SPARSE_SHARE * width:
                return self
        index = np.flatnonzero(held)
        arrays = {name: np.ascontiguousarray(a[:, index]) if name in names else a for name, a in self.arrays.items()}
        return Contribution(self.rows, self.steps, self.loss, self.n_ops, arrays, self.parts, index, width)

    @property
    def nbytes(self):
        return sum(a.nbytes for a in self.arrays.values()) + (0 if self.index is None else self.index.nbytes)


#: The (K, d) arrays of a contribution that stay dense in its sparse form: a worker's
#: shrinking of the coordinates it did not meet (FOBOS + AdaGrad), non-zero off its features.
DENSE_ARRAYS = ("shrink",)
#: The largest share of the features a sparse contribution holds (beyond it, dense).
SPARSE_SHARE = 0.25


def _scattered(values, width, index):
    """(K, len(index)) ``values`` as a (K, width) array, +0.0 elsewhere."""
    out = np.zeros(values.shape[:-1] + (width,))
    out[..., index] = values
    return out


def _padded_sum(a, b):
    if a.shape != b.shape:
        width = max(a.shape[-1], b.shape[-1])
        a, b = _widened(a, width), _widened(b, width)
    return a + b


def total(contributions):
    """The sum of a non-empty list of contributions."""
    result = contributions[0]
    for c in contributions[1:]:
        result = result + c
    return result


def _fields(learner, copy=True):
    """A learner's pickled arrays and scalars, and its fields by name as views into
    the state: entry fields (K, d), row fields (d,), the intercepts' ``bsum`` and
    ``bsquares`` (K,): (constructor's arguments, arrays, scalars, fields, entry
    names). ``copy`` False: the arrays are views of the learner's own (no copy of
    the model: for reading, or for writing a learner the caller owns, `_own`)."""
    if copy:
        _, args, state = learner.__reduce__()
        arrays = state["arrays"]
        scalars = {k: v for k, v in state.items() if k != "arrays"}
    else:
        args, arrays, scalars = learner.init_args(), _views(learner), {**learner.scalars(), **learner.average_state()}
    spec = dict(update=learner.update, schedule=learner.schedule, penalty=learner.penalty,
                n_outputs=learner.n_outputs, l1_ratio=learner.l1_ratio)
    st, K = arrays["state"], learner.n_outputs
    row, entry = state_layout(spec, st.shape[1])
    entries = st[:, len(row):].reshape(st.shape[0], K, len(entry))     # a view: the last axis split
    fields = {name: entries[:, :, i].T for i, name in enumerate(entry)}
    fields.update((name, st[:, i]) for i, name in enumerate(row))
    bstate = arrays["bstate"].reshape(K, -1)
    fields.update(bsum=bstate[:, 0], bsquares=bstate[:, 1])
    return args, arrays, scalars, fields, entry


def contribution(start, learner, rows, loss, kind, midpoint=None):
    """What ``learner``, trained from ``start`` (the global model it was given) on
    ``rows`` rows with summed progressive ``loss``, contributes to the mix of this
    `kind` (`mix_kind`); ``midpoint``: `Midpoint.early` of its round (the "adagrad"
    mix reads it; None: nothing known of the path, each move taken as settled)."""
    before = _fields(start, copy=False)[3]
    now, entry = _fields(learner, copy=False)[3:]

    def increment(name):            # now minus the start's (zeros beyond the start's width)
        out = np.array(now[name], dtype=np.float64)
        out[..., :before[name].shape[-1]] -= before[name]
        return out

    W, b = learner.coef(), learner.intercept_weights()
    if kind == "average":
        arrays = {"w": rows * W, "b": rows * b}
    elif kind == "adagrad":
        width = W.shape[-1]
        f, W_f, b_f = midpoint if midpoint is not None else (0.0, None, None)
        arrays = {**_adagrad_moves("", start.coef(), W, _widened(before["G"], width), increment("G"),
                                   start.delta, f, W_f),
                  **_adagrad_moves("b", start.intercept_weights(), b, before["bsquares"],
                                   increment("bsquares"), start.delta, f, b_f)}
    else:
        arrays = {name: increment(name) for name in entry + ("bsum", "bsquares") if name != "root"}
        arrays.update(_dual_moves(arrays[entry[0]], before[entry[0]], midpoint))
    return Contribution(rows, learner.t - start.t, loss, learner.n_ops - start.n_ops,
                        {k: np.ascontiguousarray(v, dtype=np.float64) for k, v in arrays.items()}).compact()


def mixed(start, summed, kind, own=False):
    """The next global model: ``start`` (the model every worker began from) moved by
    ``summed``, the sum of the workers' contributions; a new Learner, or with
    ``own`` (``start`` is the caller's to change, as `mixed_shard`'s shard) ``start``
    itself, changed in place (no copy of the model: the same bits)."""
    if not summed.rows:             # nobody trained: the model as it was
        return start if own else copied(start)
    a = summed.dense().arrays
    d = max(start.n_features, max(v.shape[-1] for v in a.values() if v.ndim == 2))
    base = start
    if d > start.n_features:        # features a worker met first: never touched before
        base, own = copied(start), False
        base.grow(d)
    args, arrays, scalars, f, entry = _fields(base, copy=not own)
    steps = summed.steps if kind != "average" else round(summed.steps / summed.parts)
    scalars = dict(scalars, t=start.t + steps, n_ops=start.n_ops + summed.n_ops)

    def wide(name):
        return _widened(a[name], d)

    if kind == "dual":
        f[entry[0]] += _dual_moved(wide(entry[0]), wide("met"), wide("early"), wide("fmove"), summed.parts)
        for name in entry[1:] + ("bsum", "bsquares"):
            if name != "root":
                f[name] += wide(name) if a[name].ndim == 2 else a[name]
        if "root" in f:
            f["root"][...] = np.sqrt(f["n"])
    else:
        if kind == "adagrad":
            wide_a = {name: wide(name) if v.ndim == 2 else v for name, v in a.items()}
            W, f["G"][...] = _adagrad_moved(base.coef(), f["G"], wide_a, "", base.delta, summed.parts)
            b, f["bsquares"][...] = _adagrad_moved(base.intercept_weights(), f["bsquares"], wide_a, "b",
                                                    base.delta, summed.parts)
            f["eta"][...] = adagrad_steps(dict(eta0=base.eta0, delta=base.delta), f["G"])
            f["last"][...] = scalars["t"]
        else:
            rows = max(summed.rows, 1)
            W, b = wide("w") / rows, a["b"] / rows
        f["w"][...] = W
        f["bsum"][...] = b
        if "P" in f:                # every weight current: stamps at the cumulants' origin
            f["P"][...] = 1.0
        if "Q" in f:
            f["Q"][...] = 0.0
        scalars.update(P=1.0, Q=0.0, since_rebase=0)
        if PENALTIES[base.penalty].family == "group":
            _stamp_groups(base, arrays, W, scalars["t"])
    learner = base if own else Learner(*args)
    learner.__setstate__({"arrays": arrays, **scalars})
    return learner


def mixed_shard(start, summed, lo, hi, kind):
    """Features [lo, hi) (``hi`` None: to the end, the features the workers met first
    included) of ``mixed(start, summed, kind)``, bit for bit, from ``summed``, the sum
    of the workers' `sharded` contributions of that range: the shard of the start
    made at the width the sum shows (so never grown) and mixed in place."""
    a = summed.dense().arrays
    width = max((v.shape[-1] for v in a.values() if v.ndim == 2), default=0)
    return mixed(shard(start, lo, hi, width), summed, kind, own=True)


def shardable(penalty):
    """Whether the mix of a rule with this ``penalty`` can be cut into ranges of
    features mixed apart (`sharded`, `mixed` of a `shard`, `joined`): a separable
    penalty (a group's norm couples its features; Berhu's heap spans them all)."""
    return PENALTIES["none" if penalty is None else penalty].family == "separable"


def shard_bounds(width, n):
    """The feature ranges (lo, hi) of ``n`` shards of a model of ``width`` features
    (the start's), about equal; the last one's ``hi`` None: it also holds the features
    the workers met first, beyond ``width``."""
    edges = [width * s // n for s in range(n)] + [None]
    return list(zip(edges[:-1], edges[1:]))


def sharded(contribution, lo, hi):
    """A contribution's features [lo, hi) (``hi`` None: to its end), dense, with its
    counts (and the intercepts' arrays, which every shard's mix reads): one worker's
    part of a shard's sum (reduce-scatter), the same bits as those columns of the
    whole sum once the shard's parts are added in the same order."""
    c = contribution.dense()
    arrays = {name: np.ascontiguousarray(a[:, lo:hi]) if a.ndim == 2 else a for name, a in c.arrays.items()}
    return Contribution(c.rows, c.steps, c.loss, c.n_ops, arrays, c.parts)


def shard(learner, lo, hi, width=0):
    """A new Learner of ``learner``'s features [lo, hi) (``hi`` None: to its end): its
    state rows, its intercepts, scalars and parameters (a `shardable` rule: no
    per-feature arrays beside the state), at least ``width`` features wide (the rows
    beyond the range's never touched, as `grow` makes them). The start of a shard's
    mix: ``mixed(shard(start, lo, hi), summed shards, kind)`` is those features of
    ``mixed(start, summed, kind)``, bit for bit."""
    rows = _views(learner)["state"][lo:hi]
    return _own(unpacked(learner), [rows], max(width, rows.shape[0]))


def joined(shards):
    """The Learner whose features are the ``shards``' in turn (mixed shards of one
    model, in order of their ranges; Learners or their `unpacked` parts): the
    intercepts and scalars are the first's (every shard's mix computes the same)."""
    shards = [s if isinstance(s, tuple) else unpacked(s) for s in shards]
    rows = [arrays["state"] for _, arrays, _ in shards]
    return _own(shards[0], rows, sum(r.shape[0] for r in rows))


def unpacked(learner):
    """``learner`` as its parts: (the constructor's arguments, the arrays a pickle
    keeps, as views of its own, the scalars). Pickled, they are the learner's bytes
    without the kernel object, which the receiving process then does not build (a
    new state allocated, then the received one copied in) before `joined` copies
    the rows again: the last round's mixed shards travel to the client so."""
    return learner.init_args(), _views(learner), {**learner.scalars(), **learner.average_state()}


def _views(learner):
    """The arrays a pickle keeps of ``learner`` (`Learner.__getstate__`'s), as views of
    its own (writable: copy them, or write only a learner that is the caller's)."""
    return {name: np.frombuffer(buf, dtype=np.int64 if name in SAVED_INT64 else np.float64).reshape(shape)
            for name, (buf, shape) in learner.saved_arrays().items()}


def _own(parts, rows, width):
    """A new Learner of the parameters, intercepts and scalars of ``parts`` (a
    learner's, `unpacked`), ``width`` features wide, whose first state rows are the
    blocks ``rows`` in turn (the rest never touched): written into the new learner's
    own state, the one allocation of the model (a pickle's round trip would copy it
    twice more)."""
    args, saved, scalars = parts
    out = Learner(width, *args[1:])
    arrays = {name: np.array(a) for name, a in saved.items() if name != "state"}
    arrays["state"] = state = _views(out)["state"]
    at = 0
    for block in rows:
        state[at:at + block.shape[0]] = block
        at += block.shape[0]
    out.__setstate__({"arrays": arrays, **scalars})
    return out


#: The most the rescaled moves of the workers that met a coordinate may add up to,
#: in units of one worker's move, where they had settled (docs/dask.md: a round in
#: which each worker reaches the coordinate's optimum then overshoots it by at most
#: sqrt(2) - 1), and where they still moved at a steady rate (their sum is then one
#: machine's move over all their rows, capped: the steadiness is read from one point).
MOST_MOVES = 2 ** 0.5
MOST_STEADY_MOVES = 2.5
#: The fewest workers in a round from which the mix squares the steadiness u (`_kept`):
#: with 2, u as read keeps enough of their moves over long rounds; with more, u squared
#: averages more of what many workers moved where they had begun to settle (docs/dask.md).
SQUARED_FROM = 3


class Midpoint:
    """A worker's model part-way through its round, for the "adagrad" and "dual"
    mixes to tell a coordinate still moving at a steady rate from one that has
    settled: the learner's caught-up weights and intercepts ("adagrad"), or its
    main dual sum (s; z: "dual"), kept when the round's rows reach 1, 2, 4, ...
    (or the first chunk boundary past them; the last two kept: O(model size)
    memory, a copy per doubling of the rows). ``kind``: the rule's mix
    (`mix_kind`); "average" reads none, and none are kept."""

    def __init__(self, kind="adagrad"):
        self.next, self.kept, self.kind = 1, [], kind
        self.active = kind in ("adagrad", "dual")

    def note(self, learner, rows, known=0):
        """Before a chunk is trained: keep ``learner``'s weights (or dual sum) if
        ``rows`` (the round's rows so far) reached the next power of two. ``known``:
        rows the round is known to hold (trained and read ahead); where it is at
        least twice the point after this one, and the chunks are cut at the points
        (`fastprox.dask._tasks._marked`), that later point is noted at most
        half-way, so this one is never read (`early`): it is passed without a copy
        (the same point read, the same bits)."""
        if not self.active or learner is None or rows < self.next:
            return
        while self.next <= rows:
            self.next *= 2
        if known >= 2 * self.next:
            return
        if self.kind == "adagrad":      # coef: read-only, a new array each step
            point = (rows, learner.coef(), learner.intercept_weights())
        else:
            fields, entry = _fields(learner, copy=False)[3:]
            point = (rows, np.array(fields[entry[0]]), None)
        self.kept = (self.kept + [point])[-2:]

    def early(self, rows):
        """(the fraction of the round's ``rows`` trained, the weights (or dual sum),
        the intercepts (None for a dual sum)) at the last point kept at most
        half-way, or None."""
        kept = [k for k in self.kept if 0 < k[0] <= rows / 2]
        return None if not kept else (kept[-1][0] / rows, kept[-1][1], kept[-1][2])


def _dual_moves(increment, before, midpoint):
    """What a dual rule's worker adds beyond its increments, for `_dual_moved`: where
    its main sum changed (it met the coordinate), 1 ("met"), the part of the
    ``increment`` made by the point part-way (``midpoint``: (f, that point's sum,
    -); without it, the whole increment) and f times the increment ("fmove")."""
    met = increment != 0
    if midpoint is None:
        return {"met": met.astype(np.float64), "early": increment, "fmove": np.zeros_like(increment)}
    f, S_f, _ = midpoint
    early = _widened(S_f, increment.shape[-1]) - _widened(before, increment.shape[-1])
    np.copyto(early, 0.0, where=~met)
    return {"met": met.astype(np.float64), "early": early, "fmove": f * increment}


def _dual_moved(move, met, early, fmove, workers):
    """The share of the workers' summed increments of a dual sum that the mix adds:
    the increments of the workers that met a coordinate (``met`` of them) added
    where they grew at a steady rate, averaged where they had settled (`_kept`); where
    one worker met it, its increment exactly; ``workers``: how many trained this round."""
    scale = _kept(move, early, fmove, np.maximum(met, 1.0), workers)
    np.copyto(scale, 1.0, where=met <= 1)
    return move * scale


def _adagrad_moves(prefix, W0, W, G0, G, delta, f=0.0, W_f=None):
    """FOBOS + AdaGrad: what a worker whose weights (or intercepts) went from W0 to W,
    its accumulators from G0 to G0 + G, adds to the mix (`_adagrad_moved`), with H its
    step's denominator delta + sqrt(G0 + G): where it met the coordinate (G > 0), its
    move times H, the part of it made by W_f, its weights after the fraction ``f`` of
    its rows (``early``: f times the move at a steady rate, the move for a weight
    settled by then; the whole move without W_f) and ``f`` times the move, H itself,
    and 1 if its weight crossed zero; elsewhere (its rows only shrank the weight, by
    the penalty) the shrinking's size times H; its G increments."""
    W0 = _widened(W0, W.shape[-1])
    H = G0 + G
    np.sqrt(H, out=H)
    H += delta                                      # delta + sqrt(G0 + G)
    met = G > 0
    unmet = ~met
    move = W - W0
    move *= H
    shrink = np.abs(move)                           # abs(W - W0) * H: H >= 0
    np.copyto(shrink, 0.0, where=met)
    np.copyto(move, 0.0, where=unmet)
    early = move
    if W_f is not None:
        early = _widened(W_f, W.shape[-1]) - W0
        early *= H
        np.copyto(early, 0.0, where=unmet)
    crossed = (W0 > 0) & (W < 0)                    # strictly across zero (W0 != 0, sign(W) == -sign(W0)),
    crossed |= (W0 < 0) & (W > 0)                   # in masks of a byte a feature, not signs of eight
    crossed &= met
    np.copyto(H, 0.0, where=unmet)
    return {prefix + "move": move, prefix + "early": early, prefix + "fmove": f * move,
            prefix + "reach": H, prefix + "crossed": crossed.astype(np.float64),
            prefix + "shrink": shrink, prefix + "g": G}


def _adagrad_moved(W0, G0, a, prefix, delta, workers):
    """FOBOS + AdaGrad's mixed weights (or intercepts) and accumulators from the start's
    W0 and G0 and the workers' summed `_adagrad_moves` ``a``, each worker's steps
    eta0 / (delta + sqrt(G_i)) rescaled to those of the summed accumulator G (factor
    (delta + sqrt(G_i)) / (delta + sqrt(G))). The moves of the workers that met a
    coordinate: u of their sum and 1 - u of their average (divided by kappa, the sum of
    their factors), u = (move - early) / (move - f move) clipped to [0, 1] (1 where
    they moved at a steady rate, 0 where they had settled part-way), squared from
    SQUARED_FROM ``workers`` (those that trained this round) on, at most
    MOST_STEADY_MOVES of one worker's; without part-way weights, their sum capped at
    MOST_MOVES. A weight they carry across zero where none of theirs crossed is 0;
    then shrunk towards zero by the others' shrinking, as their rows would after."""
    G = G0 + a[prefix + "g"]
    H = np.sqrt(G)
    H += delta                                      # delta + sqrt(G)
    some = H > 0
    kappa = _over(a[prefix + "reach"], H, some)     # the met workers' factors' sum
    np.maximum(kappa, 1.0, out=kappa)
    move, early, fmove = a[prefix + "move"], a[prefix + "early"], a[prefix + "fmove"]
    scale = _kept(move, early, fmove, kappa, workers)
    W = _over(move, H, some, out=kappa)
    W *= scale
    W += W0                                         # W0 + the scaled moves
    np.copyto(W, 0.0, where=(np.sign(W) == -np.sign(W0)) & (W0 != 0) & (a[prefix + "crossed"] == 0))
    shrunk = _over(a[prefix + "shrink"], H, some)
    np.subtract(np.abs(W), shrunk, out=shrunk)
    np.maximum(shrunk, 0.0, out=shrunk)
    shrunk *= np.sign(W)
    return shrunk, G


def _kept(move, early, fmove, kappa, workers):
    """Per coordinate, the factor of the summed moves of the workers that met it
    (``kappa``: their number, or the sum of their steps' factors; at least 1) that the
    mix keeps: u of their sum and 1 - u of their average, u = (move - early) /
    (move - fmove) clipped to [0, 1] (1 where they moved at a steady rate, 0 where
    they had settled part-way) and squared if the round had at least SQUARED_FROM
    ``workers``, at most MOST_STEADY_MOVES of one worker's and 1; without part-way
    points (``fmove`` 0), min(1, MOST_MOVES / kappa)."""
    rest = move - fmove                             # the move left after the fraction f at a steady rate
    u = move - early
    np.divide(u, rest, out=u, where=rest != 0)
    np.copyto(u, 0.0, where=rest == 0)
    np.clip(u, 0.0, 1.0, out=u)
    if workers >= SQUARED_FROM:
        np.square(u, out=u)
    steady = np.subtract(1, u, out=rest)
    steady /= kappa
    steady += u                                     # u + (1 - u) / kappa
    cap = np.divide(MOST_STEADY_MOVES, kappa, out=u)
    np.minimum(steady, cap, out=steady)
    np.minimum(steady, 1.0, out=steady)
    scale = np.divide(MOST_MOVES, kappa)            # without part-way points: min(1, MOST_MOVES / kappa)
    np.minimum(scale, 1.0, out=scale)
    np.copyto(scale, steady, where=fmove != 0)
    return scale


def _over(x, h, positive=None, out=None):
    """x / h, 0 where h is 0 (there x is 0: no step was taken); ``positive``: h > 0
    if known; ``out``: where to write it (a new array if None)."""
    positive = h > 0 if positive is None else positive
    out = np.zeros_like(x) if out is None else out
    np.divide(x, h, out=out, where=positive)
    np.copyto(out, 0.0, where=~positive)
    return out



def _widened(a, width):
    """An array of features on its last axis, padded with the never-touched state
    (zeros) to ``width`` features."""
    return a if a.shape[-1] == width else np.pad(a, [(0, 0)] * (a.ndim - 1) + [(0, width - a.shape[-1])])


def copied(learner):
    """An independent copy of a learner (its arrays its own)."""
    parts = unpacked(learner)
    return _own(parts, [parts[1]["state"]], learner.n_features)


def _stamp_groups(learner, arrays, W, t):
    """Group stamps of a model whose every block is current at step t with threshold
    sum 0 (the catch-up owes nothing), and the group norms squared_group reads."""
    arrays["gstamp"][...] = t if learner.penalty == "sparse_group" else 0.0
    norms2 = np.sum(W * W, axis=0)
    if learner.groups is not None:
        ids = learner.groups
        keep = ids >= 0
        norms2 = np.bincount(ids[keep], weights=norms2[keep], minlength=len(arrays["gnorm"]))
    arrays["gnorm"][...] = np.sqrt(norms2)
