"""The kernel's base layer: the shared types and rule codes (`types`), the Learner's
buffers (`buffers`), the state of K linear models as a step sees it and its layout
(`state`, `layout.h`), and the rows a pass visits (`csr`)."""
