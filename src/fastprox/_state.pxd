# The state of K linear models as one step sees it (`Ctx`), its layout, and the
# scratch space the steps allocate when first needed.
from libc.stdlib cimport calloc, realloc, free
from fastprox._types cimport FTRL
from fastprox._losses cimport LogSum
from fastprox._berhu cimport Heap

cdef struct Ctx:
    # What one step reads and writes, as plain C values and pointers into the
    # Learner's arrays: copied to a local for a run of steps, so that stores
    # into the state cannot alias the parameters (no reloads in the loops).
    int update, schedule, penalty, loss, K, n_row, n_entry, off_P, off_Q
    bint ovr, fit_intercept, berhu_heap
    bint plain_fobos              # one output, fobos, scalar step, l1/l2/elasticnet/none
    bint plain_adagrad            # one output, fobos + adagrad, l1/l2/elasticnet/none
    bint plain_dual               # one output, rda or ftrl, l1/l2/elasticnet/none
    bint plain_normalized         # one output, fobos + normalized, l1/none, either step
    bint plain_rows               # fobos, scalar step, l1_l2/l1_linf over W's rows, unweighted
    bint ftrl_roots               # ftrl entries hold sqrt(n) too (FTRL_ROOTS_ENTRIES)
    bint invariant                # fobos's forward step is the importance-invariant flow
    double alpha_pen, rho1, eta0, delta, rda_rho, gamma, epsilon
    double inv_eta0               # dual weights multiply by it (beta = (delta + sqrt(G)) / eta0)
    long long d, width, rebase_period
    double* state                 # (d, width) row-major
    double* bstate                # (K, 2): b | s_b | z_b, then G_b | n_b
    long long t                   # steps completed
    long long n_ops               # entries visited (catch-up, margin, update, rebase)
    long long since_rebase
    double P, Q                   # scalar-FOBOS cumulants; normalized: Q is sum_tau r_tau (P unused)
    double norm_sum               # normalized: N_t, the rows' squared norms in their features' scales
    Heap heap                     # Berhu's l2-phase schedule
    double eta, wc, wl2, wbeta    # per-step constants: step, dual threshold, l2, beta_t
    double eta_next               # eta of step eta_next_t (0: none), computed a step ahead
    long long eta_next_t
    double wthr, winv             # rda/invsqrt: the threshold and 1/denominator of every weight
    LogSum lsum                   # progressive log losses' log1p parts, summed once per call
    bint nonfinite                # a step of this call stopped before its update (fit_csr raises):
    bint steep                    # its margin was NaN or infinite, or (steep) its gradient too large
    double* p                     # (K,) margins
    double* q                     # (K,) loss derivatives
    double* qsum                  # (K,) intercept gradient of the step
    double* sigma                 # (K,) invariant step: each output's step norm q, then its sigma
    # scratch the steps allocate when first needed (`ensure_scratch`), freed with the Learner
    double* gacc                  # (d, K) batch gradient accumulator
    long long* mark               # (d,) step at which a feature was last collected
    long long* touched            # (d,) features of the current batch
    # multiclass and groups
    bint multinomial              # softmax (log) or Crammer-Singer (hinge) over K scores
    bint grouped                  # a group penalty (l1_l2, l1_linf, sparse_group, squared_group)
    long long n_groups            # p, the number of groups
    long long* group              # (d,) group id per feature (-1: unpenalized); NULL: rows
    long long* gptr               # (p + 1,) user groups' members are gmem[gptr[g]:gptr[g + 1]]
    long long* gmem
    double* gstamp                # (p,) threshold sum (or step, sparse_group) at the last update
    double* gnorm                 # (p,) squared_group: ||W_G|| at the stamp
    double* gnow                  # (p,) squared_group scratch: every ||W_G|| at this step
    double* gweight               # (p,) d_G, the groups' penalty weights; NULL: all 1
    long long* gmark              # (p,) step at which a group was last caught up
    long long* gtouched           # (p,) groups caught up in the current step
    long long n_tg
    double* block                 # scratch: one gathered block
    double* work                  # scratch: sorting (l1_linf, squared_group tau)
    double* wcache                # (d, K) rda: weights of the current step's touched groups
    double* gbeta                 # scratch: one block's per-entry beta (rda + adagrad)
    double* wrow                  # (longest row, K, 2) ftrl: (w, sqrt(n)) of the row being processed,
    long long wrow_size           # its doubles (`ensure_scratch`, as gacc)
    double* bmemo                 # (K, 2) ftrl: (b, sqrt(n_b)) as the step's margins read them


cdef inline double* entry(Ctx* c, double* row, int k) noexcept nogil:
    return row + c.n_row + k * c.n_entry


cdef inline long long index(Ctx* c, double* row, int k) noexcept nogil:
    """Flat index j * K + k of entry k of a row (for layouts without row fields)."""
    return (row - c.state) // c.n_entry + k


cdef inline int ensure_scratch(Ctx* c, long long longest, int batch_size) except -1:
    """Allocate the scratch the coming steps write, once needed: ftrl's (w, sqrt(n))
    memo for rows of up to `longest` non-zeros, and for batches the gradient
    accumulator and feature marks (calloc: pages a pass never touches stay unmapped)."""
    cdef long long need = 2 * c.K * max(longest, 1) if c.update == FTRL else 0
    cdef double* grown
    if need > c.wrow_size:
        grown = <double*>realloc(c.wrow, need * sizeof(double))
        if grown == NULL:
            raise MemoryError()
        c.wrow, c.wrow_size = grown, need
    if batch_size > 1 and c.mark == NULL:
        c.gacc = <double*>calloc(c.d * c.K, sizeof(double))
        c.mark = <long long*>calloc(c.d, sizeof(long long))
        c.touched = <long long*>calloc(c.d, sizeof(long long))
        if c.gacc == NULL or c.mark == NULL or c.touched == NULL:
            free_scratch(c)
            raise MemoryError()
    return 0


cdef inline void free_scratch(Ctx* c) noexcept:
    """Release what `ensure_scratch` allocated; the next steps allocate it again."""
    free(c.wrow)
    free(c.gacc)
    free(c.mark)
    free(c.touched)
    c.wrow, c.gacc, c.mark, c.touched, c.wrow_size = NULL, NULL, NULL, NULL, 0
