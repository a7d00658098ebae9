# The Cython side of `_kernel/lanes/lanes.h`: the single-output normalized and AdaGrad rows' passes,
# the structured rows' rda + AdaGrad entries' (`_kernel/lanes/structured_rows.h`) and the CRF's
# K x K products (`_kernel/lanes/chain.h`) in lanes as wide as the CPU has (portable, SSE2, AVX2,
# AVX-512; the same bits), one table of passes per instruction set, chosen once at import (`_kernels`).
from libc.stdint cimport int64_t


cdef extern from "_kernel/lanes/lanes.h" nogil:
    ctypedef struct lane_row_t "fastprox_lane_row":
        double** rows
        const double* x
        long long n
        double* factor
        double* scale
        double* weight
    ctypedef struct lanes_t "fastprox_lanes":
        const char* name
        int width
        void (*state_rows)(double** rows, double* state, const int* idx32, const long long* idx64, long long n,
                           long long width, double* dummy) noexcept nogil
        double (*normalized_margin)(const lane_row_t* row, bint penalized, double threshold_sum, double alpha,
                                    double acc, double* norms, double* x_max) noexcept nogil
        double (*normalized_factors)(const lane_row_t* row, bint penalized, double q, double rate, double eta0,
                                     double step_norm) noexcept nogil
        void (*normalized_step)(const lane_row_t* row, bint penalized, double sigma, double rate, double alpha,
                                double threshold_sum) noexcept nogil
        void (*normalized_update)(const lane_row_t* row, bint penalized, double q, double rate, double eta0,
                                  double alpha, double threshold_sum) noexcept nogil
        double (*adagrad_margin)(const lane_row_t* row, double t, double alpha, double acc,
                                 double* x_max) noexcept nogil
        void (*adagrad_step)(const lane_row_t* row, double q, double t, double alpha, double l1_share,
                             double delta, double eta0) noexcept nogil
        void (*dual_margins)(const double* e, long long stride, long long K, double x, double* scores,
                             double delta, double inv_eta0, double rho, double l1, double l2) noexcept nogil
        void (*dual_apply)(double* e, long long stride, long long K, double* sums, long long S, double delta,
                           double inv_eta0, double rho, double threshold) noexcept nogil
        bint (*dual_skipped)(double* e, long long stride, long long n, double delta, double inv_eta0,
                             double rho, double alpha, double at_lo, double at_hi, double cnt, double span,
                             long long S, double* terms) noexcept nogil
        bint (*scale_sums)(double* sums, long long K, double h, double limit) noexcept nogil
        void (*add_products)(double* sums, const double* q, double x, long long K) noexcept nogil
        void (*chain_combine)(const double* w, long long ws, const double* rows, long long count, long long K,
                              double* out, bint start, long long outputs, long long wstep) noexcept nogil
        void (*chain_best)(const double* prev, const double* A, long long K, double* best,
                           int64_t* rows) noexcept nogil
    ctypedef struct sum4_t "fastprox_sum4":
        double s[4]
    sum4_t sum4_start "fastprox_sum4_start"(double start)
    void sum4_add "fastprox_sum4_add"(sum4_t* q, long long i, double term)
    double sum4_total "fastprox_sum4_total"(const sum4_t* q)
    const int LANES_MAX "FASTPROX_LANES_MAX"
    const int LANES_COUNT "FASTPROX_LANES_COUNT"
    const lanes_t* lanes_at "fastprox_lanes_at"(int i)
    const lanes_t* lanes_best "fastprox_lanes_best"()
    int upper_in_use "fastprox_upper_in_use"()
