"""The ``fastprox`` command line: ``train``, ``predict``, ``info``, ``tag`` and ``parse``.

Each subcommand is a module offering ``add_arguments(parser)`` and
``run(args) -> exit status``; this module only assembles them and turns
user mistakes (bad options, missing or malformed files, invalid estimator
settings: ``ValueError`` and ``OSError``, their messages in the options'
words: fastprox.cli.errors), a lack of memory (``MemoryError``, a model or
data too large for the machine) and a missing package into one line on stderr, ``fastprox: error: ...``, and exit status 1 (2 for
a malformed command line), never a traceback; so is anything unexpected,
named as an internal error. Standard output closed by its reader (``| head``)
ends the command quietly, with exit status 0; a failed write names its output,
as its option gives it or standard output (``> /dev/full``: fastprox._writes).
Ctrl-C and SIGTERM stop the command with exit status 130 and 143, the files being
written left as they were. Every option's help shows its
default.

The commands do no dense linear algebra, so OpenBLAS's worker threads (one
per core, started when NumPy is imported) would only take start-up time and
compete with the reader thread: unless OPENBLAS_NUM_THREADS is set, it is set
to 1 before the command's modules (and so NumPy) are imported. The commands that
stream files in chunks have the C allocator keep the memory of the chunks they free
for the next ones (fastprox._allocator), rather than fault it in again chunk after
chunk.
"""
import argparse
import atexit
import contextlib
import gc
import os
import sys
import threading
from importlib import import_module
from .vw_names import dashed, hints

COMMANDS = ("train", "predict", "info", "tag", "parse")

#: Commands that stream files in chunks: the C allocator keeps the memory their chunks
#: free for the next ones (fastprox._allocator.keep_freed_memory).
_STREAMING = ("train", "predict")


class UsageError(Exception):
    """A malformed command line (argparse's complaint)."""


class Terminated(KeyboardInterrupt):
    """SIGTERM (``kill``, a job scheduler's stop, a container's): raised where the
    command runs, as Ctrl-C's KeyboardInterrupt is, so that it unwinds the same way
    (a file being written is left as it was, its temporary file removed)."""

    #: The exit status: 128 + SIGTERM's number, as the shell reports a process it ended.
    exit_status = 128 + 15


class _Formatter(argparse.RawDescriptionHelpFormatter):
    """Help with each option's default: "(default: VALUE)" appended to the help of an
    option that has a default and does not state it already ("off" for a flag, which
    takes no value: not giving it is its default, whatever the setting it stores,
    e.g. parse's --no-average storing average=False over the default True)."""

    def _get_help_string(self, action):
        text = action.help or ""
        if "default" in text or not action.option_strings or action.default in (None, argparse.SUPPRESS):
            return text
        shown = "off" if action.default is False or action.nargs == 0 else "%(default)s"
        return f"{text} (default: {shown})".strip()


#: The namespace attribute where `_StoreOnce` keeps the values given so far (taken out
#: of the namespace when parsing ends).
_GIVEN = "_fastprox_given"


class _StoreOnce(argparse._StoreAction):
    """argparse's "store", refusing an option given twice with different values, as
    Vowpal Wabbit does (``--passes 2 --passes 3``: "Disagreeing option values"),
    rather than keeping the last one silently; the same value twice is kept. Options
    that add up (``-q``, appended) are not stores and stay repeatable."""

    def __call__(self, parser, namespace, values, option_string=None):
        given = namespace.__dict__.setdefault(_GIVEN, {})
        if self.dest in given and given[self.dest][1] != values:
            earlier, value = given[self.dest]
            parser.error(f"{earlier} {value} and {option_string} {values}: two values for one option; "
                         f"give it once")
        given[self.dest] = (option_string, values)
        super().__call__(parser, namespace, values, option_string)


class _Parser(argparse.ArgumentParser):
    """argparse without the usage dump (its errors become one line, via main()),
    with every option's default in its help (_Formatter), and an option given twice
    with different values refused (`_StoreOnce`)."""

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("formatter_class", _Formatter)
        kwargs.setdefault("allow_abbrev", False)    # (VW's --l1 1e-6 was taken for --l1-ratio 1e-6)
        super().__init__(*args, **kwargs)
        self.register("action", None, _StoreOnce)
        self.register("action", "store", _StoreOnce)

    def parse_known_args(self, args=None, namespace=None):
        """argparse's, VW's spellings of this parser's options read as its own
        (``--holdout_off`` as ``--holdout-off``: `vw_names.dashed`)."""
        if args is not None:
            args = dashed(args, self._option_string_actions)
        namespace, extras = super().parse_known_args(args, namespace)
        namespace.__dict__.pop(_GIVEN, None)
        return namespace, extras

    #: The command parsed (`build_parser`), whose VW hints the errors give.
    command = None

    def parse_args(self, args=None, namespace=None):
        """argparse's, its arguments left unrecognized refused pointing at the help of
        the (sub)command that would have taken them (``fastprox tag train --help``),
        where argparse's own parse_args points at the top parser's."""
        namespace, extras = self.parse_known_args(args, namespace)
        if extras:
            helped = [self.prog] + [word for word in (getattr(namespace, "command", None),
                                                      getattr(namespace, "action", None)) if word]
            self._refuse("unrecognized arguments: " + " ".join(extras), " ".join(helped),
                         getattr(namespace, "action", None))
        return namespace

    def error(self, message):
        self._refuse(message, self.prog)

    def _refuse(self, message, prog, action=None):
        """Raise the UsageError of ``message``, with other tools' hints (for the
        command's ``action``: tag's and parse's train or predict) and ``prog``'s help
        named."""
        raise UsageError(f"{hints(message, self.command, action)} (see '{prog} --help')")


def build_parser(command=None):
    """The parser: one sub-parser per command; only `command`'s options are built
    (all of them when None), so that a run imports what it uses and no more: the
    other commands' modules, whose first docstring lines are their summaries in the
    help, are imported only for the whole parser (``fastprox --help``)."""
    from .. import __version__
    parser = _Parser(prog="fastprox", description="Lazy, exact proximal online learners "
                     "(FOBOS, RDA, FTRL with AdaGrad), streamed:\nlinear models on LIBSVM and VW "
                     "text, sequence taggers, dependency parsers.")
    parser.command = command
    parser.add_argument("--version", action="version", version=f"fastprox {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True,
                                     parser_class=_Parser)
    for name in COMMANDS:
        if command not in (None, name):
            commands.add_parser(name)
            continue
        module = import_module(f".{name}", __name__)
        summary = module.__doc__.strip().splitlines()[0]
        sub = commands.add_parser(name, help=summary, description=module.__doc__)
        module.add_arguments(sub)
        sub.set_defaults(run=module.run)
    return parser


def main(argv=None):
    """Run ``fastprox ARGS`` (``sys.argv[1:]`` when argv is None); the exit status."""
    argv = sys.argv[1:] if argv is None else list(argv)
    command = next((a for a in argv if not a.startswith("-")), None)
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    if command in _STREAMING:
        from .._allocator import keep_freed_memory
        keep_freed_memory()
    try:
        args = _parse(command, argv)
        with _standard_output_named(), _sigterm_interrupts():
            status = args.run(args)
            sys.stdout.flush()      # here, for a closed output to be caught below
        return status
    except UsageError as e:
        return _fail(str(e), status=2)
    except BrokenPipeError:     # an OSError, but not a failure
        return _output_closed()
    except OSError as e:
        if _standard_output(e):     # (what is still buffered would fail again at exit)
            _drop_output()
        where = f"{e.filename}: " if e.filename else ""
        return _fail(where + (e.strerror or str(e)))
    except ValueError as e:             # ModelTooLarge too: its message names the size
        return _fail(_reworded(str(e), command), status=getattr(e, "exit_status", 1))   # (options.OptionError: 2)
    except MemoryError as e:
        return _fail(_reworded(_out_of_memory(e, command), command))
    except ImportError as e:
        return _fail(_missing(e))
    except Terminated as e:
        return _fail("terminated (SIGTERM)", status=e.exit_status)
    except KeyboardInterrupt:
        return _fail("interrupted", status=130)
    except Exception as e:              # a bug: one line all the same, and how to report it
        return _fail(f"internal error ({type(e).__name__}: {e}); please report it with the "
                     f"command line that gave it")


def console(argv=None):
    """Run the ``fastprox`` command as the console script does, and end the process.

    `main`, then, once standard output and standard error are flushed, the exit
    functions run (``atexit``) and no thread but daemon ones is left, the process
    ends at once (``os._exit``) rather than through the interpreter's teardown,
    which frees every module, object and array one at a time for a process about
    to end. Every file the command writes is closed before `main` returns (a model
    file written atomically and synced), so nothing is lost; when those conditions
    do not hold (a flush fails, a non-daemon thread runs), the interpreter exits as
    usual.

    Parameters
    ----------
    argv : list of str or None
        The arguments (``sys.argv[1:]`` when None).

    Returns
    -------
    int
        The exit status, when the process could not end at once (the interpreter
        then exits with it, as ``sys.exit(main())`` would).
    """
    status = main(argv)
    run_exit_functions = getattr(atexit, "_run_exitfuncs", None)
    if (run_exit_functions is None or not _flushed()    # (the usual exit runs them, reports it)
            or not all(t.daemon for t in threading.enumerate() if t is not threading.main_thread())):
        return status
    run_exit_functions()        # (once: they are cleared)
    if not _flushed():
        return status
    os._exit(status)


@contextlib.contextmanager
def _sigterm_interrupts():
    """Within: SIGTERM raises `Terminated` in the main thread, as Ctrl-C raises
    KeyboardInterrupt (Python's default for SIGTERM is to die at once, leaving a
    temporary file behind). Only where SIGTERM has its default action and this is
    the main thread (signal handlers are set there only); the handler before is
    restored after."""
    import signal
    if threading.current_thread() is not threading.main_thread() or \
            signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL:
        yield
        return

    def terminate(signum, frame):
        raise Terminated()

    signal.signal(signal.SIGTERM, terminate)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)


@contextlib.contextmanager
def _standard_output_named():
    """Within: standard output's write errors (``> /dev/full``, a full disk) name it
    and the fix, as those of the files written (fastprox._writes.Output)."""
    from .._writes import STANDARD_OUTPUT, Output
    stdout = sys.stdout
    sys.stdout = Output(stdout, STANDARD_OUTPUT)
    try:
        yield
    finally:
        sys.stdout = stdout


def _standard_output(error):
    """Whether the OSError ``error`` is a failed write to standard output."""
    from .._writes import STANDARD_OUTPUT
    return error.filename == STANDARD_OUTPUT


def _flushed():
    """Whether standard output and standard error are flushed (False if a flush fails:
    a closed or failing stream, which the interpreter's usual exit reports)."""
    try:
        sys.stdout.flush()
        sys.stderr.flush()
        return True
    except (AttributeError, OSError, ValueError):
        return False


def _reworded(message, command):
    """The message in the options' words of ``command`` (the library's checks)."""
    from .errors import reworded
    return reworded(message, command)


def _missing(error):
    """The line for a package that is not installed: which, and how to install it (the
    library's own ImportError says both: fastprox.dask's, for the dask extra)."""
    if "pip install" in str(error):
        return str(error)
    name = error.name or str(error)
    return f"fastprox needs the package {name!r}: pip install fastprox (or: pip install {name})"


def _parse(command, argv):
    """The parsed command line. The command's modules (and NumPy) are imported
    here with the cyclic garbage collector paused: imports allocate much and
    free little, so its passes over them are wasted (10 ms of NumPy's import)."""
    paused = gc.isenabled()
    gc.disable()
    try:
        return build_parser(command if command in COMMANDS else None).parse_args(argv)
    finally:
        if paused:
            gc.enable()


def _out_of_memory(error, command):
    """The line for a MemoryError: its message when it says what ran out of memory
    (the reader's, train's), else "out of memory" with NumPy's detail (the size it
    could not allocate) if any, and the fixes ``command`` offers."""
    message = str(error)
    if "memory" in message:
        return message
    from .errors import LESS_MEMORY
    detail = f" ({message})" if message else ""
    return f"out of memory{detail}; " + LESS_MEMORY.get(
        command, "use fewer features (hash them into fewer buckets) or a smaller --chunk-rows")


def _output_closed():
    """Exit status 0 for a command whose reader stopped reading (``| head``): the
    output it wanted was delivered, the rest is not wanted (`_drop_output`)."""
    _drop_output()
    return 0


def _drop_output():
    """Point standard output at /dev/null, so that the interpreter's last flush of
    what is still buffered does not fail again (a message on stderr and exit status
    120): after a closed reader, or a failed write (a full disk)."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)


def _fail(message, status=1):
    print(f"fastprox: error: {' '.join(message.split())}", file=sys.stderr)
    return status
