"""Run a benchmark shipped with fastprox (bench NAME --help).

Every module of ``fastprox.benchmarks`` that offers ``add_arguments(parser)``
and ``run(args)`` is a subcommand here under its module name: adding a
benchmark needs no change to the command line.
"""
import importlib
import pkgutil

from .. import benchmarks


def add_arguments(parser):
    """One sub-parser per benchmark module; a package of benchmarks that names a
    ``COMMAND`` (``papers``: ``paper``) becomes a group, ``fastprox bench paper NAME``."""
    _add_benchmarks(parser, benchmarks)


def _add_benchmarks(parser, package):
    names = parser.add_subparsers(dest=f"benchmark_{package.__name__}", metavar="BENCHMARK",
                                  required=True, parser_class=type(parser))
    for name, module in available(package).items():
        command = getattr(module, "COMMAND", name)
        sub = names.add_parser(command, help=module.__doc__.strip().splitlines()[0])
        if hasattr(module, "run"):
            module.add_arguments(sub)
            sub.set_defaults(benchmark_run=module.run)
        else:
            _add_benchmarks(sub, module)


def available(package=benchmarks):
    """name -> module for every benchmark module of ``package`` with add_arguments and
    run, and every sub-package that names a COMMAND."""
    found = {}
    for info in pkgutil.iter_modules(package.__path__):
        module = importlib.import_module(f"{package.__name__}.{info.name}")
        runnable = hasattr(module, "add_arguments") and hasattr(module, "run")
        if runnable or (info.ispkg and hasattr(module, "COMMAND")):
            found[info.name] = module
    return found


def run(args):
    """Run the chosen benchmark; its exit status."""
    return args.benchmark_run(args)
