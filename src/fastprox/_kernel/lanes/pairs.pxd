# The Cython side of `_kernel/lanes/pairs.h`: two entries' arithmetic in one SSE2 instruction each
# (its portable code elsewhere, the same bits), for the scalar-step and dual fast row
# kernels (`_rows`) and the general step's one-vs-rest and multinomial outputs
# (`_normalized`, `_adagrad`).
cdef extern from "_kernel/lanes/pairs.h" nogil:
    ctypedef struct pair "fastprox_pair":
        double a
        double b
    pair sqrt2 "fastprox_sqrt2"(double a, double b)
    pair l1_catch_up2 "fastprox_l1_catch_up2"(double* e, double* f, int at_w, double shrink_product,
                                              double threshold_sum)
    void l1_step2 "fastprox_l1_step2"(double* e, double* f, int at_w, double xe, double xf, double q,
                                      double eta, double a, double threshold_sum)
    ctypedef double top_t "fastprox_top"     # (the C type is the CPU's: use the functions below only)
    top_t top_start "fastprox_top_start"(double m)
    double top_max "fastprox_top_max"(top_t top)
    double scalar_margin2 "fastprox_scalar_margin2"(double acc, double* e, double* f, int n_row_fields,
                                                    int threshold_stamp_at, double shrink_product,
                                                    double threshold_sum, double xe, double xf, bint two,
                                                    top_t* top)
    pair scalar_catch_up2 "fastprox_scalar_catch_up2"(double* e, double* f, int n_row_fields,
                                                      int threshold_stamp_at, double shrink_product,
                                                      double threshold_sum)
    void scalar_step2 "fastprox_scalar_step2"(double* e, double* f, int n_row_fields,
                                              int threshold_stamp_at, double xe,
                                              double xf, double q, double eta, double a, double l1_share,
                                              double shrink_product, double threshold_sum, int prox)
    enum:
        PROX_NONE "FASTPROX_PROX_NONE"
        PROX_SCALE "FASTPROX_PROX_SCALE"
        PROX_FULL "FASTPROX_PROX_FULL"
    int prox_mode "fastprox_prox_mode"(double a, double l1_share)
    double prefix_margin2 "fastprox_prefix_margin2"(double acc, double* e, double* f, double P, double SP,
                                                    double SP_lo, double xe, double xf, bint two, top_t* top)
    void prefix_step2 "fastprox_prefix_step2"(double* e, double* f, double xe, double xf, double q, double eta,
                                              double a, double rho1, bint add, double P, double SP,
                                              double SP_lo, int prox)
    void prefix_stamp2 "fastprox_prefix_stamp2"(double* e, double* f, double P, double SP, double SP_lo)
    void prefix_rebase2 "fastprox_prefix_rebase2"(double* e, double* f, double P, double SP, double SP_lo)
    pair rda_weights2 "fastprox_rda_weights2"(double sa, double sb, double threshold, double scale)
    pair dual_weights2 "fastprox_dual_weights2"(double sa, double sb, pair root, double delta,
                                                double inv_eta0, double l1_threshold, double rda_rho,
                                                double l2_weight)
    pair new_factors2 "fastprox_new_factors2"(double Ge, double Gf, double ge, double gf, double m,
                                              double eta0)
    void adagrad_outputs2 "fastprox_adagrad_outputs2"(double* e, double* f, double ge, double gf, double se,
                                                      double sf, double alpha, double rho1, double delta,
                                                      double eta0)
    void normalized_outputs2 "fastprox_normalized_outputs2"(double* e, double* f, double ge, double gf,
                                                            double se, double sf, double m, double eta0,
                                                            double r, double alpha, bint keep)
    void normalized_known2 "fastprox_normalized_known2"(double* e, double* f, double ge, double gf, double se,
                                                        double sf, double fe, double ff, double r,
                                                        double alpha, bint keep)
