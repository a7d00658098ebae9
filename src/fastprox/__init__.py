"""fastprox: lazy, exact proximal online learners for sparse data."""
from .l1ball import L1BallClassifier
from .libsvm import dump_libsvm, iter_libsvm, load_libsvm
from .linear_model import ProxClassifier, ProxRegressor
from .projection import SparseL1Ball, project_l1_ball, project_l1_ball_sort

__version__ = "0.1.0"
__all__ = ["ProxClassifier", "ProxRegressor", "L1BallClassifier", "load_libsvm", "iter_libsvm",
           "dump_libsvm", "project_l1_ball", "project_l1_ball_sort", "SparseL1Ball"]
