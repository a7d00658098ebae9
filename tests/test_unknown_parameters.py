"""Every public estimator refuses a parameter it lacks, in its constructor and its
set_params, with one mechanism (`_sklearn_names.checking_names`, `NamedParameters`):
an `UnknownParameter` (a ValueError and a TypeError) naming what to use for that
estimator, else listing its parameters; scikit-learn's introspection (get_params,
clone) sees the named parameters only."""
import inspect
import re

import pytest
from sklearn.base import clone
from sklearn.linear_model import SGDClassifier, SGDRegressor

from fastprox import L1BallClassifier, ProxClassifier, ProxRegressor
from fastprox._sklearn_names import (EQUIVALENTS, LEARNER_EQUIVALENTS, PARSER_EQUIVALENTS, STRUCTURED_EQUIVALENTS,
                                     UnknownParameter)
from fastprox.structured import DependencyParser, SequenceTagger, StructuredLearner

#: Each public estimator class, with the arguments its constructor needs.
ESTIMATORS = [(ProxClassifier, {}), (ProxRegressor, {}), (L1BallClassifier, {}), (SequenceTagger, {}),
              (DependencyParser, {}), (StructuredLearner, {"n_features": 3, "n_outputs": 2})]
STRUCTURED = (SequenceTagger, DependencyParser, StructuredLearner)
#: The names users bring from scikit-learn and the flat estimators, and a misspelling.
NAMES = ("t0", "learning_rate", "early_stopping", "validation_fraction", "foo", "n_iter")


def parameters(cls):
    return list(inspect.signature(cls.__init__).parameters)[1:]


@pytest.mark.parametrize("cls, needed", ESTIMATORS, ids=lambda c: getattr(c, "__name__", ""))
@pytest.mark.parametrize("name", NAMES)
def test_the_constructor_names_what_to_use(cls, needed, name):
    if name in parameters(cls):
        cls(**needed, **{name: getattr(cls(**needed), name)})      # taken: nothing raised
        return
    with pytest.raises(UnknownParameter, match=f"^{cls.__name__} does not take '{name}'; {name}: ") as info:
        cls(**needed, **{name: 1})
    assert isinstance(info.value, ValueError) and isinstance(info.value, TypeError)
    message = str(info.value)
    equivalents = getattr(cls, "_equivalents", {})
    if name in equivalents:
        assert equivalents[name] in message
    else:
        assert f"not a parameter of {cls.__name__} (its parameters: {', '.join(parameters(cls))})" in message


@pytest.mark.parametrize("cls", [ProxClassifier, ProxRegressor, SequenceTagger, DependencyParser, L1BallClassifier])
def test_set_params_refuses_as_the_constructor(cls):
    est = cls()
    for name in NAMES:
        if name in parameters(cls):
            continue
        with pytest.raises(UnknownParameter) as made:
            cls(**{name: 1})
        with pytest.raises(UnknownParameter) as set_:
            est.set_params(**{name: 1})
        assert str(set_.value) == str(made.value)
    assert est.get_params() == cls().get_params()       # nothing was set


@pytest.mark.parametrize("cls", STRUCTURED[:2])
def test_the_structured_estimators_name_scikit_learns_and_the_flat_parameters(cls):
    """Every parameter of the flat estimators and of scikit-learn's SGD estimators, and
    every name `EQUIVALENTS` knows, that a structured estimator lacks has its
    structured equivalent (what to use instead), not the bare list."""
    ours = set(parameters(cls))
    brought = (set(parameters(ProxClassifier)) | set(parameters(ProxRegressor)) | set(EQUIVALENTS)
               | set(SGDClassifier().get_params()) | set(SGDRegressor().get_params()))
    for name in sorted(brought - ours):
        with pytest.raises(UnknownParameter, match=f"{name}: (?!not a parameter)"):
            cls(**{name: 1})
    assert STRUCTURED_EQUIVALENTS["t0"] in str(pytest.raises(UnknownParameter, cls, t0=10).value)
    assert set(STRUCTURED_EQUIVALENTS) <= set(PARSER_EQUIVALENTS)


def test_the_parser_names_its_own_equivalents():
    with pytest.raises(UnknownParameter, match="hash_bits: .*use bits"):
        DependencyParser(hash_bits=20)
    with pytest.raises(UnknownParameter, match="fit_intercept: an arc's score"):
        DependencyParser(fit_intercept=False)
    SequenceTagger(fit_intercept=False)



def test_the_structured_learner_names_what_its_caller_does():
    """StructuredLearner has no fit, passes or loss: every parameter the flat and the
    structured estimators and scikit-learn's take that it lacks is named with what its
    caller does instead, never with a method or a pass it does not have."""
    ours = set(parameters(StructuredLearner))
    brought = (set(parameters(ProxClassifier)) | set(parameters(ProxRegressor)) | set(EQUIVALENTS)
               | set(parameters(SequenceTagger)) | set(parameters(DependencyParser))
               | set(SGDClassifier().get_params()) | set(SGDRegressor().get_params()))
    brought -= {"bits", "label_features", "lowercase", "pos", "projective", "templates"}  # the features' makers
    for name in sorted(brought - ours):
        with pytest.raises(UnknownParameter, match=f"{name}: (?!not a parameter)") as info:
            StructuredLearner(3, 2, **{name: 1})
        assert not re.search(r"partial_fit|\bfit\b|max_iter passes|warm_start=True", str(info.value)), name
    assert set(STRUCTURED_EQUIVALENTS) <= set(LEARNER_EQUIVALENTS)

@pytest.mark.parametrize("cls", [ProxClassifier, ProxRegressor, SequenceTagger, DependencyParser, L1BallClassifier])
def test_introspection_sees_the_named_parameters(cls):
    est = cls(max_iter=3)
    assert sorted(est.get_params()) == sorted(parameters(cls))
    copy = clone(est)
    assert copy.get_params() == est.get_params() and copy.max_iter == 3
    assert copy.set_params(max_iter=5) is copy and copy.max_iter == 5
    with pytest.raises(TypeError):          # positional arguments beyond the signature: Python's own error
        cls(*range(len(parameters(cls)) + 1))
