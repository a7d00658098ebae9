/* The lane operations of one instruction set, for `_kernel/lanes/passes.h` (`_kernel/lanes/lanes.h` includes
   this file before each instantiation, FASTPROX_LANES_ISA naming the set): a vector V of
   L doubles, a mask M of its lanes, and the operations the passes use. Each operation
   works lane by lane, each lane as the portable code's scalar operation (IEEE addition,
   multiplication, division and square root are correctly rounded at any width; max,
   comparisons, blends and sign operations are exact), so every set gives the portable
   code's bits (tests/c/lanes.c checks them on every set the CPU has).

       V_LOAD(p), V_STORE(p, v)        L doubles at p (the row's values, the memos)
       V_LOAD_TAIL(p, k)               the first k < L doubles at p, 0 in the other lanes (nothing
                                       beyond p + k is read)
       V_STORE_TAIL(p, v, k)           v's first k < L lanes stored at p (nothing beyond p + k written)
       V_GATHER(rows, k)               (rows[0][k], ..., rows[L-1][k]): one field of L state rows
       V_SCATTER(rows, k, v)           the reverse, lane 0 first
       V_GATHER2(rows, k, a, b)        *a, *b = fields k and k + 1 of the rows (one load of both a row)
       V_SCATTER2(rows, k, a, b)       the reverse
       V_SET1(a), V_ZERO               a in every lane; +0
       V_ADD, V_SUB, V_MUL, V_DIV, V_SQRT
       V_ABS(v)                        |v| (the sign bit cleared)
       V_NEG(v), V_COPYSIGN(a, b)      -v (the sign bit flipped); |a| with b's sign bit
       V_MAX(a, b)                     a > b ? a : b (maxsd's rule: b where either is NaN)
       V_GT, V_EQ (ordered), V_NEQ (unordered: true for NaN)   -> M
       V_NOT_LT(a, b), V_NOT_LE(a, b)  !(a < b), !(a <= b) -> M (true where either is NaN)
       M_AND(m, n), M_OR(m, n)         both; either
       M_ANDNOT(m, n), M_NONE          m and not n; no lane
       M_ANY(m)                        whether any lane is set
       V_BLEND(m, a, b), V_KEEP(m, a)  m ? a : b; m ? a : +0
       V_SOFT(v, thr)                  copysign(max0(|v| - thr), v), as `soft_threshold`
       Q, Q_START(a)                   a row's sum in four partial sums (`fastprox_sum4`), a in the first
       Q_ADD(q, i, v, k)               *q gets the first k lanes of v, the row's terms i .. i + k - 1, each
                                       into partial (its term's index) mod 4 (the other lanes add nothing)
       Q_TOTAL(q)                      (s0 + s2) + (s1 + s3), as `fastprox_sum4_total`
       LANES_LEAVE()                   the upper halves of the vector registers zeroed (vzeroupper in the
                                       AVX sets, nothing in the others), as a pass returns
   LANES_TARGET is the set's target attribute (none for the baseline), LANES_ISA_NAME its name. */
#undef LANES
#undef LANES_TARGET
#undef LANES_ISA_NAME
#undef LANES_NAME
#undef V
#undef M
#undef V_LOAD
#undef V_STORE
#undef V_LOAD_TAIL
#undef V_STORE_TAIL
#undef V_GATHER
#undef V_SCATTER
#undef V_GATHER2
#undef V_SCATTER2
#undef V_SET1
#undef V_ZERO
#undef V_ADD
#undef V_SUB
#undef V_MUL
#undef V_DIV
#undef V_SQRT
#undef V_ABS
#undef V_NEG
#undef V_COPYSIGN
#undef V_MAX
#undef V_GT
#undef V_EQ
#undef V_NEQ
#undef V_NOT_LT
#undef V_NOT_LE
#undef M_AND
#undef M_OR
#undef M_ANDNOT
#undef M_NONE
#undef M_ANY
#undef V_BLEND
#undef V_KEEP
#undef V_SOFT
#undef Q
#undef Q_START
#undef Q_ADD
#undef Q_TOTAL
#undef LANES_LEAVE

#if FASTPROX_LANES_ISA == FASTPROX_LANES_PORTABLE
/* One lane of plain C: the code for CPUs without SSE2 and other architectures. */
#include <math.h>
#define LANES 1
#define LANES_TARGET
#define LANES_ISA_NAME "portable"
#define LANES_NAME(f) fastprox_portable_##f
#define V double
#define M int
#define V_LOAD(p) (*(p))
#define V_STORE(p, v) (*(p) = (v))
#define V_LOAD_TAIL(p, k) 0.0           /* (one lane: no tail) */
#define V_STORE_TAIL(p, v, k) ((void)0) /* (one lane: no tail) */
#define V_GATHER(rows, k) ((rows)[0][k])
#define V_SCATTER(rows, k, v) ((rows)[0][k] = (v))
#define V_GATHER2(rows, k, a, b) (*(a) = (rows)[0][k], *(b) = (rows)[0][(k) + 1])
#define V_SCATTER2(rows, k, a, b) ((rows)[0][k] = (a), (rows)[0][(k) + 1] = (b))
#define V_SET1(a) (a)
#define V_ZERO 0.0
#define V_ADD(a, b) ((a) + (b))
#define V_SUB(a, b) ((a) - (b))
#define V_MUL(a, b) ((a) * (b))
#define V_DIV(a, b) ((a) / (b))
#define V_SQRT(a) sqrt(a)
#define V_ABS(a) fabs(a)
#define V_MAX(a, b) ((a) > (b) ? (a) : (b))
#define V_GT(a, b) ((a) > (b))
#define V_EQ(a, b) ((a) == (b))
#define V_NEQ(a, b) ((a) != (b))
#define M_AND(m, n) ((m) && (n))
#define M_ANY(m) (m)
#define V_NEG(a) (-(a))
#define V_COPYSIGN(a, b) copysign((a), (b))
#define V_NOT_LT(a, b) (!((a) < (b)))
#define V_NOT_LE(a, b) (!((a) <= (b)))
#define M_OR(m, n) ((m) || (n))
#define M_ANDNOT(m, n) ((m) && !(n))
#define M_NONE 0
#define V_BLEND(m, a, b) ((m) ? (a) : (b))
#define V_KEEP(m, a) ((m) ? (a) : 0.0)
#define V_SOFT(v, thr) fastprox_soft((v), (thr))
#define Q fastprox_sum4
#define Q_START fastprox_sum4_start
#define Q_ADD(q, i, v, k) fastprox_sum4_add((q), (i), (v))
#define Q_TOTAL(q) fastprox_sum4_total(&(q))
#define LANES_LEAVE() ((void)0)

#elif FASTPROX_LANES_ISA == FASTPROX_LANES_SSE2
/* Two lanes: _kernel/lanes/pairs.h's SSE2 operations (the baseline of x86-64). */
static inline void fastprox_sse2_gather_pair(double *const *rows, int k, __m128d *a, __m128d *b)
{
    __m128d r0 = _mm_loadu_pd(rows[0] + k), r1 = _mm_loadu_pd(rows[1] + k);
    *a = _mm_unpacklo_pd(r0, r1);
    *b = _mm_unpackhi_pd(r0, r1);
}
static inline void fastprox_sse2_scatter_pair(double *const *rows, int k, __m128d a, __m128d b)
{
    _mm_storeu_pd(rows[0] + k, _mm_unpacklo_pd(a, b));
    _mm_storeu_pd(rows[1] + k, _mm_unpackhi_pd(a, b));
}
#define LANES 2
#define LANES_TARGET
#define LANES_ISA_NAME "sse2"
#define LANES_NAME(f) fastprox_sse2_##f
#define V __m128d
#define M __m128d
#define V_LOAD(p) _mm_loadu_pd(p)
#define V_STORE(p, v) _mm_storeu_pd((p), (v))
#define V_LOAD_TAIL(p, k) _mm_load_sd(p)
#define V_STORE_TAIL(p, v, k) _mm_store_sd((p), (v))
#define V_GATHER(rows, k) _mm_loadh_pd(_mm_load_sd((rows)[0] + (k)), (rows)[1] + (k))
#define V_SCATTER(rows, k, v) fastprox_put2((rows)[0], (rows)[1], (k), (v))
#define V_GATHER2 fastprox_sse2_gather_pair
#define V_SCATTER2 fastprox_sse2_scatter_pair
#define V_SET1(a) _mm_set1_pd(a)
#define V_ZERO _mm_setzero_pd()
#define V_ADD _mm_add_pd
#define V_SUB _mm_sub_pd
#define V_MUL _mm_mul_pd
#define V_DIV _mm_div_pd
#define V_SQRT _mm_sqrt_pd
#define V_ABS(a) _mm_andnot_pd(_mm_set1_pd(-0.0), (a))
#define V_MAX _mm_max_pd
#define V_GT _mm_cmpgt_pd
#define V_EQ _mm_cmpeq_pd
#define V_NEQ _mm_cmpneq_pd
#define M_AND _mm_and_pd
#define M_ANY(m) _mm_movemask_pd(m)
#define V_NEG(a) _mm_xor_pd((a), _mm_set1_pd(-0.0))
#define V_COPYSIGN(a, b) _mm_or_pd(_mm_andnot_pd(_mm_set1_pd(-0.0), (a)), _mm_and_pd(_mm_set1_pd(-0.0), (b)))
#define V_NOT_LT(a, b) _mm_cmpnlt_pd((a), (b))
#define V_NOT_LE(a, b) _mm_cmpnle_pd((a), (b))
#define M_OR _mm_or_pd
#define M_ANDNOT(m, n) _mm_andnot_pd((n), (m))
#define M_NONE _mm_setzero_pd()
#define V_BLEND fastprox_blend2
#define V_KEEP _mm_and_pd
#define V_SOFT fastprox_soft2
/* Two pairs of partial sums, the one the next pair of terms joins first: each addition
   swaps them, as the terms' pairs alternate between (s0, s1) and (s2, s3); the total's
   (a + b) is the same sum whichever pair is first. */
typedef struct fastprox_sse2_sum4 {
    __m128d a, b;
} fastprox_sse2_sum4;
static inline fastprox_sse2_sum4 fastprox_sse2_sum4_start(double start)
{
    fastprox_sse2_sum4 q = {_mm_set_sd(start), _mm_setzero_pd()};
    return q;
}
static inline void fastprox_sse2_sum4_add(fastprox_sse2_sum4 *q, __m128d v, long long k)
{
    __m128d a = _mm_add_pd(q->a, k < 2 ? _mm_move_sd(_mm_setzero_pd(), v) : v);
    q->a = q->b;
    q->b = a;
}
static inline double fastprox_sse2_sum4_total(fastprox_sse2_sum4 q)
{
    __m128d t = _mm_add_pd(q.a, q.b);
    return _mm_cvtsd_f64(t) + _mm_cvtsd_f64(_mm_unpackhi_pd(t, t));
}
#define Q fastprox_sse2_sum4
#define Q_START fastprox_sse2_sum4_start
#define Q_ADD(q, i, v, k) fastprox_sse2_sum4_add((q), (v), (k))
#define Q_TOTAL fastprox_sse2_sum4_total
#define LANES_LEAVE() ((void)0)

#elif FASTPROX_LANES_ISA == FASTPROX_LANES_AVX2
/* Four lanes of AVX (chosen where the CPU has AVX2: every AVX CPU since 2013). */
#include <immintrin.h>
#define LANES 4
#define LANES_TARGET __attribute__((target("avx2")))
#define LANES_ISA_NAME "avx2"
#define LANES_NAME(f) fastprox_avx2_##f
#define V __m256d
#define M __m256d
LANES_INLINE __m256d fastprox_avx2_gather(double *const *rows, int k)
{
    __m128d lo = _mm_loadh_pd(_mm_load_sd(rows[0] + k), rows[1] + k);
    __m128d hi = _mm_loadh_pd(_mm_load_sd(rows[2] + k), rows[3] + k);
    return _mm256_insertf128_pd(_mm256_castpd128_pd256(lo), hi, 1);
}
LANES_INLINE void fastprox_avx2_scatter(double *const *rows, int k, __m256d v)
{
    __m128d lo = _mm256_castpd256_pd128(v), hi = _mm256_extractf128_pd(v, 1);
    _mm_storel_pd(rows[0] + k, lo);
    _mm_storeh_pd(rows[1] + k, lo);
    _mm_storel_pd(rows[2] + k, hi);
    _mm_storeh_pd(rows[3] + k, hi);
}
LANES_INLINE __m256d fastprox_avx2_pairs(double *const *rows, int k)
{
    return _mm256_insertf128_pd(_mm256_castpd128_pd256(_mm_loadu_pd(rows[0] + k)), _mm_loadu_pd(rows[2] + k), 1);
}
LANES_INLINE void fastprox_avx2_gather_pair(double *const *rows, int k, __m256d *a, __m256d *b)
{
    __m256d even = fastprox_avx2_pairs(rows, k), odd = fastprox_avx2_pairs(rows + 1, k);   /* rows 0, 2; 1, 3 */
    *a = _mm256_unpacklo_pd(even, odd);
    *b = _mm256_unpackhi_pd(even, odd);
}
LANES_INLINE void fastprox_avx2_scatter_pair(double *const *rows, int k, __m256d a, __m256d b)
{
    __m256d even = _mm256_unpacklo_pd(a, b), odd = _mm256_unpackhi_pd(a, b);
    _mm_storeu_pd(rows[0] + k, _mm256_castpd256_pd128(even));
    _mm_storeu_pd(rows[1] + k, _mm256_castpd256_pd128(odd));
    _mm_storeu_pd(rows[2] + k, _mm256_extractf128_pd(even, 1));
    _mm_storeu_pd(rows[3] + k, _mm256_extractf128_pd(odd, 1));
}
LANES_INLINE __m256d fastprox_avx2_load_tail(const double *p, long long k)
{
    __m256i lanes = _mm256_set_epi64x(3, 2, 1, 0);
    return _mm256_maskload_pd(p, _mm256_cmpgt_epi64(_mm256_set1_epi64x(k), lanes));
}
LANES_INLINE void fastprox_avx2_store_tail(double *p, __m256d v, long long k)
{
    _mm256_maskstore_pd(p, _mm256_cmpgt_epi64(_mm256_set1_epi64x(k), _mm256_set_epi64x(3, 2, 1, 0)), v);
}
LANES_INLINE __m256d fastprox_avx2_soft(__m256d v, __m256d thr)
{
    const __m256d sign = _mm256_set1_pd(-0.0);
    __m256d m = _mm256_sub_pd(_mm256_andnot_pd(sign, v), thr);
    return _mm256_or_pd(_mm256_andnot_pd(sign, _mm256_max_pd(_mm256_setzero_pd(), m)), _mm256_and_pd(sign, v));
}
#define V_LOAD(p) _mm256_loadu_pd(p)
#define V_STORE(p, v) _mm256_storeu_pd((p), (v))
#define V_LOAD_TAIL fastprox_avx2_load_tail
#define V_STORE_TAIL fastprox_avx2_store_tail
#define V_GATHER fastprox_avx2_gather
#define V_SCATTER fastprox_avx2_scatter
#define V_GATHER2 fastprox_avx2_gather_pair
#define V_SCATTER2 fastprox_avx2_scatter_pair
#define V_SET1(a) _mm256_set1_pd(a)
#define V_ZERO _mm256_setzero_pd()
#define V_ADD _mm256_add_pd
#define V_SUB _mm256_sub_pd
#define V_MUL _mm256_mul_pd
#define V_DIV _mm256_div_pd
#define V_SQRT _mm256_sqrt_pd
#define V_ABS(a) _mm256_andnot_pd(_mm256_set1_pd(-0.0), (a))
#define V_MAX _mm256_max_pd
#define V_GT(a, b) _mm256_cmp_pd((a), (b), _CMP_GT_OQ)
#define V_EQ(a, b) _mm256_cmp_pd((a), (b), _CMP_EQ_OQ)
#define V_NEQ(a, b) _mm256_cmp_pd((a), (b), _CMP_NEQ_UQ)
#define M_AND _mm256_and_pd
#define M_ANY(m) _mm256_movemask_pd(m)
#define V_NEG(a) _mm256_xor_pd((a), _mm256_set1_pd(-0.0))
#define V_COPYSIGN(a, b) \
    _mm256_or_pd(_mm256_andnot_pd(_mm256_set1_pd(-0.0), (a)), _mm256_and_pd(_mm256_set1_pd(-0.0), (b)))
#define V_NOT_LT(a, b) _mm256_cmp_pd((a), (b), _CMP_NLT_UQ)
#define V_NOT_LE(a, b) _mm256_cmp_pd((a), (b), _CMP_NLE_UQ)
#define M_OR _mm256_or_pd
#define M_ANDNOT(m, n) _mm256_andnot_pd((n), (m))
#define M_NONE _mm256_setzero_pd()
#define V_BLEND(m, a, b) _mm256_blendv_pd((b), (a), (m))
#define V_KEEP _mm256_and_pd
#define V_SOFT fastprox_avx2_soft
/* The four partial sums in one vector (a term's lane is its index mod 4). */
LANES_INLINE __m256d fastprox_avx2_sum4_start(double start)
{
    return _mm256_set_pd(0.0, 0.0, 0.0, start);
}
LANES_INLINE void fastprox_avx2_sum4_add(__m256d *q, __m256d v, long long k)
{
    if (k < 4)
        v = _mm256_and_pd(v, _mm256_castsi256_pd(_mm256_cmpgt_epi64(_mm256_set1_epi64x(k),
                                                                     _mm256_set_epi64x(3, 2, 1, 0))));
    *q = _mm256_add_pd(*q, v);
}
LANES_INLINE double fastprox_avx2_sum4_total(__m256d q)
{
    __m128d t = _mm_add_pd(_mm256_castpd256_pd128(q), _mm256_extractf128_pd(q, 1));
    return _mm_cvtsd_f64(t) + _mm_cvtsd_f64(_mm_unpackhi_pd(t, t));
}
#define Q __m256d
#define Q_START fastprox_avx2_sum4_start
#define Q_ADD(q, i, v, k) fastprox_avx2_sum4_add((q), (v), (k))
#define Q_TOTAL fastprox_avx2_sum4_total
#define LANES_LEAVE _mm256_zeroupper

#elif FASTPROX_LANES_ISA == FASTPROX_LANES_AVX512
/* Eight lanes of AVX-512F, masks in mask registers. */
#include <immintrin.h>
#define LANES 8
#define LANES_TARGET __attribute__((target("avx512f")))
#define LANES_ISA_NAME "avx512"
#define LANES_NAME(f) fastprox_avx512_##f
#define V __m512d
#define M __mmask8
LANES_INLINE __m128d fastprox_avx512_gather2(double *const *rows, int k)
{
    return _mm_loadh_pd(_mm_load_sd(rows[0] + k), rows[1] + k);
}
LANES_INLINE __m512d fastprox_avx512_gather(double *const *rows, int k)
{
    __m256d lo = _mm256_insertf128_pd(_mm256_castpd128_pd256(fastprox_avx512_gather2(rows, k)),
                                      fastprox_avx512_gather2(rows + 2, k), 1);
    __m256d hi = _mm256_insertf128_pd(_mm256_castpd128_pd256(fastprox_avx512_gather2(rows + 4, k)),
                                      fastprox_avx512_gather2(rows + 6, k), 1);
    return _mm512_insertf64x4(_mm512_castpd256_pd512(lo), hi, 1);
}
LANES_INLINE void fastprox_avx512_scatter2(double *const *rows, int k, __m128d v)
{
    _mm_storel_pd(rows[0] + k, v);
    _mm_storeh_pd(rows[1] + k, v);
}
LANES_INLINE void fastprox_avx512_scatter(double *const *rows, int k, __m512d v)
{
    __m256d lo = _mm512_castpd512_pd256(v), hi = _mm512_extractf64x4_pd(v, 1);
    fastprox_avx512_scatter2(rows, k, _mm256_castpd256_pd128(lo));
    fastprox_avx512_scatter2(rows + 2, k, _mm256_extractf128_pd(lo, 1));
    fastprox_avx512_scatter2(rows + 4, k, _mm256_castpd256_pd128(hi));
    fastprox_avx512_scatter2(rows + 6, k, _mm256_extractf128_pd(hi, 1));
}
LANES_INLINE __m512d fastprox_avx512_pairs(double *const *rows, int k)
{
    __m256d lo = _mm256_insertf128_pd(_mm256_castpd128_pd256(_mm_loadu_pd(rows[0] + k)), _mm_loadu_pd(rows[2] + k), 1);
    __m256d hi = _mm256_insertf128_pd(_mm256_castpd128_pd256(_mm_loadu_pd(rows[4] + k)), _mm_loadu_pd(rows[6] + k), 1);
    return _mm512_insertf64x4(_mm512_castpd256_pd512(lo), hi, 1);
}
LANES_INLINE void fastprox_avx512_gather_pair(double *const *rows, int k, __m512d *a, __m512d *b)
{
    __m512d even = fastprox_avx512_pairs(rows, k), odd = fastprox_avx512_pairs(rows + 1, k);
    *a = _mm512_unpacklo_pd(even, odd);
    *b = _mm512_unpackhi_pd(even, odd);
}
LANES_INLINE void fastprox_avx512_scatter_pair(double *const *rows, int k, __m512d a, __m512d b)
{
    __m512d even = _mm512_unpacklo_pd(a, b), odd = _mm512_unpackhi_pd(a, b);
    __m256d even_lo = _mm512_castpd512_pd256(even), even_hi = _mm512_extractf64x4_pd(even, 1);
    __m256d odd_lo = _mm512_castpd512_pd256(odd), odd_hi = _mm512_extractf64x4_pd(odd, 1);
    _mm_storeu_pd(rows[0] + k, _mm256_castpd256_pd128(even_lo));
    _mm_storeu_pd(rows[1] + k, _mm256_castpd256_pd128(odd_lo));
    _mm_storeu_pd(rows[2] + k, _mm256_extractf128_pd(even_lo, 1));
    _mm_storeu_pd(rows[3] + k, _mm256_extractf128_pd(odd_lo, 1));
    _mm_storeu_pd(rows[4] + k, _mm256_castpd256_pd128(even_hi));
    _mm_storeu_pd(rows[5] + k, _mm256_castpd256_pd128(odd_hi));
    _mm_storeu_pd(rows[6] + k, _mm256_extractf128_pd(even_hi, 1));
    _mm_storeu_pd(rows[7] + k, _mm256_extractf128_pd(odd_hi, 1));
}
LANES_INLINE __m512d fastprox_avx512_soft(__m512d v, __m512d thr)
{
    const __m512i sign = _mm512_set1_epi64((long long)0x8000000000000000ULL);
    __m512d m = _mm512_abs_pd(_mm512_max_pd(_mm512_setzero_pd(), _mm512_sub_pd(_mm512_abs_pd(v), thr)));
    return _mm512_castsi512_pd(_mm512_or_si512(_mm512_castpd_si512(m),
                                               _mm512_and_si512(_mm512_castpd_si512(v), sign)));
}
#define V_LOAD(p) _mm512_loadu_pd(p)
#define V_STORE(p, v) _mm512_storeu_pd((p), (v))
#define V_LOAD_TAIL(p, k) _mm512_maskz_loadu_pd((__mmask8)((1u << (k)) - 1), (p))
#define V_STORE_TAIL(p, v, k) _mm512_mask_storeu_pd((p), (__mmask8)((1u << (k)) - 1), (v))
#define V_GATHER fastprox_avx512_gather
#define V_SCATTER fastprox_avx512_scatter
#define V_GATHER2 fastprox_avx512_gather_pair
#define V_SCATTER2 fastprox_avx512_scatter_pair
#define V_SET1(a) _mm512_set1_pd(a)
#define V_ZERO _mm512_setzero_pd()
#define V_ADD _mm512_add_pd
#define V_SUB _mm512_sub_pd
#define V_MUL _mm512_mul_pd
#define V_DIV _mm512_div_pd
#define V_SQRT _mm512_sqrt_pd
#define V_ABS _mm512_abs_pd
#define V_MAX _mm512_max_pd
#define V_GT(a, b) _mm512_cmp_pd_mask((a), (b), _CMP_GT_OQ)
#define V_EQ(a, b) _mm512_cmp_pd_mask((a), (b), _CMP_EQ_OQ)
#define V_NEQ(a, b) _mm512_cmp_pd_mask((a), (b), _CMP_NEQ_UQ)
#define M_AND(m, n) ((__mmask8)((m) & (n)))
#define M_ANY(m) ((m) != 0)
#define V_NEG(a) \
    _mm512_castsi512_pd(_mm512_xor_si512(_mm512_castpd_si512(a), _mm512_set1_epi64((long long)0x8000000000000000ULL)))
#define V_COPYSIGN(a, b) \
    _mm512_castsi512_pd(_mm512_ternarylogic_epi64(_mm512_castpd_si512(a), _mm512_castpd_si512(b), \
                                                  _mm512_set1_epi64((long long)0x8000000000000000ULL), 0xd8))
#define V_NOT_LT(a, b) _mm512_cmp_pd_mask((a), (b), _CMP_NLT_UQ)
#define V_NOT_LE(a, b) _mm512_cmp_pd_mask((a), (b), _CMP_NLE_UQ)
#define M_OR(m, n) ((__mmask8)((m) | (n)))
#define M_ANDNOT(m, n) ((__mmask8)((m) & ~(n)))
#define M_NONE ((__mmask8)0)
#define V_BLEND(m, a, b) _mm512_mask_blend_pd((m), (b), (a))
#define V_KEEP(m, a) _mm512_maskz_mov_pd((m), (a))
#define V_SOFT fastprox_avx512_soft
/* The four partial sums in one vector of four, started and totalled as AVX2's (AVX
   instructions, which every AVX-512 CPU has): a group's low half, then its high half
   (terms i + 4 .. i + 7, which follow the low half's in each partial) where it has any. */
LANES_INLINE void fastprox_avx512_sum4_add(__m256d *q, __m512d v, long long k)
{
    if (k < 8)
        v = _mm512_maskz_mov_pd((__mmask8)((1u << k) - 1), v);
    *q = _mm256_add_pd(*q, _mm512_castpd512_pd256(v));
    if (k > 4)
        *q = _mm256_add_pd(*q, _mm512_extractf64x4_pd(v, 1));
}
#define Q __m256d
#define Q_START fastprox_avx2_sum4_start
#define Q_ADD(q, i, v, k) fastprox_avx512_sum4_add((q), (v), (k))
#define Q_TOTAL fastprox_avx2_sum4_total
#define LANES_LEAVE _mm256_zeroupper
#endif
