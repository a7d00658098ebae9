"""fastprox: lazy, exact proximal online learners for sparse data."""
__version__ = "0.1.0"
