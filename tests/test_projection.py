"""l1-ball projections (Duchi et al. 2008): against the sort oracle, KKT, tree invariants, cost."""
import pickle
import warnings

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from fastprox.projection import SparseL1Ball, project_l1_ball, project_l1_ball_sort

# Entries mixing ties, zeros (both signs), tiny, subnormal and huge magnitudes.
entries = st.one_of(
    st.sampled_from([0.0, -0.0, 1.0, -1.0, 2.5, -2.5, 1e-300, 5e-324, 1e100, -1e100]),
    st.floats(min_value=-1e6, max_value=1e6, allow_nan=False),
)
vectors = st.lists(entries, min_size=1, max_size=60).map(np.array)
radii = st.floats(min_value=1e-6, max_value=1e6)


def tolerance(v, radius):
    """Absolute rounding slack: theta and the entries it shrinks are computed
    from sums of up to n magnitudes."""
    return 1e-12 * (radius + np.abs(v).sum())


def assert_is_projection(v, radius, w):
    """w = Pi(v): inside the ball, and <v - w, u - w> <= 0 for every u in the
    ball, i.e. radius * ||v - w||_inf <= <v - w, w> (the ball's support function)."""
    tol = tolerance(v, radius)
    assert np.abs(w).sum() <= radius + tol
    r = v - w  # each entry off by up to ~eps * max|v|, which radius multiplies
    assert radius * np.abs(r).max() <= r @ w + tol * (radius + np.abs(r).max())
    assert np.all(w * v >= 0), "a projection never flips a sign"


@settings(max_examples=150, deadline=None)
@given(vectors, radii)
def test_pivot_projection_matches_sort_oracle(v, radius):
    w = project_l1_ball(v, radius)
    np.testing.assert_allclose(w, project_l1_ball_sort(v, radius), rtol=0, atol=tolerance(v, radius))
    assert_is_projection(v, radius, w)


@settings(max_examples=150, deadline=None)
@given(vectors, radii)
def test_tree_construction_projects(v, radius):
    ball = SparseL1Ball(v, radius)
    np.testing.assert_allclose(ball.to_dense(), project_l1_ball_sort(v, radius), rtol=0,
                               atol=tolerance(v, radius))
    ball._check_invariants()


@settings(max_examples=100, deadline=None)
@given(vectors)
def test_inside_the_ball_is_left_unchanged(v):
    radius = np.abs(v).sum() * 1.5 + 1.0
    for project in (project_l1_ball, project_l1_ball_sort):
        np.testing.assert_array_equal(project(v, radius), v)
    np.testing.assert_array_equal(SparseL1Ball(v, radius).to_dense(), v)


def test_known_projection():
    # theta = 1: |3|-1 + |-2|-1 = 3, the 0.5 is zeroed
    np.testing.assert_allclose(project_l1_ball([3.0, -2.0, 0.5], 3.0), [2.0, -1.0, 0.0])
    np.testing.assert_allclose(project_l1_ball([-5.0, 0.0, 0.0], 2.0), [-2.0, 0.0, 0.0])


def test_many_ties_are_linear_time_and_exact():
    v = np.full(200_000, -3.0)
    np.testing.assert_allclose(project_l1_ball(v, 10.0), np.full(v.size, -10.0 / v.size))


@pytest.mark.parametrize("radius", [0.0, -1.0, np.nan, np.inf, "one", None])
def test_bad_radius(radius):
    with pytest.raises(ValueError, match="radius"):
        project_l1_ball([1.0], radius)
    with pytest.raises(ValueError, match="radius"):
        project_l1_ball_sort([1.0], radius)
    with pytest.raises(ValueError, match="radius"):
        SparseL1Ball([1.0], radius)


@pytest.mark.parametrize("v", [[[1.0, 2.0]], [np.nan], [np.inf, 1.0], [1e308, 1e308]])
def test_bad_vector(v):
    with warnings.catch_warnings():
        warnings.simplefilter("error")          # the error says it all: no NumPy overflow warning first
        with pytest.raises(ValueError):
            project_l1_ball(v, 1.0)
        with pytest.raises(ValueError):
            SparseL1Ball(v, 1.0)


def run_sequence(d, radius, scale, steps, rng, check_every=50):
    """Random sparse additions, each checked against the dense oracle."""
    w0 = rng.normal(size=d) * scale
    ball = SparseL1Ball(w0, radius, seed=int(rng.integers(1 << 30)))
    reference = project_l1_ball_sort(w0, radius)
    for step in range(steps):
        s = int(rng.integers(0, min(d, 40) + 1))
        indices = rng.choice(d, size=s, replace=False)
        values = rng.normal(size=s) * scale * rng.choice([1e-3, 1.0, 10.0])
        ball.add(indices, values)
        dense = reference.copy()
        dense[indices] += values
        reference = project_l1_ball_sort(dense, radius)
        np.testing.assert_allclose(ball.to_dense(), reference, rtol=0, atol=1e-9 * radius)
        if step % check_every == 0:
            ball._check_invariants()
    ball._check_invariants()
    return ball


@pytest.mark.parametrize("d, radius, scale", [(1, 1.0, 1.0), (7, 2.0, 1.0), (300, 5.0, 1.0),
                                              (300, 1.0, 0.01), (2000, 50.0, 3.0)])
def test_long_random_sequences_keep_invariants(d, radius, scale):
    run_sequence(d, radius, scale, steps=800, rng=np.random.default_rng(d))


@settings(max_examples=50, deadline=None)
@given(st.integers(1, 30), radii, st.lists(st.tuples(st.lists(st.integers(0, 29), max_size=8), st.lists(entries, min_size=8, max_size=8)), max_size=30))
def test_hypothesis_sequences(d, radius, operations):
    ball = SparseL1Ball(np.zeros(d), radius)
    reference = np.zeros(d)
    for indices, values in operations:
        indices = [i % d for i in indices]
        values = np.array(values[:len(indices)])
        ball.add(indices, values)
        dense = reference.copy()
        np.add.at(dense, indices, values)  # a repeated index adds up
        reference = project_l1_ball_sort(dense, radius)
        np.testing.assert_allclose(ball.to_dense(), reference, rtol=0,
                                   atol=tolerance(dense, radius) + 1e-9 * radius)
    ball._check_invariants()


def test_growing_shift_triggers_a_rebuild():
    ball = SparseL1Ball(np.zeros(10), 1.0)
    reference = np.zeros(10)
    for step in range(3000):
        indices = [step % 10, (step + 3) % 10]
        ball.add(indices, [2.0, -2.0])
        dense = reference.copy()
        dense[indices] += [2.0, -2.0]
        reference = project_l1_ball_sort(dense, 1.0)
        assert ball.theta <= 1024.0 * 1.0
    np.testing.assert_allclose(ball.to_dense(), reference, atol=1e-12)
    ball._check_invariants()


def test_dot_copy_and_pickle():
    rng = np.random.default_rng(0)
    ball = run_sequence(50, 3.0, 1.0, steps=100, rng=rng)
    x_idx, x_val = np.array([0, 7, 49]), np.array([1.5, -2.0, 0.25])
    assert ball.dot(x_idx, x_val) == pytest.approx(ball.to_dense()[x_idx] @ x_val, abs=1e-12)
    twin = ball.copy()
    twin.add([3], [100.0])
    assert not np.array_equal(twin.to_dense(), ball.to_dense())
    ball._check_invariants()
    twin._check_invariants()
    np.testing.assert_allclose(pickle.loads(pickle.dumps(ball)).to_dense(), ball.to_dense(), atol=1e-12)


@pytest.mark.parametrize("seed", range(3))
def test_a_pickled_or_copied_ball_continues_bit_for_bit(seed):
    """Pickling (and copy.deepcopy, and copy) keep the exact state: the same
    updates after it give the same weights, shift and tree as the original's.
    A ball rebuilt from its dense weights differs by the rounding of its keys."""
    import copy
    rng = np.random.default_rng(seed)
    ball = run_sequence(50, 3.0, 1.0, steps=100, rng=rng)
    twins = [pickle.loads(pickle.dumps(ball)), copy.deepcopy(ball), ball.copy()]
    for _ in range(100):
        indices = rng.choice(50, size=4, replace=False)
        values = rng.normal(size=4)
        for b in [ball] + twins:
            b.add(indices, values)
    for twin in twins:
        np.testing.assert_array_equal(twin.to_dense(), ball.to_dense())
        assert (twin.theta, twin.nnz, twin.n_node_visits) == (ball.theta, ball.nnz, ball.n_node_visits)
        twin._check_invariants()


def test_a_corrupted_pickled_state_is_refused():
    """A state whose tree links leave the node array raises ValueError instead of
    being followed out of bounds."""
    restore, state = SparseL1Ball(np.ones(5), 2.0).__reduce__()
    nodes = state[5].copy()
    nodes["left"][0] = 99
    with pytest.raises(ValueError, match="tree links"):
        restore(*state[:5], nodes, state[6])
    with pytest.raises(ValueError, match="tree links"):
        restore(state[0], state[1], -3, *state[3:])


@pytest.mark.parametrize("indices, values", [([5], [1.0]), ([-1], [1.0]), ([[0]], [[1.0]]),
                                             ([0, 1], [1.0]), ([0], [np.nan]), ([0.5], [1.0])])
def test_bad_sparse_arguments(indices, values):
    ball = SparseL1Ball(np.ones(5), 10.0)
    with pytest.raises(ValueError):
        ball.add(indices, values)


@pytest.mark.parametrize("radius, indices, values", [
    (1.0, [0, 1], [1e308, 1e308]),              # two keys whose sum overflows
    (1e308, [0, 1, 0], [1e308, 1e308, 1e308]),  # one key overflows (a repeated index)
    (1e308, [2], [1.7e308]),                    # the ball's own norm and the value
])
def test_an_add_whose_norm_could_overflow_is_refused_and_leaves_the_ball(radius, indices, values):
    """Keys |w_j| + theta summed past the largest float would make the projection's
    shift inf or NaN (the ball was left all zeros, or with an inf weight): the add is
    refused before it changes anything."""
    ball = SparseL1Ball(np.array([0.0, 0.0, 0.5 * radius, 0.0]), radius)
    before = pickle.dumps(ball)
    with pytest.raises(ValueError, match="overflow.*rescale the values and the radius"):
        ball.add(indices, values)
    assert pickle.dumps(ball) == before
    ball._check_invariants()


def visits_per_add(n, s, rng, adds=3):
    """Mean tree nodes visited by .add of s random entries into a dense w in R^n."""
    ball = SparseL1Ball(rng.normal(size=n), 0.5 * n)  # half of the l1-norm: the projection is active
    start = ball.n_node_visits
    for _ in range(adds):
        ball.add(rng.choice(n, size=s, replace=False), rng.normal(size=s))
    return (ball.n_node_visits - start) / adds


def test_cost_grows_like_s_log_n():
    rng = np.random.default_rng(1)
    s = 256
    per_entry = {n: visits_per_add(n, s, rng) / s for n in (2**10, 2**13, 2**16, 2**19)}
    # a treap walk has ~1.39 log2 n nodes; removal and insertion make two walks
    for n, visits in per_entry.items():
        assert 1.0 * np.log2(n) <= visits <= 6.0 * np.log2(n), (n, visits)
    # multiplying n by 8 adds ~ s * const (log n), it does not multiply the cost by 8
    steps = np.diff([per_entry[n] for n in sorted(per_entry)])
    assert np.all(steps > 0) and np.all(steps < 3 * 2 * 1.39 * 3), steps
    # doubling s doubles the cost
    n = 2**16
    ratio = visits_per_add(n, 2 * s, rng) / visits_per_add(n, s, rng)
    assert 1.8 <= ratio <= 2.2, ratio


_SHARED_BALL = """
import threading
import numpy as np
from fastprox.projection import SparseL1Ball

n, threads, steps = 400, 4, 1500
wide = SparseL1Ball(np.zeros(n), 1e9)       # never projects: w is the sum of every add
tight = SparseL1Ball(np.zeros(n), 2.0)      # projects at nearly every add
start = threading.Barrier(threads)

def work(k):
    rng = np.random.default_rng(k)
    start.wait()
    for _ in range(steps):
        indices = rng.choice(n, 30, replace=False)
        for ball in (wide, tight):
            ball.add(indices, np.ones(30))
            ball.dot(indices, np.ones(30))
        if _ % 100 == 0:
            tight.to_dense(), tight.copy(), tight.nnz

workers = [threading.Thread(target=work, args=(k,)) for k in range(threads)]
for w in workers:
    w.start()
for w in workers:
    w.join()
assert wide.to_dense().sum() == threads * steps * 30, wide.to_dense().sum()
tight._check_invariants()
print("whole")
"""


def test_a_ball_shared_between_threads_loses_no_add_and_stays_a_tree():
    """add runs without the GIL: threads adding to one ball at once interleaved their
    treap splits and joins (a segfault within a few hundred adds); each call now holds
    the ball's lock. Run in a child process, which a crash cannot take the tests with."""
    import subprocess
    import sys
    done = subprocess.run([sys.executable, "-c", _SHARED_BALL], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and done.stdout.strip() == "whole", (done.returncode, done.stderr[-2000:])
