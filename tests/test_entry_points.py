"""No compiled entry point crashes the process on None or a wrong array.

Cython lets ``None`` through a typed argument (a memoryview, an extension type, a
builtin type) unless the signature says ``not None``, and a body that then reads it
reads NULL: a segfault, not an exception. Every such argument of the Python-visible
functions and methods of ``src/fastprox/**/*.pyx`` (read from the sources' text)
says which it is: ``not None``, or ``or None`` / ``=None`` where the body tests for
None. The entry points are then called, in a subprocess (a crash fails the test,
naming the call, not the run), with None, a wrong dtype and a non-contiguous array
in each typed position, the other arguments valid: each call must raise the
exception Cython's argument checks give, naming the argument.
"""
import json
import re
import subprocess
import sys
from pathlib import Path


ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src" / "fastprox"

# C element types of the memoryviews, as NumPy dtypes.
DTYPES = {"double": "float64", "float": "float32", "int64_t": "int64", "long long": "int64",
          "uint64_t": "uint64", "int": "int32", "int32_t": "int32"}
BUILTINS = {"bytearray": bytearray, "bytes": bytes, "dict": dict, "list": list, "str": str}
C_SCALARS = {"int", "double", "bint", "Py_ssize_t", "size_t", "int64_t", "uint32_t", "long long", "float"}


def _closing(text, start):
    """The index of the parenthesis closing the one opened just before ``start``."""
    depth = 1
    for i in range(start, len(text)):
        depth += {"(": 1, ")": -1}.get(text[i], 0)
        if depth == 0:
            return i
    raise ValueError("unbalanced parentheses")


def _split(args):
    """The arguments of a signature, split at the commas outside brackets."""
    parts, depth, last = [], 0, 0
    for i, ch in enumerate(args):
        depth += {"(": 1, "[": 1, ")": -1, "]": -1}.get(ch, 0)
        if ch == "," and depth == 0:
            parts.append(args[last:i])
            last = i + 1
    parts.append(args[last:])
    return [" ".join(p.split()) for p in parts if p.strip()]


def entry_points():
    """{module: [(class or None, name, [argument text, ...])]}: the ``def``/``cpdef``
    functions at a module's top level and the ``def`` methods of its ``cdef class``es."""
    found = {}
    for path in sorted(SRC.rglob("*.pyx")):
        module = ".".join(path.relative_to(SRC.parent).with_suffix("").parts)
        text, cls, calls = path.read_text(), None, []
        for m in re.finditer(r"^( *)(?:cdef class (\w+)|(c?p?def) +(\w+)\()", text, re.M):
            top = m.group(1) == ""
            if m.group(2):
                cls = m.group(2)
                continue
            if top:
                cls = None
            if m.group(3) == "cdef" or not top and cls is None:
                continue
            args = _split(text[m.end():_closing(text, m.end())])
            calls.append((None if top else cls, m.group(4), args[1:] if not top else args))
        found[module] = calls
    return found


def classes():
    """The names of the extension types the sources define."""
    return {name for path in SRC.rglob("*.pyx") for name in re.findall(r"^cdef class (\w+)", path.read_text(), re.M)}


def kind(arg, extension_types):
    """("view", dtype, ndim), ("extension", name), ("builtin", name), ("scalar",) or
    ("object",): what Cython checks of an argument ``arg`` (its text)."""
    decl = arg.split("=")[0].replace(" not None", "").replace(" or None", "").replace("const ", "").strip()
    view = re.fullmatch(r"(.+?)\[([^\]]*)\] *\w+", decl)
    if view:
        return ("view", DTYPES[view.group(1).strip()], view.group(2).count(",") + 1)
    words = decl.split()
    ctype = " ".join(words[:-1])
    if ctype in extension_types:
        return ("extension", ctype)
    if ctype in BUILTINS:
        return ("builtin", ctype)
    if ctype in C_SCALARS:
        return ("scalar",)
    return ("object",)


def checked(arg, extension_types):
    """Whether Cython would let None through ``arg``: a typed Python argument."""
    return kind(arg, extension_types)[0] in ("view", "extension", "builtin")


def none_allowed(arg):
    """Whether the signature says None is a value the body handles."""
    return " or None" in arg or re.search(r"=\s*None$", arg) is not None


def name_of(arg):
    return re.sub(r"(\s+not None|\s+or None|\s*=.*)$", "", arg).split()[-1]


def test_every_typed_argument_says_whether_it_takes_none():
    """A typed argument of a Python-visible entry point says ``not None`` or ``or
    None`` (or defaults to None): Cython's default lets None reach the body."""
    types = classes()
    silent = [f"{module}.{cls + '.' if cls else ''}{name}({arg})"
              for module, calls in entry_points().items() for cls, name, args in calls for arg in args
              if checked(arg, types) and " not None" not in arg and not none_allowed(arg)]
    assert silent == []


def test_the_sources_have_entry_points_to_check():
    """The reading of the sources finds the typed arguments (a regex that matched
    nothing would make the other tests pass vacuously)."""
    types = classes()
    views = [arg for calls in entry_points().values() for _, _, args in calls for arg in args
             if kind(arg, types)[0] == "view"]
    assert len(views) > 50 and {"Learner", "ArcKernel", "Parser"} <= types


# ------------------------------------------------------------------ the calls

def _instances():
    """A valid value of each extension type an entry point takes or is a method of."""
    from fastprox._arcs import ArcKernel
    from fastprox._kernels import Learner
    from fastprox._libsvm import Parser
    from fastprox._vw import VWParser
    from fastprox.structured.arcs import select
    from fastprox.structured.arcs.plan import compile_plan
    return {"Learner": lambda: Learner(4, 1, "fobos", "constant", "l1", "log"),
            "ArcKernel": lambda: ArcKernel(compile_plan(select(["hw"]), 8)),
            "Parser": lambda: Parser(False, False, 100),
            "VWParser": lambda: VWParser(False, False, 100, 8)}


def _valid(what, make):
    import numpy as np
    if what[0] == "view":
        return np.zeros((1,) * what[2], what[1])
    if what[0] == "extension":
        return make[what[1]]()
    if what[0] == "builtin":
        return BUILTINS[what[1]]()
    return 0


def _wrong_arrays(what):
    """A wrong dtype and a non-contiguous array for a memoryview argument."""
    import numpy as np
    dtype, ndim = what[1], what[2]
    other = "float32" if dtype != "float32" else "float64"
    return [("dtype", np.zeros((1,) * ndim, other)), ("stride", np.zeros((1,) * (ndim - 1) + (4,), dtype)[..., ::2])]


def run_modules():
    """Call the entry points with a bad value in each typed position; print one JSON
    line per call that did not raise the expected exception (and each call before
    it runs, so that a crash names it in the output)."""
    types, make = classes(), _instances()
    for module, calls in entry_points().items():
        run_module(module, calls, types, make)


def run_module(module, calls, types, make):
    """`run_modules` for one module's entry points (``calls``)."""
    import importlib
    mod = importlib.import_module(module)
    for cls, name, args in calls:
        kinds = [kind(arg, types) for arg in args]
        if not any(k[0] in ("view", "extension", "builtin") for k in kinds):
            continue
        target = getattr(mod, name) if cls is None else None
        for i, (arg, what) in enumerate(zip(args, kinds)):
            if what[0] not in ("view", "extension", "builtin") or arg.startswith("*"):
                continue
            bad = [] if none_allowed(arg) else [("None", None)]
            bad += _wrong_arrays(what) if what[0] == "view" else []
            for label, value in bad:
                values = [_valid(k, make) for k in kinds]
                values[i] = value
                call = f"{cls + '.' if cls else ''}{name} {name_of(arg)}={label}"
                print(json.dumps({"calling": call}), flush=True)
                if cls is None:
                    fn = target
                elif name in ("__init__", "__cinit__"):
                    fn = getattr(mod, cls)
                else:
                    fn = getattr(make[cls](), name)
                try:
                    fn(*values)
                except Exception as e:
                    expected = (f"Argument '{name_of(arg)}'" in str(e) if label == "None"
                                else "Buffer dtype mismatch" in str(e) if label == "dtype"
                                else "contiguous" in str(e))
                    if not expected:
                        print(json.dumps({"wrong": call, "raised": f"{type(e).__name__}: {e}"}), flush=True)
                else:
                    print(json.dumps({"wrong": call, "raised": "nothing"}), flush=True)


def test_no_entry_point_crashes_on_none_or_a_wrong_array():
    import os
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    done = subprocess.run([sys.executable, "-X", "faulthandler", __file__], capture_output=True,
                          text=True, env=env, cwd=ROOT, timeout=120)
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    calls = [line["calling"] for line in lines if "calling" in line]
    wrong = [line for line in lines if "wrong" in line]
    assert done.returncode == 0, (f"exit {done.returncode} in {calls[-1] if calls else 'the import'}:\n"
                                  + done.stderr[-2000:])
    assert len(calls) > 150 and wrong == []


if __name__ == "__main__":
    run_modules()
