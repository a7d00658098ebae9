"""Fuzzing the model file reader with real saved models tampered with at random:
members dropped, repeated or replaced by random arrays of random shapes and
types, values poked, bytes flipped, files cut, header entries set to random
values of random types (negative, huge, NaN, strings, nested and deeply
nested lists), entries dropped or added, sizes inflated, Berhu's heap emptied,
repeated or shuffled, zip entries declaring huge sizes, deflated junk,
encrypted or unknown compressions, pickles that would run code.

Each case must end in a ValueError naming the file, or in a model that predicts
and trains (partial_fit on a few rows) with finite results. A third outcome is
allowed only where the tampering put in a finite but extreme number (|x| >=
1e100 or 0 < |x| <= 1e-100; such parameters are valid, and a model with them
may overflow as it would in memory): predictions or the progressive loss not
finite, or partial_fit refusing the step whose margin overflowed (the
kernel's NonFiniteMargin). Anything else (a crash, a hang, another exception,
a pickle loaded) fails the test.

The cases run in a child process, deterministic (fixed seed), with 2 GiB of
address space (an allocation the reader should have refused fails at once)
and a time limit: a crash or a hang is a failed test, not a dead test run.
"""
import functools
import io
import json
import os
import resource
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

from test_model_io import deflated_zeros, raw_zip

CASES, SEED = 1500, 20240611
MARKER = "pickle-ran"         # the file a pickle in a tampered member would create


@pytest.mark.slow
def test_tampered_model_files_are_refused_or_sound(tmp_path):
    """The cases in a child process; its summary line: outcome counts."""
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1")
    run = subprocess.run([sys.executable, __file__, str(tmp_path), str(CASES), str(SEED)],
                         capture_output=True, text=True, timeout=300, env=env)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-6000:]
    counts = json.loads(run.stdout.splitlines()[-1])
    assert sum(counts.values()) == CASES and counts["refused"] > CASES / 2 and counts["trains"] > 20, counts
    assert not (tmp_path / MARKER).exists()


class Exploit:
    """What a pickled member would run if the reader unpickled it."""

    def __reduce__(self):
        return (Path.touch, (Path(os.environ["FUZZ_DIR"]) / MARKER,))


# --- the models tampered with ------------------------------------------------------------

def base_models(directory):
    """name -> path of real saved models of every layout the fuzz covers."""
    from fastprox import ProxClassifier, ProxRegressor, dump_libsvm
    from fastprox.cli import main
    from fastprox.stream.synthetic import text_like
    from fastprox.model_io import save_model
    X, Y, _, _ = text_like(400, 200, seed=7)
    labels = np.arange(X.shape[0]) % 3
    words = np.array(["ant", "bee", "cat"])[labels]
    berhu = ProxClassifier(penalty="berhu", schedule="invsqrt", alpha=1e-3, berhu_gamma=0.01, eta0=1.0,
                           random_state=0).fit(X, Y)
    assert berhu._learner.scalars()["heap_size"] > 10
    models = {
        "berhu": berhu,
        "groups": ProxClassifier(multi_class="multinomial", penalty="squared_group", schedule="invsqrt",
                                 alpha=1e-4, groups=np.arange(200) % 10,
                                 group_weights=np.linspace(0.0, 2.0, 10), random_state=0).fit(X, labels),
        "rows-weighted": ProxClassifier(penalty="l1_l2", schedule="constant", alpha=1e-3, eta0=0.1,
                                        group_weights=np.linspace(0.5, 1.5, 200), random_state=0).fit(X, labels),
        "multinomial": ProxClassifier(multi_class="multinomial", loss="hinge", random_state=0).fit(X, words),
        "ftrl": ProxClassifier(update="ftrl", penalty="elasticnet", alpha=1e-4, random_state=0).fit(X, Y),
        "rda": ProxClassifier(update="rda", alpha=1e-4, rda_rho=1e-3, random_state=0).fit(X, labels),
        "regression": ProxRegressor(loss="huber", schedule="inv", penalty="elasticnet", alpha=1e-3,
                                    random_state=0).fit(X, 2 * Y),
    }
    paths = {}
    for name, est in models.items():
        paths[name] = directory / f"{name}.npz"
        save_model(est, paths[name])
    dump_libsvm(X, Y, directory / "train.svm")
    paths["command line"] = directory / "cli.npz"
    assert main(["train", str(directory / "train.svm"), "--model", str(paths["command line"])]) == 0
    return paths


class Case:
    """A tampered copy of a model file, built in stages: its header and arrays,
    then its zip entries, then its bytes (each built from the stage before when
    first asked for). `extreme`: a finite number of magnitude >= 1e100 or
    <= 1e-100 (not 0) was put in."""

    def __init__(self, path):
        with np.load(path) as npz:
            self.arrays = {key: npz[key] for key in npz.files}
        self.header = json.loads(str(self.arrays.pop("header")))
        self.header_text = self._entries = self._data = None
        self.extreme = False

    def note(self, value):
        """Remember whether the number value (or the array of them) is extreme; return it."""
        for v in np.asarray(value, dtype=object).ravel():
            v = v.item() if isinstance(v, np.generic) else v
            if type(v) in (int, float):
                m = abs(v)          # (a Python int may be beyond any float)
                if m == m and m != np.inf:
                    self.extreme |= m >= 1e100 or 0 < m <= 1e-100
        return value

    @property
    def entries(self):
        """The zip's entries: (name, payload[, method, crc, size, flags]), see raw_zip."""
        if self._entries is None:
            text = self.header_text if self.header_text is not None else json.dumps(self.header)
            self._entries = [("header.npy", npy(np.array(text)))] + [
                (f"{name}.npy", npy(a)) for name, a in self.arrays.items()]
        return self._entries

    @property
    def data(self):
        """The file's bytes."""
        if self._data is None:
            self._data = raw_zip(self.entries)
        return self._data

    @data.setter
    def data(self, data):
        self._data = data


def npy(a):
    """The .npy bytes of an array (pickled if it holds objects)."""
    f = io.BytesIO()
    np.lib.format.write_array(f, a, allow_pickle=True)
    return f.getvalue()


# --- tampering --------------------------------------------------------------------------

SPECIAL = [np.nan, np.inf, -np.inf, 1e300, -1e300, 5e-324, 0.0, -0.0, -1.0, 2.0**53, 2.0**64]
WORDS = ["", "auto", "log", "hinge", "squared", "fobos", "rda", "ftrl", "adagrad", "invsqrt", "l1",
         "berhu", "l1_l2", "ovr", "multinomial", "ProxClassifier", "ProxRegressor", "fastprox-model", "x" * 5000]


def random_value(rng, case, depth=0):
    """A JSON value of a random type: numbers small, huge and special, strings,
    booleans, null, lists (long, nested, deeply nested), objects."""
    kind = rng.integers(11 if depth < 3 else 7)
    if kind == 0:
        return int(rng.integers(-10, 10))
    if kind == 1:
        return case.note([2**31, 2**53, 2**63 - 1, 2**63, 2**64, 10**30, -2**63 - 1, 10**400][rng.integers(8)])
    if kind == 2:
        return case.note(float(rng.normal() * 10.0 ** rng.integers(-5, 6)))
    if kind == 3:
        return case.note(SPECIAL[rng.integers(len(SPECIAL))])
    if kind == 4:
        return WORDS[rng.integers(len(WORDS))]
    if kind == 5:
        return bool(rng.integers(2))
    if kind == 6:
        return None
    if kind == 7:
        return [random_value(rng, case, depth + 1) for _ in range(rng.integers(0, 4))]
    if kind == 8:
        nested = []
        for _ in range(rng.integers(2, 600)):
            nested = [nested]
        return nested
    if kind == 9:
        return {WORDS[rng.integers(len(WORDS))]: random_value(rng, case, depth + 1) for _ in range(rng.integers(0, 3))}
    return [int(v) for v in rng.integers(-2, 300, size=rng.integers(1, 3000))]


def header_slots(header):
    """(section dict, key) of every entry of the header, its sections included."""
    slots = [(header, key) for key in header]
    slots += [(header[s], key) for s in ("params", "learner", "scalars", "fitted")
              if isinstance(header.get(s), dict) for key in header[s]]
    return slots


def set_entry(rng, case):
    slots = header_slots(case.header)
    section, key = slots[rng.integers(len(slots))]
    section[key] = random_value(rng, case)


def nudge_number(rng, case):
    """A plausible wrong number: off by one, doubled, halved, negated, times 1000."""
    slots = [(s, k) for s, k in header_slots(case.header) if type(s[k]) in (int, float)]
    if not slots:
        return set_entry(rng, case)
    section, key = slots[rng.integers(len(slots))]
    value = section[key]
    half = value // 2 if type(value) is int else value / 2
    changed = [value + 1, value - 1, 2 * value, half, -value, 1000 * value, 0][rng.integers(7)]
    section[key] = case.note(changed)


def drop_or_add_entry(rng, case):
    slots = header_slots(case.header)
    section, key = slots[rng.integers(len(slots))]
    if rng.integers(2):
        del section[key]
    else:
        section[WORDS[rng.integers(len(WORDS))] or "extra"] = random_value(rng, case)


def inflate(rng, case):
    """Sizes inflated consistently where the header repeats them."""
    sections = [case.header.get(name) for name in ("learner", "scalars", "fitted")]
    if not all(isinstance(section, dict) for section in sections):
        return set_entry(rng, case)         # (tampered with already)
    learner, scalars, fitted = sections
    choice = rng.integers(4)
    if choice == 0:
        n = 200 * int(rng.choice([2, 10, 1000])) if rng.integers(2) else int(rng.choice(
            [2**40, 4 * 10**8, 2**62]))     # (4e8 fits the memory check, not the test's memory limit)
        learner["n_features"] = fitted["n_features_in_"] = n
    elif choice == 1:
        learner["n_outputs"] = int(rng.integers(2, 6))
    elif choice == 2:
        scalars["heap_size"] = int(rng.integers(1, 1000))
    else:
        scalars["t"] = fitted["t_"] = int(rng.choice([2**31, 2**53, 2**53 + 1]))


def raw_header(rng, case):
    """The header as text: deeply nested, not JSON, another JSON value, huge."""
    depth = int(rng.choice([10, 1000, 10**5]))
    case.header_text = [
        "[" * depth + "]" * depth, "{" * depth, '{"format": "fastprox-model"', "null", "3", '"header"',
        json.dumps(case.header)[: rng.integers(1, 200)], json.dumps(case.header) + " " * 5_000_000,
        json.dumps({**case.header, "version": 3.0}),
    ][rng.integers(9)]


def drop_member(rng, case):
    names = list(case.arrays)
    del case.arrays[names[rng.integers(len(names))]]


DTYPES = ["<f8", "<i8", "<i4", "<f4", "|b1", "<U7", "<c16", ">f8", "|u1", "object"]


def random_array(rng, case, shape=None, dtype=None):
    """An array of a random (or the given) shape and dtype, of random values."""
    if shape is None:
        ndim = rng.integers(0, 4)
        shape = tuple(int(n) for n in rng.integers(0, 300 if ndim == 1 else 6, size=ndim))
    dtype = dtype or DTYPES[rng.integers(len(DTYPES))]
    size = int(np.prod(shape))
    if dtype == "object":
        a = np.empty(size, dtype=object)
        a[:] = [Exploit()] * size
        return a.reshape(shape)
    values = rng.normal(size=size) * 10.0 ** rng.integers(-3, 4)
    special = rng.random(size) < rng.random() * 0.2
    values[special] = rng.choice(SPECIAL, size=int(special.sum()))
    if rng.integers(3) == 0:
        values = rng.integers(-3, 300, size=size)
    if np.dtype(dtype).kind in "iub":
        values = np.nan_to_num(values, posinf=2**31, neginf=-2**31).clip(-2**31, 2**31)
    with np.errstate(invalid="ignore", over="ignore"):
        a = np.asarray(values).astype(dtype).reshape(shape)
    case.note(a if a.dtype.kind in "fc" else 0)
    return a


def replace_member(rng, case):
    """A member replaced by a random array: random shape and dtype, or its own."""
    names = list(case.arrays) + ["junk"]
    name = names[rng.integers(len(names))]
    own = case.arrays.get(name)
    same = own is not None and own.dtype != object and rng.integers(2)
    case.arrays[name] = random_array(rng, case, *((own.shape, own.dtype.str) if same else ()))


def poke_values(rng, case):
    """A few values of a member set to special, random or neighbouring values."""
    names = [k for k, a in case.arrays.items() if a.size and a.dtype.kind in "fi"]
    if not names:
        return
    name = names[rng.integers(len(names))]
    a = case.arrays[name].copy()
    flat = a.reshape(-1)
    for i in rng.integers(0, flat.size, size=rng.integers(1, 4)):
        if a.dtype.kind == "f":
            with np.errstate(over="ignore"):
                flat[i] = case.note([SPECIAL[rng.integers(len(SPECIAL))], flat[i] * rng.normal(),
                                     np.nextafter(flat[i], np.inf), flat[(i + 1) % flat.size]][rng.integers(4)])
        else:
            info = np.iinfo(a.dtype)
            flat[i] = min(max([-1, int(flat[i]) + 1, int(flat[(i + 1) % flat.size]), info.max, info.min][
                rng.integers(5)], info.min), info.max)
    case.arrays[name] = a


def tamper_heap(rng, case):
    """Berhu's heap emptied, an item repeated, shuffled, dropped or one added."""
    items, keys = case.arrays.get("heap_items"), case.arrays.get("heap_keys")
    if items is None or keys is None or items.ndim != 1 or items.shape != keys.shape or not len(items):
        return replace_member(rng, case)     # (not a Berhu model, or tampered with already)
    items, keys = items.copy(), keys.copy()
    choice = rng.integers(5)
    if choice == 0:
        items, keys = items[:0], keys[:0]
    elif choice == 1:
        i, j = rng.integers(len(items), size=2)
        items[i], keys[i] = items[j], keys[j]
    elif choice == 2:
        order = rng.permutation(len(items))
        items, keys = items[order], keys[order]
    elif choice == 3:
        items, keys = items[:-1], keys[:-1]
    else:
        items, keys = np.append(items, rng.integers(0, 400)), np.append(keys, keys.max(initial=1.0) * 2)
    case.arrays["heap_items"], case.arrays["heap_keys"] = items, keys
    if rng.integers(2) and isinstance(case.header.get("scalars"), dict):
        case.header["scalars"]["heap_size"] = len(items)


def rows_and_state(rng, case):
    """The stored rows reordered, repeated, out of range, or the state's rows misaligned."""
    rows, state = case.arrays.get("rows"), case.arrays.get("state")
    if rows is None or state is None or rows.dtype != np.int64 or rows.ndim != 1 or state.ndim != 2:
        return replace_member(rng, case)     # (tampered with already)
    rows = rows.copy()
    choice = rng.integers(4)
    if choice == 0:
        rows = rows[::-1].copy()
    elif choice == 1 and len(rows) > 1:
        rows[1] = rows[0]
    elif choice == 2 and len(rows):
        rows[-1] = [-1, 200, 2**40][rng.integers(3)]
    else:
        state = np.roll(state, 1, axis=0)
    case.arrays["rows"], case.arrays["state"] = rows, state


HEADER_OPS = [set_entry, set_entry, nudge_number, nudge_number, drop_or_add_entry, inflate, raw_header]
ARRAY_OPS = [drop_member, replace_member, replace_member, poke_values, poke_values, tamper_heap, rows_and_state]


@functools.cache
def bomb():
    """(256 MiB of zeros deflated to 4 MB, their size, their CRC): see deflated_zeros."""
    return deflated_zeros(16)


def zip_tampering(rng, case):
    """An entry repeated, added (junk, or 256 MiB of deflated zeros), declaring a
    huge size, encrypted, or compressed with an unknown method."""
    entries = case.entries
    i = int(rng.integers(len(entries)))
    name, payload = entries[i][:2]
    choice = rng.integers(6)
    if choice == 0:
        entries.append(entries[i])
    elif choice == 1:
        entries.append(([name, "junk.npy", "header.npy/x", "../state.npy"][rng.integers(4)], payload))
    elif choice == 2:
        target = [name, "extra.npy"][rng.integers(2)]
        zeros, size, crc = bomb()
        entries[i:i + 1] = [(target, zeros, 8, crc, size)] + ([] if target == name else [entries[i]])
    elif choice == 3:
        declared = [2**32 - 1, len(payload) + 1, min(1000 * len(payload), 2**32 - 1)][rng.integers(3)]
        entries[i] = (name, payload, 0, None, declared)
    elif choice == 4:
        entries[i] = (name, payload, 0, None, None, 1)
    else:
        entries[i] = (name, payload, int(rng.choice([1, 12, 14, 99])))


def byte_tampering(rng, case):
    """Bytes flipped, the file cut, or junk appended."""
    data = bytearray(case.data)
    choice = rng.integers(3) if data else 2
    if choice == 0:
        for i in rng.integers(0, len(data), size=rng.integers(1, 9)):
            data[i] ^= int(rng.integers(1, 256))
    elif choice == 1:
        data = data[: rng.integers(0, len(data))]
    else:
        data += bytes(rng.integers(0, 256, size=rng.integers(1, 100), dtype=np.uint8))
    case.data = bytes(data)


def tampered(rng, path):
    """One to three random tamperings of the model file at path, in the order of
    their stages: (the file's bytes, whether an extreme number was put in, the
    tamperings' names)."""
    case = Case(path)
    stages = [HEADER_OPS, ARRAY_OPS, [zip_tampering], [byte_tampering]]
    done = []
    for stage in sorted(rng.choice(4, size=rng.integers(1, 4), p=[0.35, 0.35, 0.15, 0.15])):
        step = stages[stage][rng.integers(len(stages[stage]))]
        step(rng, case)
        done.append(step.__name__)
    return case.data, case.extreme, done


# --- the outcome of a case -----------------------------------------------------------

def outcome(path, extreme, rng):
    """'refused' (a ValueError naming the file), 'trains' (finite predictions,
    before and after partial_fit on a few rows) or 'overflows' (allowed only for
    extreme numbers); anything else raises."""
    from fastprox._kernels import NonFiniteMargin
    from fastprox.model_io import load_model
    try:
        est = load_model(path)
    except ValueError as e:
        assert str(e).startswith(f"{path}: "), e
        return "refused"
    X = sp.csr_matrix((rng.random(300), (np.repeat(np.arange(30), 10), rng.integers(0, est.n_features_in_, 300))),
                      shape=(30, est.n_features_in_))        # 10 values a row, at most
    classes = getattr(est, "classes_", None)
    y = rng.normal(size=30) if classes is None else classes[rng.integers(len(classes), size=30)]

    def finite():
        scores = est.decision_function(X) if classes is not None else est.predict(X)
        if classes is not None:
            assert set(est.predict(X)) <= set(classes)
        return bool(np.all(np.isfinite(scores)))

    sound = finite()
    try:
        est.partial_fit(X, y)
    except NonFiniteMargin:
        sound = False
    sound = sound and np.isfinite(est.progressive_loss_) and finite()
    if sound:
        return "trains"
    assert extreme, "a model without extreme numbers gives non-finite results"
    return "overflows"


def run_cases(directory, n_cases, seed):
    """n_cases tamperings of the base models; the outcome counts."""
    directory = Path(directory)
    os.environ["FUZZ_DIR"] = str(directory)
    bases = base_models(directory)
    rng = np.random.default_rng(seed)
    counts = {"refused": 0, "trains": 0, "overflows": 0}
    names = sorted(bases)
    for i in range(n_cases):
        name = names[i % len(names)]
        data, extreme, done = tampered(rng, bases[name])
        path = directory / f"case{i}.npz"
        path.write_bytes(data)
        try:
            counts[outcome(path, extreme, rng)] += 1
        except BaseException:
            print(f"case {i} ({name}, {done}) failed", flush=True)
            raise
        path.unlink()
    return counts


if __name__ == "__main__":
    limit = 2 << 30         # address space: an allocation the reader should have refused fails fast
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    print(json.dumps(run_cases(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]))))
