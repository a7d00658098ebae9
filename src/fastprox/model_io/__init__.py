"""Model files: save a fitted ProxClassifier / ProxRegressor, load it back ready
to predict and to continue ``partial_fit`` exactly where it stopped; read it
without scikit-learn (`read_model`) and write one from a kernel (`write_model`),
as the command line does.

The format, and why it is not pickle: `format`. The package's modules, along the
format's seams:

- `writer`: `save_model`, `write_model`.
- `loader`: `read_model`, `load_model`, `estimator_of` (a read model as its estimator).
- `archive`: the bounded zip reader (no member decompressed before its size is
  known to be the one the header implies).
- `header`: the header's checks; `checks`: the members' and the state's, per rule;
  `layout`: the kernel's state rows by rule (fastprox._mixing reads them too).
- `upgrades`: what earlier versions of the format lack or store otherwise.
"""
from .format import FORMAT, VERSION
from .loader import SavedModel, estimator_of, load_model, read_model
from .writer import save_model, write_model

__all__ = ["save_model", "load_model", "read_model", "write_model", "estimator_of", "SavedModel", "FORMAT",
           "VERSION"]
