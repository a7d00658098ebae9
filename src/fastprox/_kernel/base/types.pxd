# The kernel's shared types and codes: the CSR buffers' value and index types
# (fused: every function taking them is compiled once per type), and the codes of
# a rule's update, schedule and penalty, the registry's (`fastprox._registry`),
# generated from it into codes.pxi by setup.py (`fastprox._kernel.codes`).

ctypedef fused value_t:
    float
    double

ctypedef fused index_t:
    int
    long long

include "codes.pxi"              # the enums of updates, schedules, penalties (generated)
