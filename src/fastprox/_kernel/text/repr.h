/* A double's text as Python's repr writes it, without Python: no GIL, no allocation.

   repr(float) is CPython's PyOS_double_to_string(x, 'r', 0, Py_DTSF_ADD_DOT_0, NULL):
   David Gay's dtoa in mode 0 (the shortest digits that read back as x, and among
   those the nearest to x) laid out by format_float_short (Python/pystrtod.c). Here
   the digits come from Ryu (ryu/d2s.h, Ulf Adams 2018), which gives the same ones
   (tests/test_libsvm_repr.py checks the edges and random bit patterns against repr),
   and the layout is format_float_short's for 'r':

   - the decimal exponent of the first digit, decpt - 1, below -4 or at least 16
     (decpt <= -4 or decpt > 16): scientific, "d.ddde-05", "1e+16": the digits with a
     point after the first unless there is one digit, "e", a sign and at least two
     digits of exponent;
   - else fixed: "0.000ddd" below 1, the point inside the digits, or the digits, the
     zeros up to the point and, with add_dot_0 (Py_DTSF_ADD_DOT_0), ".0";
   - a minus sign on every negative value, -0.0 too; "inf", "-inf" and "nan" (a NaN's
     sign is not written) for the values that are not finite.

   fastprox_repr writes at most FASTPROX_REPR_MAX bytes (no terminating NUL) and
   returns how many. */
#ifndef FASTPROX_REPR_H
#define FASTPROX_REPR_H

#include <stdint.h>
#include <string.h>

#include "ryu/d2s.h"

/* "-2.2250738585072014e-308" is 24 bytes, "-0.00012345678901234567" 23. */
#define FASTPROX_REPR_MAX 32

static const char FASTPROX_DIGIT_PAIRS[200] =
    "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
    "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
    "8081828384858687888990919293949596979899";

/* The n decimal digits of m (n = decimalLength17(m)) into out[0..n), two at a time. */
static inline void fastprox_digits(uint64_t m, uint32_t n, char *out) {
    while (n >= 2) {
        uint64_t q = m / 100;
        memcpy(out + n - 2, FASTPROX_DIGIT_PAIRS + 2 * (m - 100 * q), 2);
        m = q;
        n -= 2;
    }
    if (n)
        out[0] = (char)('0' + m);
}

static inline int fastprox_repr(double v, int add_dot_0, char *out) {
    const uint64_t bits = double_to_bits(v);
    const uint64_t mantissa = bits & ((1ull << DOUBLE_MANTISSA_BITS) - 1);
    const uint32_t exponent = (uint32_t)(bits >> DOUBLE_MANTISSA_BITS) & ((1u << DOUBLE_EXPONENT_BITS) - 1);
    char *p = out;
    if (exponent == (1u << DOUBLE_EXPONENT_BITS) - 1 && mantissa) {
        memcpy(p, "nan", 3);
        return 3;
    }
    if (bits >> 63)
        *p++ = '-';
    if (exponent == (1u << DOUBLE_EXPONENT_BITS) - 1) {
        memcpy(p, "inf", 3);
        return (int)(p + 3 - out);
    }
    if (exponent == 0 && mantissa == 0) {
        memcpy(p, "0.0", 3);
        return (int)(p + (add_dot_0 ? 3 : 1) - out);
    }
    const floating_decimal_64 d = d2d(mantissa, exponent);
    const int n = (int)decimalLength17(d.mantissa);
    const int decpt = d.exponent + n;      /* the point's place after the first digit */
    if (decpt <= -4 || decpt > 16) {
        fastprox_digits(d.mantissa, (uint32_t)n, p + 1);   /* d.ddd: the first digit moved */
        p[0] = p[1];
        if (n > 1) {
            p[1] = '.';
            p += n + 1;
        } else {
            p += 1;
        }
        int e = decpt - 1;
        *p++ = 'e';
        *p++ = e < 0 ? '-' : '+';
        if (e < 0)
            e = -e;
        if (e >= 100) {
            *p++ = (char)('0' + e / 100);
            e %= 100;
        }
        memcpy(p, FASTPROX_DIGIT_PAIRS + 2 * e, 2);
        return (int)(p + 2 - out);
    }
    if (decpt <= 0) {                       /* 0.000ddd */
        memcpy(p, "0.000", 2 - decpt);
        p += 2 - decpt;
        fastprox_digits(d.mantissa, (uint32_t)n, p);
        return (int)(p + n - out);
    }
    if (decpt < n) {                        /* dd.ddd */
        fastprox_digits(d.mantissa, (uint32_t)n, p + 1);
        memmove(p, p + 1, (size_t)decpt);
        p[decpt] = '.';
        return (int)(p + n + 1 - out);
    }
    fastprox_digits(d.mantissa, (uint32_t)n, p);   /* ddd000, then ".0" */
    p += n;
    memset(p, '0', (size_t)(decpt - n));
    p += decpt - n;
    if (add_dot_0) {
        memcpy(p, ".0", 2);
        p += 2;
    }
    return (int)(p - out);
}

#endif /* FASTPROX_REPR_H */
