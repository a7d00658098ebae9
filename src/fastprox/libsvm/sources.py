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

#: The source that means standard input.
STDIN = "-"
_COMPRESSED = ((b"\x1f\x8b", gzip.open), (b"BZh", bz2.open), (b"\xfd7zXZ\x00", lzma.open))
#: The decompressing streams' classes (a read may give fewer bytes than asked).
DECOMPRESSORS = (gzip.GzipFile, bz2.BZ2File, lzma.LZMAFile)
#: The bytes that tell the compression.
MAGIC_BYTES = max(len(magic) for magic, _ in _COMPRESSED)


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
        head = read_head(f, MAGIC_BYTES)
        stream, opener = _Rejoined(head, f), decompressor(head)
        yield stream if opener is None else stack.enter_context(opener(stream, "rb"))


def read_head(f, size):
    """The first ``size`` bytes of ``f`` (fewer at its end), however few each read
    gives: a pipe's first read may return fewer than the magic bytes."""
    head = b""
    while len(head) < size:
        more = f.read(size - len(head))
        if not more:
            break
        head += more
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
