"""Read and write LIBSVM / svmlight text files, whole or streamed in chunks.

Format: one example per line, ``LABEL [qid:INT] INDEX:VALUE INDEX:VALUE ...``.

Accepted: ``#`` comments to the end of a line, blank lines, CRLF endings, a
UTF-8 byte order mark opening the file (as Vowpal Wabbit's reader skips it),
spaces and tabs anywhere between tokens, rows with a label and no features,
labels and values in Python's float syntax (``1``, ``+1``, ``1.0``, ``-1``,
``1e3``; no underscores), and an optional ``qid:INT`` right after the label.
Plain, gzip, bzip2 and xz files are read alike; the compression is recognised
by the file's first bytes, whatever its name.

A source is a path, ``-`` for standard input (``./-`` names a file called
``-``) or an open binary file object. Each is opened once and read once from
its start: pipes (``/dev/stdin``, ``/dev/fd/N`` as from ``<(zcat f.gz)``),
FIFOs and compressed streams arrive whole. Only a large plain regular file is
opened again, to read its two halves at once (`split_point`).

Refused, with a ``ValueError`` whose message starts ``PATH:LINE:`` (1-based)
and says how to fix the file or the call: a label or value that is not a
number, a feature without ``:``, an index that is not an integer, negative,
too large for int64, 0 in a one-based file or beyond ``n_features``;
duplicate or decreasing indices within a row (indices must be strictly
increasing, as scikit-learn requires: nothing is sorted for you); NaN and
infinite labels or values unless ``allow_nonfinite=True``; multi-label rows
(comma-separated labels); NUL bytes (binary data), found as they are read,
in a line not yet ended too; a line longer than ``max_line_bytes``, found
once that much of it is read (memory and time stay bounded whatever the
input: /dev/zero, an endless stream, a binary file); corrupt compressed data,
at the line it breaks off in.
A missing or unreadable file raises the usual ``OSError``. Messages name standard
input ``<stdin>``.

Results equal scikit-learn's ``load_svmlight_file`` (same values bit for bit,
indices, shape and labels), read several times faster and, with
:func:`iter_libsvm`, in memory bounded by the block and chunk sizes.

The package's modules: `reader` (the one pass: iter_libsvm, iter_chunks, Chunk),
`load` (load_libsvm, a large file read in two halves at once), `writer`
(dump_libsvm), `sources` (standard input, file objects, paths, compression).
"""
from .load import SPLIT_BYTES, half_readers, load_libsvm, read_halves, split_point, split_points
from .reader import BLOCK_BYTES, MAX_LINE_BYTES, Chunk, iter_chunks, iter_libsvm
from .sources import STDIN, open_source, read_once, refuse_directory, source_name
from .writer import dump_libsvm
from .._docstrings import with_shared_entries

iter_libsvm.__doc__ = with_shared_entries(iter_libsvm, load_libsvm)     # the parameters they share

__all__ = ["load_libsvm", "iter_libsvm", "dump_libsvm", "iter_chunks", "Chunk", "split_point", "split_points",
           "half_readers", "read_halves", "open_source", "read_once", "refuse_directory", "source_name", "STDIN", "BLOCK_BYTES",
           "MAX_LINE_BYTES", "SPLIT_BYTES"]
