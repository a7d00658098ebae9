"""bench.sgd_port's exact port is SGDClassifier's rule: every parameter the two
estimators share has SGDClassifier's value (its defaults included), but the ones
the "optimal" rate ignores, and the fit takes scikit-learn's steps."""
import numpy as np
import scipy.sparse as sp
from sklearn.linear_model import SGDClassifier

from bench.sgd_port import PORTS
from fastprox import ProxClassifier
from fastprox._sklearn_names import optimal_init

#: SGDClassifier's parameters that learning_rate="optimal" does not read.
UNREAD = {"eta0", "power_t"}


def test_the_exact_port_is_sgd_classifiers_rule():
    (_, sgd_class, script), (_, port_class, port) = PORTS[:2]
    assert sgd_class is SGDClassifier and port_class is ProxClassifier
    sgd = SGDClassifier(**script).get_params()
    ours = ProxClassifier(**port).get_params()
    differ = {name: (sgd[name], ours[name]) for name in set(sgd) & set(ours) - UNREAD
              if sgd[name] != ours[name] and not (name == "loss" and {sgd[name], ours[name]} == {"log_loss"})}
    assert not differ, differ
    X = sp.random(300, 20, density=0.3, format="csr", random_state=0)
    y = np.where(np.arange(300) % 2, 1, -1)
    est = ProxClassifier(**dict(port, max_iter=2)).fit(X, y)
    alpha = sgd["alpha"]
    assert (est.schedule_, est.step_, est.eta0_) == ("inv", "gradient", 1 / alpha)
    assert est.t0_ == optimal_init(alpha, lambda p: -1 / (1 + np.exp(p))) - 1     # log loss at label 1
