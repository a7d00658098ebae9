"""A bounded, seeded fuzz test of the LIBSVM reader against a reference parser
written here, in plain Python, from the format fastprox.libsvm documents.

Every input, valid or not, goes through load_libsvm and iter_libsvm (plain and
gzip files, blocks of 1 byte to 4 MB, chunks of 1 to 6 rows, every reading
option). Each must give exactly the reference's matrix, labels and query ids
(values bit for bit, index types included), chunk by chunk for iter_libsvm,
or raise ValueError naming the file and the line the reference rejects
(iter_libsvm after yielding the chunks the reference completes before it).
"""
import gzip
import math
import random
import re
import time
from unittest import mock

import numpy as np
import pytest
import scipy.sparse as sp

from fastprox.libsvm import load
from fastprox.libsvm import iter_libsvm, load_libsvm
from test_libsvm import assert_same

MAX_INDEX = 2**63 - 2           # the largest index (its width, plus one, fits int64)
INT32_MAX = 2**31 - 1

# --- the reference ------------------------------------------------------------------
#
# A file is lines split at b"\n". In each line, a NUL byte anywhere is an error;
# "#" starts a comment; what is left is split at ASCII whitespace (space, \t, \r,
# \v, \f). No token: no row. Else the first token is the label, then an optional
# "qid:INTEGER" (required with query_id=True), then INDEX:VALUE features with
# strictly increasing indices. Numbers are Python's float syntax without
# underscores (and ASCII only); NaN and infinities (1e400 included) only with
# allow_nonfinite. Indices are [+-]digits in [0, MAX_INDEX], qids in
# [-MAX_INDEX, MAX_INDEX]. A comma in the label is a multi-label row: an error.
#
# zero_based=True/False: indices are read as written minus 0 or 1 (index 0 in a
# one-based file is an error) and must be below n_features. "auto": the offset
# is 0 if an index 0 appears, else 1, decided over the whole file (load_libsvm)
# or at the end of the first chunk with a feature (iter_libsvm: later lines
# must agree). Until it is decided an index is refused at its line only if it
# is beyond n_features whatever the offset (index > n_features); when it is
# decided, the largest index seen is checked against n_features and refused
# at the first line that holds it. The width is n_features, else one more than
# the largest column (at least 1; iter_libsvm: the largest seen so far).

NUMBER = re.compile(rb"[+-]?(?:(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?"
                    rb"|inf|infinity|nan)", re.IGNORECASE)
INTEGER = re.compile(rb"[+-]?[0-9]+")


class Rejected(Exception):
    """The reference refuses line ``line``; ``chunks`` were complete before it."""

    def __init__(self, line, chunks=()):
        super().__init__(line)
        self.line, self.chunks = line, list(chunks)


def number(token, line, allow_nonfinite):
    if not NUMBER.fullmatch(token):
        raise Rejected(line)
    value = float(token)
    if not (allow_nonfinite or math.isfinite(value)):
        raise Rejected(line)
    return value


def integer(token, line, low):
    if not INTEGER.fullmatch(token) or not low <= int(token) <= MAX_INDEX:
        raise Rejected(line)
    return int(token)


def rows_of(text, query_id, allow_nonfinite):
    """(line, label, qid, [(index, value), ...]) for each row of ``text``, in order;
    Rejected at the first line malformed on its own."""
    lines = text.split(b"\n")
    if lines[-1] == b"":
        lines.pop()
    for line, content in enumerate(lines, 1):
        if b"\0" in content:
            raise Rejected(line)
        tokens = content.split(b"#", 1)[0].split()
        if not tokens:
            continue
        if b"," in tokens[0]:
            raise Rejected(line)
        label, qid, rest = number(tokens[0], line, allow_nonfinite), 0, tokens[1:]
        if rest and rest[0].startswith(b"qid:"):
            qid, rest = integer(rest[0][4:], line, -MAX_INDEX), rest[1:]
        elif query_id:
            raise Rejected(line)
        features = []
        for token in rest:
            index, colon, value = token.partition(b":")
            if not colon:
                raise Rejected(line)
            features.append((integer(index, line, 0), number(value, line, allow_nonfinite)))
        if any(a >= b for (a, _), (b, _) in zip(features, features[1:])):
            raise Rejected(line)
        yield line, label, qid, features


class Reference:
    """One reading of a text: the rows and what "auto" and n_features need."""

    def __init__(self, n_features, zero_based):
        self.n_features = n_features
        self.offset = None if zero_based == "auto" else int(not zero_based)
        self.top = self.top_line = None         # the largest index and its first line
        self.has_zero = False

    def check(self, line, features):
        """An index out of range for the offset, or for any offset while undecided."""
        for index, _ in features:
            low = self.offset or 0
            high = None if self.n_features is None else self.n_features - 1 + (
                1 if self.offset is None else self.offset)
            if index < low or (high is not None and index > high):
                raise Rejected(line)
            if self.top is None or index > self.top:
                self.top, self.top_line = index, line
            self.has_zero |= index == 0

    def settle(self, chunks=()):
        """Decide "auto" once features were seen; check the largest index then."""
        if self.offset is None and self.top is not None:
            self.offset = 0 if self.has_zero else 1
            if self.n_features is not None and self.top - self.offset >= self.n_features:
                raise Rejected(self.top_line, chunks)

    def width(self, seen_width=1):
        if self.n_features is not None:
            return self.n_features
        return seen_width if self.top is None else max(seen_width, self.top - self.offset + 1)

    def chunk(self, rows, width):
        """(indptr, indices, data, labels, qids, width) of rows, indices shifted."""
        shift = self.offset or 0
        indptr = np.cumsum([0] + [len(f) for _, _, _, f in rows])
        indices = [i - shift for _, _, _, f in rows for i, _ in f]
        data = [v for _, _, _, f in rows for _, v in f]
        return (indptr, indices, data, [r[1] for r in rows], [r[2] for r in rows], width)


def reference_load(text, n_features, zero_based, query_id, allow_nonfinite):
    reading = Reference(n_features, zero_based)
    rows = []
    for row in rows_of(text, query_id, allow_nonfinite):
        reading.check(row[0], row[3])
        rows.append(row)
    reading.settle()
    return reading.chunk(rows, reading.width())


def reference_iter(text, chunk_rows, n_features, zero_based, query_id, allow_nonfinite):
    reading, chunks, rows, width = Reference(n_features, zero_based), [], [], 1

    def close():
        nonlocal rows, width
        reading.settle(chunks)
        width = reading.width(width)
        chunks.append(reading.chunk(rows, width))
        rows = []

    try:
        for row in rows_of(text, query_id, allow_nonfinite):
            reading.check(row[0], row[3])
            rows.append(row)
            if len(rows) == chunk_rows:
                close()
        if rows or not chunks:
            close()
    except Rejected as e:
        raise Rejected(e.line, chunks) from None
    return chunks


# --- comparing ----------------------------------------------------------------------

def assert_chunk(got, expected, query_id):
    """A reader result (X, y[, qid]) equals a reference chunk, bit for bit."""
    indptr, indices, data, labels, qids, width = expected
    X, y = got[0], got[1]
    itype = np.int64 if max(width, len(data)) > INT32_MAX else np.int32
    if labels:      # scipy makes a matrix of no rows int32, whatever its width: nothing to index
        assert X.indices.dtype == X.indptr.dtype == itype
    assert X.shape == (len(labels), width)
    assert_same(X, sp.csr_matrix((np.array(data, dtype=np.float64), np.array(indices, dtype=np.int64),
                                  indptr), shape=X.shape))
    assert y.tobytes() == np.array(labels, dtype=np.float64).tobytes()
    if query_id:
        np.testing.assert_array_equal(got[2], np.array(qids, dtype=np.int64))


def rejected_at(error, path, line):
    assert str(error).startswith(f"{path}:{line}: "), (line, str(error))


def check_case(path, text, options, read):
    """load_libsvm (read in one pass, and split in two halves as files of over
    SPLIT_BYTES are) and iter_libsvm on ``path`` (holding ``text``) against the
    reference; "valid" or "invalid" (the reference's verdict on the whole load)."""
    (chunk_rows, block_bytes), reading = read, dict(options)
    try:
        expected = reference_load(text, **reading)
    except Rejected as e:
        expected, verdict = e, "invalid"
    else:
        verdict = "valid"
    for split_bytes in (load.SPLIT_BYTES, 0):
        with mock.patch.object(load, "SPLIT_BYTES", split_bytes):
            if verdict == "valid":
                assert_chunk(load_libsvm(path, block_bytes=block_bytes, **reading), expected,
                             reading["query_id"])
                continue
            with pytest.raises(ValueError) as info:
                load_libsvm(path, block_bytes=block_bytes, **reading)
            rejected_at(info.value, path, expected.line)
    got = iter_libsvm(path, chunk_rows, block_bytes=block_bytes, **reading)
    try:
        expected_chunks, failure = reference_iter(text, chunk_rows, **reading), None
    except Rejected as e:
        expected_chunks, failure = e.chunks, e
    for chunk in expected_chunks:
        assert_chunk(next(got), chunk, reading["query_id"])
    if failure is None:
        assert next(got, None) is None
    else:
        with pytest.raises(ValueError) as info:
            next(got)
        rejected_at(info.value, path, failure.line)
    return verdict


# --- generating ---------------------------------------------------------------------

SPACES = [b" ", b" ", b" ", b"  ", b"\t", b" \t ", b"\v", b"\f", b"\r"]
NUMBERS = [b"1", b"-1", b"+1", b"0", b"-0", b"0.5", b"-.25", b"5.", b"1e3", b"1E-3", b"+2.5e+2",
           b"007", b"0.1", b"9007199254740993", b"123456789012345678901234567890",
           b"0.000000000000000000000000000001", b"4.9e-324", b"1e-400", b"2.2250738585072014e-308",
           b"1.7976931348623157e308", b"1e22", b"1e23", b"0e99999999999"]
NONFINITE = [b"nan", b"NaN", b"inf", b"-inf", b"+Infinity", b"INF", b"1e400", b"-1e400",
             b"1e99999999999"]
BAD_NUMBERS = [b"", b".", b"-", b"1e", b"1e+", b"1_0", b"0x10", b"1.2.3", b"--1", b"e5", b"in",
               b"nanx", b"infinit", b"1,5", b"\xd9\xa1", b"1d5", b"abc", b"1:2"]
HUGE_INDICES = [2**31 - 1, 2**31, 2**40, 2**53 + 1, MAX_INDEX]
BAD_INDICES = [b"-3", b"-0x1", b"+-1", b"1.5", b"a", b"", b"-99999999999999999999",
               b"99999999999999999999", b"9223372036854775807", b"qid", b"\xff"]


def a_number(rng, allow_nonfinite):
    if rng.random() < 0.15:
        return rng.choice(NONFINITE) if allow_nonfinite or rng.random() < 0.05 else rng.choice(NUMBERS)
    if rng.random() < 0.4:
        return rng.choice(NUMBERS)
    return repr(round(rng.uniform(-100, 100), rng.randrange(8))).encode()


def indices(rng, zero_based):
    """Strictly increasing indices: a few small ones, sometimes a huge one, now
    and then thousands (a line far longer than a block)."""
    count = rng.choice([0, 1, 2, 3, 5, 8]) if rng.random() > 0.02 else rng.randrange(1000, 3000)
    index = rng.randrange(0 if zero_based is not False else 1, 3)
    out = []
    for _ in range(count):
        out.append(index)
        index += rng.randrange(1, 6)
    if out and rng.random() < 0.08:
        out[-1] = max(out[-1], rng.choice(HUGE_INDICES))
    return out


def a_line(rng, options):
    """A row, or one time in ten a blank or comment line: well formed, but for a
    rare non-finite number that allow_nonfinite=False refuses."""
    if rng.random() < 0.1:
        return rng.choice([b"", b"   ", b"\t", b"\r", b"# only a comment: 1 2:3", b"  #"])
    nonfinite = options["allow_nonfinite"]
    tokens = [a_number(rng, nonfinite)]
    if options["query_id"] or rng.random() < 0.15:
        tokens.append(b"qid:" + str(rng.randrange(-5, 10**rng.randrange(1, 19))).encode())
    tokens += [b"%d:%s" % (i, a_number(rng, nonfinite)) for i in indices(rng, options["zero_based"])]
    line = rng.choice(SPACES).join(tokens) if rng.random() < 0.3 else b" ".join(tokens)
    if rng.random() < 0.2:
        line = rng.choice(SPACES) + line
    if rng.random() < 0.2:
        line += rng.choice(SPACES)
    if rng.random() < 0.1:
        line += rng.choice([b"#", b" # a comment", b"#1 2:3 qid:x ,"])
    return line


def mutate(rng, line):
    """The line broken in one way (the reference decides whether it still parses:
    a mutation may leave it valid)."""
    tokens = line.split(b"#", 1)[0].split()
    how = rng.randrange(9)
    if how == 0 or not tokens:
        return rng.choice(BAD_NUMBERS) + b" 1:1"
    if how == 1:
        return line + b" %s:1" % rng.choice(BAD_INDICES)
    if how == 2:
        return line + b" 5:%s" % rng.choice(BAD_NUMBERS)
    if how == 3:
        return line + b" 7"                              # no ':'
    if how == 4 and len(tokens) > 2:                     # swapped or repeated features
        a, b = tokens[-2], tokens[-1]
        return b" ".join(tokens[:-2] + ([b, a] if rng.random() < 0.5 else [a, a]))
    if how == 5:
        at = rng.randrange(len(line) + 1)
        return line[:at] + b"\0" + line[at:]
    if how == 6:
        return b" ".join(tokens[:1] + [rng.choice([b"qid:", b"qid:x", b"qid:1.5", b"qid:-",
                                                   b"qid:99999999999999999999"])] + tokens[1:])
    if how == 7:
        return line + b" qid:3"                          # a qid after the features
    return tokens[0] + b"," + tokens[0] + b" " + b" ".join(tokens[1:])


SOUP = b"0123456789.:+-eE#qid ,\t\r\n\v\f\x00\xffnaif_x"


def a_case(rng):
    """(text, reading options, (chunk_rows, block_bytes), gzip?): mostly rows as
    generated, one of them broken one time in three; a tenth of the texts are
    bytes drawn from the format's alphabet."""
    options = {"zero_based": rng.choice(["auto", "auto", True, False]),
               "query_id": rng.random() < 0.2, "allow_nonfinite": rng.random() < 0.3}
    if rng.random() < 0.1:
        lines = [bytes(rng.choice(SOUP) for _ in range(rng.randrange(40)))]
    else:
        lines = [a_line(rng, options) for _ in range(rng.randrange(0, 12))]
    if lines and rng.random() < 0.35:
        at = rng.randrange(len(lines))
        lines[at] = mutate(rng, lines[at])
    if lines and rng.random() < 0.1 and options["zero_based"] is not False:
        lines.append(b"1 0:1")                           # an index 0 at the end ("auto")
    eol = b"\r\n" if rng.random() < 0.2 else b"\n"
    text = eol.join(lines) + (eol if lines and rng.random() < 0.8 else b"")
    options["n_features"] = rng.choice([None] * 6 + [1, 3, 8, 20, 2**31, MAX_INDEX])
    read = (rng.randrange(1, 7), rng.choice([1, 2, 3, 7, 64, 4096, 1 << 22]))
    return text, options, read, rng.random() < 0.15


EDGE_CASES = [
    b"", b"\n", b"\n\n\r\n", b"# only\n# comments\n", b"#", b"1\n-1\n+2.5\n", b"1", b"1 ",
    b"1 1:1", b"1 1:1\n2 2:2", b"1 1:1 \t \n", b"\t1\t1:1\t2:2\t\n", b"1 1:1\r\n-1 3:2\r\n",
    b"1 0:1 2147483648:1\n", b"1 1099511627776:-1\n", b"1 9223372036854775806:1\n",
    b"1 9223372036854775807:1\n", b"1 -1:1\n", b"1 -0:1\n", b"1 +3:1\n",
    b"1 1:nan 2:inf 3:-inf 4:1e400 5:-1e400\n", b"nan 1:1\n", b"1e400 1:1\n",
    b"1 1:1e-400 2:4.9e-324\n", b"1 qid:-7 1:1\n", b"1 qid:9223372036854775806\n",
    b"1 qid:9223372036854775807\n", b"1 " + b" ".join(b"%d:0.5" % i for i in range(1, 5001)) + b"\n",
    b"2 " + b" ".join(b"%d:%d" % (i, i) for i in range(0, 15000, 3)),
]


@pytest.mark.parametrize("index", [pytest.param(i, marks=pytest.mark.slow) if len(text) > 10_000 else i
                                   for i, text in enumerate(EDGE_CASES)])
def test_edge_cases(tmp_path, index):
    """Each edge case read in every way (the two rows of thousands of features, a
    byte at a time: seconds each, run with the slow tests)."""
    text = EDGE_CASES[index]
    path = tmp_path / "edge.svm"
    path.write_bytes(text)
    for zero_based in ("auto", True, False):
        for allow_nonfinite in (False, True):
            for n_features in (None, 3, 2**31):
                options = {"zero_based": zero_based, "query_id": False,
                           "allow_nonfinite": allow_nonfinite, "n_features": n_features}
                for read in ((1, 1), (2, 5), (1000, 1 << 22)):
                    check_case(path, text, options, read)
    check_case(path, text, {"zero_based": "auto", "query_id": True, "allow_nonfinite": True,
                            "n_features": None}, (1, 3))


CASES = 4000
#: The seeds in shards of their own tests, which the run's workers share out.
SHARDS = 4


@pytest.mark.slow
@pytest.mark.parametrize("shard", range(SHARDS))
def test_fuzz_against_the_reference(tmp_path, shard):
    """CASES seeded random files over SHARDS tests, each read as plain text (and
    15% as gzip too)."""
    started, verdicts = time.perf_counter(), {"valid": 0, "invalid": 0}
    seeds = range(shard * CASES // SHARDS, (shard + 1) * CASES // SHARDS)
    for seed in seeds:
        rng = random.Random(seed)
        text, options, read, compressed = a_case(rng)
        path = tmp_path / f"case{seed}.svm"
        path.write_bytes(text)
        verdicts[check_case(path, text, options, read)] += 1
        if compressed:
            gz = tmp_path / f"case{seed}.svm.gz"
            gz.write_bytes(gzip.compress(text))
            check_case(gz, text, options, read)
            gz.unlink()
        path.unlink()
    elapsed = time.perf_counter() - started
    print(f"fuzz: seeds {seeds.start}..{seeds.stop - 1}, {verdicts['valid']} valid, "
          f"{verdicts['invalid']} invalid, {elapsed:.1f} s")
    assert min(verdicts.values()) > len(seeds) // 5


def test_negative_nan_keeps_its_sign(tmp_path):
    """'-nan' is read as float('-nan'), sign bit set, as every other value is read
    bit for bit as float() reads it (the reader used to drop the sign)."""
    path = tmp_path / "nan.svm"
    path.write_bytes(b"-nan 1:-nan\n")
    X, y = load_libsvm(path, allow_nonfinite=True)
    assert y.tobytes() == X.data.tobytes() == np.array([float("-nan")]).tobytes()
