/* Two entries' arithmetic in one SSE2 instruction each (their square roots and
   the dual weights' whole formula). AdaGrad's per-coordinate steps cost a square root
   and a division per non-zero, and the divider takes as long for two lanes as for
   one; the rows of small dense sets (ijcnn1) are bound by the count of
   instructions, which the pairs halve. Each lane performs the scalar code's
   operations in its order, each correctly rounded: the pairs change no bit. */
#ifndef FASTPROX_PAIRS_H
#define FASTPROX_PAIRS_H
#include "_max0.h"
typedef struct { double a, b; } fastprox_pair;
#if defined(__SSE2__)
#include <emmintrin.h>
static inline fastprox_pair fastprox_pair_of(__m128d v)
{
    fastprox_pair p;
    p.a = _mm_cvtsd_f64(v);
    p.b = _mm_cvtsd_f64(_mm_unpackhi_pd(v, v));
    return p;
}
/* (sqrt(a), sqrt(b)) */
static inline fastprox_pair fastprox_sqrt2(double a, double b)
{
    return fastprox_pair_of(_mm_sqrt_pd(_mm_set_pd(b, a)));
}
/* copysign(max0(|v| - thr), v) of both lanes, as `soft_threshold`. */
static inline __m128d fastprox_soft2(__m128d v, __m128d thr)
{
    const __m128d sign = _mm_set1_pd(-0.0);
    __m128d m = _mm_sub_pd(_mm_andnot_pd(sign, v), thr);
    return _mm_or_pd(_mm_andnot_pd(sign, _mm_max_pd(_mm_setzero_pd(), m)), _mm_and_pd(sign, v));
}
/* The dual weights (rda, ftrl under AdaGrad) of two entries with sums (sa, sb) and
   root = (sqrt(n_a), sqrt(n_b)): beta = (delta + root) * inv_eta0 and
   w = soft(-s, wc + beta * rho) / (beta + wl2), 0 where beta + wl2 is not positive.
   `dual_weight`'s operations in its order, lane by lane: the same bits. */
static inline fastprox_pair fastprox_dual_weights2(double sa, double sb, fastprox_pair root,
                                                   double delta, double inv_eta0, double wc,
                                                   double rho, double wl2)
{
    const __m128d sign = _mm_set1_pd(-0.0), zero = _mm_setzero_pd();
    __m128d v = _mm_xor_pd(_mm_set_pd(sb, sa), sign);
    __m128d beta = _mm_mul_pd(_mm_add_pd(_mm_set1_pd(delta), _mm_set_pd(root.b, root.a)),
                              _mm_set1_pd(inv_eta0));
    __m128d soft = fastprox_soft2(v, _mm_add_pd(_mm_set1_pd(wc),
                                                _mm_mul_pd(beta, _mm_set1_pd(rho))));
    __m128d den = _mm_add_pd(beta, _mm_set1_pd(wl2));
    return fastprox_pair_of(_mm_and_pd(_mm_cmpgt_pd(den, zero), _mm_div_pd(soft, den)));
}
#else
#include <math.h>
static inline fastprox_pair fastprox_sqrt2(double a, double b)
{
    fastprox_pair p = {sqrt(a), sqrt(b)};
    return p;
}
static inline double fastprox_soft(double v, double a)      /* as `soft_threshold` */
{
    return copysign(fastprox_max0(fabs(v) - a), v);
}
static inline fastprox_pair fastprox_dual_weights2(double sa, double sb, fastprox_pair root,
                                                   double delta, double inv_eta0, double wc,
                                                   double rho, double wl2)
{
    double ba = (delta + root.a) * inv_eta0, bb = (delta + root.b) * inv_eta0;
    double da = ba + wl2, db = bb + wl2;
    fastprox_pair w = {da > 0.0 ? fastprox_soft(-sa, wc + ba * rho) / da : 0.0,
                       db > 0.0 ? fastprox_soft(-sb, wc + bb * rho) / db : 0.0};
    return w;
}
#endif
#endif
