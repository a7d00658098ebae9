# cython: language_level=3
"""The text readers' scanning of bytes (fastprox._libsvm's LIBSVM parser, fastprox._vw's
Vowpal Wabbit parser): spaces, tokens and numbers, inline and nogil.

Numbers are parsed by hand and converted exactly: a decimal with at most 19
significant digits whose value is ``m * 10**e`` with ``m <= 2**53`` and
``|e| <= 22`` is one correctly rounded IEEE multiplication or division
(Clinger's fast path); anything else goes to the C library's ``strtod`` run
in the "C" locale (the caller's ``uselocale``; correctly rounded in glibc).  Either way the result equals
Python's ``float()`` bit for bit.  Digits are
read 8 at a time from 64-bit words (SWAR: one test for "all digits", three
multiplications for their value).  The accepted syntax is Python's float
syntax without underscores: ``[+-]`` digits with an optional ``.`` and
exponent, or ``inf``, ``infinity``, ``nan`` in any case.
"""
from libc.math cimport INFINITY, NAN
from libc.stdint cimport int64_t, uint64_t
from libc.stdlib cimport realloc, strtod
from libc.string cimport strlen

cdef extern from "<locale.h>" nogil:
    ctypedef void *locale_t
    int LC_ALL_MASK
    locale_t newlocale(int mask, const char *locale, locale_t base)
    locale_t uselocale(locale_t loc)

cdef extern from *:
    """
    #if defined(__GNUC__) || defined(__clang__)
    #define FASTPROX_CTZ64(x) __builtin_ctzll(x)
    #else
    static int FASTPROX_CTZ64(unsigned long long x) { int n = 0; while (!(x & 1)) { x >>= 1; n++; } return n; }
    #endif
    """
    int FASTPROX_CTZ64(uint64_t x) noexcept nogil  # trailing zero bits of x != 0

cdef extern from *:
    """
    static const double FASTPROX_POW10[23] = {1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
        1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
    static const unsigned long long FASTPROX_POW10_INT[9] = {1ULL, 10ULL, 100ULL, 1000ULL, 10000ULL,
        100000ULL, 1000000ULL, 10000000ULL, 100000000ULL};
    """
    const double *POW10 "FASTPROX_POW10"  # 10**k, exact, for k <= 22
    const uint64_t *POW10_INT "FASTPROX_POW10_INT"  # 10**k for k <= 8

cdef enum:
    MAX_FAST_DIGITS = 19  # significant digits that fit a uint64 mantissa


cdef inline bint is_space(char c) noexcept nogil:
    return c == 32 or c == 9 or c == 13 or c == 11 or c == 12


cdef inline bint is_digit(char c) noexcept nogil:
    return 48 <= c <= 57


cdef inline const char *skip_space(const char *p, const char *e) noexcept nogil:
    while p < e and is_space(p[0]):
        p += 1
    return p


cdef inline const char *token_end(const char *p, const char *e) noexcept nogil:
    while p < e and not is_space(p[0]):
        p += 1
    return p


cdef inline const char *after_bom(const char *p, const char *e) noexcept nogil:
    """[p, e) past the UTF-8 byte order mark (EF BB BF) that opens it, if one does."""
    if e - p >= 3 and p[0] == <char>0xEF and p[1] == <char>0xBB and p[2] == <char>0xBF:
        return p + 3
    return p


cdef inline bint same_word(const char *p, const char *e, const char *word) noexcept nogil:
    """Whether [p, e) equals the lower-case ``word``, ignoring ASCII case."""
    cdef Py_ssize_t n = <Py_ssize_t>strlen(word), i
    if e - p != n:
        return False
    for i in range(n):
        if (p[i] | 32) != word[i]:
            return False
    return True


cdef inline uint64_t load8(const char *p) noexcept nogil:
    """The 8 bytes at ``p`` as an integer, the first byte lowest, on any CPU
    (compilers make this one load where the CPU is little-endian)."""
    cdef const unsigned char *u = <const unsigned char *>p
    return (<uint64_t>u[0] | <uint64_t>u[1] << 8 | <uint64_t>u[2] << 16 | <uint64_t>u[3] << 24
            | <uint64_t>u[4] << 32 | <uint64_t>u[5] << 40 | <uint64_t>u[6] << 48
            | <uint64_t>u[7] << 56)


cdef inline uint64_t non_digits(uint64_t v) noexcept nogil:
    """The top bit of each byte of ``v`` set where that byte is not an ASCII
    digit (``byte + 0x46`` or ``byte - 0x30`` sets it; SWAR, as in fast_float).
    Exact up to the first non-digit byte, which is all the callers use."""
    return ((v + 0x4646464646464646ULL) | (v - 0x3030303030303030ULL)) & 0x8080808080808080ULL


cdef inline uint64_t eight_digit_value(uint64_t v) noexcept nogil:
    """The number the 8 digits of ``v`` write (first digit in the lowest byte):
    pairs, then quads, then the whole, in three multiplications (SWAR)."""
    v = v - 0x3030303030303030ULL
    v = v * 10 + (v >> 8)
    return (((v & 0x000000FF000000FFULL) * 0x000F424000000064ULL)
            + (((v >> 16) & 0x000000FF000000FFULL) * 0x0000271000000001ULL)) >> 32


cdef inline const char *scan_digits(const char *p, const char *end,
                                    uint64_t *mantissa) noexcept nogil:
    """Append the run of digits at ``p`` to ``mantissa`` (modulo 2**64: the
    caller counts the digits and discards a mantissa of more than
    MAX_FAST_DIGITS); return the run's end.

    While 8 bytes lie before ``end`` they are read as one word: 8 digits are
    converted at once; a shorter run's length comes from a bit scan, and a
    run of 4 to 7 digits is shifted behind '0' bytes and converted the same
    way (a shorter one costs less digit by digit). Near the buffer's end,
    digits are read one by one.
    """
    cdef uint64_t m = mantissa[0], word, stops
    cdef int k, i
    while p + 8 <= end:
        word = load8(p)
        stops = non_digits(word)
        if stops == 0:
            m = m * 100000000 + eight_digit_value(word)
            p += 8
            continue
        k = FASTPROX_CTZ64(stops) >> 3  # digits before the first non-digit
        if k >= 4:
            word = (word << (64 - 8 * k)) | (0x3030303030303030ULL >> (8 * k))
            m = m * POW10_INT[k] + eight_digit_value(word)
        else:
            for i in range(k):
                m = m * 10 + <uint64_t>(p[i] - 48)
        mantissa[0] = m
        return p + k
    while is_digit(p[0]):
        m = m * 10 + <uint64_t>(p[0] - 48)
        p += 1
    mantissa[0] = m
    return p


cdef inline Py_ssize_t significant_digits(const char *p, const char *e) noexcept nogil:
    """The digits of the number [p, e) (digits, at most one ``.``) after its
    leading zeros."""
    cdef Py_ssize_t n = 0
    while p < e and (p[0] == 48 or p[0] == 46):
        p += 1
    while p < e:
        n += p[0] != 46
        p += 1
    return n


cdef inline const char *scan_word(const char *p, bint negative, double *out) noexcept nogil:
    """``inf``, ``infinity`` or ``nan`` in any case at ``p`` (after the sign);
    return its end, or NULL when the letters at ``p`` are none of these."""
    cdef const char *word = p
    while 97 <= (p[0] | 32) <= 122:  # letters (the byte after a token is none)
        p += 1
    if same_word(word, p, b"inf") or same_word(word, p, b"infinity"):
        out[0] = -INFINITY if negative else INFINITY
        return p
    if same_word(word, p, b"nan"):
        out[0] = -NAN if negative else NAN      # float('-nan') has the sign bit set
        return p
    return NULL


cdef inline const char *scan_strtod(const char *start, const char *p, double *out) noexcept nogil:
    """``strtod`` on the number [start, p) that the fast path cannot convert
    exactly; NULL unless strtod reads exactly that much."""
    cdef char *stop
    cdef double v = strtod(start, &stop)
    if stop != p:
        return NULL
    out[0] = v
    return p


cdef inline const char *scan_double(const char *p, const char *end, double *out) noexcept nogil:
    """Parse the number that starts at ``p``; return its end, or NULL when no
    number starts there (see scan_number). A lone digit, the value of binary
    features and the label of most files, is read here; the byte after it
    exists, since a digit is never the last byte of the buffer (a NUL is)."""
    if is_digit(p[0]) and not (is_digit(p[1]) or p[1] == 46 or (p[1] | 32) == 101):
        out[0] = p[0] - 48
        return p + 1
    return scan_number(p, end, out)


cdef inline const char *scan_number(const char *p, const char *end, double *out) noexcept nogil:
    """Parse the number that starts at ``p``; return its end.

    Returns NULL when no number starts at ``p``; the caller checks that the
    number ends where its token does. The scan has no bound but the bytes
    themselves: it stops at the first byte that cannot continue a number, and
    every token is followed by one (a space, ``#``, a newline, or the NUL
    after the buffer's text, see Parser.feed), which stops ``strtod`` too.
    ``end`` is the end of the text, which 8-byte loads stay before.

    The digits, integer part and fraction, form a 64-bit mantissa, the
    fraction's length and the exponent a power of ten; a number with more
    than MAX_FAST_DIGITS significant digits, or beyond Clinger's fast path,
    goes to strtod.
    """
    cdef const char *start = p
    cdef const char *digits
    cdef const char *fraction
    cdef bint negative = False, exp_negative = False, slow
    cdef uint64_t mantissa = 0
    cdef Py_ssize_t n_fraction = 0
    cdef int exp_value = 0
    cdef int64_t exp10
    cdef double v
    if p[0] == 45 or p[0] == 43:  # '-' or '+'
        negative = p[0] == 45
        p += 1
    digits = p
    p = scan_digits(p, end, &mantissa)
    if p[0] == 46:  # '.'
        fraction = p + 1
        p = scan_digits(fraction, end, &mantissa)
        n_fraction = p - fraction
        if p - digits == 1:  # '.' alone
            return NULL
    elif p == digits:
        return scan_word(digits, negative, out)
    exp10 = -n_fraction
    # More significant digits than the mantissa holds: it wrapped; strtod reads them.
    slow = p - digits > MAX_FAST_DIGITS and significant_digits(digits, p) > MAX_FAST_DIGITS
    if (p[0] | 32) == 101:  # 'e' or 'E'
        p += 1
        if p[0] == 43 or p[0] == 45:
            exp_negative = p[0] == 45
            p += 1
        if not is_digit(p[0]):
            return NULL
        while is_digit(p[0]):
            if exp_value < 100000:
                exp_value = exp_value * 10 + (p[0] - 48)
            p += 1
        exp10 += -exp_value if exp_negative else exp_value
    if slow:
        return scan_strtod(start, p, out)
    if mantissa == 0:
        v = 0.0
    elif mantissa <= (<uint64_t>1 << 53) and -22 <= exp10 <= 22:
        v = <double>mantissa
        if exp10 >= 0:
            v = v * POW10[exp10]
        else:
            v = v / POW10[-exp10]
    else:
        return scan_strtod(start, p, out)
    out[0] = -v if negative else v
    return p


cdef inline bint parse_double(const char *p, const char *e, const char *end,
                              double *out) noexcept nogil:
    """Parse the whole token [p, e) (in a buffer ending at ``end``) as a float;
    False when it is not one."""
    return scan_number(p, end, out) == e


cdef inline bint grow(void **block, size_t size) noexcept nogil:
    """Resize ``*block`` to ``size`` bytes; False (block untouched) on failure."""
    cdef void *p = realloc(block[0], size)
    if p == NULL:
        return False
    block[0] = p
    return True
