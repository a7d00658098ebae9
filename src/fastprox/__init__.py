"""fastprox: lazy, exact proximal online learners for sparse data."""
from .libsvm import dump_libsvm, iter_libsvm, load_libsvm
from .linear_model import ProxClassifier, ProxRegressor

__version__ = "0.1.0"
__all__ = ["ProxClassifier", "ProxRegressor", "load_libsvm", "iter_libsvm", "dump_libsvm"]
