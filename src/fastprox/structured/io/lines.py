"""Numbered text lines of a source, for the line-oriented readers.

A source is what :mod:`fastprox.libsvm` reads: a path, ``-`` for standard
input or a binary file object; gzip, bzip2 and xz are recognised by their
first bytes (`fastprox.libsvm.open_source`). Lines are UTF-8; their ending
(``\\n`` or ``\\r\\n``) is removed, and so is a byte order mark at the
start (Windows editors write one). A line is held up to `MAX_LINE_BYTES`, the
LIBSVM and VW readers' bound: a longer one is refused once that much is read (an
endless line, ``/dev/zero`` or a binary file, would otherwise be held until the
memory runs out). Every reader's error is a ``ValueError``
whose message starts ``NAME:LINE:`` (1-based) and says how to fix the file or
the call (`located`).
"""
import io

from ...libsvm import open_source, source_name
from ...libsvm.reader import MAX_LINE_BYTES
from ...libsvm.sources import DECOMPRESSION_ERRORS, corrupt, damaged, named

__all__ = ["numbered_lines", "located", "source_name"]

#: A line is read this many bytes at a time: a shorter line (nearly all) in one read.
PIECE_BYTES = 1 << 20

_BINARY = "NUL byte: this looks like binary data, not text (gzip, bzip2 and xz files are recognised by their content)"


def located(name, line, message):
    """The ValueError for ``message`` at ``line`` of the source ``name``."""
    return ValueError(f"{name}:{line}: {message}")


def numbered_lines(source):
    """Yield ``(number, text)`` for each line of ``source``, from 1, read a block
    at a time (memory bounded by the longest line, itself by `MAX_LINE_BYTES`).

    Raises ValueError (named line) for bytes that are not UTF-8, for NUL bytes,
    which mean binary data rather than text, and for a line longer than the bound.
    """
    name = source_name(source)
    with open_source(source) as stream:
        if isinstance(stream, io.RawIOBase):    # a plain file: read it in blocks
            stream = io.BufferedReader(stream, 1 << 20)
        for number, raw in enumerate(_undamaged(stream, name), 1):
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError as e:
                raise located(name, number, f"byte {raw[e.start]:#04x} (column {e.start + 1}) is not "
                                            f"UTF-8; convert the file to UTF-8 (for instance "
                                            f"iconv -f latin1 -t utf-8)") from None
            if "\x00" in text:
                raise located(name, number, _BINARY)
            if number == 1 and text.startswith("\ufeff"):    # the byte order mark some editors write
                text = text[1:]
            if text.endswith("\n"):
                text = text[:-2] if text.endswith("\r\n") else text[:-1]
            yield number, text


def _undamaged(stream, name):
    """The lines of ``stream``, ending in a ValueError that names the line (1-based) of
    the source ``name`` where its compressed data turn out corrupt or truncated, or
    where a line exceeds `MAX_LINE_BYTES` (`_long_line`)."""
    number = 0
    while True:
        try:
            raw = stream.readline(PIECE_BYTES)
            if len(raw) == PIECE_BYTES and not raw.endswith(b"\n"):
                raw = _long_line(stream, raw, name, number + 1)
        except DECOMPRESSION_ERRORS as e:
            if not damaged(e):
                raise named(e, name) from None
            raise corrupt(name, number + 1, e) from None
        if not raw:
            return
        number += 1
        yield raw


def _long_line(stream, piece, name, number):
    """The line of which ``piece`` is the first `PIECE_BYTES`, read a piece at a time:
    a piece with a NUL byte (binary data, ``/dev/zero``) is refused at once, a line
    longer than `MAX_LINE_BYTES` once that much is read (an endless stream would be
    held until the memory runs out)."""
    bound = MAX_LINE_BYTES          # (read here: the tests lower it)
    pieces, size = [], 0
    while True:
        if b"\x00" in piece:
            raise located(name, number, _BINARY)
        pieces.append(piece)
        size += len(piece)
        if size > bound:
            raise located(name, number, f"line longer than {bound} bytes: a line holds one item (or a "
                                        f"comment), so this is not the format's text (no newline: binary "
                                        f"data, an endless stream); give the text file")
        if len(piece) < PIECE_BYTES or piece.endswith(b"\n"):
            return b"".join(pieces)
        piece = stream.readline(PIECE_BYTES)
