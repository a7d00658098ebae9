# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""Euclidean projection onto the l1-ball, dense and for sparse updates.

Duchi, Shalev-Shwartz, Singer & Chandra, "Efficient Projections onto the
l1-Ball for Learning in High Dimensions" (ICML 2008):

* ``project_l1_ball_sort``: Fig. 1, sort the magnitudes, O(n log n). The
  test oracle.
* ``project_l1_ball``: Fig. 2, randomized pivot, O(n) expected.
* ``SparseL1Ball``: Sec. 5 (Fig. 3-4), keeps ``w = Pi(w + g)`` up to date for
  s-sparse ``g`` in O(s log n), with a balanced search tree over the
  magnitudes holding subtree sums and counts, and a lazily applied global
  shift ``theta``.

The projection of ``v`` onto ``{w : ||w||_1 <= z}`` is ``v`` itself when
``||v||_1 <= z``, and otherwise the soft-threshold of ``v`` by the unique
``theta > 0`` with ``sum_i max(|v_i| - theta, 0) = z`` (signs restored, the
problem being symmetric in each coordinate's sign; ICML 2008, Lemma 3).
"""
import threading

import numpy as np

from fastprox._docstrings import sharing

cimport cython
from libc.math cimport fabs, isfinite
from libc.stdint cimport int32_t, uint32_t, uint64_t
from libc.string cimport memcpy
from fastprox._kernel.rules.prox cimport soft_threshold

# A SparseL1Ball whose lazy shift exceeds this many radii is rebuilt (shift
# reset to 0): keys are stored as |w_j| + theta, so their absolute rounding
# error grows like eps * theta; this bounds it by ~1e-13 * radius.
cdef double REBUILD_SHIFT_RADII = 1024.0

# SparseL1Ball.add refuses values that could make its key sums overflow: it bounds
# the sums, then asks that this multiple of the bound be finite, room for the
# rounding of a sum over a tree's path (a relative eps per level).
cdef double SUM_ROUNDING_ROOM = 1.0 + 2.0 ** -20


cdef inline uint64_t _xorshift(uint64_t* state) noexcept nogil:
    """xorshift64*: a fast generator for pivots and treap priorities."""
    state[0] ^= state[0] >> 12
    state[0] ^= state[0] << 25
    state[0] ^= state[0] >> 27
    return state[0] * <uint64_t>2685821657736338717ULL


cdef inline uint64_t _seed_state(uint64_t seed) noexcept nogil:
    """A non-zero xorshift state from any seed (splitmix64 finaliser)."""
    cdef uint64_t z = seed + <uint64_t>0x9E3779B97F4A7C15ULL
    z = (z ^ (z >> 30)) * <uint64_t>0xBF58476D1CE4E5B9ULL
    z = (z ^ (z >> 27)) * <uint64_t>0x94D049BB133111EBULL
    z = z ^ (z >> 31)
    return z if z != 0 else 1


def _check_radius(radius):
    """The radius as a float, or ValueError unless it is finite and > 0."""
    try:
        z = float(radius)
    except (TypeError, ValueError):
        raise ValueError(f"radius must be a finite number > 0, got {radius!r}") from None
    if not (isfinite(z) and z > 0.0):
        raise ValueError(f"radius must be a finite number > 0, got {radius!r}")
    return z


def _as_vector(v, name):
    """``v`` as a 1-D float64 array with a finite l1-norm, or ValueError."""
    x = np.ascontiguousarray(v, dtype=np.float64)
    if x.ndim != 1:
        raise ValueError(f"{name} must be 1-D, got shape {x.shape}; ravel it first")
    if not np.isfinite(x).all():
        raise ValueError(f"{name} must contain only finite values (no NaN or inf)")
    with np.errstate(over="ignore"):        # the ValueError below says it, not a warning
        norm = np.abs(x).sum()
    if not isfinite(norm):
        raise ValueError(f"the l1-norm of {name} overflows; rescale {name} and the radius together")
    return x


cdef void _shrink(const double[::1] v, double theta, double[::1] out) noexcept nogil:
    """out = sign(v) * max(|v| - theta, 0): the projection once theta is known."""
    cdef Py_ssize_t i
    for i in range(v.shape[0]):
        out[i] = soft_threshold(v[i], theta)


cdef double _theta_pivot(double[::1] u, double z, uint64_t seed) noexcept nogil:
    """theta for magnitudes ``u`` with sum(u) > z; permutes ``u`` in place.

    ICML 2008 Fig. 2: keep a candidate set U, split it around a random pivot
    u_k and test whether u_k belongs to the support, i.e. whether
    f(u_k) = sum_{u_j >= u_k} (u_j - u_k) < z; if so every element >= u_k does
    and U shrinks to the smaller ones, else to the larger ones. The
    partition is three-way so that ties with the pivot leave U together:
    with two-way partitions many equal magnitudes would cost O(n^2).
    """
    cdef Py_ssize_t lo = 0, hi = u.shape[0], lt, gt, i, rho = 0
    cdef double s = 0.0, ds, pivot, tmp
    cdef uint64_t state = _seed_state(seed)
    while lo < hi:
        pivot = u[lo + <Py_ssize_t>(_xorshift(&state) % <uint64_t>(hi - lo))]
        # u[lo:lt] < pivot, u[lt:gt] == pivot, u[gt:hi] > pivot
        lt = lo
        i = lo
        gt = hi
        ds = 0.0
        while i < gt:
            if u[i] < pivot:
                tmp = u[i]; u[i] = u[lt]; u[lt] = tmp
                lt += 1
                i += 1
            elif u[i] > pivot:
                gt -= 1
                tmp = u[i]; u[i] = u[gt]; u[gt] = tmp
                ds += tmp
            else:
                ds += pivot
                i += 1
        if (s + ds) - (rho + hi - lt) * pivot < z:
            s += ds
            rho += hi - lt
            hi = lt
        else:
            lo = gt
    return (s - z) / rho


def project_l1_ball(v, radius):
    """Euclidean projection of ``v`` onto ``{w : ||w||_1 <= radius}``.

    O(n) expected time (Duchi et al., ICML 2008, Fig. 2, randomized pivot).

    Parameters
    ----------
    v : array-like of shape (n,)
        The point to project.
    radius : float > 0
        The ball's radius z.

    Returns
    -------
    ndarray of float64 of shape (n,)
        The projection, a new array (a copy of ``v`` when already inside the
        ball).
    """
    cdef double z = _check_radius(radius)
    x = _as_vector(v, "v")
    mag = np.abs(x)
    if mag.sum() <= z:
        return x.copy()
    cdef double[::1] u = mag
    cdef double theta
    with nogil:
        theta = _theta_pivot(u, z, <uint64_t>u.shape[0])
    out = np.empty_like(x)
    _shrink(x, theta, out)
    return out


@sharing(project_l1_ball, also=("Returns",))
def project_l1_ball_sort(v, radius):
    """The same projection by sorting, O(n log n) (ICML 2008, Fig. 1).

    rho = max{j : u_(j) - (sum_{r<=j} u_(r) - z) / j > 0} over the magnitudes
    sorted in decreasing order, theta = (sum_{r<=rho} u_(r) - z) / rho. The
    test is evaluated as sum_{r<=j} u_(r) - j u_(j) < z, which is exactly 0 < z
    for j = 1 however large u_(1) is. Kept simple, as the oracle the faster
    projections are tested against.
    """
    z = _check_radius(radius)
    x = _as_vector(v, "v")
    u = np.sort(np.abs(x))[::-1]
    if u.sum() <= z:
        return x.copy()
    cumulative = np.cumsum(u)
    j = np.arange(1, u.size + 1)
    rho = np.flatnonzero(cumulative - j * u < z).max()
    out = np.empty_like(x)
    _shrink(x, (cumulative[rho] - z) / (rho + 1), out)
    return out


ctypedef struct Node:
    # One coordinate's tree node, 32 bytes: one cache line holds two, and a
    # visit reads one line (struct of arrays would read six).
    double key     # |w_j| + theta at the time j entered the tree
    double sum     # sum of the keys in the subtree
    int32_t left
    int32_t right
    int32_t size   # number of nodes in the subtree
    uint32_t prio  # treap priority (a max-heap)


@cython.final  # direct (inlinable) calls to the cdef methods, no vtable
cdef class SparseL1Ball:
    """``w`` inside the l1-ball, updated by ``w <- Pi(w + g)`` for sparse ``g``.

    ``SparseL1Ball(w, radius, seed=0)``; ``w`` is projected onto the ball.

    ICML 2008 Sec. 5 (Fig. 3-4). Write ``w_j = sign_j * (v_j - theta)`` for
    the non-zero coordinates: ``theta`` is a global shift applied lazily, and
    a search tree ordered by the keys ``v_j`` holds, at each node, the count
    and the sum of the keys in its subtree. Adding an s-sparse ``g`` then costs
    O(s log n):

    * each touched coordinate leaves the tree and re-enters with the key
      ``|w_j + g_j| + theta`` (Fig. 3; coordinates at zero are not in the
      tree: they stay zero whatever the later shifts);
    * if ``||w + g||_1 > radius``, one root-to-leaf walk finds the new shift
      ``T`` with ``sum_{v_j > T} (v_j - T) = radius`` from the counts and sums
      of the larger keys (the sparse form of Fig. 2's pivot test, Fig. 4);
    * every key ``<= T`` leaves the tree at once (one split, O(log n)), and
      ``theta = T``: no other coordinate is touched.

    The tree is a treap (a binary search tree that is a heap in random
    priorities) rather than the paper's red-black tree: it has the same
    O(log n) bounds, in expectation instead of in the worst case, and its
    split and join are a few lines each, where a red-black tree needs the
    long balancing, joining and splitting code that FOBOS Sec. 7.5 counts
    against this method. Ties between keys are broken by coordinate index.
    Insertion and removal walk down once and restructure only the part
    below the node (expected O(1) nodes for a treap).

    Membership is implicit: coordinate j is in the tree exactly when
    ``v_j > theta`` (``theta`` only grows between rebuilds), so the dropped
    subtree is never visited.

    Safe to share between threads: ``add`` runs without the GIL, so each call
    that reads or changes the tree holds the ball's own lock (two ``add`` at
    once would interleave their splits and joins into a cycle or a lost
    subtree, and a ``dot``, ``to_dense`` or pickle beside an ``add`` would read
    a tree half-way through one). Attributes: ``radius``, ``n_features``,
    ``theta`` (the lazy shift), ``nnz``, and ``n_node_visits``, the number of
    tree nodes visited so far, so that tests can check the O(s log n) cost
    without timing.
    """

    cdef readonly double radius
    cdef readonly Py_ssize_t n_features
    cdef readonly double theta  # the lazy global shift: w_j = sign_j * (key_j - theta)
    cdef int32_t root
    cdef int32_t nil            # the empty-tree sentinel, node n_features
    cdef Node* nodes
    cdef signed char* sgn
    cdef uint64_t rng
    cdef long long visits
    cdef object _buffers
    cdef object _mutex          # held by every call that reads or changes the tree

    def __cinit__(self):
        self._mutex = threading.Lock()

    def __init__(self, w, radius, seed=0):
        self.radius = _check_radius(radius)
        x = _as_vector(w, "w")
        if x.size >= np.iinfo(np.int32).max:
            raise ValueError(f"w has {x.size} coordinates; at most 2**31 - 2 are supported")
        self.n_features = x.size
        self.nil = <int32_t>x.size
        self.rng = _seed_state(<uint64_t>seed)
        self.visits = 0
        self._allocate()
        self._build(x)

    cdef _allocate(self):
        """Room for n_features + 1 nodes (cache-line aligned) and the signs, zeroed:
        the nodes never in the tree keep links in range, and a pickle holds no
        uninitialized memory."""
        cdef Py_ssize_t n = self.n_features + 1
        raw = np.zeros(n * sizeof(Node) + 64, np.uint8)
        signs = np.zeros(n, np.int8)
        cdef unsigned char[::1] r = raw
        cdef signed char[::1] sg = signs
        self.nodes = <Node*>(&r[0] + (64 - <size_t>&r[0] % 64) % 64)
        self.sgn = &sg[0]
        self._buffers = (raw, signs)

    cdef _build(self, const double[::1] w):
        """Make the tree hold ``w``, then project (O(n log n): one sort).

        The keys, sorted by (magnitude, index), go into a treap in O(n) with
        the stack construction of a Cartesian tree (a node's subtree is
        complete when it is popped, so its count and sum are filled then).
        """
        cdef Py_ssize_t j, k, top = 0
        cdef int32_t x, last
        magnitude = np.abs(np.asarray(w))
        members = np.flatnonzero(magnitude > 0.0)
        cdef int32_t[::1] order = members[np.argsort(magnitude[members], kind="stable")].astype(np.int32)
        cdef int32_t[::1] stack = np.empty(order.shape[0] + 1, np.int32)
        self.theta = 0.0
        with nogil:
            for j in range(self.nil):
                self.nodes[j].key = fabs(w[j])
                self.sgn[j] = -1 if w[j] < 0.0 else 1
            self.nodes[self.nil] = Node(0.0, 0.0, self.nil, self.nil, 0, 0)
            for k in range(order.shape[0]):
                x = order[k]
                self.nodes[x].prio = <uint32_t>(_xorshift(&self.rng) >> 32)
                self.nodes[x].right = self.nil
                last = self.nil
                while top > 0 and self.nodes[stack[top - 1]].prio < self.nodes[x].prio:
                    top -= 1
                    last = stack[top]
                    self._pull(last)
                self.nodes[x].left = last
                if top > 0:
                    self.nodes[stack[top - 1]].right = x
                stack[top] = x
                top += 1
            while top > 0:
                top -= 1
                self._pull(stack[top])
            self.root = stack[0] if order.shape[0] > 0 else self.nil
            self._project()

    # --- treap primitives (all nogil; n_node_visits counts their nodes) ---

    cdef inline void _pull(self, int32_t t) noexcept nogil:
        """Recompute t's subtree count and key sum from its children."""
        cdef Node* n = &self.nodes[t]
        n.size = self.nodes[n.left].size + self.nodes[n.right].size + 1
        n.sum = self.nodes[n.left].sum + self.nodes[n.right].sum + n.key

    cdef inline bint _before(self, int32_t a, int32_t b) noexcept nogil:
        """The tree order: by key, ties broken by coordinate index."""
        cdef double ka = self.nodes[a].key, kb = self.nodes[b].key
        return ka < kb or (ka == kb and a < b)

    cdef void _split(self, int32_t t, int32_t x, int32_t* lo, int32_t* hi) noexcept nogil:
        """Split subtree t into the nodes before x (lo) and after x (hi)."""
        if t == self.nil:
            lo[0] = self.nil
            hi[0] = self.nil
            return
        self.visits += 1
        if self._before(t, x):
            self._split(self.nodes[t].right, x, &self.nodes[t].right, hi)
            lo[0] = t
        else:
            self._split(self.nodes[t].left, x, lo, &self.nodes[t].left)
            hi[0] = t
        self._pull(t)

    cdef int32_t _join(self, int32_t a, int32_t b) noexcept nogil:
        """Join two treaps, every node of ``a`` before every node of ``b``."""
        if a == self.nil:
            return b
        if b == self.nil:
            return a
        self.visits += 1
        if self.nodes[a].prio > self.nodes[b].prio:
            self.nodes[a].right = self._join(self.nodes[a].right, b)
            self._pull(a)
            return a
        self.nodes[b].left = self._join(a, self.nodes[b].left)
        self._pull(b)
        return b

    cdef int32_t _insert(self, int32_t t, int32_t x) noexcept nogil:
        """Insert the childless node x into subtree t; the new subtree root.

        Walk down past the higher priorities; x takes the place reached and
        the rest splits around it (expected O(1) nodes for a treap). Counts
        and sums are recomputed from the children on the way back up: an
        incremental ``sum += key`` then ``sum -= key`` would lose the small
        keys next to a huge one.
        """
        if t == self.nil:
            self._pull(x)
            return x
        self.visits += 1
        if self.nodes[x].prio > self.nodes[t].prio:
            self._split(t, x, &self.nodes[x].left, &self.nodes[x].right)
            self._pull(x)
            return x
        if self._before(x, t):
            self.nodes[t].left = self._insert(self.nodes[t].left, x)
        else:
            self.nodes[t].right = self._insert(self.nodes[t].right, x)
        self._pull(t)
        return t

    cdef int32_t _erase(self, int32_t t, int32_t x) noexcept nogil:
        """Remove node x from subtree t (x is in it); the new subtree root."""
        self.visits += 1
        if t == x:
            return self._join(self.nodes[x].left, self.nodes[x].right)
        if self._before(x, t):
            self.nodes[t].left = self._erase(self.nodes[t].left, x)
        else:
            self.nodes[t].right = self._erase(self.nodes[t].right, x)
        self._pull(t)
        return t

    cdef int32_t _drop_upto(self, int32_t t, double cut) noexcept nogil:
        """Remove every key <= cut from subtree t (one root-to-leaf walk)."""
        if t == self.nil:
            return t
        self.visits += 1
        if self.nodes[t].key <= cut:
            return self._drop_upto(self.nodes[t].right, cut)
        self.nodes[t].left = self._drop_upto(self.nodes[t].left, cut)
        self._pull(t)
        return t

    # --- the projection (Sec. 5) ---

    cdef double _new_shift(self) noexcept nogil:
        """The shift T with sum_{v_j > T} (v_j - T) = radius (tree over the ball).

        Walk down from the root carrying the count and sum of the keys after
        the current subtree. Node t is in the support iff
        f(v_t) = sum_{v >= v_t} (v - v_t) < radius: then go left for a smaller
        support element, else right. The smallest support element found
        gives T = (sum of the support - radius) / (its size).
        """
        cdef int32_t t = self.root
        cdef Node* r
        cdef double after_sum = 0.0, s, best_sum = 0.0
        cdef Py_ssize_t after_count = 0, c, best_count = 1
        while t != self.nil:
            self.visits += 1
            r = &self.nodes[self.nodes[t].right]
            s = after_sum + r.sum + self.nodes[t].key
            c = after_count + r.size + 1
            if s - c * self.nodes[t].key < self.radius:
                best_sum = s
                best_count = c
                after_sum = s
                after_count = c
                t = self.nodes[t].left
            else:
                t = self.nodes[t].right
        return (best_sum - self.radius) / best_count

    cdef void _project(self) noexcept nogil:
        """Restore ||w||_1 <= radius: find the new shift, drop what it zeroes."""
        cdef double shift
        if self.nodes[self.root].sum - self.nodes[self.root].size * self.theta <= self.radius:
            return
        shift = self._new_shift()
        if shift > self.theta:  # rounding can only make a tiny shift look negative
            self.root = self._drop_upto(self.root, shift)
            self.theta = shift

    cdef void _add(self, const Py_ssize_t[::1] indices, const double[::1] values) noexcept nogil:
        """w <- w + g on the touched coordinates (Fig. 3), then project."""
        cdef Py_ssize_t k
        cdef int32_t j
        cdef double u
        for k in range(indices.shape[0]):
            j = <int32_t>indices[k]
            u = values[k]
            if self.nodes[j].key > self.theta:
                u += self.sgn[j] * (self.nodes[j].key - self.theta)
                self.root = self._erase(self.root, j)
            self.nodes[j].key = fabs(u) + self.theta
            self.sgn[j] = -1 if u < 0.0 else 1
            if self.nodes[j].key > self.theta:
                self.nodes[j].left = self.nil
                self.nodes[j].right = self.nil
                self.nodes[j].prio = <uint32_t>(_xorshift(&self.rng) >> 32)
                self.root = self._insert(self.root, j)
        self._project()

    cdef bint _sums_stay_finite(self, const double[::1] values) noexcept nogil:
        """Whether the tree's key sums stay finite, with room for their rounding, after
        adding ``values``: each value moves the sum of the keys by at most its magnitude
        plus ``theta`` (a coordinate entering the tree), so that a bound checked before
        the update refuses it with the ball unchanged, where an overflow found after
        would have left it corrupted."""
        cdef double bound = self.nodes[self.root].sum + values.shape[0] * self.theta
        cdef Py_ssize_t k
        for k in range(values.shape[0]):
            bound += fabs(values[k])
        return isfinite(bound * SUM_ROUNDING_ROOM)

    cdef inline double _weight(self, Py_ssize_t j) noexcept nogil:
        """w_j, read through the lazy shift."""
        if self.nodes[j].key > self.theta:
            return self.sgn[j] * (self.nodes[j].key - self.theta)
        return 0.0

    # --- Python API ---

    def _sparse_args(self, indices, values):
        """(indices, values) as checked intp / float64 arrays, or ValueError."""
        idx = np.asarray(indices)
        if idx.ndim != 1 or not (idx.size == 0 or np.issubdtype(idx.dtype, np.integer)):
            raise ValueError("indices must be a 1-D array of integers")
        idx = np.ascontiguousarray(idx, dtype=np.intp)
        val = np.ascontiguousarray(values, dtype=np.float64)
        if val.shape != idx.shape:
            raise ValueError(f"indices and values must have the same length, got {idx.size} and {val.size}")
        if idx.size and (idx.min() < 0 or idx.max() >= self.n_features):
            raise ValueError(f"indices must lie in [0, {self.n_features})")
        if not np.isfinite(val).all():
            raise ValueError("values must be finite (no NaN or inf)")
        return idx, val

    def add(self, indices, values):
        """w <- Pi(w + g) for g with g[indices] = values, zero elsewhere.

        O(s log n) for s indices. A repeated index adds its values up.
        """
        idx, val = self._sparse_args(indices, values)
        cdef const Py_ssize_t[::1] i = idx
        cdef const double[::1] v = val
        if not self._sums_stay_finite(v):
            raise ValueError("the l1-norm of w + values could overflow (its bound exceeds the largest float); "
                             "rescale the values and the radius together")
        with self._mutex:
            with nogil:
                self._add(i, v)
            if self.theta > REBUILD_SHIFT_RADII * self.radius:
                self._build(self._dense())

    def dot(self, indices, values):
        """<w, x> for the sparse x with x[indices] = values, in O(s)."""
        idx, val = self._sparse_args(indices, values)
        cdef const Py_ssize_t[::1] i = idx
        cdef const double[::1] v = val
        cdef double total = 0.0
        cdef Py_ssize_t k
        with self._mutex:
            with nogil:
                for k in range(i.shape[0]):
                    total += v[k] * self._weight(i[k])
        return total

    def to_dense(self):
        """w as a new float64 array, O(n)."""
        with self._mutex:
            return self._dense()

    cdef _dense(self):
        """w as a new float64 array (the caller holds the lock)."""
        out = np.empty(self.n_features)
        cdef double[::1] o = out
        cdef Py_ssize_t j
        with nogil:
            for j in range(self.nil):
                o[j] = self._weight(j)
        return out

    def copy(self):
        """An independent copy (same tree, shift and generator state), O(n)."""
        return _restored_ball(*self.__reduce__()[1])

    def __reduce__(self):
        """The exact state: the nodes (keys, subtree sums, tree shape), the signs, the
        shift and the generator, so that an unpickled ball continues as this one
        would, bit for bit. A ball rebuilt from ``to_dense()`` would not: its keys
        |w_j| + theta and its subtree sums round differently."""
        cdef Py_ssize_t n = self.n_features + 1
        with self._mutex:
            return _restored_ball, (self.radius, self.theta, self.root, self.rng, self.visits,
                                    np.asarray(<Node[:n]> self.nodes).copy(),
                                    np.asarray(<signed char[:n]> self.sgn).copy())

    @property
    def nnz(self):
        """Number of non-zero coordinates of w (the nodes in the tree)."""
        with self._mutex:
            return self.nodes[self.root].size

    @property
    def n_node_visits(self):
        """Tree nodes visited by all updates so far (a cost counter)."""
        return self.visits

    def _check_invariants(self):
        """Raise AssertionError unless the tree is a valid treap for w.

        Checks search order by (key, index), heap order in priority, every
        subtree count and sum, membership (exactly the keys > theta are in
        the tree) and ||w||_1 <= radius up to the rounding of the weights
        ``key - theta`` (eps * key each). O(n), for tests.
        """
        nil = self.nil
        nodes = [self.nodes[j] for j in range(nil + 1)]  # as dicts
        seen = []
        stack = [(self.root, None, None)] if self.root != nil else []
        while stack:
            t, low, high = stack.pop()
            seen.append(t)
            node = nodes[t]
            assert low is None or (nodes[low]["key"], low) < (node["key"], t), f"order broken at node {t}"
            assert high is None or (node["key"], t) < (nodes[high]["key"], high), f"order broken at node {t}"
            for child in (node["left"], node["right"]):
                if child != nil:
                    assert nodes[child]["prio"] <= node["prio"], f"heap order broken at node {t}"
            if node["left"] != nil:
                stack.append((node["left"], low, t))
            if node["right"] != nil:
                stack.append((node["right"], t, high))
        for t in seen:
            node = nodes[t]
            l, r = nodes[node["left"]], nodes[node["right"]]
            assert node["size"] == l["size"] + r["size"] + 1, f"count wrong at node {t}"
            assert node["sum"] == l["sum"] + r["sum"] + node["key"], f"sum wrong at node {t}"
        assert nodes[nil]["size"] == 0 and nodes[nil]["sum"] == 0.0, "sentinel modified"
        members = [j for j in range(nil) if nodes[j]["key"] > self.theta]
        assert sorted(seen) == members, "the tree does not hold exactly the keys > theta"
        norm = np.abs(self.to_dense()).sum()
        slack = 1e-12 * self.radius + 4 * np.finfo(float).eps * nodes[self.root]["sum"]
        assert norm <= self.radius + slack, f"||w||_1 = {norm!r} > radius {self.radius!r}"
        return True


def _restored_ball(radius, theta, root, rng, visits, nodes, signs):
    """The ball of `SparseL1Ball.__reduce__`'s state; ValueError for a state whose
    tree links leave the node array (a corrupted pickle), before any is followed."""
    cdef SparseL1Ball ball = SparseL1Ball.__new__(SparseL1Ball)
    cdef const Node[::1] source = np.ascontiguousarray(nodes)
    cdef const signed char[::1] sign_source = np.ascontiguousarray(signs, dtype=np.int8)
    n = source.shape[0]
    links = np.concatenate([[root], nodes["left"], nodes["right"]])
    if n < 1 or sign_source.shape[0] != n or links.min() < 0 or links.max() >= n:
        raise ValueError("not a SparseL1Ball's state: its tree links leave its node array")
    ball.radius = _check_radius(radius)
    ball.n_features = n - 1
    ball.nil = <int32_t>(n - 1)
    ball.theta = theta
    ball.root = root
    ball.rng = rng
    ball.visits = visits
    ball._allocate()
    memcpy(ball.nodes, &source[0], n * sizeof(Node))
    memcpy(ball.sgn, &sign_source[0], n)
    return ball
