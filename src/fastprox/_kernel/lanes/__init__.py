"""The SIMD layer: two entries' arithmetic in one SSE2 instruction (`pairs.h`,
`pairs.pxd`), the single-output rows' passes in lanes of every width the CPU has
(`lanes.h` over `isa.h` and `passes.h`, `lanes.pxd`), and a branch-free max(m, 0)
(`max0.h`)."""
