/* The test programs' view of a double: its bits, every NaN as one (a NaN's payload is
   not a result the kernels promise). */
#ifndef FASTPROX_TEST_BITS_H
#define FASTPROX_TEST_BITS_H
#include <string.h>

static unsigned long long bits(double x)
{
    unsigned long long u;
    if (x != x)
        return 0x7ff8000000000000ULL;       /* any NaN */
    memcpy(&u, &x, sizeof u);
    return u;
}
#endif
