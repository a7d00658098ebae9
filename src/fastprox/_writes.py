"""Writes that respect the file system: what dump_libsvm, save_model, ``train
--model`` and ``predict --out`` write lands where the path leads, whole or not at
all, and a path that cannot take it is refused before any work.

- A regular file (or a new one) is replaced atomically (`atomic_write`): written
  to a temporary file next to it, fsynced, renamed over it. Readers see the old
  file or the new one, never part of one, even if the process dies.
- A symbolic link is followed: its target is replaced and the link kept (a
  dangling link's target is created).
- A device or a FIFO (``/dev/null``, ``/dev/stdout``, a named pipe) is written
  directly: renaming a file over it would replace the node itself (as root,
  ``--model /dev/null`` would replace the system's). A directory or a socket
  is refused.
- `check_output` finds, before any work, what would fail or destroy data: a
  missing or unwritable directory, a directory as the path, an output that is
  one of the command's inputs (``train data.svm --model data.svm``);
  `check_distinct` two outputs of one command that are one file
  (``train --model m --predictions m``), the last written replacing the other.

Errors name the path the user gave, never the temporary file, and say what to do
(`failure`); only the output's own errors do: those of the data being written
(a file read while the output is written, say) pass through as they are.
`naming` puts an option in place of the path (``--model m.npz``); `Output` names
the writes of any file, standard output included.
"""
import bz2
import contextlib
import errno
import gzip
import lzma
import os
import stat

_WRITERS = {".gz": gzip.open, ".bz2": bz2.open, ".xz": lzma.open}


#: How errors name standard output (`Output`'s ``where`` for it).
STANDARD_OUTPUT = "standard output"

#: What to do about a failed write, by its errno (`failure`).
_FIXES = {errno.ENOSPC: "free some space, or write to another disk",
          errno.EDQUOT: "free some space (the disk quota is used up), or write to another disk",
          errno.EFBIG: "the file system takes no file this large: write to another disk",
          errno.EROFS: "the file system is read-only: give a path on a writable one",
          errno.EACCES: "give a path that may be written", errno.EPERM: "give a path that may be written",
          errno.EIO: "check the disk"}


def atomic_write(path, write, compress=True):
    """Call ``write(file)`` on what ``path`` leads to (the module's rules); with
    ``compress``, through the compressor the name's suffix asks for.

    For a regular file: a temporary file next to the target, renamed over it. The
    data is fsynced before the rename, the directory after it (so that the rename
    survives a crash). The temporary file is locked (``flock``) from its creation
    until it is renamed, and each write first removes the temporary files that
    interrupted writes to the same target left behind (`_remove_leftovers`): a
    ``kill -9`` costs disk space only until the next write. On an exception the
    temporary file is removed. The file's own OSErrors (a read-only directory, a
    full disk) name ``path`` and the fix (`failure`); ``write``'s others (reading
    the data it writes) pass through unchanged: ``write`` is handed an `Output`.
    """
    path = os.fspath(path)
    compressor = _WRITERS.get(os.path.splitext(path)[1]) if compress else None
    target, special = _destination(path)
    if special:
        with _own(path):
            raw = open(path, "wb")
        _written(raw, path, write, compressor)
        return
    _replace(target, path, write, compressor)


class Output:
    """A binary or text file whose methods' OSErrors name ``where`` (a path, "standard
    output") and the fix (`failure`): what `atomic_write` hands its ``write``, so that
    the file's errors are told from those of the data being written. Its methods
    are the file's (``seek`` and ``tell`` too: zipfile's model files are written as
    to the file itself; its ``seek`` flushes, and may fail as a write does)."""

    def __init__(self, file, where):
        self._file, self._where = file, where

    def write(self, data):
        try:
            return self._file.write(data)
        except OSError as e:
            raise failure(e, self._where) from None

    def writelines(self, lines):
        """Each line through `write`: a generator's own errors are not the file's."""
        for line in lines:
            self.write(line)

    def __getattr__(self, name):
        value = getattr(self._file, name)
        if not callable(value):
            return value

        def named(*args, **kwargs):
            try:
                return value(*args, **kwargs)
            except OSError as e:
                raise failure(e, self._where) from None
        return named


def failure(error, where):
    """The OSError of the failed write ``error`` to ``where`` (a path, an option and
    its path, "standard output"): naming ``where``, with what to do for the usual
    causes (`_FIXES`); ``error`` itself when it names ``where`` already, or is a
    closed pipe (``| head``: no failure, fastprox.cli ends quietly)."""
    if isinstance(error, BrokenPipeError) or error.filename == where:
        return error
    text = error.strerror or str(error)
    fix = _FIXES.get(error.errno)
    return OSError(error.errno, f"{text}; {fix}" if fix and fix not in text else text, where)


@contextlib.contextmanager
def naming(path, where):
    """Within: an OSError naming ``path`` (`atomic_write`'s, say) re-raised as `failure`
    naming ``where``, as ``--model m.npz`` for the option that gave the path; others
    pass."""
    path = os.fspath(path)
    try:
        yield
    except OSError as e:
        if e.filename != path:
            raise
        raise failure(e, where) from None


@contextlib.contextmanager
def _own(path):
    """Within: every OSError, the file operations' of writing ``path`` (the temporary
    file's or the target's name, or none), re-raised as `failure` naming ``path``."""
    try:
        yield
    except OSError as e:
        raise failure(e, path) from None


def check_output(path, option, inputs=()):
    """Refuse now, before any work, an output ``path`` (given as ``option``) that
    `atomic_write` could not write or that would destroy one of ``inputs`` (paths
    read by the same command): ValueError naming the option, the path and the fix."""
    path = os.fspath(path)
    where = f"{option} {path}"
    try:
        target, special = _destination(path, where)
    except IsADirectoryError:
        raise ValueError(f"{where} is a directory; give a file path") from None
    for source in inputs:
        if source is not None and _same_file(target, source):
            raise ValueError(f"{where} is the input {os.fspath(source)}: writing it would destroy "
                             f"the data; give another path")
    if special:
        return
    directory = os.path.dirname(os.path.abspath(target))
    if not os.path.isdir(directory):
        raise ValueError(f"{where}: directory {directory} does not exist; create it first")
    if not os.access(directory, os.W_OK | os.X_OK):
        raise ValueError(f"{where}: directory {directory} is not writable (the file is written "
                         f"there, then renamed); give a path in a writable directory")


def check_distinct(outputs):
    """Refuse (ValueError naming both options) two of a command's outputs, ``(option,
    path)`` pairs each passed by `check_output`, that lead to one file, whether it
    exists or not: the one written last would replace the other. A device or a FIFO
    may take several (``/dev/null``)."""
    seen = []
    for option, path in outputs:
        target, special = _destination(os.fspath(path))
        target = os.path.realpath(target)
        for other_option, other in seen:
            if not special and (target == other or _same_file(target, other)):
                raise ValueError(f"{option} {os.fspath(path)} is the file of {other_option} too: the "
                                 f"one written last would replace the other; give each its own path")
        seen.append((option, target))


def _destination(path, where=None):
    """(the file a write to ``path`` replaces: ``path``, or a symbolic link's target;
    whether ``path`` leads to a device or a FIFO, written directly). A directory or
    a socket raises: IsADirectoryError, or ValueError naming ``where``."""
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:       # a new file, or a dangling link's target
        return (os.path.realpath(path) if os.path.islink(path) else path), False
    if stat.S_ISDIR(mode):
        raise IsADirectoryError(errno.EISDIR, "is a directory; give a file path", path)
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) or stat.S_ISFIFO(mode):
        return path, True
    if not stat.S_ISREG(mode):
        raise ValueError(f"{where or path} is a socket or another special file, which cannot be "
                         "written; give a file path")
    return os.path.realpath(path), False


def _same_file(target, source):
    """Whether ``source`` (a path read) is the file ``target`` (hard links too)."""
    try:
        return os.path.samestat(os.stat(target), os.stat(source))
    except (OSError, ValueError):   # either missing (a new output), or standard input's "-"
        return False


def _written(raw, path, write, compressor, done=None):
    """``write`` into the binary file ``raw`` opened for ``path`` (through ``compressor``
    if any), flushed, ``done()`` (the atomic replace's fsync and rename), then closed.
    On an exception ``raw`` is closed all the same, its own error then left out: a
    failed write fails the buffer's last flush again, which would hide the first
    error under an unnamed one."""
    try:
        if compressor is None:
            write(Output(raw, path))
        else:
            with compressor(Output(raw, path), mode="wb") as out:
                write(out)
        with _own(path):
            raw.flush()
            if done is not None:
                done()
    except BaseException:
        with contextlib.suppress(OSError):
            raw.close()
        raise
    with _own(path):
        raw.close()


def _replace(target, path, write, compressor):
    """The atomic replace of the regular file ``target``, given as ``path``
    (`atomic_write`). An exception at any point, KeyboardInterrupt and SIGTERM's
    included, leaves no temporary file: the one made is removed, or, if the exception
    came while it was being made (before its name was known here), the unlocked
    leftovers of this target are (`_remove_leftovers`)."""
    directory, name = os.path.split(os.path.abspath(target))
    _remove_leftovers(directory, name)
    made = []       # [fd, tmp] once made; fd handed to the file object: None

    def rename():       # (closing the file then releases the lock: after the rename)
        os.fsync(made[0])
        os.chmod(made[1], 0o666 & ~_umask())
        os.replace(made[1], target)
        _fsync_directory(directory)

    try:
        with _own(path):
            made[:] = _locked_temp(directory, name)
        _written(os.fdopen(made[0], "wb"), path, write, compressor, rename)
    except BaseException:
        if not made:
            _remove_leftovers(directory, name)
            raise
        try:
            os.unlink(made[1])
        except FileNotFoundError:
            pass
        raise


def _flock():
    """The fcntl module, or None where there is none (Windows): temporary files
    are then neither locked nor, since a write in progress cannot be told from
    an interrupted one, ever removed by a later write."""
    try:
        import fcntl
    except ImportError:
        return None
    return fcntl


def _locked_temp(directory, name):
    """``(fd, path)`` of a new temporary file for the target ``name`` in
    ``directory`` (mkstemp: ``.NAME.XXXXXXXX.tmp``, mode 0600), locked
    exclusively. Another process's `_remove_leftovers` may remove it between
    its creation and the lock; then it is made again."""
    import tempfile     # here: reading and training need none of it (start-up)
    fcntl = _flock()
    while True:
        try:
            fd, tmp = tempfile.mkstemp(dir=directory, prefix=f".{name}.", suffix=".tmp")
        except FileNotFoundError:
            if not os.path.isdir(directory):
                raise FileNotFoundError(errno.ENOENT, f"directory {directory} does not exist; "
                                                      f"create it first") from None
            raise FileNotFoundError(errno.ENOENT, f"directory {directory} takes no new files (No such file "
                                                  f"or directory); give a path in a directory that "
                                                  f"does") from None
        try:
            if fcntl is None:
                return fd, tmp
            fcntl.flock(fd, fcntl.LOCK_EX)
            if os.fstat(fd).st_nlink:
                return fd, tmp
        except BaseException:       # (Ctrl-C, SIGTERM: the file is not left behind)
            os.close(fd)
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)
            raise
        os.close(fd)


def _remove_leftovers(directory, name):
    """Remove the temporary files that interrupted writes to the target ``name``
    left in ``directory`` (``kill -9``, a crash: up to a whole file each).

    Only regular files named as `_locked_temp` names this target's, ``.NAME.``,
    eight of mkstemp's characters (``[a-z0-9_]``), ``.tmp``: other files, those
    of other targets included, are never touched. A file is removed only if
    its lock is free: a write in progress, in this process or another, holds
    the lock on its temporary file until it has renamed it (flock locks are
    released when their holder dies, so a killed writer's file is free).
    """
    import re
    fcntl = _flock()
    if fcntl is None:
        return
    pattern = re.compile(re.escape(f".{name}.") + r"[a-z0-9_]{8}\.tmp")
    try:
        with os.scandir(directory) as entries:
            leftovers = [e.path for e in entries
                         if pattern.fullmatch(e.name) and e.is_file(follow_symlinks=False)]
    except OSError:     # an unreadable directory: the write itself may still succeed
        return
    for leftover in leftovers:
        _remove_if_unlocked(fcntl, leftover)


def _remove_if_unlocked(fcntl, path):
    """Remove ``path`` if its flock can be taken at once and it is still the file
    locked (not renamed by its writer in the meantime, for instance)."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except OSError:     # gone already, or not ours to open
        return
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        if os.path.samestat(os.fstat(fd), os.stat(path, follow_symlinks=False)):
            os.unlink(path)
    except OSError:     # being written (BlockingIOError), or renamed or removed meanwhile
        pass
    finally:
        os.close(fd)


def _fsync_directory(directory):
    """fsync ``directory``, making a rename in it durable; nothing where a
    directory cannot be opened or fsynced (Windows; some file systems)."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError as e:
        if e.errno not in (errno.EINVAL, errno.EBADF, errno.ENOTSUP, errno.EACCES, errno.EPERM):
            raise
    finally:
        os.close(fd)


def _umask():
    """The process umask (read by setting and restoring it)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask
