"""Parse CRF++ template files into templates, with CRF++'s semantics.

A template file has one template a line: ``U`` lines (unigram: features of
an item, ``U05:%x[-1,0]/%x[0,0]``), ``B`` lines (bigram), ``#`` comments and
blank lines. ``%x[row,col]`` is the value of column ``col`` (0 the first,
the label not counted) at ``row`` items from the current one, ``row`` in
``-8..8`` as CRF++ allows; outside the sequence it is ``_B-1``, ``_B+1``...
(`fastprox.structured.features.templates.placeholder`). Everything else on
the line is literal text: the expanded line is the feature's name, exactly
CRF++'s string, so CRF++'s templates (its ``example/chunking/template``,
Bottou's crfsgd's) give CRF++'s features.

Differences, each an error rather than a silent change: a ``B`` line with
macros (label pairs conditioned on the input; the model's transitions do
not depend on the items: keep the plain ``B``), a ``U`` line written twice,
a file without ``U`` lines. Leading and trailing spaces are ignored (as
Bottou's crfsgd does; CRF++ refuses leading ones). Each ``U`` line is its
own group of columns: two lines never share a feature, even where CRF++
would merge equal strings from lines without distinct identifiers (``U:%x[0,0]``
and ``U:%x[0,1]`` for a word spelled as a tag); give every line its own
identifier, as CRF++'s documentation advises.
"""
import re

from ..io.lines import located, numbered_lines, source_name
from .templates import Atom, Template, Templates

__all__ = ["parse_crfpp", "read_crfpp", "MAX_ROW"]

#: CRF++'s largest |row| in %x[row,col] (kMaxContextSize).
MAX_ROW = 8
_MACRO = re.compile(r"%x\[(-?[0-9]+),([0-9]+)\]")


def parse_crfpp(text, source="<template>"):
    """The templates of a CRF++ template file's text.

    Parameters
    ----------
    text : str
        The file's content.
    source : str
        Its name in messages.

    Returns
    -------
    Templates

    Raises
    ------
    ValueError
        ``SOURCE:LINE: ...`` for a line that is neither ``U``, ``B``, a
        comment nor blank, a malformed ``%x[row,col]``, a row beyond
        ``-8..8``, and the differences from CRF++ listed above.
    """
    return _parse(enumerate(text.splitlines(), 1), source)


def read_crfpp(path):
    """The templates of the CRF++ template file ``path`` (plain or compressed,
    ``-`` for standard input); see :func:`parse_crfpp`."""
    return _parse(numbered_lines(path), source_name(path))


def _parse(lines, source):
    kept, templates, seen, transitions = [], [], {}, False
    for number, raw in lines:
        text = raw.strip()
        if not text or text.startswith("#"):
            continue
        if text[0] not in "UB":
            raise located(source, number, f"template {text!r} starts with neither U (a feature "
                                          f"of the item) nor B (label transitions); comments "
                                          f"start with #")
        atoms, pieces = _macros(text, source, number)
        kept.append(text)
        if text[0] == "B":
            if atoms:
                raise located(source, number, f"bigram template {text!r} has %x macros: label "
                                              f"pairs conditioned on the input are not supported "
                                              f"(the model's transitions do not depend on the "
                                              f"items); keep a plain B line")
            transitions = True
            continue
        if text in seen:
            raise located(source, number, f"template {text!r} repeats line {seen[text]}; remove "
                                          f"one (CRF++ would count the feature twice)")
        seen[text] = number
        templates.append(Template(text, atoms, pieces, number))
    if not templates:
        raise ValueError(f"{source}: no U template (a feature of the item such as "
                         f"U00:%x[0,0]); a template file needs at least one")
    return Templates("crfpp", kept, templates, transitions, source)


def _macros(text, source, number):
    """(atoms, literal pieces) of one template line."""
    atoms, pieces, start = [], [], 0
    at = text.find("%")
    while at >= 0:
        match = _MACRO.match(text, at)
        if match is None:
            raise located(source, number, f"bad macro at column {at + 1} of {text!r}; write "
                                          f"%x[ROW,COL] with integers, e.g. %x[-1,0] (no spaces; "
                                          f"a literal % is not possible in CRF++ templates)")
        row, col = int(match.group(1)), int(match.group(2))
        if abs(row) > MAX_ROW:
            raise located(source, number, f"row {row} of %x[{row},{col}] is beyond CRF++'s "
                                          f"-{MAX_ROW}..{MAX_ROW}; write a row within them (items "
                                          f"further away are outside CRF++'s context)")
        pieces.append(text[start:at])
        atoms.append(Atom(col, row))
        start = match.end()
        at = text.find("%", start)
    pieces.append(text[start:])
    return tuple(atoms), tuple(pieces)
