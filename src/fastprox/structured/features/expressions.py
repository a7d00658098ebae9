"""Parse feature expressions: templates written with column names.

The mini-language of the feature functions people write for CRFsuite and
sklearn-crfsuite, one template per expression:

- ``w[0]``, ``w[-1]``, ``pos[2]``: the column ``w`` (``pos``) at that offset
  from the item; any offset, out-of-sequence positions reading CRF++'s
  placeholders ``_B-1``, ``_B+1``...;
- ``lower(w[0])``, ``shape(w[0])``, ``prefix3(w[0])``, ``suffix2(lower(w[1]))``:
  functions of the value (`fastprox.structured.features.functions`), not
  applied to placeholders;
- ``w[-1]|w[0]``, ``pos[0]|pos[1]``: conjunctions, one feature per
  combination of values;
- ``bias``: a constant feature of every item.

Column names are identifiers (letters, digits, ``_``, not starting with a
digit). A feature is named ``EXPRESSION=VALUE|VALUE`` (``w[-1]|w[0]=He|said``).
"""
import re

from .functions import resolve
from .templates import Atom, Template, Templates

__all__ = ["parse_expressions", "BIAS"]

#: The expression of the constant feature.
BIAS = "bias"
_TOKEN = re.compile(r"\s*(?:([A-Za-z_][A-Za-z0-9_]*)|(-?[0-9]+)|(.))")


def parse_expressions(expressions, source="<expressions>"):
    """The templates of a list of feature expressions.

    Parameters
    ----------
    expressions : iterable of str
        One expression per template, e.g. ``["w[0]", "w[-1]|w[0]", "shape(w[0])"]``.
    source : str
        Their name in messages.

    Returns
    -------
    Templates
        One template per expression, in order.

    Raises
    ------
    ValueError
        For an expression that does not parse (naming it, its position in
        the list and the column of the problem), an unknown function, an
        expression given twice, or no expression at all.
    """
    if isinstance(expressions, str):
        raise ValueError(f"give the expressions as a list of strings, not one string "
                         f"({expressions!r}); a named template set (such as 'conll2000') is "
                         f"given by its name alone")
    texts, templates, seen = [], [], {}
    for number, text in enumerate(expressions, 1):
        if not isinstance(text, str):
            raise ValueError(f"{source}: expression {number} is {text!r}, not a string")
        text = text.strip()
        if text in seen:
            raise ValueError(f"{source}: expression {number} {text!r} repeats expression "
                             f"{seen[text]}; remove one")
        seen[text] = number
        texts.append(text)
        templates.append(_parse(text, number, source))
    if not templates:
        raise ValueError(f"{source}: no feature expression; give at least one, e.g. 'w[0]'")
    return Templates("expressions", texts, templates, True, source)


def _parse(text, number, source):
    if text == BIAS:
        return Template(text, (), (text,), number)
    tokens = _Tokens(text, number, source)
    atoms = [tokens.term()]
    while tokens.peek() == "|":
        tokens.take()
        atoms.append(tokens.term())
    if tokens.peek() is not None:
        tokens.fail("expected '|' between terms or the end of the expression")
    pieces = (text + "=",) + ("|",) * (len(atoms) - 1) + ("",)
    return Template(text, tuple(atoms), pieces, number)


class _Tokens:
    """A cursor over an expression's tokens (names, integers, punctuation)."""

    def __init__(self, text, number, source):
        self.text, self.number, self.source = text, number, source
        self.items = []
        for match in _TOKEN.finditer(text):
            if match.group(0).strip():
                self.items.append((match.start(match.lastindex), match.group(match.lastindex)))
        self.at = 0

    def peek(self):
        return self.items[self.at][1] if self.at < len(self.items) else None

    def take(self, expected=None, what=None):
        token = self.peek()
        if token is None or (expected is not None and token != expected):
            self.fail(f"expected {what or repr(expected)}")
        self.at += 1
        return token

    def term(self):
        """COLUMN[OFFSET] or FUNCTION(TERM)."""
        name = self.take(what="a column name or a function")
        if not (name[0].isalpha() or name[0] == "_"):
            self.fail(f"expected a column name or a function, not {name!r}", back=1)
        if self.peek() == "(":
            self.take()
            try:
                resolve(name)
            except ValueError as e:
                self.fail(str(e), back=2)
            inner = self.term()
            self.take(")")
            return inner._replace(functions=inner.functions + (name,))
        self.take("[", "'[' after the column name (w[0]) or '(' after a function")
        offset = self.take(what="an integer offset")
        if not re.fullmatch(r"-?[0-9]+", offset):
            self.fail(f"expected an integer offset, not {offset!r}", back=1)
        self.take("]")
        return Atom(name, int(offset))

    def fail(self, problem, back=0):
        at = self.items[self.at - back][0] + 1 if self.at - back < len(self.items) else len(self.text) + 1
        raise ValueError(f"{self.source}: expression {self.number} {self.text!r}, column {at}: "
                         f"{problem}. Write terms such as w[0], lower(w[-1]), prefix3(w[0]), "
                         f"joined by | (w[-1]|w[0]), or bias")
