"""A large state (`buffers.LAZY_BYTES`, 256 MiB, and more) whose untouched rows are
zeros is calloc'd (`pages.ZeroPages`): its memory is the pages training touches, not
the whole state, as Vowpal Wabbit's ``-b 28`` weights are; and it trains the bits of a
state zeroed at once. Memory is measured in a fresh interpreter (its own peak resident
set), as complexity: a bound far below the state's size, no time."""
import copy
import pickle
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import scipy.sparse as sp

from fastprox._kernels import Learner
from tests.support.cli_process import cli_command

#: Features of a state past LAZY_BYTES under the defaults' layout (three fields a row:
#: 2^24 x 24 bytes = 384 MiB).
WIDE = 1 << 24


def rows(seed=0, n=400, d=100):
    """n rows over the first d features (each feature a few times)."""
    rng = np.random.default_rng(seed)
    X = sp.random(n, d, density=0.1, format="csr", random_state=rng)
    return X, np.where(rng.random(n) < 0.5, 1.0, -1.0)


def trained(n_features, penalty="none", schedule="normalized", step="invariant", update="fobos", **kwargs):
    X, y = rows()
    learner = Learner(n_features, 1, update, schedule, penalty, "log", eta0=0.5, step=step, **kwargs)
    learner.fit_rows(X.data, X.indices, X.indptr, y, None, None, 1)
    return learner


def test_a_large_state_trains_the_bits_of_a_small_one():
    """The same rows into 2^24 features (calloc'd) and into 100 (zeroed at once): the
    same weights, bit for bit, on the features touched, zeros beyond, after a pickle too."""
    wide, narrow = trained(WIDE), trained(100)
    assert wide.state_on_touch and not narrow.state_on_touch
    for learner in (wide, pickle.loads(pickle.dumps(wide))):
        index, values = learner.changed_state()
        assert (index.tobytes(), values.tobytes()) == tuple(a.tobytes() for a in narrow.changed_state())
        state = np.frombuffer(learner.saved_arrays()["state"][0], dtype=np.float64)
        assert len(state) == WIDE * 3 and not state[300:].any()


def test_a_large_model_reads_as_the_bits_of_a_small_one():
    """coef of 2^25 features (a 256 MiB array: calloc'd, its zeros unwritten) holds the
    small learner's weights bit for bit and zeros beyond; a model file read back keeps
    its state calloc'd."""
    wide, narrow = trained(1 << 25), trained(100)
    coef = wide.coef()
    assert coef.shape == (1, 1 << 25) and not coef.flags.writeable
    assert coef[:, :100].tobytes() == narrow.coef().tobytes() and not coef[:, 100:].any()


@pytest.mark.parametrize("update, average", [("rda", 0), ("ftrl", 50)])
def test_a_large_models_margins_are_the_bits_of_a_small_ones(update, average):
    """RDA's and FTRL's untouched weights are -0.0: coef keeps them, every page written,
    but the margins read an array that leaves them unwritten (+0.0) and give the small
    learner's margins bit for bit, NaN rows refused alike."""
    options = dict(update=update, schedule="adagrad", penalty="l1", step="gradient", alpha=1e-3,
                   average=average)
    wide, narrow = trained(1 << 25, **options), trained(100, **options)
    X, _ = rows(seed=1)
    X = sp.csr_matrix((-X.data, X.indices, X.indptr), shape=X.shape)    # (signs of the zero products)
    for averaged in (False, True)[:1 + bool(average)]:
        coef = wide.coef(averaged)
        assert coef[:, :100].tobytes() == narrow.coef(averaged).tobytes()
        assert not coef[:, 100:].any() and (averaged or np.signbit(coef[:, 100:]).all())
        margins = wide.margins(X.data, X.indices, X.indptr, 1 << 25, averaged)
        assert margins.tobytes() == narrow.margins(X.data, X.indices, X.indptr, 100, averaged).tobytes()
    bad = X.copy()
    bad.data[0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        wide.margins(bad.data, bad.indices, bad.indptr, 1 << 25)


def resident_bytes():
    """This process's resident set (VmRSS), in bytes."""
    return int(open("/proc/self/status").read().split("VmRSS:")[1].split()[0]) * 1024


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/status")
def test_an_rda_models_sparse_reads_take_the_pages_it_touched():
    """An RDA classifier over 2^25 columns: sparsify()'s coef_ and n_nonzero_rows_ need
    only the non-zeros, and read them without the -0.0 weights that coef_ writes (256
    MiB resident before); they and group_norms_ (a dense (d,) array by definition) give
    the values coef_ gives."""
    from fastprox import ProxClassifier
    X, y = rows()
    X = sp.csr_matrix((X.data, X.indices, X.indptr), shape=(X.shape[0], 1 << 25))
    est = ProxClassifier(update="rda", schedule="adagrad", penalty="l1", alpha=1e-3).fit(X, y)
    before = resident_bytes()
    sparse = est.sparsify().coef_
    rows_on = est.n_nonzero_rows_
    assert resident_bytes() - before < 64 << 20
    norms = est.group_norms_
    dense = est.densify().coef_
    assert np.signbit(dense[0, 100:]).all()
    assert (sparse != sp.csr_matrix(dense)).nnz == 0 and sparse.nnz == np.count_nonzero(dense)
    assert rows_on == np.count_nonzero(dense) and norms.tobytes() == np.sqrt(dense[0] ** 2).tobytes()


def test_a_large_states_copy_and_pickle_keep_its_changed_rows():
    """A pickle (and so `copy.copy`) of a state taken page by page holds its changed rows,
    as a model file does, not the 384 MiB state: the copy's state is calloc'd too, and
    bit for bit the original's, and goes on training as it would."""
    wide = trained(WIDE)
    data = pickle.dumps(wide)
    assert len(data) < 1 << 20
    for twin in (pickle.loads(data), copy.copy(wide)):
        assert twin.state_on_touch
        assert [a.tobytes() for a in twin.changed_state()] == [a.tobytes() for a in wide.changed_state()]
        assert pickle.dumps(twin) == data
    X, y = rows(seed=2)
    twin = copy.copy(wide)
    for learner in (wide, twin):
        learner.fit_rows(X.data, X.indices, X.indptr, y, None, None, 1)
    assert [a.tobytes() for a in twin.changed_state()] == [a.tobytes() for a in wide.changed_state()]


def test_a_state_stamped_at_other_origins_is_zeroed_at_once():
    """Scalar FOBOS under l2 stamps every row with P = 1: its state is written at once
    (`buffers.LAZY_BYTES` leaves such states eager), and trains as before."""
    wide = trained(WIDE, "l2", "invsqrt", "gradient")
    assert not wide.state_on_touch
    narrow = trained(100, "l2", "invsqrt", "gradient")
    assert [a.tobytes() for a in wide.changed_state()] == [a.tobytes() for a in narrow.changed_state()]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/status")
@pytest.mark.parametrize("update", ["fobos", "rda"])
def test_a_state_of_2_to_the_28_features_takes_the_pages_training_touches(tmp_path, update):
    """`fastprox train -b 28` (Vowpal Wabbit's habit) of a small file: the state is 6 GiB
    (2^28 x 24 bytes; RDA's 4 GiB); zeroed at once it was all resident (6.3 GB peak, 10 s
    on this machine). Now the process's peak stays a few dozen MB, the note says the
    memory is taken as training touches it, and the model trains; so does predicting
    with it (RDA's -0.0 weights made its predictions' weights 2 GiB resident)."""
    data = tmp_path / "small.vw"
    data.write_text("".join(f"{1 if i % 3 else -1} |a w{i % 17} x{i % 5}:0.5 |b z{i % 11}\n" for i in range(300)))
    command, env = cli_command("train", data, "-b", "28", "--update", update, "--passes", "3",
                               "--readable-model", tmp_path / "r", "--model", tmp_path / "m")
    # (the peak of this process's own memory, VmHWM: ru_maxrss keeps, across exec, the
    # peak of the process it was forked from)
    script = textwrap.dedent(f"""
        import sys
        from fastprox.cli import main
        status = main({[str(a) for a in command[command.index("train"):]]!r})
        peak = open("/proc/self/status").read().split("VmHWM:")[1].split()[0]
        print(status, peak, file=sys.stderr)
    """)
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=300)
    *lines, last = done.stderr.splitlines()
    status, peak_kb = map(int, last.split())
    assert status == 0 and (tmp_path / "m").exists(), done.stderr
    assert peak_kb < 400 * 1024, peak_kb           # the state alone: 6 GiB
    assert (tmp_path / "r").read_text().count(":") > 20     # (RDA's readable model: 2.1 GB peak)
    assert any(f"features reserves {6.0 if update == 'fobos' else 4.0} GiB of memory, taken page by page as training touches its features"
               in line for line in lines), lines
    # predicting with it reads its weights (2 GiB as a dense array) as the pages it touched
    script = script.replace(repr([str(a) for a in command[command.index("train"):]]),
                            repr(["predict", str(tmp_path / "m"), str(data), "--out", str(tmp_path / "p")]))
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=300)
    status, peak_kb = map(int, done.stderr.splitlines()[-1].split())
    assert status == 0 and len((tmp_path / "p").read_text().splitlines()) == 300, done.stderr
    assert peak_kb < 400 * 1024, peak_kb           # (before: 4.2 GB; RDA's 2.1 GB)
    from fastprox.model_io.loader import read_model
    assert read_model(tmp_path / "m").learner.state_on_touch
