"""The interactions a command crosses (``-q``, ``--cubic``, ``--interactions``): VW
text's namespaces or, for LIBSVM data, the groups of ``--groups``; and how a model
file records them with the reader's hashing and VW text's namespaces selected
(``--ignore``, ``--keep``, ``--ignore-linear``) (``fitted.input_``,
fastprox.model_io.format), for ``fastprox predict`` and ``train -i`` to read a file
as training did."""
import shlex

from .vw.reader import SELECTIONS, interaction_terms, namespace_selection

#: The formats a model file's ``input_`` names (the commands' --format), and how
#: messages name them.
FORMATS = {"vw": "Vowpal Wabbit's", "libsvm": "LIBSVM"}


def terms_of(format, quadratic=(), cubic=(), interactions=()):
    """The terms crossed: VW's (bytes of namespaces) for ``format`` "vw", LIBSVM
    groups' (tuples of group ids) for "libsvm" (`interaction_terms`)."""
    return interaction_terms(quadratic, cubic, interactions, groups=format == "libsvm")


def spelled(terms):
    """The terms as ``--interactions`` spells them: ``"ab"``, ``"0,1"``."""
    return [t.decode("ascii") if isinstance(t, bytes) else ",".join(map(str, t)) for t in terms]


def record(format, terms, bits, selection=None):
    """A model file's ``input_``: the data's format, the terms crossed, the bits and,
    for VW text, the namespaces selected (``selection``, namespace_selection's dict:
    its entries, none when every namespace is read, as files written before)."""
    return {"format": format, "interactions": spelled(terms), "bits": int(bits), **(selection or {})}


def recorded_selection(recorded):
    """The namespaces selected of a model file's ``input_`` (`record`): its entries
    of SELECTIONS, as namespace_selection's dict (empty: every namespace read, as in
    files written before the selection was recorded); ValueError for entries not
    spelled as namespace_selection spells them, or over LIBSVM data."""
    selection = {key: recorded[key] for key in SELECTIONS if key in recorded}
    if selection and recorded["format"] != "vw":
        raise ValueError(f"{', '.join(selection)} select VW text's namespaces, not LIBSVM data's")
    try:
        same = namespace_selection(**selection) == selection
    except ValueError:
        same = False
    if not same:
        shown = ", ".join(f"{key}={value[:40]!r}" for key, value in selection.items())
        raise ValueError(f"{shown} are not namespaces as fastprox records them "
                         f"(distinct, in byte order, --keep without --ignore)")
    return selection


def selection_options(selected):
    """Namespace selections, (SELECTIONS key, argument) pairs (namespace_selection's
    dict's items, or the options as given), as the command line spells them: ``--keep
    ab --ignore-linear a`` (each argument quoted for a shell: ``--ignore ' '``)."""
    return " ".join(f"--{key.replace('_', '-')} {shlex.quote(value)}" for key, value in selected)


def recorded_terms(recorded):
    """The terms of a model file's ``input_`` (`record`); ValueError for a format
    other than FORMATS or interactions not spelled as `record` writes them."""
    if recorded["format"] not in FORMATS:
        raise ValueError(f"format={recorded['format']!r} must be one of {list(FORMATS)}")
    given = recorded["interactions"]
    try:
        terms = terms_of(recorded["format"], interactions=given) if all(type(t) is str for t in given) else None
    except ValueError:
        terms = None
    if terms is None or spelled(terms) != given:
        shown = repr(given) if len(repr(given)) <= 80 else repr(given)[:80] + "..."
        raise ValueError(f"interactions={shown} are not terms of {recorded['format']} data as fastprox "
                         f"records them (distinct, each as --interactions spells it)")
    return terms


def describe(recorded):
    """The record in the commands' words, for `fastprox info`: ``VW text, --hash-bits 18,
    --interactions ab --interactions abc`` (or ``no interactions``), then the
    namespaces selected (``--ignore a``; nothing when all are read)."""
    what = "VW text" if recorded["format"] == "vw" else "LIBSVM with --groups"
    terms = " ".join(f"--interactions {term}" for term in recorded["interactions"])
    selected = selection_options(recorded_selection(recorded).items())
    return f"{what}, --hash-bits {recorded['bits']}, {terms or 'no interactions'}" + (", " + selected) * bool(selected)
