"""``python -m bench.peers [options]``: the peer suite on the shipped synthetic set
and the real sets under --data (``python -m bench.peers.run`` is the repository's
full run, which writes bench/results/peers.md)."""
import argparse
import sys

from bench import peers

if __name__ == "__main__":
    sys.exit(peers.run(peers.add_arguments(argparse.ArgumentParser(
        prog="python -m bench.peers", description=peers.__doc__.splitlines()[0])).parse_args()))
