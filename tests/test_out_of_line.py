"""The kernel's out-of-line declarations are generated (fastprox/_kernel/out_of_line.py),
not spelled by hand: every name they declare is one the generated C of the kernel
defines, so that a moved or renamed .pxd cannot leave a declaration behind."""
import re
from pathlib import Path

import pytest

from fastprox._kernel.out_of_line import declarations, mangled

SRC = Path(__file__).resolve().parents[1] / "src"
GENERATED_C = [SRC / "fastprox" / "_kernels.c"]


def test_the_mangling_is_cythons():
    assert mangled("fastprox._kernel.rules.fobos", "rebase", "__pyx_f_") == \
        "__pyx_f_8fastprox_7_kernel_5rules_5fobos_rebase"
    assert mangled("fastprox._kernel.base.state", "Ctx", "__pyx_t_") == "__pyx_t_8fastprox_7_kernel_4base_5state_Ctx"


def test_every_declared_name_is_defined_in_the_generated_c():
    lines, structs = declarations(SRC)
    assert len(lines) >= 20 and structs        # the markers were found
    if not all(p.exists() for p in GENERATED_C):
        pytest.skip("no generated C here (an installed build): python setup.py build_ext --inplace writes it")
    text = GENERATED_C[0].read_text()
    for line in lines:
        name = re.search(r"\w+ (\w+)\(", line).group(1)
        assert re.search(rf"\b{name}\(", text), f"{name} is not in {GENERATED_C[0].name}"
    for struct in structs:
        assert f"struct {struct} {{" in text
