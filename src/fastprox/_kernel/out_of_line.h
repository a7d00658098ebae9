/* Functions kept out of line. The kernel's functions live in .pxd files, where
   Cython only takes `cdef inline` ones: all reach GCC with the inline hint, which
   raises its size limits for every one of them. Inlined into their callers, the cold
   paths below (Berhu's heap, the rebase, the group bookkeeping) grew the general
   step's `apply` and `margins` past GCC's limits, which then left the hot catch-up
   and update out of line (the general path 5-30% slower). Declared here noinline,
   they stay calls, as GCC left them when they were plain `cdef` functions of one
   .pyx. A .pxd marks each with a line `# FASTPROX_OUT_OF_LINE` above its definition
   (and includes this header); setup.py generates the declarations, with Cython's C
   names and signatures computed from the .pxd's module path (fastprox/_kernel/
   out_of_line.py), into the build's fastprox_out_of_line.h, included at the end of
   this file: moving a .pxd moves its names with it, and a signature the generator
   gets wrong fails the build (conflicting types).

   Why this file, and not plain (non-inline) `cdef` functions in _kernels.pyx or in
   a .pxi it includes (evaluated for issue 20 after the context's split into
   structs): their callers are `cdef inline` functions of the .pxd files (end_step
   calls rebase, margins intercept_value, apply apply_berhu, ...), and a .pxd names
   only what it cimports. A .pxd can declare a non-inline `cdef` function only as
   the C API of the module that implements it, a call through a pointer imported at
   run time (a `fastprox._fobos` extension module), or as an extern by its C name,
   which is what this file does. Measured again without these declarations (the
   macro empty, same commit, interleaved runs, K = 10, the general step): fobos under
   a scalar step with none/l1/l2/elasticnet and rda/invsqrt 17-33% slower, rda/adagrad
   20-23%, fobos/adagrad 5-14%, the rest within 10%. The -Wattributes warning is
   silenced from here to the end of the translation unit because it fires at Cython's
   later `static CYTHON_INLINE` definitions, not at these declarations.

   FASTPROX_IN_LINE is the converse, for the hot functions the general step must keep
   inlined (`steps/step.apply`, `rules/adagrad.adagrad_apply_outputs`): GCC's choice for them
   flips with the size of everything else in `step`, and a flip made them calls (the
   one-vs-rest passes 11% more instructions, callgrind) when the mini-batch branch's
   loops became the functions a structured step shares (`steps/step.collect`,
   `apply_collected`). Marked FASTPROX_IN_LINE (always_inline), they stay where GCC had put them. */
#ifndef FASTPROX_OUT_OF_LINE_H
#define FASTPROX_OUT_OF_LINE_H
#if defined(__GNUC__)
/* noinline on a function Cython declares inline: what is asked, not a mistake */
#pragma GCC diagnostic ignored "-Wattributes"
#define FASTPROX_OUT_OF_LINE(...) static __attribute__((noinline)) __VA_ARGS__;
#define FASTPROX_IN_LINE(...) static inline __attribute__((always_inline)) __VA_ARGS__;
#else
#define FASTPROX_OUT_OF_LINE(...)
#define FASTPROX_IN_LINE(...)
#endif
#include "fastprox_out_of_line.h"
#endif
