"""The checks of a model file's header: a JSON object of exactly the format's
entries (fastprox.model_io.format), each of its JSON type and in its range, the
parameters valid and the kernel's kind theirs; ValueError naming the entry
otherwise. Entries that earlier versions lack are added first
(fastprox.model_io.upgrades)."""
import math
from collections import namedtuple
from contextlib import contextmanager
from types import SimpleNamespace

from .._core import check_same_hashing, check_same_kernel
from .._registry import LOSSES, PENALTIES, SCHEDULES, UPDATES
from .._interactions import recorded_selection, recorded_terms
from ..vw.reader import SELECTIONS
from .._validation import (MAX_HASH_BITS, CLASSIFICATION_LOSSES, MULTI_CLASS, MULTINOMIAL_LOSSES, REGRESSION_LOSSES,
                           check_hash_bits, check_number, check_offset, check_one_of, check_params,
                           check_single_rows)
from .format import (CLASS_NAMES, FITTED, INPUT, PROGRESS, PROGRESS_WEIGHTS, FORMAT, HEADER, INT_MAX, KIND_NAMES, LEARNER, LONG_MAX,
                     MAX_STEPS, PARAMS, READS, SCALARS, ZERO_BASED)
from .upgrades import param_keys, upgraded

Header = namedtuple("Header", "version name params learner scalars fitted")


def check_header(header):
    """The header's sections, once it is a model's: a JSON object of exactly the
    format's entries, each of its JSON type and in its range, the parameters
    valid and the kernel's kind theirs (ValueError naming the entry otherwise)."""
    if type(header) is not dict or header.get("format") != FORMAT:
        raise ValueError(f"not a fastprox model file (no format {FORMAT!r} in its header)")
    version = header.get("version")
    if type(version) is not int or version not in READS:
        raise ValueError(f"model format version {short(version)}, but this fastprox reads "
                         f"versions {READS[0]} to {READS[-1]}; load it with the fastprox that "
                         "wrote it, or retrain")
    _check_keys("header", header, HEADER)
    name = header["class"]
    if name not in CLASS_NAMES:
        raise ValueError(f"unknown model class {short(name)}; expected one of {sorted(CLASS_NAMES)}")
    losses = CLASSIFICATION_LOSSES if name == "ProxClassifier" else REGRESSION_LOSSES
    header = upgraded(header, version)
    spec = _check_learner(_typed("learner", header["learner"], LEARNER), losses)
    scalars = _check_scalars(_typed("scalars", header["scalars"], SCALARS), spec)
    fitted = _check_fitted(header["fitted"], spec, scalars, version)
    params = _check_params(header["params"], name, version, losses)
    _check_kind(name, params, spec)
    check_same_hashing(params, fitted["hash_bits_"])
    return Header(version, name, params, spec, scalars, fitted)


def _check_keys(section, entries, keys):
    """Refuse a section that is not a JSON object of exactly these keys."""
    if type(entries) is not dict:
        raise ValueError(f"the header's {section} entry is {short(entries)}, not a JSON object")
    missing, unknown = sorted(set(keys) - entries.keys()), sorted(entries.keys() - set(keys))
    if missing or unknown:
        raise ValueError(f"the header's {section} entry " + " and ".join(
            [f"lacks {missing}"] * bool(missing) + [f"has unknown entries {short(unknown)}"] * bool(unknown)))


def _typed(section, entries, types):
    """The section ``entries`` once it holds exactly the keys of ``types``, each
    value of one of its JSON types (integers of 64 bits at most)."""
    _check_keys(section, entries, types)
    for key, kinds in types.items():
        value = entries[key]
        if type(value) not in kinds or (type(value) is int and not -LONG_MAX - 1 <= value <= LONG_MAX):
            raise ValueError(f"{section}.{key}={short(value)} must be "
                             f"{' or '.join(KIND_NAMES[kind] for kind in kinds)}"
                             f"{' of 64 bits at most' if int in kinds else ''}")
    return entries


def short(value):
    """repr(value), cut short (a file's value may be long)."""
    text = repr(value)
    return text if len(text) <= 80 else text[:80] + "..."


@contextmanager
def in_section(section):
    """Prefix the ValueErrors of the checks of a section with its name."""
    try:
        yield
    except ValueError as e:
        raise ValueError(f"{section}: {e}") from None


def _check_learner(spec, losses):
    """The kernel's arguments, checked as the estimator checks its parameters
    (the resolved eta0 and delta are numbers, never "auto")."""
    for key, options in (("update", UPDATES), ("schedule", SCHEDULES), ("penalty", PENALTIES),
                         ("loss", LOSSES)):
        if spec[key] not in options:
            raise ValueError(f"unknown kernel option {short(spec[key])} in the header's learner entry")
    with in_section("learner"):
        check_number("n_features", spec["n_features"], 0, high=LONG_MAX, integer=True)
        check_number("n_outputs", spec["n_outputs"], 1, high=INT_MAX, integer=True)
        check_params(SimpleNamespace(**dict(spec, t0=0.0), batch_size=1, max_iter=1), losses)
        check_offset(spec["t0"], spec["update"], spec["schedule"], lowest=-1.0)   # (optimal's may be < 0)
        check_single_rows(spec["step"], spec["schedule"], spec["multinomial"])
        if spec["ovr"] and spec["multinomial"]:
            raise ValueError("ovr and multinomial are both true")
        if spec["multinomial"]:
            check_one_of("loss", spec["loss"], MULTINOMIAL_LOSSES)
    return spec


def _check_scalars(scalars, spec):
    """The kernel's counters and cumulants in their ranges."""
    with in_section("scalars"):
        check_number("t", scalars["t"], 0, high=MAX_STEPS, integer=True)
        for key in ("n_ops", "since_rebase"):
            check_number(key, scalars[key], 0, high=LONG_MAX, integer=True)
        check_number("heap_size", scalars["heap_size"], 0, high=spec["n_features"] * spec["n_outputs"],
                     integer=True)
        check_number("P", scalars["P"], 0.0, low_open=True, high=1.0)
        check_number("Q", scalars["Q"], 0.0)
        check_number("N", scalars["N"], 0.0)
        check_number("SP", scalars["SP"], 0.0)
        ulp = math.ulp(scalars["SP"])   # (double-double's low part, as the rows' SP_lo: `checks.check_layout`)
        check_number("SP_lo", scalars["SP_lo"], -ulp, high=ulp)
    return scalars


def _check_fitted(fitted, spec, scalars, version):
    """The fitted attributes, those the kernel also holds equal to its; the optional
    ``progress_`` (`check_progress`), (version 8) ``input_`` (`check_input`) and
    (version 9) ``zero_based_`` (true or false)."""
    optional = ("progress_",) + ("input_",) * (version >= 8) + ("zero_based_",) * (version >= 9)
    extra = {key: fitted.pop(key) for key in optional if key in fitted} if type(fitted) is dict else {}
    fitted = _typed("fitted", fitted, FITTED)
    if "progress_" in extra:
        fitted["progress_"] = check_progress(extra["progress_"])
    if "input_" in extra:
        fitted["input_"] = check_input(extra["input_"], spec["n_features"])
    if "zero_based_" in extra:
        fitted.update(_typed("fitted", {"zero_based_": extra["zero_based_"]}, {"zero_based_": ZERO_BASED}))
    if fitted["n_features_in_"] != spec["n_features"]:
        raise ValueError(f"n_features_in_={fitted['n_features_in_']} but the model has "
                         f"{spec['n_features']} features")
    if fitted["t_"] != scalars["t"]:
        raise ValueError(f"t_={fitted['t_']} but the kernel has taken {scalars['t']} steps")
    with in_section("fitted"):
        check_number("n_iter_", fitted["n_iter_"], 0, integer=True)
        check_hash_bits(fitted["hash_bits_"])
    bits = fitted["hash_bits_"]
    if bits is not None and spec["n_features"] != 1 << bits:
        raise ValueError(f"hash_bits_={bits} but the model has {spec['n_features']} features, not 2^{bits}")
    return fitted


def check_input(recorded, n_features):
    """``fitted.input_`` (`INPUT`, and the namespaces selected where given, SELECTIONS):
    a known format, interactions the reader takes (fastprox._interactions.recorded_terms),
    a selection of VW text as the reader spells it (recorded_selection), bits in range
    and, for VW text, the model's width 2^bits."""
    selected = {key: (str,) for key in SELECTIONS if type(recorded) is dict and key in recorded}
    recorded = _typed("fitted.input_", recorded, {**INPUT, **selected})
    with in_section("fitted.input_"):
        check_number("bits", recorded["bits"], 1, high=MAX_HASH_BITS, integer=True)
        recorded_terms(recorded)
        recorded_selection(recorded)
    if recorded["format"] == "vw" and n_features != 1 << recorded["bits"]:
        raise ValueError(f"fitted.input_: VW text of bits={recorded['bits']} but the model has {n_features} "
                         f"features, not 2^{recorded['bits']}")
    return recorded


def check_progress(progress):
    """``fitted.progress_`` (`PROGRESS`, and `PROGRESS_WEIGHTS` where given): counters
    that are non-negative integers or finite numbers, labels as [label, count] pairs or
    [n, mean, m2]. A weight sum not given (a file written before they were kept) is
    derived: the examples' count, which it is when every importance weight is 1."""
    given = {key: kinds for key, kinds in PROGRESS_WEIGHTS.items() if type(progress) is dict and key in progress}
    progress = _typed("fitted.progress_", progress, {**PROGRESS, **given})
    with in_section("fitted.progress_"):
        for key in ("examples", "last_examples", "features"):
            check_number(key, progress[key], 0, integer=True)
        for key in ("loss_sum", "last_loss_sum", *given):
            check_number(key, progress[key], 0.0)
        progress.setdefault("weight_sum", progress["examples"])
        progress.setdefault("last_weight_sum", progress["last_examples"])
        labels = progress["labels"]
        pairs = all(type(p) is list and len(p) == 2 and all(type(v) in (int, float) for v in p) for p in labels)
        moments = len(labels) == 3 and all(type(v) in (int, float) for v in labels)
        if not (pairs or moments) or len(labels) > INT_MAX:
            raise ValueError(f"labels={short(labels)} must be [label, count] pairs or [n, mean, m2]")
    return progress


def _check_params(params, name, version, losses):
    """get_params() of the class: its keys (`param_keys`), and values that its fit
    accepts and that the kernel can take (batch_size is a C int)."""
    params = _typed("params", params, {key: PARAMS[key] for key in param_keys(name, version)})
    with in_section("params"):
        check_params(SimpleNamespace(**{**params, "class_weight": class_weight_of(params.get("class_weight"))}),
                     losses)
        check_number("batch_size", params["batch_size"], 1, high=INT_MAX, integer=True)
        if "multi_class" in params:
            check_one_of("multi_class", params["multi_class"], MULTI_CLASS)
    return params


def class_weight_of(value):
    """A saved class_weight as the estimator takes it: its (class, weight) pairs (JSON
    has no dict with number keys) as a dict."""
    if not isinstance(value, list):
        return value
    if not all(isinstance(pair, list) and len(pair) == 2 and isinstance(pair[0], (int, float, str))
               for pair in value):
        raise ValueError("class_weight must be a list of [class, weight] pairs")
    return dict(map(tuple, value))


def _check_kind(name, params, spec):
    """The model's kind is the parameters': the kernel's arguments are theirs
    (`check_same_kernel`), its outputs those of its class (one for a regressor and
    for two classes; K one-vs-rest or multinomial ones for K > 2 classes)."""
    K, ovr, multinomial = spec["n_outputs"], spec["ovr"], spec["multinomial"]
    if name == "ProxRegressor" or K == 1:
        if K != 1 or ovr or multinomial:
            raise ValueError(f"learner: a {name} of {K} output(s) with ovr={ovr} and multinomial="
                             f"{multinomial}; expected one output, neither ovr nor multinomial")
    elif K == 2 or ovr == multinomial:
        raise ValueError(f"learner: {K} outputs with ovr={ovr} and multinomial={multinomial}; a "
                         "classifier of K > 2 classes has K outputs, either one-vs-rest or multinomial")
    check_same_kernel(params, SimpleNamespace(**spec))


