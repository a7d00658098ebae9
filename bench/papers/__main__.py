"""``python -m bench.papers NAME [options]``: run one paper experiment (``--help``
lists them; ``python -m bench.papers NAME --help`` gives its options)."""
import argparse
import sys

from bench.papers import available


def parser():
    """One sub-parser per experiment, with the experiment's own options."""
    top = argparse.ArgumentParser(prog="python -m bench.papers",
                                  description="The papers' experiments, rerun with fastprox.")
    names = top.add_subparsers(dest="experiment", metavar="NAME", required=True)
    for name, module in available().items():
        doc = module.__doc__.strip()
        sub = names.add_parser(name, help=doc.splitlines()[0], description=doc.splitlines()[0])
        module.add_arguments(sub)
        sub.set_defaults(run=module.run)
    return top


def main(argv=None):
    args = parser().parse_args(argv)
    return args.run(args)


if __name__ == "__main__":
    sys.exit(main())
