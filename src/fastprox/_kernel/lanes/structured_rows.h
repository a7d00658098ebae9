/* The structured steps' rda + AdaGrad rows (`_kernel/steps/structured.pxd`'s
   `dual_adagrad_rows`: a CRF's K entries of every feature it meets) over L entries at a
   time, written once over `_kernel/lanes/isa.h`'s operations and instantiated by
   `_kernel/lanes/lanes.h` for each instruction set (no include guard: one inclusion per
   set, after isa.h). A feature's K entries are `stride` doubles apart (s, G, and the
   averaged sum S where it is kept), read and written a pair (s, G) at a time
   (V_GATHER2, V_SCATTER2) from L entry pointers. The last K mod L entries take a last
   group of L that ends at entry K - 1 and overlaps the one before, its lanes already
   taken blended back to what they hold (`fresh`: no operation is applied twice), or,
   where K < L, the portable code's loop (the same operations, one entry at a time). Each
   lane performs the Cython code's operations in its order (`dual_adagrad_weight`,
   `dual_adagrad_apply`, `dual_averaged_catch_up`'s skipped terms, `finish_step`'s
   scaling, `collect_items`' gradient sums: the last two under every rule), the
   conditionals as blends and the sign operations as bit operations, so that every set
   gives the portable code's bits (tests/c/lanes.c). */
#ifndef FASTPROX_DUAL_SPARSE
#define FASTPROX_DUAL_SPARSE
#include <float.h>
/* Whether rda + AdaGrad's weights (`dual_weight`) under these constants tell a weight of
   0 without their square root and division: rho = 0, and every finite G gives a finite
   beta = (delta + sqrt(G)) inv_eta0 and a positive beta + l2 (the bounds at G = DBL_MAX
   and G = 0: the operations are monotone). Then l1 + beta rho is l1, and an entry whose
   m = |s| - l1 is not positive, G finite, has the weight copysign(0, -s) (`zero_weights`).
   Asked only under an l1 threshold (l1 > 0: without, an entry is 0 only where s is, and
   the test would cost more than it saves). */
static inline int fastprox_dual_sparse(double delta, double inv_eta0, double rho, double l1, double l2)
{
    return l1 > 0.0 && rho == 0.0 && inv_eta0 > 0.0 && delta * inv_eta0 + l2 > 0.0 &&
           (delta + sqrt(DBL_MAX)) * inv_eta0 < INFINITY;
}
#endif

/* L entry pointers: entries k .. k + L - 1 of a feature's row e. */
#define ENTRIES(r, e, k, stride)                                                                            \
    double *r[LANES];                                                                                       \
    do {                                                                                                    \
        int lane_;                                                                                          \
        for (lane_ = 0; lane_ < LANES; lane_++)                                                             \
            r[lane_] = (double *)(e) + ((k) + lane_) * (stride);                                            \
    } while (0)

/* rda + AdaGrad's weights of entries (s, G): `dual_weight`(s, beta = (delta + sqrt(G))
   inv_eta0) with the l1 threshold l1 + beta rho and the l2 weight l2,
   copysign(max0(|s| - (l1 + beta rho)), -s) / (beta + l2), 0 where beta + l2 is not
   positive (`dual_adagrad_weight`). */
LANES_INLINE V LANES_NAME(dual_weight)(V s, V G, double delta, double inv_eta0, double rho, double l1, double l2)
{
    V beta = V_MUL(V_ADD(V_SET1(delta), V_SQRT(G)), V_SET1(inv_eta0));
    V den = V_ADD(beta, V_SET1(l2));
    V m = V_SUB(V_ABS(V_NEG(s)), V_ADD(V_SET1(l1), V_MUL(beta, V_SET1(rho))));
    V w = V_DIV(V_COPYSIGN(V_MAX(V_ZERO, m), V_NEG(s)), den);
    return V_KEEP(V_GT(den, V_ZERO), w);
}

/* The lanes of the group of L entries that ends at entry K - 1 that the groups of L
   from entry 0 have not taken: its last `rest` (0 < rest < L). */
LANES_INLINE M LANES_NAME(fresh)(long long rest)
{
    static const double lane[FASTPROX_LANES_MAX] = {0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0};
    return V_GT(V_LOAD(lane), V_SET1((double)(LANES - rest) - 0.5));
}

/* Whether every lane's `dual_weight` is 0 where `fastprox_dual_sparse` holds: |s| - l1
   not positive and G finite (an entry below its l1 threshold: four in ten groups of the
   CoNLL-2000 tagger's rows under l1). Its weight is then copysign(0, -s), its bits. */
LANES_INLINE int LANES_NAME(zero_weights)(V s, V G, double l1)
{
    return !M_ANY(M_OR(V_NOT_LE(V_SUB(V_ABS(V_NEG(s)), V_SET1(l1)), V_ZERO), V_NOT_LT(G, V_SET1(INFINITY))));
}

/* `dual_weight`, or where `sparse` (`fastprox_dual_sparse`) and every lane's is 0
   (`zero_weights`) its bits without the square root and division. */
LANES_INLINE V LANES_NAME(dual_weight_or_zero)(V s, V G, double delta, double inv_eta0, double rho, double l1,
                                               double l2, const int sparse)
{
    if (sparse && LANES_NAME(zero_weights)(s, G, l1))
        return V_COPYSIGN(V_ZERO, V_NEG(s));
    return LANES_NAME(dual_weight)(s, G, delta, inv_eta0, rho, l1, l2);
}

/* scores[k] += w_k x for the L entries k .. k + L - 1 of row e (`dual_adagrad_margins`),
   where `fresh` says (the others' scores stored as they are) if `overlap`. */
LANES_INLINE void LANES_NAME(dual_margins_of)(const double *e, long long stride, long long k, double x,
                                              double *scores, double delta, double inv_eta0, double rho, double l1,
                                              double l2, const int sparse, const int overlap, M fresh)
{
    V s, G, before = V_LOAD(scores + k), after;
    ENTRIES(r, e, k, stride);
    V_GATHER2(r, FASTPROX_DUAL_SUM, &s, &G);
    after = V_ADD(before, V_MUL(LANES_NAME(dual_weight_or_zero)(s, G, delta, inv_eta0, rho, l1, l2, sparse),
                                V_SET1(x)));
    V_STORE(scores + k, overlap ? V_BLEND(fresh, after, before) : after);
}

/* `dual_margins_of` over the entries k = from .. K - 1 of row e, L at a time. Returns
   where the lanes stopped. */
LANES_INLINE long long LANES_NAME(dual_margins_in)(const double *e, long long stride, long long from, long long K,
                                                   double x, double *scores, double delta, double inv_eta0,
                                                   double rho, double l1, double l2, const int sparse)
{
    long long k;
    for (k = from; k + LANES <= K; k += LANES)
        LANES_NAME(dual_margins_of)(e, stride, k, x, scores, delta, inv_eta0, rho, l1, l2, sparse, 0, M_NONE);
    return k;
}

/* `dual_adagrad_apply` of the L entries k .. k + L - 1 of row e: s += g, G += g^2 with
   g = sums[k], then sums[k] = 0; and where S >= 0 (the averaged sums' field, where the
   step is averaged) S += the new weight under the l1 threshold `threshold` and no l2
   weight; where `fresh` says if `overlap` (the others' fields stored as they are). */
LANES_INLINE void LANES_NAME(dual_apply_of)(double *e, long long stride, long long k, double *sums, long long S,
                                            double delta, double inv_eta0, double rho, double threshold,
                                            const int sparse, const int overlap, M fresh)
{
    V s, G, s1, G1, g = V_LOAD(sums + k);
    ENTRIES(r, e, k, stride);
    V_GATHER2(r, FASTPROX_DUAL_SUM, &s, &G);
    s1 = V_ADD(s, g);
    G1 = V_ADD(G, V_MUL(g, g));
    V_SCATTER2(r, FASTPROX_DUAL_SUM, overlap ? V_BLEND(fresh, s1, s) : s1, overlap ? V_BLEND(fresh, G1, G) : G1);
    V_STORE(sums + k, V_ZERO);
    if (S >= 0) {
        V sum = V_GATHER(r, S);
        V added = V_ADD(sum, LANES_NAME(dual_weight_or_zero)(s1, G1, delta, inv_eta0, rho, threshold, 0.0, sparse));
        V_SCATTER(r, S, overlap ? V_BLEND(fresh, added, sum) : added);
    }
}

/* `dual_apply_of` over the entries k = from .. K - 1 of row e, L at a time. Returns
   where the lanes stopped. */
LANES_INLINE long long LANES_NAME(dual_apply_in)(double *e, long long stride, long long from, long long K,
                                                 double *sums, long long S, double delta, double inv_eta0,
                                                 double rho, double threshold, const int sparse)
{
    long long k;
    for (k = from; k + LANES <= K; k += LANES)
        LANES_NAME(dual_apply_of)(e, stride, k, sums, S, delta, inv_eta0, rho, threshold, sparse, 0, M_NONE);
    return k;
}

/* `dual_skipped_terms` of the entries k = from .. n - 1 of row e into terms[k]: the
   skipped averaged iterates' sum over cnt steps lo .. hi (span = (lo + hi) cnt / 2, the
   l1 thresholds at_lo, at_hi at lo and hi): 0 where the weight at lo is 0, the
   arithmetic series copysign(cnt (|s| - beta rho) - alpha span, -s) / beta where the
   weight at hi is not, NaN where it reaches 0 between. *crossing gets whether one
   does; returns where the lanes stopped. (A function of e alone: a group that overlaps
   the one before writes the same terms again.) Where rho = 0 and at_lo > 0 a group none
   of whose |s| - at_lo is positive has every term 0 (at_lo + beta rho is at_lo, or NaN),
   without the square root and division. */
LANES_INLINE long long LANES_NAME(dual_skipped_in)(const double *e, long long stride, long long from, long long n,
                                                   double delta, double inv_eta0, double rho, double alpha,
                                                   double at_lo, double at_hi, double cnt, double span,
                                                   double *terms, int *crossing)
{
    long long k;
    for (k = from; k + LANES <= n; k += LANES) {
        V s, G;
        ENTRIES(r, e, k, stride);
        V_GATHER2(r, FASTPROX_DUAL_SUM, &s, &G);
        if (rho == 0.0 && at_lo > 0.0 && !M_ANY(V_GT(V_SUB(V_ABS(V_NEG(s)), V_SET1(at_lo)), V_ZERO))) {
            V_STORE(terms + k, V_ZERO);
            continue;
        }
        V beta = V_MUL(V_ADD(V_SET1(delta), V_SQRT(G)), V_SET1(inv_eta0));
        V off = V_MUL(beta, V_SET1(rho));
        V a = V_ABS(V_NEG(s));
        M first = M_AND(V_GT(beta, V_ZERO), V_GT(V_SUB(a, V_ADD(V_SET1(at_lo), off)), V_ZERO));
        M last = V_GT(V_SUB(a, V_ADD(V_SET1(at_hi), off)), V_ZERO);
        V series = V_DIV(V_COPYSIGN(V_SUB(V_MUL(V_SET1(cnt), V_SUB(V_ABS(s), off)), V_MUL(V_SET1(alpha), V_SET1(span))),
                                     V_NEG(s)),
                         beta);
        V_STORE(terms + k, V_BLEND(first, V_BLEND(last, series, V_SET1(NAN)), V_ZERO));
        *crossing |= M_ANY(M_ANDNOT(first, last)) != 0;
    }
    return k;
}

/* The skipped terms of entries k .. k + L - 1 into their averaged sums: e[k stride + S]
   += terms[k] where `fresh` says if `overlap` (the others as they are). */
LANES_INLINE void LANES_NAME(add_terms_of)(double *e, long long stride, long long S, const double *terms, long long k,
                                           const int overlap, M fresh)
{
    V sum, added;
    ENTRIES(r, e, k, stride);
    sum = V_GATHER(r, S);
    added = V_ADD(sum, V_LOAD(terms + k));
    V_SCATTER(r, S, overlap ? V_BLEND(fresh, added, sum) : added);
}

/* `add_terms_of` over the entries k = from .. n - 1, L at a time. Returns where the
   lanes stopped. */
LANES_INLINE long long LANES_NAME(add_terms_in)(double *e, long long stride, long long S, const double *terms,
                                                long long from, long long n)
{
    long long k;
    for (k = from; k + LANES <= n; k += LANES)
        LANES_NAME(add_terms_of)(e, stride, S, terms, k, 0, M_NONE);
    return k;
}

/* `finish_step`'s scaling of a feature's gradient sums k .. k + L - 1 by h: sums[k] =
   h sums[k] where `fresh` says if `overlap` (the others as they are); *steep gets
   whether one is not below `limit` (or not finite: `too_steep`). */
LANES_INLINE void LANES_NAME(scale_sums_of)(double *sums, long long k, double h, double limit, int *steep,
                                            const int overlap, M fresh)
{
    V before = V_LOAD(sums + k), g = V_MUL(V_SET1(h), before);
    if (overlap)
        g = V_BLEND(fresh, g, before);
    V_STORE(sums + k, g);
    *steep |= M_ANY(V_NOT_LT(V_ABS(g), V_SET1(limit))) != 0;
}

/* `scale_sums_of` over the sums k = from .. K - 1, L at a time. Returns where the
   lanes stopped. */
LANES_INLINE long long LANES_NAME(scale_sums_in)(double *sums, long long from, long long K, double h,
                                                 double limit, int *steep)
{
    long long k;
    for (k = from; k + LANES <= K; k += LANES)
        LANES_NAME(scale_sums_of)(sums, k, h, limit, steep, 0, M_NONE);
    return k;
}
/* The structured step's gradient sums of a feature's K outputs k .. k + L - 1: sums[k]
   += q[k] x (`collect_items`) where `fresh` says if `overlap` (the others as they are). */
LANES_INLINE void LANES_NAME(add_products_of)(double *sums, const double *q, double x, long long k,
                                              const int overlap, M fresh)
{
    V before = V_LOAD(sums + k), after = V_ADD(before, V_MUL(V_LOAD(q + k), V_SET1(x)));
    V_STORE(sums + k, overlap ? V_BLEND(fresh, after, before) : after);
}

/* `add_products_of` over k = from .. K - 1, L at a time. Returns where the lanes
   stopped. */
LANES_INLINE long long LANES_NAME(add_products_in)(double *sums, const double *q, double x, long long from,
                                                   long long K)
{
    long long k;
    for (k = from; k + LANES <= K; k += LANES)
        LANES_NAME(add_products_of)(sums, q, x, k, 0, M_NONE);
    return k;
}
#undef ENTRIES

/* The table's entries: the groups of L, then the last K mod L entries in the group
   that ends at entry K - 1 or, where K < L, in the portable code's loop (the portable set
   has no rest), then LANES_LEAVE. */
static LANES_TARGET void LANES_NAME(dual_margins)(const double *e, long long stride, long long K, double x,
                                                  double *scores, double delta, double inv_eta0, double rho,
                                                  double l1, double l2)
{
    const int sparse = fastprox_dual_sparse(delta, inv_eta0, rho, l1, l2);
    long long k = LANES_NAME(dual_margins_in)(e, stride, 0, K, x, scores, delta, inv_eta0, rho, l1, l2, sparse);
    if (k < K && K >= LANES)
        LANES_NAME(dual_margins_of)(e, stride, K - LANES, x, scores, delta, inv_eta0, rho, l1, l2, sparse, 1,
                                    LANES_NAME(fresh)(K - k));
    else if (k < K)
        fastprox_portable_dual_margins_in(e, stride, k, K, x, scores, delta, inv_eta0, rho, l1, l2, sparse);
    LANES_LEAVE();
}

static LANES_TARGET void LANES_NAME(dual_apply)(double *e, long long stride, long long K, double *sums, long long S,
                                                double delta, double inv_eta0, double rho, double threshold)
{
    const int sparse = fastprox_dual_sparse(delta, inv_eta0, rho, threshold, 0.0);
    long long k = LANES_NAME(dual_apply_in)(e, stride, 0, K, sums, S, delta, inv_eta0, rho, threshold, sparse);
    if (k < K && K >= LANES)
        LANES_NAME(dual_apply_of)(e, stride, K - LANES, sums, S, delta, inv_eta0, rho, threshold, sparse, 1,
                                  LANES_NAME(fresh)(K - k));
    else if (k < K)
        fastprox_portable_dual_apply_in(e, stride, k, K, sums, S, delta, inv_eta0, rho, threshold, sparse);
    LANES_LEAVE();
}

/* `dual_skipped_in`'s terms of entries 0 .. n - 1, added to their averaged sums (field S)
   unless an entry's weight reaches 0 between lo and hi: then nothing is added, and the
   caller takes those entries' sums itself (NaN in terms) and adds the terms. Returns
   whether one does. */
static LANES_TARGET int LANES_NAME(dual_skipped)(double *e, long long stride, long long n, double delta,
                                                 double inv_eta0, double rho, double alpha, double at_lo,
                                                 double at_hi, double cnt, double span, long long S, double *terms)
{
    int crossing = 0;
    long long k = LANES_NAME(dual_skipped_in)(e, stride, 0, n, delta, inv_eta0, rho, alpha, at_lo, at_hi, cnt, span,
                                              terms, &crossing);
    if (k < n && n >= LANES)
        LANES_NAME(dual_skipped_in)(e, stride, n - LANES, n, delta, inv_eta0, rho, alpha, at_lo, at_hi, cnt, span,
                                    terms, &crossing);
    else if (k < n)
        fastprox_portable_dual_skipped_in(e, stride, k, n, delta, inv_eta0, rho, alpha, at_lo, at_hi, cnt, span,
                                          terms, &crossing);
    if (!crossing) {
        k = LANES_NAME(add_terms_in)(e, stride, S, terms, 0, n);
        if (k < n && n >= LANES)
            LANES_NAME(add_terms_of)(e, stride, S, terms, n - LANES, 1, LANES_NAME(fresh)(n - k));
        else if (k < n)
            fastprox_portable_add_terms_in(e, stride, S, terms, k, n);
    }
    LANES_LEAVE();
    return crossing;
}

static LANES_TARGET int LANES_NAME(scale_sums)(double *sums, long long K, double h, double limit)
{
    int steep = 0;
    long long k = LANES_NAME(scale_sums_in)(sums, 0, K, h, limit, &steep);
    if (k < K && K >= LANES)
        LANES_NAME(scale_sums_of)(sums, K - LANES, h, limit, &steep, 1, LANES_NAME(fresh)(K - k));
    else if (k < K)
        fastprox_portable_scale_sums_in(sums, k, K, h, limit, &steep);
    LANES_LEAVE();
    return steep;
}

static LANES_TARGET void LANES_NAME(add_products)(double *sums, const double *q, double x, long long K)
{
    long long k = LANES_NAME(add_products_in)(sums, q, x, 0, K);
    if (k < K && K >= LANES)
        LANES_NAME(add_products_of)(sums, q, x, K - LANES, 1, LANES_NAME(fresh)(K - k));
    else if (k < K)
        fastprox_portable_add_products_in(sums, q, x, k, K);
    LANES_LEAVE();
}
