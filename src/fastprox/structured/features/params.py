"""Checks of the parameters both extractors take (the values' type, hashing
bits, batch size), with the fix in each message, and the hashing blocks'
size that the sequence and the arc extractors share."""
import numpy as np

__all__ = ["check_shared", "block_bits", "FLOAT_TYPES"]

#: The value types an extractor may produce.
FLOAT_TYPES = (np.float64, np.float32)


def _positive_int(value, high=None):
    return isinstance(value, (int, np.integer)) and value >= 1 and (high is None or value <= high)


def check_shared(dtype, bits, batch_items):
    """ValueError unless ``dtype`` is float64 or float32, ``bits`` None or an
    integer in 1..62 and ``batch_items`` a positive integer."""
    if dtype not in FLOAT_TYPES:
        raise ValueError(f"dtype must be np.float64 or np.float32, not {dtype!r}")
    if bits is not None and not _positive_int(bits, 62):
        raise ValueError(f"bits must be None (a vocabulary) or an integer in 1..62, not {bits!r}")
    if not _positive_int(batch_items):
        raise ValueError(f"batch_items must be a positive integer, not {batch_items!r}")


def block_bits(bits, n_templates):
    """The bits of each template's block of columns when ``n_templates``
    templates hash into at most ``2**bits`` columns: ``bits - ceil(log2
    n_templates)``; ValueError when that leaves none."""
    spare = (n_templates - 1).bit_length()
    if bits - spare < 1:
        raise ValueError(f"bits={bits} leaves no bucket per template for {n_templates} templates; "
                         f"use bits >= {spare + 1}")
    return bits - spare
