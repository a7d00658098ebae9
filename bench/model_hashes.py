"""Hash the trained models of many configurations, to show that a change of the
kernel keeps every bit (a refactoring) or to see which models it moves.

    python -m bench.model_hashes > before.txt      # on the old kernel
    python -m bench.model_hashes > after.txt       # on the new one
    diff before.txt after.txt                      # empty: bit-identical

The flat models first: every supported (update, schedule, penalty) of
`fastprox._validation`, each classification and regression loss, one-vs-rest and
multinomial models, user groups and group weights, mini-batches, the invariant step
(fobos), the averaged iterate (or its refusal), sample weights and two shuffled passes, on a slice of a9a (binary),
satimage (multiclass) and a synthetic regression.

Then the structured learners, two shuffled passes each: `SequenceTagger` under every
rule of the table of rules and each of its losses, plain and averaged, on the first
200 sentences of CoNLL-2000's training part (the ``conll2000`` templates), and under
the group penalties with a group per template (and group weights) on its first 30;
`DependencyParser` with each of its losses, projective or not, averaged or not, and
under each group penalty with a group per template, on the first 100 sentences of
UD English EWT's training part (templates ``mkl-ewt``, 12 bits).

A line per configuration: its name and the SHA-256 of every array the model learns
(flat: coef_, intercept_; tagger: those and transitions_, start_, stop_; parser:
coef_), or "refused: " and the start of the error of a configuration the estimator
refuses.
"""
import hashlib
import os
import sys
from itertools import islice

import numpy as np

from fastprox import ProxClassifier, ProxRegressor, load_libsvm
from fastprox._registry import RULES
from fastprox._validation import CLASSIFICATION_LOSSES, GROUP_PENALTIES, REGRESSION_LOSSES
from fastprox.structured import DependencyParser, SequenceTagger
from fastprox.structured._params import PARSER_LOSSES, SEQUENCE_LOSSES
from fastprox.structured.features import TemplateFeatures
from fastprox.structured.io import labels_and_lengths, read_conll, read_conllu

DATA = os.path.join(os.path.dirname(__file__), "..", "..", "shared", "data")
STRUCTURED = os.path.join(os.path.dirname(__file__), "..", "..", "shared", "structured")

#: The arrays each kind of model learns, in the order they are hashed.
FLAT_ARRAYS = ("coef_", "intercept_")
TAGGER_ARRAYS = ("coef_", "intercept_", "transitions_", "start_", "stop_")
PARSER_ARRAYS = ("coef_",)


def digest(make, arrays=FLAT_ARRAYS):
    """The hash of the `arrays` of the model `make()` trains, or the error that refused it."""
    try:
        est = make()
    except ValueError as e:
        return "refused: " + str(e).split(":")[0]
    h = hashlib.sha256()
    for name in arrays:
        h.update(np.ascontiguousarray(getattr(est, name), dtype=np.float64).tobytes())
    return h.hexdigest()[:16]


def rules():
    for r in RULES:
        yield r.update, r.schedule, r.penalty


def rule_params(update, schedule, penalty):
    """The parameters every hashed model shares: the rule, its step sizes, two shuffled passes."""
    return dict(update=update, schedule=schedule, penalty=penalty, alpha=1e-4,
                eta0=0.02 if schedule != "adagrad" else 0.3, delta=1.0, random_state=0, max_iter=2)


def configurations(n_features, n_classes):
    rng = np.random.default_rng(0)
    groups = rng.integers(-1, 12, n_features)
    for update, schedule, penalty in rules():
        base = dict(rule_params(update, schedule, penalty), step="gradient")
        yield f"{update}/{schedule}/{penalty}", base
        if update == "fobos":
            yield f"{update}/{schedule}/{penalty}/invariant", dict(base, step="invariant")
        yield f"{update}/{schedule}/{penalty}/average", dict(base, average=True)
        if penalty in GROUP_PENALTIES:
            yield f"{update}/{schedule}/{penalty}/groups", dict(
                base, groups=groups, group_weights=np.linspace(0.5, 2, groups.max() + 1))
        else:
            yield f"{update}/{schedule}/{penalty}/batch3", dict(base, batch_size=3)


def tagger_rows(n_sentences):
    """(X, y, lengths, groups) of the first `n_sentences` of CoNLL-2000's training part:
    the ``conll2000`` templates' rows, a group per template."""
    path = os.path.join(STRUCTURED, "conll2000", "train.txt")
    sentences = list(islice(read_conll(path, ("w", "pos", "y"), label="y"), n_sentences))
    features = TemplateFeatures("conll2000")
    X = features.fit_transform(sentences)
    return (X, *labels_and_lengths(sentences), features.groups_)


def tagger_hashes():
    """(name, hash) of SequenceTagger under every rule and loss, plain and averaged on
    200 CoNLL-2000 sentences, and the CRF with ``label_features="seen"``; under the group
    penalties also with the templates' groups and group weights, on 30 sentences (a group prox costs the group's size: l1_linf
    over 200 sentences' template blocks takes seconds a model)."""
    X, y, lengths, _ = tagger_rows(200)
    gX, gy, glengths, groups = tagger_rows(30)
    weights = np.linspace(0.5, 2, groups.max() + 1)
    for update, schedule, penalty in rules():
        name = f"tagger/{update}/{schedule}/{penalty}"
        base = rule_params(update, schedule, penalty)
        if penalty == "berhu":      # Berhu's quadratic part from |w| = 0.01: the tagger's short fits never reach 1
            base = dict(base, berhu_gamma=0.01)
        variants = [("", base, (X, y, lengths)), ("/average", dict(base, average=True), (X, y, lengths))]
        if penalty in GROUP_PENALTIES:
            variants.append(("/groups", dict(base, groups=groups, group_weights=weights), (gX, gy, glengths)))
        for suffix, params, data in variants:
            for loss in SEQUENCE_LOSSES:
                yield f"{name}/{loss}{suffix}", digest(
                    lambda: SequenceTagger(loss=loss, **params).fit(*data), TAGGER_ARRAYS)
        yield f"{name}/log/seen", digest(       # the seen (feature, label) pairs only, the CRF
            lambda: SequenceTagger(label_features="seen", **base).fit(X, y, lengths), TAGGER_ARRAYS)


def parser_hashes():
    """(name, hash) of DependencyParser with each loss, projective or not, averaged or
    not, and under each group penalty (a group per template), on 100 EWT sentences."""
    path = os.path.join(STRUCTURED, "ud_english_ewt", "en_ewt-ud-train.conllu")
    sentences = list(islice(read_conllu(path, heads=True), 100))
    data = dict(templates="mkl-ewt", bits=12)
    for loss in PARSER_LOSSES:
        for projective in (False, True):
            for average in (False, True):
                params = dict(rule_params("fobos", "constant", "none"), projective=projective, average=average)
                yield f"parser/{loss}/projective={projective}/average={average}", digest(
                    lambda: DependencyParser(loss=loss, **params, **data).fit(sentences), PARSER_ARRAYS)
        for penalty in GROUP_PENALTIES:
            params = dict(rule_params("fobos", "constant", penalty), groups="templates", average=False)
            yield f"parser/{loss}/fobos/constant/{penalty}/templates", digest(
                lambda: DependencyParser(loss=loss, **params, **data).fit(sentences), PARSER_ARRAYS)


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
    out.extend(tagger_hashes())
    out.extend(parser_hashes())
    for name, hashed in out:
        print(name, hashed)
    print(f"{len(out)} models", file=sys.stderr)


if __name__ == "__main__":
    main()
