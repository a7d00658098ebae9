"""The classes of a classification stream, recognized as its labels come.

Without --classes a run is binary: its two labels are found in the stream
({-1, +1}, {0, 1} or any two integers), the larger the positive class as in
scikit-learn. Until the second label shows up, the first one's side is
unknown: the rows read so far are held (the trainer's buffer, LABEL_BUFFER_BYTES
at most) and trained on once it is. If the buffer fills with one label only,
the conventions decide: -1 and 0 are negative, +1 positive; the other class
is then whatever label comes next, provided it lies on the other side (else,
and for any other lone label, the run stops naming --classes). A third label
stops the run, naming its line: a multiclass stream needs --classes.
"""
from .._core import encode_labels
from .._libsvm import count_labels
from .spelling import COMMAND_LINE

#: Parsed rows held while the classes are unknown, in bytes: memory stays bounded
#: whatever the stream (a file that starts with a million rows of one label).
LABEL_BUFFER_BYTES = 64 << 20

#: A lone label's side by convention (-1: negative, +1: positive), and the classes
#: the model is saved with if no other label ever comes.
CONVENTIONS = {-1.0: (-1.0, [-1.0, 1.0]), 0.0: (-1.0, [0.0, 1.0]), 1.0: (1.0, [-1.0, 1.0])}


class Classes:
    """Label -> kernel target for a classification stream. ``given``: the sorted
    classes of --classes, or None to recognize two as they come; ``spelling``: how
    the messages name the settings (`fastprox.stream.spelling`)."""

    #: The same for the classes of a model continued (-i), which cannot change.
    CONTINUED = "the model continued (-i) has these classes only: train a new model, without -i"

    def __init__(self, given, multi_class, loss, spelling=COMMAND_LINE):
        self.classes = given
        self.spelling = spelling
        #: What to do about a label not among the classes given.
        self.advice = f"give {spelling.classes_name} with every label of the stream"
        self.multi_class, self.loss = multi_class, loss
        self.seen = []          # distinct labels met while recognizing (two at most)
        self.lone = None        # (label, side) decided by the conventions

    @property
    def settled(self):
        """Whether every row met so far has its target (the classes known, or a lone
        label's side decided by the conventions)."""
        return self.classes is not None or self.lone is not None

    @property
    def n_outputs(self):
        return 1 if self.classes is None or len(self.classes) == 2 else len(self.classes)

    def meet(self, y, where):
        """Take in a chunk's labels ``y`` before it is trained on; ``where(i)`` names
        the line of its row i for errors."""
        if self.classes is not None and self.lone is None and not self.seen:
            return          # given: encode_labels checks each label
        counts = dict.fromkeys(self.seen, 0)
        new = [label for label in counts if label not in self.seen] if count_labels(y, counts, 2) else None
        if new is None or not all(label.is_integer() for label in new):
            self._refuse(y, where)
        for label in new:       # two at most, and one if a label was met before
            if self.seen:
                self._second(label, y, where)
            else:
                self.seen.append(label)

    def _second(self, label, y, where):
        """The second label: the classes, unless a lone label's side contradicts it."""
        self.seen.append(label)
        if self.lone is not None:
            first, side = self.lone
            if (label > first) != (side < 0):
                kind = "positive" if side > 0 else "negative"
                raise ValueError(
                    f"{where(_first_row(y, label.__eq__))}: label {format_label(label)}, but the first rows' "
                    f"label {format_label(first)} was taken as the {kind} class (by convention -1 and 0 are "
                    f"negative, +1 positive) and the larger label is the positive one: give "
                    f"{self.spelling.classes([format_label(min(first, label)), format_label(max(first, label))])}")
            self.lone = None
        self.classes = sorted(self.seen)

    def _refuse(self, y, where):
        """Raise the error for the first label of y that is not an integer, or a third."""
        known = list(self.seen)
        for row, label in enumerate(y):
            if label in known:
                continue
            if not float(label).is_integer():
                raise ValueError(f"{where(row)}: label {label!r} is not a class (classes are integers); "
                                 f"for real-valued targets {self.spelling.regression}")
            if len(known) == 2:
                listed = self.spelling.classes(list(map(format_label, sorted(known + [label]))))
                first, second = map(format_label, known)
                raise ValueError(f"{where(row)}: a third label, {format_label(label)}, after {first} "
                                 f"and {second}: this looks like a multiclass stream: give "
                                 f"{listed} (every label of the stream)")
            known.append(label)

    def fall_back(self, name, rows):
        """Decide a lone label's side by the conventions (the buffer filled, or the
        stream ended, with one label only), or raise naming the classes' setting."""
        label = self.seen[0]
        if label not in CONVENTIONS:
            spelling = self.spelling
            raise ValueError(f"{name}: the first {rows} rows all have label {format_label(label)}, and a "
                             f"class needs two labels to tell which is positive: give "
                             f"{spelling.classes_name} with both (e.g. "
                             f"{spelling.classes([format_label(label), 'OTHER'])})")
        self.lone = (label, CONVENTIONS[label][0])

    def final(self):
        """The sorted classes the model is saved with."""
        return CONVENTIONS[self.lone[0]][1] if self.lone is not None else self.classes

    def targets(self, y, where):
        """The kernel's targets of a chunk's labels (+-1 for two classes, class
        indices for more); a label not among the classes names its line."""
        if self.lone is not None:
            return _repeat(self.lone[1], len(y))
        try:
            return encode_labels(y, self.classes, self.multi_class, self.loss)[0]
        except ValueError:
            known = set(self.classes)
            row = _first_row(y, lambda v: v not in known)
            if row is None:
                raise
            raise ValueError(f"{where(row)}: label {format_label(y[row])} is not among the classes "
                             f"{','.join(map(format_label, self.classes))}: {self.advice}") from None


def _first_row(y, test):
    """The index of the first label of y that passes ``test`` (None if none does)."""
    return next((i for i, v in enumerate(y) if test(v)), None)


def _repeat(value, n):
    """A float64 buffer of n copies of value, without NumPy."""
    from array import array
    return array("d", [value]) * n


def format_label(value):
    """A label as written in LIBSVM files: integers without '.0' (strings as they are)."""
    if isinstance(value, str):
        return value
    value = float(value)
    return str(int(value)) if value.is_integer() else repr(value)


def label_texts(classes):
    """The classes as the lines of predictions write them (`format_label`'s text),
    UTF-8 bytes: the ``labels`` of `fastprox._libsvm.format_predictions`."""
    return tuple(format_label(c).encode() for c in classes)

