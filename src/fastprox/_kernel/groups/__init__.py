"""The group penalties' layer: their blocks, lazy catch-up and prox under FOBOS and RDA
(`groups`), and their proximal operators on one block (`group_prox`)."""
