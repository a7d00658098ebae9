"""``fastprox ARGS`` as a user runs it: in a fresh interpreter, this checkout's
package first on the path (it is not installed)."""
import os
import sys
from pathlib import Path

import fastprox

SRC = str(Path(fastprox.__file__).resolve().parents[1])
_MAIN = "import sys; from fastprox.cli import console; sys.exit(console())"


def cli_command(*argv):
    """The command line and the environment that run ``fastprox ARGV``."""
    env = {**os.environ, "PYTHONPATH": SRC + os.pathsep + os.environ.get("PYTHONPATH", "")}
    return [sys.executable, "-c", _MAIN, *map(str, argv)], env
