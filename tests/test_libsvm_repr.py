"""The LIBSVM writers' float text (`fastprox._libsvm`, _kernel/text/repr.h: Ryu's shortest
digits in repr's layout) is byte for byte Python's ``repr``: ``format_predictions``
(``train -p``, ``predict``) writes ``repr(x)``, ``format_rows`` (`dump_libsvm`) the same
without the ".0" of an integral value.  Checked on the edges named below, on random bit
patterns (every sign, exponent and significand, NaN and infinities among them: 600,000
by default, 30 million in the slow run) and on random "nice" values (short decimals,
margins in [-1, 1], integers)."""
import math

import numpy as np
import pytest

from fastprox._libsvm import format_predictions, format_rows


def lines(values):
    """format_predictions's text of ``values``, one output a row, as a list of str."""
    x = np.ascontiguousarray(values, dtype=np.float64)
    return format_predictions(x, 1, None, None, 0).decode().split("\n")[:-1]


def assert_repr(values):
    """format_predictions writes repr(v) for each v of ``values``; the first one that
    differs is named."""
    x = np.ascontiguousarray(values, dtype=np.float64)
    got = format_predictions(x, 1, None, None, 0)
    want = "".join(f"{v!r}\n" for v in x.tolist()).encode()
    if got != want:
        for v, g in zip(x.tolist(), got.decode().split("\n")):
            assert g == repr(v), f"{v.hex()}: wrote {g!r}, repr {v!r}"
    assert got == want


def random_bits(rng, n):
    """n doubles of uniformly random bit patterns."""
    return rng.integers(0, 2**64, n, dtype=np.uint64, endpoint=False).view(np.float64)


def edges():
    """The values where repr's layout or the digits' search changes."""
    tiny, big = 5e-324, 1.7976931348623157e308
    values = [0.0, -0.0, 1.0, -1.0, 0.1, 0.2, 0.3, 0.1 + 0.2, 1 / 3, 2 / 3, 123.456, -2.5,
              tiny, -tiny, 2 * tiny, 3 * tiny, 2.225073858507201e-308, 2.2250738585072014e-308,
              big, -big, 1e16, 1e22, 1e23, 2e16 + 8, 9007199254740993, 9007199254740992.0,
              9007199254740994.0, 9999999999999998.0, 1e15 + 0.3, 1e-4, 1e-5, 1.5e-7,
              0.00012345, 1e100, 1e-100, 1e308, 1e-308, 1e-323, 4.9406564584124654e-324,
              1.7976931348623157e308 / 3, 5e-310, math.pi, math.e, 2**63, 2**64, 2.0**-1022]
    values += [2.0**k for k in range(-1074, 1024)]
    values += [10.0**k for k in range(-323, 309)]
    values += [float(f"1e{k}") for k in range(-323, 309)]        # the correctly rounded ones
    values += [float(f"{m}e{k}") for m in (1, 5, 9, 12345, 99999999999999999) for k in range(-25, 25)]
    values += [float(i) for i in range(-1000, 100001)]
    values += [float(2**53 + i) for i in range(-2000, 2000)]
    values += [float(10**k + i) for k in (15, 16, 17) for i in range(-50, 51)]
    for x in (1e16, 1e-4, 1e-5, 1e15, 1.0, 2.0**53, tiny, 2.2250738585072014e-308, big):
        y = z = x
        for _ in range(20):                        # the neighbours of each switch point
            y, z = math.nextafter(y, math.inf), math.nextafter(z, 0.0)
            values += [y, z]
    return values


def test_edges_as_repr():
    values = edges()
    assert_repr(values)
    assert_repr([-v for v in values])


def test_layout():
    """repr's layout: fixed from 1e-4 to below 1e16 with ".0" on integral values,
    scientific elsewhere with a sign and at least two exponent digits, -0.0, inf, nan
    (a NaN's sign not written)."""
    values = [1e16, 1e-5, 1.5e-7, 1e-4, 9999999999999998.0, 0.5, -0.0, 5e-324, 1e100, 123.0,
              math.inf, -math.inf, math.nan, -math.nan, 17976931348623157e292]
    assert lines(values) == ["1e+16", "1e-05", "1.5e-07", "0.0001", "9999999999999998.0", "0.5",
                             "-0.0", "5e-324", "1e+100", "123.0", "inf", "-inf", "nan", "nan",
                             "1.7976931348623157e+308"]


def test_rows_without_dot_0():
    """format_rows writes repr's text without the ".0" of an integral value (LIBSVM's
    ``1``, not ``1.0``), labels and values alike."""
    rng = np.random.default_rng(7)
    values = np.concatenate([np.array(edges(), dtype=np.float64), random_bits(rng, 20_000)])
    values = values[np.isfinite(values)]
    n = len(values)
    text = format_rows(values, np.zeros(n, dtype=np.int64), np.arange(n + 1, dtype=np.int64),
                       values, np.zeros(0, dtype=np.int64), 1)
    def short(v):
        r = repr(v)
        return r[:-2] if r.endswith(".0") else r
    want = "".join(f"{short(v)} 1:{short(v)}\n" for v in values.tolist()).encode()
    assert text == want


def test_random_bit_patterns_as_repr():
    rng = np.random.default_rng(20261201)
    assert_repr(random_bits(rng, 600_000))


def test_nice_values_as_repr():
    """Values as data and margins are: short decimals over a range of scales, margins in
    [-1, 1] and their roundings, integers up to 2^53 and beyond."""
    rng = np.random.default_rng(24)
    n = 80_000
    mantissas = rng.integers(-10**6, 10**6, n)
    scales = 10.0 ** rng.integers(-25, 25, n)
    margins = rng.uniform(-1.0, 1.0, n)
    values = [mantissas * scales, mantissas / 10.0 ** rng.integers(0, 12, n), margins,
              np.round(margins, 3), np.round(margins * 1e6, 2), np.float32(margins).astype(np.float64),
              rng.integers(-2**62, 2**62, n).astype(np.float64), rng.integers(-2**53, 2**53, n).astype(np.float64),
              margins * 1e16, margins * 1e-4]
    assert_repr(np.concatenate(values))


@pytest.mark.slow
def test_many_random_bit_patterns_as_repr():
    """30 million random bit patterns, in chunks: about 55 s on one core, nearly all of it
    repr's (1.5 us a random bit pattern, Gay's bignum arithmetic over the whole exponent
    range; the writer takes 0.1 us)."""
    rng = np.random.default_rng(30_000_000)
    for _ in range(15):
        assert_repr(random_bits(rng, 2_000_000))
