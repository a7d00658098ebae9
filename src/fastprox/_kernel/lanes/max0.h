/* max(m, 0) in one instruction where SSE2 has it (maxsd), a NaN kept as NaN.
   Written as C because GCC turns the plain conditional into a branch in some of
   the kernels it is inlined into, and the sign of a weight is data: a mispredicted
   branch costs more than the arithmetic. */
#ifndef FASTPROX_MAX0_H
#define FASTPROX_MAX0_H
#if defined(__SSE2__)
#include <emmintrin.h>
static inline double fastprox_max0(double m)
{
    /* maxsd returns its second operand unless the first is greater: m, or NaN. */
    return _mm_cvtsd_f64(_mm_max_sd(_mm_setzero_pd(), _mm_set_sd(m)));
}
#else
static inline double fastprox_max0(double m)
{
    return 0.0 > m ? 0.0 : m;               /* maxsd's rule: -inf gives 0, NaN stays */
}
#endif
#endif
