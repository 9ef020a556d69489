"""Fixtures shared by the MIP tests."""

import pytest

from kvopt import Instance


@pytest.fixture
def interval_proves() -> Instance:
    """Five requests, all at slot 0, in M = 11: the cheap bounds do not prove MC-SF's schedule
    optimal and the plain LP does not either; the lag-interval LP does (so ``kvopt bound``'s
    default needs its LP, and the portfolio closes the gap as soon as that bound arrives)."""
    return Instance(memory=11, arrival=[0] * 5, prompt=[4, 5, 4, 1, 5], output=[4, 3, 4, 7, 3])


@pytest.fixture
def interval_lp_unsolved(monkeypatch: pytest.MonkeyPatch):
    """``make(first_too=False)``: from then on the interval LP of
    :func:`kvopt.mip.bounds.intervals.interval_bound` (the model with interval rows) comes
    back unsolved, as at a deadline between the two LPs of a staged call; ``first_too``: the
    first LP (``tight+cores``) too. The bound's child process of the portfolio is forked, so
    it sees the same."""
    import kvopt.mip.bounds.intervals as iv

    real = iv._lp_bound

    def make(first_too: bool = False) -> None:
        def fake(data, deadline, form, method, **kw):
            if first_too or any(k.startswith("interval") for k in data.row_kind):
                return iv._unsolved("Time limit reached")
            return real(data, deadline, form, method, **kw)

        monkeypatch.setattr(iv, "_lp_bound", fake)

    return make
