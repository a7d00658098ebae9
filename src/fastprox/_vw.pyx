# cython: language_level=3, boundscheck=False, wraparound=False
"""The Vowpal Wabbit text parser: lines of ``label [importance] ['tag]|ns[:value]
feature[:value] ... |ns ...`` into canonical CSR rows hashed as VW hashes them.

The parser works as fastprox._libsvm's does (complete lines of a ``bytearray``
without the GIL, rows appended to growable C arrays, the first error recorded
with its line and token, `fastprox.vw.reader` turning it into a ``PATH:LINE:``
message), with VW's hashing (vowpalwabbit/core/hashstring.h, parse_example_text.cc):

- a namespace ``|name`` hashes to ``hashstring(name, 0)`` and is known by its first
  byte; the default namespace (``|`` followed by a space) hashes to 0, byte ``' '``;
- a feature ``name`` of namespace hash ``n`` hashes to ``hashstring(name, n)``, a
  string value ``name:text`` to ``hashstring(text, hashstring(name, n))``, an
  anonymous ``:value`` to ``n`` plus its rank among the namespace's anonymous ones;
- ``hashstring`` trims bytes up to 0x20 at both ends, takes a name of digits alone
  for its number plus the seed (mod 2^32), anything else to MurmurHash3 (x86, 32
  bits) seeded with the seed;
- a feature's value is its namespace's value times its own (1 when absent); a
  value of 0 is dropped, as VW drops it;
- an interaction of namespaces ``a, b`` crosses every feature of ``a`` with every
  one of ``b`` (with itself, each unordered pair once, diagonal included) into
  ``(16777619 * h_a) ^ h_b``, of three ``((16777619 * ((16777619 * h_a) ^ h_b)) ^ h_c``,
  and so on up to 8 (interactions_predict.h), its value the product;
- a namespace selected out (VW's ``--ignore``, ``--keep``: known by its first byte)
  is read and checked but gives no feature, as if its ``|name ...`` were not there;
  one whose linear terms are (``--ignore_linear``) gives its features to the
  interactions only;
- every index is masked to its low ``bits`` bits (VW's ``-b``; the stride VW
  multiplies by does not change the bucket), then a row's indices are sorted and
  the values of an index met twice summed.

VW's constant feature is not emitted: the models' intercept plays its part.
Stricter than VW, which warns and reads on: a value that starts as a number but
is not one, ``name:`` without a value, NaN or infinite values, labels and
importance weights are errors.
"""
from cpython.bytearray cimport PyByteArray_AS_STRING
from cpython cimport array
from libc.math cimport NAN, isfinite
from libc.stdint cimport int64_t, uint32_t, uint64_t
from libc.stdlib cimport free
from libc.string cimport memchr, memcpy
from fastprox._text cimport *
from fastprox._rowsort cimport merge_sorted_words, sort_packed
from fastprox._libsvm cimport Parser

import array as pyarray

cdef array.array DOUBLES = pyarray.array("d")
cdef double MAX_PAIRS = 1e12        # a row's pairs beyond this: out of memory, not an overflow

cdef enum:
    FNV_PRIME = 16777619        # VW's prime of its interactions' hashing (constant.h)
cdef enum:
    ORDER = 8                   # the most namespaces an interaction crosses
cpdef enum Selected:
    KEEP                        # a namespace's features read
    DROP                        # none of them (VW's --ignore, or not --keep)
    DROP_LINEAR                 # crossed only (VW's --ignore_linear)
cdef enum:
    BITS = 40                   # the most bits of a column (a row's pairs sort as column << (64 - bits) | place)
#: The most namespaces an interaction crosses.
MAX_ORDER = ORDER
#: The most bits of a column (VW's -b; a row's pairs up to 2^(64 - bits)).
MAX_BITS = BITS

# Error codes; fastprox.vw.reader turns each into a message. They follow the LIBSVM
# parser's (fastprox._libsvm.Error), whose feed records a line too long (ERR_LONG_LINE).
cpdef enum VWError:
    VW_OK
    VW_ERR_LABEL = 100
    VW_ERR_WEIGHT
    VW_ERR_LABEL_WORDS
    VW_ERR_NO_LABEL
    VW_ERR_VALUE
    VW_ERR_NO_VALUE
    VW_ERR_NONFINITE
    VW_ERR_NAMESPACE
    VW_ERR_NUL
    VW_ERR_NO_MEMORY


cdef inline uint32_t rotl32(uint32_t x, int r) noexcept nogil:
    return (x << r) | (x >> (32 - r))


cdef inline uint32_t murmur3_32(const char *data, Py_ssize_t n, uint32_t seed) noexcept nogil:
    """MurmurHash3 x86 32 bits of ``data[:n]`` (VW's uniform_hash)."""
    cdef const unsigned char *u = <const unsigned char *>data
    cdef Py_ssize_t i, blocks = n // 4
    cdef uint32_t h = seed, k
    for i in range(blocks):
        k = (<uint32_t>u[4 * i] | <uint32_t>u[4 * i + 1] << 8 | <uint32_t>u[4 * i + 2] << 16
             | <uint32_t>u[4 * i + 3] << 24)
        k *= 0xcc9e2d51u
        k = rotl32(k, 15)
        k *= 0x1b873593u
        h ^= k
        h = rotl32(h, 13)
        h = h * 5u + 0xe6546b64u
    u += 4 * blocks
    k = 0
    if n & 3:
        if (n & 3) == 3:
            k ^= <uint32_t>u[2] << 16
        if (n & 3) >= 2:
            k ^= <uint32_t>u[1] << 8
        k ^= <uint32_t>u[0]
        k *= 0xcc9e2d51u
        k = rotl32(k, 15)
        k *= 0x1b873593u
        h ^= k
    h ^= <uint32_t>n
    h ^= h >> 16
    h *= 0x85ebca6bu
    h ^= h >> 13
    h *= 0xc2b2ae35u
    h ^= h >> 16
    return h


cdef inline uint32_t hashstring(const char *p, Py_ssize_t n, uint32_t seed, const char *end) noexcept nogil:
    """VW's hashstring: ``p[:n]`` trimmed of bytes up to 0x20, a run of digits as its
    number plus ``seed`` (mod 2^32), else MurmurHash3 seeded with ``seed``. The digits
    are read 8 at a time (fastprox._text.scan_digits: their value mod 2^64, so mod 2^32
    exact) while 8 bytes lie before ``end``; the byte after the name is not a digit
    (a delimiter, a space or the NUL after the text)."""
    cdef uint64_t value = 0
    cdef Py_ssize_t i
    while n > 0 and 0 <= p[0] <= 32:
        p += 1
        n -= 1
    while n > 0 and 0 <= p[n - 1] <= 32:
        n -= 1
    if 0 < n <= 4:                      # (short names, byte by byte)
        for i in range(n):
            if not is_digit(p[i]):
                return murmur3_32(p, n, seed)
            value = value * 10 + <uint64_t>(p[i] - 48)
        return <uint32_t>value + seed
    if scan_digits(p, end, &value) != p + n:
        return murmur3_32(p, n, seed)
    return <uint32_t>value + seed


def hash_string(bytes text not None, uint32_t seed=0):
    """VW's ``hashstring(text, seed)``: where VW puts a feature or a namespace.

    Parameters
    ----------
    text : bytes
        A feature's or a namespace's name.
    seed : int
        The namespace's hash for a feature (0 for a namespace).

    Returns
    -------
    int
        The 32-bit hash; its low B bits are the column under ``-b B``.
    """
    return hashstring(text, len(text), seed, <const char *>text + len(text))  # (bytes end with a NUL)


cdef bint NAME_ENDS[256]                # the bytes that end a name (`ends_name`)
for _c in range(256):
    NAME_ENDS[_c] = _c in (32, 9, 58, 124, 13, 0)


cdef inline bint ends_name(char c) noexcept nogil:
    """Whether ``c`` ends a feature's or a namespace's name (VW's read_name): space,
    tab, ':', '|', CR or NUL, looked up (one load, no chain of tests per byte)."""
    return NAME_ENDS[<unsigned char>c]


cdef inline bint ends_value(char c) noexcept nogil:
    """Whether ``c`` may follow a feature's value."""
    return c == 32 or c == 9 or c == 124 or c == 13 or c == 0


cdef inline bint starts_number(char c) noexcept nogil:
    """Whether a value starting with ``c`` must be a number (else it is a string)."""
    return is_digit(c) or c == 43 or c == 45 or c == 46


cdef inline Py_ssize_t grown(Py_ssize_t cap, Py_ssize_t need, Py_ssize_t step) noexcept nogil:
    """``cap`` doubled (plus ``step``) until it holds ``need``."""
    while cap < need:
        cap = 2 * cap + step
    return cap


cdef inline bint ensure(void **block, Py_ssize_t *capacity, Py_ssize_t need, size_t item) noexcept nogil:
    """Room for ``need`` items of ``item`` bytes in ``*block`` of ``*capacity`` items
    (grown: doubled plus 1024); False (block untouched) when out of memory."""
    cdef Py_ssize_t cap = grown(capacity[0], need, 1024)
    if cap > capacity[0]:
        if not grow(block, cap * item):
            return False
        capacity[0] = cap
    return True


cdef Py_ssize_t cross_term(int order, const Py_ssize_t *start, const Py_ssize_t *count, const bint *same,
                           const uint64_t *sh, const double *sv, uint64_t mask, uint64_t offset,
                           uint64_t *words, int low, double *vals, Py_ssize_t at, int64_t *places) noexcept nogil:
    """Append one interaction's pairs to (words, vals) from ``at``; return the new end.
    Its k-th factor's features are (sh, sv)[start[k]:start[k] + count[k]] (hash, value), in
    order; ``same[k]``: the k-th factor is the one before again. VW's generic
    interaction: an odometer over the factors' features, each index starting from the
    one before in a repeated factor (unordered tuples, diagonal included), the hash
    ``FNV_PRIME * (h ^ next)`` down the prefix, then ``^`` the last feature's
    (interactions_predict.h); a pair's column ``offset + (hash & mask)``, packed with its
    place as the word ``column << low | at`` (fastprox._rowsort.sort_packed's), its value
    the product. With ``places``, each pair's features' places in (sh, sv), ORDER per pair
    (pair i's at ``places[ORDER * i]``). VW text's namespaces (`VWParser`) and LIBSVM's
    groups (`cross_groups`) cross here."""
    cdef int last = order - 1, k
    cdef Py_ssize_t idx[ORDER]
    cdef uint64_t prefix[ORDER]         # the hash of the positions before k
    cdef double product[ORDER]          # their values' product
    cdef uint64_t h
    cdef double value
    cdef Py_ssize_t j, first, n_last
    for k in range(order):
        if count[k] == 0:
            return at
    k, idx[0] = 0, 0
    while True:
        while k < last:                 # down: the prefix's hash and value
            h = sh[start[k] + idx[k]]
            prefix[k + 1] = <uint64_t>FNV_PRIME * (h if k == 0 else prefix[k] ^ h)
            product[k + 1] = sv[start[k] + idx[k]] * (1.0 if k == 0 else product[k])
            idx[k + 1] = idx[k] if same[k + 1] else 0
            k += 1
        first, n_last, h, value = start[last], count[last], prefix[last], product[last]
        if places != NULL:
            for j in range(idx[last], n_last):
                for k in range(last):
                    places[ORDER * (at + j - idx[last]) + k] = start[k] + idx[k]
                places[ORDER * (at + j - idx[last]) + last] = first + j
        for j in range(idx[last], n_last):     # (the last factor's run: the inner loop)
            words[at] = (offset + ((h ^ sh[first + j]) & mask)) << low | <uint64_t>at
            vals[at] = value * sv[first + j]
            at += 1
        k = last - 1                    # up: the next prefix
        while k >= 0:
            idx[k] += 1
            if idx[k] < count[k]:
                break
            k -= 1
        if k < 0:
            return at


cdef class VWParser(Parser):
    """Rows parsed from successive buffers of VW text, hashed into ``2**bits`` columns
    with the ``interactions`` given (sequences of 2 to 8 namespace bytes): a
    fastprox._libsvm.Parser (its buffers, counters, errors, ``feed`` and ``peek``; the
    first three arguments its own, ``want_qid`` and ``allow_nonfinite`` unused) whose
    lines are VW's; each row also has an importance weight and a tag (kept where the
    LIBSVM parser keeps query ids: where it ends among the tags' bytes). With
    ``names`` (a dict) the column of every feature met is recorded there as
    ``"namespace^name"``, of a crossed one as ``"a^x*b^y"`` (its first name: a
    bounded dict, one entry per column).
    Without ``need_label``, a line with no label is read, its label NaN.
    ``selection`` (fastprox.vw.reader.selection_table: 256 bytes, one a namespace's
    first byte, or empty for none) says of each namespace: KEEP it, DROP its
    features, or DROP_LINEAR, its features crossed only.
    """
    cdef double *weights
    cdef char *tags
    cdef Py_ssize_t weight_capacity, tag_capacity, tag_size
    # one row's features in order: hash, value, namespace byte; grouped by namespace; its output pairs
    cdef uint64_t *fh
    cdef double *fv
    cdef unsigned char *fn
    cdef uint64_t *sh
    cdef double *sv
    cdef long long *keys
    cdef double *vals
    cdef Py_ssize_t f_capacity, k_capacity, nf
    cdef Py_ssize_t ns_start[256]
    cdef Py_ssize_t ns_count[256]
    cdef bint placed[256]
    cdef unsigned char terms[64][ORDER + 1]  # order, then the namespace bytes
    cdef int n_terms
    # the names' spans (namespace start, length, name start, length, column) of a feed's
    # features, the crossed columns' (spans of up to ORDER features, -1 for none, column)
    cdef int64_t *spans
    cdef int64_t *crosses
    cdef int64_t *so                        # a grouped feature's place in its row
    cdef int64_t *places                    # with names: each crossed pair's features' places (cross_term)
    cdef Py_ssize_t n_spans, span_capacity, n_crosses, cross_capacity, row_span
    cdef object names
    cdef readonly uint64_t mask
    cdef uint32_t short_ns[256]             # the hash of each one-byte namespace name
    cdef int low                            # the bits below a sorted word's column: its pair's place
    cdef readonly bint any_tag, any_weight
    cdef bint need_label
    cdef unsigned char select[256]          # each namespace byte's KEEP, DROP or DROP_LINEAR
    cdef bint some_linear                   # whether a namespace is DROP_LINEAR

    def __cinit__(self, bint want_qid, bint allow_nonfinite, Py_ssize_t max_line, int bits, interactions=(),
                  names=None, bint need_label=True, selection=b""):
        cdef int i
        cdef char name[2]
        if not 1 <= bits <= MAX_BITS:
            raise ValueError(f"bits={bits} must be in [1, {MAX_BITS}]")
        if len(interactions) > 64:
            raise ValueError(f"at most 64 interactions, not {len(interactions)}")
        self.mask = (<uint64_t>1 << bits) - 1
        self.low = 64 - bits
        self.min_index = 0
        self.max_index = <int64_t>self.mask
        self.names = names
        self.need_label = need_label
        for term in interactions:
            if not 2 <= len(term) <= MAX_ORDER:
                raise ValueError(f"an interaction crosses 2 to {MAX_ORDER} namespaces, not {len(term)}")
            self.terms[self.n_terms][0] = len(term)
            for i in range(len(term)):
                self.terms[self.n_terms][i + 1] = term[i]
            self.n_terms += 1
        table = bytes(selection)
        if len(table) not in (0, 256) or any(c > DROP_LINEAR for c in table):
            raise ValueError("selection must be 256 bytes of KEEP, DROP or DROP_LINEAR, or empty")
        for i in range(256):
            self.select[i] = table[i] if table else KEEP
            self.some_linear |= self.select[i] == DROP_LINEAR
            self.ns_count[i] = 0
            self.placed[i] = False
            name[0], name[1] = <char>i, 0
            self.short_ns[i] = hashstring(name, 1, 0, name + 1)
        if not self.reserve_row(256, 1024):
            raise MemoryError()

    def __dealloc__(self):
        free(self.weights)
        free(self.tags)
        free(self.fh)
        free(self.fv)
        free(self.fn)
        free(self.sh)
        free(self.sv)
        free(self.keys)
        free(self.vals)
        free(self.spans)
        free(self.crosses)
        free(self.so)
        free(self.places)

    cdef bint reserve_rows(self, Py_ssize_t n) noexcept nogil:
        """The LIBSVM parser's rows, and as many importance weights."""
        if not Parser.reserve_rows(self, n):
            return False
        if self.weight_capacity < self.row_capacity:
            if not grow(<void **>&self.weights, self.row_capacity * sizeof(double)):
                return False
            self.weight_capacity = self.row_capacity
        return True

    cdef bint reserve_row(self, Py_ssize_t features, Py_ssize_t keys) noexcept nogil:
        """Room for a row of ``features`` features giving ``keys`` pairs (with its
        interactions); False when out of memory."""
        cdef Py_ssize_t cap = grown(self.f_capacity, features, 256)
        if cap > self.f_capacity:
            if not (grow(<void **>&self.fh, cap * sizeof(uint64_t)) and grow(<void **>&self.fv, cap * sizeof(double))
                    and grow(<void **>&self.fn, cap) and grow(<void **>&self.sh, cap * sizeof(uint64_t))
                    and grow(<void **>&self.sv, cap * sizeof(double)) and grow(<void **>&self.so, cap * sizeof(int64_t))):
                return False
            self.f_capacity = cap
        cap = grown(self.k_capacity, keys, 1024)
        if cap > self.k_capacity:
            if not (grow(<void **>&self.keys, cap * sizeof(long long))
                    and grow(<void **>&self.vals, cap * sizeof(double))):
                return False
            if self.names is not None and not grow(<void **>&self.places, cap * ORDER * sizeof(int64_t)):
                return False
            self.k_capacity = cap
        return True

    cdef bint add_tag(self, const char *p, Py_ssize_t n) noexcept nogil:
        if not ensure(<void **>&self.tags, &self.tag_capacity, self.tag_size + n, 1):
            return False
        memcpy(self.tags + self.tag_size, p, n)
        self.tag_size += n
        return True

    cdef bint add_span(self, const char *base, const char *ns, Py_ssize_t ns_len, const char *name,
                       Py_ssize_t name_len, uint64_t column) noexcept nogil:
        cdef int64_t *s
        if not ensure(<void **>&self.spans, &self.span_capacity, self.n_spans + 1, 5 * sizeof(int64_t)):
            return False
        s = self.spans + 5 * self.n_spans
        s[0], s[1], s[2], s[3], s[4] = ns - base, ns_len, name - base, name_len, <int64_t>column
        self.n_spans += 1
        return True

    cdef bint add_cross(self, Py_ssize_t *features, int order, long long column) noexcept nogil:
        """Record the row's features ``features[:order]`` crossed into ``column``."""
        cdef int64_t *r
        cdef int k
        if not ensure(<void **>&self.crosses, &self.cross_capacity, self.n_crosses + 1,
                      (ORDER + 1) * sizeof(int64_t)):
            return False
        r = self.crosses + (ORDER + 1) * self.n_crosses
        for k in range(ORDER):
            r[k] = self.row_span + features[k] if k < order else -1
        r[ORDER] = column
        self.n_crosses += 1
        return True

    cdef Py_ssize_t cross(self, int term, const uint64_t *gh, const double *gv, Py_ssize_t at,
                          bint named) noexcept nogil:
        """Append interaction ``term``'s pairs to the row's words from ``at`` (`cross_term` over
        the features grouped by namespace, (gh, gv)); return the new end (-1: out of memory)."""
        cdef int order = self.terms[term][0], k
        cdef Py_ssize_t start[ORDER]
        cdef Py_ssize_t count[ORDER]
        cdef Py_ssize_t features[ORDER]
        cdef bint same[ORDER]
        cdef Py_ssize_t p, end
        cdef unsigned char c
        for k in range(order):
            c = self.terms[term][k + 1]
            start[k], count[k] = self.ns_start[c], self.ns_count[c]
            same[k] = k > 0 and c == self.terms[term][k]
        end = cross_term(order, start, count, same, gh, gv, self.mask, 0, <uint64_t *>self.keys, self.low,
                         self.vals, at, self.places if named else NULL)
        if named:
            for p in range(at, end):
                for k in range(order):
                    features[k] = self.so[self.places[ORDER * p + k]]
                if not self.add_cross(features, order, <uint64_t>self.keys[p] >> self.low):
                    return -1
        return end

    cdef int parse_line(self, const char *base, const char *p, const char *e, const char *end,
                        int64_t lo, int64_t hi, int64_t offset) noexcept nogil:
        """Parse one VW line [p, e) (no newline) of the buffer [base, end); append a row
        unless it is blank (``lo``, ``hi``, ``offset``: unused, the columns are hashes)."""
        cdef const char *t
        cdef const char *q
        cdef const char *bar
        cdef const char *ls
        cdef const char *words[4]
        cdef const char *word_ends[4]
        cdef const char *ns_name
        cdef const char *r
        cdef const char *name_end
        cdef bint string_value
        cdef Py_ssize_t n_words = 0, ns_len, first, first_span, i
        cdef double label = 0.0, weight = 1.0, ns_value, value
        cdef uint64_t ns_hash, h = 0, anon
        cdef unsigned char ns
        t = <const char *>memchr(p, 0, e - p)
        if t != NULL:
            return self.fail(VW_ERR_NUL, base, t, t + 1)
        if e > p and (e - 1)[0] == 13:
            e -= 1
        if self.line == 1 and self.file_start:
            p = after_bom(p, e)     # a UTF-8 byte order mark, as VW skips it
        if skip_space(p, e) == e:
            return VW_OK
        bar = <const char *>memchr(p, 124, e - p)
        if bar == NULL:
            bar = e
        ls = <const char *>memchr(p, 9, bar - p)    # the label's part after a tab, as VW
        ls = p if ls == NULL else ls + 1
        # the words before the first '|': label [importance [initial]] and the tag
        t = skip_space(ls, bar)
        while t < bar:
            if n_words == 4:
                return self.fail(VW_ERR_LABEL_WORDS, base, ls, bar)
            words[n_words] = t
            t = token_end(t, bar)
            word_ends[n_words] = t
            n_words += 1
            t = skip_space(t, bar)
        if not self.reserve_rows(1):
            return self.fail(VW_ERR_NO_MEMORY, base, p, e)
        self.qids[self.rows] = self.tag_size
        if n_words and (word_ends[n_words - 1] == bar or words[n_words - 1][0] == 39):   # the tag
            n_words -= 1
            t = words[n_words] + (words[n_words][0] == 39)
            if not self.add_tag(t, word_ends[n_words] - t):
                return self.fail(VW_ERR_NO_MEMORY, base, p, e)
            self.qids[self.rows] = self.tag_size
            self.any_tag = True
        if n_words == 0:
            if self.need_label:
                return self.fail(VW_ERR_NO_LABEL, base, p, bar)
            label = NAN         # a line to predict (VW's unlabelled example)
        if n_words > 2:
            return self.fail(VW_ERR_LABEL_WORDS, base, words[2], word_ends[n_words - 1])
        if n_words and (not parse_double(words[0], word_ends[0], end, &label) or not isfinite(label)):
            return self.fail(VW_ERR_LABEL, base, words[0], word_ends[0])
        if n_words == 2:
            if not parse_double(words[1], word_ends[1], end, &weight) or not isfinite(weight) or weight < 0:
                return self.fail(VW_ERR_WEIGHT, base, words[1], word_ends[1])
            if weight != 1.0:
                self.any_weight = True
        # the namespaces and their features
        self.nf = 0
        self.row_span = self.n_spans
        p = bar
        while p < e:
            p += 1      # the '|'
            ns_value, anon = 1.0, 0
            if p == e or p[0] == 32 or p[0] == 9 or p[0] == 13 or p[0] == 124:
                ns, ns_hash, ns_name, ns_len = 32, 0, p, 0
            elif p[0] == 58:
                return self.fail(VW_ERR_NAMESPACE, base, p, token_end(p, e))
            else:
                ns, ns_name = <unsigned char>p[0], p
                while p < e and not ends_name(p[0]):
                    p += 1
                ns_len = p - ns_name
                ns_hash = self.short_ns[<unsigned char>ns_name[0]] if ns_len == 1 else hashstring(ns_name, ns_len, 0, end)
                if p < e and p[0] == 58:
                    q = scan_number(p + 1, end, &ns_value)
                    if q == NULL or (q < e and not ends_value(q[0])) or not isfinite(ns_value):
                        return self.fail(VW_ERR_NAMESPACE, base, ns_name, token_end(p, e))
                    p = q
            first, first_span = self.nf, self.n_spans
            while p < e and p[0] != 124:
                if p[0] == 32 or p[0] == 9 or p[0] == 13:     # (a CR inside a line: a space)
                    p += 1
                    continue
                t = p
                while p < e and not ends_name(p[0]):
                    p += 1
                name_end, value, string_value = p, ns_value, False
                if p < e and p[0] == 58:        # ':' and a value
                    q = p + 1
                    if q == e or ends_value(q[0]):
                        return self.fail(VW_ERR_NO_VALUE, base, t, q)
                    r = scan_number(q, end, &value)
                    if r != NULL and (r == e or ends_value(r[0])):
                        if not isfinite(value):
                            return self.fail(VW_ERR_NONFINITE, base, q, r)
                        value *= ns_value
                        p = r
                    elif starts_number(q[0]):
                        return self.fail(VW_ERR_VALUE, base, q, token_end(q, e))
                    else:       # a string value, hashed after the name; its value 1, as VW
                        p = token_end(q, e)
                        h = hashstring(q, p - q, hashstring(t, name_end - t, <uint32_t>ns_hash, end), end)
                        value, string_value = 1.0, True
                if not string_value:
                    if name_end > t:
                        h = hashstring(t, name_end - t, <uint32_t>ns_hash, end)
                    else:
                        h = ns_hash + anon
                        anon += 1
                if value == 0:
                    continue
                if self.nf == self.f_capacity and not self.reserve_row(self.nf + 1, 0):
                    return self.fail(VW_ERR_NO_MEMORY, base, t, p)
                self.fh[self.nf], self.fv[self.nf], self.fn[self.nf] = h, value, ns
                self.nf += 1
                if self.names is not None and not self.add_span(base, ns_name, ns_len, t,
                                                                (p if string_value else name_end) - t,
                                                                h & self.mask):
                    return self.fail(VW_ERR_NO_MEMORY, base, t, p)
            if self.select[ns] == DROP:        # (read and checked, then dropped: no test per feature)
                self.nf, self.n_spans = first, first_span
            elif self.select[ns] == DROP_LINEAR:
                for i in range(first_span, self.n_spans):
                    self.spans[5 * i + 4] = -1         # (crossed only: no column of its own to name)
        if not self.emit():
            return self.fail(VW_ERR_NO_MEMORY, base, bar, e)
        self.labels[self.rows] = label
        self.weights[self.rows] = weight
        self.rows += 1
        self.indptr[self.rows] = self.nnz
        return VW_OK

    cdef bint emit(self) noexcept nogil:
        """The row's features and their interactions, masked, sorted, merged, appended.
        The pairs sort as words ``column << low | place`` (fastprox._rowsort.sort_packed),
        so a row holds at most 2^low pairs (2^24 at 40 bits; beyond, out of memory)."""
        cdef Py_ssize_t i, n = self.nf, total = self.nf, at
        cdef bint room, grouped = True
        cdef unsigned char c
        cdef int term, k, run, low = self.low
        cdef uint64_t m = self.mask
        cdef double size
        cdef bint named = self.names is not None
        cdef double *vals
        cdef const uint64_t *fh
        cdef const double *fv
        cdef unsigned long long *words
        if self.n_terms:
            # the features grouped by namespace, in order within each (VW's feature spaces):
            # as they came when each namespace's are together (|a ... |b ...), else copied
            for i in range(n):
                c = self.fn[i]
                if self.ns_count[c] == 0:
                    self.ns_start[c] = i
                elif c != self.fn[i - 1]:
                    grouped = False
                self.ns_count[c] += 1
            if not grouped or named:
                at = 0
                for i in range(n):
                    c = self.fn[i]
                    if not self.placed[c]:
                        self.placed[c] = True
                        self.ns_start[c] = at
                        at += self.ns_count[c]
                for i in range(n):      # ns_start as the cursors, then back to the starts
                    c = self.fn[i]
                    self.sh[self.ns_start[c]], self.sv[self.ns_start[c]] = self.fh[i], self.fv[i]
                    self.so[self.ns_start[c]] = i
                    self.ns_start[c] += 1
                for i in range(n):
                    c = self.fn[i]
                    if self.placed[c]:
                        self.placed[c] = False
                        self.ns_start[c] -= self.ns_count[c]
                grouped = False
            for term in range(self.n_terms):   # unordered tuples: C(n + r - 1, r) per run of r
                size, k = 1.0, 1
                while k <= self.terms[term][0]:
                    c, run = self.terms[term][k], 1
                    while k + run <= self.terms[term][0] and self.terms[term][k + run] == c:
                        run += 1
                    for i in range(run):
                        size = size * (self.ns_count[c] + i) / (i + 1)
                    k += run
                total += <Py_ssize_t>min(size + 0.5, MAX_PAIRS)
        room = (total < MAX_PAIRS and <unsigned long long>total >> low == 0 and self.reserve_row(total, total)
                and self.reserve_nnz(total))
        # (the buffers in locals, after reserve_row may move them: the compiler need not
        # reload them after each store)
        words, vals, fh, fv = <unsigned long long *>self.keys, self.vals, self.fh, self.fv
        at = -1
        if room:
            for i in range(n):
                words[i], vals[i] = (fh[i] & m) << low | <unsigned long long>i, fv[i]
            at = self.crossed_only(n) if self.some_linear else n
            for term in range(self.n_terms):
                at = self.cross(term, fh if grouped else self.sh, fv if grouped else self.sv, at, named)
                if at < 0:
                    break
        for i in range(n):
            self.ns_count[self.fn[i]] = 0
        if at < 0:
            return False
        sort_packed(words, <unsigned long long *>self.sh, at, low)
        self.nnz += merge_sorted_words(words, at, low, vals, self.indices + self.nnz, self.data + self.nnz)
        return True

    cdef Py_ssize_t crossed_only(self, Py_ssize_t n) noexcept nogil:
        """The row's n linear pairs (`emit`'s words and values) without those of the
        namespaces DROP_LINEAR, in order, each word's place its new one; return how
        many are left. (A pass of its own: `emit`'s loop stays as it is without.)"""
        cdef unsigned long long *words = <unsigned long long *>self.keys
        cdef unsigned long long place = (<unsigned long long>1 << self.low) - 1
        cdef Py_ssize_t i, at = 0
        for i in range(n):
            if self.select[self.fn[i]] != DROP_LINEAR:
                words[at], self.vals[at] = (words[i] & ~place) | <unsigned long long>at, self.vals[i]
                at += 1
        return at

    def feed(self, bytearray buf not None, Py_ssize_t pos, Py_ssize_t size, bint final,
             Py_ssize_t max_rows, int64_t lo, int64_t hi, int64_t offset):
        """fastprox._libsvm.Parser.feed over VW lines; then the names met recorded."""
        self.n_spans = self.n_crosses = 0
        pos = Parser.feed(self, buf, pos, size, final, max_rows, lo, hi, offset)
        if self.n_spans:
            self.record_names(PyByteArray_AS_STRING(buf))
        return pos

    cdef record_names(self, const char *base):
        """The names of the columns met in the last feed, first come first kept: a
        feature's ``namespace^name``, a crossed column's its features' joined by ``*``
        (VW's --invert_hash names)."""
        cdef Py_ssize_t i, f
        cdef int64_t *s
        cdef int64_t *r
        names = self.names
        for i in range(self.n_spans):
            s = self.spans + 5 * i
            if s[4] >= 0 and s[4] not in names:       # (-1: a feature crossed only)
                names[s[4]] = self.span_name(base, i)
        for i in range(self.n_crosses):
            r = self.crosses + (ORDER + 1) * i
            if r[ORDER] not in names:
                names[r[ORDER]] = "*".join([self.span_name(base, r[f]) for f in range(ORDER) if r[f] >= 0])
        self.n_spans = self.n_crosses = 0

    cdef str span_name(self, const char *base, Py_ssize_t i):
        """Feature ``i`` of the feed's spans as ``namespace^name``."""
        cdef int64_t *s = self.spans + 5 * i
        return ((base[s[0]:s[0] + s[1]] if s[1] else b"") + b"^"
                + base[s[2]:s[2] + s[3]]).decode("utf-8", "backslashreplace")

    def take(self, bint wide):
        """Return ``(data, indices, indptr, labels, weights, tags)`` and reset: the
        ``array.array`` buffers of fastprox._libsvm.Parser.take, the importance
        weights (None when all are 1) and the tags (a list of ``bytes``, None when no
        row has one)."""
        cdef Py_ssize_t i, rows = self.rows
        cdef array.array weights = None
        if self.any_weight:
            weights = array.clone(DOUBLES, rows, zero=False)
            memcpy(weights.data.as_doubles, self.weights, rows * sizeof(double))
        tags = None
        if self.any_tag:
            tags = [self.tags[(self.qids[i - 1] if i else 0):self.qids[i]] for i in range(rows)]
        self.tag_size = 0
        self.any_tag = self.any_weight = False
        data, indices, indptr, labels, _ = Parser.take(self, 0, wide)
        return data, indices, indptr, labels, weights, tags



def cross_groups(const double[::1] data not None, const int64_t[::1] indices not None,
                 const int64_t[::1] indptr not None,
                 const int64_t[::1] slot not None, terms, int bits, int64_t n):
    """A chunk's LIBSVM rows with their groups' interactions (fastprox.stream.groups):
    ``(data, indices, indptr)``, int64 canonical CSR of ``n + len(terms) * 2**bits``
    columns.

    Parameters
    ----------
    data, indices, indptr : arrays
        The rows (int64 indices: columns < n).
    slot : int64 array
        Each of the n features' group as an index among the groups the terms name
        (-1 for a group none names).
    terms : list of tuple of int
        The interactions, each the slots of its groups (2 to 8, a repeated one
        adjacent).
    bits : int
        The bits of a term's block of columns.
    n : int
        The features' columns, before the blocks.

    Returns
    -------
    tuple of numpy.ndarray
        Each row: its own entries, then each term's tuples in VW's order (`cross_term`:
        the hash chain over the zero-based columns, term k's key
        ``n + k * 2**bits + (hash & (2**bits - 1))``), sorted by column stably, the
        values of a column met twice summed in that order.
    """
    import numpy as np
    cdef Py_ssize_t rows = indptr.shape[0] - 1, n_slots = np.asarray(slot).max(initial=-1) + 1, n_terms = len(terms)
    cdef Py_ssize_t r, i, a, b, m, at, total = 0, longest = 0, out = 0, s, c
    cdef int t, k, order, run, low
    cdef double size, pairs
    cdef uint64_t mask = (<uint64_t>1 << bits) - 1
    cdef int64_t width = n + (<int64_t>n_terms << bits)
    if n_terms > 64 or any(not 2 <= len(term) <= ORDER for term in terms):
        raise ValueError(f"at most 64 interactions of 2 to {MAX_ORDER} groups each")
    cdef Py_ssize_t[:, ::1] term_slots = np.zeros((max(n_terms, 1), ORDER + 1), dtype=np.intp)
    for t, term in enumerate(terms):
        term_slots[t, 0] = len(term)
        for k, c in enumerate(term):
            term_slots[t, k + 1] = c
    cdef Py_ssize_t[::1] counts = np.zeros(max(n_slots, 1), dtype=np.intp)
    cdef Py_ssize_t[::1] starts = np.zeros(max(n_slots, 1), dtype=np.intp)
    cdef Py_ssize_t start[ORDER]
    cdef Py_ssize_t count[ORDER]
    cdef bint same[ORDER]
    # the rows' pairs before merging, to size the output and the scratch
    for r in range(rows):
        a, b = indptr[r], indptr[r + 1]
        for i in range(a, b):
            if slot[indices[i]] >= 0:
                counts[slot[indices[i]]] += 1
        pairs = b - a
        for t in range(n_terms):       # unordered tuples: C(n + r - 1, r) per run of r
            size, k, order = 1.0, 1, term_slots[t, 0]
            while k <= order:
                c, run = term_slots[t, k], 1
                while k + run <= order and term_slots[t, k + run] == c:
                    run += 1
                for i in range(run):
                    size = size * (counts[c] + i) / (i + 1)
                k += run
            pairs += <double><Py_ssize_t>(size + 0.5)
        for i in range(a, b):
            if slot[indices[i]] >= 0:
                counts[slot[indices[i]]] = 0
        if pairs > MAX_PAIRS:
            raise MemoryError(f"row {r + 1} crosses into {pairs:.0f} pairs")
        total += <Py_ssize_t>pairs
        longest = max(longest, <Py_ssize_t>pairs)
    low = 63                            # the bits below a sorted word's column: its pair's place
    while low > 0 and (<uint64_t>width >> (64 - low)) != 0:
        low -= 1
    if longest > 0 and (<uint64_t>(longest - 1) >> low) != 0:
        raise MemoryError(f"a row of {longest} pairs over {width} columns: too many to sort")
    cdef double[::1] out_data = np.empty(total, dtype=np.float64)
    cdef int64_t[::1] out_indices = np.empty(total, dtype=np.int64)
    cdef int64_t[::1] out_indptr = np.zeros(rows + 1, dtype=np.int64)
    cdef long long[::1] keys = np.empty(max(longest, 1), dtype=np.longlong)
    cdef uint64_t[::1] scratch = np.empty(max(longest, 1), dtype=np.uint64)
    cdef double[::1] vals = np.empty(max(longest, 1), dtype=np.float64)
    cdef uint64_t[::1] sh = np.empty(max(indices.shape[0], 1), dtype=np.uint64)
    cdef double[::1] sv = np.empty(max(indices.shape[0], 1), dtype=np.float64)
    with nogil:
        for r in range(rows):
            a, b = indptr[r], indptr[r + 1]
            m = b - a
            for i in range(a, b):      # the row's own entries, and its features grouped by slot
                keys[i - a], vals[i - a] = <long long>(<uint64_t>indices[i] << low | <uint64_t>(i - a)), data[i]
                if slot[indices[i]] >= 0:
                    counts[slot[indices[i]]] += 1
            at = 0
            for s in range(n_slots):
                starts[s] = at
                at += counts[s]
            for i in range(a, b):
                s = slot[indices[i]]
                if s >= 0:
                    sh[starts[s]], sv[starts[s]] = <uint64_t>indices[i], data[i]
                    starts[s] += 1
            for s in range(n_slots):
                starts[s] -= counts[s]
            at = m
            for t in range(n_terms):
                order = term_slots[t, 0]
                for k in range(order):
                    c = term_slots[t, k + 1]
                    start[k], count[k] = starts[c], counts[c]
                    same[k] = k > 0 and c == term_slots[t, k]
                at = cross_term(order, start, count, same, &sh[0], &sv[0], mask, n + (<uint64_t>t << bits),
                                <uint64_t *>&keys[0], low, &vals[0], at, NULL)
            for s in range(n_slots):
                counts[s] = 0
            sort_packed(<unsigned long long *>&keys[0], <unsigned long long *>&scratch[0], at, low)
            out += merge_sorted_words(<unsigned long long *>&keys[0], at, low, &vals[0], &out_indices[out],
                                      &out_data[out])
            out_indptr[r + 1] = out
    return np.asarray(out_data)[:out], np.asarray(out_indices)[:out], np.asarray(out_indptr)
