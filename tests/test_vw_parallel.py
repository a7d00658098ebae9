"""VW text parsed by two threads at once (fastprox.stream.files.vw_chunks): the same
rows in the same order as one reader gives, an error naming the file's line, the
threads stopped when the stream is closed early, the same model from `fastprox train`."""
import threading
import time

import numpy as np
import pytest

from fastprox.cli import main
from fastprox.libsvm import split_points
from fastprox.model_io import load_model
from fastprox.stream import files
from fastprox.vw.reader import iter_vw_chunks

LINES = [f"{1 if i % 3 else -1} {1 + i % 4 / 2} 'r{i}|a x{i % 7} y:{1 + i % 4} |b z{i % 5} w{i % 11}:{i % 3 - 1} |c k{i % 2}"
         for i in range(3000)]


@pytest.fixture
def spans(monkeypatch):
    """Spans of 4 kB: a file of a few hundred kB is parsed in parallel."""
    monkeypatch.setattr(files, "SPAN_BYTES", 4096)


def joined(chunks):
    """The chunks' rows as one set of arrays, and the tags and weights."""
    parts = {key: [] for key in ("data", "indices", "lengths", "y", "weights")}
    tags = []
    for c in chunks:
        rows = len(c.indptr) - 1
        parts["data"].append(np.asarray(c.data))
        parts["indices"].append(np.asarray(c.indices, dtype=np.int64))
        parts["lengths"].append(np.diff(np.asarray(c.indptr)))
        parts["y"].append(np.asarray(c.y))
        parts["weights"].append(np.ones(rows) if c.weights is None else np.asarray(c.weights))
        tags += c.tags if c.tags is not None else [None] * rows
    return {key: np.concatenate(value) for key, value in parts.items()}, tags


@pytest.mark.parametrize("terms", [[], [b"ab"], [b"ab", b"abc"]])
def test_the_same_rows_in_the_same_order(tmp_path, spans, terms):
    path = tmp_path / "d.vw"
    path.write_text("\n".join(LINES) + "\n")
    assert len(split_points(str(path), path.stat().st_size // 4096, 2 * 4096)) > 10
    one, one_tags = joined(iter_vw_chunks(str(path), 16, terms, 500))
    two, two_tags = joined(files.vw_chunks(str(path), 16, terms, 500))
    assert all(np.array_equal(one[key], two[key]) and one[key].dtype == two[key].dtype for key in one)
    assert one_tags == two_tags


def test_an_error_names_the_line_of_the_file(tmp_path, spans):
    lines = list(LINES)
    lines[2345] = "1 |a x:nan"
    path = tmp_path / "d.vw"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(ValueError) as one:
        list(iter_vw_chunks(str(path), 16, [b"ab"], 500))
    with pytest.raises(ValueError) as two:
        list(files.vw_chunks(str(path), 16, [b"ab"], 500))
    assert str(two.value) == str(one.value) and ":2346: " in str(two.value)


def test_closing_the_stream_stops_the_threads(tmp_path, spans):
    path = tmp_path / "d.vw"
    path.write_text("\n".join(LINES) + "\n")
    before = threading.active_count()
    chunks = files.vw_chunks(str(path), 16, [b"ab"], 100)
    next(chunks)
    assert threading.active_count() == before + files.PARSERS
    chunks.close()
    assert threading.active_count() == before


def test_names_and_small_files_are_read_in_one_pass(tmp_path, spans):
    path = tmp_path / "d.vw"
    path.write_text("\n".join(LINES) + "\n")
    before = threading.active_count()
    chunks = files.vw_chunks(str(path), 16, [b"ab"], 500, names={})
    next(chunks)
    assert threading.active_count() == before       # (one reader, in this thread)
    chunks.close()
    one, two = {}, {}
    list(iter_vw_chunks(str(path), 16, [b"ab"], 500, names=one))
    list(files.vw_chunks(str(path), 16, [b"ab"], 500, names=two))
    assert one == two and one
    small = tmp_path / "s.vw"
    small.write_text("\n".join(LINES[:10]) + "\n")
    assert split_points(str(small), 4, 2 * 4096) == []


def test_train_learns_the_same_model(tmp_path, spans):
    path = tmp_path / "d.vw"
    path.write_text("\n".join(LINES) + "\n")
    models = []
    for span in (1 << 40, 4096):
        files.SPAN_BYTES = span
        model = tmp_path / f"m{span}.model"
        assert main([str(a) for a in ("train", path, "-q", "ab", "--hash-bits", 16, "--chunk-rows", 500,
                                      "-f", model, "--quiet")]) == 0
        models.append(load_model(model))
    assert np.array_equal(models[0].coef_, models[1].coef_)
    assert np.array_equal(models[0].intercept_, models[1].intercept_)


@pytest.mark.parametrize("kernel_seconds, alone", [(0.0, False), (1e6, True)])
def test_a_second_parser_joins_only_while_the_kernel_waits(tmp_path, spans, monkeypatch, kernel_seconds, alone):
    """A kernel that took no CPU time over the trial spans (the parser the slower) gets
    a second parser; one that took more than the parser keeps one: the later spans are
    then all parsed by thread 0. The rows are the same either way. Thread 0 starts its
    first span after the trial only once thread 1 has claimed a span or ended: on a
    busy machine thread 0 could otherwise claim every span before thread 1 runs."""
    path = tmp_path / "d.vw"
    path.write_text("\n".join(LINES) + "\n")
    ticks = iter(range(10**6))
    monkeypatch.setattr(files, "kernel_clock", lambda: lambda: kernel_seconds * next(ticks))
    parsed_by = []
    first = 2 * files.TRIAL
    plain = files.parallel_chunks

    def decided():
        """Whether thread 1 has claimed a span or ended (threads: this one and thread 0)."""
        return any(k for _, k in parsed_by) or threading.active_count() == before + 1

    def read_span(read, i, k):
        if k == 0 and i >= first:
            while not decided():
                time.sleep(1e-4)
        parsed_by.append((i, k))
        return read(i, k)

    def traced(n, read, failed, **kw):
        return plain(n, lambda i, k: read_span(read, i, k), failed, **kw)

    monkeypatch.setattr(files, "parallel_chunks", traced)
    one, _ = joined(iter_vw_chunks(str(path), 16, [b"ab"], 100))
    before = threading.active_count()
    two, _ = joined(files.vw_chunks(str(path), 16, [b"ab"], 100))
    assert all(np.array_equal(one[key], two[key]) for key in one)
    assert all(k == 0 for i, k in parsed_by if i < first)
    assert len(parsed_by) > first + 4 and any(k for _, k in parsed_by) != alone
