"""The losses layer: values and derivatives in the margin (`losses`), the steps' score
gradients and overflow guard (`gradients`), the importance-invariant step's closed
forms (`invariant`)."""
