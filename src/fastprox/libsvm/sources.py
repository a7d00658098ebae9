"""LIBSVM sources: standard input, file objects and paths, read once or not,
opened as one binary stream whose compression (gzip, bzip2, xz) is recognised by
its first bytes, whatever the name. Shared by the readers of other text formats
(fastprox.structured.io)."""
import bz2
import contextlib
import errno
import gzip
import io
import lzma
import os
import stat
import sys
import zlib

#: The source that means standard input.
STDIN = "-"
_COMPRESSED = ((b"\x1f\x8b", gzip.open), (b"BZh", bz2.open), (b"\xfd7zXZ\x00", lzma.open))
#: The decompressing streams' classes (a read may give fewer bytes than asked).
DECOMPRESSORS = (gzip.GzipFile, bz2.BZ2File, lzma.LZMAFile)
#: The bytes that tell the compression.
MAGIC_BYTES = max(len(magic) for magic, _ in _COMPRESSED)
#: What a read of a decompressing stream raises on corrupt or truncated data (gzip's
#: EOFError and BadGzipFile, zlib's and xz's errors, bzip2's "Invalid data stream"),
#: among them OSError, which a failure of the system's raises too (`damaged`).
DECOMPRESSION_ERRORS = (EOFError, zlib.error, lzma.LZMAError, OSError)


def damaged(error):
    """Whether ``error``, one of DECOMPRESSION_ERRORS, means corrupt or truncated
    compressed data rather than a failure of the system's (an OSError with an errno,
    passed on as it is)."""
    return not (isinstance(error, OSError) and error.errno is not None)


def named(error, name):
    """The system's read error ``error`` (an OSError with an errno, not `damaged`: a
    disk's EIO, say) naming the source ``name`` it came from, where it names none."""
    if error.filename is not None:
        return error
    return OSError(error.errno, error.strerror or str(error), name)


def corrupt(name, line, error):
    """The ValueError for compressed data that ``error`` found `damaged` in the source
    ``name``, at its line ``line`` (1-based: the line the data break off in)."""
    return ValueError(f"{name}:{line}: corrupt or truncated compressed data ({error}); "
                      f"check or re-download the file")


def read_once(source):
    """Whether reading ``source`` uses it up, so that it can be neither read again
    nor split in halves: standard input (``-``), a file object, or a path to
    anything but a regular file (a pipe such as /dev/stdin or /dev/fd/N, a FIFO,
    a socket, a device)."""
    return source == STDIN or hasattr(source, "read") or not stat.S_ISREG(os.stat(source).st_mode)


def source_name(source):
    """``source`` as messages name it: ``<stdin>`` for ``-``, a file object's name
    (``<stream>`` when it has none), a path as given."""
    if source == STDIN:
        return "<stdin>"
    if hasattr(source, "read"):
        name = getattr(source, "name", None)
        return name if isinstance(name, str) else "<stream>"
    return os.fspath(source)


def refuse_text(source):
    """TypeError naming ``source`` if it is a text file object: the readers read bytes
    (their UTF-8 and their compression are recognised from them), as scikit-learn's
    LIBSVM reader does; a text stream's bytes are gone."""
    if isinstance(source, io.TextIOBase):
        raise TypeError(f"{source_name(source)}: open the file in binary mode ('rb'), not text mode")


def refuse_directory(path):
    """IsADirectoryError naming ``path`` if it is a directory (a pattern's match, a
    data set's folder given by mistake): `open` would fail with a bare "Is a
    directory" that does not say what to give instead."""
    if path != STDIN and not hasattr(path, "read") and os.path.isdir(path):
        raise IsADirectoryError(errno.EISDIR, "is a directory, not a data file: give the files in it", path)


@contextlib.contextmanager
def open_source(source):
    """``source`` (a path, ``-`` or a binary file object) as one binary stream,
    decompressed if its first bytes are gzip's, bzip2's or xz's magic: a context
    manager, as the LIBSVM readers and the other text formats' open a source. It is
    opened once, and those bytes, read once, are put back in front of the rest
    (`_Rejoined`): a pipe can be neither opened again nor rewound. File objects,
    standard input's among them, are left open."""
    with contextlib.ExitStack() as stack:
        if source == STDIN:
            f = sys.stdin.buffer
        elif hasattr(source, "read"):
            refuse_text(source)
            f = source
        else:
            refuse_directory(source)
            f = stack.enter_context(open(source, "rb"))
        try:
            head = read_head(f, MAGIC_BYTES)
        except OSError as e:
            raise named(e, source_name(source)) from None
        stream, opener = _Rejoined(head, f), decompressor(head)
        yield stream if opener is None else stack.enter_context(opener(stream, "rb"))


def read_head(f, size):
    """The first ``size`` bytes of ``f`` (fewer at its end), however few each read
    gives: a pipe's first read may return fewer than the magic bytes. Fewer also
    where the compressed data of a decompressing ``f`` turn out corrupt or truncated
    (`damaged`): the bytes before are kept (each read is one ``read1`` where there is
    one, which holds back nothing it decompressed), and the reader that follows
    reports the damage, naming the line it breaks off in."""
    head = b""
    read = getattr(f, "read1", f.read)
    try:
        while len(head) < size:
            more = read(size - len(head))
            if not more:
                break
            head += more
    except DECOMPRESSION_ERRORS as e:
        if not damaged(e):
            raise
    return head


def decompressor(head):
    """The opener of the compressed format whose magic bytes start ``head``; None
    for plain text."""
    return next((opener for magic, opener in _COMPRESSED if head.startswith(magic)), None)


def bytes_left(f, end=None):
    """The bytes of the stream ``f`` from where it is to ``end`` (to its end if None),
    when ``f`` is a plain regular file (`open_source`'s of one, whose first bytes were
    put back, counted); None for another source (a pipe, a decompressor), whose size is
    not known."""
    head = 0
    if isinstance(f, _Rejoined):
        head, f = len(f.head), f.rest
    if not isinstance(f, io.BufferedReader):
        return None
    try:
        info = os.fstat(f.fileno())
    except (OSError, ValueError):
        return None
    if not stat.S_ISREG(info.st_mode):
        return None
    return head + max(0, (info.st_size if end is None else end) - f.tell())


class _Rejoined(io.RawIOBase):
    """A stream whose first bytes were read (to recognise its compression), with
    them put back: the first read gives those bytes followed by the rest of the
    stream's, as one read of the whole would (the reader's blocks stay whole);
    later reads are passed on to the stream as they are (no work per byte)."""

    def __init__(self, head, rest):
        super().__init__()
        self.head, self.rest = head, rest

    def readable(self):
        return True

    def readinto(self, into):
        n = min(len(self.head), len(into))
        into[:n] = self.head[:n]
        self.head = self.head[n:]
        return n + (self.rest.readinto(memoryview(into)[n:]) if n < len(into) else 0)
