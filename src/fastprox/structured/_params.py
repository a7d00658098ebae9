"""SequenceTagger's defaults and losses, written once, in a module without imports:
the estimator and the command line (whose start-up imports no NumPy before it
needs it) read them here."""

#: The losses of the sequence learners: the structured perceptron, the structured
#: SVM with the Hamming cost, the CRF.
SEQUENCE_LOSSES = ("hinge", "perceptron", "log")

#: SequenceTagger's defaults (`fastprox tag train` takes them too).
TAGGER_DEFAULTS = dict(loss="hinge", penalty="l2", alpha=1e-6, l1_ratio=0.15, update="fobos",
                       schedule="adagrad", eta0=0.1, delta=1e-8, rda_rho=0.0, berhu_gamma=1.0, groups=None,
                       group_weights=None, fit_intercept=True, max_iter=10, shuffle=True, random_state=None,
                       warm_start=False, verbose=0)
