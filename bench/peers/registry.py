"""Which learners the suite can run here: each peer library is imported only
when asked for, and one that is not installed is named with the reason, not
fatal (`pip install "fastprox[bench]"` installs them all; lightning needs
`pip install sklearn-contrib-lightning --no-build-isolation`)."""
import importlib

#: suite name -> (module of this package, pip package that provides it)
PEERS = {
    "fastprox": ("fastprox_rules", "fastprox"),
    "sklearn": ("sklearn_sgd", "scikit-learn"),
    "vw": ("vw", "vowpalwabbit"),
    "river": ("river_peers", "river"),
    "lightning": ("lightning_peer", "sklearn-contrib-lightning"),
}
REFERENCE = ("liblinear_ref", "liblinear-official")


def _module(name):
    return importlib.import_module(f"{__package__}.{name}")


def learners(alpha, river_rows, only=None):
    """(peers, missing): the peer objects of the installed libraries among
    `only` (default all), and {library: reason} for the others."""
    peers, missing = [], {}
    for key, (module, package) in PEERS.items():
        if only is not None and key not in only:
            continue
        try:
            mod = _module(module)
        except ImportError as error:
            missing[key] = f"not installed (pip install {package}): {error}"
            continue
        peers += mod.make(alpha, river_rows) if key == "river" else mod.make(alpha)
    return peers, missing


def reference(alpha):
    """(LIBLINEAR peer or None, reason it is missing or None)."""
    module, package = REFERENCE
    try:
        return _module(module).make(alpha), None
    except ImportError as error:
        return None, f"not installed (pip install {package}): {error}"
