"""fastprox._allocator: glibc's thresholds, set by the command line's streaming
commands so that the memory of the chunks they free serves the next ones: the page
faults of a ``fastprox train`` do not grow with the passes over a file."""
import os
import subprocess
import sys

import numpy as np
import pytest
import scipy.sparse as sp

from fastprox import _allocator, dump_libsvm
from tests.support.cli_process import cli_command


def _glibc():
    try:
        return os.confstr("CS_GNU_LIBC_VERSION").startswith("glibc")
    except (ValueError, OSError, AttributeError):
        return False


GLIBC = _glibc()


def test_glibc_is_recognized_and_takes_the_thresholds():
    assert _allocator.GLIBC == GLIBC
    code = "from fastprox import _allocator; print(_allocator.keep_freed_memory())"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env=cli_command()[1])
    assert out.stdout.strip() == str(GLIBC)


def _faults(*argv):
    """(exit status, minor page faults) of ``fastprox ARGV`` in a fresh process."""
    command, env = cli_command(*argv)
    proc = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    stderr = proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    proc.stderr.close()
    assert proc.returncode == 0, stderr
    return usage.ru_minflt


@pytest.mark.skipif(not GLIBC, reason="the thresholds are glibc's")
def test_train_faults_do_not_grow_with_the_passes(tmp_path):
    """4 passes over a file of 4 chunks fault in about as many pages as 1: glibc's own
    rule (its thresholds raised to the blocks freed) gave back a chunk's memory and
    faulted it in again for a later one, thousands of pages more for the 3 passes."""
    rng = np.random.default_rng(0)
    rows, per_row = 40_000, 40
    indices = np.sort(rng.choice(1 << 16, size=(rows, per_row), replace=True), axis=1).ravel()
    X = sp.csr_matrix((rng.random(rows * per_row), indices, np.arange(0, rows * per_row + 1, per_row)),
                      shape=(rows, 1 << 16))
    X.sum_duplicates()
    path = tmp_path / "d.svm"
    dump_libsvm(X, np.where(np.arange(rows) % 2, 1, -1), path)
    model = tmp_path / "m.model"
    one = _faults("train", path, "--model", model, "--quiet")
    four = _faults("train", path, "--passes", 4, "--holdout-off", "--model", model, "--quiet")
    assert four - one < 2_000, (one, four)
