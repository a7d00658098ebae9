/* Two entries' arithmetic in one SSE2 instruction each: FOBOS's catch-up and step
   under a scalar step (every layout), the dual weights (rda, ftrl) and square roots,
   and two outputs of a feature at a time under AdaGrad and the normalized schedule
   (one-vs-rest, multinomial; the single-output rows of those two run in wider lanes
   where the CPU has them, `_kernel/lanes/lanes.h`, which takes its SSE2 operations from here). A
   row's non-zeros, taken two at a time, need about half the instructions, which bound
   the short rows of dense sets (ijcnn1); AdaGrad's square root and division cost the
   divider as much for two lanes as for one. Each lane performs the scalar code's
   operations in its order, each correctly rounded: the pairs change no bit, and the
   code for CPUs without SSE2 (below) gives the same bits (tests/test_pairs.py). */
#ifndef FASTPROX_PAIRS_H
#define FASTPROX_PAIRS_H
#include <math.h>
#include "max0.h"
typedef struct { double a, b; } fastprox_pair;
static inline double fastprox_soft(double v, double a)      /* as `soft_threshold` */
{
    return copysign(fastprox_max0(fabs(v) - a), v);
}
/* The fields of an averaged FOBOS-l2 row (scalar step, l2, the averaged iterate kept
   with the prefix sums of P: `Layout.avg_prefix`, one output): its P stamp, its stamp of
   the prefix sum of P (SP, SP_lo), its weight w and the sum S of its iterates. */
enum { FASTPROX_PREFIX_P, FASTPROX_PREFIX_SP, FASTPROX_PREFIX_SP_LO, FASTPROX_PREFIX_W, FASTPROX_PREFIX_S };
/* Stamp such rows e, f with the cumulants (P, SP, SP_lo). */
static inline void fastprox_prefix_stamp2(double *e, double *f, double P, double SP, double SP_lo)
{
    e[FASTPROX_PREFIX_P] = f[FASTPROX_PREFIX_P] = P;
    e[FASTPROX_PREFIX_SP] = f[FASTPROX_PREFIX_SP] = SP;
    e[FASTPROX_PREFIX_SP_LO] = f[FASTPROX_PREFIX_SP_LO] = SP_lo;
}
/* How much of the elastic-net family's prox with threshold a and l1 share rho1 a step
   computes (`fastprox_prox_as2`): all of it, only l2's division (a rho1 = 0: the soft
   threshold at 0 is the identity), or nothing (rho1 = 1 and a = 0). Decided once a row,
   the step's loop then has no branch on it. */
enum { FASTPROX_PROX_NONE, FASTPROX_PROX_SCALE, FASTPROX_PROX_FULL };
static inline int fastprox_prox_mode(double a, double rho1)
{
    if (rho1 == 1.0)
        return a == 0.0 ? FASTPROX_PROX_NONE : FASTPROX_PROX_FULL;
    return a * rho1 == 0.0 ? FASTPROX_PROX_SCALE : FASTPROX_PROX_FULL;
}
#if defined(__SSE2__)
#include <emmintrin.h>
static inline fastprox_pair fastprox_pair_of(__m128d v)
{
    fastprox_pair p;
    p.a = _mm_cvtsd_f64(v);
    p.b = _mm_cvtsd_f64(_mm_unpackhi_pd(v, v));
    return p;
}
/* e[k], f[k] = the lanes of v (the same value twice where f = e, an odd row's last). */
static inline void fastprox_put2(double *e, double *f, int k, __m128d v)
{
    fastprox_pair p = fastprox_pair_of(v);
    e[k] = p.a;
    f[k] = p.b;
}
/* (sqrt(a), sqrt(b)) */
static inline fastprox_pair fastprox_sqrt2(double a, double b)
{
    return fastprox_pair_of(_mm_sqrt_pd(_mm_set_pd(b, a)));
}
/* copysign(max0(|v| - thr), v) of both lanes, as `soft_threshold`. */
static inline __m128d fastprox_soft2(__m128d v, __m128d thr)
{
    const __m128d sign = _mm_set1_pd(-0.0);
    __m128d m = _mm_sub_pd(_mm_andnot_pd(sign, v), thr);
    return _mm_or_pd(_mm_andnot_pd(sign, _mm_max_pd(_mm_setzero_pd(), m)), _mm_and_pd(sign, v));
}
/* mask ? a : b, lane by lane. */
static inline __m128d fastprox_blend2(__m128d mask, __m128d a, __m128d b)
{
    return _mm_or_pd(_mm_and_pd(mask, a), _mm_andnot_pd(mask, b));
}
/* The elastic-net family's prox of both lanes with thresholds a: soft(v, a rho1) /
   (1 + a (1 - rho1)), soft(v, a) for rho1 = 1, as `prox_elasticnet` and `soft_threshold`. */
static inline __m128d fastprox_prox2(__m128d v, __m128d a, double rho1)
{
    if (rho1 == 1.0)
        return fastprox_soft2(v, a);
    return _mm_div_pd(fastprox_soft2(v, _mm_mul_pd(a, _mm_set1_pd(rho1))),
                      _mm_add_pd(_mm_set1_pd(1.0), _mm_mul_pd(a, _mm_set1_pd(1.0 - rho1))));
}
/* FOBOS-l1 entries e, f in the layout (Q stamp, w), or (Q stamp, A, w) with the
   averaged iterate kept: the weight at field at_w (1, 2). The catch-up
   w <- soft(w, P (Q - stamp)) of both (their stamps are left to the step that
   follows); returns the two weights. */
static inline fastprox_pair fastprox_l1_catch_up2(double *e, double *f, int at_w, double P, double Q)
{
    __m128d thr = _mm_mul_pd(_mm_set1_pd(P), _mm_sub_pd(_mm_set1_pd(Q), _mm_set_pd(f[0], e[0])));
    fastprox_pair w = fastprox_pair_of(fastprox_soft2(_mm_set_pd(f[at_w], e[at_w]), thr));
    e[at_w] = w.a;
    f[at_w] = w.b;
    return w;
}
/* Their step w <- soft(w - eta (q x), a) with values (xe, xf), both stamped Q. */
static inline void fastprox_l1_step2(double *e, double *f, int at_w, double xe, double xf, double q,
                                     double eta, double a, double Q)
{
    __m128d g = _mm_mul_pd(_mm_set1_pd(q), _mm_set_pd(xf, xe));
    __m128d w = _mm_sub_pd(_mm_set_pd(f[at_w], e[at_w]), _mm_mul_pd(_mm_set1_pd(eta), g));
    fastprox_pair r = fastprox_pair_of(fastprox_soft2(w, _mm_set1_pd(a)));
    e[at_w] = r.a;
    f[at_w] = r.b;
    e[0] = f[0] = Q;
}
/* FOBOS entries e, f in the other scalar-step layouts: (w) without a penalty
   (n_row = 0), else (P stamp, w) for l2 or (P stamp, Q stamp, w) for elasticnet
   (n_row = 1, 2; off_Q the Q stamp's place or -1). The catch-up
   w <- soft(w P / P_s, P (Q - Q_s)) of both; returns the two weights. Without a Q stamp
   the threshold is 0, and soft(v, 0) is v in every bit (|v| - 0 is |v|, max(0, |v|) is
   |v|, NaN included, and v's sign is put back): l2's catch-up skips it.
   `fastprox_scalar_caught2` gives the weights as a vector (the margin loop's products). */
static inline __m128d fastprox_scalar_caught2(double *e, double *f, int n_row, int off_Q, double P, double Q)
{
    __m128d w = _mm_set_pd(f[n_row], e[n_row]);
    if (n_row == 0)
        return w;
    w = _mm_mul_pd(w, _mm_div_pd(_mm_set1_pd(P), _mm_set_pd(f[0], e[0])));
    if (off_Q >= 0)         /* (l2, no Q stamp: soft(v, 0) is v, bit for bit, and is skipped) */
        w = fastprox_soft2(w, _mm_mul_pd(_mm_set1_pd(P), _mm_sub_pd(_mm_set1_pd(Q), _mm_set_pd(f[off_Q], e[off_Q]))));
    _mm_storel_pd(e + n_row, w);
    _mm_storeh_pd(f + n_row, w);
    return w;
}
static inline fastprox_pair fastprox_scalar_catch_up2(double *e, double *f, int n_row, int off_Q,
                                                      double P, double Q)
{
    return fastprox_pair_of(fastprox_scalar_caught2(e, f, n_row, off_Q, P, Q));
}
/* The margin loop's running largest |x| (`fastprox_scalar_margin2`): two lanes, each the
   largest of the values it saw, their largest at the end (`fastprox_top_max`). */
typedef __m128d fastprox_top;
static inline fastprox_top fastprox_top_start(double m)
{
    return _mm_set1_pd(m);
}
static inline double fastprox_top_max(fastprox_top top)
{
    return _mm_cvtsd_f64(_mm_max_sd(top, _mm_unpackhi_pd(top, top)));
}
/* A margin loop's step over entries e, f of values (xe, xf) (`two`; else e alone: f = e,
   xf = xe): their catch-up (`fastprox_scalar_caught2`), then their terms
   (`fastprox_terms2`: acc + w_e xe, then + w_f xf if `two`, their products in one
   instruction, added in row order), returned, and |xe|, |xf| into *top. The largest |x| is exact where the
   values are finite, the only case it is read in: a NaN or infinite value makes the
   margin non-finite, which refuses the row whatever it is (`gradients.refused`). */
static inline double fastprox_terms2(double acc, __m128d w, double xe, double xf, int two, fastprox_top *top)
{
    __m128d x = _mm_set_pd(xf, xe);
    *top = _mm_max_pd(_mm_andnot_pd(_mm_set1_pd(-0.0), x), *top);
    x = _mm_mul_pd(w, x);
    acc += _mm_cvtsd_f64(x);
    if (two)
        acc += _mm_cvtsd_f64(_mm_unpackhi_pd(x, x));
    return acc;
}
static inline double fastprox_scalar_margin2(double acc, double *e, double *f, int n_row, int off_Q, double P,
                                             double Q, double xe, double xf, int two, fastprox_top *top)
{
    return fastprox_terms2(acc, fastprox_scalar_caught2(e, f, n_row, off_Q, P, Q), xe, xf, two, top);
}
/* `fastprox_prox2` of both lanes with threshold a as `prox` (`fastprox_prox_mode`, a
   constant at each call) says: FASTPROX_PROX_FULL computes it; FASTPROX_PROX_SCALE only
   its division by 1 + a (1 - rho1), where a rho1 is 0 (l2: soft(v, 0) is v, bit for bit,
   as `fastprox_scalar_catch_up2` says); FASTPROX_PROX_NONE nothing, where rho1 = 1 and
   a = 0 (no penalty: soft(v, 0) again). */
static inline __m128d fastprox_prox_as2(__m128d v, double a, double rho1, int prox)
{
    if (prox == FASTPROX_PROX_NONE)
        return v;
    if (prox == FASTPROX_PROX_SCALE)
        return _mm_div_pd(v, _mm_add_pd(_mm_set1_pd(1.0), _mm_mul_pd(_mm_set1_pd(a), _mm_set1_pd(1.0 - rho1))));
    return fastprox_prox2(v, _mm_set1_pd(a), rho1);
}
/* Their step w <- prox(w - eta (q x)) of the elastic-net family with threshold a
   (soft(v, a rho1) / (1 + a (1 - rho1)); soft(v, a) for rho1 = 1; as `prox` says:
   `fastprox_prox_as2`), stamped (P, Q). */
static inline void fastprox_scalar_step2(double *e, double *f, int n_row, int off_Q, double xe,
                                         double xf, double q, double eta, double a, double rho1,
                                         double P, double Q, int prox)
{
    __m128d g = _mm_mul_pd(_mm_set1_pd(q), _mm_set_pd(xf, xe));
    __m128d w = _mm_sub_pd(_mm_set_pd(f[n_row], e[n_row]), _mm_mul_pd(_mm_set1_pd(eta), g));
    fastprox_pair r = fastprox_pair_of(fastprox_prox_as2(w, a, rho1, prox));
    e[n_row] = r.a;
    f[n_row] = r.b;
    if (n_row > 0)
        e[0] = f[0] = P;
    if (off_Q >= 0)
        e[off_Q] = f[off_Q] = Q;
}
/* Averaged FOBOS-l2 rows e, f (`FASTPROX_PREFIX_*`; `_kernel/steps/rows.pxd`'s
   `fobos_prefix_row`): field k of both. */
static inline __m128d fastprox_prefix_field2(const double *e, const double *f, int k)
{
    return _mm_set_pd(f[k], e[k]);
}
/* Their catch-up to the cumulants (P, SP, SP_lo): S += (w / P_s) ((SP - SP_s) + (SP_lo -
   SP_lo_s)) (`average.prefix_sum`) and w <- soft(w P / P_s, 0) (`fobos.scalar_catch_up`),
   into w[0] and S[0] (nothing stored); soft(v, 0) is v, bit for bit
   (`fastprox_scalar_catch_up2`), and is not computed. */
static inline void fastprox_prefix_sums2(const double *e, const double *f, double P, double SP, double SP_lo,
                                         __m128d *w, __m128d *S)
{
    __m128d Ps = fastprox_prefix_field2(e, f, FASTPROX_PREFIX_P);
    __m128d old_w = fastprox_prefix_field2(e, f, FASTPROX_PREFIX_W);
    __m128d diff = _mm_add_pd(_mm_sub_pd(_mm_set1_pd(SP), fastprox_prefix_field2(e, f, FASTPROX_PREFIX_SP)),
                              _mm_sub_pd(_mm_set1_pd(SP_lo), fastprox_prefix_field2(e, f, FASTPROX_PREFIX_SP_LO)));
    *w = _mm_mul_pd(old_w, _mm_div_pd(_mm_set1_pd(P), Ps));      /* (soft(v, 0) is v: skipped) */
    *S = _mm_add_pd(fastprox_prefix_field2(e, f, FASTPROX_PREFIX_S), _mm_mul_pd(_mm_div_pd(old_w, Ps), diff));
}
/* Their catch-up in a row's margin loop: `fastprox_prefix_sums2`, except in a lane whose
   three stamps are the cumulants' (a row current, which `fobos_averaged_catch_up`
   skips: its w and S kept as they are), stored; the stamps are left to the step that
   follows (`fastprox_prefix_step2`) or to the refused row's. Returns the two weights
   (`fastprox_prefix_caught2`: as a vector, for the margin loop's products). */
static inline __m128d fastprox_prefix_caught2(double *e, double *f, double P, double SP, double SP_lo)
{
    __m128d w = fastprox_prefix_field2(e, f, FASTPROX_PREFIX_W), caught, S;
    __m128d now = _mm_and_pd(
        _mm_and_pd(_mm_cmpeq_pd(fastprox_prefix_field2(e, f, FASTPROX_PREFIX_P), _mm_set1_pd(P)),
                   _mm_cmpeq_pd(fastprox_prefix_field2(e, f, FASTPROX_PREFIX_SP), _mm_set1_pd(SP))),
        _mm_cmpeq_pd(fastprox_prefix_field2(e, f, FASTPROX_PREFIX_SP_LO), _mm_set1_pd(SP_lo)));
    if (_mm_movemask_pd(now) == 3)
        return w;
    fastprox_prefix_sums2(e, f, P, SP, SP_lo, &caught, &S);
    S = fastprox_blend2(now, fastprox_prefix_field2(e, f, FASTPROX_PREFIX_S), S);
    caught = fastprox_blend2(now, w, caught);
    fastprox_put2(e, f, FASTPROX_PREFIX_S, S);
    fastprox_put2(e, f, FASTPROX_PREFIX_W, caught);
    return caught;
}
static inline fastprox_pair fastprox_prefix_catch_up2(double *e, double *f, double P, double SP, double SP_lo)
{
    return fastprox_pair_of(fastprox_prefix_caught2(e, f, P, SP, SP_lo));
}
/* `fastprox_scalar_margin2` in these rows: their catch-up (`fastprox_prefix_caught2`),
   then their terms (`fastprox_terms2`), returned, and |xe|, |xf| into *top. */
static inline double fastprox_prefix_margin2(double acc, double *e, double *f, double P, double SP, double SP_lo,
                                             double xe, double xf, int two, fastprox_top *top)
{
    return fastprox_terms2(acc, fastprox_prefix_caught2(e, f, P, SP, SP_lo), xe, xf, two, top);
}
/* Their catch-up at a rebase (`fobos.catch_up`'s: no lane skipped), stored, and their
   stamps at the origin (1, 0, 0). */
static inline void fastprox_prefix_rebase2(double *e, double *f, double P, double SP, double SP_lo)
{
    __m128d w, S;
    fastprox_prefix_sums2(e, f, P, SP, SP_lo, &w, &S);
    fastprox_put2(e, f, FASTPROX_PREFIX_S, S);
    fastprox_put2(e, f, FASTPROX_PREFIX_W, w);
    fastprox_prefix_stamp2(e, f, 1.0, 0.0, 0.0);
}
/* Their step w <- prox(w - eta (q x)) (`fastprox_scalar_step2`'s, l1 share rho1, as `prox` says), the new
   weights into S where the step is averaged (`add`, `average.add_iterates`), their stamps
   the cumulants (P, SP, SP_lo) after the step. */
static inline void fastprox_prefix_step2(double *e, double *f, double xe, double xf, double q, double eta,
                                         double a, double rho1, int add, double P, double SP, double SP_lo,
                                         int prox)
{
    __m128d g = _mm_mul_pd(_mm_set1_pd(q), _mm_set_pd(xf, xe));
    __m128d w = _mm_sub_pd(fastprox_prefix_field2(e, f, FASTPROX_PREFIX_W), _mm_mul_pd(_mm_set1_pd(eta), g));
    w = fastprox_prox_as2(w, a, rho1, prox);
    fastprox_put2(e, f, FASTPROX_PREFIX_W, w);
    if (add)
        fastprox_put2(e, f, FASTPROX_PREFIX_S,
                      _mm_add_pd(fastprox_prefix_field2(e, f, FASTPROX_PREFIX_S), w));
    fastprox_prefix_stamp2(e, f, P, SP, SP_lo);
}
/* AdaGrad entries (w, G, eta) at e, f with gradients g and forward steps s (g, or the
   invariant step's sigma x) as lanes: G += g^2, eta = eta0 / (delta + sqrt(G)) (0 where
   delta + sqrt(G) is not positive), both stored, and where eta > 0 w <- prox(w - eta s)
   with threshold alpha eta (`fastprox_prox2`; `_adagrad.adagrad_step`, `_fobos.fobos_prox`). */
static inline void fastprox_adagrad_entries2(double *e, double *f, __m128d g, __m128d s, double alpha,
                                             double rho1, double delta, double eta0)
{
    __m128d G = _mm_add_pd(_mm_set_pd(f[1], e[1]), _mm_mul_pd(g, g));
    __m128d H = _mm_add_pd(_mm_set1_pd(delta), _mm_sqrt_pd(G));
    __m128d eta = _mm_and_pd(_mm_cmpgt_pd(H, _mm_setzero_pd()), _mm_div_pd(_mm_set1_pd(eta0), H));
    __m128d on = _mm_cmpgt_pd(eta, _mm_setzero_pd()), w = _mm_set_pd(f[0], e[0]);
    __m128d step = fastprox_prox2(_mm_sub_pd(w, _mm_mul_pd(eta, s)),
                                  _mm_mul_pd(_mm_set1_pd(alpha), eta), rho1);
    fastprox_put2(e, f, 1, G);
    fastprox_put2(e, f, 2, eta);
    fastprox_put2(e, f, 0, fastprox_blend2(on, step, w));
}
/* Two outputs' entries of one feature (one-vs-rest, multinomial), their gradients (ge, gf)
   and forward steps (se, sf) given: `fastprox_adagrad_entries2`. */
static inline void fastprox_adagrad_outputs2(double *e, double *f, double ge, double gf, double se,
                                             double sf, double alpha, double rho1, double delta,
                                             double eta0)
{
    fastprox_adagrad_entries2(e, f, _mm_set_pd(gf, ge), _mm_set_pd(sf, se), alpha, rho1, delta, eta0);
}
/* The normalized schedule's step factors eta0 / (m sqrt(G)) of scales (me, mf) and
   sums of squared gradients G, 0 where G is not positive (`_normalized.normalized_factor`). */
static inline __m128d fastprox_factors2(__m128d G, double me, double mf, double eta0)
{
    return _mm_and_pd(_mm_cmpgt_pd(G, _mm_setzero_pd()),
                      _mm_div_pd(_mm_set1_pd(eta0), _mm_mul_pd(_mm_set_pd(mf, me), _mm_sqrt_pd(G))));
}
/* Two outputs' new step factors of one feature of scale m, with sums of squared
   gradients (Ge, Gf) and this step's gradients (ge, gf): the factors of G + g^2, G not
   stored (`_normalized.normalized_new_factor`, one-vs-rest's invariant step norm). */
static inline fastprox_pair fastprox_new_factors2(double Ge, double Gf, double ge, double gf, double m,
                                                  double eta0)
{
    __m128d g = _mm_set_pd(gf, ge);
    return fastprox_pair_of(fastprox_factors2(_mm_add_pd(_mm_set_pd(Gf, Ge), _mm_mul_pd(g, g)), m, m, eta0));
}
/* The normalized schedule's step of weights w with steps eta and forward steps s (g, or
   the invariant step's sigma x): soft(w - eta s, alpha eta) where eta > 0, else w
   (`_normalized.normalized_fobos_step`). */
static inline __m128d fastprox_normalized_w2(__m128d w, __m128d eta, __m128d s, double alpha)
{
    __m128d step = fastprox_soft2(_mm_sub_pd(w, _mm_mul_pd(eta, s)), _mm_mul_pd(_mm_set1_pd(alpha), eta));
    return fastprox_blend2(_mm_cmpgt_pd(eta, _mm_setzero_pd()), step, w);
}
/* Two outputs' normalized entries (w, G, and under l1 the factor) with gradients g,
   forward steps s (g, or the invariant step's sigma x) and new step factors as lanes:
   G += g^2 stored (the factors too where keep), eta = factor r, and where eta > 0
   w <- soft(w - eta s, alpha eta) (`_normalized.normalized_apply_factor`). */
static inline void fastprox_normalized_update2(double *e, double *f, __m128d g, __m128d s, __m128d factor,
                                               double r, double alpha, int keep)
{
    __m128d G = _mm_add_pd(_mm_set_pd(f[1], e[1]), _mm_mul_pd(g, g));
    __m128d w = fastprox_normalized_w2(_mm_set_pd(f[0], e[0]), _mm_mul_pd(factor, _mm_set1_pd(r)), s, alpha);
    fastprox_put2(e, f, 1, G);
    if (keep)
        fastprox_put2(e, f, 2, factor);
    fastprox_put2(e, f, 0, w);
}
/* The same with the factors given as (fe, ff): the invariant step's, its norm took them. */
static inline void fastprox_normalized_known2(double *e, double *f, double ge, double gf, double se, double sf,
                                              double fe, double ff, double r, double alpha, int keep)
{
    fastprox_normalized_update2(e, f, _mm_set_pd(gf, ge), _mm_set_pd(sf, se), _mm_set_pd(ff, fe), r, alpha,
                                keep);
}
/* The same of one feature of scale m, the factors of G + g^2 computed (`fastprox_factors2`;
   `_normalized.normalized_apply`, one-vs-rest's gradient step). */
static inline void fastprox_normalized_outputs2(double *e, double *f, double ge, double gf, double se,
                                                double sf, double m, double eta0, double r, double alpha,
                                                int keep)
{
    __m128d g = _mm_set_pd(gf, ge);
    __m128d factor = fastprox_factors2(_mm_add_pd(_mm_set_pd(f[1], e[1]), _mm_mul_pd(g, g)), m, m, eta0);
    fastprox_normalized_update2(e, f, g, _mm_set_pd(sf, se), factor, r, alpha, keep);
}
/* RDA's weights under a scalar step, soft(-s, thr) * inv, of sums (sa, sb). */
static inline fastprox_pair fastprox_rda_weights2(double sa, double sb, double thr, double inv)
{
    __m128d v = _mm_xor_pd(_mm_set_pd(sb, sa), _mm_set1_pd(-0.0));
    return fastprox_pair_of(_mm_mul_pd(fastprox_soft2(v, _mm_set1_pd(thr)), _mm_set1_pd(inv)));
}
/* The dual weights (rda, ftrl under AdaGrad) of two entries with sums (sa, sb) and
   root = (sqrt(n_a), sqrt(n_b)): beta = (delta + root) * inv_eta0 and
   w = soft(-s, wc + beta * rho) / (beta + wl2), 0 where beta + wl2 is not positive.
   `dual_weight`'s operations in its order, lane by lane: the same bits. */
static inline fastprox_pair fastprox_dual_weights2(double sa, double sb, fastprox_pair root,
                                                   double delta, double inv_eta0, double wc,
                                                   double rho, double wl2)
{
    const __m128d sign = _mm_set1_pd(-0.0), zero = _mm_setzero_pd();
    __m128d v = _mm_xor_pd(_mm_set_pd(sb, sa), sign);
    __m128d beta = _mm_mul_pd(_mm_add_pd(_mm_set1_pd(delta), _mm_set_pd(root.b, root.a)),
                              _mm_set1_pd(inv_eta0));
    __m128d soft = fastprox_soft2(v, _mm_add_pd(_mm_set1_pd(wc),
                                                _mm_mul_pd(beta, _mm_set1_pd(rho))));
    __m128d den = _mm_add_pd(beta, _mm_set1_pd(wl2));
    return fastprox_pair_of(_mm_and_pd(_mm_cmpgt_pd(den, zero), _mm_div_pd(soft, den)));
}
#else
#include <string.h>
static inline fastprox_pair fastprox_sqrt2(double a, double b)
{
    fastprox_pair p = {sqrt(a), sqrt(b)};
    return p;
}
static inline fastprox_pair fastprox_l1_catch_up2(double *e, double *f, int at_w, double P, double Q)
{
    fastprox_pair w = {fastprox_soft(e[at_w], P * (Q - e[0])), fastprox_soft(f[at_w], P * (Q - f[0]))};
    e[at_w] = w.a;
    f[at_w] = w.b;
    return w;
}
static inline void fastprox_l1_step2(double *e, double *f, int at_w, double xe, double xf, double q,
                                     double eta, double a, double Q)
{
    double we = fastprox_soft(e[at_w] - eta * (q * xe), a), wf = fastprox_soft(f[at_w] - eta * (q * xf), a);
    e[at_w] = we;
    f[at_w] = wf;
    e[0] = f[0] = Q;
}
static inline fastprox_pair fastprox_scalar_catch_up2(double *e, double *f, int n_row, int off_Q,
                                                      double P, double Q)
{
    fastprox_pair w = {e[n_row], f[n_row]};
    if (n_row == 0)
        return w;
    w.a *= P / e[0];
    w.b *= P / f[0];
    if (off_Q >= 0) {
        w.a = fastprox_soft(w.a, P * (Q - e[off_Q]));
        w.b = fastprox_soft(w.b, P * (Q - f[off_Q]));
    }
    e[n_row] = w.a;
    f[n_row] = w.b;
    return w;
}
typedef double fastprox_top;
static inline fastprox_top fastprox_top_start(double m)
{
    return m;
}
static inline double fastprox_top_max(fastprox_top top)
{
    return top;
}
static inline double fastprox_terms2(double acc, fastprox_pair w, double xe, double xf, int two,
                                     fastprox_top *top)
{
    double ae = fabs(xe), af = fabs(xf);
    *top = ae > *top ? ae : *top;
    *top = af > *top ? af : *top;
    acc += w.a * xe;
    if (two)
        acc += w.b * xf;
    return acc;
}
static inline double fastprox_scalar_margin2(double acc, double *e, double *f, int n_row, int off_Q, double P,
                                             double Q, double xe, double xf, int two, fastprox_top *top)
{
    return fastprox_terms2(acc, fastprox_scalar_catch_up2(e, f, n_row, off_Q, P, Q), xe, xf, two, top);
}
static inline double fastprox_scalar_prox(double v, double a, double rho1)
{
    return rho1 == 1.0 ? fastprox_soft(v, a) : fastprox_soft(v, a * rho1) / (1.0 + a * (1.0 - rho1));
}
static inline double fastprox_scalar_prox_as(double v, double a, double rho1, int prox)
{
    if (prox == FASTPROX_PROX_NONE)
        return v;
    if (prox == FASTPROX_PROX_SCALE)
        return v / (1.0 + a * (1.0 - rho1));
    return fastprox_scalar_prox(v, a, rho1);
}
static inline double fastprox_prefix_sums1(double *e, double P, double SP, double SP_lo)
{
    double Ps = e[FASTPROX_PREFIX_P], w = e[FASTPROX_PREFIX_W];
    e[FASTPROX_PREFIX_S] += (w / Ps) * ((SP - e[FASTPROX_PREFIX_SP]) + (SP_lo - e[FASTPROX_PREFIX_SP_LO]));
    return e[FASTPROX_PREFIX_W] = w * (P / Ps);
}
static inline double fastprox_prefix_catch_up1(double *e, double P, double SP, double SP_lo)
{
    if (e[FASTPROX_PREFIX_P] == P && e[FASTPROX_PREFIX_SP] == SP && e[FASTPROX_PREFIX_SP_LO] == SP_lo)
        return e[FASTPROX_PREFIX_W];
    return fastprox_prefix_sums1(e, P, SP, SP_lo);
}
static inline fastprox_pair fastprox_prefix_catch_up2(double *e, double *f, double P, double SP, double SP_lo)
{
    double we = fastprox_prefix_catch_up1(e, P, SP, SP_lo);
    fastprox_pair w = {we, f == e ? we : fastprox_prefix_catch_up1(f, P, SP, SP_lo)};
    return w;
}
static inline double fastprox_prefix_margin2(double acc, double *e, double *f, double P, double SP, double SP_lo,
                                             double xe, double xf, int two, fastprox_top *top)
{
    return fastprox_terms2(acc, fastprox_prefix_catch_up2(e, f, P, SP, SP_lo), xe, xf, two, top);
}
static inline void fastprox_prefix_rebase2(double *e, double *f, double P, double SP, double SP_lo)
{
    fastprox_prefix_sums1(e, P, SP, SP_lo);
    if (f != e)
        fastprox_prefix_sums1(f, P, SP, SP_lo);
    fastprox_prefix_stamp2(e, f, 1.0, 0.0, 0.0);
}
static inline void fastprox_prefix_step2(double *e, double *f, double xe, double xf, double q, double eta,
                                         double a, double rho1, int add, double P, double SP, double SP_lo,
                                         int prox)
{
    double we = fastprox_scalar_prox_as(e[FASTPROX_PREFIX_W] - eta * (q * xe), a, rho1, prox);
    double wf = fastprox_scalar_prox_as(f[FASTPROX_PREFIX_W] - eta * (q * xf), a, rho1, prox);
    double Se = e[FASTPROX_PREFIX_S] + we, Sf = f[FASTPROX_PREFIX_S] + wf;
    e[FASTPROX_PREFIX_W] = we;
    f[FASTPROX_PREFIX_W] = wf;
    if (add) {
        e[FASTPROX_PREFIX_S] = Se;
        f[FASTPROX_PREFIX_S] = Sf;
    }
    fastprox_prefix_stamp2(e, f, P, SP, SP_lo);
}
static inline void fastprox_scalar_step2(double *e, double *f, int n_row, int off_Q, double xe,
                                         double xf, double q, double eta, double a, double rho1,
                                         double P, double Q, int prox)
{
    double we = fastprox_scalar_prox_as(e[n_row] - eta * (q * xe), a, rho1, prox);
    double wf = fastprox_scalar_prox_as(f[n_row] - eta * (q * xf), a, rho1, prox);
    e[n_row] = we;
    f[n_row] = wf;
    if (n_row > 0)
        e[0] = f[0] = P;
    if (off_Q >= 0)
        e[off_Q] = f[off_Q] = Q;
}
static inline void fastprox_adagrad_entry1(double *e, double g, double s, double alpha, double rho1,
                                           double delta, double eta0, double *out)
{
    double G = e[1] + g * g, H = delta + sqrt(G), eta = H > 0.0 ? eta0 / H : 0.0;
    out[0] = eta > 0.0 ? fastprox_scalar_prox(e[0] - eta * s, alpha * eta, rho1) : e[0];
    out[1] = G;
    out[2] = eta;
}
static inline void fastprox_adagrad_outputs2(double *e, double *f, double ge, double gf, double se,
                                             double sf, double alpha, double rho1, double delta,
                                             double eta0)
{
    double a[3], b[3];
    fastprox_adagrad_entry1(e, ge, se, alpha, rho1, delta, eta0, a);
    fastprox_adagrad_entry1(f, gf, sf, alpha, rho1, delta, eta0, b);
    memcpy(e, a, sizeof a);
    memcpy(f, b, sizeof b);
}
static inline double fastprox_factor1(double G, double m, double eta0)
{
    return G > 0.0 ? eta0 / (m * sqrt(G)) : 0.0;
}
static inline fastprox_pair fastprox_new_factors2(double Ge, double Gf, double ge, double gf, double m,
                                                  double eta0)
{
    fastprox_pair factors = {fastprox_factor1(Ge + ge * ge, m, eta0), fastprox_factor1(Gf + gf * gf, m, eta0)};
    return factors;
}
static inline double fastprox_normalized_w1(double w, double eta, double s, double alpha)
{
    return eta > 0.0 ? fastprox_soft(w - eta * s, alpha * eta) : w;
}
static inline void fastprox_normalized_known2(double *e, double *f, double ge, double gf, double se, double sf,
                                              double fe, double ff, double r, double alpha, int keep)
{
    double Ge = e[1] + ge * ge, Gf = f[1] + gf * gf;
    double we = fastprox_normalized_w1(e[0], fe * r, se, alpha);
    double wf = fastprox_normalized_w1(f[0], ff * r, sf, alpha);
    e[1] = Ge;
    f[1] = Gf;
    if (keep) {
        e[2] = fe;
        f[2] = ff;
    }
    e[0] = we;
    f[0] = wf;
}
static inline void fastprox_normalized_outputs2(double *e, double *f, double ge, double gf, double se,
                                                double sf, double m, double eta0, double r, double alpha,
                                                int keep)
{
    fastprox_normalized_known2(e, f, ge, gf, se, sf, fastprox_factor1(e[1] + ge * ge, m, eta0),
                               fastprox_factor1(f[1] + gf * gf, m, eta0), r, alpha, keep);
}
static inline fastprox_pair fastprox_rda_weights2(double sa, double sb, double thr, double inv)
{
    fastprox_pair w = {fastprox_soft(-sa, thr) * inv, fastprox_soft(-sb, thr) * inv};
    return w;
}
static inline fastprox_pair fastprox_dual_weights2(double sa, double sb, fastprox_pair root,
                                                   double delta, double inv_eta0, double wc,
                                                   double rho, double wl2)
{
    double ba = (delta + root.a) * inv_eta0, bb = (delta + root.b) * inv_eta0;
    double da = ba + wl2, db = bb + wl2;
    fastprox_pair w = {da > 0.0 ? fastprox_soft(-sa, wc + ba * rho) / da : 0.0,
                       db > 0.0 ? fastprox_soft(-sb, wc + bb * rho) / db : 0.0};
    return w;
}
#endif
#endif
