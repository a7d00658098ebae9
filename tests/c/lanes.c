/* Runs every pass of _kernel/lanes/lanes.h with each instruction set this CPU runs on the same
   random rows (values with zeros, infinities, NaN, tiny and huge numbers; rows of 0 to
   21 distinct features, so every padding of every width; their state rows taken by each
   set's `state_rows`) and compares the bits of the states and results with the portable
   code's; then the structured rows' passes (`_kernel/lanes/structured_rows.h`) on random
   features of K entries (K = 1, 3, 4, 5, 8, 11, 22, 23: every tail of every width) of
   stride 2 (s, G) and 3 (s, G, S), with entries s = 0, -0, |s| at the l1 threshold, G = 0,
   huge values (no NaN); and the CRF's products (`chain_combine`, _kernel/lanes/chain.h) for K = 1, 2, 3, 4,
   5, 8, 22, 23 labels, every count of rows up to K + 3, one output row or K, strided
   weights or not, summed from out's values or from the first product, with the portable
   code's bits, which the scalar loop's must be; and Viterbi's step (`chain_best`) likewise
   on scores with ties, infinities and NaN. Prints one line per set: its name, its lanes
   and "ok" or the first difference; exits 1 if a set differs. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "_kernel/lanes/lanes.h"
#include "bits.h"

#define D 48                    /* features */
#define WIDTH 5                 /* the widest row (normalized under l1) */
#define LONGEST 21
#define TRIALS 20000

static double draw(void)
{
    static const double special[] = {0.0, -0.0, 1.0, -1.0, 1e-300, 5e-324, 3.5, -2.25, INFINITY, -INFINITY,
                                      NAN, 1e300, 0.1, 2.0};
    if (rand() % 4 == 0)
        return special[rand() % 14];
    return ((double)rand() / RAND_MAX - 0.5) * pow(10, rand() % 9 - 4);
}

/* One trial's inputs. */
typedef struct {
    double state[D * WIDTH], x[LONGEST], scalars[12];
    int features[LONGEST], n, width;
} trial;

/* What a set computes from a trial: the state after every pass, the results. */
typedef struct {
    double state[D * WIDTH], out[16];
} result;

static void run(const fastprox_lanes *L, const trial *tr, int pass, result *res)
{
    double *rows[LONGEST + FASTPROX_LANES_MAX], dummy[WIDTH] = {0}, *x = malloc((tr->n + 1) * sizeof(double));
    double factor[LONGEST + FASTPROX_LANES_MAX], scale[LONGEST + FASTPROX_LANES_MAX];
    double weight[LONGEST + FASTPROX_LANES_MAX];
    fastprox_lane_row row = {rows, x, tr->n, factor, scale, weight};
    const double *s = tr->scalars;
    double norms = s[8], x_max = fabs(s[9]);
    int i, n = tr->n, penalized = pass % 2;
    memcpy(x, tr->x, n * sizeof(double));   /* (a pass reads nothing beyond them: -fsanitize=address) */
    memcpy(res->state, tr->state, sizeof res->state);
    memset(res->out, 0, sizeof res->out);
    long long wide[LONGEST];
    for (i = 0; i < n; i++)
        wide[i] = tr->features[i];
    for (i = n; i < n + FASTPROX_LANES_MAX; i++)
        rows[i] = dummy;
    /* the state rows by the set's own rule (32-bit indices on the even passes, 64-bit on
       the odd), then the count of those that are not the row's feature's: 0 in every set */
    L->state_rows(rows, res->state, pass % 2 ? NULL : tr->features, pass % 2 ? wide : NULL, n, tr->width, dummy);
    for (i = 0; i < n + FASTPROX_LANES_MAX; i++)
        res->out[15] += rows[i] != (i < n ? res->state + tr->features[i] * tr->width : dummy);
    switch (pass) {
    case 0: case 1:             /* the invariant step: margin, factors, step */
        res->out[0] = L->normalized_margin(&row, penalized, fabs(s[0]), penalized ? fabs(s[1]) : 0.0, s[2], &norms,
                                           &x_max);
        res->out[1] = norms;
        res->out[2] = x_max;
        res->out[3] = L->normalized_factors(&row, penalized, s[3], fabs(s[4]), fabs(s[5]), fabs(s[6]));
        for (i = 0; i < n; i++)
            res->out[4] += factor[i] * (i + 1);
        L->normalized_step(&row, penalized, s[7], fabs(s[4]), penalized ? fabs(s[1]) : 0.0, fabs(s[0]) + fabs(s[4]));
        break;
    case 2: case 3:             /* the gradient step: margin, then factors and step */
        res->out[0] = L->normalized_margin(&row, penalized, fabs(s[0]), penalized ? fabs(s[1]) : 0.0, s[2], &norms,
                                           &x_max);
        L->normalized_update(&row, penalized, s[3], fabs(s[4]), fabs(s[5]), penalized ? fabs(s[1]) : 0.0,
                             fabs(s[0]) + fabs(s[4]));
        break;
    default:                    /* adagrad under l1, l2 and elastic net (rho1 = 1, 0, 0.3) */
        res->out[0] = L->adagrad_margin(&row, fabs(s[0]), pass == 4 ? fabs(s[1]) : 0.0, s[2], &x_max);
        res->out[1] = x_max;
        L->adagrad_step(&row, s[3], fabs(s[0]), fabs(s[1]), pass == 4 ? 1.0 : pass == 5 ? 0.0 : 0.3,
                        s[10] > 0.0 ? fabs(s[6]) : 0.0, fabs(s[5]));
        break;
    }
    free(x);
}

static int width_of(int pass)
{
    return pass < 4 ? (pass % 2 ? FASTPROX_NORM_ROW_FIELDS + FASTPROX_NORM_ENTRY
                                : FASTPROX_NORM_PLAIN_ROW_FIELDS + FASTPROX_NORM_PLAIN_ENTRY)
                    : FASTPROX_ADAGRAD_ROW_FIELDS + FASTPROX_ADAGRAD_ENTRY;
}

static void make(trial *tr, int pass)
{
    int i, j, used[D] = {0};
    tr->width = width_of(pass);
    for (i = 0; i < D * WIDTH; i++)
        tr->state[i] = draw();
    for (i = 0; i < D; i++) {                   /* scales and sums of squares are not negative */
        double *row = tr->state + i * tr->width;
        if (pass < 4) {
            int fields = pass % 2 ? FASTPROX_NORM_ROW_FIELDS : FASTPROX_NORM_PLAIN_ROW_FIELDS;
            row[fields - 1] = rand() % 3 ? fabs(row[fields - 1]) : rand() % 2 ? 1.0 : 0.0;
            row[fields + FASTPROX_NORM_G] = fabs(row[fields + FASTPROX_NORM_G]);
        } else {
            row[FASTPROX_ADAGRAD_ROW_FIELDS + FASTPROX_ADAGRAD_G] =
                fabs(row[FASTPROX_ADAGRAD_ROW_FIELDS + FASTPROX_ADAGRAD_G]);
        }
    }
    tr->n = rand() % (LONGEST + 1);
    for (i = 0; i < tr->n; i++) {               /* distinct features, as canonical rows have */
        do
            j = rand() % D;
        while (used[j]);
        used[j] = 1;
        tr->features[i] = j;
        tr->x[i] = rand() % 3 ? (rand() % 2 ? 1.0 : -1.0) : draw();     /* binary features, and others */
    }
    for (i = 0; i < 12; i++)
        tr->scalars[i] = draw();
}

static int same(const result *a, const result *b, int width)
{
    int i;
    for (i = 0; i < D * width; i++)
        if (bits(a->state[i]) != bits(b->state[i]))
            return 0;
    for (i = 0; i < 16; i++)
        if (bits(a->out[i]) != bits(b->out[i]))
            return 0;
    return 1;
}

/* The structured rows' passes: one trial's feature row e (K entries of `stride` fields),
   gradient sums, scores and scalars. */
#define RK 23
typedef struct {
    double e[RK * 3], sums[RK], scores[RK], terms[RK], p[12];
    int K, stride, out[2];
} rows_trial;

static const int rows_K[] = {1, 3, 4, 5, 8, 11, 22, 23};

static double rows_draw(void)
{
    static const double special[] = {0.0, -0.0, 1.0, -1.0, 1e-300, 5e-324, 1e300, -1e300, 0.1, 2.0};
    if (rand() % 4 == 0)
        return special[rand() % 10];
    return ((double)rand() / RAND_MAX - 0.5) * pow(10, rand() % 9 - 4);
}

static void rows_make(rows_trial *tr, int t)
{
    int k;
    double *p = tr->p;
    tr->K = rows_K[t % 8];
    tr->stride = 2 + (t / 8) % 2;
    for (k = 0; k < 12; k++)
        p[k] = fabs(rows_draw());
    p[5] = rand() % 2 ? 0.0 : p[5];                 /* l2: none (the apply's) or some */
    p[1] = rand() % 8 ? 1.0 / (0.05 + p[1]) : p[1]; /* inv_eta0 */
    p[2] = rand() % 2 ? 0.0 : p[2];                 /* rho */
    for (k = 0; k < RK; k++) {
        double *f = tr->e + k * tr->stride, G = rand() % 5 ? fabs(rows_draw()) : 0.0;
        double beta = (p[0] + sqrt(G)) * p[1];
        f[0] = rows_draw();
        f[1] = G;
        if (rand() % 5 == 0)                        /* |s| at the threshold: the weight's m = 0 */
            f[0] = copysign(p[3] + beta * p[2], rows_draw());
        if (rand() % 8 == 0)                        /* at the skipped sums' threshold at lo */
            f[0] = copysign(p[6] + beta * p[2], rows_draw());
        if (tr->stride == 3)
            f[2] = rows_draw();
        tr->sums[k] = rand() % 6 ? rows_draw() : 0.0;
        tr->scores[k] = rows_draw();
    }
    p[7] = p[6] + fabs(rows_draw());                /* at_hi >= at_lo */
}

static void rows_run(const fastprox_lanes *L, const rows_trial *in, int t, rows_trial *tr)
{
    double *p = tr->p;
    *tr = *in;
    tr->out[0] = tr->out[1] = 0;
    switch (t % 5) {
    case 0:
        L->dual_margins(tr->e, tr->stride, tr->K, p[4] * (rand() % 2 ? 1 : -1), tr->scores, p[0], p[1], p[2], p[3],
                        p[5]);
        break;
    case 1:
        L->dual_apply(tr->e, tr->stride, tr->K, tr->sums, tr->stride == 3 ? 2 : -1, p[0], p[1], p[2], p[3]);
        break;
    case 2:
        tr->out[0] = L->dual_skipped(tr->e, tr->stride, tr->K, p[0], p[1], p[2], p[8], p[6], p[7], 1 + rand() % 50,
                                     p[9], tr->stride - 1, tr->terms);
        break;
    case 3:
        L->add_products(tr->sums, tr->scores, p[11] * (rand() % 2 ? 1 : -1), tr->K);
        break;
    default:
        tr->out[1] = L->scale_sums(tr->sums, tr->K, p[10] * (rand() % 2 ? 1 : -1), rand() % 2 ? 1.0 : 0x1p480);
        break;
    }
}

static int rows_same(const rows_trial *a, const rows_trial *b)
{
    int k;
    for (k = 0; k < RK * 3; k++)
        if (bits(a->e[k]) != bits(b->e[k]))
            return 0;
    for (k = 0; k < RK; k++)
        if (bits(a->sums[k]) != bits(b->sums[k]) || bits(a->scores[k]) != bits(b->scores[k]) ||
            bits(a->terms[k]) != bits(b->terms[k]))
            return 0;
    return a->out[0] == b->out[0] && a->out[1] == b->out[1];
}

/* The reference: `dual_adagrad_weight` and `dual_skipped_terms`' term of an entry (s, G),
   as the Cython code computes them. */
static double rows_weight(const double *f, double delta, double inv_eta0, double rho, double l1, double l2)
{
    double beta = (delta + sqrt(f[1])) * inv_eta0, den = beta + l2, m = fabs(-f[0]) - (l1 + beta * rho);
    double w = copysign(0.0 > m ? 0.0 : m, -f[0]) / den;
    return den > 0.0 ? w : 0.0;
}

static double rows_term(const double *f, const double *p, double cnt, int *crossing)
{
    double s = f[0], beta = (p[0] + sqrt(f[1])) * p[1], off = beta * p[2];
    int first = beta > 0.0 && fabs(-s) - (p[6] + off) > 0.0, last = fabs(-s) - (p[7] + off) > 0.0;
    double series = copysign(cnt * (fabs(s) - off) - p[8] * p[9], -s) / beta;
    *crossing |= first && !last;
    return first ? (last ? series : NAN) : 0.0;
}

/* The portable code's bits against the reference's (the margins, the apply, the skipped
   terms of a trial that `rows_run` took with this seed); 0 if they differ. */
static int rows_reference(const rows_trial *in, int t, int seed, const rows_trial *got)
{
    rows_trial ref = *in;
    const double *p = in->p;
    int k, crossing = 0;
    srand(seed);
    if (t % 5 == 0) {
        double x = p[4] * (rand() % 2 ? 1 : -1);
        for (k = 0; k < in->K; k++)
            ref.scores[k] += rows_weight(ref.e + k * in->stride, p[0], p[1], p[2], p[3], p[5]) * x;
    } else if (t % 5 == 1) {
        for (k = 0; k < in->K; k++) {
            double *f = ref.e + k * in->stride, g = ref.sums[k];
            f[0] += g;
            f[1] += g * g;
            ref.sums[k] = 0.0;
            if (in->stride == 3)
                f[2] += rows_weight(f, p[0], p[1], p[2], p[3], 0.0);
        }
    } else if (t % 5 == 2) {
        double cnt = 1 + rand() % 50;
        for (k = 0; k < in->K; k++)
            ref.terms[k] = rows_term(ref.e + k * in->stride, p, cnt, &crossing);
        for (k = 0; k < in->K && !crossing; k++)
            ref.e[k * in->stride + in->stride - 1] += ref.terms[k];
        ref.out[0] = crossing;
    } else {
        return 1;
    }
    return rows_same(&ref, got);
}

/* The structured rows' passes of set L against the portable code's, and the portable
   code's against the reference (`rows_reference`); 0 if they differ. */
static int rows_ok(const fastprox_lanes *L)
{
    static rows_trial in, expected, got;
    int t, seed;
    srand(2);
    for (t = 0; t < TRIALS; t++) {
        rows_make(&in, t / 5);
        seed = rand();
        srand(seed);
        rows_run(fastprox_lanes_at(0), &in, t, &expected);
        if (!rows_reference(&in, t, seed, &expected)) {
            printf("portable: structured rows trial %d (pass %d, K %d, stride %d) differs from the reference\n", t,
                   t % 5, in.K, in.stride);
            return 0;
        }
        srand(seed);
        rows_run(L, &in, t, &got);
        if (!rows_same(&expected, &got)) {
            printf("%s (%d lanes): structured rows trial %d (pass %d, K %d, stride %d) differs from the portable "
                   "code\n", L->name, L->width, t, t % 5, in.K, in.stride);
            return 0;
        }
    }
    return 1;
}

/* The scalar loop `chain_combine` stands for (forward_backward.pxd's products): j outer. */
static void chain_reference(const double *w, long long ws, const double *rows, long long count, long long K,
                            double *out, int start, long long outputs, long long wstep)
{
    long long o, j, k;
    for (o = 0; o < outputs; o++) {
        double *y = out + o * K;
        for (j = 0; j < count; j++)
            for (k = 0; k < K; k++)
                y[k] = start && j == 0 ? w[o * wstep] * rows[k] : y[k] + w[o * wstep + j * ws] * rows[j * K + k];
    }
}

#define CHAIN_GUARD 9           /* doubles after the outputs that no set may write */

/* The scalar loop `chain_best` stands for (viterbi.pxd's step): j outer, a strict >. */
static void best_reference(const double *prev, const double *A, long long K, double *best, int64_t *rows)
{
    long long j, k;
    for (k = 0; k < K; k++) {
        best[k] = prev[0] + A[k];
        rows[k] = 0;
    }
    for (j = 1; j < K; j++)
        for (k = 0; k < K; k++) {
            double c = prev[j] + A[j * K + k];
            if (c > best[k]) {
                best[k] = c;
                rows[k] = j;
            }
        }
}

/* A score: small integers (ties), and now and then a special value. */
static double score(void)
{
    return rand() % 8 ? (double)(rand() % 5 - 2) : draw();
}

/* `chain_best` of set L against the portable code's (the portable code's against the scalar
   loop's where L is it), K = 1 to 40: 0 if every bit of the bests and every row agrees. */
static int best_trials(const fastprox_lanes *L)
{
    const fastprox_lanes *P = fastprox_lanes_at(0);
    long long K, i;
    int t, bad = 0;
    for (K = 1; K <= 40 && !bad; K++)
        for (t = 0; t < 50 && !bad; t++) {
            /* exact sizes for the inputs (AddressSanitizer); the outputs, guards after them */
            double *prev = malloc(K * sizeof(double)), *A = malloc(K * K * sizeof(double));
            double *best = malloc(2 * (K + CHAIN_GUARD) * sizeof(double)), *got = best + K + CHAIN_GUARD;
            int64_t *rows = malloc(2 * (K + CHAIN_GUARD) * sizeof(int64_t)), *got_rows = rows + K + CHAIN_GUARD;
            for (i = 0; i < K; i++)
                prev[i] = score();
            for (i = 0; i < K * K; i++)
                A[i] = score();
            for (i = 0; i < K + CHAIN_GUARD; i++) {
                best[i] = got[i] = draw();
                rows[i] = got_rows[i] = rand();
            }
            (L == P ? best_reference : P->chain_best)(prev, A, K, best, rows);
            L->chain_best(prev, A, K, got, got_rows);
            for (i = 0; i < K + CHAIN_GUARD && !bad; i++)
                bad = bits(best[i]) != bits(got[i]) || rows[i] != got_rows[i];
            if (bad)
                printf("%s (%d lanes): chain_best differs from the %s at K %lld: entry %lld\n", L->name, L->width,
                       L == P ? "scalar loop" : "portable code", K, i - 1);
            free(prev);
            free(A);
            free(best);
            free(rows);
        }
    return bad;
}

/* `chain_combine` of set L on random inputs against the portable code's (and the portable
   code's against the scalar loop's, where L is the portable code): 0 if every bit agrees. */
static int chain_trials(const fastprox_lanes *L)
{
    static const long long sizes[] = {1, 2, 3, 4, 5, 8, 22, 23};
    const fastprox_lanes *P = fastprox_lanes_at(0);
    int s, t;
    for (s = 0; s < (int)(sizeof sizes / sizeof sizes[0]); s++) {
        long long K = sizes[s];
        for (t = 0; t < 400; t++) {
            long long count = 1 + rand() % (K + 3), outputs = rand() % 2 ? K : 1, strided = rand() % 2;
            long long ws = strided ? K : 1, wstep = strided ? 1 : count;
            long long nw = (outputs - 1) * wstep + (count - 1) * ws + 1, nout = outputs * K + CHAIN_GUARD, i;
            int start = rand() % 2, bad = 0;
            /* exact sizes (AddressSanitizer: a read past the rows or the weights fails) */
            double *w = malloc(nw * sizeof(double)), *rows = malloc(count * K * sizeof(double));
            double *want = malloc(nout * sizeof(double)), *got = malloc(nout * sizeof(double));
            for (i = 0; i < nw; i++)
                w[i] = rand() % 3 ? fabs(draw()) : draw();      /* mostly non-negative, as exps are */
            for (i = 0; i < count * K; i++)
                rows[i] = rand() % 3 ? fabs(draw()) : draw();
            for (i = 0; i < nout; i++)
                want[i] = got[i] = draw();
            if (L == P)
                chain_reference(w, ws, rows, count, K, want, start, outputs, wstep);
            else
                P->chain_combine(w, ws, rows, count, K, want, start, outputs, wstep);
            L->chain_combine(w, ws, rows, count, K, got, start, outputs, wstep);
            for (i = 0; i < nout && !bad; i++)
                bad = bits(want[i]) != bits(got[i]);
            if (bad)
                printf("%s (%d lanes): chain_combine differs from the %s at K %lld, %lld rows, %lld outputs, "
                       "strided %lld, start %d: entry %lld\n", L->name, L->width,
                       L == P ? "scalar loop" : "portable code", K, count, outputs, strided, start, i - 1);
            free(w);
            free(rows);
            free(want);
            free(got);
            if (bad)
                return 1;
        }
    }
    return 0;
}

int main(void)
{
    static trial tr;
    static result expected, got;
    int k, t, failed = 0;
    srand(2);
    if (chain_trials(fastprox_lanes_at(0)) || best_trials(fastprox_lanes_at(0)))
        failed = 1;
    for (k = 1; k < FASTPROX_LANES_COUNT; k++) {
        const fastprox_lanes *L = fastprox_lanes_at(k);
        int bad = 0;
        if (L == NULL) {
            printf("%s: not run (this CPU lacks it)\n", fastprox_lanes_all[k]->name);
            continue;
        }
        srand(1);
        for (t = 0; t < TRIALS && !bad; t++) {
            int pass = t % 7;
            make(&tr, pass);
            run(fastprox_lanes_at(0), &tr, pass, &expected);
            run(L, &tr, pass, &got);
            if (!same(&expected, &got, tr.width)) {
                printf("%s (%d lanes): trial %d (pass %d, %d entries) differs from the portable code\n",
                       L->name, L->width, t, pass, tr.n);
                bad = failed = 1;
            }
        }
        if (!bad && !rows_ok(L))
            bad = failed = 1;
        srand(2);
        if (!bad && (chain_trials(L) || best_trials(L)))
            bad = failed = 1;
        if (!bad)
            printf("%s (%d lanes): ok, %d trials, %d of the structured rows\n", L->name, L->width, TRIALS, TRIALS);
    }
    return failed;
}
