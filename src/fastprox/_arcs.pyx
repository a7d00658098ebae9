# cython: boundscheck=False, wraparound=False, cdivision=True
"""The arc feature kernel from Python: a compiled plan (`fastprox.structured.arcs.plan`)
and one sentence's rows in reused buffers (`fastprox._kernel.structured.arcs`).

`ArcKernel.fill` makes the rows of a sentence's token codes in the buffers,
`rows` makes and copies them out, `scores` makes and scores them. The buffers
grow to the longest sentence met and are reused, so a pass over a corpus holds
one sentence's arcs. Each call keeps the GIL, so that threads sharing a kernel
take turns (never one's buffers regrown under another's reading); threads that
should work at once each use their own kernel, or the C functions with their
own `ArcRows`.
"""
import numpy as np

from libc.stdint cimport int32_t, int64_t, uint64_t
from libc.string cimport memcpy

from fastprox._kernel.structured.arcs cimport ARC_MAX_ATOMS, ARC_N_BINS, arc_rows, arc_rows_free, arc_scores

_INT32 = ("n_head", "head_kind", "head_offset", "n_mod", "mod_kind", "mod_offset", "plain_at", "conj_at")
_INT64 = ("plain_offset", "conj_offset", "between_offset")


cdef const void* _first(arrays, name, Py_ssize_t size) except? NULL:
    """The address of plan array `name`'s first entry, after checking its size."""
    a = arrays[name]
    if a.shape[0] != size:
        raise ValueError(f"plan {name}: {a.shape[0]} entries, expected {size}")
    return <const void*><size_t>a.ctypes.data if size else NULL


cdef class ArcKernel:
    """The features of every arc of a sentence, by a compiled plan.

    Parameters
    ----------
    plan : dict
        `fastprox.structured.arcs.plan.compile_plan`'s output; its arrays are
        kept and checked (sizes, runs of bases, atoms within the tokens, every
        position of a row written once, columns within int32).
    """

    def __cinit__(self, dict plan not None):
        cdef Py_ssize_t B = len(plan["seed"]), b, a
        cdef ArcPlan* p = &self.plan
        arrays = {name: np.ascontiguousarray(plan[name], np.int32) for name in _INT32}
        arrays.update({name: np.ascontiguousarray(plan[name], np.int64) for name in _INT64})
        arrays["seed"] = np.ascontiguousarray(plan["seed"], np.uint64)
        arrays["dd"] = np.ascontiguousarray(plan["dd"], np.uint64)
        self._arrays = arrays
        p.n_kinds, p.n_bases, p.n_single = plan["n_kinds"], B, plan["n_single"]
        p.n_both, p.n_head_only, p.n_mod_only = plan["n_both"], plan["n_head_only"], plan["n_mod_only"]
        p.n_between, p.between_kind, p.per_value = plan["n_between"], plan["between_kind"], plan["per_value"]
        p.shift = plan["shift"]
        p.seed = <const uint64_t*>_first(arrays, "seed", B)
        p.dd = <const uint64_t*>_first(arrays, "dd", 2 * ARC_N_BINS)
        p.n_head = <const int32_t*>_first(arrays, "n_head", B)
        p.n_mod = <const int32_t*>_first(arrays, "n_mod", B)
        p.head_kind = <const int32_t*>_first(arrays, "head_kind", B * ARC_MAX_ATOMS)
        p.head_offset = <const int32_t*>_first(arrays, "head_offset", B * ARC_MAX_ATOMS)
        p.mod_kind = <const int32_t*>_first(arrays, "mod_kind", B * ARC_MAX_ATOMS)
        p.mod_offset = <const int32_t*>_first(arrays, "mod_offset", B * ARC_MAX_ATOMS)
        p.plain_at = <const int32_t*>_first(arrays, "plain_at", B)
        p.conj_at = <const int32_t*>_first(arrays, "conj_at", B)
        p.plain_offset = <const int64_t*>_first(arrays, "plain_offset", B)
        p.conj_offset = <const int64_t*>_first(arrays, "conj_offset", B)
        p.between_offset = <const int64_t*>_first(arrays, "between_offset", 2 * p.n_between)
        if not 33 <= p.shift <= 63:
            raise ValueError(f"plan: shift {p.shift} outside 33..63 (1 to 31 bits a block)")
        between = arrays["between_offset"].reshape(-1, 2)
        if (min(p.n_both, p.n_head_only, p.n_mod_only, p.n_between) < 0
                or p.n_both + p.n_head_only + p.n_mod_only + p.n_between != B):
            raise ValueError(f"plan: the runs of bases do not add up to its {B} bases")
        if (between < -1).any() or not (between >= 0).any(axis=1).all() or p.per_value != (between >= 0).sum():
            raise ValueError("plan: each in-between base needs a selected template, per_value their number")
        if p.n_between and not 0 <= p.between_kind < p.n_kinds:
            raise ValueError("plan: the in-between attribute is out of range")
        for b in range(B):
            if not (0 <= p.n_head[b] <= ARC_MAX_ATOMS and 0 <= p.n_mod[b] <= ARC_MAX_ATOMS):
                raise ValueError(f"plan: base {b} has too many atoms")
            for a in range(b * ARC_MAX_ATOMS, (b + 1) * ARC_MAX_ATOMS):
                if not (0 <= p.head_kind[a] < p.n_kinds and 0 <= p.mod_kind[a] < p.n_kinds
                        and -1 <= p.head_offset[a] <= 1 and -1 <= p.mod_offset[a] <= 1):
                    raise ValueError(f"plan: an atom of base {b} reads outside the tokens")
        at = np.concatenate([arrays["plain_at"], arrays["conj_at"]])
        if sorted(at[at >= 0].tolist()) != list(range(p.n_single)) or (at < -1).any():
            raise ValueError(f"plan: the features do not fill the {p.n_single} places of a row once each")
        starts = np.concatenate([arrays["plain_offset"][arrays["plain_at"] >= 0],
                                 arrays["conj_offset"][arrays["conj_at"] >= 0], between[between >= 0]])
        if (starts < 0).any():
            raise ValueError("plan: a negative block offset")
        self.n_columns = int(starts.max(initial=-1)) + (1 << (64 - p.shift))
        if self.n_columns > (1 << 31):
            raise ValueError("plan: columns beyond int32")

    def __dealloc__(self):
        arc_rows_free(&self.sentence)

    def fill(self, tokens):
        """Make the rows of the sentence whose token codes are ``tokens`` (uint64,
        ``n + 3`` rows of ``n_kinds``, n >= 1 words) in the kernel's buffers;
        returns their number of stored features."""
        cdef const uint64_t[:, ::1] t = tokens
        cdef Py_ssize_t n = t.shape[0] - 3
        if n < 1 or t.shape[1] != self.plan.n_kinds:
            raise ValueError(f"tokens of shape ({t.shape[0]}, {t.shape[1]}): a sentence of n >= 1 "
                             f"words has n + 3 rows of {self.plan.n_kinds} codes")
        if arc_rows(&self.plan, &t[0, 0], n, &self.sentence):
            raise MemoryError(f"no memory for the arcs of a sentence of {n} words")
        return self.sentence.nnz

    def rows(self, tokens):
        """``(indices, indptr)`` of the sentence whose token codes are ``tokens``,
        copied out of the buffers: int32 columns and int64 row starts, ``(n + 1) * n``
        rows (h = 0..n, m = 1..n)."""
        self.fill(tokens)
        cdef Py_ssize_t r = self.sentence.n_rows, nnz = self.sentence.nnz
        indptr = np.empty(r + 1, np.int64)
        indices = np.empty(nnz, np.int32)
        cdef int64_t[::1] p = indptr
        cdef int32_t[::1] i = indices
        memcpy(&p[0], self.sentence.indptr, (r + 1) * sizeof(int64_t))
        if nnz:
            memcpy(&i[0], self.sentence.indices, nnz * sizeof(int32_t))
        return indices, indptr

    def scores(self, tokens, w):
        """The arc scores of the sentence whose token codes are ``tokens`` under the
        weights ``w`` (float64, at least ``n_columns``): an ``(n + 1) x (n + 1)``
        array, ``S[h, m] = <w, phi_hm>`` summed in the row's order, 0 on the
        diagonal and in column 0."""
        cdef const double[::1] weights = w
        if weights.shape[0] < self.n_columns:
            raise ValueError(f"weights of length {weights.shape[0]}; the features have "
                             f"{self.n_columns} columns")
        self.fill(tokens)
        cdef Py_ssize_t N = self.sentence.n + 1
        S = np.empty((N, N), np.float64)
        cdef double[:, ::1] s = S
        arc_scores(&self.sentence, &weights[0], &s[0, 0])
        return S

    @property
    def capacity(self):
        """The buffers' sizes in entries: ``{"indices": ..., "indptr": ...,
        "work": ...}`` (they grow to the longest sentence met, by half again)."""
        return {"indices": self.sentence.indices_size, "indptr": self.sentence.indptr_size,
                "work": self.sentence.work_size}
