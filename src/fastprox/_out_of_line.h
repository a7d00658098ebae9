/* Functions kept out of line. The kernel's functions live in .pxd files, where
   Cython only takes `cdef inline` ones: all reach GCC with the inline hint, which
   raises its size limits for every one of them. Inlined into their callers, the cold
   paths below (Berhu's heap, the rebase, the group bookkeeping) grew the general
   step's `apply` and `margins` past GCC's limits, which then left the hot catch-up
   and update out of line (the general path 5-30% slower). Declared here noinline,
   they stay calls, as GCC left them when they were plain `cdef` functions of one
   .pyx. Each .pxd declares its own (`FASTPROX_OUT_OF_LINE`) with Cython's C name
   and signature: a signature that changes fails the build (conflicting types), a
   function that disappears warns (declared static but never defined). */
#ifndef FASTPROX_OUT_OF_LINE_H
#define FASTPROX_OUT_OF_LINE_H
#if defined(__GNUC__)
/* noinline on a function Cython declares inline: what is asked, not a mistake */
#pragma GCC diagnostic ignored "-Wattributes"
#define FASTPROX_OUT_OF_LINE(...) static __attribute__((noinline)) __VA_ARGS__;
#else
#define FASTPROX_OUT_OF_LINE(...)
#endif
struct __pyx_t_8fastprox_6_state_Ctx;
struct __pyx_t_8fastprox_6_berhu_Heap;
#endif
