/* The linear-chain CRF's products in lanes (`_kernel/decoders/forward_backward.pxd`): rows of
   K doubles weighted and added, written once over `_kernel/lanes/isa.h`'s operations and
   instantiated by `_kernel/lanes/lanes.h` for each instruction set (no include guard: one
   inclusion per set). The lanes run across a row's K columns, each column's sum taken
   over the rows in their order, each lane's operations the scalar code's (a product,
   then a sum: the build's -ffp-contract=off keeps them two roundings), so that every set
   gives the portable code's bits (tests/c/lanes.c). The columns go in blocks of up to
   CHAIN_BLOCK vectors, whose sums stay in registers while the rows go by (CoNLL-2000's
   22 labels in one block of four or eight lanes); a K that is not a multiple of the
   lanes takes its last columns in a masked vector. Viterbi's max-plus step (`chain_best`)
   runs the same way, each column's best and its row in registers. */

/* Rows j < 2^52 held as doubles, stored as int64: j + 2^52's bits are 2^52's plus j. */
#undef CHAIN_STORE_ROWS
#undef CHAIN_STORE_ROWS_TAIL
#if FASTPROX_LANES_ISA == FASTPROX_LANES_PORTABLE
#define CHAIN_STORE_ROWS(p, v) (*(p) = (int64_t)(v))
#define CHAIN_STORE_ROWS_TAIL(p, v, k) ((void)0)  /* (one lane: no tail) */
#elif FASTPROX_LANES_ISA == FASTPROX_LANES_SSE2
static inline __m128i fastprox_sse2_rows(__m128d v)
{
    const __m128d big = _mm_set1_pd(4503599627370496.0);
    return _mm_sub_epi64(_mm_castpd_si128(_mm_add_pd(v, big)), _mm_castpd_si128(big));
}
#define CHAIN_STORE_ROWS(p, v) _mm_storeu_si128((__m128i *)(p), fastprox_sse2_rows(v))
#define CHAIN_STORE_ROWS_TAIL(p, v, k) _mm_storel_epi64((__m128i *)(p), fastprox_sse2_rows(v))
#elif FASTPROX_LANES_ISA == FASTPROX_LANES_AVX2
LANES_INLINE __m256i fastprox_avx2_rows(__m256d v)
{
    const __m256d big = _mm256_set1_pd(4503599627370496.0);
    return _mm256_sub_epi64(_mm256_castpd_si256(_mm256_add_pd(v, big)), _mm256_castpd_si256(big));
}
LANES_INLINE void fastprox_avx2_store_rows_tail(int64_t *p, __m256d v, long long k)
{
    _mm256_maskstore_epi64((long long *)p, _mm256_cmpgt_epi64(_mm256_set1_epi64x(k), _mm256_set_epi64x(3, 2, 1, 0)),
                           fastprox_avx2_rows(v));
}
#define CHAIN_STORE_ROWS(p, v) _mm256_storeu_si256((__m256i *)(p), fastprox_avx2_rows(v))
#define CHAIN_STORE_ROWS_TAIL fastprox_avx2_store_rows_tail
#elif FASTPROX_LANES_ISA == FASTPROX_LANES_AVX512
LANES_INLINE __m512i fastprox_avx512_rows(__m512d v)
{
    const __m512d big = _mm512_set1_pd(4503599627370496.0);
    return _mm512_sub_epi64(_mm512_castpd_si512(_mm512_add_pd(v, big)), _mm512_castpd_si512(big));
}
#define CHAIN_STORE_ROWS(p, v) _mm512_storeu_si512((p), fastprox_avx512_rows(v))
#define CHAIN_STORE_ROWS_TAIL(p, v, k) _mm512_mask_storeu_epi64((p), (__mmask8)((1u << (k)) - 1), \
                                                                fastprox_avx512_rows(v))
#endif

/* The most vectors of sums a block keeps in registers (of SSE2's and AVX2's 16: the sums,
   the row's weight and a product); CHAIN_REST_CASES names every rest up to it. */
#undef CHAIN_BLOCK
#define CHAIN_BLOCK 8

/* Vector i of a block at p: its last (i = nv - 1) the first `tail` lanes only where `masked`;
   stored by `full` (L lanes) or `part` (the first `tail`): the sums, or the rows as int64. */
#define CHAIN_LOAD(p, i) (masked && (i) == nv - 1 ? V_LOAD_TAIL((p) + (i) * LANES, tail) : V_LOAD((p) + (i) * LANES))
#define CHAIN_PUT(full, part, p, i, v)                                                                         \
    do {                                                                                                       \
        if (masked && (i) == nv - 1)                                                                           \
            part((p) + (i) * LANES, (v), tail);                                                                \
        else                                                                                                   \
            full((p) + (i) * LANES, (v));                                                                      \
    } while (0)
#define CHAIN_STORE(p, i, v) CHAIN_PUT(V_STORE, V_STORE_TAIL, p, i, v)
#define CHAIN_STORE_INDEX(p, i, v) CHAIN_PUT(CHAIN_STORE_ROWS, CHAIN_STORE_ROWS_TAIL, p, i, v)

/* The columns left after a row's full blocks, `rest` of them (less than a block's), as
   CHAIN_REST(nv, masked): its nv vectors, the last masked where `tail` (rest mod the
   lanes) is not 0; nothing where rest is 0. A case per (nv, masked) up to CHAIN_BLOCK
   vectors, so that the block is inlined with constants (`chain_best`'s smaller blocks
   reach only the first cases). */
#define CHAIN_REST_CASES(rest, tail)                                                                           \
    switch ((int)((rest) / LANES) * 2 + ((tail) > 0)) {                                                        \
    case 1: CHAIN_REST(1, 1); break;                                                                           \
    case 2: CHAIN_REST(1, 0); break;                                                                           \
    case 3: CHAIN_REST(2, 1); break;                                                                           \
    case 4: CHAIN_REST(2, 0); break;                                                                           \
    case 5: CHAIN_REST(3, 1); break;                                                                           \
    case 6: CHAIN_REST(3, 0); break;                                                                           \
    case 7: CHAIN_REST(4, 1); break;                                                                           \
    case 8: CHAIN_REST(4, 0); break;                                                                           \
    case 9: CHAIN_REST(5, 1); break;                                                                           \
    case 10: CHAIN_REST(5, 0); break;                                                                          \
    case 11: CHAIN_REST(6, 1); break;                                                                          \
    case 12: CHAIN_REST(6, 0); break;                                                                          \
    case 13: CHAIN_REST(7, 1); break;                                                                          \
    case 14: CHAIN_REST(7, 0); break;                                                                          \
    case 15: CHAIN_REST(8, 1); break;                                                                          \
    default: break;                                                                                            \
    }

/* One block of nv (1 to CHAIN_BLOCK) vectors of columns of `chain_combine`'s rows (their
   first column at rows[0]), the last vector's first `tail` lanes only where `masked`: nv
   and masked are constants where the block is inlined, so that the loops over its vectors
   unroll and the sums stay in registers while the rows go by. */
LANES_INLINE void LANES_NAME(chain_block)(const double *w, long long ws, const double *rows, long long count,
                                          long long K, double *out, int start, const int nv, const int masked,
                                          long long tail)
{
    V s[CHAIN_BLOCK], c = V_SET1(w[0]);
    long long j;
    int i;
    for (i = 0; i < nv; i++)
        s[i] = start ? V_MUL(c, CHAIN_LOAD(rows, i)) : V_ADD(CHAIN_LOAD(out, i), V_MUL(c, CHAIN_LOAD(rows, i)));
    for (j = 1; j < count; j++) {
        const double *r = rows + j * K;
        c = V_SET1(w[j * ws]);
        for (i = 0; i < nv; i++)
            s[i] = V_ADD(s[i], V_MUL(c, CHAIN_LOAD(r, i)));
    }
    for (i = 0; i < nv; i++)
        CHAIN_STORE(out, i, s[i]);
}

/* One output row: blocks of CHAIN_BLOCK vectors, then the rest (1 to CHAIN_BLOCK
   vectors, the last masked where K is not a multiple of the lanes). */
LANES_INLINE void LANES_NAME(chain_row)(const double *w, long long ws, const double *rows, long long count,
                                        long long K, double *out, int start)
{
    long long k, tail;
    for (k = 0; K - k >= CHAIN_BLOCK * LANES; k += CHAIN_BLOCK * LANES)
        LANES_NAME(chain_block)(w, ws, rows + k, count, K, out + k, start, CHAIN_BLOCK, 0, 0);
    tail = (K - k) % LANES;
#define CHAIN_REST(nv, masked) LANES_NAME(chain_block)(w, ws, rows + k, count, K, out + k, start, nv, masked, tail)
    CHAIN_REST_CASES(K - k, tail);
#undef CHAIN_REST
}

/* The most vectors of columns a block of `chain_best` keeps in registers: two each (the
   best and its row), with the previous score and the row number. */
#undef CHAIN_BEST_BLOCK
#define CHAIN_BEST_BLOCK 4

/* One block of nv (1 to CHAIN_BEST_BLOCK) vectors of columns of `chain_best`, as
   `chain_block`'s (A's first column of the block at A[0]). */
LANES_INLINE void LANES_NAME(chain_best_block)(const double *prev, const double *A, long long K, double *best,
                                               int64_t *rows, const int nv, const int masked, long long tail)
{
    V b[CHAIN_BLOCK], r[CHAIN_BLOCK], p = V_SET1(prev[0]), row, c;
    long long j;
    int i;
    for (i = 0; i < nv; i++) {
        b[i] = V_ADD(p, CHAIN_LOAD(A, i));
        r[i] = V_ZERO;
    }
    for (j = 1; j < K; j++) {
        const double *a = A + j * K;
        p = V_SET1(prev[j]);
        row = V_SET1((double)j);
        for (i = 0; i < nv; i++) {
            c = V_ADD(p, CHAIN_LOAD(a, i));
            M up = V_GT(c, b[i]);
            b[i] = V_BLEND(up, c, b[i]);
            r[i] = V_BLEND(up, row, r[i]);
        }
    }
    for (i = 0; i < nv; i++) {
        CHAIN_STORE(best, i, b[i]);
        CHAIN_STORE_INDEX(rows, i, r[i]);
    }
}

/* Viterbi's step over K labels (K < 2^52): best[k] = max_j prev[j] + A[j K + k] and
   rows[k] the j of it, the smallest among ties (j rising, a strict >), as the scalar loop
   `c = prev[j] + A[j * K + k]; if c > best[k]: best[k] = c; rows[k] = j` with j outer
   from best[k] = prev[0] + A[k], rows[k] = 0 (`_kernel/decoders/viterbi.pxd`). */
static LANES_TARGET void LANES_NAME(chain_best)(const double *prev, const double *A, long long K, double *best,
                                                int64_t *rows)
{
    long long k, tail;
    for (k = 0; K - k >= CHAIN_BEST_BLOCK * LANES; k += CHAIN_BEST_BLOCK * LANES)
        LANES_NAME(chain_best_block)(prev, A + k, K, best + k, rows + k, CHAIN_BEST_BLOCK, 0, 0);
    tail = (K - k) % LANES;
#define CHAIN_REST(nv, masked) LANES_NAME(chain_best_block)(prev, A + k, K, best + k, rows + k, nv, masked, tail)
    CHAIN_REST_CASES(K - k, tail);
#undef CHAIN_REST
    LANES_LEAVE();
}

/* `outputs` rows of K doubles, row o at out + o K: out[o K + k] = sum_j w[o wstep + j ws]
   rows[j K + k] over j < count (count >= 1), added in j's order to out's own values, or
   starting from the first product where `start` (each step out + w r: a product, then a
   sum, as the scalar loop `out[k] += w[j] * rows[j * K + k]` with j outer). */
static LANES_TARGET void LANES_NAME(chain_combine)(const double *w, long long ws, const double *rows, long long count,
                                                   long long K, double *out, int start, long long outputs,
                                                   long long wstep)
{
    long long o;
    for (o = 0; o < outputs; o++)
        LANES_NAME(chain_row)(w + o * wstep, ws, rows, count, K, out + o * K, start);
    LANES_LEAVE();
}
#undef CHAIN_LOAD
#undef CHAIN_PUT
#undef CHAIN_STORE
#undef CHAIN_STORE_INDEX
#undef CHAIN_REST_CASES
