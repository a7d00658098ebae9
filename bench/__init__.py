"""The benchmarks and paper reproductions of fastprox, run from a clone's root as
``python -m bench.NAME [options]`` (``python -m bench`` lists them). Not part of
the installed library: they import peers that are not its dependencies
(``pip install ".[bench]"``).
"""
