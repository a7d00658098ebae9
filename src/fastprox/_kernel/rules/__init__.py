"""The update rules' layer: scalar proxes (`prox`), the scalar schedules (`schedules`),
FOBOS's cumulants and catch-up (`fobos`), AdaGrad (`adagrad`), the averaged iterate (`average`), the normalized schedule
(`normalized`), Berhu's heap (`berhu`), the dual rules' weights (`dual`), the
unpenalized entries (`intercept`)."""
