"""load_libsvm: a whole file, parsed in parts that are then joined, a large plain
file in two halves at once (split_point, half_readers, read_halves: the command
line's scan reads them too)."""
import os
import threading

from .reader import BLOCK_BYTES, MAX_LINE_BYTES, PIECE_BYTES, Reader
from .sources import MAGIC_BYTES, decompressor, read_head, read_once

#: Rows load_libsvm parses at a time before joining them: the parser's arrays
#: stay in cache (parsing into one file-sized array ran 1.5x slower).
_LOAD_CHUNK_ROWS = 10_000
#: Plain files larger than this are read in two halves at once, one thread each
#: (the parser releases the GIL), by load_libsvm and by the command line's scan.
SPLIT_BYTES = 64 << 20


def load_libsvm(path, n_features=None, dtype="float64", zero_based="auto",
                query_id=False, allow_nonfinite=False, *, block_bytes=BLOCK_BYTES,
                max_line_bytes=MAX_LINE_BYTES):
    """Read a whole LIBSVM file into ``(X, y)``, or ``(X, y, qid)`` with query_id.

    Parameters
    ----------
    path : str, path-like or binary file object
        The file: plain or compressed (``.gz``, ``.bz2``, ``.xz``), ``-`` for
        standard input, or a binary file object (read from where it stands,
        left open).
    n_features : int or None, default=None
        The width of X; None: one more than the largest column index (at least
        1, as in scikit-learn).
    dtype : {"float64", "float32"}, default="float64"
        The values' type.
    zero_based : bool or "auto", default="auto"
        True for indices starting at 0, False for indices starting at 1 (index 0
        is then an error), "auto" to take the file as zero-based if any index is
        0 and one-based otherwise (as scikit-learn does).
    query_id : bool, default=False
        When True, every line must carry ``qid:INT`` and the query ids come back
        as a third array; when False, ``qid:`` is skipped.
    allow_nonfinite : bool, default=False
        Accept ``nan``, ``inf`` and ``infinity`` labels and values, refused by
        default since they are almost always a bug.
    block_bytes : int, default=4 MiB
        The bytes read at a time, which bound the reader's memory with the
        lines'.
    max_line_bytes : int, default=256 MiB
        The longest line read: a longer line raises ValueError naming it once
        that many bytes of it have been read, so that an endless line
        (``/dev/zero``) or a binary file stops in bounded memory and time.

    Returns
    -------
    X : scipy.sparse.csr_matrix of shape (n_rows, n_features)
        The rows, of ``dtype``, with sorted indices: int32 indices unless the
        width or the number of stored values needs int64.
    y : ndarray of float64 of shape (n_rows,)
        The labels.
    qid : ndarray of int64 of shape (n_rows,)
        The query ids, with ``query_id=True`` only.
    """
    args = (path, _LOAD_CHUNK_ROWS, n_features, dtype, zero_based, query_id, allow_nonfinite, block_bytes,
            max_line_bytes)
    joined = _load_halves(args)
    if joined is None:
        reader = Reader(*args, whole=True)
        joined = reader.joined(list(reader))
    return joined.returned(query_id)


def split_point(path):
    """Where a plain regular file of over SPLIT_BYTES splits into two halves of
    whole lines (`split_points`); None where it does not."""
    points = split_points(path, 2)
    return points[0] if points else None


def split_points(path, pieces, least=None):
    """Where a plain regular file of over ``least`` bytes (None: SPLIT_BYTES) splits
    into ``pieces`` spans of whole lines, in order: the byte after the first newline
    past each i/pieces of its size (a point that would not start a later span than
    the one before is left out); [] for smaller or compressed files, for sources read once (`read_once`),
    which are read in one pass, and where no newline follows a point within
    MAX_LINE_BYTES (the pass then stops at that line). The newline is looked for a
    piece at a time: a long line is never held."""
    if read_once(path):
        return []
    size = os.path.getsize(path)
    if size <= (SPLIT_BYTES if least is None else least):
        return []
    points = []
    with open(path, "rb") as f:
        if decompressor(read_head(f, MAGIC_BYTES)) is not None:
            return []
        for i in range(1, pieces):
            at = f.seek(size * i // pieces)
            while True:
                piece = f.read(PIECE_BYTES)
                newline = piece.find(b"\n")
                if newline >= 0 or not piece or at + len(piece) - size * i // pieces > MAX_LINE_BYTES:
                    break
                at += len(piece)
            if newline < 0:
                return []
            point = at + newline + 1
            if point < size and (not points or point > points[-1]):
                points.append(point)
    return points


def half_readers(path, chunk_rows, max_line_bytes=MAX_LINE_BYTES):
    """Two readers of a file that splits (`split_point`) for a pass that only sums
    it up (the command line's scan): the first half as iter_chunks reads a file
    (zero_based="auto"), the second with its indices as written (zero_based=True),
    for the first half's ``offset`` to settle; None if the file does not split."""
    middle = split_point(path)
    if middle is None:
        return None
    return (Reader(path, chunk_rows, None, "float64", "auto", False, False, BLOCK_BYTES, max_line_bytes,
                    span=(0, middle)),
            Reader(path, chunk_rows, None, "float64", True, False, False, BLOCK_BYTES, max_line_bytes,
                    span=(middle, None)))


def read_halves(readers, consume):
    """``consume(i, chunk)`` for each chunk of ``readers[i]``, the second reader in
    a thread of its own (both parse without the GIL); False if either failed,
    whatever the error: one pass over the file then raises it where it belongs
    (the second half's line numbers start at its first line). An interrupt
    (Ctrl-C) is raised at once; the second reader's thread is a daemon."""
    failed = []

    def read(i):
        try:
            for chunk in readers[i]:
                consume(i, chunk)
        except Exception as e:
            failed.append(e)

    thread = threading.Thread(target=read, args=(1,), daemon=True)
    thread.start()
    read(0)
    thread.join()
    return not failed


def _load_halves(args):
    """load_libsvm's joined chunk of a file that splits (`split_point`), its halves
    parsed at once; None otherwise, and whenever one pass could fail."""
    path = args[0]
    middle = split_point(path)
    if middle is None:
        return None
    halves = [Reader(*args, whole=True, span=span) for span in ((0, middle), (middle, None))]
    parts = [[], []]
    if not read_halves(halves, lambda i, chunk: parts[i].append(chunk)):
        return None
    try:
        return halves[0].joined(parts[0] + parts[1], rest=halves[1])
    except ValueError:          # beyond n_features: one pass names the line
        return None
