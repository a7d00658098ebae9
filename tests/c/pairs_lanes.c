/* Prints, for 200,000 random inputs (with zeros, infinities, NaN and huge values),
   the bits of every function of _kernel/lanes/pairs.h. Compiled once as is and once with
   -DPORTABLE (the code for CPUs without SSE2), the two outputs must be equal. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef PORTABLE
#undef __SSE2__
#endif
#include "_kernel/lanes/pairs.h"
#include "bits.h"

int main(void)
{
    const double special[] = {0.0, -0.0, 1.0, -1.0, 1e-300, 3.5, -2.25, INFINITY, -INFINITY, NAN, 1e300, 0.1};
    srand(1);
    for (int i = 0; i < 200000; i++) {
        double x[9];
        for (int k = 0; k < 9; k++)
            x[k] = rand() % 3 == 0 ? special[rand() % 12]
                                   : ((double)rand() / RAND_MAX - 0.5) * pow(10, rand() % 7 - 3);
        fastprox_pair root = {fabs(x[2]), fabs(x[3])};
        fastprox_pair w = fastprox_dual_weights2(x[0], x[1], root, fabs(x[4]), fabs(x[5]),
                                                 fabs(x[6]), fabs(x[7]), x[8]);
        fastprox_pair s = fastprox_sqrt2(fabs(x[0]), x[1]);
        double e[2] = {x[4], x[0]}, f[2] = {x[5], x[1]}, g[2] = {x[6], x[2]};
        fastprox_pair c = fastprox_l1_catch_up2(e, f, 1, fabs(x[7]), x[8]);
        fastprox_l1_step2(e, f, 1, x[2], x[3], x[5], fabs(x[6]), fabs(x[7]), x[8]);
        fastprox_l1_step2(g, g, 1, x[3], x[3], x[5], fabs(x[6]), fabs(x[7]), x[8]);   /* one entry */
        printf("%llx %llx %llx %llx %llx %llx %llx %llx %llx %llx %llx %llx %llx", bits(w.a),
               bits(w.b), bits(s.a), bits(s.b), bits(fastprox_max0(x[0])), bits(c.a), bits(c.b),
               bits(e[0]), bits(e[1]), bits(f[0]), bits(f[1]), bits(g[0]), bits(g[1]));
        fastprox_pair r = fastprox_rda_weights2(x[0], x[1], fabs(x[6]), x[7]);
        printf(" %llx %llx", bits(r.a), bits(r.b));
        for (int n_row = 0; n_row < 3; n_row++) {          /* (w), (P, w), (P, Q, w) */
            int off_Q = n_row == 2 ? 1 : -1;
            double es[3] = {fabs(x[4]) + 1e-3, x[5], x[0]}, fs[3] = {fabs(x[6]), x[7], x[1]};
            double rho1 = n_row == 0 ? 1.0 : fabs(x[8]) > 1 ? 0.5 : 0.0, a = i % 5 == 0 ? 0.0 : fabs(x[7]);
            double e0 = es[2 - n_row], f0 = fs[2 - n_row], es2[3], fs2[3];
            fastprox_pair cs = fastprox_scalar_catch_up2(es + 2 - n_row, fs + 2 - n_row, n_row, off_Q,
                                                         fabs(x[8]), x[3]);
            if (n_row == 1 && (bits(cs.a) != bits(fastprox_soft(x[0] * (fabs(x[8]) / e0), 0.0))
                               || bits(cs.b) != bits(fastprox_soft(x[1] * (fabs(x[8]) / f0), 0.0)))) {
                fprintf(stderr, "input %d: l2's catch-up is not soft(w P / P_s, 0)\n", i);
                return 1;
            }
            /* the margin loop's step over the entries as they were (both, then e alone) */
            double em[3] = {fabs(x[4]) + 1e-3, x[5], x[0]}, fm[3] = {fabs(x[6]), x[7], x[1]};
            fastprox_top top = fastprox_top_start(fabs(x[8]));
            double acc = fastprox_scalar_margin2(x[6], em + 2 - n_row, fm + 2 - n_row, n_row, off_Q, fabs(x[8]),
                                                 x[3], x[2], x[4], 1, &top);
            acc = fastprox_scalar_margin2(acc, fm + 2 - n_row, fm + 2 - n_row, n_row, off_Q, fabs(x[8]), x[3],
                                          x[5], x[5], 0, &top);
            double ec[3] = {fabs(x[4]) + 1e-3, x[5], x[0]}, fc[3] = {fabs(x[6]), x[7], x[1]};
            fastprox_pair wc = fastprox_scalar_catch_up2(ec + 2 - n_row, fc + 2 - n_row, n_row, off_Q, fabs(x[8]), x[3]);
            double dot = x[6] + wc.a * x[2];
            dot += wc.b * x[4];
            dot += fastprox_scalar_catch_up2(fc + 2 - n_row, fc + 2 - n_row, n_row, off_Q, fabs(x[8]), x[3]).a * x[5];
            if (bits(dot) != bits(acc) || bits(ec[2]) != bits(em[2]) || bits(fc[2]) != bits(fm[2])) {
                fprintf(stderr, "input %d: the margin's step is not the catch-up and the terms\n", i);
                return 1;
            }
            printf(" %llx %llx %llx %llx", bits(acc), bits(em[2]), bits(fm[2]),
                   bits(isfinite(x[2]) && isfinite(x[4]) && isfinite(x[5]) ? fastprox_top_max(top) : 0.0));
            memcpy(es2, es, sizeof es);
            memcpy(fs2, fs, sizeof fs);
            fastprox_scalar_step2(es + 2 - n_row, fs + 2 - n_row, n_row, off_Q, x[2], x[3], x[5],
                                  fabs(x[6]), a, rho1, fabs(x[4]), x[3], FASTPROX_PROX_FULL);
            fastprox_scalar_step2(es2 + 2 - n_row, fs2 + 2 - n_row, n_row, off_Q, x[2], x[3], x[5],
                                  fabs(x[6]), a, rho1, fabs(x[4]), x[3], fastprox_prox_mode(a, rho1));
            for (int k = 0; k < 3; k++)
                if (bits(es[k]) != bits(es2[k]) || bits(fs[k]) != bits(fs2[k])) {
                    fprintf(stderr, "input %d: the step's prox as fastprox_prox_mode says is not the prox\n", i);
                    return 1;
                }
            printf(" %llx %llx", bits(cs.a), bits(cs.b));
            for (int k = 0; k < 3; k++)
                printf(" %llx %llx", bits(es[k]), bits(fs[k]));
        }
        /* averaged l2 rows (P, SP, SP_lo, w, S): caught up to (P, SP, SP_lo), a lane current
           (its stamps the cumulants) every few inputs, both at times; stepped (averaged or
           not), stamped; and one row alone (an odd row's last) */
        double P = fabs(x[8]) + 1e-3, SP = fabs(x[7]) + P, SPl = x[6] * 1e-17;
        int now_e = i % 3 == 0, now_f = i % 4 == 0;
        double pe[5] = {now_e ? P : fabs(x[0]) + 1e-3, now_e ? SP : fabs(x[1]), now_e ? SPl : x[2] * 1e-17,
                        x[3], x[4]};
        double pf[5] = {now_f ? P : fabs(x[5]) + 1e-3, now_f ? SP : fabs(x[2]), now_f ? SPl : x[1] * 1e-17,
                        x[0], x[1]};
        double pg[5] = {fabs(x[4]) + 1e-3, fabs(x[3]), x[0] * 1e-17, x[5], x[6]};
        /* the margin loop's step over the same rows (both, then pg alone) against their
           catch-up then their terms */
        double me[5], mf[5], mg[5];
        memcpy(me, pe, sizeof pe);
        memcpy(mf, pf, sizeof pf);
        memcpy(mg, pg, sizeof pg);
        fastprox_top ptop = fastprox_top_start(fabs(x[8]));
        double pacc = fastprox_prefix_margin2(x[6], me, mf, P, SP, SPl, x[2], x[4], 1, &ptop);
        pacc = fastprox_prefix_margin2(pacc, mg, mg, P, SP, SPl, x[5], x[5], 0, &ptop);
        fastprox_pair pc = fastprox_prefix_catch_up2(pe, pf, P, SP, SPl);
        fastprox_pair pd = fastprox_prefix_catch_up2(pg, pg, P, SP, SPl);
        double pdot = x[6] + pc.a * x[2];
        pdot += pc.b * x[4];
        pdot += pd.a * x[5];
        int rows_differ = 0;
        for (int k = 0; k < 5; k++)
            rows_differ |= bits(me[k]) != bits(pe[k]) || bits(mf[k]) != bits(pf[k]) || bits(mg[k]) != bits(pg[k]);
        if (bits(pdot) != bits(pacc) || rows_differ) {
            fprintf(stderr, "input %d: the averaged l2 margin's step is not the catch-up and the terms\n", i);
            return 1;
        }
        printf(" %llx %llx %llx %llx %llx %llx", bits(pc.a), bits(pc.b), bits(pd.a), bits(pd.b), bits(pacc),
               bits(isfinite(x[2]) && isfinite(x[4]) && isfinite(x[5]) ? fastprox_top_max(ptop) : 0.0));
        fastprox_prefix_step2(pe, pf, x[2], x[3], x[5], fabs(x[6]), fabs(x[7]), i % 2 ? 0.0 : 0.5, i % 3 != 1,
                              P * 0.5, SP + P, SPl, fastprox_prox_mode(fabs(x[7]), i % 2 ? 0.0 : 0.5));
        fastprox_prefix_step2(pg, pg, x[2], x[2], x[5], fabs(x[6]), fabs(x[7]), 0.0, i % 2, P * 0.5, SP + P, SPl,
                              FASTPROX_PROX_FULL);
        for (int k = 0; k < 5; k++)
            printf(" %llx %llx %llx", bits(pe[k]), bits(pf[k]), bits(pg[k]));
        /* one-vs-rest's new factors of two outputs of a feature (G not stored) */
        fastprox_pair nf2 = fastprox_new_factors2(i % 6 == 0 ? 0.0 : fabs(x[3]), fabs(x[8]), x[6], x[7],
                                                  fabs(x[5]), x[2]);
        printf(" %llx %llx", bits(nf2.a), bits(nf2.b));
        /* two outputs' AdaGrad entries (w, G, eta), their gradients and forward steps given */
        double oa[3] = {x[0], i % 7 == 0 ? 0.0 : fabs(x[1]), x[2]}, ob[3] = {x[3], fabs(x[4]), x[5]};
        fastprox_adagrad_outputs2(oa, ob, x[6], i % 8 == 0 ? 0.0 : x[7], x[8], x[6], fabs(x[1]),
                                  i % 3 == 0 ? 1.0 : fabs(x[2]) / (1.0 + fabs(x[2])), fabs(x[4]), fabs(x[0]));
        for (int k = 0; k < 3; k++)
            printf(" %llx %llx", bits(oa[k]), bits(ob[k]));
        /* two outputs' normalized entries (w, G, factor), with and without the factor kept */
        for (int keep = 0; keep < 2; keep++) {
            double na[3] = {x[1], i % 5 == 0 ? 0.0 : fabs(x[2]), x[3]}, nb[3] = {x[4], fabs(x[5]), x[6]};
            fastprox_normalized_outputs2(na, nb, x[7], i % 4 == 0 ? 0.0 : x[8], x[0], x[7], fabs(x[3]),
                                         fabs(x[6]), fabs(x[2]), i % 2 ? 0.0 : fabs(x[5]), keep);
            for (int k = 0; k < 3; k++)
                printf(" %llx %llx", bits(na[k]), bits(nb[k]));
            /* the same entries given the factors (the invariant step's) */
            fastprox_normalized_known2(na, nb, x[8], x[0], x[7], x[1], i % 3 == 0 ? 0.0 : fabs(x[4]),
                                       fabs(x[2]), fabs(x[6]), fabs(x[0]), keep);
            for (int k = 0; k < 3; k++)
                printf(" %llx %llx", bits(na[k]), bits(nb[k]));
        }
        printf("\n");
    }
    return 0;
}
