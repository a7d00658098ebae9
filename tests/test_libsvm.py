"""Tests for fastprox.libsvm: equality with scikit-learn, format, errors, fuzzing."""
import bz2
import gzip
import io
import lzma
import os
import re
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from sklearn.datasets import load_svmlight_file

from fastprox.libsvm import load, reader, writer
from fastprox.libsvm import dump_libsvm, iter_libsvm, load_libsvm
from fastprox.structured.io import read_conll
from tests.support.shared import SHARED_DATA, missing

#: Every file of the shared data directory (tests/support/shared.py), each compared below.
DATA_FILES = sorted(p for p in SHARED_DATA.rglob("*") if p.is_file() and p.suffix != ".md")


def write(tmp_path, content, name="data.svm"):
    path = tmp_path / name
    path.write_bytes(content)
    return path


def assert_same(a, b):
    """Same CSR structure and bit-identical values (so -0.0 and 0.0 differ)."""
    a, b = sp.csr_matrix(a), sp.csr_matrix(b)
    assert a.shape == b.shape
    np.testing.assert_array_equal(a.indptr, b.indptr)
    np.testing.assert_array_equal(a.indices, b.indices)
    assert a.data.dtype == b.data.dtype
    np.testing.assert_array_equal(a.data.view(np.uint8), b.data.view(np.uint8))


def stack(chunks):
    """The chunks of iter_libsvm as one (X, y), widened to the last width."""
    width = chunks[-1][0].shape[1]
    X = sp.vstack([sp.csr_matrix((c[0].data, c[0].indices, c[0].indptr),
                                 shape=(c[0].shape[0], width)) for c in chunks], format="csr")
    return X, np.concatenate([c[1] for c in chunks])


# --- equality with scikit-learn on every shared data file -------------------------

def test_data_directory_present():
    if DATA_FILES:
        return
    missing(f"no data files under {SHARED_DATA} (set FASTPROX_DATA)")


@pytest.mark.parametrize("path", DATA_FILES, ids=lambda p: str(p.relative_to(SHARED_DATA)))
def test_equals_scikit_learn(path):
    X_ref, y_ref = load_svmlight_file(str(path))
    X, y = load_libsvm(path)
    assert X.indices.dtype == np.int32
    assert_same(X, X_ref)
    np.testing.assert_array_equal(y, y_ref)
    width = X_ref.shape[1] + 3
    X_wide, _ = load_libsvm(path, n_features=width)
    X_ref.resize(X_ref.shape[0], width)
    assert_same(X_wide, X_ref)


@pytest.mark.parametrize("name", ["w8a/w8a", "dna/dna.scale"])
def test_data_file_streams_like_whole_load(name, shared_data):
    (path,) = shared_data(name)
    X, y = load_libsvm(path)
    X_it, y_it = stack(list(iter_libsvm(path, chunk_rows=997, block_bytes=65536)))
    assert_same(X_it, X)
    np.testing.assert_array_equal(y_it, y)


# --- format features ---------------------------------------------------------------

FEATURES = (
    b"# a comment line\n"
    b"1 1:0.5 3:2 # trailing comment\r\n"
    b"\n"
    b"+1 qid:7 2:1e3\t \n"
    b"-1\n"
    b"1.0 qid:8\r\n"
    b"   \t\r\n"
    b"1e3 2:-0 4:.5\n"
    b"-1 1:1"
)


def test_format_features(tmp_path):
    X, y = load_libsvm(write(tmp_path, FEATURES))
    np.testing.assert_array_equal(y, [1, 1, -1, 1, 1000, -1])
    expected = np.array([[0.5, 0, 2, 0], [0, 1e3, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0],
                         [0, -0.0, 0, 0.5], [1, 0, 0, 0]])
    np.testing.assert_array_equal(X.toarray(), expected)
    assert X.nnz == 6  # the explicit -0 is stored, as scikit-learn does
    assert np.signbit(X[4].data[0])
    X_ref, y_ref = load_svmlight_file(str(tmp_path / "data.svm"))
    assert_same(X, X_ref)
    np.testing.assert_array_equal(y, y_ref)


def test_byte_order_mark(tmp_path):
    """A UTF-8 byte order mark opening a file (Notepad and some exports write one)
    is skipped, as Vowpal Wabbit's reader and fastprox's VW text skip it: the rows
    are the plain file's, read whole or a few bytes at a time, and a zero-based
    file is still recognized by its first index. Anywhere else those bytes are
    not a label; neither are they at the start of a span that does not open the
    file (load_libsvm's second half), which one pass would have refused."""
    plain = b"0 0:1 2:0.5\n1 1:2\n"
    X_ref, y_ref = load_libsvm(write(tmp_path, plain, "plain.svm"))
    path = write(tmp_path, b"\xef\xbb\xbf" + plain)
    X, y = load_libsvm(path)
    assert_same(X, X_ref)
    np.testing.assert_array_equal(y, y_ref)
    (X_it, y_it), = iter_libsvm(path, block_bytes=2)
    assert_same(X_it, X_ref)
    later = write(tmp_path, plain + b"\xef\xbb\xbf1 1:2\n", "later.svm")
    with pytest.raises(ValueError, match=r"later.svm:3: label '\\xef\\xbb\\xbf1' is not a number"):
        load_libsvm(later)
    span = reader.Reader(str(later), None, None, "float64", True, False, False, 1 << 16,
                         span=(len(plain), None))
    with pytest.raises(ValueError, match=r"label '\\xef\\xbb\\xbf1' is not a number"):
        list(span)


def test_query_id(tmp_path):
    path = write(tmp_path, b"1 qid:3 1:1\n# c\n-1 qid:-2 2:1\n2 qid:+5\n")
    X, y, qid = load_libsvm(path, query_id=True)
    np.testing.assert_array_equal(qid, [3, -2, 5])
    np.testing.assert_array_equal(y, [1, -1, 2])
    X_skip, y_skip = load_libsvm(path)
    assert_same(X_skip, X)
    chunks = list(iter_libsvm(path, chunk_rows=2, query_id=True))
    np.testing.assert_array_equal(np.concatenate([c[2] for c in chunks]), [3, -2, 5])


@pytest.mark.parametrize("zero_based, first_column", [(True, 1), (False, 0), ("auto", 0)])
def test_zero_based(tmp_path, zero_based, first_column):
    X, _ = load_libsvm(write(tmp_path, b"1 1:5\n"), zero_based=zero_based)
    assert X.shape == (1, first_column + 1)
    assert X[0, first_column] == 5


def test_auto_zero_based_when_an_index_is_zero(tmp_path):
    X, _ = load_libsvm(write(tmp_path, b"1 1:5\n2 0:3\n"))
    np.testing.assert_array_equal(X.toarray(), [[0, 5], [3, 0]])


def test_iter_auto_decides_from_first_chunk_with_features(tmp_path):
    path = write(tmp_path, b"1\n1\n2 0:3 4:1\n1 1:5\n")
    X, y = stack(list(iter_libsvm(path, chunk_rows=2)))
    X_whole, _ = load_libsvm(path)
    assert_same(X, X_whole)


def test_iter_width_grows_without_n_features(tmp_path):
    path = write(tmp_path, b"1 1:1\n1 5:1\n1 2:1\n")
    widths = [X.shape[1] for X, _ in iter_libsvm(path, chunk_rows=1)]
    assert widths == [1, 5, 5]
    widths = [X.shape[1] for X, _ in iter_libsvm(path, chunk_rows=1, n_features=9)]
    assert widths == [9, 9, 9]


def test_dtype_float32(tmp_path):
    X, y = load_libsvm(write(tmp_path, b"1 1:0.1 2:3.4028235e38\n"), dtype=np.float32)
    assert X.dtype == np.float32 and y.dtype == np.float64
    np.testing.assert_array_equal(X.data, np.array([0.1, 3.4028235e38]).astype(np.float32))


def test_allow_nonfinite(tmp_path):
    X, y = load_libsvm(write(tmp_path, b"inf 1:nan 2:-Infinity 3:INF\n"), allow_nonfinite=True)
    assert y[0] == np.inf
    assert np.isnan(X.data[0]) and X.data[1] == -np.inf and X.data[2] == np.inf


def test_empty_file(tmp_path):
    X, y = load_libsvm(write(tmp_path, b""))
    assert X.shape == (0, 1) and y.shape == (0,)
    assert [c[0].shape for c in iter_libsvm(tmp_path / "data.svm")] == [(0, 1)]


def test_large_index_uses_int64(tmp_path):
    X, _ = load_libsvm(write(tmp_path, b"1 3000000000:1\n"))
    assert X.shape == (1, 3_000_000_000) and X.indices.dtype == np.int64
    assert X.indices[0] == 2_999_999_999


def test_long_line_longer_than_block(tmp_path):
    line = b"1 " + b" ".join(b"%d:%d" % (i, i) for i in range(1, 3000)) + b"\n"
    path = write(tmp_path, line * 3)
    X, _ = load_libsvm(path, block_bytes=100)
    assert X.shape == (3, 2999) and X.nnz == 3 * 2999


class Trickle(io.RawIOBase):
    """``data`` handed out ``piece`` bytes per read, as a slow pipe gives it, then
    ``tail`` (a byte string repeated without end, when given)."""

    def __init__(self, data, piece, tail=None):
        super().__init__()
        self.data, self.piece, self.tail, self.at = data, piece, tail, 0

    def readable(self):
        return True

    def readinto(self, into):
        if self.at < len(self.data):
            n = min(self.piece, len(into), len(self.data) - self.at)
            into[:n] = self.data[self.at:self.at + n]
            self.at += n
            return n
        if self.tail is None:
            return 0
        n = min(self.piece, len(into))
        into[:n] = (self.tail * (n // len(self.tail) + 1))[:n]
        return n


class CountingParser(reader.Parser):
    """The parser, counting the bytes each feed is handed (those it may scan)."""
    handed = 0

    def feed(self, buf, pos, size, *args):
        CountingParser.handed += size - pos
        return super().feed(buf, pos, size, *args)


@pytest.mark.parametrize("piece", [1 << 10, 1 << 16])
def test_a_long_line_costs_linear_work_from_any_channel(monkeypatch, piece):
    """A 4 MB line that arrives a piece at a time (a pipe) is handed to the parser
    about once, not once per piece (the former reader re-scanned, and re-copied,
    the unfinished line at every read: quadratic, 105 s for 100 MB)."""
    line = b"1 " + b" ".join(b"%d:1" % i for i in range(1, 500_000)) + b"\n"
    data = line + b"-1 1:2\n"
    monkeypatch.setattr(reader, "Parser", CountingParser)
    CountingParser.handed = 0
    X, y = load_libsvm(Trickle(data, piece))
    assert X.shape == (2, 499_999) and y.tolist() == [1, -1]
    assert CountingParser.handed <= 2 * len(data)


@pytest.mark.parametrize("tail, what", [(b"\0", "NUL byte"), (b"1:1 ", "line longer than max_line_bytes=1048576")])
def test_an_endless_line_stops_in_bounded_memory(tail, what):
    """An endless line (/dev/zero's NULs, or text that never ends its line) stops
    with its line number, having held about the bound (1 MB here) and a block:
    the former reader held all of it, without end."""
    import tracemalloc
    stream = Trickle(b"1 1:1\n-1 2:1\n", 1 << 16, tail=tail)
    tracemalloc.start()
    try:
        with pytest.raises(ValueError, match=f"^<stream>:3: {what}"):
            list(iter_libsvm(stream, max_line_bytes=1 << 20, block_bytes=1 << 16))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < (1 << 20) * 1.25 + (1 << 18), peak


def test_dev_zero_stops_at_its_first_read():
    with pytest.raises(ValueError, match="^/dev/zero:1: NUL byte"):
        load_libsvm("/dev/zero")


def test_a_line_longer_than_the_bound_is_refused_even_whole(tmp_path):
    """The bound applies to every line, whole ones in a block included."""
    path = write(tmp_path, b"1 1:1\n-1 " + b" ".join(b"%d:1" % i for i in range(1, 100)) + b"\n")
    with pytest.raises(ValueError, match=r":2: line longer than max_line_bytes=100 bytes"):
        load_libsvm(path, max_line_bytes=100)
    assert load_libsvm(path, max_line_bytes=1000)[0].shape == (2, 99)
    with pytest.raises(ValueError, match="max_line_bytes must be a positive integer"):
        load_libsvm(path, max_line_bytes=0)


def test_split_point_holds_no_long_line(tmp_path, monkeypatch):
    """The search for the newline after a large file's middle reads it a piece at
    a time, and gives up past the line bound (the one pass then stops there)."""
    monkeypatch.setattr(load, "SPLIT_BYTES", 1000)
    path = write(tmp_path, b"1 " + b"1:1 " * 100_000 + b"\n-1 2:1\n")
    assert load.split_point(path) == path.stat().st_size - len(b"-1 2:1\n")
    monkeypatch.setattr(load, "MAX_LINE_BYTES", 1000)
    assert load.split_point(path) is None


@pytest.mark.parametrize("opener", [gzip.open, bz2.open, lzma.open])
def test_compressed_files_recognised_by_content(tmp_path, opener):
    path = tmp_path / "compressed.txt"
    with opener(path, "wb") as f:
        f.write(FEATURES)
    X, y = load_libsvm(path)
    X_ref, y_ref = load_libsvm(write(tmp_path, FEATURES))
    assert_same(X, X_ref)
    X_it, _ = stack(list(iter_libsvm(path, chunk_rows=2, block_bytes=5)))
    assert_same(X_it, X_ref)


@pytest.mark.parametrize("chunk_rows", [1, 2, 3, 5, 1000])
@pytest.mark.parametrize("block_bytes", [1, 7, 64, 1 << 20])
def test_iter_equals_load(tmp_path, chunk_rows, block_bytes):
    path = write(tmp_path, FEATURES * 3)
    X, y = load_libsvm(path)
    chunks = list(iter_libsvm(path, chunk_rows=chunk_rows, block_bytes=block_bytes))
    assert all(c[0].shape[0] == chunk_rows for c in chunks[:-1])
    assert 1 <= chunks[-1][0].shape[0] <= chunk_rows
    X_it, y_it = stack(chunks)
    assert_same(X_it, X)
    np.testing.assert_array_equal(y_it, y)


# --- number parsing is exact --------------------------------------------------------

decimal_strings = st.builds(
    lambda sign, whole, frac, exp: sign + whole + frac + exp,
    st.sampled_from(["", "+", "-"]),
    st.text("0123456789", min_size=1, max_size=25),
    st.one_of(st.just(""), st.text("0123456789", max_size=25).map(lambda s: "." + s)),
    st.one_of(st.just(""), st.integers(-400, 400).map(lambda e: f"e{e}")),
)


@settings(max_examples=400, deadline=None)
@given(st.lists(st.one_of(decimal_strings, st.floats(allow_nan=False, allow_infinity=False)
                          .map(repr)), min_size=1, max_size=20))
@example(["0.1", "9007199254740993", "1e22", "1e23", "4.9e-324", "2.4703282292062328e-324",
          "1.7976931348623159e308", "123456789012345678901234567890e-10", "-0", "0e999"])
def test_numbers_equal_python_float(numbers):
    with tempfile.TemporaryDirectory() as tmp:
        text = " ".join(f"{i + 1}:{s}" for i, s in enumerate(numbers))
        path = write(Path(tmp), f"{numbers[0]} {text}\n".encode())
        X, y = load_libsvm(path, allow_nonfinite=True)
    expected = np.array([float(s) for s in numbers])
    np.testing.assert_array_equal(X.data.view(np.int64), expected.view(np.int64))
    assert y.view(np.int64)[0] == expected.view(np.int64)[0]


# Runs of digits around the parser's 8-byte words (7, 8, 9, 15, 16, 17 digits; a
# word holding the integer part, the point and the fraction), mantissas of 19 and
# 20 significant digits (the fast path's limit) with and without leading zeros,
# exponents at and past Clinger's bounds, and signs.
EDGE_NUMBERS = [
    "0", "7", "-0", "+0", "00", "-7", "+7", "1234567", "12345678", "123456789",
    "123456789012345", "1234567890123456", "12345678901234567", "0.1234567",
    "0.12345678", "0.123456789", "1.2345678", "12345678.9", "1234.5678",
    "9.86899159742946E-02", "0.164264961410291", "6.2699720e-02", "-0.731854",
    "9007199254740992", "9007199254740993", "1234567890123456789", "9999999999999999999",
    "12345678901234567890", "18446744073709551617", "0.1234567890123456789",
    "0.12345678901234567890", "000000000000000000001234567890123456789",
    "0.00000000000000000000001234567890123456789", "1.0000000000000000000000",
    "100000000000000000000e-20", "1e22", "1e23", "1E-22", "1e-23", "-1.5e+3", "+.5",
    "5.", "-.5e-0", "1e0005", "0e999", "-0e-999", "123456789012345678e-40",
    "4.9e-324", "1.7976931348623157e308", "2.2250738585072011e-308",
]


@pytest.mark.parametrize("number", EDGE_NUMBERS)
def test_edge_numbers_equal_python_float(tmp_path, number):
    """Each number as label and as value, first and last on a line, at the very end
    of the file with and without a newline, read in blocks that end anywhere: every
    reading equals float() bit for bit."""
    expected = np.float64(float(number)).view(np.int64)
    for newline in (b"", b"\n"):
        text = f"{number} 1:{number} 2:3 3:{number}".encode() + newline
        path = write(tmp_path, b"1 1:1\n" + text)
        for block_bytes in (1, 5, 8, 13, 1 << 20):
            X, y = load_libsvm(path, block_bytes=block_bytes)
            assert y.view(np.int64)[1] == expected
            assert X.data.view(np.int64)[[1, 3]].tolist() == [expected, expected]


def test_parser_feed_needs_a_nul_after_the_text():
    """The parser's scans stop at the byte after the text: feed refuses a buffer
    without a NUL there."""
    from fastprox._libsvm import Parser
    parser = Parser(False, False, 100)
    for buf in (bytearray(b"1 1:1"), bytearray(b"1 1:12")):
        with pytest.raises(ValueError, match="buf\\[size\\] == 0"):
            parser.feed(buf, 0, 5, True, 10, 0, 100, 0)
    assert parser.feed(bytearray(b"1 1:1\0"), 0, 5, True, 10, 0, 100, 0) == 5
    assert parser.rows == 1


# --- errors -------------------------------------------------------------------------

ERRORS = [
    # content, keyword arguments, line, what the message must say
    (b"1 1:0.5\nabc 1:2\n", {}, 2, "label 'abc' is not a number"),
    (b"1:1 2:1\n", {}, 1, "label '1:1' is not a number"),
    (b"1 1:x\n", {}, 1, "value 'x' is not a number"),
    (b"1 1:1_0\n", {}, 1, "value '1_0' is not a number"),
    (b"1 1:0x10\n", {}, 1, "value '0x10' is not a number"),
    (b"1 1:1:2\n", {}, 1, "value '1:2' is not a number"),
    (b"1 1\n", {}, 1, "feature '1' has no ':'"),
    (b"1 1:\n", {}, 1, "no value after ':'"),
    (b"1 a:1\n", {}, 1, "index 'a' is not an integer"),
    (b"1 :1\n", {}, 1, "index '' is not an integer"),
    (b"1 2:1 -:1\n", {}, 1, "index '-' is not an integer"),
    (b"1 -99999999999999999999:1\n", {}, 1, "negative index '-99999999999999999999'"),
    (b"1 -3:1\n", {}, 1, "negative index '-3'"),
    (b"1 1:1\n1 0:1\n", {"zero_based": False}, 2, "index 0 in a one-based file"),
    (b"1 99999999999999999999:1\n", {}, 1, "index '99999999999999999999' is too large"),
    (b"1 9223372036854775807:1\n", {}, 1, "is too large"),
    (b"1 4:1\n", {"n_features": 3}, 1, "index '4' is beyond n_features=3"),
    (b"1 3:1\n", {"n_features": 3, "zero_based": True}, 1, "index '3' is beyond n_features=3"),
    (b"1 2:1 2:3\n", {}, 1, "duplicate index '2'"),
    (b"1 3:1 2:3\n", {}, 1, "index '2' is smaller than the index before it"),
    (b"1 1:nan\n", {}, 1, "non-finite number 'nan'"),
    (b"1 1:1e999\n", {}, 1, "non-finite number '1e999'"),
    (b"-inf 1:1\n", {}, 1, "non-finite number '-inf'"),
    (b"1 1:1\n\x00\x01\x02\n", {}, 2, "NUL byte"),
    (b"1 1:1 # comment \x00\n", {}, 1, "NUL byte"),
    (b"1 1:\xff\xfe\n", {}, 1, "value '\\xff\\xfe' is not a number"),
    (b"\x89PNG\r\n\x1a\n", {}, 1, "label '\\x89PNG' is not a number"),
    (b"1,2 1:1\n", {}, 1, "multi-label row"),
    (b"1 qid:x 1:1\n", {}, 1, "bad query id 'qid:x'"),
    (b"1 1:1 qid:2\n", {}, 1, "qid: must come right after the label"),
    (b"1 qid:1 1:1\n2 1:1\n", {"query_id": True}, 2, "no qid: after the label"),
    (b"# c\n\r\n\n1 1:1\r\n1 2:1 1:1\r\n", {}, 5, "smaller than the index before it"),
]


@pytest.mark.parametrize("content, kwargs, line, what", ERRORS)
def test_error_messages(tmp_path, content, kwargs, line, what):
    path = write(tmp_path, content)
    for read in (load_libsvm, lambda p, **kw: list(iter_libsvm(p, chunk_rows=1, block_bytes=3, **kw))):
        with pytest.raises(ValueError) as info:
            read(path, **kwargs)
        message = str(info.value)
        assert message.startswith(f"{path}:{line}: "), message
        assert what in message, message


def test_iter_auto_one_based_then_zero_is_an_error(tmp_path):
    path = write(tmp_path, b"1 1:1\n1 0:1\n")
    with pytest.raises(ValueError, match=r":2: index 0, but zero_based='auto' took the file "
                                         r"as one-based .*lines 1-1.*pass zero_based=True"):
        list(iter_libsvm(path, chunk_rows=1))
    assert load_libsvm(path)[0].shape == (2, 2)


def test_auto_zero_based_index_beyond_n_features(tmp_path):
    """Only once the whole file is read is it known that 3 is column 3, not 2."""
    path = write(tmp_path, b"1 1:1\n2 0:1 3:1\n")
    with pytest.raises(ValueError, match=rf"^{re.escape(str(path))}:2: index '3' is beyond n_features=3"):
        load_libsvm(path, n_features=3)


def test_truncated_gzip(tmp_path):
    path = tmp_path / "data.gz"
    path.write_bytes(gzip.compress(FEATURES * 50)[:-30])
    with pytest.raises(ValueError, match=rf"^{re.escape(str(path))}:\d+: corrupt or truncated"):
        load_libsvm(path)


def test_missing_and_unreadable_files(tmp_path):
    with pytest.raises(FileNotFoundError):
        load_libsvm(tmp_path / "missing.svm")
    with pytest.raises(FileNotFoundError):
        next(iter_libsvm(tmp_path / "missing.svm"))


@pytest.mark.parametrize("read", [load_libsvm, lambda path: next(iter_libsvm(path)),
                                  lambda path: list(read_conll(path, ["word", "chunk"]))],
                         ids=["load_libsvm", "iter_libsvm", "read_conll"])
def test_a_directory_is_refused_with_what_to_give(tmp_path, read):
    """A data set's folder given for its file (`shared/data/a9a` for `a9a/a9a`) names
    the folder and says to give the files in it, in every reader of a path."""
    with pytest.raises(IsADirectoryError, match="is a directory, not a data file: give the files in it") as info:
        read(tmp_path)
    assert os.fspath(info.value.filename) == os.fspath(tmp_path)


@pytest.mark.parametrize("kwargs", [{"dtype": np.int64}, {"zero_based": "yes"},
                                    {"n_features": 0}, {"n_features": 2.5},
                                    {"block_bytes": 0}])
def test_bad_arguments(tmp_path, kwargs):
    with pytest.raises(ValueError):
        load_libsvm(write(tmp_path, b"1 1:1\n"), **kwargs)


def test_bad_chunk_rows(tmp_path):
    with pytest.raises(ValueError, match="chunk_rows"):
        iter_libsvm(write(tmp_path, b"1 1:1\n"), chunk_rows=0)


# --- fuzzing: any bytes parse or raise ValueError, never anything else ---------------

SEED = b"1 qid:2 1:0.5 3:-1e-3 # c\r\n-1 2:7\n\n+1.0 4:.25\t\n2\n"
ALPHABET = list(b"0123456789.:+-eE#qid ,\t\r\n\x00\xffnaif_x")


@st.composite
def mutated(draw):
    data = bytearray(draw(st.sampled_from([SEED, SEED * 3, b""])))
    for _ in range(draw(st.integers(0, 8))):
        at = draw(st.integers(0, len(data)))
        kind = draw(st.sampled_from(["insert", "delete", "replace"]))
        byte = draw(st.sampled_from(ALPHABET))
        if kind == "insert":
            data.insert(at, byte)
        elif at < len(data):
            if kind == "delete":
                del data[at]
            else:
                data[at] = byte
    return bytes(data)


def load_or_error(path, **kwargs):
    try:
        return load_libsvm(path, **kwargs)
    except ValueError as e:
        assert re.match(rf"{re.escape(str(path))}:\d+: ", str(e)), e
        return None


FUZZ_FOUND = [
    b"1 1:1\n0 0:1",  # "auto" turns zero-based on the last line
    b"1 qid:",  # qid with no value
    b"-",  # a sign alone
    b"1 1:.",  # a point alone
    b"1 1:1e",  # an exponent with no digits
]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(mutated(), st.binary(max_size=120)), st.sampled_from([1, 2, 50]),
       st.sampled_from(["auto", True, False]))
def test_fuzz_parses_or_raises_value_error(content, chunk_rows, zero_based):
    check_fuzz_input(content, chunk_rows, zero_based)


@pytest.mark.parametrize("content", FUZZ_FOUND)
def test_fuzz_regressions(content):
    for chunk_rows in (1, 2, 50):
        for zero_based in ("auto", True, False):
            check_fuzz_input(content, chunk_rows, zero_based)


def check_fuzz_input(content, chunk_rows, zero_based):
    """Parse or ValueError; chunks equal the whole load; scikit-learn agrees."""
    with tempfile.TemporaryDirectory() as tmp:
        path = write(Path(tmp), content)
        whole = load_or_error(path, zero_based=zero_based)
        try:
            chunks = list(iter_libsvm(path, chunk_rows=chunk_rows, block_bytes=4,
                                      zero_based=zero_based))
        except ValueError as e:
            assert re.match(rf"{re.escape(str(path))}:\d+: ", str(e)), e
            chunks = None
        try:
            reference = load_svmlight_file(str(path), zero_based=zero_based)
        except (ValueError, OverflowError):
            reference = None
    if chunks is not None:
        assert whole is not None
        X_it, y_it = stack(chunks)
        assert_same(X_it, whole[0])
        np.testing.assert_array_equal(y_it, whole[1])
    if whole is not None and reference is not None:
        assert_same(whole[0], reference[0])
        np.testing.assert_array_equal(whole[1], reference[1])


# --- writer -------------------------------------------------------------------------

finite = st.floats(allow_nan=False, allow_infinity=False)


@st.composite
def sparse_problems(draw):
    rows, cols = draw(st.integers(0, 12)), draw(st.integers(1, 12))
    mask = draw(st.lists(st.booleans(), min_size=rows * cols, max_size=rows * cols))
    values = draw(st.lists(finite, min_size=sum(mask), max_size=sum(mask)))
    coo = np.flatnonzero(mask)
    X = sp.csr_matrix((np.array(values, dtype=np.float64), (coo // cols, coo % cols)),
                      shape=(rows, cols))
    y = np.array(draw(st.lists(finite, min_size=rows, max_size=rows)), dtype=np.float64)
    return X, y


@settings(max_examples=150, deadline=None)
@given(sparse_problems(), st.sampled_from(["data.svm", "data.svm.gz", "data.svm.xz"]),
       st.booleans())
def test_dump_load_round_trip(problem, name, zero_based):
    X, y = problem
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / name
        dump_libsvm(X, y, path, zero_based=zero_based)
        X_back, y_back = load_libsvm(path, n_features=X.shape[1], zero_based=zero_based)
        assert os.listdir(tmp) == [name]
    assert_same(X_back, X)
    np.testing.assert_array_equal(y_back.view(np.int64), y.view(np.int64))


def test_dump_query_id_and_dense_input(tmp_path):
    path = tmp_path / "out.svm"
    dump_libsvm(np.array([[0, 1.5], [2, 0]]), [1, -1], path, query_id=[4, 5])
    assert path.read_bytes() == b"1 qid:4 2:1.5\n-1 qid:5 1:2\n"
    X, y, qid = load_libsvm(path, query_id=True)
    np.testing.assert_array_equal(qid, [4, 5])


def test_dump_refuses_nonfinite_unless_allowed(tmp_path):
    path = tmp_path / "out.svm"
    with pytest.raises(ValueError, match="allow_nonfinite=True"):
        dump_libsvm(sp.csr_matrix([[np.nan]]), [1], path)
    assert not path.exists()
    dump_libsvm(sp.csr_matrix([[np.nan]]), [np.inf], path, allow_nonfinite=True)
    assert path.read_bytes() == b"inf 1:nan\n"


def test_dump_to_a_binary_file_object_as_scikit_learn_takes():
    """dump_libsvm writes to a file object opened for bytes, as
    sklearn.datasets.dump_svmlight_file does (it raised TypeError: a path was
    required), and refuses a text one naming binary mode."""
    X = sp.random(6, 5, density=0.5, format="csr", random_state=0)
    y = np.arange(6.0)
    out = io.BytesIO()
    out.write(b"# written after this line\n")
    dump_libsvm(X, y, out)
    out.seek(0)
    X2, y2 = load_libsvm(out)
    assert (X2 != X).nnz == 0 and np.array_equal(y2, y)
    with pytest.raises(ValueError, match=r"open the file in binary mode \('wb'\)"):
        dump_libsvm(X, y, io.StringIO())


def test_dump_checks_shapes(tmp_path):
    with pytest.raises(ValueError, match="one label per row"):
        dump_libsvm(sp.csr_matrix((3, 2)), [1, 2], tmp_path / "out.svm")


@pytest.mark.parametrize("kwargs, match", [
    (dict(y=["spam", "ham"]), "y must hold real numbers.*LabelEncoder"),
    (dict(y=np.array([1 + 2j, 1])), "y must hold real numbers"),
    (dict(X=np.array([[1 + 1j, 0.0], [0.0, 1.0]])), "complex"),
    (dict(query_id=[1.5, 2]), "query_id must hold integers.*1.5"),
    (dict(query_id=[np.nan, 2]), "query_id must hold integers.*nan"),
    (dict(query_id=["a", "b"]), "query_id must hold integers"),
])
def test_dump_refuses_what_it_would_write_wrong(tmp_path, kwargs, match):
    """Class names, complex numbers and fractional query ids raise ValueError,
    instead of NumPy's errors, a lost imaginary part or a truncated id; nothing is
    written."""
    args = dict(X=np.eye(2), y=[1, 2], query_id=None) | kwargs
    path = tmp_path / "out.svm"
    with pytest.raises(ValueError, match=match):
        dump_libsvm(args["X"], args["y"], path, query_id=args["query_id"])
    assert not path.exists()


def test_dump_is_atomic(tmp_path, monkeypatch):
    path = tmp_path / "out.svm"
    path.write_bytes(b"old\n")

    def fail(*args):
        raise RuntimeError("disk full")

    monkeypatch.setattr(writer, "format_rows", fail)
    with pytest.raises(RuntimeError):
        dump_libsvm(sp.csr_matrix([[1.0]]), [1], path)
    assert path.read_bytes() == b"old\n"
    assert os.listdir(tmp_path) == ["out.svm"]


def test_dump_sums_duplicates_without_touching_input(tmp_path):
    X = sp.csr_matrix((np.array([1.0, 2.0]), np.array([1, 1]), np.array([0, 2])), shape=(1, 3))
    dump_libsvm(X, [0], tmp_path / "out.svm")
    assert (tmp_path / "out.svm").read_bytes() == b"0 2:3\n"
    assert X.nnz == 2


# --- memory stays flat while streaming -----------------------------------------------

def test_iter_memory_is_flat(tmp_path):
    """Peak RSS after the first 10 chunks of a 64 MB file grows by < 12 MB by the end."""
    lines = b"".join(b"%d %s\n" % (i % 2, b" ".join(b"%d:0.%d" % (j, i + j) for j in range(1, 40, 3)))
                     for i in range(2000))
    path = tmp_path / "big.svm"
    with open(path, "wb") as f:
        while f.tell() < 64 << 20:
            f.write(lines)
    script = textwrap.dedent(f"""
        import resource
        from fastprox.libsvm import iter_libsvm
        for n, (X, y) in enumerate(iter_libsvm({str(path)!r}, chunk_rows=5000, block_bytes=1 << 20)):
            if n == 10:
                early = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        print(early, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
    """)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    early_kb, peak_kb = map(int, out.stdout.split())
    assert peak_kb - early_kb < 12 * 1024, (early_kb, peak_kb)


@pytest.mark.parametrize("content, kwargs", [
    (FEATURES * 3, {}),
    (FEATURES * 3, {"dtype": np.float32, "zero_based": True}),
    (b"1 1:1\n\n-1 2:2\n1 0:3 5:1\n2 qid:4\n", {}),       # "auto" settled by a zero on line 4
    (b"1 qid:3 1:1\n# c\n-1 qid:-2 2:1\n2 qid:+5\n", {"query_id": True}),
    (b"1 1:1\n1 3000000000:1\n-1 2:2\n", {}),             # int64 indices from the second row on
    (b"1\n-1\n1 4:1\n", {"n_features": 9}),
])
@pytest.mark.parametrize("rows_per_part", [1, 2])
def test_load_parses_in_parts_and_joins_them(tmp_path, monkeypatch, content, kwargs, rows_per_part):
    """load_libsvm parses a few rows at a time and joins the parts: whatever the
    part size, the result equals the file parsed as one part, "auto" included."""
    path = write(tmp_path, content)
    whole = load_libsvm(path, **kwargs)
    monkeypatch.setattr("fastprox.libsvm.load._LOAD_CHUNK_ROWS", rows_per_part)
    parts = load_libsvm(path, **kwargs)
    assert_same(parts[0], whole[0])
    assert parts[0].indices.dtype == whole[0].indices.dtype == parts[0].indptr.dtype
    for a, b in zip(parts[1:], whole[1:]):
        np.testing.assert_array_equal(a, b)
        assert a.dtype == b.dtype


def test_load_in_parts_settles_auto_over_the_whole_file(tmp_path, monkeypatch):
    """A zero index in a later part still makes the file zero-based, and the width
    check waits for that decision (as with one part)."""
    monkeypatch.setattr("fastprox.libsvm.load._LOAD_CHUNK_ROWS", 1)
    path = write(tmp_path, b"1 1:1\n2 0:1 3:1\n")
    X, _ = load_libsvm(path)
    np.testing.assert_array_equal(X.toarray(), [[0, 1, 0, 0], [1, 0, 0, 1]])
    with pytest.raises(ValueError, match=rf"^{re.escape(str(path))}:2: index '3' is beyond n_features=3"):
        load_libsvm(path, n_features=3)
    assert load_libsvm(write(tmp_path, b"1 1:1\n2 3:1\n"), n_features=3)[0].shape == (2, 3)


@pytest.mark.parametrize("content, kwargs", [
    (FEATURES * 40, {}),
    (FEATURES * 40, {"dtype": np.float32, "zero_based": True}),
    (b"1 1:1\n-1 2:2\n" * 30 + b"1 0:3 5:1\n", {}),              # "auto" settled by the second half
    (b"1 qid:3 1:1\n# c\n-1 qid:-2 2:1\n" * 30 + b"2 qid:+5\n", {"query_id": True}),
    (b"1 1:1\n" * 40 + b"1 3000000000:1\n-1 2:2\n", {}),        # int64 indices in the second half
    (b"1\n-1\n" * 40 + b"1 4:1\n", {"n_features": 9}),
    (b"1 1:1\n-1 2:2\n" * 30 + b"1 12:1\n", {"n_features": 9}),  # beyond n_features in the second half
    (b"1 1:1\n-1 2:2\n" * 30 + b"1 3:x\n", {}),                  # malformed in the second half
    (b"1 1:1\n-1 2:2\n" * 30 + b"1 0:1\n", {"zero_based": False}),
    (b"1 1:nan\n-1 2:2\n" * 30, {"allow_nonfinite": True}),
])
def test_load_reads_large_files_in_halves(tmp_path, monkeypatch, content, kwargs):
    """load_libsvm parses a plain file over SPLIT_BYTES in two halves at once: the
    result, or the error with its line, is the one pass's."""
    path = write(tmp_path, content)
    in_halves = []
    monkeypatch.setattr(load, "_load_halves", lambda args, real=load._load_halves:
                        in_halves.append(real(args)) or in_halves[-1])

    def read(split_bytes):
        monkeypatch.setattr(load, "SPLIT_BYTES", split_bytes)
        try:
            return load_libsvm(path, **kwargs)
        except ValueError as e:
            return str(e)

    halves, whole = read(0), read(1 << 40)
    if isinstance(whole, str):
        assert halves == whole and in_halves == [None, None]     # one pass named the line
        return
    assert in_halves[0] is not None and in_halves[1] is None
    assert_same(halves[0], whole[0])
    assert halves[0].indices.dtype == whole[0].indices.dtype == halves[0].indptr.dtype
    for a, b in zip(halves[1:], whole[1:]):
        np.testing.assert_array_equal(a, b)
        assert a.dtype == b.dtype


def test_read_halves_hands_errors_over_but_not_interrupts():
    """An error in either half hands the file over to one pass (False); an
    interrupt is raised at once, not swallowed into a second pass."""
    from fastprox.libsvm import read_halves

    def interrupted():
        raise KeyboardInterrupt
        yield

    seen = []
    assert read_halves([iter([1, 2]), iter([3])], lambda i, chunk: seen.append((i, chunk)))
    assert sorted(seen) == [(0, 1), (0, 2), (1, 3)]
    assert not read_halves([iter([1]), (int(x) for x in ["x"])], lambda i, chunk: None)
    with pytest.raises(KeyboardInterrupt):
        read_halves([interrupted(), iter([])], lambda i, chunk: None)
