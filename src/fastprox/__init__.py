"""fastprox: lazy, exact proximal online learners for sparse data."""
from .linear_model import ProxClassifier, ProxRegressor

__version__ = "0.1.0"
__all__ = ["ProxClassifier", "ProxRegressor"]
