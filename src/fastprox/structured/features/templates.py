"""Feature templates: which values around an item make up a feature.

A :class:`Template` is a tuple of atoms, each the value of a column at an
offset from the item (``w[-1]``: the previous word), possibly through
functions (``lower(w[0])``); at each item the atoms' values, joined by the
template's literal text, name the feature (``U05:He/said``). A template
with no atom is a constant feature (a bias). Out-of-sequence positions read
CRF++'s placeholders: ``_B-1`` for the item before the first, ``_B-2``
before that, ``_B+1`` after the last, and so on (:func:`placeholder`).

:class:`Templates` is the parsed list with where it came from, written
back as text (``lines``) to be parsed again: CRF++ template lines
(`fastprox.structured.features.crfpp`) or feature expressions
(`fastprox.structured.features.expressions`).
"""
from typing import NamedTuple

__all__ = ["Atom", "Template", "Templates", "placeholder"]


def placeholder(distance):
    """CRF++'s value of a position ``distance`` items before the sequence
    (negative) or after it (positive): ``_B-1``, ``_B+2``..."""
    return f"_B{distance:+d}"


class Atom(NamedTuple):
    """The value of ``column`` at ``offset`` items from the current one, through
    ``functions`` (names, innermost first). ``column`` is a name, or a CRF++
    column number until the columns are known (`Template.resolved`)."""
    column: object
    offset: int
    functions: tuple = ()


class Template:
    """One template: its text as written, its atoms, and the literal pieces
    around them (one more piece than atoms) that name its features.

    Parameters
    ----------
    text : str
        The template as written (a CRF++ line, an expression).
    atoms : tuple of Atom
    pieces : tuple of str
        ``pieces[0] + value_0 + pieces[1] + ... + value_last + pieces[-1]``
        is a feature's name.
    line : int
        Where the template was written (its line in a template file, its
        position in a list of expressions), for messages.
    """
    __slots__ = ("text", "atoms", "pieces", "line")

    def __init__(self, text, atoms, pieces, line):
        if len(pieces) != len(atoms) + 1:
            raise ValueError("a template has one more literal piece than atoms")
        self.text, self.atoms, self.pieces, self.line = text, tuple(atoms), tuple(pieces), line

    def feature_name(self, values):
        """The name of the feature whose atoms take ``values``."""
        out = [self.pieces[0]]
        for value, piece in zip(values, self.pieces[1:]):
            out += [value, piece]
        return "".join(out)

    def resolved(self, names):
        """This template with CRF++ column numbers replaced by ``names[number]``."""
        atoms = tuple(a._replace(column=names[a.column]) if isinstance(a.column, int) else a
                      for a in self.atoms)
        return Template(self.text, atoms, self.pieces, self.line)

    def __repr__(self):
        return f"Template({self.text!r})"


class Templates:
    """A parsed list of templates.

    Attributes
    ----------
    kind : {"crfpp", "expressions"}
        The syntax they were written in.
    lines : tuple of str
        Their text, enough to parse them again (a CRF++ template file's lines,
        comments and blank lines left out; the expressions).
    templates : tuple of Template
        One per feature group, in order.
    transitions : bool
        Whether a CRF++ file asked for label transitions (a plain ``B``
        line); expressions leave that to the learner (True).
    source : str
        Where they came from, for messages.
    """
    __slots__ = ("kind", "lines", "templates", "transitions", "source")

    def __init__(self, kind, lines, templates, transitions, source):
        self.kind, self.lines, self.templates = kind, tuple(lines), tuple(templates)
        self.transitions, self.source = bool(transitions), source

    def __len__(self):
        return len(self.templates)

    def __iter__(self):
        return iter(self.templates)

    def __repr__(self):
        return f"<Templates: {len(self)} {self.kind} templates from {self.source}>"
