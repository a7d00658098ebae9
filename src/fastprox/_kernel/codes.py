"""The kernel's codes, generated from the registry: the enums of a rule's update,
schedule and penalty (``_kernel/base/codes.pxi``, included by ``base/types.pxd``)
and of the losses, with the test of a regression loss (``_kernel/losses/codes.pxi``,
included by ``losses/losses.pxd``).

A code is written once, in `fastprox._registry`; setup.py writes these files before
Cython runs (`write`), and tests/test_registry.py checks that the files are the
registry's. Pure Python, read by setup.py from its file (the package is not built
yet), as it reads the registry.
"""
import importlib.util
from pathlib import Path

HEADER = "# Generated from fastprox/_registry.py by fastprox/_kernel/codes.py (setup.py): do not edit.\n"
#: The generated files (below ``_kernel/``) and the registry's tables each holds, an enum a table.
FILES = {"base/codes.pxi": ("UPDATES", "SCHEDULES", "PENALTIES"), "losses/codes.pxi": ("LOSSES",)}


def registry(src):
    """The module ``src/fastprox/_registry.py``, loaded from its file."""
    spec = importlib.util.spec_from_file_location("fastprox_registry", Path(src) / "fastprox" / "_registry.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def enum(table):
    """A ``cdef enum`` of a registry table: each entry's name in capitals, its code."""
    entries = sorted(table.values(), key=lambda entry: entry.code)
    return "cdef enum:\n" + "".join(f"    {entry.name.upper()} = {entry.code}\n" for entry in entries)


def kind_test(table, kind):
    """A ``cdef inline`` test of whether a loss code is of ``kind`` (the registry's
    "regression" or "binary"), e.g. ``regression_loss(loss)``."""
    names = [entry.name.upper() for entry in sorted(table.values(), key=lambda entry: entry.code)
             if entry.kind == kind]
    return (f"cdef inline bint {kind}_loss(int loss) noexcept nogil:\n"
            f"    return {' or '.join(f'loss == {name}' for name in names)}\n")


def files(src):
    """{path below ``_kernel/``: text} of the generated files: each table's enum, and
    for the losses, the test of a regression loss."""
    tables = registry(src)
    texts = {path: HEADER + "\n".join(enum(getattr(tables, name)) for name in names)
             for path, names in FILES.items()}
    texts["losses/codes.pxi"] += "\n" + kind_test(tables.LOSSES, "regression")
    return texts


def write(src):
    """Write the generated files into ``src/fastprox/_kernel/``, those that changed."""
    kernel = Path(src) / "fastprox" / "_kernel"
    for path, text in files(src).items():
        target = kernel / path
        if not target.exists() or target.read_text() != text:
            target.write_text(text)
