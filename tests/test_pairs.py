"""The portable code of ``_pairs.h`` (for CPUs without SSE2) gives, bit for bit,
what its SSE2 code gives: the kernels' results do not depend on the CPU's
instruction set. A small C program (``tests/c/pairs_lanes.c``) prints the bits of
every function of the header over random and special inputs, built both ways."""
import subprocess
import sysconfig
from pathlib import Path

import pytest

HEADERS = Path(__file__).resolve().parents[1] / "src" / "fastprox"
PROGRAM = Path(__file__).resolve().parent / "c" / "pairs_lanes.c"


def lanes(tmp_path, *flags):
    compiler = (sysconfig.get_config_var("CC") or "cc").split()[0]
    exe = tmp_path / ("pairs" + "".join(flags))
    subprocess.run([compiler, "-O3", "-fno-math-errno", *flags, "-I", str(HEADERS), str(PROGRAM),
                    "-o", str(exe), "-lm"], check=True)
    return subprocess.run([str(exe)], capture_output=True, check=True).stdout


@pytest.mark.slow
def test_portable_pairs_give_the_sse2_bits(tmp_path):
    sse2, portable = lanes(tmp_path).splitlines(), lanes(tmp_path, "-DPORTABLE").splitlines()
    assert len(sse2) == len(portable) == 200_000
    differ = [i for i, (a, b) in enumerate(zip(sse2, portable)) if a != b]
    assert not differ, f"{len(differ)} inputs differ, the first (line {differ[0]}): {sse2[differ[0]]} vs {portable[differ[0]]}"
