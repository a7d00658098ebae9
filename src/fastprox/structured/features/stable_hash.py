"""Stable 64-bit hashes of feature values for hashing mode.

The same value gets the same hash on every run, machine and Python version
(Python's ``hash`` of a string is salted per process, so it cannot serve):

- a string's hash is the BLAKE2b digest of its UTF-8 bytes, 8 bytes long,
  read as a little-endian unsigned integer (:func:`string_hashes`);
- a conjunction's hash folds its values' hashes into the template's seed,
  one at a time, with MurmurHash3's 64-bit finalizer:
  ``h <- fmix64((h * 0x9E3779B97F4A7C15 mod 2^64) XOR value)`` (:func:`combine`),
  so that the order of the values matters;
- the seed of a template is the hash of its text (:func:`seed`).

The 64-bit result goes to a bucket by `fastprox.hashing`'s multiplicative
hash, as Vowpal Wabbit's ``-b`` does for ids.
"""
from hashlib import blake2b

import numpy as np

__all__ = ["string_hashes", "combine", "seed"]

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_C1, _C2 = np.uint64(0xFF51AFD7ED558CCD), np.uint64(0xC4CEB9FE1A85EC53)
_S33 = np.uint64(33)


def string_hashes(strings):
    """The hashes of ``strings`` (an iterable of str), as a uint64 array."""
    digests = b"".join(blake2b(s.encode("utf-8"), digest_size=8).digest() for s in strings)
    return np.frombuffer(digests, dtype="<u8").astype(np.uint64)


def combine(h, values):
    """Fold the uint64 array ``values`` into the hashes ``h`` (uint64, an array
    or a scalar broadcast to them)."""
    x = (np.asarray(h, dtype=np.uint64) * _GOLDEN) ^ values
    x ^= x >> _S33
    x *= _C1
    x ^= x >> _S33
    x *= _C2
    x ^= x >> _S33
    return x


def seed(text):
    """The starting hash of the template written ``text``."""
    return string_hashes([text])[0]
