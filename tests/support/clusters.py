"""The tests' local Dask clusters."""

#: Their dashboards' address: a free port each. Dask's default, 8787, is taken by the
#: first cluster of a run (the other pytest worker's, a user's), and every later one
#: warns "Port 8787 is already in use" and moves; `None` means that default.
DASHBOARD = ":0"


def within(seconds, func, *args, **kwargs):
    """``func(*args, **kwargs)``'s result, or its exception, if it ends within
    ``seconds``; else the test fails saying so (a guard against a hang, not a timing:
    the call goes on in a daemon thread, which a hung run's client closes later)."""
    import threading

    import pytest

    out = {}

    def call():
        try:
            out["result"] = func(*args, **kwargs)
        except BaseException as e:      # (handed to the test's thread)
            out["error"] = e

    thread = threading.Thread(target=call, daemon=True)
    thread.start()
    thread.join(seconds)
    if thread.is_alive():
        pytest.fail(f"{getattr(func, '__name__', func)} did not end within {seconds} s (hung)")
    if "error" in out:
        raise out["error"]
    return out["result"]
