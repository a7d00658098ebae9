"""``python -m fastprox ARGS``: the ``fastprox`` command (fastprox.cli), for an
interpreter without the console script, or a checkout run from its source
(``PYTHONPATH=src python -m fastprox``) beside an installed copy. Imported
otherwise (a walk over the package's modules), it runs nothing."""
import sys

if __name__ == "__main__":
    from .cli import console
    sys.exit(console())
