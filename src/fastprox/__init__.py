"""fastprox: lazy, exact proximal online learners for sparse data.

Every public name loads its module on first use: ``import fastprox`` costs
nothing, so that the command line can set up the process before NumPy is
imported, and the estimators (which import scikit-learn) never slow down
the readers or the command line.
"""
from importlib import import_module

__version__ = "0.1.0"

_LAZY = {"ProxClassifier": "linear_model", "ProxRegressor": "linear_model",
         "L1BallClassifier": "l1ball", "save_model": "model_io", "load_model": "model_io",
         "load_libsvm": "libsvm", "iter_libsvm": "libsvm", "dump_libsvm": "libsvm",
         "project_l1_ball": "projection", "project_l1_ball_sort": "projection",
         "SparseL1Ball": "projection", "hash_features": "hashing"}
__all__ = ["ProxClassifier", "ProxRegressor", "L1BallClassifier", "load_libsvm", "iter_libsvm",
           "dump_libsvm", "project_l1_ball", "project_l1_ball_sort", "SparseL1Ball", "save_model",
           "load_model", "hash_features"]


def __getattr__(name):
    if name in _LAZY:
        return getattr(import_module(f".{_LAZY[name]}", __name__), name)
    raise AttributeError(f"module 'fastprox' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(__all__))
