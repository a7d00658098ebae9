"""The tests' local Dask clusters."""

#: Their dashboards' address: a free port each. Dask's default, 8787, is taken by the
#: first cluster of a run (the other pytest worker's, a user's), and every later one
#: warns "Port 8787 is already in use" and moves; `None` means that default.
DASHBOARD = ":0"
