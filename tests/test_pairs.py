"""The kernels' results do not depend on the CPU's instruction set. The portable code
of ``_kernel/lanes/pairs.h`` (for CPUs without SSE2) gives, bit for bit, what its SSE2 code gives: a
small C program (``tests/c/pairs_lanes.c``) prints the bits of every function of the
header over random and special inputs, built both ways. The passes in lanes of
``_kernel/lanes/lanes.h`` (the single-output normalized and AdaGrad rows) give the portable code's
bits in every set this CPU runs (SSE2, AVX2, AVX-512): ``tests/c/lanes.c`` compares
them pass by pass, under AddressSanitizer where the compiler has it (a tail read past
a row's last value fails it), and the learners trained with each set are compared bit
for bit with the general step's."""
import subprocess
import sysconfig
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

from fastprox import _kernels
from fastprox._kernels import Learner

HEADERS = Path(__file__).resolve().parents[1] / "src" / "fastprox"
PROGRAMS = Path(__file__).resolve().parent / "c"
FLAGS = ["-O3", "-fno-math-errno", "-ffp-contract=off"]      # setup.py's


def build(tmp_path, program, *flags):
    compiler = (sysconfig.get_config_var("CC") or "cc").split()[0]
    exe = tmp_path / (program + "".join(flags))
    subprocess.run([compiler, *FLAGS, *flags, "-I", str(HEADERS), str(PROGRAMS / (program + ".c")),
                    "-o", str(exe), "-lm"], check=True, capture_output=True)
    return exe


def lanes(tmp_path, *flags):
    return subprocess.run([str(build(tmp_path, "pairs_lanes", *flags))], capture_output=True, check=True).stdout


@pytest.mark.slow
def test_portable_pairs_give_the_sse2_bits(tmp_path):
    sse2, portable = lanes(tmp_path).splitlines(), lanes(tmp_path, "-DPORTABLE").splitlines()
    assert len(sse2) == len(portable) == 200_000
    differ = [i for i, (a, b) in enumerate(zip(sse2, portable)) if a != b]
    assert not differ, f"{len(differ)} inputs differ, the first (line {differ[0]}): {sse2[differ[0]]} vs {portable[differ[0]]}"


@pytest.mark.slow
def test_every_width_of_lanes_gives_the_portable_bits(tmp_path, record_property):
    """tests/c/lanes.c on every set this CPU runs (its report names them: the CI log
    says which widths ran); under AddressSanitizer where the compiler has it."""
    try:
        exe = build(tmp_path, "lanes", "-fsanitize=address", "-g")
    except subprocess.CalledProcessError:
        exe = build(tmp_path, "lanes")
    run = subprocess.run([str(exe)], capture_output=True, text=True)
    report = run.stdout.splitlines()
    print("\n".join(report))
    record_property("lanes", "; ".join(report))
    assert run.returncode == 0, run.stdout + run.stderr
    tested = [line.split()[0] for line in report if ": ok," in line]
    assert tested == _kernels.lanes_available()[1:]        # every set but the portable code itself


def rows(dtype, index_dtype):
    """Rows of 0 to 40 distinct features (every padding of every width, and empty rows),
    binary values and others whose scale grows along the stream (the rescale's branch)."""
    rng = np.random.default_rng(3)
    n, d = 1500, 120
    lengths = rng.integers(0, 41, n)
    indices = np.concatenate([np.sort(rng.choice(d, k, replace=False)) for k in lengths])
    grow = np.repeat(1.0 + np.arange(n) / 300.0, lengths)
    data = np.where(rng.random(len(indices)) < 0.5, 1.0, rng.uniform(-2, 2, len(indices)) * grow)
    X = sp.csr_matrix((data.astype(dtype), indices.astype(index_dtype),
                       np.concatenate([[0], np.cumsum(lengths)]).astype(index_dtype)), shape=(n, d))
    y = np.where(X @ rng.normal(size=d) > 0, 1.0, -1.0)
    return X, y


# (schedule, penalty, step) of the rows that run in lanes: the normalized rows (no
# penalty: the defaults; l1) with either step, AdaGrad's under l1, l2 and elastic net.
RULES = [("normalized", p, s) for p in ("none", "l1") for s in ("invariant", "gradient")] + \
        [("adagrad", p, "gradient") for p in ("l1", "l2", "elasticnet", "none")]


def fitted(X, y, rule, general=False):
    """A learner of `rule` after two passes over X (the second shuffled), on its fast
    rows or (`general`) on the general step."""
    schedule, penalty, step = rule
    learner = Learner(X.shape[1], 1, "fobos", schedule, penalty, "log", alpha=1e-3, l1_ratio=0.5, eta0=0.5,
                      delta=1.0, step=step)
    if general:
        learner._use_general_step()
    assert learner.fast_rows == (None if general else "normalized" if schedule == "normalized" else "adagrad")
    for order in (None, np.random.default_rng(1).permutation(X.shape[0]).astype(np.int64)):
        learner.fit_rows(X.data, X.indices, X.indptr, y, None, order, 1)
    return learner


def trained(X, y, rule, general=False):
    """The state `fitted`'s learner ends with."""
    learner = fitted(X, y, rule, general)
    arrays = learner.saved_arrays()
    return b"".join(bytes(memoryview(a).cast("B")) for a, _ in arrays.values()), learner.scalars()


@pytest.mark.parametrize("rule", RULES, ids=["/".join(r) for r in RULES])
@pytest.mark.parametrize("types", [(np.float64, np.int32), (np.float32, np.int64)], ids=["f64-i32", "f32-i64"])
def test_every_width_trains_the_general_paths_model(rule, types):
    """Each set's fast rows end with the general step's state, bit for bit, whatever the
    CSR arrays' types (float32 values are converted for the lanes, float64 read in place)."""
    X, y = rows(*types)
    general = trained(X, y, rule, general=True)
    before = _kernels.lanes()
    differ = []
    try:
        for name in _kernels.lanes_available():
            _kernels.use_lanes(name)
            if trained(X, y, rule) != general:
                differ.append(name)
    finally:
        _kernels.use_lanes(before)
    assert not differ


def test_the_import_chooses_the_widest_set_but_avx512():
    available = _kernels.lanes_available()
    assert available[0] == "portable"
    assert _kernels.lanes() == [name for name in available if name != "avx512"][-1]
    with pytest.raises(ValueError, match="not available"):
        _kernels.use_lanes("avx1024")


@pytest.mark.parametrize("rule", RULES, ids=["/".join(r) for r in RULES])
def test_every_set_returns_with_the_upper_halves_zeroed(rule):
    """After each set's passes the upper halves of the vector registers are not in use
    (on a CPU whose XGETBV tells): an Intel core runs the SSE code that follows a pass
    that leaves them in use (the kernels' other loops, the interpreter) as if each
    instruction waited on them, until the next vzeroupper."""
    X, y = rows(np.float64, np.int32)
    before = _kernels.lanes()
    in_use = {}
    try:
        for name in _kernels.lanes_available():
            _kernels.use_lanes(name)
            fitted(X, y, rule)
            in_use[name] = _kernels.upper_state_in_use()
    finally:
        _kernels.use_lanes(before)
    assert not any(in_use.values()), in_use
