/* Two square roots, or two quotients, in one SSE2 instruction (sqrtpd, divpd).
   AdaGrad's per-coordinate steps cost a square root and a division per non-zero,
   and the divider takes as long for two lanes as for one: a row's non-zeros,
   taken two at a time, halve its time there. Each lane is the correctly rounded
   result, as the scalar instructions give: the pairs change no bit. */
#ifndef FASTPROX_PAIRS_H
#define FASTPROX_PAIRS_H
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
/* (na / da, nb / db), each 0 where its denominator is not positive (or NaN). */
static inline fastprox_pair fastprox_div_pos2(double na, double da, double nb, double db)
{
    __m128d den = _mm_set_pd(db, da);
    __m128d positive = _mm_cmpgt_pd(den, _mm_setzero_pd());
    return fastprox_pair_of(_mm_and_pd(positive, _mm_div_pd(_mm_set_pd(nb, na), den)));
}
#else
#include <math.h>
static inline fastprox_pair fastprox_sqrt2(double a, double b)
{
    fastprox_pair p = {sqrt(a), sqrt(b)};
    return p;
}
static inline fastprox_pair fastprox_div_pos2(double na, double da, double nb, double db)
{
    fastprox_pair p = {da > 0.0 ? na / da : 0.0, db > 0.0 ? nb / db : 0.0};
    return p;
}
#endif
#endif
