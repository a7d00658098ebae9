"""The registry (fastprox._registry) is what the kernel computes with: its codes are
the .pxd enums (read from their text), its state layouts the widths the kernel's
`set_layout` gives each rule, and what derives from it agrees with it."""
import math
import re
from pathlib import Path

import numpy as np
import pytest

from fastprox import _kernels
from fastprox._kernels import Learner
from fastprox._registry import (LOSSES, PENALTIES, RULES, SCHEDULES, UPDATES, codes, l1_share, losses_of,
                                state_fields)

KERNEL = Path(__file__).resolve().parents[1] / "src" / "fastprox"


def enums(pxd, first):
    """{NAME: value} of the `cdef enum:` block of a .pxd whose first member is `first`."""
    text = (KERNEL / pxd).read_text()
    block = re.search(rf"cdef enum:\n(?:\s*#.*\n)*(\s+{first} = 0\n(?:\s+\w+ = \d+\n)*)", text)
    assert block, f"no enum starting with {first} in {pxd}"
    return {name: int(value) for name, value in re.findall(r"(\w+) = (\d+)", block.group(1))}


@pytest.mark.parametrize("table, pxd, first", [(UPDATES, "_kernel/base/types.pxd", "FOBOS"),
                                               (SCHEDULES, "_kernel/base/types.pxd", "CONSTANT"),
                                               (PENALTIES, "_kernel/base/types.pxd", "NONE"),
                                               (LOSSES, "_kernel/losses/losses.pxd", "LOG")],
                         ids=["updates", "schedules", "penalties", "losses"])
def test_the_pxd_enums_are_the_registry_codes(table, pxd, first):
    assert enums(pxd, first) == {name.upper(): code for name, code in codes(table).items()}


def test_the_kernel_maps_are_the_registry_codes():
    assert _kernels.UPDATE_CODES == codes(UPDATES) and _kernels.SCHEDULE_CODES == codes(SCHEDULES)
    assert _kernels.PENALTY_CODES == codes(PENALTIES) and _kernels.LOSS_CODES == codes(LOSSES)


def cases():
    for r in RULES:
        shares = (0.0, 0.5, 1.0) if PENALTIES[r.penalty].l1_share == "l1_ratio" else (0.5,)
        for K in (1, 3):
            for alpha in (0.0, 0.01):
                for l1_ratio in shares:
                    yield r.update, r.schedule, r.penalty, K, alpha, l1_ratio


@pytest.mark.parametrize("update, schedule, penalty, K, alpha, l1_ratio", list(cases()))
def test_set_layout_gives_the_registry_fields(update, schedule, penalty, K, alpha, l1_ratio):
    """The width of the kernel's state rows (`_state.set_layout`) is the registry's
    row fields plus K times its entry fields, for every rule, with and without a
    penalty, and for FTRL with and without the roots (d K up to 2^19, beyond)."""
    for d in (5, (1 << 19) // K + 1):
        learner = Learner(d, K, update, schedule, penalty, "log", alpha=alpha, l1_ratio=l1_ratio, eta0=0.5,
                          delta=1.0)
        width = learner.__reduce__()[2]["arrays"]["state"].shape[1]
        row, entry = state_fields(update, schedule, penalty, penalized=alpha > 0 and penalty != "none",
                                  l1_share=l1_share(penalty, l1_ratio), ftrl_roots=d * K <= 1 << 19)
        assert width == len(row) + K * len(entry), (row, entry)
        if update != "ftrl":
            break


def test_the_loss_table():
    """Kinds, multinomial forms and links as the estimators and the kernel know them;
    each value is the loss the contract writes, at a few points."""
    assert losses_of("binary") == ("log", "hinge", "squared_hinge", "modified_huber")
    assert losses_of("regression") == ("squared", "huber", "epsilon_insensitive")
    assert losses_of("binary", multinomial=True) == ("log", "hinge")
    assert {n for n, loss in LOSSES.items() if loss.proba} == {"log", "modified_huber"}
    eps = 0.3
    for z in (-3.0, -1.0, 0.0, 0.5, 2.0):
        expected = {"log": math.log1p(math.exp(-z)), "hinge": max(0, 1 - z), "squared_hinge": max(0, 1 - z) ** 2,
                    "modified_huber": -4 * z if z < -1 else max(0, 1 - z) ** 2, "squared": z * z / 2,
                    "huber": z * z / 2 if abs(z) <= eps else eps * abs(z) - eps * eps / 2,
                    "epsilon_insensitive": max(0, abs(z) - eps)}
        for name, loss in LOSSES.items():
            assert loss.value(z, eps, math) == pytest.approx(expected[name], rel=1e-12, abs=1e-15), (name, z)
            assert loss.value(np.array([z]), eps, np)[0] == loss.value(z, eps, math)
