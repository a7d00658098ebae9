"""Benchmarks run by ``fastprox bench``: each module offers add_arguments(parser) and run(args)."""
