"""The checks of a model file's members and state: each member of the shape and
type the header implies, the state finite and holding the kernel's invariants
for its rule (stamps within the cumulants and steps so far, AdaGrad's steps and
FTRL's roots the functions of their sums the kernel computes, Berhu's heap a
max-heap of exactly the entries in its l2 phase). The kernel trusts all of it."""
from .._core import check_classes
from .._numpy import np
from .format import BERHU_L1, BERHU_L2, MAX_REPLAYS, NAME_CHARS, TEXT_BYTES
from .header import short
from .layout import adagrad_steps, normalized_factors, state_layout

def exactly(name, shape, dtype):
    """The check of a member of exactly this shape and dtype."""
    def expect(found_shape, found_dtype):
        if found_shape != shape or found_dtype != dtype:
            raise ValueError(f"{name} has shape {found_shape} and dtype {found_dtype}; expected "
                             f"{shape} {np.dtype(dtype)}")
    return expect


def at_most(name, n, dtype):
    """The check of a vector of this dtype with at most n values (the kernel checks
    how many: group_weights' message says why)."""
    def expect(shape, found_dtype):
        if len(shape) != 1 or not 0 <= shape[0] <= n or found_dtype != dtype:
            raise ValueError(f"{name} has shape {shape} and dtype {found_dtype}; expected a vector "
                             f"of at most {n} {np.dtype(dtype)}")
    return expect


def strings(name, n):
    """The check of a vector of n strings (feature names, classes) of at most
    NAME_CHARS characters each, or TEXT_BYTES in all."""
    def expect(shape, dtype):
        if shape != (n,) or dtype.kind != "U":
            raise ValueError(f"{name} has shape {shape} and dtype {dtype}; expected {n} strings")
        if dtype.itemsize > 4 * NAME_CHARS and n * dtype.itemsize > TEXT_BYTES:
            raise ValueError(f"{name} holds {n} strings of up to {dtype.itemsize // 4} characters, "
                             f"more than {NAME_CHARS} each or {TEXT_BYTES} bytes in all")
    return expect


def classes_of(K):
    """The check of the classes of a classifier of K outputs: 2 for one, else K;
    numbers or strings."""
    n = 2 if K == 1 else K

    def expect(shape, dtype):
        if shape != (n,):
            raise ValueError(f"classes has shape {shape}, but the model has {K} output(s)")
        if dtype.kind == "U":
            strings("classes", n)(shape, dtype)
        elif dtype.kind not in "biuf":
            raise ValueError(f"classes has dtype {dtype}; expected numbers or strings")
    return expect


def check_saved_classes(classes):
    """classes_ as a fit makes it: sorted distinct labels, finite numbers (a fit
    refuses NaN and infinity in y) or strings, not continuous values."""
    if not np.all(classes[1:] > classes[:-1]):
        raise ValueError(f"{short(classes.tolist())} are not sorted and distinct, as classes_ is")
    if classes.dtype.kind == "f" and not np.all(np.isfinite(classes)):
        raise ValueError(f"{short(classes.tolist())} are not finite, as a fit's labels are")
    check_classes(classes)
    return classes


def check_finite(name, a):
    if a.dtype.kind == "f" and not np.all(np.isfinite(a)):
        raise ValueError(f"{name} holds NaN or infinity, which a model's state never does")



def check_layout(spec, scalars, state, arrays):
    """The stored rows' fields within the values the kernel gives them: stamps
    within the cumulants and steps so far, sums of squares >= 0, AdaGrad's step
    and FTRL's root the functions of them the kernel computes, bit for bit,
    Berhu's phases L1 or L2; the intercepts' sums of squares and the groups'
    stamps and norms likewise. (Rows not stored are the initial row.)"""
    row, entry = state_layout(spec, state.shape[1])
    K, t, P, Q = spec["n_outputs"], scalars["t"], scalars["P"], scalars["Q"]
    fields = {name: state[:, i] for i, name in enumerate(row)}
    entries = state[:, len(row):].reshape(len(state), K, len(entry))
    fields.update((name, entries[:, :, i]) for i, name in enumerate(entry))
    checks = {"P": lambda v: (P <= v) & (v <= 1), "Q": lambda v: (0 <= v) & (v <= Q),
              "last": lambda v: (0 <= v) & (v <= t) & (v == np.floor(v)),
              "A": lambda v: (0 <= v) & (v <= t) & (v == np.floor(v)),
              "SP": lambda v: (0 <= v) & (v <= scalars["SP"]),
              "G": lambda v: v >= 0, "n": lambda v: v >= 0,
              "phase": lambda v: (v == BERHU_L1) | (v == BERHU_L2)}
    checks["eta"] = lambda v: v == adagrad_steps(spec, fields["G"])   # (after G >= 0)
    checks["SP_lo"] = lambda v: np.abs(v) <= np.spacing(fields["SP"])     # (after SP: double-double's low part)
    checks["R0"] = checks["Q"]
    checks["m"] = lambda v: v >= 0
    checks["c"] = lambda v: v == normalized_factors(spec, fields["G"], fields["m"])  # (after G, m)
    checks["root"] = lambda v: v == np.sqrt(fields["n"])                # (after n >= 0)
    for name, holds in checks.items():
        if name in fields and not np.all(holds(fields[name])):
            raise ValueError(f"state holds {name} fields the kernel never writes (see its layout: "
                             f"row fields {row}, entry fields {entry})")
    group_stamps = arrays["gstamp"]
    if spec["penalty"] == "sparse_group":    # the step of each group's last update
        valid = (0 <= group_stamps) & (group_stamps <= t) & (group_stamps == np.floor(group_stamps))
        pending = float(np.sum(t - group_stamps[valid]))
        if pending > MAX_REPLAYS:
            raise ValueError(f"gstamp: the sparse_group groups would replay {pending:.0f} skipped proxes "
                             f"when read (at most {MAX_REPLAYS} are taken; save_model writes every "
                             "group caught up, with none)")
    else:                                   # the threshold sum Q at it
        valid = (0 <= group_stamps) & (group_stamps <= Q)
    if not np.all(valid) or np.any(arrays["gnorm"] < 0) or np.any(arrays["bstate"][:, 1] < 0):
        raise ValueError("gstamp, gnorm or bstate hold values the kernel never writes (stamps beyond "
                         "the steps or cumulants so far, negative norms or sums of squares)")



def check_heap(spec, scalars, rows, state, items, keys):
    """Berhu's heap: exactly the entries in the l2 phase, each once, keyed by
    P_s / |w| as `heap_schedule` computes it, in max-heap order; the l2 entries
    with |w| > gamma and stamps P_s in [P, 1], the l1 ones with stamps Q_s in [0, Q]
    (the kernel's catch-ups and heap operations trust all of it)."""
    K, P, Q = spec["n_outputs"], scalars["P"], scalars["Q"]
    entries = state.reshape(len(state), K, 3)
    w, phase, stamp = entries[:, :, 0], entries[:, :, 1], entries[:, :, 2]
    l2 = phase == BERHU_L2
    if np.any(l2 & ~((np.abs(w) > spec["berhu_gamma"]) & (P <= stamp) & (stamp <= 1))):
        raise ValueError("state holds l2-phase Berhu entries with |w| <= berhu_gamma or stamps "
                         "outside [P, 1]")
    if np.any(~l2 & ~((0 <= stamp) & (stamp <= Q))):
        raise ValueError("state holds l1-phase Berhu entries with stamps outside [0, Q]")
    if len(np.unique(items)) != len(items):
        raise ValueError("heap_items holds a repeated entry; each l2-phase entry is in the heap once")
    in_l2 = (rows[:, None] * K + np.arange(K))[l2]      # increasing entry indices j K + k
    order = np.argsort(items)
    if not np.array_equal(items[order], in_l2):
        raise ValueError(f"heap_items lists {len(items)} entries, but the state has {len(in_l2)} "
                         "entries in the l2 phase; the heap holds exactly those")
    if not np.array_equal(keys[order], stamp[l2] / np.abs(w[l2])):
        raise ValueError("heap_keys are not the entries' exit keys P_s / |w|")
    if len(keys) > 1 and not np.all(keys[(np.arange(1, len(keys)) - 1) // 2] >= keys[1:]):
        raise ValueError("heap_keys are not in max-heap order")


