"""The structured estimators' defaults and losses (SequenceTagger, DependencyParser),
written once, in a module without imports: the estimators and the command line
(whose start-up imports no NumPy before it needs it) read them here."""

#: The losses of the sequence learners: the structured perceptron, the structured
#: SVM with the Hamming cost, the CRF.
SEQUENCE_LOSSES = ("log", "hinge", "perceptron")

#: SequenceTagger's emission supports (``label_features``): every (feature, label)
#: entry of W learns, or only the pairs seen in the training data's gold labels
#: (CRFsuite's state features, its default).
LABEL_FEATURES = ("all", "seen")

#: SequenceTagger's defaults (`fastprox tag train` takes them too): a CRF by RDA with
#: AdaGrad steps and a small l2 penalty, 4 passes, the best of the settings that
#: bench/conll2000.py tried on CoNLL-2000 (F1 and time: bench/results/conll2000.md).
TAGGER_DEFAULTS = dict(loss="log", penalty="l2", alpha=1e-4, l1_ratio=0.15, update="rda",
                       schedule="adagrad", eta0=0.3, delta=1e-8, rda_rho=0.0, berhu_gamma=1.0, groups=None,
                       group_weights=None, fit_intercept=True, max_iter=4, shuffle=True, random_state=None,
                       warm_start=False, verbose=0, average=False, label_features="all")

#: The losses of DependencyParser: the structured perceptron, the structured SVM with
#: the Hamming cost over heads.
PARSER_LOSSES = ("hinge", "perceptron")

#: DependencyParser's defaults (`fastprox parse train` takes them too): what
#: bench/dependency_parsing.py chose on UD English EWT (bench/results/dependency_parsing.md):
#: the averaged cost-augmented hinge (MSTParser's averaging) under a constant step 0.012, no penalty,
#: 6 passes, over the 46 templates online MKL chose less their 5-character prefixes and 34 of the
#: words' UPOS|FEATS tags (alone, paired, beside a surrounding POS or a lemma): "ewt-no-prefix".
PARSER_DEFAULTS = dict(loss="hinge", penalty="none", alpha=1e-3, l1_ratio=0.15, update="fobos",
                       schedule="constant", eta0=0.012, delta=1e-8, rda_rho=0.0, berhu_gamma=1.0,
                       groups="templates", group_weights=None, max_iter=6, shuffle=True, random_state=None,
                       warm_start=False, verbose=0, projective=False, templates="ewt-no-prefix", bits=26,
                       lowercase=False, pos="UPOS", average=True)
