/* The passes of the single-output normalized and AdaGrad rows over L entries at a time,
   written once over `_kernel/lanes/isa.h`'s operations and instantiated by `_kernel/lanes/lanes.h` for each
   instruction set (no include guard: one inclusion per set). A pass reads a row as
   `fastprox_lane_row` holds it: groups of L entries, then the last k < L entries with
   0 in their other lanes' values and the dummy row as their state rows (whose results
   nothing reads). The entries of one row are distinct features (canonical rows), so the
   lanes of a group never share a state row but the dummy. Each pass performs, lane by
   lane, the general step's operations in its order (`_normalized`, `_adagrad`); the
   normalized rows' sums (margin, N_t, step norm) add their terms in four partial sums
   (Q_ADD, `fastprox_sum4`), AdaGrad's margin one at a time in the row's order.
   The first pass keeps each entry's scale and weight in the row's memos, where the
   later ones read them (neither changes between the passes). Neighbouring fields go
   in and out of a row together (V_GATHER2, V_SCATTER2: (m, w), (last, w), (G, eta),
   (G, factor)), the step storing (m, w) as the next row's first pass loads them: a
   load that spans two earlier stores of a row still in flight cannot take its data
   from them (store forwarding), and waits. */

/* acc + v's first k lanes (k <= L), one at a time in lane order. */
LANES_INLINE double LANES_NAME(sum)(double acc, V v, long long k)
{
    double t[LANES];
    int j;
    V_STORE(t, v);
    for (j = 0; j < k; j++)
        acc += t[j];
    return acc;
}

/* The largest of v's lanes, by V_MAX's rule. */
LANES_INLINE double LANES_NAME(max)(V v)
{
    double t[LANES], m;
    int j;
    V_STORE(t, v);
    m = t[0];
    for (j = 1; j < LANES; j++)
        m = t[j] > m ? t[j] : m;
    return m;
}

/* The normalized schedule's rescale of a group's features of scales *m, values x and
   weights w: where |x| > m, w *= m / |x| if m > 0 and m = |x| (`_normalized.rescale`);
   *moved says whether a weight changed. Returns the weights; *share gets the rows'
   shares of N_t, (x / m)^2 with 1 where |x| = m and 0 where x = 0
   (`_normalized.row_norm`): the division only where a lane needs it (never on a binary
   feature). Nothing stored: the caller stores the scales whether they grew or not (a
   feature's first value, m = 0, comes at random in a text set's rows, and a branch on
   it was mispredicted on one group in two of the Zipf sets' rows, callgrind). */
LANES_INLINE V LANES_NAME(rescale)(V x, V w, V *m, V *share, int *moved)
{
    const V zero = V_ZERO, one = V_SET1(1.0);
    V a = V_ABS(x), square = one, v;
    M shrink = M_AND(V_GT(a, *m), V_GT(*m, zero)), nonzero = V_NEQ(x, zero);
    *moved = M_ANY(shrink) != 0;
    if (*moved)                             /* a larger value: rare once a feature is seen */
        w = V_BLEND(shrink, V_MUL(w, V_DIV(*m, a)), w);
    *m = V_MAX(a, *m);                      /* a > m ? a : m */
    if (M_ANY(M_AND(nonzero, V_NEQ(a, *m)))) {
        v = V_DIV(x, *m);
        square = V_MUL(v, v);
    }
    *share = V_KEEP(nonzero, V_BLEND(V_EQ(a, *m), one, square));
    return w;
}

/* The normalized rows' first pass, for the group of entries i .. i + k - 1 of values
   x: under l1 (`penalized`: rows (R stamp, m; w, G, factor)) each weight's catch-up
   w <- soft(w, alpha factor (R - stamp)) where R > stamp and alpha > 0, stamped R
   (`_normalized.normalized_catch_up`); then the rescale, scales and weights kept in the
   memos, and stored under l1; without a penalty the step stores (m, w) of every entry,
   so this pass stores nothing (a refused row's caller stores the memos:
   `_rows.keep_scales`); the margin's terms w x added to *acc's partial sums, N_t's
   shares to *norms' partial sums, and the largest |x| into *top. */
LANES_INLINE void LANES_NAME(normalized_margin_of)(const fastprox_lane_row *row, long long i, V x, long long k,
                                                   const int penalized, double R, double alpha, Q *acc,
                                                   Q *norms, V *top)
{
    const int fields = penalized ? FASTPROX_NORM_ROW_FIELDS : FASTPROX_NORM_PLAIN_ROW_FIELDS;
    double *const *r = row->rows + i;
    V w, m, share;
    int moved;
    V_GATHER2(r, fields - 1, &m, &w);       /* (m, w): a row's last field, its first entry's first */
    if (penalized) {
        V spent = V_SUB(V_SET1(R), V_GATHER(r, FASTPROX_NORM_STAMP));
        M on = M_AND(V_GT(spent, V_ZERO), V_GT(V_SET1(alpha), V_ZERO));
        V thr = V_MUL(V_MUL(V_SET1(alpha), V_GATHER(r, fields + FASTPROX_NORM_FACTOR)), spent);
        w = V_BLEND(on, V_SOFT(w, thr), w);
    }
    w = LANES_NAME(rescale)(x, w, &m, &share, &moved);
    if (penalized) {
        V_SCATTER(r, FASTPROX_NORM_STAMP, V_SET1(R));
        V_SCATTER2(r, fields - 1, m, w);
    }
    V_STORE(row->scale + i, m);
    V_STORE(row->weight + i, w);
    Q_ADD(acc, i, V_MUL(w, x), k);
    Q_ADD(norms, i, share, k);
    *top = V_MAX(V_ABS(x), *top);
}

LANES_INLINE double LANES_NAME(normalized_margin_in)(fastprox_lane_row row, const int penalized, double R,
                                                     double alpha, double acc, double *norms, double *x_max)
{
    V top = V_SET1(*x_max);
    Q margin = Q_START(acc), sum = Q_START(*norms);
    long long i, n = row.n;
    for (i = 0; i + LANES <= n; i += LANES)
        LANES_NAME(normalized_margin_of)(&row, i, V_LOAD(row.x + i), LANES, penalized, R, alpha, &margin, &sum,
                                         &top);
    if (i < n)
        LANES_NAME(normalized_margin_of)(&row, i, V_LOAD_TAIL(row.x + i, n - i), n - i, penalized, R, alpha,
                                         &margin, &sum, &top);
    *norms = Q_TOTAL(sum);
    *x_max = LANES_NAME(max)(top);
    return Q_TOTAL(margin);
}

/* A group's G += g^2, g = q x, and its step factors eta0 / (m sqrt(G)), 0 where G is
   not positive (`_normalized.normalized_accumulate`, `normalized_factor`): G stored, and
   under l1 the factors (the catch-up reads them). Returns the factors. */
LANES_INLINE V LANES_NAME(normalized_factors_of)(double *const *r, V x, V m, const int penalized, double q,
                                                 double eta0)
{
    const int fields = penalized ? FASTPROX_NORM_ROW_FIELDS : FASTPROX_NORM_PLAIN_ROW_FIELDS;
    V g = V_MUL(V_SET1(q), x);
    V G = V_ADD(V_GATHER(r, fields + FASTPROX_NORM_G), V_MUL(g, g));
    V factor = V_KEEP(V_GT(G, V_ZERO), V_DIV(V_SET1(eta0), V_MUL(m, V_SQRT(G))));
    if (penalized)
        V_SCATTER2(r, fields + FASTPROX_NORM_G, G, factor);
    else
        V_SCATTER(r, fields + FASTPROX_NORM_G, G);
    return factor;
}

/* A group's FOBOS step with step factors `factor`, weights w and scales m: eta = factor
   r, and where eta > 0 w <- w - eta (sigma x), soft-thresholded by alpha eta under l1
   (stamped R there) (`_normalized.normalized_fobos_step`; without a penalty soft(v, 0)
   is v); (m, w) stored together. */
LANES_INLINE void LANES_NAME(normalized_step_of)(double *const *r, V x, V factor, V w, V m, const int penalized,
                                                 double sigma, double rate, double alpha, double R)
{
    const int fields = penalized ? FASTPROX_NORM_ROW_FIELDS : FASTPROX_NORM_PLAIN_ROW_FIELDS;
    V eta = V_MUL(factor, V_SET1(rate));
    V step = V_SUB(w, V_MUL(eta, V_MUL(V_SET1(sigma), x)));
    if (penalized)
        step = V_SOFT(step, V_MUL(V_SET1(alpha), eta));
    V_SCATTER2(r, fields - 1, m, V_BLEND(V_GT(eta, V_ZERO), step, w));
    if (penalized)
        V_SCATTER(r, FASTPROX_NORM_STAMP, V_SET1(R));
}

/* The invariant step's second pass, for a group: its G and factors
   (`normalized_factors_of`), the factors kept in the memo; adds the terms factor r x^2
   of the row's step norm to *step_norm's partial sums. */
LANES_INLINE void LANES_NAME(normalized_factors_group)(const fastprox_lane_row *row, long long i, V x, long long k,
                                                       const int penalized, double q, double rate, double eta0,
                                                       Q *step_norm)
{
    V factor = LANES_NAME(normalized_factors_of)(row->rows + i, x, V_LOAD(row->scale + i), penalized, q, eta0);
    V_STORE(row->factor + i, factor);
    Q_ADD(step_norm, i, V_MUL(V_MUL(V_MUL(factor, V_SET1(rate)), x), x), k);
}

LANES_INLINE double LANES_NAME(normalized_factors_in)(fastprox_lane_row row, const int penalized, double q,
                                                      double rate, double eta0, double step_norm)
{
    Q norm = Q_START(step_norm);
    long long i, n = row.n;
    for (i = 0; i + LANES <= n; i += LANES)
        LANES_NAME(normalized_factors_group)(&row, i, V_LOAD(row.x + i), LANES, penalized, q, rate, eta0, &norm);
    if (i < n)
        LANES_NAME(normalized_factors_group)(&row, i, V_LOAD_TAIL(row.x + i, n - i), n - i, penalized, q, rate,
                                             eta0, &norm);
    return Q_TOTAL(norm);
}

/* The invariant step's last pass: the step of sigma with the factors the second kept. */
LANES_INLINE void LANES_NAME(normalized_step_in)(fastprox_lane_row row, const int penalized, double sigma,
                                                 double rate, double alpha, double R)
{
    long long i, n = row.n;
    for (i = 0; i + LANES <= n; i += LANES)
        LANES_NAME(normalized_step_of)(row.rows + i, V_LOAD(row.x + i), V_LOAD(row.factor + i),
                                       V_LOAD(row.weight + i), V_LOAD(row.scale + i), penalized, sigma, rate,
                                       alpha, R);
    if (i < n)
        LANES_NAME(normalized_step_of)(row.rows + i, V_LOAD_TAIL(row.x + i, n - i), V_LOAD(row.factor + i),
                                       V_LOAD(row.weight + i), V_LOAD(row.scale + i), penalized, sigma, rate,
                                       alpha, R);
}

/* The gradient step's second pass, for a group: its factors, then its step of q. */
LANES_INLINE void LANES_NAME(normalized_update_of)(const fastprox_lane_row *row, long long i, V x,
                                                   const int penalized, double q, double rate, double eta0,
                                                   double alpha, double R)
{
    V m = V_LOAD(row->scale + i);
    V factor = LANES_NAME(normalized_factors_of)(row->rows + i, x, m, penalized, q, eta0);
    LANES_NAME(normalized_step_of)(row->rows + i, x, factor, V_LOAD(row->weight + i), m, penalized, q, rate, alpha,
                                   R);
}

LANES_INLINE void LANES_NAME(normalized_update_in)(fastprox_lane_row row, const int penalized, double q,
                                                   double rate, double eta0, double alpha, double R)
{
    long long i, n = row.n;
    for (i = 0; i + LANES <= n; i += LANES)
        LANES_NAME(normalized_update_of)(&row, i, V_LOAD(row.x + i), penalized, q, rate, eta0, alpha, R);
    if (i < n)
        LANES_NAME(normalized_update_of)(&row, i, V_LOAD_TAIL(row.x + i, n - i), penalized, q, rate, eta0, alpha,
                                         R);
}

/* FOBOS-AdaGrad's first pass under l1 (rows (last; w, G, eta): last, the row's last step), for a group: the
   catch-up w <- soft(w, (t - last) alpha eta), stamped t (no branch: a current row's
   threshold is 0, which keeps it), the weights kept in the memo; the margin's terms w x
   added to *acc and the largest |x| into *top. */
LANES_INLINE void LANES_NAME(adagrad_margin_of)(const fastprox_lane_row *row, long long i, V x, long long k,
                                                double t, double alpha, double *acc, V *top)
{
    double *const *r = row->rows + i;
    V last, w, thr;
    V_GATHER2(r, FASTPROX_ROW_LAST_STEP, &last, &w);
    thr = V_MUL(V_SUB(V_SET1(t), last),
                V_MUL(V_SET1(alpha), V_GATHER(r, FASTPROX_ADAGRAD_ROW_FIELDS + FASTPROX_ADAGRAD_ETA)));
    w = V_SOFT(w, thr);
    V_SCATTER2(r, FASTPROX_ROW_LAST_STEP, V_SET1(t), w);
    V_STORE(row->weight + i, w);
    *acc = LANES_NAME(sum)(*acc, V_MUL(w, x), k);
    *top = V_MAX(V_ABS(x), *top);
}

LANES_INLINE double LANES_NAME(adagrad_margin_in)(fastprox_lane_row row, double t, double alpha, double acc,
                                                  double *x_max)
{
    V top = V_SET1(*x_max);
    long long i, n = row.n;
    for (i = 0; i + LANES <= n; i += LANES)
        LANES_NAME(adagrad_margin_of)(&row, i, V_LOAD(row.x + i), LANES, t, alpha, &acc, &top);
    if (i < n)
        LANES_NAME(adagrad_margin_of)(&row, i, V_LOAD_TAIL(row.x + i, n - i), n - i, t, alpha, &acc, &top);
    *x_max = LANES_NAME(max)(top);
    return acc;
}

/* FOBOS-AdaGrad's step for a group, g = q x, its weights w in the memo: G += g^2, eta =
   eta0 / (delta + sqrt(G)) (0 where delta + sqrt(G) is not positive), both stored, and
   where eta > 0 w <- prox(w - eta g) with threshold alpha eta: soft(v, a rho1) / (1 + a
   (1 - rho1)), soft(v, a) for rho1 = 1 (`l1`) (`_adagrad.adagrad_step`,
   `_fobos.fobos_prox`); stamped t + 1. */
LANES_INLINE void LANES_NAME(adagrad_step_of)(const fastprox_lane_row *row, long long i, V x, double q, double t,
                                              double alpha, const int l1, double rho1, double delta, double eta0)
{
    const int at_G = FASTPROX_ADAGRAD_ROW_FIELDS + FASTPROX_ADAGRAD_G;
    double *const *r = row->rows + i;
    V g = V_MUL(V_SET1(q), x);
    V G = V_ADD(V_GATHER(r, at_G), V_MUL(g, g));
    V H = V_ADD(V_SET1(delta), V_SQRT(G));
    V eta = V_KEEP(V_GT(H, V_ZERO), V_DIV(V_SET1(eta0), H));
    V w = V_LOAD(row->weight + i), a = V_MUL(V_SET1(alpha), eta), step = V_SUB(w, V_MUL(eta, g));
    if (l1)
        step = V_SOFT(step, a);
    else
        step = V_DIV(V_SOFT(step, V_MUL(a, V_SET1(rho1))), V_ADD(V_SET1(1.0), V_MUL(a, V_SET1(1.0 - rho1))));
    V_SCATTER2(r, at_G, G, eta);
    V_SCATTER2(r, FASTPROX_ROW_LAST_STEP, V_SET1(t + 1.0), V_BLEND(V_GT(eta, V_ZERO), step, w));
}

LANES_INLINE void LANES_NAME(adagrad_step_in)(fastprox_lane_row row, double q, double t, double alpha,
                                              const int l1, double rho1, double delta, double eta0)
{
    long long i, n = row.n;
    for (i = 0; i + LANES <= n; i += LANES)
        LANES_NAME(adagrad_step_of)(&row, i, V_LOAD(row.x + i), q, t, alpha, l1, rho1, delta, eta0);
    if (i < n)
        LANES_NAME(adagrad_step_of)(&row, i, V_LOAD_TAIL(row.x + i, n - i), q, t, alpha, l1, rho1, delta, eta0);
}

/* A row's state rows (`_rows.lane_entries`): rows[i] = state + idx[i] width for its n
   non-zeros, then the dummy row in the LANES - 1 places the last group's other lanes read.
   32-bit indices (idx32; else idx64) four at a time in the AVX sets: sign-extended, their
   byte offsets idx width 8 by one 32 x 32 -> 64-bit product (indices are in [0, 2^31) and a
   state row's bytes far below 2^32), added to the state's address; the same pointers as
   the one-at-a-time loop, which does the rest. */
static LANES_TARGET void LANES_NAME(state_rows)(double **rows, double *state, const int *idx32,
                                                const long long *idx64, long long n, long long width, double *dummy)
{
    long long i = 0;
    if (idx32 != NULL) {
#if FASTPROX_LANES_ISA == FASTPROX_LANES_AVX2 || FASTPROX_LANES_ISA == FASTPROX_LANES_AVX512
        const __m256i base = _mm256_set1_epi64x((long long)state), bytes = _mm256_set1_epi64x(width * 8);
        for (; i + 4 <= n; i += 4) {
            __m256i j = _mm256_cvtepi32_epi64(_mm_loadu_si128((const __m128i *)(idx32 + i)));
            _mm256_storeu_si256((__m256i *)(rows + i), _mm256_add_epi64(base, _mm256_mul_epu32(j, bytes)));
        }
#endif
        for (; i < n; i++)
            rows[i] = state + (long long)idx32[i] * width;
    } else {
        for (; i < n; i++)
            rows[i] = state + idx64[i] * width;
    }
    for (i = n; i < n + LANES - 1; i++)
        rows[i] = dummy;
    LANES_LEAVE();
}

/* The table's entries: each pass with its layout or penalty a constant, then LANES_LEAVE. */
static LANES_TARGET double LANES_NAME(normalized_margin)(const fastprox_lane_row *row, int penalized, double R,
                                                         double alpha, double acc, double *norms, double *x_max)
{
    double margin = penalized ? LANES_NAME(normalized_margin_in)(*row, 1, R, alpha, acc, norms, x_max)
                              : LANES_NAME(normalized_margin_in)(*row, 0, R, alpha, acc, norms, x_max);
    LANES_LEAVE();
    return margin;
}

static LANES_TARGET double LANES_NAME(normalized_factors)(const fastprox_lane_row *row, int penalized, double q,
                                                          double rate, double eta0, double step_norm)
{
    double norm = penalized ? LANES_NAME(normalized_factors_in)(*row, 1, q, rate, eta0, step_norm)
                            : LANES_NAME(normalized_factors_in)(*row, 0, q, rate, eta0, step_norm);
    LANES_LEAVE();
    return norm;
}

static LANES_TARGET void LANES_NAME(normalized_step)(const fastprox_lane_row *row, int penalized, double sigma,
                                                     double rate, double alpha, double R)
{
    if (penalized)
        LANES_NAME(normalized_step_in)(*row, 1, sigma, rate, alpha, R);
    else
        LANES_NAME(normalized_step_in)(*row, 0, sigma, rate, alpha, R);
    LANES_LEAVE();
}

static LANES_TARGET void LANES_NAME(normalized_update)(const fastprox_lane_row *row, int penalized, double q,
                                                       double rate, double eta0, double alpha, double R)
{
    if (penalized)
        LANES_NAME(normalized_update_in)(*row, 1, q, rate, eta0, alpha, R);
    else
        LANES_NAME(normalized_update_in)(*row, 0, q, rate, eta0, alpha, R);
    LANES_LEAVE();
}

static LANES_TARGET double LANES_NAME(adagrad_margin)(const fastprox_lane_row *row, double t, double alpha,
                                                      double acc, double *x_max)
{
    double margin = LANES_NAME(adagrad_margin_in)(*row, t, alpha, acc, x_max);
    LANES_LEAVE();
    return margin;
}

static LANES_TARGET void LANES_NAME(adagrad_step)(const fastprox_lane_row *row, double q, double t, double alpha,
                                                  double rho1, double delta, double eta0)
{
    if (rho1 == 1.0)
        LANES_NAME(adagrad_step_in)(*row, q, t, alpha, 1, rho1, delta, eta0);
    else
        LANES_NAME(adagrad_step_in)(*row, q, t, alpha, 0, rho1, delta, eta0);
    LANES_LEAVE();
}

static const fastprox_lanes LANES_NAME(lanes) = {
    LANES_ISA_NAME, LANES, LANES_NAME(state_rows), LANES_NAME(normalized_margin), LANES_NAME(normalized_factors),
    LANES_NAME(normalized_step), LANES_NAME(normalized_update), LANES_NAME(adagrad_margin),
    LANES_NAME(adagrad_step),
    LANES_NAME(dual_margins), LANES_NAME(dual_apply), LANES_NAME(dual_skipped), LANES_NAME(scale_sums),
    LANES_NAME(add_products), LANES_NAME(chain_combine), LANES_NAME(chain_best),
};
