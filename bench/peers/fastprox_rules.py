"""fastprox's learners: every update rule with every schedule it defines, l1
penalty and log loss, plus the library's defaults as a user gets them."""
from fastprox import ProxClassifier, load_libsvm

from .base import EstimatorPeer

#: (update, schedule) pairs with an exact lazy form (README, "What is supported").
RULES = (("fobos", "constant"), ("fobos", "invsqrt"), ("fobos", "adagrad"),
         ("rda", "invsqrt"), ("rda", "adagrad"), ("ftrl", "adagrad"))


class FastproxRule(EstimatorPeer):
    """`ProxClassifier(update, schedule, penalty="l1", alpha)` with the gradient
    step and its default eta0, unshuffled (the suite shuffles the rows once for every learner)."""

    library = "fastprox"
    incremental = True

    def __init__(self, update, schedule, alpha):
        self.name = f"fastprox {update}+{schedule}"
        self.params = dict(update=update, schedule=schedule, step="gradient", penalty="l1", alpha=alpha,
                           shuffle=False)

    def fit(self, X, y, passes=1):
        self.model = ProxClassifier(max_iter=passes, tol=None, **self.params).fit(X, y)
        return self

    def next_pass(self, X, y):
        self.model.partial_fit(X, y)

    def fit_file(self, problem):
        X, y = load_libsvm(problem.libsvm_path(), n_features=problem.n_features, zero_based=False)
        return self.fit(X, y)


class FastproxDefaults(FastproxRule):
    """`ProxClassifier()`: the defaults (FOBOS with normalized invariant steps,
    eta0 0.5, no penalty, one shuffled pass), seeded; the accuracy target is
    about these."""

    def __init__(self):
        self.name = "fastprox defaults"
        self.params = dict(random_state=0)


def make(alpha):
    """The fastprox learners of the suite."""
    return [FastproxRule(u, s, alpha) for u, s in RULES] + [FastproxDefaults()]
