"""Hash the trained models of many configurations, to show that a change of the
kernel keeps every bit (a refactoring) or to see which models it moves.

    python -m bench.model_hashes > before.txt      # on the old kernel
    python -m bench.model_hashes > after.txt       # on the new one
    diff before.txt after.txt                      # empty: bit-identical

Every supported (update, schedule, penalty) of `fastprox._validation`, each
classification and regression loss, one-vs-rest and multinomial models, user
groups and group weights, mini-batches, the invariant step (fobos), sample
weights and two shuffled passes,
on a slice of a9a (binary), satimage (multiclass) and a synthetic regression.
A line per configuration: its name and the SHA-256 of coef_ and intercept_.
"""
import hashlib
import os
import sys

import numpy as np

from fastprox import ProxClassifier, ProxRegressor, load_libsvm
from fastprox._registry import RULES
from fastprox._validation import CLASSIFICATION_LOSSES, GROUP_PENALTIES, REGRESSION_LOSSES

DATA = os.path.join(os.path.dirname(__file__), "..", "..", "shared", "data")


def digest(make):
    """The hash of the model `make()` trains, or the error that refused it."""
    try:
        est = make()
    except ValueError as e:
        return "refused: " + str(e).split(":")[0]
    h = hashlib.sha256(np.ascontiguousarray(est.coef_, dtype=np.float64).tobytes())
    h.update(np.ascontiguousarray(est.intercept_, dtype=np.float64).tobytes())
    return h.hexdigest()[:16]


def rules():
    for r in RULES:
        yield r.update, r.schedule, r.penalty


def configurations(n_features, n_classes):
    rng = np.random.default_rng(0)
    groups = rng.integers(-1, 12, n_features)
    for update, schedule, penalty in rules():
        base = dict(update=update, schedule=schedule, step="gradient", penalty=penalty, alpha=1e-4, eta0=0.02 if schedule != "adagrad" else 0.3,
                    delta=1.0, random_state=0, max_iter=2)
        yield f"{update}/{schedule}/{penalty}", base
        if update == "fobos":
            yield f"{update}/{schedule}/{penalty}/invariant", dict(base, step="invariant")
        if penalty in GROUP_PENALTIES:
            yield f"{update}/{schedule}/{penalty}/groups", dict(
                base, groups=groups, group_weights=np.linspace(0.5, 2, groups.max() + 1))
        else:
            yield f"{update}/{schedule}/{penalty}/batch3", dict(base, batch_size=3)


def main():
    a9a_X, a9a_y = load_libsvm(os.path.join(DATA, "a9a", "a9a"), n_features=123)
    X, y = a9a_X[:3000], a9a_y[:3000]
    sat_X, sat_y = load_libsvm(os.path.join(DATA, "satimage", "satimage.scale"), n_features=36)
    sat_X, sat_y = sat_X[:2000], sat_y[:2000]
    rng = np.random.default_rng(1)
    reg_y = X @ rng.normal(size=X.shape[1]) + rng.normal(size=X.shape[0])
    weights = rng.uniform(0.2, 2.0, X.shape[0])
    out = []
    for name, params in configurations(X.shape[1], 2):
        for loss in CLASSIFICATION_LOSSES:
            out.append((f"{name}/{loss}", digest(lambda: ProxClassifier(loss=loss, **params).fit(X, y))))
        out.append((f"{name}/log/weighted", digest(lambda: ProxClassifier(**params).fit(X, y, sample_weight=weights))))
        for loss in REGRESSION_LOSSES:
            out.append((f"{name}/{loss}", digest(lambda: ProxRegressor(loss=loss, **params).fit(X, reg_y))))
    for name, params in configurations(sat_X.shape[1], 6):
        params = {k: v for k, v in params.items() if k not in ("groups", "group_weights")}
        out.append((f"{name}/ovr", digest(lambda: ProxClassifier(**params).fit(sat_X, sat_y))))
        for loss in ("log", "hinge"):
            out.append((f"{name}/multinomial/{loss}", digest(lambda: ProxClassifier(
                loss=loss, multi_class="multinomial", **params).fit(sat_X, sat_y))))
    for name, hashed in out:
        print(name, hashed)
    print(f"{len(out)} models", file=sys.stderr)


if __name__ == "__main__":
    main()
