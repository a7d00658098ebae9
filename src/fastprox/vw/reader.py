"""The VW reader: one pass over a source, blocks in, canonical CSR chunks of hashed
rows out (`iter_vw_chunks`, `load_vw`), every error naming its line; the
interactions as VW reads its ``-q``, ``--cubic`` and ``--interactions``, the
namespaces selected as it reads ``--ignore``, ``--keep`` and ``--ignore_linear``."""
from array import array

from .._numpy import np
from .._libsvm import Error
from .._vw import MAX_BITS, MAX_ORDER, Selected, VWError, VWParser
from ..libsvm.reader import BLOCK_BYTES, MAX_LINE_BYTES, Chunk, Reader, INT32_MAX, positive_int

#: VW's default -b.
DEFAULT_BITS = 18
#: The most entries a chunk should hold: past it (rows crossed into hundreds of
#: pairs) the chunks' rows are halved while their number stays even (10,000 ->
#: 5,000 -> 2,500 -> 1,250 -> 625): arrays of tens of MB would be fresh pages (page
#: faults) at every chunk, where these are reused.
CHUNK_ENTRIES = 1 << 19


def interaction_terms(quadratic=(), cubic=(), interactions=(), groups=False):
    """The interactions as VW takes them from ``-q``, ``--cubic`` and ``--interactions``,
    so that the columns crossed are VW's.

    Duplicates (the same namespaces in any order) are dropped, the first kept, and an
    interaction that names a namespace twice is sorted, as VW's
    sort_and_filter_duplicate_interactions does (without --leave_duplicate_interactions).

    Parameters
    ----------
    quadratic, cubic, interactions : sequences of str
        Strings of 2, 3, and 2 to MAX_ORDER (8) namespaces, each named by its first
        (ASCII) character; with ``groups``, LIBSVM group ids joined by commas
        (``"0,1"``).
    groups : bool
        Whether the terms name LIBSVM groups (``--groups``' ids) rather than VW's
        namespaces.

    Returns
    -------
    list of bytes or list of tuple of int
        The interactions, each the bytes of its namespaces, for `iter_vw_chunks`; with
        ``groups``, each the tuple of its group ids.

    Raises
    ------
    ValueError
        For a string of another length, a non-ASCII one, or VW's ``:`` wildcard; with
        ``groups``, for anything but 2 to 8 non-negative integers joined by commas.
    """
    terms, seen = [], set()
    for option, given, sizes in (("-q", quadratic, (2,)), ("--cubic", cubic, (3,)),
                                 ("--interactions", interactions, range(2, MAX_ORDER + 1))):
        for text in given:
            term = _group_ids(option, text, sizes) if groups else _namespaces(option, text, sizes)
            key = tuple(sorted(term))
            if len(set(term)) < len(term):
                term = key
            if key not in seen:
                seen.add(key)
                terms.append(tuple(term) if groups else bytes(term))
    return terms


def _namespaces(option, text, sizes):
    """A term of VW namespaces (their first characters) as a tuple of bytes."""
    if not isinstance(text, str) or not text.isascii() or len(text) not in sizes:
        wanted = " or ".join(map(str, sizes))
        raise ValueError(f"{option} {text!r}: give {wanted} namespaces by their first characters "
                         f"(ASCII), as -q ab or --interactions abc")
    if ":" in text:
        raise ValueError(f"{option} {text!r}: the ':' wildcard is not supported; name the namespaces")
    return tuple(text.encode())


def _group_ids(option, text, sizes):
    """A term of LIBSVM group ids, ``"0,1"``, as a tuple of ints."""
    parts = text.split(",") if isinstance(text, str) else []
    if len(parts) not in sizes or not all(p.isascii() and p.isdigit() for p in parts):
        wanted = " or ".join(map(str, sizes))
        raise ValueError(f"{option} {text!r}: with LIBSVM data and --groups, give {wanted} group ids "
                         f"(integers >= 0 of the --groups file) joined by commas, as -q 0,1 or "
                         f"--interactions 0,1,2")
    return tuple(int(p) for p in parts)


#: The namespace selections, as the reading functions' keywords and a model file's
#: ``input_`` name them (VW's --ignore, --keep, --ignore_linear).
SELECTIONS = ("ignore", "keep", "ignore_linear")


def namespace_selection(ignore=(), keep=(), ignore_linear=()):
    """The namespaces read as VW selects them with ``--ignore``, ``--keep`` and
    ``--ignore_linear``, so that the features kept are VW's: each argument's
    characters name namespaces by their first character (the default namespace, the
    features before any named ``|ns``, is ``' '``), and ``\\xNN`` names the byte of
    hex value NN, as VW's decode_inline_hex (``\\x20``: the default namespace).

    As VW's parse_args: ``keep`` replaces ``ignore`` altogether (every namespace
    but those kept is ignored; the ``ignore`` given then means nothing), and a
    namespace of ``ignore_linear`` keeps its features in the interactions only.

    Parameters
    ----------
    ignore, keep, ignore_linear : str or sequence of str
        One argument, or several (VW's options are repeatable).

    Returns
    -------
    dict
        The selection in one spelling (as a model file's ``input_`` records it; the
        reading functions take it as keyword arguments): ``keep`` or ``ignore``,
        and ``ignore_linear`` (the namespaces still read), each a string of distinct
        namespaces in byte order, a byte outside printable ASCII (or ``\\``)
        written ``\\xNN``; no entry for none. Empty: every feature read.

    Raises
    ------
    ValueError
        For an argument that is not a string, an empty one, or a character outside
        ASCII (name such a namespace's first byte as ``\\xNN``).
    """
    chosen = {option: set() for option in SELECTIONS}
    for option, given in zip(SELECTIONS, (ignore, keep, ignore_linear)):
        for text in [given] if isinstance(given, str) else list(given):
            chosen[option].update(_selected(option, text))
    out = {}
    if chosen["keep"]:
        out["keep"], dropped = chosen["keep"], set(range(256)) - chosen["keep"]
    elif chosen["ignore"]:
        out["ignore"], dropped = chosen["ignore"], chosen["ignore"]
    else:
        dropped = set()
    if chosen["ignore_linear"] - dropped:
        out["ignore_linear"] = chosen["ignore_linear"] - dropped
    return {option: "".join(chr(b) if 32 <= b < 127 and b != 92 else f"\\x{b:02x}" for b in sorted(out[option]))
            for option in SELECTIONS if option in out}


def _selected(option, text):
    """The namespace bytes one argument of ``option`` names (`namespace_selection`)."""
    spelled = "--" + option.replace("_", "-")
    if not isinstance(text, str) or not text:
        raise ValueError(f"{spelled} {text!r}: give the namespaces' first characters, as {spelled} ab "
                         f"(' ' or \\x20 for the default namespace)")
    if not text.isascii():
        raise ValueError(f"{spelled} {text!r}: a namespace is known by its first byte; write a byte outside "
                         f"ASCII as \\xNN (its hex value), as VW reads it")
    out, i = set(), 0
    while i < len(text):
        hex_digits = text[i + 2:i + 4]
        if text.startswith("\\x", i) and len(hex_digits) == 2 and all(c in "0123456789abcdefABCDEF"
                                                                    for c in hex_digits):
            out.add(int(hex_digits, 16))
            i += 4
        else:
            out.add(ord(text[i]))
            i += 1
    return out


def selection_table(selection):
    """The parser's table of a selection (`namespace_selection`'s dict, or its
    keywords): 256 bytes, each namespace byte's fastprox._vw.Selected; empty for
    no selection (the parser's fast path)."""
    selection = namespace_selection(**selection)
    if not selection:
        return b""
    table = bytearray([Selected.DROP if "keep" in selection else Selected.KEEP]) * 256
    for option, mark in (("keep", Selected.KEEP), ("ignore", Selected.DROP), ("ignore_linear", Selected.DROP_LINEAR)):
        if option in selection:
            for b in _selected(option, selection[option]):
                table[b] = mark
    return bytes(table)


class VWChunk(Chunk):
    """A chunk of VW rows: a :class:`fastprox.libsvm.Chunk` (its query ids zeros), which
    the kernel trains on as it is, with what VW's lines add to the LIBSVM ones.

    Parameters
    ----------
    data, indices, indptr : array.array
        The canonical CSR rows.
    y : array.array
        The labels (NaN for a line without one, read to predict).
    n_features : int
        The width, 2^hash_bits.
    weights : array.array or None
        The importance weights, None when all are 1.
    tags : list of bytes or None
        The rows' tags, None when no row has one.
    """
    __slots__ = ("weights", "tags")

    def __init__(self, data, indices, indptr, y, n_features, weights, tags):
        super().__init__(data, indices, indptr, y, array("q", bytes(8 * len(y))), n_features)
        self.weights, self.tags = weights, tags


class VWReader(Reader):
    """One pass over VW text (see fastprox.libsvm.reader.Reader, whose reading of
    blocks and lines it keeps), a VWParser in place of the LIBSVM one."""

    #: The lines before the span read, which its messages' line numbers count too.
    first_line = 0

    def __init__(self, path, chunk_rows, hash_bits, terms, block_bytes, max_line_bytes, names=None,
                 unlabelled=False, span=None, selection=None):
        if not positive_int(hash_bits, MAX_BITS):
            raise ValueError(f"hash_bits must be an integer in [1, {MAX_BITS}] (2^hash_bits columns, "
                             f"VW's -b), not {hash_bits!r}")
        if names is not None and not isinstance(names, dict):
            raise ValueError(f"names must be None or a dict to fill (column -> 'namespace^feature'), "
                             f"not {type(names).__name__}")
        super().__init__(path, chunk_rows, 1 << hash_bits, "float64", True, False, False, block_bytes,
                         max_line_bytes, span=span)
        self.parser = VWParser(False, False, self.max_line, hash_bits, terms, names, not unlabelled,
                               selection_table(selection or {}))

    def _take(self):
        self.preview, self.previewed = None, 0
        rows, entries = self.parser.rows, self.parser.nnz
        while entries > CHUNK_ENTRIES and self.chunk_rows % 2 == 0 and rows >= self.chunk_rows:
            self.chunk_rows //= 2               # (the next chunks; CHUNK_ENTRIES)
            entries //= 2
        data, indices, indptr, labels, weights, tags = self.parser.take(
            max(self.n_features, self.parser.nnz) > INT32_MAX)
        return VWChunk(data, indices, indptr, labels, self.n_features, weights, tags)

    def _where(self, line):
        return super()._where(self.first_line + line)

    def read_span(self, span, preview=None):
        """The chunks of ``span`` (as `iter_vw_chunks`'s) of the same file, read again with
        this reader's parser and buffers (warm pages, no fresh ones); its messages'
        line numbers then count from the span before's."""
        self.span, self.size, self.failure, self.preview, self.previewed = span, 0, None, preview, 0
        self.buf[0] = 0         # (the text read is buf[:0], then a NUL)
        return iter(self)

    def _check_unfinished(self, pos, start):
        where = self._where(self.parser.line + 1)
        if self.buf.find(b"\0", start, self.size) >= 0:
            raise ValueError(where + _MESSAGES[VWError.VW_ERR_NUL])
        if self.size - pos > self.max_line:
            raise ValueError(where + _long_line(self.max_line))

    def _parse_error(self):
        p = self.parser
        if p.error == Error.ERR_LONG_LINE:     # (the LIBSVM parser's feed, which VWParser's runs)
            return ValueError(self._where(p.error_line) + _long_line(self.max_line))
        code = VWError(p.error)
        if code == VWError.VW_ERR_NO_MEMORY:
            return MemoryError(f"{self.name}:{p.error_line}: out of memory while reading")
        token = self.buf[p.error_start:p.error_end]
        shown = "'%s'" % token[:60].decode("utf-8", "backslashreplace")
        if code == VWError.VW_ERR_LABEL_WORDS and _number(token):
            return ValueError(self._where(p.error_line) + _INITIAL.format(token.decode("ascii")))
        if code in (VWError.VW_ERR_LABEL, VWError.VW_ERR_WEIGHT) and b":" in token:
            return ValueError(self._where(p.error_line) + _LABEL_TYPES.format(shown))
        return ValueError(self._where(p.error_line) + _MESSAGES[code].format(shown))


def iter_vw_chunks(path, hash_bits=DEFAULT_BITS, interactions=(), chunk_rows=10_000, *, names=None,
                   unlabelled=False, block_bytes=BLOCK_BYTES, max_line_bytes=MAX_LINE_BYTES, preview=None,
                   ignore=(), keep=(), ignore_linear=()):
    """VW text's rows a chunk at a time, in memory bounded by the block, chunk and line
    sizes however large the source: what the commands stream.

    Parameters
    ----------
    path : str, path-like or binary file object
        The source (``-`` standard input; plain or compressed, as fastprox.libsvm).
    hash_bits : int, default 18
        The columns: 2^hash_bits buckets of VW's hashes (VW's ``-b``).
    interactions : sequence of bytes
        The namespaces crossed (`interaction_terms`).
    chunk_rows : int
        Rows per chunk (the last may be shorter).
    names : dict or None
        Filled with the column of each feature met, as ``"namespace^feature"``, and
        of each crossed one, as ``"a^x*b^y"`` (first met, first kept; a block's names
        are held until it is parsed).
    unlabelled : bool
        Read lines without a label (to predict), their label NaN; else they are errors.
    block_bytes, max_line_bytes : int
        Bytes read at a time; the longest line read.
    preview : callable or None
        As for fastprox.libsvm.iter_chunks.
    ignore, keep, ignore_linear : str or sequence of str
        The namespaces read, as VW's ``--ignore``, ``--keep`` and ``--ignore_linear``
        select them (`namespace_selection`), a row at a time.

    Returns
    -------
    iterator of VWChunk
        Chunks 2^hash_bits columns wide; an empty source gives one chunk of no rows.
    """
    return iter(vw_reader(path, hash_bits, interactions, chunk_rows, names=names, unlabelled=unlabelled,
                          block_bytes=block_bytes, max_line_bytes=max_line_bytes, preview=preview,
                          selection=namespace_selection(ignore, keep, ignore_linear)))


def vw_reader(path, hash_bits, interactions, chunk_rows, *, names=None, unlabelled=False, block_bytes=BLOCK_BYTES,
              max_line_bytes=MAX_LINE_BYTES, preview=None, span=None, first_line=0, selection=None):
    """`iter_vw_chunks`'s reader (its arguments; ``selection``, `namespace_selection`'s
    dict, its namespaces read), the chunks read by iterating it; with
    ``span`` (``(start, stop)``, whole lines of a plain regular file as
    fastprox.libsvm.split_points gives them; stop None: to its end) only those bytes,
    its messages counting ``first_line`` lines before them; `VWReader.read_span`
    reads another span of the file with it."""
    if not positive_int(chunk_rows):
        raise ValueError(f"chunk_rows must be a positive integer, not {chunk_rows!r}")
    reader = VWReader(path, int(chunk_rows), hash_bits, list(interactions), block_bytes, max_line_bytes, names,
                      unlabelled, span, selection)
    reader.preview, reader.first_line = preview, first_line
    return reader


def load_vw(path, hash_bits=DEFAULT_BITS, quadratic=(), cubic=(), interactions=(), names=None,
            max_line_bytes=MAX_LINE_BYTES, *, ignore=(), keep=(), ignore_linear=()):
    """Read a file (or ``-``, or a binary file object) of Vowpal Wabbit's text format
    into the rows that ``fastprox train --format vw`` learns from.

    Parameters
    ----------
    path : str, path-like or binary file object
        The source: plain, gzip, bzip2 or xz (recognised by content); ``-`` is
        standard input.
    hash_bits : int, default 18
        Columns are ``2**hash_bits`` buckets of VW's hashes (VW's ``-b``): the same
        feature lands in the same column as in VW.
    quadratic, cubic, interactions : sequences of str
        VW's ``-q ab``, ``--cubic abc`` and ``--interactions ab``, ``abc``, ``abcd``
        (up to 8): namespaces crossed, by their first characters, computed row by
        row as VW does.
    names : dict or None
        If a dict, it is filled with ``column -> "namespace^feature"`` for every
        feature met and ``"a^x*b^y"`` for every crossed column (the first name of a
        column, as VW's ``--invert_hash``), for readable models.
    max_line_bytes : int
        The longest line read.
    ignore, keep, ignore_linear : str or sequence of str
        VW's ``--ignore``, ``--keep`` and ``--ignore_linear``: the namespaces (by their
        first characters; ``' '`` the default one) whose features are not read
        (``ignore``; with ``keep``, all but those), or read only to be crossed
        (``ignore_linear``), as `namespace_selection` reads them.

    Returns
    -------
    X : scipy.sparse.csr_matrix of shape (n_rows, 2**hash_bits)
        The rows, canonical (sorted, unique indices; values of a column met twice in
        a row summed).
    y : ndarray of float64
        The labels.
    sample_weight : ndarray of float64
        The importance weights (1 where none is given).
    tags : list of str
        The rows' tags ('' where none).
    """
    terms = interaction_terms(quadratic, cubic, interactions)
    chunks = list(iter_vw_chunks(path, hash_bits, terms, chunk_rows=1 << 16, names=names,
                                 max_line_bytes=max_line_bytes, ignore=ignore, keep=keep,
                                 ignore_linear=ignore_linear))
    from scipy.sparse import csr_matrix
    itype = np.int64 if max(1 << hash_bits, sum(c.nnz for c in chunks)) > INT32_MAX else np.int32
    starts = np.cumsum([0] + [c.nnz for c in chunks])
    indptr = np.concatenate([np.zeros(1, itype)] + [np.asarray(c.indptr)[1:].astype(itype) + s
                                                     for c, s in zip(chunks, starts)])
    X = csr_matrix((np.concatenate([np.asarray(c.data) for c in chunks]),
                    np.concatenate([np.asarray(c.indices) for c in chunks]).astype(itype, copy=False), indptr),
                   shape=(len(indptr) - 1, 1 << hash_bits))
    X.has_sorted_indices = True
    y = np.concatenate([np.asarray(c.y) for c in chunks])
    weights = np.concatenate([np.ones(len(c.y)) if c.weights is None else np.asarray(c.weights)
                              for c in chunks])
    tags = [t.decode("utf-8", "backslashreplace") for c in chunks
            for t in (c.tags if c.tags is not None else [b""] * len(c.y))]
    return X, y, weights, tags


#: A third number before the tag: VW's initial prediction ('label importance initial').
_INITIAL = ("'{0}' after 'label importance': VW's initial prediction, an offset of the row's margin, is not "
            "read; drop it, or give it as a feature ('|i initial:{0}'), whose weight the model then learns "
            "rather than fixes at 1")

#: What to give instead of VW's other label types (`_LABEL_TYPES`, VW_ERR_LABEL_WORDS).
_ONE_LABEL = "give one number as the label ('2 |a x'; the classes: --classes 1,2,3)"
#: A label or importance token with a ':', as VW's other label types write theirs.
_LABEL_TYPES = ("{} before the first '|' holds a ':', as VW's cost-sensitive (--csoaa: '1:0.5 2:1.0') and "
                f"contextual-bandit (--cb: '1:2:0.5') labels do, which fastprox does not read: {_ONE_LABEL}, "
                "then an optional importance weight")


def _number(token):
    """Whether the bytes ``token`` read as a number (float's syntax)."""
    try:
        float(token)
    except ValueError:
        return False
    return True


def _long_line(bound):
    return (f"line longer than max_line_bytes={bound} bytes; VW text holds one example per line, so "
            f"this is not VW text (no newline: binary data, an endless stream), or pass a larger "
            f"max_line_bytes")


_MESSAGES = {
    VWError.VW_ERR_LABEL: "label {} is not a finite number; VW lines start 'label [importance] "
                          "['tag]|namespace features', e.g. '1 |a x y:2'",
    VWError.VW_ERR_WEIGHT: "importance weight {} is not a finite number >= 0; write 'label weight |...', "
                           "e.g. '1 2.0 |a x'",
    VWError.VW_ERR_LABEL_WORDS: "{} before the first '|': only 'label [importance]' and a tag are read "
                                "(VW's other label types, as multiclass costs and contextual bandits', are "
                                f"not): {_ONE_LABEL}",
    VWError.VW_ERR_NO_LABEL: "no label before the first '|': fastprox trains on every line it reads, where VW "
                             "would predict without learning; give every line a label, e.g. '1 |a x', and "
                             "predict the lines without one with fastprox predict MODEL FILE, which reads them",
    VWError.VW_ERR_VALUE: "value {} is not a number; features are written name or name:value",
    VWError.VW_ERR_NO_VALUE: "feature {} has no value after ':'; write name:value, or the name alone "
                             "for value 1",
    VWError.VW_ERR_NONFINITE: "non-finite value {}; VW reads NaN as 0 with a warning: write the value "
                              "you mean, or leave the feature out",
    VWError.VW_ERR_NAMESPACE: "bad namespace {}; write |name or |name:value (a finite number) right "
                              "after the '|'",
    VWError.VW_ERR_NUL: "NUL byte: this looks like binary data, not VW text (gzip, bzip2 and xz files "
                        "are recognised by their content)",
}


#: Bytes of a file's start searched for its first data line (`sniffed_format`).
SNIFF_BYTES = 1 << 16


def sniffed_format(path):
    """The text format of ``path`` as its content says, for the commands' ``--format
    auto`` and their check of data against a model's recorded format.

    Parameters
    ----------
    path : str, path-like or binary file object
        A source; only a regular file (plain or compressed) is read, its first
        SNIFF_BYTES bytes: a source read once (standard input, a pipe) would lose them.

    Returns
    -------
    str or None
        ``"vw"`` when the file's first line that is not blank before any ``#`` holds a
        ``|`` there (LIBSVM text never does), ``"libsvm"`` when it holds none; None
        when there is no such line in those bytes, or the source is read once.
    """
    from ..libsvm.sources import open_source, read_head, read_once
    if read_once(path):
        return None
    with open_source(path) as f:
        head = read_head(f, SNIFF_BYTES)
    for line in head.split(b"\n"):
        data = line.split(b"#", 1)[0]        # (a LIBSVM comment may hold a '|')
        if data.strip():
            return "vw" if b"|" in data else "libsvm"
    return None
