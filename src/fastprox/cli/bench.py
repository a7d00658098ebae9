"""Run a benchmark shipped in fastprox.benchmarks (``fastprox bench NAME --help``).

Every module of ``fastprox.benchmarks`` that offers ``add_arguments(parser)``
and ``run(args)`` is a subcommand here under its module name: adding a
benchmark needs no change to the command line.
"""
import importlib
import pkgutil

from .. import benchmarks


def add_arguments(parser):
    """One sub-parser per benchmark module."""
    names = parser.add_subparsers(dest="benchmark", metavar="BENCHMARK", required=True,
                                  parser_class=type(parser))
    for name, module in available().items():
        sub = names.add_parser(name, help=module.__doc__.strip().splitlines()[0])
        module.add_arguments(sub)
        sub.set_defaults(benchmark_run=module.run)


def available():
    """name -> module for every benchmark module with add_arguments and run."""
    found = {}
    for info in pkgutil.iter_modules(benchmarks.__path__):
        module = importlib.import_module(f"{benchmarks.__name__}.{info.name}")
        if hasattr(module, "add_arguments") and hasattr(module, "run"):
            found[info.name] = module
    return found


def run(args):
    """Run the chosen benchmark; its exit status."""
    return args.benchmark_run(args)
