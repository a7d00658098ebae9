"""The selected templates compiled into what the arc kernel reads (its ArcPlan).

The columns: ``T`` selected templates hashed into at most ``2**bits`` columns
get a block of ``2**block_bits`` each (`block_bits`), in :data:`TEMPLATES`'
order. A template's feature on the arc ``h -> m`` goes to the column

    offset + ((x * 0x9E3779B97F4A7C15 mod 2^64) >> (64 - block_bits))

(`fastprox.hashing`'s multiplicative bucket) of its 64-bit hash ``x``. With
``C`` and ``F`` as in `fastprox.structured.features.stable_hash` (``C(h, v)``
is `combine`, ``F(s, values)`` folds ``C`` over the values in order), ``s``
the seed of the template's base (`stable_hash.seed` of the base's name, the
name without ``.dd``) and atoms' values the stable hashes of the token
strings (`fastprox.structured.arcs.tokens`):

    x = C(C(s, F(s, head-side atoms' values)), F(s, modifier-side atoms' values))

the atoms of each side in written order. An in-between template gives
``C(x, v)`` for each distinct POS ``v`` between ``h`` and ``m``; a template
conjoined with ``dd`` gives ``C(that, d)``, ``d`` the stable hash of
`direction_distance(h, m)`.
"""
import numpy as np

from ..features.params import block_bits
from ..features.stable_hash import seed, string_hashes
from .templates import DIRECTION_DISTANCES, KINDS, parse

__all__ = ["compile_plan", "MAX_BITS", "MAX_ATOMS"]

#: The widest hashing: columns are int32.
MAX_BITS = 31
#: At most this many atoms on a side of a template (the kernel's ARC_MAX_ATOMS).
MAX_ATOMS = 4


def compile_plan(templates, bits):
    """The plan of ``templates`` (parsed, in block order, as `select` gives them)
    hashed into ``2**bits`` columns: a dict of the ArcPlan's arrays and numbers
    (the names of `fastprox._kernel.structured.arcs.ArcPlan`'s fields) and
    ``offsets``, each template's first column then the number of columns."""
    if not (isinstance(bits, (int, np.integer)) and 1 <= bits <= MAX_BITS):
        raise ValueError(f"bits must be an integer in 1..{MAX_BITS} (columns are int32), not {bits!r}")
    width = block_bits(int(bits), len(templates))
    offsets = np.arange(len(templates) + 1, dtype=np.int64) << width
    single = [(t, offset) for t, offset in zip(templates, offsets) if not t.between]
    between = {(t.base, t.conjoined): offset for t, offset in zip(templates, offsets) if t.between}
    if single and between and max(o for _, o in single) > min(between.values()):
        raise ValueError("the in-between templates' blocks must come after the others'")
    # The bases in the kernel's runs: both sides, the head's only, the modifier's
    # only, then the in-between bases.
    parsed = {t.base: parse(t.base) for t, _ in single}
    runs = [[name for name, b in parsed.items() if b.head and b.modifier],
            [name for name, b in parsed.items() if not b.modifier],
            [name for name, b in parsed.items() if not b.head],
            list(dict.fromkeys(t.base for t in templates if t.between))]
    bases = [name for run in runs for name in run]
    B = len(bases)
    n_head, n_mod = np.zeros(B, np.int32), np.zeros(B, np.int32)
    head_kind, head_offset, mod_kind, mod_offset = (np.zeros(B * MAX_ATOMS, np.int32) for _ in range(4))
    for b, name in enumerate(bases):
        base = parse(name)
        for count, kinds, shifts, atoms in ((n_head, head_kind, head_offset, base.head),
                                            (n_mod, mod_kind, mod_offset, base.modifier)):
            count[b] = len(atoms)
            for a, atom in enumerate(atoms):
                kinds[b * MAX_ATOMS + a], shifts[b * MAX_ATOMS + a] = atom.kind, atom.offset
    at = {False: np.full(B, -1, np.int32), True: np.full(B, -1, np.int32)}
    first = {False: np.zeros(B, np.int64), True: np.zeros(B, np.int64)}
    for j, (t, offset) in enumerate(single):
        b = bases.index(t.base)
        at[t.conjoined][b], first[t.conjoined][b] = j, offset
    return {
        "n_kinds": len(KINDS), "n_both": len(runs[0]), "n_head_only": len(runs[1]),
        "n_mod_only": len(runs[2]), "n_head": n_head, "head_kind": head_kind, "head_offset": head_offset,
        "n_mod": n_mod, "mod_kind": mod_kind, "mod_offset": mod_offset,
        "seed": np.array([seed(name) for name in bases], np.uint64),
        "dd": string_hashes(DIRECTION_DISTANCES),
        "n_single": len(single), "plain_at": at[False], "plain_offset": first[False],
        "conj_at": at[True], "conj_offset": first[True],
        "between_kind": KINDS.index("p"), "n_between": len(runs[3]),
        "between_offset": np.array([between.get((name, conjoined), -1) for name in runs[3]
                                    for conjoined in (False, True)], np.int64),
        "per_value": len(between),
        "shift": 64 - width,
        "offsets": offsets,
    }
