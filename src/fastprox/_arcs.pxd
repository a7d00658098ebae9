# The arc kernel's Python face, declared so that another compiled module (the
# parser's training loop) can cimport it and reach the plan and the rows from C:
#     cdef ArcKernel k = features.kernel
#     arc_rows(&k.plan, tokens, n, &my_rows)      # nogil, no Python object per arc
from fastprox._kernel.structured.arcs cimport ArcPlan, ArcRows

cdef class ArcKernel:
    cdef ArcPlan plan
    cdef ArcRows sentence        # the last sentence filled
    cdef readonly long long n_columns
    cdef object _arrays
