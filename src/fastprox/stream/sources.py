"""Where a stream's rows come from, as `Trainer` takes them (fastprox.stream.trainer):
LIBSVM files read once each (`FileSource`), or the embedded default data set
(`DefaultSource`, fastprox.stream.synthetic); each with the test rows that score
the model. (fastprox.dask's shares are the sources of a cluster run.)

Their messages name the options of `fastprox train`, which gives them.
"""
import re

from .._validation import available_memory, readable_size
from ..libsvm import read_once, source_name
from . import preview
from .files import check_readable, chunks_of, hashed, labelled_chunks, pumped, read_ahead, row_locator

#: How a width_origin names the width of a continued model that does not grow (train -i).
MODEL_WIDTH = "the model of -i"

#: The width of the embedded default data (--n-features unless given).
DEFAULT_FEATURES = 1 << 18

#: Bytes generating the embedded default data holds at its peak, per feature and
#: per row (measured with tracemalloc: 17 and 1,370; rounded up): a width or a
#: number of rows that cannot be generated is refused before NumPy tries.
DEFAULT_DATA_BYTES = (24, 1536)


class FileSource:
    """The training files ``paths``, read once each (``passes`` times in all) with the
    reader's arguments ``reading``, as (chunk, labels, origin) triples: origin the
    file and the number of its rows before the chunk, for errors to name a line.
    Their ids are hashed into 2^hash_bits columns if ``hash_bits``; the model's width
    is ``n_features`` (None: it grows), set by ``width_origin`` (what messages about
    its size name; ``width_file`` the --groups or --group-weights file if that is
    what sets it). ``test``: the file that scores the model, or None."""

    def __init__(self, paths, reading, passes=1, hash_bits=None, test=None, n_features=None,
                 width_origin="the largest feature index in the data", width_file=None):
        check_readable(paths + ([test] if test else []))
        once = ", ".join(source_name(path) for path in paths if read_once(path))
        if once and passes > 1:
            raise ValueError(f"{once} can be read only once (standard input, a pipe), but "
                             f"--passes {passes} reads it {passes} times: save it to a "
                             f"file, or train with --passes 1")
        self.paths, self.bits, self.reading = paths, hash_bits, reading
        self.vw = reading.get("format") == "vw"
        self.test_path = test
        self.test_name = test and source_name(test)
        self.name = ", ".join(map(source_name, paths))
        self.rows = None
        self.n_features = n_features
        self.width_origin = width_origin
        self.width_file = width_file
        self.preview = None
        #: The features' names (fastprox.stream.readable.FeatureNames), gathered in the
        #: first pass when set (train --invert-hash).
        self.names = None
        self.passes_read = 0
        #: The index offsets (0: zero-based, 1: one-based) the first pass read its
        #: LIBSVM files' rows with (`zero_based`).
        self.offsets = set()

    @property
    def zero_based(self):
        """Whether the LIBSVM files' indices were read as starting at 0 (given, or decided
        by each file's first rows); None where nothing says (VW text, no feature read)
        or the files were read both ways: what the model file records
        (``fitted.zero_based_``) for predict and train -i."""
        return self.offsets == {0} if len(self.offsets) == 1 else None

    def show_first_lines(self, est, table, quiet):
        """Show the table's first lines as the first chunk's rows arrive (a Preview),
        where they can be known before the chunk is complete (fastprox.stream.preview)."""
        if not quiet and preview.wanted(self.reading, self.bits, est.params):
            self.preview = preview.Preview(est, self, table, lambda chunk: hashed(chunk, self.bits))

    def chunks(self):
        """The pass's (chunk, labels, origin) triples, read ahead; the first pass's
        first chunk is previewed (`show_first_lines`), and handed over before the
        run trains on it."""
        shown, self.preview = self.preview, None
        for item in read_ahead(self._read(shown)):
            if shown is not None:
                shown.hand_over()
                shown = None
            yield item
        self.passes_read += 1

    def _read(self, shown):
        try:
            yield from self._chunks(shown)
        except ValueError as e:
            raise self._beyond_groups(e) from None

    def _beyond_groups(self, error):
        """The reader's error for an index beyond a width that --groups or
        --group-weights set, naming that file rather than --n-features, or that the
        model of train -i has (MODEL_WIDTH), naming how to let it grow."""
        found = re.match(r"(.*?: index '[^']*' is beyond) n_features=(\d+) ", str(error))
        if found is not None and self.width_origin.startswith(MODEL_WIDTH):
            return ValueError(f"{found.group(1)} the {found.group(2)} features of {self.width_origin}")
        if found is None or not self.width_origin.startswith("--group"):
            return error
        option = self.width_origin.split()[0]
        return ValueError(f"{found.group(1)} the {found.group(2)} features of {option} {self.width_file} "
                          f"(one entry per feature): give an entry for every feature")

    def _chunks(self, shown):
        for path in self.paths:
            row = 0
            with pumped(path) as source:
                named = {} if self.names is not None and not self.passes_read and self.vw else None
                for chunk in chunks_of(source, n_features=self.n_features, preview=shown, names=named,
                                       **self.reading):
                    if named:
                        self.names.add_named(named)
                        named.clear()
                    elif self.names is not None and not self.passes_read and not self.vw:
                        self.names.add(chunk, self.bits)
                    if not self.vw and not self.passes_read and len(chunk.data):
                        self.offsets.add(chunk.offset)     # (decided once a row has an index)
                    yield hashed(chunk, self.bits), chunk.y, (path, row)
                    row += chunk.shape[0]
            shown = None

    @staticmethod
    def locator(origin):
        """``where(i)``: the place of the chunk's row i, "FILE:LINE" (fastprox.stream.files.locate)."""
        return row_locator(*origin)

    def test_chunks(self):
        if self.test_path is None:
            return None
        reading = self.reading
        if reading.get("zero_based") == "auto" and self.zero_based is not None:
            reading = {**reading, "zero_based": self.zero_based}    # (as the training files were read)
        return labelled_chunks(self.test_path, bits=self.bits, **reading)


class DefaultSource:
    """The embedded default data (fastprox.stream.synthetic): ``rows`` rows (20% held
    out to test on, unless ``test`` names a file) of ``n_features`` features
    (DEFAULT_FEATURES if None), generated from ``seed`` (0 if None), in memory, as
    chunks of the ``chunk_rows`` of ``reading``."""

    #: (Its features have no names but their columns.)
    names = None

    def __init__(self, rows, reading, n_features=None, seed=None, test=None):
        if test:
            check_readable([test])
        from .synthetic import text_like   # numpy and scipy work, only for this data
        width = n_features or DEFAULT_FEATURES
        self.width_origin = "--n-features" if n_features else "the default data's width"
        check_default_size(rows, width)
        seed = seed or 0
        self.X, self.y, self.X_test, self.y_test = text_like(rows, width, seed)
        self.chunk_rows, self.rows, self.reading = reading["chunk_rows"], self.X.shape[0], reading
        self.test_path = test
        self.test_name = source_name(test) if test else "the held-out part"
        self.name = f"embedded default (text-like, seed {seed})"

    def show_first_lines(self, est, table, quiet):
        """(The data are in memory: its chunks come at once.)"""

    def chunks(self):
        for start in range(0, self.X.shape[0], self.chunk_rows):
            stop = start + self.chunk_rows
            yield self.X[start:stop], self.y[start:stop], start

    def locator(self, origin):
        """``where(i)``: the place of row i of the chunk starting at row ``origin``."""
        return lambda i: f"{self.name}: row {origin + i + 1}"

    def test_chunks(self):
        if self.test_path is not None:
            return labelled_chunks(self.test_path, **self.reading)
        return iter([(self.X_test, self.y_test, lambda i: f"{self.test_name}: row {i + 1}")])


def check_default_size(rows, n_features):
    """Refuse, in one line, default data that would not fit in the memory available
    now (DEFAULT_DATA_BYTES): NumPy would fail with a MemoryError, or fill the
    memory for minutes before the model's own check refuses it."""
    per_feature, per_row = DEFAULT_DATA_BYTES
    need, free = per_feature * n_features + per_row * rows, available_memory()
    if free is not None and need > free:
        raise ValueError(f"the embedded default data of {rows} rows x {n_features} features needs "
                         f"about {readable_size(need)} of memory to generate, but only "
                         f"{readable_size(free)} is available; pass a smaller --n-features or --rows")
