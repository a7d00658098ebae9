"""scikit-learn's SGD parameters on fastprox's estimators, for scripts written for
`SGDClassifier` and `SGDRegressor`: ``learning_rate`` and ``power_t`` mapped onto
fastprox's ``schedule`` (and, for "optimal", ``eta0`` and ``t0``) where they mean the
same step sizes and refused with the mapping named where they do not, ``n_jobs``
checked, and the names fastprox lacks refused with their fastprox equivalent. Pure
Python, the standard library only: the command line's start-up reads `_validation`,
which imports this.

scikit-learn's steps (its ``_sgd_fast``): ``constant`` eta0; ``invscaling``
eta0 / t^power_t, t counting rows from 1; ``optimal`` 1 / (alpha (optimal_init + t -
1)) with Bottou's heuristic optimal_init (`optimal_init`); ``adaptive`` eta0 divided
by 5 whenever the stopping rule would stop; ``pa1``, ``pa2`` the passive-aggressive
steps. fastprox's scalar schedules (the contract's, docs/contract.md) are eta0,
eta0 / sqrt(t + t0) and eta0 / (t + t0) with t counting steps from 1: a row per step
when batch_size=1, so that ``invscaling`` with power_t 0.5 or 1 is ``invsqrt`` or
``inv``, power_t 0 ``constant``, and ``optimal`` is ``inv`` with eta0 = 1 / alpha and
t0 = optimal_init - 1.
"""
import math
import numbers

#: learning_rate="invscaling"'s power_t with a fastprox schedule of the same steps.
INVSCALING = {0.0: "constant", 0.5: "invsqrt", 1.0: "inv"}

#: scikit-learn's learning rates fastprox has no schedule for, and what to use instead.
UNMAPPED_RATES = {
    "adaptive": "dividing eta0 by 5 when the stopping rule would stop has no fastprox schedule; "
                "use schedule='adagrad' (per-coordinate steps that shrink with the gradients seen) "
                "or learning_rate=None for the default normalized schedule",
    "pa1": "the passive-aggressive steps have no fastprox schedule; use step='invariant' (the "
           "importance-invariant step, which never overshoots the loss's minimizer) with loss='hinge'",
    "pa2": "the passive-aggressive steps have no fastprox schedule; use step='invariant' (the "
           "importance-invariant step, which never overshoots the loss's minimizer) with loss='hinge'",
}

#: Parameters of scikit-learn's SGD estimators (and their relatives) that fastprox's
#: lack, with the fastprox equivalent.
EQUIVALENTS = {
    "coef_init": "fastprox starts from zero weights; continue a trained model with warm_start=True "
                 "(fit) or partial_fit, or load a saved one with fastprox.load_model",
    "intercept_init": "fastprox starts from a zero intercept; continue a trained model with "
                      "warm_start=True (fit) or partial_fit, or load a saved one with fastprox.load_model",
    "offset_init": "fastprox has no one-class model (SGDOneClassSVM); train a ProxClassifier on "
                   "labelled rows",
    "nu": "fastprox has no one-class model (SGDOneClassSVM); train a ProxClassifier on labelled rows",
    "n_iter": "scikit-learn's old name of max_iter; use max_iter (passes over the data)",
    "C": "PassiveAggressiveClassifier's cap on the step; use step='invariant' (the importance-"
         "invariant step, which never overshoots) with eta0 bounding the step, and alpha for a penalty",
    "intercept_decay": "no scikit-learn estimator takes it: SGDClassifier and SGDRegressor multiply their "
                       "intercept updates by 0.01 on sparse X (SPARSE_INTERCEPT_DECAY); under a scalar "
                       "schedule with the gradient step that is intercept_scaling=0.1 (the intercept the "
                       "weight of a constant feature of value 0.1)",
}


#: What the structured estimators (SequenceTagger, DependencyParser; the
#: StructuredLearner beneath them) do instead of the flat estimators' and scikit-learn's
#: parameters they lack: each parameter of ProxClassifier, ProxRegressor and
#: `EQUIVALENTS` that they do not take.
_NO_STOPPING_RULE = ("the structured estimators have no stopping rule: they run max_iter passes; choose max_iter "
                     "on held-out examples (partial_fit one pass at a time, scoring between passes)")
_ZERO_START = ("the structured estimators start from zero weights; continue a trained model with "
               "warm_start=True (fit) or partial_fit")
STRUCTURED_EQUIVALENTS = {
    "intercept_scaling": "the structured estimators' intercepts are the weights of a constant feature of "
                         "value 1, updated as their transitions, starts and stops are; nothing to set",
    "intercept_decay": "the structured estimators' intercepts take their rule's plain update (no decay); "
                       "lower eta0 for smaller steps",
    "t0": "the structured learners' schedules have no offset (steps eta0, eta0 / sqrt(t) or eta0 / t, t "
          "counting examples from 1); lower eta0 for smaller first steps, or use schedule='adagrad'",
    "learning_rate": "scikit-learn's name of the schedule; use schedule ('constant', 'invsqrt', 'inv' or "
                     "'adagrad': the flat estimators' schedules but 'normalized') with eta0",
    "power_t": "invscaling's exponent; use schedule='invsqrt' (power_t 0.5), 'inv' (1) or 'constant' (0)",
    "early_stopping": _NO_STOPPING_RULE,
    "validation_fraction": "the structured estimators hold out no examples (they have no stopping rule); "
                           "score your own held-out examples between partial_fit passes to choose max_iter",
    "n_iter_no_change": _NO_STOPPING_RULE,
    "tol": _NO_STOPPING_RULE,
    "step": "the structured estimators take the gradient step only (the importance-invariant step is not "
            "defined for structured outputs); lower eta0 for smaller steps",
    "batch_size": "the structured estimators step once per example (a sequence or a sentence, all its "
                  "items at once); nothing to set",
    "epsilon": "no structured loss has an epsilon; choose loss among the estimator's losses",
    "grow_features": "the structured estimators take their rows' width from the first training call; "
                     "give every feature column from the start",
    "hash_bits": "the structured estimators read the feature columns they are given; hash the features "
                 "beforehand (fastprox.hash_features)",
    "multi_class": "a structured output scores its labels jointly (no one-vs-rest); nothing to set",
    "class_weight": "weigh the examples with fit's sample_weight (one weight per example)",
    "n_jobs": "a structured estimator trains on one thread; train several in threads (each is "
              "thread-safe) for parallel fits",
    "coef_init": _ZERO_START,
    "intercept_init": _ZERO_START,
    "offset_init": EQUIVALENTS["offset_init"],
    "nu": EQUIVALENTS["nu"],
    "n_iter": EQUIVALENTS["n_iter"],
    "C": "PassiveAggressiveClassifier's cap on the step; use eta0 (schedule='constant') to bound the "
         "steps and alpha for a penalty",
}

#: DependencyParser's own equivalents, over `STRUCTURED_EQUIVALENTS`.
PARSER_EQUIVALENTS = dict(STRUCTURED_EQUIVALENTS,
                          hash_bits="the parser hashes its arc features itself; use bits (2^bits feature "
                                    "columns)",
                          fit_intercept="an arc's score is its features' alone (no intercept); nothing to set",
                          intercept_scaling="an arc's score is its features' alone (no intercept); nothing to set")

#: StructuredLearner's own equivalents, over `STRUCTURED_EQUIVALENTS`: it has no fit,
#: no passes and no loss; its caller steps it an example at a time with the gradients
#: of its own decoder.
_CALLER_STOPS = ("the StructuredLearner has no passes and no stopping rule: its caller steps it an example at a "
                 "time (step, step_decoded, step_rows) and decides when to stop, for example by scoring its "
                 "own held-out examples between passes")
_CALLER_ORDERS = ("the StructuredLearner steps on the examples its caller gives, in the caller's order; shuffle "
                  "them before stepping (SequenceTagger and DependencyParser take shuffle and random_state)")
_KEEP_STEPPING = ("the StructuredLearner starts from zero weights; keep stepping the same learner to continue "
                  "(it pickles mid-stream)")
LEARNER_EQUIVALENTS = dict(
    STRUCTURED_EQUIVALENTS,
    early_stopping=_CALLER_STOPS, validation_fraction=_CALLER_STOPS, n_iter_no_change=_CALLER_STOPS,
    tol=_CALLER_STOPS, max_iter=_CALLER_STOPS, shuffle=_CALLER_ORDERS, random_state=_CALLER_ORDERS,
    coef_init=_KEEP_STEPPING, intercept_init=_KEEP_STEPPING, warm_start=_KEEP_STEPPING,
    loss="the StructuredLearner takes its caller's gradients, so the caller's decoder makes the loss "
         "(perceptron, structured SVM or CRF gradients); SequenceTagger and DependencyParser take loss",
    verbose="the StructuredLearner runs no passes to report; its caller reports its own progress",
    class_weight="weigh each example with step's sample_weight",
    grow_features="n_features sets the rows' width; grow(n_features) adds feature columns",
)


class UnknownParameter(ValueError, TypeError):
    """A parameter fastprox's estimators do not take: a ValueError naming the
    fastprox equivalent (as the other parameter checks raise), and a TypeError, what
    Python raises for an unexpected keyword argument, so that code catching either
    catches it."""


def checking_names(init):
    """Decorate a public estimator's ``__init__``: a keyword argument it does not
    take raises `UnknownParameter` (`refuse_unknown`) instead of Python's bare
    TypeError. The signature that ``help`` and scikit-learn's introspection
    (get_params, clone, its estimator checks) read stays ``init``'s.

    Parameters
    ----------
    init : function
        The ``__init__``, of named parameters.

    Returns
    -------
    function
        ``init`` behind the check of its keyword arguments' names.
    """
    import functools    # (the estimators' imports: the command line's start-up does without them)
    import inspect
    taken = frozenset(list(inspect.signature(init).parameters)[1:])

    @functools.wraps(init)
    def checked(self, *args, **kwargs):
        refuse_unknown(type(self), kwargs.keys() - taken)
        init(self, *args, **kwargs)
    return checked


class NamedParameters:
    """Mixin, before scikit-learn's BaseEstimator: ``set_params`` refuses a
    parameter the estimator lacks as its constructor does (`refuse_unknown`)."""

    def set_params(self, **params):
        """scikit-learn's ``set_params``; a parameter the estimator lacks raises
        `UnknownParameter`, naming its fastprox equivalent.

        Parameters
        ----------
        **params : dict
            Parameters by name.

        Returns
        -------
        self : object
            The estimator.
        """
        refuse_unknown(type(self), params.keys() - self.get_params(deep=False).keys())
        return super().set_params(**params)


def refuse_unknown(owner, names):
    """Raise `UnknownParameter` for the parameters ``names`` that the estimator
    class ``owner`` lacks, naming each one's equivalent for that estimator (its
    ``_equivalents``: scikit-learn's names and the flat estimators' it does not take),
    else listing its parameters.

    Parameters
    ----------
    owner : type
        The estimator's class (its name, ``__init__``'s parameters and
        ``_equivalents`` make the message).
    names : collection of str
        The parameters given that its signature lacks; nothing is raised when empty.

    Raises
    ------
    UnknownParameter
        When ``names`` is not empty.
    """
    if not names:
        return
    import inspect
    equivalents = getattr(owner, "_equivalents", {})
    taken = ", ".join(list(inspect.signature(owner.__init__).parameters)[1:])
    parts = [f"{name}: {equivalents[name]}" if name in equivalents else
             f"{name}: not a parameter of {owner.__name__} (its parameters: {taken})" for name in sorted(names)]
    raise UnknownParameter(f"{owner.__name__} does not take {', '.join(map(repr, sorted(names)))}; "
                           + "; ".join(parts) + ".")


def schedule_of(learning_rate, power_t, schedule, batch_size):
    """The fastprox schedule that scikit-learn's ``learning_rate`` and ``power_t``
    name, checked against ``schedule`` (None: not given) and ``batch_size``.

    Parameters
    ----------
    learning_rate : None or str
        None: ``schedule`` decides (fastprox's parameter); else one of
        scikit-learn's learning rates.
    power_t : float
        invscaling's exponent: 0, 0.5 or 1 have a fastprox schedule.
    schedule : None or str
        fastprox's schedule parameter, which must agree with learning_rate when
        both are given.
    batch_size : int
        Rows per step: invscaling's t counts rows, fastprox's t steps, the same only
        with one row per step.

    Returns
    -------
    str or None
        The schedule the model trains with (None: the rule's default).

    Raises
    ------
    ValueError
        For a learning rate, or a power_t, without a fastprox schedule of the same
        steps (naming what to use), or one that contradicts ``schedule``.
    """
    if learning_rate is None:
        return schedule
    if isinstance(learning_rate, str) and learning_rate in UNMAPPED_RATES:
        raise ValueError(f"learning_rate={learning_rate!r}: {UNMAPPED_RATES[learning_rate]}.")
    if learning_rate == "constant":
        mapped = "constant"
    elif learning_rate == "optimal":
        mapped = "inv"
        if schedule is not None:
            raise ValueError(f"learning_rate='optimal' sets the schedule: its steps 1 / (alpha (t + t0)) are "
                             f"schedule='inv' with eta0 = 1 / alpha and Bottou's t0; drop schedule={schedule!r}, "
                             "or set learning_rate=None and give schedule, eta0 and t0.")
        if batch_size != 1:
            raise ValueError(f"learning_rate='optimal' counts t in rows, fastprox's schedules in steps of "
                             f"batch_size={batch_size} rows; use batch_size=1, or learning_rate=None with "
                             "schedule='inv', eta0 and t0 (eta0 / (t + t0) over the steps).")
    elif learning_rate == "invscaling":
        if isinstance(power_t, bool) or not isinstance(power_t, numbers.Real) or power_t not in INVSCALING:
            raise ValueError(f"learning_rate='invscaling' with power_t={power_t!r} has no fastprox schedule "
                             "(eta0 / t^power_t); use power_t=0.5 (schedule='invsqrt'), power_t=1 "
                             "(schedule='inv') or power_t=0 (schedule='constant').")
        mapped = INVSCALING[power_t]
        if mapped != "constant" and batch_size != 1:
            raise ValueError(f"learning_rate='invscaling' counts t in rows, fastprox's schedules in steps "
                             f"of batch_size={batch_size} rows; use schedule={mapped!r} (eta0 over a "
                             "function of the steps) or batch_size=1.")
    else:
        raise ValueError(f"learning_rate={learning_rate!r} is not supported; use None (fastprox's "
                         "schedule decides), 'constant', 'optimal' or 'invscaling' (with power_t 0.5 or 1).")
    if schedule is not None and schedule != mapped:
        raise ValueError(f"learning_rate={learning_rate!r} (power_t={power_t!r}) is schedule={mapped!r}, but "
                         f"schedule={schedule!r} was given; set one of them (learning_rate=None leaves "
                         "the schedule to `schedule`).")
    return mapped


def check_optimal(learning_rate, alpha, eta0, t0):
    """learning_rate="optimal" reads alpha, and only alpha: refuse alpha = 0 (as
    scikit-learn does), and an eta0 or a t0 given beside it, which it would override.

    Parameters
    ----------
    learning_rate : None or str
        scikit-learn's learning rate; nothing is checked unless "optimal".
    alpha : float
        The penalty weight (a number >= 0, checked before).
    eta0 : float or "auto"
        fastprox's base step: "auto" (not given) under "optimal".
    t0 : float
        fastprox's schedule offset: 0 (not given) under "optimal".

    Raises
    ------
    ValueError
        Naming the fix.
    """
    if learning_rate != "optimal":
        return
    if alpha == 0:
        raise ValueError("alpha must be > 0 since learning_rate is 'optimal': alpha sets its steps, "
                         "1 / (alpha (t + t0)) (scikit-learn's check); use alpha > 0 (penalty=None "
                         "keeps the penalty off), or another learning_rate.")
    for name, value, unset in (("eta0", eta0, "auto"), ("t0", t0, 0.0)):
        if value != unset:
            raise ValueError(f"learning_rate='optimal' sets its steps from alpha, 1 / (alpha (t + t0)) "
                             f"with Bottou's t0, and scikit-learn ignores eta0 under it; drop {name}={value!r}, "
                             "or set learning_rate=None and give schedule='inv', eta0 and t0 (steps "
                             "eta0 / (t + t0)).")


def optimal_init(alpha, slope):
    """scikit-learn's ``optimal_init`` for learning_rate="optimal" (its ``_sgd_fast``,
    after Bottou's SGD code): the typical weight typw = sqrt(1 / sqrt(alpha)), the
    first step initial_eta0 = typw / max(1, l'(-typw)) with l' the loss's derivative
    in the prediction at label 1, and optimal_init = 1 / (initial_eta0 alpha), so that
    the steps 1 / (alpha (optimal_init + t - 1)) begin at initial_eta0.

    Parameters
    ----------
    alpha : float
        The penalty weight, > 0.
    slope : callable
        p -> d loss(p, 1) / d p, the loss's derivative at label 1 (of every loss of
        scikit-learn's and fastprox's: <= 0 at p = -typw < 0, so that the max is 1).

    Returns
    -------
    float
        optimal_init.
    """
    typw = math.sqrt(1.0 / math.sqrt(alpha))
    initial_eta0 = typw / max(1.0, slope(-typw))
    return 1.0 / (initial_eta0 * alpha)


def check_n_jobs(n_jobs):
    """n_jobs: None or a non-zero integer, as scikit-learn takes it.

    Parameters
    ----------
    n_jobs : None or int
        SGDClassifier's threads over its one-vs-rest binary fits. fastprox's
        one-vs-rest trains the K outputs in one pass of one kernel, each row read
        once for all K (the work scikit-learn's threads share out), so the value
        is checked and otherwise unused.

    Raises
    ------
    ValueError
        For anything else.
    """
    if n_jobs is not None and (isinstance(n_jobs, bool) or not isinstance(n_jobs, numbers.Integral) or n_jobs == 0):
        raise ValueError(f"n_jobs={n_jobs!r} must be None or a non-zero integer (as scikit-learn's).")
