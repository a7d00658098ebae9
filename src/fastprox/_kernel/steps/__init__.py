"""The steps' layer: the general step (`step`), the hand-fused single-output rows
(`rows`) and the structured step a compiled caller drives (`structured`)."""
