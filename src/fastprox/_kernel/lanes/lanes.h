/* The single-output normalized and AdaGrad rows' passes, the structured rows' rda +
   AdaGrad passes over a feature's K entries, and the linear-chain CRF's K x K products
   (forward-backward's and Viterbi's), in lanes as wide as the CPU has, chosen at run
   time: `_kernel/lanes/passes.h`, `_kernel/lanes/structured_rows.h` and
   `_kernel/lanes/chain.h` instantiated for the portable code (one lane), SSE2 (two, the
   baseline of x86-64), AVX2 (four) and AVX-512 (eight), the last two compiled with GCC's
   target attribute whatever the build machine, so that one build runs on any x86-64 and
   takes the widest lanes the CPU it runs on has, but AVX-512, which measured slower than
   AVX2 on every CPU measured (other architectures and compilers run the portable code).
   Every set gives the portable code's bits (tests/c/lanes.c, tests/test_pairs.py,
   tests/test_sequence_tagger.py, tests/test_decoders.py). `_kernels` chooses a set once,
   at import (`fastprox_lanes_best`), and each pass copies the choice into its context. */
#ifndef FASTPROX_LANES_H
#define FASTPROX_LANES_H
#include <stdint.h>
#include "pairs.h"
#include "../base/layout.h"

#if defined(__GNUC__)
#define FASTPROX_ALWAYS_INLINE __attribute__((always_inline))
#else
#define FASTPROX_ALWAYS_INLINE
#endif
/* A set's operations and the passes' parts (`_kernel/lanes/isa.h`, `_kernel/lanes/passes.h`), inlined
   into the table's entries whatever the compiler's estimate: GCC 12 gives a function that
   takes vector arguments no vzeroupper at its return, so a helper left out of line
   (AVX-512's scatter of pairs was) can return to the Cython code with the upper halves of the
   vector registers in use. */
#define LANES_INLINE static inline FASTPROX_ALWAYS_INLINE LANES_TARGET

/* A row as the passes read it (`_rows.lane_entries`): its n non-zeros' state rows,
   padded to a multiple of the widest lanes with `dummy`, a zero row of the state's width
   that only padding lanes read and write; their values x (nothing beyond x[n - 1] is
   read); and the memos that carry each entry's step factor, scale and weight from one
   pass to the next, n + FASTPROX_LANES_MAX each. */
typedef struct fastprox_lane_row {
    double *const *rows;
    const double *x;
    long long n;
    double *factor, *scale, *weight;
} fastprox_lane_row;

/* One instruction set's passes (`_kernel/lanes/passes.h`). */
typedef struct fastprox_lanes {
    const char *name;
    int width;                      /* L, the lanes of one instruction */
    void (*state_rows)(double **rows, double *state, const int *idx32, const long long *idx64, long long n,
                       long long width, double *dummy);
    double (*normalized_margin)(const fastprox_lane_row *row, int penalized, double R, double alpha, double acc,
                                double *norms, double *x_max);
    double (*normalized_factors)(const fastprox_lane_row *row, int penalized, double q, double rate, double eta0,
                                 double step_norm);
    void (*normalized_step)(const fastprox_lane_row *row, int penalized, double sigma, double rate, double alpha,
                            double R);
    void (*normalized_update)(const fastprox_lane_row *row, int penalized, double q, double rate, double eta0,
                              double alpha, double R);
    double (*adagrad_margin)(const fastprox_lane_row *row, double t, double alpha, double acc, double *x_max);
    void (*adagrad_step)(const fastprox_lane_row *row, double q, double t, double alpha, double rho1, double delta,
                         double eta0);
    /* the structured rows' rda + AdaGrad entries (`_kernel/lanes/structured_rows.h`) */
    void (*dual_margins)(const double *e, long long stride, long long K, double x, double *scores, double delta,
                         double inv_eta0, double rho, double l1, double l2);
    void (*dual_apply)(double *e, long long stride, long long K, double *sums, long long S, double delta,
                       double inv_eta0, double rho, double threshold);
    int (*dual_skipped)(double *e, long long stride, long long n, double delta, double inv_eta0, double rho,
                        double alpha, double at_lo, double at_hi, double cnt, double span, long long S, double *terms);
    int (*scale_sums)(double *sums, long long K, double h, double limit);
    void (*add_products)(double *sums, const double *q, double x, long long K);
    /* the CRF's products (`_kernel/lanes/chain.h`) */
    void (*chain_combine)(const double *w, long long ws, const double *rows, long long count, long long K,
                          double *out, int start, long long outputs, long long wstep);
    void (*chain_best)(const double *prev, const double *A, long long K, double *best, int64_t *rows);
} fastprox_lanes;

/* The single-output normalized rows' sums over a row (the margin, the invariant step's
   step norm) in four partial sums, whatever the lanes: a row's term i joins partial i
   mod 4 in the row's order, the sum's start (the intercept's term) partial 0, and the
   total is (s0 + s2) + (s1 + s3). Four independent chains of additions, each a quarter
   of the row long, where one chain waited on each addition before: the order every set
   keeps (`_kernel/lanes/isa.h`'s Q_ADD, a vector of four or two of two) and the general
   step takes through these functions (`_kernel/steps/step.pxd`'s `margins`,
   `invariant_sigmas`), so that every path gives the same bits. */
typedef struct fastprox_sum4 {
    double s[4];
} fastprox_sum4;

static inline fastprox_sum4 fastprox_sum4_start(double start)
{
    fastprox_sum4 q = {{start, 0.0, 0.0, 0.0}};
    return q;
}

static inline void fastprox_sum4_add(fastprox_sum4 *q, long long i, double term)
{
    q->s[i & 3] += term;
}

static inline double fastprox_sum4_total(const fastprox_sum4 *q)
{
    return (q->s[0] + q->s[2]) + (q->s[1] + q->s[3]);
}

/* The most lanes of any set: the padding a row's arrays need. */
#define FASTPROX_LANES_MAX 8

#define FASTPROX_LANES_PORTABLE 0
#define FASTPROX_LANES_SSE2 1
#define FASTPROX_LANES_AVX2 2
#define FASTPROX_LANES_AVX512 3

#define FASTPROX_LANES_ISA FASTPROX_LANES_PORTABLE
#include "isa.h"
#include "structured_rows.h"
#include "chain.h"
#include "passes.h"
#undef FASTPROX_LANES_ISA

#if defined(__SSE2__)
#define FASTPROX_LANES_ISA FASTPROX_LANES_SSE2
#include "isa.h"
#include "structured_rows.h"
#include "chain.h"
#include "passes.h"
#undef FASTPROX_LANES_ISA
#endif

/* The wider sets: GCC and clang on x86-64, which compile a function for a target the
   build does not assume and tell at run time what the CPU (and the OS, which must save
   the wider registers) supports. */
#if defined(__x86_64__) && defined(__GNUC__) && defined(__SSE2__)
#define FASTPROX_LANES_WIDE 1
#define FASTPROX_LANES_ISA FASTPROX_LANES_AVX2
#include "isa.h"
#include "structured_rows.h"
#include "chain.h"
#include "passes.h"
#undef FASTPROX_LANES_ISA
#define FASTPROX_LANES_ISA FASTPROX_LANES_AVX512
#include "isa.h"
#include "structured_rows.h"
#include "chain.h"
#include "passes.h"
#undef FASTPROX_LANES_ISA
#else
#define FASTPROX_LANES_WIDE 0
#endif

/* Every set this build has, narrowest first. */
static const fastprox_lanes *const fastprox_lanes_all[] = {
    &fastprox_portable_lanes,
#if defined(__SSE2__)
    &fastprox_sse2_lanes,
#endif
#if FASTPROX_LANES_WIDE
    &fastprox_avx2_lanes,
    &fastprox_avx512_lanes,
#endif
};
#define FASTPROX_LANES_COUNT ((int)(sizeof fastprox_lanes_all / sizeof fastprox_lanes_all[0]))

/* Whether this CPU runs the set (the portable code and SSE2 run wherever they are built). */
static inline int fastprox_lanes_runs(const fastprox_lanes *lanes)
{
#if FASTPROX_LANES_WIDE
    __builtin_cpu_init();
    if (lanes == &fastprox_avx2_lanes)
        return __builtin_cpu_supports("avx2");
    if (lanes == &fastprox_avx512_lanes)
        return __builtin_cpu_supports("avx512f");
#endif
    (void)lanes;
    return 1;
}

/* The set of index i of `fastprox_lanes_all` if this CPU runs it, else NULL. */
static inline const fastprox_lanes *fastprox_lanes_at(int i)
{
    if (i < 0 || i >= FASTPROX_LANES_COUNT || !fastprox_lanes_runs(fastprox_lanes_all[i]))
        return NULL;
    return fastprox_lanes_all[i];
}

#if FASTPROX_LANES_WIDE
#include <cpuid.h>
#endif
/* Whether the upper halves of the vector registers are in use as the caller runs (XGETBV
   of ECX 1, XINUSE: its YMM_Hi128 and ZMM_Hi256 bits): 1 or 0, -1 where the CPU cannot tell.
   Every pass leaves them zeroed (LANES_LEAVE): on Intel's cores the SSE code that runs while
   they are in use (the Cython kernels, the interpreter) waits on them, until the next
   vzeroupper. For the test that checks it. */
static inline int fastprox_upper_in_use(void)
{
#if FASTPROX_LANES_WIDE
    unsigned int eax, ebx, ecx, edx, lo, hi;
    if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx) || !(ecx & bit_OSXSAVE) ||
        !__get_cpuid_count(0xd, 1, &eax, &ebx, &ecx, &edx) || !(eax & (1u << 2)))
        return -1;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(1));
    (void)hi;
    return (lo & ((1u << 2) | (1u << 6))) != 0;
#else
    return -1;
#endif
}

/* Whether the import passes over `lanes` for a narrower set: AVX-512, which has measured
   slower than AVX2 on every CPU measured so far. An AMD EPYC of family 25 model 17 (Zen 4,
   which executes AVX-512 in two 256-bit halves): the defaults' pass 7-9% longer on the
   peer suite's short-row sets (a9a, w8a, ijcnn1), within 5% either way on the others
   (in-process medians of 31 passes). An Intel Xeon of family 6 model 207: 0-18% longer on
   eight of the peer suite's nine sets, most on the short-row ones (a9a, w8a, ijcnn1: 10-18%),
   and within 4% either way on the rcv1 sample (interleaved CPU-time medians of 11 passes,
   three runs, bench/results/default_decompose.md). The set stays in the table, where
   `use_lanes` takes it (the tests of its bits, the benchmarks). */
static inline int fastprox_lanes_passed_over(const fastprox_lanes *lanes)
{
#if FASTPROX_LANES_WIDE
    return lanes == &fastprox_avx512_lanes;
#else
    (void)lanes;
    return 0;
#endif
}

/* The import's choice: the widest set this CPU runs, but AVX-512
   (`fastprox_lanes_passed_over`). */
static inline const fastprox_lanes *fastprox_lanes_best(void)
{
    int i = FASTPROX_LANES_COUNT - 1;
    while (fastprox_lanes_at(i) == NULL || fastprox_lanes_passed_over(fastprox_lanes_at(i)))
        i--;
    return fastprox_lanes_at(i);
}
#endif
