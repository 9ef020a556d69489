"""Seeded instance generators (numpy ``Generator``; no global RNG).

Seed 001 synthetic models (notes/seed-001-jaillet.md §5.1):

- Model 1: ``M ~ U{30..50}``, ``n ~ U{40..60}``, ``s_i ~ U{1..5}``,
  ``o_i ~ U{1..M - s_i}``, all arrivals at slot 0.
- Model 2: same ``M``, ``s``, ``o``; horizon ``T ~ U{40..60}``, rate
  ``lambda ~ U[0.5, 1.5]``, ``Poisson(lambda)`` arrivals in each slot ``t = 1..T``
  (the paper leaves the discretisation open; this is the digest's resolution).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from kvopt.core.errors import UsageError
from kvopt.core.instance import Instance

SeedLike = int | np.random.Generator | None


def _check(name: str, value: object, lo: float, *, integer: bool = True) -> None:
    """A generator parameter (``None`` = drawn) must be a number ``>= lo`` (``UsageError``)."""
    if value is None:
        return
    kinds = (int, np.integer) if integer else (int, float, np.integer, np.floating)
    if isinstance(value, bool) or not isinstance(value, kinds) or not value >= lo:
        what = "an integer" if integer else "a number"
        raise UsageError(name, f"must be {what} >= {lo:g}, got {value!r}")


def _check_range(name: str, rng_: tuple[float, float], lo: float) -> None:
    if len(rng_) != 2 or not lo <= rng_[0] <= rng_[1]:
        raise UsageError(name, f"must be (MIN, MAX) with {lo:g} <= MIN <= MAX, got {rng_!r}")


def _rng(seed: SeedLike) -> np.random.Generator:
    return seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)


def _lengths(rng: np.random.Generator, n: int, memory: int,
             prompt_range: tuple[int, int]) -> tuple[np.ndarray, np.ndarray]:
    s = rng.integers(prompt_range[0], prompt_range[1] + 1, size=n)
    o = rng.integers(1, memory - s + 1)  # U{1..M-s_i}, vectorized upper bound
    return s, o


def _memory(rng: np.random.Generator, memory: int | None, memory_range: tuple[int, int]) -> int:
    """The fixed ``memory`` or a ``U{memory_range}`` draw (one draw only when drawn)."""
    return int(rng.integers(memory_range[0], memory_range[1] + 1)) if memory is None else memory


def _check_memory_prompt(memory: int | None, memory_range: tuple[int, int],
                         prompt_range: tuple[int, int]) -> None:
    """Check ``memory``, ``memory_range``, ``prompt_range`` and that every prompt fits."""
    _check("memory", memory, 2)
    _check_range("memory_range", memory_range, 2)
    _check_range("prompt_range", prompt_range, 0)
    if prompt_range[1] >= (memory_range[0] if memory is None else memory):
        raise UsageError("prompt_range", "the largest prompt must be below the memory")


def model1(
    seed: SeedLike = None,
    *,
    n: int | None = None,
    memory: int | None = None,
    n_range: tuple[int, int] = (40, 60),
    memory_range: tuple[int, int] = (30, 50),
    prompt_range: tuple[int, int] = (1, 5),
) -> Instance:
    """Seed 001 Model 1: all requests arrive at slot 0.

    Parameters
    ----------
    seed
        Integer seed or ``numpy.random.Generator``.
    n, memory
        Fix the number of requests / the memory instead of drawing them.
    n_range, memory_range, prompt_range
        Inclusive ranges of the uniform draws.

    Examples
    --------
    >>> inst = model1(7)
    >>> inst.n >= 40 and 30 <= inst.memory <= 50 and int(inst.arrival.max()) == 0
    True
    >>> model1(7).sha256() == inst.sha256()
    True
    """
    _check("n", n, 1)
    _check_range("n_range", n_range, 1)
    _check_memory_prompt(memory, memory_range, prompt_range)
    rng = _rng(seed)
    M = _memory(rng, memory, memory_range)
    n_ = int(rng.integers(n_range[0], n_range[1] + 1)) if n is None else n
    s, o = _lengths(rng, n_, M, prompt_range)
    label = seed if isinstance(seed, int) else "gen"
    return Instance(memory=M, arrival=np.zeros(n_, dtype=np.int64), prompt=s, output=o,
                    name=f"model1-seed{label}-n{n_}-M{M}",
                    source="kvopt.core.generators.model1 (seed 001 Sec. 5.1)")


def model2(
    seed: SeedLike = None,
    *,
    horizon: int | None = None,
    rate: float | None = None,
    memory: int | None = None,
    horizon_range: tuple[int, int] = (40, 60),
    rate_range: tuple[float, float] = (0.5, 1.5),
    memory_range: tuple[int, int] = (30, 50),
    prompt_range: tuple[int, int] = (1, 5),
) -> Instance:
    """Seed 001 Model 2: ``Poisson(lambda)`` arrivals in each slot ``1..T``.

    At least one request is always generated (an empty draw is redrawn).

    Examples
    --------
    >>> inst = model2(3)
    >>> int(inst.arrival.min()) >= 1
    True
    """
    _check("horizon", horizon, 1)
    _check("rate", rate, 0, integer=False)
    if rate is not None and not rate > 0:
        raise UsageError("rate", f"must be > 0, got {rate!r}")
    _check_range("horizon_range", horizon_range, 1)
    _check_range("rate_range", rate_range, 0)
    _check_memory_prompt(memory, memory_range, prompt_range)
    rng = _rng(seed)
    M = _memory(rng, memory, memory_range)
    T = int(rng.integers(horizon_range[0], horizon_range[1] + 1)) if horizon is None else horizon
    lam = float(rng.uniform(*rate_range)) if rate is None else rate
    while True:
        counts = rng.poisson(lam, size=T)
        if counts.sum() > 0:
            break
    arrival = np.repeat(np.arange(1, T + 1), counts)
    s, o = _lengths(rng, arrival.size, M, prompt_range)
    label = seed if isinstance(seed, int) else "gen"
    return Instance(memory=M, arrival=arrival, prompt=s, output=o,
                    name=f"model2-seed{label}-T{T}-M{M}",
                    source=f"kvopt.core.generators.model2 (seed 001 Sec. 5.1), lambda={lam:.4f}")


def random_small(
    seed: SeedLike = None,
    *,
    n_range: tuple[int, int] = (1, 6),
    memory_range: tuple[int, int] = (4, 12),
    max_arrival: int = 4,
    prompt_range: tuple[int, int] = (0, 3),
) -> Instance:
    """A tiny random instance for property tests and brute force (n <= 6 by default).

    Examples
    --------
    >>> random_small(0).n <= 6
    True
    """
    _check("max_arrival", max_arrival, 0)
    _check_range("n_range", n_range, 1)
    _check_range("memory_range", memory_range, 2)
    _check_range("prompt_range", prompt_range, 0)
    rng = _rng(seed)
    M = int(rng.integers(memory_range[0], memory_range[1] + 1))
    n = int(rng.integers(n_range[0], n_range[1] + 1))
    s = rng.integers(prompt_range[0], min(prompt_range[1], M - 1) + 1, size=n)
    o = rng.integers(1, M - s + 1)
    a = rng.integers(0, max_arrival + 1, size=n)
    return Instance(memory=M, arrival=a, prompt=s, output=o, name="random-small")


def mixed_slo(
    seed: SeedLike = None,
    *,
    n: int = 6,
    memory: int = 30,
    max_batch: int | None = 2,
    max_arrival: int = 6,
    prompt: tuple[int, int] = (0, 4),
    output: tuple[int, int] = (1, 6),
) -> Instance:
    """A small random instance with mixed SLOs (seed 003's three kinds, 1:1:1).

    Kinds uniform over ``stream``/``deadline``/``compound``; ``stream``: TTFT ``U{1..4}``
    slots, TBT ``U{1, 1.5, 2}``; ``deadline``: E2EL ``o + U{0..2 o}``; one compound group of
    the compound requests (stage = order of arrival) with E2EL
    ``max a - min a + sum o + U{0..4}``. All in slots.

    Examples
    --------
    >>> inst = mixed_slo(0, n=5)
    >>> inst.n, inst.max_batch, inst.has_slo
    (5, 2, True)
    """
    _check("n", n, 1)
    _check("memory", memory, 1)
    _check("max_arrival", max_arrival, 0)
    _check_range("prompt", prompt, 0)
    _check_range("output", output, 1)
    if prompt[1] + output[1] > memory:
        raise UsageError("memory", f"must hold the largest request ({prompt[1] + output[1]})")
    rng = _rng(seed)
    a = np.sort(rng.integers(0, max_arrival + 1, n))
    s = rng.integers(prompt[0], prompt[1] + 1, n)
    o = rng.integers(output[0], output[1] + 1, n)
    kinds = rng.choice(np.array(["stream", "deadline", "compound"]), n)
    comp = kinds == "compound"
    dl: list[float | None] = [None] * n
    ttft: list[float | None] = [None] * n
    tbt: list[float | None] = [None] * n
    d_comp = (int(a[comp].max() - a[comp].min() + o[comp].sum()) + int(rng.integers(0, 5))
              if comp.any() else 0)
    for i in range(n):
        if kinds[i] == "deadline":
            dl[i] = float(o[i] + rng.integers(0, 2 * o[i] + 1))
        elif kinds[i] == "stream":
            ttft[i] = float(rng.integers(1, 5))
            tbt[i] = float(rng.choice([1.0, 1.5, 2.0]))
        else:
            dl[i] = float(d_comp)
    return Instance(
        memory=memory, arrival=a, prompt=s, output=o, max_batch=max_batch,
        slo_kind=kinds.tolist(), deadline=dl, ttft_slo=ttft, tbt_slo=tbt,
        group=[0 if c else None for c in comp],
        stage=[int(k) if c else None for k, c in zip(np.cumsum(comp) - 1, comp, strict=True)],
        name="mixed-slo", source="kvopt.core.generators.mixed_slo")


#: Instance generators by name (``name -> callable(seed, **params)``), as sweeps and the CLI's
#: ``--generator`` draw from them (``kvopt.sweep.GENERATORS`` is this dictionary).
GENERATORS: dict[str, Callable[..., Instance]] = {
    "model1": model1,
    "model2": model2,
    "random-small": random_small,
}
