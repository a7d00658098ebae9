"""The bounded zip reader of model files: each ``.npy`` member decompressed only
once its ``.npy`` header declares the shape and type the model's header implies,
and its zip entry that size, after a zip directory of a model file's size; so a
file cannot make the reader hold more than the model it declares. What zip,
.npy or JSON cannot read is `Unreadable`."""
import json
import math
import struct
import zipfile
from contextlib import contextmanager

from .._numpy import np
from .._registry import FLAT_MODEL, other_model_file
from .._validation import check_memory
from .format import DIRECTORY_BYTES, HEADER_CHARS, LIST_BYTES, MEMBERS, NPY_HEADER_BYTES

class Unreadable(Exception):
    """What zip or .npy cannot read: a truncated, corrupt or foreign file."""


@contextmanager
def reading(what):
    """Raise what the zip, .npy and JSON parsers raise on bytes they cannot read as
    Unreadable, naming ``what``. Their exceptions vary (BadZipFile, zlib.error,
    EOFError, ValueError, struct.error, RuntimeError for encrypted entries and
    unknown compressions, RecursionError for JSON nested too deep, tokenize's
    TokenError from NumPy's .npy header filter, ...): all but MemoryError, which
    says that the memory is short, not that the file is bad."""
    try:
        yield
    except MemoryError:
        raise
    except Exception as e:
        raise Unreadable(f"{what}: {type(e).__name__}: {e}") from e


class Members:
    """A model file's ``.npy`` members by name (``state`` for ``state.npy``), each
    decompressed only once its ``.npy`` header declares the shape and type the
    model's header implies, and its zip entry that size: a file cannot make the
    reader hold more than the model it declares."""

    def __init__(self, f):
        _check_directory(f)
        with reading("zip"):
            self._archive = zipfile.ZipFile(f)
        self._infos = {}
        for info in self._archive.infolist():
            name = info.filename[:-4] if info.filename.endswith(".npy") else None
            if name not in MEMBERS:
                self._refuse_member(info.filename)
            if name in self._infos:
                raise ValueError(f"member {info.filename!r} appears twice")
            if info.flag_bits & 1 or info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
                raise Unreadable(f"{info.filename} is encrypted or compressed as model files are not")
            self._infos[name] = info
        check_memory(sum(info.file_size for info in self._infos.values()), "the members of the file")

    def _refuse_member(self, filename):
        """Raise ValueError for the member ``filename`` that model files do not hold:
        naming the kind of file it is where its header says it is a structured model
        file (`_registry.other_model_file`), else naming the member."""
        header = next((i for i in self._archive.infolist() if i.filename == "header.npy"), None)
        if header is not None:
            self._infos = {"header": header}
            try:
                other = other_model_file(self.header(), FLAT_MODEL)
            except (ValueError, Unreadable, MemoryError):     # (a foreign file: the member named)
                other = None
            if other:
                raise other
        raise ValueError(f"unknown member {filename!r}; a model file holds "
                         f"{', '.join(n + '.npy' for n in MEMBERS)}")

    def __contains__(self, name):
        return name in self._infos

    def header(self):
        """The header's JSON value. Its bound: HEADER_CHARS characters (4 bytes each
        in UTF-32) and LIST_BYTES per byte of the groups and group_weights members,
        whose values ``params`` may hold as lists; the members' sizes are checked
        against the header's n_features once it is read."""
        limit = 4 * HEADER_CHARS + LIST_BYTES * sum(self._infos[name].file_size for name in
                                                     ("groups", "group_weights") if name in self)

        def text(shape, dtype):
            if shape != () or dtype.kind != "U":
                raise ValueError(f"header has shape {shape} and dtype {dtype}; expected a string")
            if dtype.itemsize > limit:
                raise ValueError(f"header holds {dtype.itemsize} bytes, more than the {limit} a "
                                 "header may (a million characters, and its parameters' lists)")

        value = self.array("header", text)
        with reading("header"):
            return json.loads(value.item())

    def array(self, name, expect):
        """Member ``name`` once ``expect(shape, dtype)``, which raises ValueError
        for what the header does not imply, accepts what its .npy header declares,
        and its zip entry declares exactly those bytes."""
        info = self._infos.get(name)
        if info is None:
            raise ValueError(f"missing entry {name!r}")
        with reading(info.filename), self._archive.open(info) as f:
            version = np.lib.format.read_magic(f)
            if version not in ((1, 0), (2, 0)):
                raise ValueError(f".npy format version {version}; model files are written in 1.0")
            read = np.lib.format.read_array_header_1_0 if version == (1, 0) else \
                np.lib.format.read_array_header_2_0
            shape, _, dtype = read(f, max_header_size=NPY_HEADER_BYTES)
            offset = f.tell()
        if dtype.hasobject:
            raise Unreadable(f"{info.filename} holds Python objects (a pickle), which this reader never loads")
        expect(shape, dtype)
        if info.file_size != offset + math.prod(shape) * dtype.itemsize:
            raise ValueError(f"{name} declares {info.file_size} bytes, but its shape {shape} of "
                             f"{dtype} takes {offset + math.prod(shape) * dtype.itemsize}")
        with reading(info.filename), self._archive.open(info) as f:
            a = np.lib.format.read_array(f, allow_pickle=False, max_header_size=NPY_HEADER_BYTES)
            f.read(1)       # at the entry's end: the zip checks its CRC
        return a


_END = struct.Struct("<4s4H2LH")        # zip's end of central directory record (APPNOTE 4.3.16)
_END64 = struct.Struct("<4sQ2H2L4Q")    # its zip64 version (4.3.14), before a 20-byte locator


def _check_directory(f):
    """Refuse a zip whose central directory is larger than a model file's dozen
    members need, before zipfile reads it (its entries take memory, about six
    times their bytes). The end records are those zipfile reads: the last 22
    bytes (model files have no zip comment), and the zip64 record before its
    locator, where there is one."""
    f.seek(0, 2)
    size = f.tell()
    f.seek(max(0, size - _END.size - 20 - _END64.size))
    tail = f.read()
    f.seek(0)
    end = tail[-_END.size:]
    if len(end) < _END.size or not end.startswith(b"PK\x05\x06") or not end.endswith(b"\0\0"):
        raise Unreadable("no zip end record at its end")
    directory = _END.unpack(end)[5]
    locator, end64 = tail[-_END.size - 20:-_END.size], tail[:-_END.size - 20]
    if locator.startswith(b"PK\x06\x07") and len(end64) == _END64.size and end64.startswith(b"PK\x06\x06"):
        directory = _END64.unpack(end64)[8]
    if directory > DIRECTORY_BYTES:
        raise Unreadable(f"its zip directory declares {directory} bytes, more than a model "
                          f"file's {DIRECTORY_BYTES}")


