"""The functions of a token that feature expressions apply (``lower(w[0])``).

Each maps a string to a string, as the feature functions people write for
CRFsuite and sklearn-crfsuite do: ``lower``; ``shape``, the word's shape;
``prefixN`` and ``suffixN``, its first or last N characters (the whole word
when shorter), for any N from 1; ``isupper``, ``istitle`` and ``isdigit``,
``"True"`` or ``"False"`` as Python's ``str`` methods say. They are applied
to the distinct strings of a column, not to every item, so they cost little
whatever they do.
"""
import re

__all__ = ["FUNCTIONS", "resolve", "shape"]


def shape(word):
    """The word's shape: each upper-case letter ``X``, lower-case letter ``x``,
    digit ``d``, any other character itself; runs of one symbol collapsed.

    Examples
    --------
    >>> shape("McDonald's"), shape("1,000.5"), shape("U.S."), shape("iPhone15")
    ('XxXx'x', 'd,d.d', 'X.X.', 'xXxd')
    """
    out = []
    for c in word:
        s = "X" if c.isupper() else "x" if c.islower() else "d" if c.isdigit() else c
        if not out or out[-1] != s:
            out.append(s)
    return "".join(out)


#: The functions without a parameter, by name.
FUNCTIONS = {
    "lower": str.lower,
    "shape": shape,
    "isupper": lambda s: str(s.isupper()),
    "istitle": lambda s: str(s.istitle()),
    "isdigit": lambda s: str(s.isdigit()),
}
_AFFIX = re.compile(r"(prefix|suffix)([1-9][0-9]*)")


def resolve(name):
    """The function called ``name`` (one of :data:`FUNCTIONS`, ``prefixN`` or
    ``suffixN``); ValueError naming the choices otherwise."""
    if name in FUNCTIONS:
        return FUNCTIONS[name]
    match = _AFFIX.fullmatch(name)
    if match is None:
        raise ValueError(f"unknown function {name!r}; the functions are {', '.join(FUNCTIONS)}, "
                         f"prefixN and suffixN (N = 1, 2, ...)")
    n = int(match.group(2))
    return (lambda s: s[:n]) if match.group(1) == "prefix" else (lambda s: s[-n:])
