"""Which thread sets the wall time of ``fastprox train`` on a file: the reader (the
parser thread of fastprox.stream.files.read_ahead) or the kernel (the main thread).

The command runs in this process (``fastprox.cli.main``) with its read-ahead
instrumented: the reader thread's CPU time (``time.thread_time`` from its first chunk
asked to its last handed over), the time it waited on a full queue (the kernel
behind), the main thread's CPU time, the time it waited on an empty queue (the reader
behind), and the time to the first chunk. CPU times do not depend on the other jobs
of the machine; the waits do (a thread waiting for a core is not counted as waiting
on the queue, but its partner then waits on it). From each chunk's CPU time in
either thread, ``pipeline`` is the wall the two threads would take on two cores of
their own (the reader runs ahead, the kernel takes each chunk once it is read and
the one before is learnt): the larger thread's CPU plus ``fill/drain``, what the
hand-off costs (the first chunk's parse, the last chunk's learning); a figure that
does not depend on the machine's load either. A large plain VW file is parsed by two
threads of their own (fastprox.stream.files.vw_chunks): the reader thread then only
hands their chunks on, and ``parsers cpu`` is theirs (the process's CPU less the
reader's and the main thread's; ``pipeline`` then means nothing).

Run: ``PYTHONPATH=src python -m bench.vw_threads FILE [train options ...]``, e.g.
``python -m bench.vw_threads train.vw -q ab``; prints one line of figures (seconds).
"""
import queue
import sys
import tempfile
import threading
import time
from pathlib import Path

from fastprox.cli import main
from fastprox.stream import files, sources


def instrumented(figures):
    """A read_ahead that adds its threads' times into ``figures``."""
    plain = files.read_ahead

    def read_ahead(chunks, depth=2):
        def timed_chunks():
            start = time.thread_time()
            try:
                for chunk in chunks:
                    figures["read"].append(time.thread_time() - start)
                    yield chunk
                    start = time.thread_time()
            finally:
                figures["reader cpu"] = sum(figures["read"]) + time.thread_time() - start

        put = queue.Queue.put

        def timed_put(self, item, *args, **kwargs):
            if threading.current_thread() is threading.main_thread():
                return put(self, item, *args, **kwargs)
            t = time.perf_counter()
            put(self, item, *args, **kwargs)
            figures["reader waits"] += time.perf_counter() - t

        queue.Queue.put = timed_put
        try:
            inner = plain(timed_chunks(), depth)
            learnt = None
            while True:
                t = time.perf_counter()
                if learnt is not None:
                    figures["learn"].append(time.thread_time() - learnt)
                try:
                    item = next(inner)
                except StopIteration:
                    return
                finally:
                    waited = time.perf_counter() - t
                    figures["kernel waits"] += waited
                    if "first chunk" not in figures:
                        figures["first chunk"] = time.perf_counter() - figures["t0"]
                learnt = time.thread_time()
                yield item
        finally:
            queue.Queue.put = put

    return read_ahead


def pipeline(read, learn):
    """The wall of the chunks' parses ``read`` and learning ``learn`` (CPU seconds,
    in order) on two cores of their own: the kernel starts a chunk once it is read and
    the chunk before is learnt (the reader, two chunks ahead at most, is never held
    back while it is the slower)."""
    ready = end = 0.0
    for parse, step in zip(read, learn):
        ready += parse
        end = max(end, ready) + step
    return end


def run(args):
    """The figures (a dict of seconds) of ``fastprox train ARGS --model TMP --quiet``."""
    figures = {"reader cpu": 0.0, "reader waits": 0.0, "kernel waits": 0.0, "read": [], "learn": []}
    sources.read_ahead = instrumented(figures)
    with tempfile.TemporaryDirectory() as work:
        figures["t0"] = time.perf_counter()
        cpu0, process0 = time.thread_time(), time.process_time()
        status = main(["train", *args, "--model", str(Path(work) / "m.npz"), "--quiet"])
        figures["main cpu"] = time.thread_time() - cpu0
        figures["parsers cpu"] = time.process_time() - process0 - figures["main cpu"] - figures["reader cpu"]
        figures["wall"] = time.perf_counter() - figures.pop("t0")
    if status:
        raise SystemExit(status)
    read, learn = figures.pop("read"), figures.pop("learn")
    figures["pipeline"] = pipeline(read, learn)
    figures["fill/drain"] = figures["pipeline"] - max(sum(read), sum(learn))
    return figures


if __name__ == "__main__":
    f = run(sys.argv[1:])
    print("  ".join(f"{k} {v:.3f}" for k, v in f.items()))
