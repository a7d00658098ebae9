/* The state rows' fields of the rules whose single-output rows run in lanes
   (`_kernel/lanes/lanes.h`), named once here for the C passes and for `_kernel/base/state.pxd`, which declares
   them. A feature's row holds its row fields, then its entries (one per output); the
   dual rules' entries (rda, ftrl) begin with their two sums, which the structured
   rows' passes in lanes read (`_kernel/lanes/structured_rows.h`). */
#ifndef FASTPROX_LAYOUT_H
#define FASTPROX_LAYOUT_H
enum {
    /* rda, ftrl: entries (s or z, G or n, ...) */
    FASTPROX_DUAL_SUM = 0,          /* s (rda: the sum of gradients) or z (ftrl) */
    FASTPROX_DUAL_SQUARES = 1,      /* G (rda + adagrad) or n (ftrl): the sum of squared gradients */
    /* fobos + adagrad: row (last), entries (w, G, eta) */
    FASTPROX_ROW_LAST_STEP = 0,     /* last: the last step, the one the row's entries are current at */
    FASTPROX_ADAGRAD_ROW_FIELDS = 1,
    FASTPROX_ADAGRAD_W = 0,         /* the weight w */
    FASTPROX_ADAGRAD_G = 1,         /* G: the sum of squared gradients */
    FASTPROX_ADAGRAD_ETA = 2,       /* the step eta0 / (delta + sqrt(G)) G gives, frozen for the catch-up */
    FASTPROX_ADAGRAD_ENTRY = 3,
    /* fobos + normalized: under l1 a row (R stamp, m), without a penalty (m); entries
       (w, G, factor) under l1, (w, G) without */
    FASTPROX_NORM_STAMP = 0,        /* R = sum_tau r_tau at the feature's last update (l1) */
    FASTPROX_NORM_SCALE = 1,        /* m_j, the largest |x_j| so far (0: never a non-zero value) (l1) */
    FASTPROX_NORM_ROW_FIELDS = 2,
    FASTPROX_NORM_PLAIN_ROW_FIELDS = 1,     /* without a penalty: m_j alone */
    FASTPROX_NORM_W = 0,            /* the weight w */
    FASTPROX_NORM_G = 1,            /* G, the sum of squared gradients */
    FASTPROX_NORM_FACTOR = 2,       /* eta0 / (m_j sqrt(G)), 0 while G = 0 (l1) */
    FASTPROX_NORM_ENTRY = 3,
    FASTPROX_NORM_PLAIN_ENTRY = 2   /* without a penalty: w, G */
};
#endif
