"""The papers' experiments, rerun with fastprox: one module per experiment.

Each module offers ``add_arguments(parser)`` and ``run(args) -> int`` (as
``bench.table1``) and runs from the repository's root as ``python -m
bench.papers NAME [--quick]`` (or ``python -m bench.papers.NAME``); it writes ``NAME.md`` (the
paper's numbers or claims beside the measured ones, with a verdict per
claim) and its PNG plots to ``--out-dir`` (default ``bench/papers``).

* ``rda_mnist``: Xiao (2010), Sec. 6, l1-RDA against truncated gradient on
  MNIST digit pairs (Figures 3, 4 and 7).
* ``adagrad_text``: Duchi, Hazan & Singer (2011), Sec. 6.1, 6.4, 6.5 (Tables
  1 and 4, Figure 7) on the text sets and on census income (a9a).
* ``fobos_synthetic``: Duchi & Singer (2009), Sec. 7.1-7.2, step-size
  sensitivity and FOBOS against Pegasos on synthetic data.
* ``template_selection``: Martins et al., Sec. 4 and Fig. 1, template selection
  by online MKL for dependency parsing on UD English EWT.
"""

import importlib
import pkgutil


def available():
    """name -> module of every experiment (a module of this package with
    add_arguments and run)."""
    found = {}
    for info in pkgutil.iter_modules(__path__):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        if hasattr(module, "add_arguments") and hasattr(module, "run"):
            found[info.name] = module
    return found
