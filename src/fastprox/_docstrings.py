"""numpydoc docstrings that share entries: an estimator's or a function's
Parameters (and Attributes) taken from another's where they mean the same, so
that each is written once (ProxRegressor's from ProxClassifier's, iter_libsvm's
from load_libsvm's). Without imports: the LIBSVM reader's start-up is the
command line's."""


def cleandoc(doc):
    """A docstring as inspect.cleandoc gives it (first line stripped, the others
    dedented by their common indentation), without importing inspect."""
    first, *rest = doc.expandtabs().split("\n")
    indents = [len(line) - len(line.lstrip()) for line in rest if line.strip()]
    cut = min(indents, default=0)
    return "\n".join([first.strip()] + [line[cut:] for line in rest]).strip("\n")


def parameter_names(obj):
    """The names of a function's parameters (a class's: its __init__'s, without
    self; a checked __init__'s, `_sklearn_names.checking_names`: the one it wraps), in
    their order."""
    function = obj.__init__ if isinstance(obj, type) else obj
    code = getattr(function, "__wrapped__", function).__code__
    names = code.co_varnames[:code.co_argcount + code.co_kwonlyargcount]
    return [n for n in names if n != "self"]


def sections(doc):
    """The cleaned docstring `doc` as (its text before the first section,
    {section title: its text}), numpydoc's sections in their order."""
    lines = doc.split("\n")
    titles = [i for i in range(len(lines) - 1)
              if lines[i] and lines[i + 1] == "-" * len(lines[i]) and not lines[i].startswith(" ")]
    bounds = titles + [len(lines)]
    head = "\n".join(lines[:titles[0]] if titles else lines)
    return head, {lines[i]: "\n".join(lines[i + 2:end]).strip("\n") for i, end in zip(titles, bounds[1:])}


def entries(text):
    """The entries of a section's text: {name: its lines (the "name : type" line
    and its description)}, in their order."""
    found = {}
    for line in text.split("\n"):
        if line and not line.startswith(" "):
            name = line.split(" : ")[0]
            found[name] = []
        if found and (line or found[name]):
            found[name].append(line)
    return {name: "\n".join(lines).rstrip() for name, lines in found.items()}


def with_shared_entries(obj, source, drop=(), also=()):
    """obj's docstring with the entries it shares with `source` (a class or a
    function) taken from source's docstring.

    Parameters
    ----------
    obj : class or function
        Whose docstring is completed: its own entries and sections are kept.
    source : class or function
        Whose docstring holds the shared entries.
    drop : tuple of str, default=()
        source's attributes that obj does not have.
    also : tuple of str, default=()
        source's sections (say "Returns") that obj takes whole where it lacks
        them.

    Returns
    -------
    str
        The docstring: each parameter of obj's signature, in its order, obj's own
        entry or else source's (or its bare name, which the manual's numpydoc
        validation refuses); obj's own attributes, then source's but those in
        `drop`, where source has attributes; the sections of `also`; obj's other
        sections as written.
    """
    head, own = sections(cleandoc(obj.__doc__))
    _, shared = sections(cleandoc(source.__doc__))
    own_params, params = entries(own.get("Parameters", "")), entries(shared.get("Parameters", ""))
    names = parameter_names(obj)
    parts = {"Parameters": "\n".join(own_params.get(n) or params.get(n, n) for n in names)} if names else {}
    if "Attributes" in shared:
        attributes = entries(own.get("Attributes", ""))
        attributes.update((n, t) for n, t in entries(shared["Attributes"]).items()
                          if n not in attributes and n not in drop)
        parts["Attributes"] = "\n".join(attributes.values())
    parts.update((title, own.get(title, shared[title])) for title in also)
    parts.update((title, text) for title, text in own.items() if title not in parts)
    return head.rstrip("\n") + "\n\n" + "\n\n".join(f"{t}\n{'-' * len(t)}\n{text}" for t, text in parts.items()) + "\n"


def sharing(source, drop=(), also=()):
    """A decorator that gives a class or function `with_shared_entries`'s docstring.

    Parameters
    ----------
    source : class or function
        Whose docstring holds the shared entries.
    drop : tuple of str, default=()
        source's attributes that the decorated class does not have.
    also : tuple of str, default=()
        source's sections that the decorated object takes whole where it lacks
        them.

    Returns
    -------
    callable
        The decorator, which returns the object it is given.
    """
    def decorate(obj):
        obj.__doc__ = with_shared_entries(obj, source, drop, also)
        return obj
    return decorate
