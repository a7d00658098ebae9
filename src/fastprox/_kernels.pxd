# The Learner's C-level declaration: its attributes and its context (`Ctx c`), so
# that another compiled module (`_structured`) can cimport it and drive the steps
# of its context without going through Python.
cimport cython
from fastprox._kernel.base.state cimport Ctx
from fastprox._kernel.lanes.lanes cimport lanes_t


@cython.final
cdef class Learner:
    cdef readonly long long n_features
    cdef readonly long long capacity      # features the arrays hold (>= n_features: `grow`)
    cdef readonly int n_outputs
    cdef readonly long long n_unpenalized # m: unpenalized entries beside the intercepts (structured)
    cdef readonly object update, schedule, penalty, loss, step
    cdef readonly double alpha, l1_ratio, eta0, delta, rda_rho, berhu_gamma, epsilon, t0, intercept_scaling
    cdef readonly bint fit_intercept, ovr, multinomial
    cdef readonly object groups, group_weights
    cdef Ctx c
    cdef object arrays                    # name -> flat buffer: everything c points into
    cdef object _coef                     # coef() at step count _coef_t
    cdef long long _coef_t
    cdef readonly bint training           # fit_rows is running (in some thread)
    cdef readonly long long average       # a: the first step averaged (0: no averaged iterate)
    cdef long long avg_history_size       # doubles c.arrays.avg_history holds
    cdef object _avg_coef                 # averaged_coef() at step count _avg_coef_t
    cdef long long _avg_coef_t
    cdef object _margin_W                 # _margin_weights(_margin_W_averaged) at step count _margin_W_t
    cdef long long _margin_W_t
    cdef bint _margin_W_averaged

    cdef object _materialize(self, bint averaged, bint signed_zeros)

    cdef dict _new_arrays(self, long long capacity)
    cdef _size_history(self)
    cdef _drop_ftrl_roots(self)
    cdef _attach(self, dict saved)


# The passes in lanes `lanes()` names (the import's set, or `use_lanes`'), for the compiled
# code that runs them outside a pass's context: the structured steps (`structured_scratch`
# copies it into their context) and the CRF's decoders (`structured._tagger`, `_decoders`).
cdef const lanes_t* chosen_lanes() noexcept nogil
