"""Class labels of any kind on a cluster.

The stream's kernel and its recognition of classes (`fastprox.stream.labels`)
take numbers, as a file's labels are. A Dask collection's labels may be what a
flat fit takes: strings, booleans, integers. Labels that are not numbers are
coded, block by block where each block is read, as their index among the sorted
classes, and the fitted ``classes_`` are the labels themselves; numeric labels
go to the stream as they are, and the classes recognized from them take the
labels' own type back (integers stay integers, booleans booleans), as a flat
fit's ``classes_`` do.
"""
from .._numpy import np


def _numbers(dtype):
    """Whether labels of this NumPy type are numbers (booleans, integers, floats)."""
    return dtype.kind in "biuf"


class Labels:
    """How a classifier's labels reach the stream, and its fitted ``classes_``.

    Parameters
    ----------
    classes : array-like or None
        The classes given (None: recognized from the labels).
    y : dask.array or None
        The labels of a dask.array's rows (None: a bag's items or files hold them,
        whose type is not known before they are read).
    compute : callable
        A Dask collection -> its value, computed on the run's cluster (y's
        distinct labels, where they must be found).
    """

    def __init__(self, classes, y, compute):
        try:
            given = None if classes is None else np.unique(np.asarray(classes))
        except TypeError:
            raise ValueError(f"classes must be labels of one kind that sort (numbers, or strings), not "
                             f"{list(classes)!r}") from None
        self.dtype = None if y is None else y.dtype
        numeric = (self.dtype is None or _numbers(self.dtype)) and (given is None or _numbers(given.dtype))
        if numeric:
            #: The sorted classes when labels are coded (None: they are numbers).
            self.coded = None
            #: The classes the stream is given (None: it recognizes them).
            self.stream = None if given is None else [float(c) for c in given]
            self.given = given
            return
        if given is None:       # (a bag's labels are not read before training: see `BlockShare`)
            import dask.array as da
            given = np.unique(compute(da.unique(y)))
        if len(given) < 2:
            raise ValueError(f"a classifier needs two classes, and the labels have one, {given[0]!r}: "
                             f"give classes= with both")
        self.coded, self.given = given, given
        self.stream = [float(i) for i in range(len(given))]

    def fitted(self, recognized):
        """The fitted ``classes_``: the classes given or coded, else those the
        stream recognized (floats) in the labels' own type."""
        if self.given is not None:
            return np.asarray(self.given)
        classes = np.asarray(recognized)
        if self.dtype is not None and self.dtype.kind in "biu":
            return classes.astype(self.dtype)
        return classes


def coded(y, classes, where):
    """The labels ``y`` of a block as the stream's numbers: each label's index among
    the sorted ``classes`` (None: y as floats, which must be numbers). A label not
    among the classes, or not a number where no classes code them, raises ValueError
    naming its row (``where(i)``: row i's place)."""
    y = np.asarray(y).reshape(-1)
    if classes is None:
        try:
            return np.ascontiguousarray(y, dtype=np.float64)
        except (TypeError, ValueError):
            row = next((i for i, v in enumerate(y.tolist()) if not isinstance(v, (int, float))), 0)
        raise ValueError(f"{where(row)}: label {_plain(y[row])!r} is not a number: a regressor's targets are "
                         f"numbers, and a classifier's labels of other kinds in a bag need classes= with every "
                         f"label (a bag's labels are not read before training)")
    try:
        index = np.minimum(np.searchsorted(classes, y), len(classes) - 1)
        wrong = classes[index] != y
    except TypeError:       # (labels of kinds that do not compare with the classes, as 1 and "a")
        position = {label: i for i, label in enumerate(classes.tolist())}
        index = np.array([position.get(label, -1) for label in y.tolist()], dtype=np.intp)
        wrong = index < 0
    if np.any(wrong):
        row = int(np.argmax(wrong))
        listed = ", ".join(map(repr, classes.tolist()))
        raise ValueError(f"{where(row)}: label {_plain(y[row])!r} is not among the classes {listed}: give classes= "
                         f"with every label")
    return index.astype(np.float64)


def _plain(label):
    """A label as Python shows it ('a', not np.str_('a'))."""
    return label.item() if isinstance(label, np.generic) else label
