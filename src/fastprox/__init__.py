"""fastprox: lazy, exact proximal online learners for sparse data.

The estimators (and everything that imports scikit-learn) load on first use,
so that the command line and the readers start without scikit-learn's import
cost.
"""
from importlib import import_module

from .libsvm import dump_libsvm, iter_libsvm, load_libsvm
from .projection import SparseL1Ball, project_l1_ball, project_l1_ball_sort

__version__ = "0.1.0"

_LAZY = {"ProxClassifier": "linear_model", "ProxRegressor": "linear_model",
         "L1BallClassifier": "l1ball", "save_model": "model_io", "load_model": "model_io"}
__all__ = ["ProxClassifier", "ProxRegressor", "L1BallClassifier", "load_libsvm", "iter_libsvm",
           "dump_libsvm", "project_l1_ball", "project_l1_ball_sort", "SparseL1Ball", "save_model",
           "load_model"]


def __getattr__(name):
    if name in _LAZY:
        return getattr(import_module(f".{_LAZY[name]}", __name__), name)
    raise AttributeError(f"module 'fastprox' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(__all__))
