"""Read CRFsuite's attribute files: items whose features are written out.

Format (CRFsuite's ``crfsuite learn`` input): one item per line,
``LABEL<TAB>ATTR<TAB>ATTR...``, a blank line between sequences. An attribute
is ``NAME`` or ``NAME:WEIGHT`` (weight 1 when omitted); in names and labels
``\\:`` stands for a colon and ``\\\\`` for a backslash (any other backslash
is itself). Runs of tabs count as one; spaces belong to names. A line
``@weight:W`` in a sequence gives the whole sequence the weight ``W``
(CRFsuite's instance weight; 1 otherwise). Attributes become features
directly (`fastprox.structured.features.AttributeFeatures`).

Stricter than CRFsuite, which reads these silently otherwise: a weight that
is not a finite number, a second unescaped ``:`` in a field, an attribute
without a name, a label with a ``:`` (CRFsuite would cut the label there),
and any other ``@`` declaration are errors naming the line.
"""
import math

from .lines import located, numbered_lines, source_name

__all__ = ["read_crfsuite", "AttributeSequence"]

_ESCAPED = {":": ":", "\\": "\\"}


class AttributeSequence:
    """One sequence of a CRFsuite attribute file.

    Attributes
    ----------
    labels : tuple of str
        One label per item.
    attributes : tuple of str
        Every item's attribute names, item after item.
    weights : tuple of float or None
        The attributes' weights, aligned with ``attributes``; None when all
        are 1 (no ``:WEIGHT`` in the sequence).
    counts : tuple of int
        The number of attributes of each item.
    weight : float
        The sequence's weight (``@weight``; 1 by default).
    source, line
        The file and the sequence's first line, for messages.
    item_lines : tuple of int
        The line of each item in the file (``@weight`` lines may stand between
        items), for messages naming an item.
    """
    __slots__ = ("labels", "attributes", "weights", "counts", "weight", "source", "line", "item_lines")

    def __init__(self, labels, attributes, weights, counts, weight, source, line, item_lines):
        self.labels, self.attributes, self.weights, self.counts = labels, attributes, weights, counts
        self.weight, self.source, self.line, self.item_lines = weight, source, line, item_lines

    def __len__(self):
        return len(self.labels)

    def __repr__(self):
        return f"<AttributeSequence of {len(self)} items from {self.source}:{self.line}>"


def read_crfsuite(source):
    """Iterate over the sequences of a CRFsuite attribute file, one at a time.

    Parameters
    ----------
    source : str, path, file object or "-"
        The file (plain, gzip, bzip2 or xz), ``-`` for standard input, or a
        binary file object.

    Returns
    -------
    iterator of AttributeSequence
        Read lazily: memory holds one sequence at a time.

    Raises
    ------
    ValueError
        At iteration, ``NAME:LINE: ...`` for the malformed lines listed in
        the module's description, text that is not UTF-8, or binary data.
    """
    return _sequences(source)


def _sequences(source):
    name = source_name(source)
    block = _Block()
    for number, text in numbered_lines(source):
        fields = [f for f in text.split("\t") if f]
        if not fields:
            if block.first:
                yield block.sequence(name)
                block = _Block()
            continue
        block.first = block.first or number
        if ":" not in text and "\\" not in text and not fields[0].startswith("@"):
            block.item(fields[0], fields[1:], None, number)     # the common line: names only
            continue
        label, value = _split(fields[0])
        if label.startswith("@"):
            block.declare(label, value, name, number)
            continue
        if value is not None:
            raise located(name, number, f"label {fields[0]!r} holds ':'; escape a colon in a label "
                                        f"as \\: (CRFsuite would read the label {label!r})")
        attributes, weights = [], []
        for field in fields[1:]:
            attribute, weight = _field(field, name, number)
            if not attribute:
                raise located(name, number, f"attribute {field!r} has no name; write NAME or "
                                            f"NAME:WEIGHT (escape a colon in a name as \\:)")
            attributes.append(attribute)
            weights.append(1.0 if weight is None else weight)
        block.item(label, attributes, weights, number)
    if block.first:
        yield block.sequence(name)


def _field(field, name, number):
    """``(name, weight)`` of an attribute: its unescaped name and the float after
    an unescaped ``:`` (None when there is none)."""
    text, value = _split(field)
    return text, None if value is None else _weight(value, text, name, number)


def _split(field):
    """(text, what follows its first unescaped ``:`` or None), ``\\:`` and
    ``\\\\`` in the text read as ``:`` and ``\\``."""
    if "\\" in field:
        return _unescape(field)
    text, colon, value = field.partition(":")
    return text, value if colon else None


def _weight(value, text, name, number):
    """The finite float ``value`` (the weight of ``text``)."""
    if ":" in value:
        raise located(name, number, f"field {text + ':' + value!r} has a second ':'; escape a "
                                    f"colon in a name as \\: (NAME:WEIGHT)")
    try:
        weight = float(value)
    except ValueError:
        weight = math.nan
    if not math.isfinite(weight):
        raise located(name, number, f"weight {value!r} of {text!r} is not a finite number; write "
                                    f"NAME:WEIGHT with a number, or NAME for weight 1 (escape a "
                                    f"colon in a name as \\:)")
    return weight


def _unescape(field):
    """(name, text after the first unescaped colon or None), with ``\\:`` and
    ``\\\\`` in the name read as ``:`` and ``\\``."""
    out, i, n = [], 0, len(field)
    while i < n:
        c = field[i]
        if c == "\\" and i + 1 < n and field[i + 1] in _ESCAPED:
            out.append(field[i + 1])
            i += 2
            continue
        if c == ":":
            return "".join(out), field[i + 1:]
        out.append(c)
        i += 1
    return "".join(out), None


class _Block:
    """The lines of the sequence being read."""
    __slots__ = ("first", "labels", "attributes", "weights", "counts", "weight", "weighted", "lines")

    def __init__(self):
        self.first, self.labels, self.attributes, self.weights, self.counts = 0, [], [], [], []
        self.weight, self.weighted, self.lines = 1.0, False, []

    def item(self, label, attributes, weights, line):
        """Add an item: its label, attribute names and weights (None: all 1), and
        its line."""
        self.labels.append(label)
        self.lines.append(line)
        self.counts.append(len(attributes))
        self.attributes.extend(attributes)
        if weights is None:
            self.weights.extend([1.0] * len(attributes))
        else:
            self.weights.extend(weights)
            self.weighted = True

    def declare(self, what, value, name, number):
        if what != "@weight":
            raise located(name, number, f"unknown declaration {what!r}; the only one is "
                                        f"@weight:W, the sequence's weight")
        weight = None if value is None else _weight(value, what, name, number)
        if weight is None or weight < 0:
            raise located(name, number, "@weight needs a weight of 0 or more: @weight:W")
        self.weight = weight

    def sequence(self, name):
        if not self.labels:
            raise located(name, self.first, "sequence without items (only @ declarations); "
                                            "a sequence needs at least one LABEL line")
        weights = tuple(self.weights) if self.weighted else None
        return AttributeSequence(tuple(self.labels), tuple(self.attributes), weights,
                                 tuple(self.counts), self.weight, name, self.first, tuple(self.lines))
