"""The text layer: a double's text as Python's repr writes it, without Python (`repr.h`),
from the shortest round-trip digits of Ryu (`ryu/`, vendored from github.com/ulfjack/ryu
under the Apache License 2.0 or the Boost Software License 1.0, their texts beside it),
for the writers of `fastprox._libsvm` (``train -p``, ``predict``, `dump_libsvm`)."""
