# The kernel's shared types and codes: the CSR buffers' value and index types
# (fused: every function taking them is compiled once per type), and the codes of
# a rule's update, schedule and penalty, the registry's (`fastprox._registry`: its
# `codes`; tests/test_registry.py checks these enums against it).

ctypedef fused value_t:
    float
    double

ctypedef fused index_t:
    int
    long long

cdef enum:
    FOBOS = 0
    RDA = 1
    FTRL = 2

cdef enum:
    CONSTANT = 0
    INVSQRT = 1
    INV = 2
    ADAGRAD = 3
    NORMALIZED = 4

cdef enum:
    NONE = 0
    L1 = 1
    L2 = 2
    ELASTICNET = 3
    BERHU = 4
    L1_L2 = 5
    L1_LINF = 6
    SPARSE_GROUP = 7
    SQUARED_GROUP = 8



