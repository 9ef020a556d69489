"""Seeds: one rule for every random choice a user can seed.

A seed is an integer ``0 <= seed <= MAX_SEED`` (numpy's ``SeedSequence`` rejects negative
ones; the upper bound keeps a seed a signed 64-bit integer, as SQLite and JSON readers store
it). Every command's ``--seed``, ``--rng-seed`` and ``--seeds`` goes through
:func:`check_seed`, so a bad seed is one error naming the flag, never numpy's traceback.
"""

from __future__ import annotations

from collections.abc import Iterable

from kvopt.core.errors import UsageError

#: Largest accepted seed (2**63 - 1).
MAX_SEED = 2**63 - 1


def check_seed(value: object, name: str = "seed") -> int:
    """``value`` as a seed (an ``int`` or its decimal text), or :class:`UsageError` naming
    ``name``.

    Examples
    --------
    >>> check_seed("7"), check_seed(0)
    (7, 0)
    >>> try:
    ...     check_seed("-1", "--seed")
    ... except UsageError as exc:
    ...     print(exc)
    invalid --seed: must be an integer in [0, 2**63 - 1], got -1
    """
    seed: int | None = None
    if isinstance(value, int) and not isinstance(value, bool):
        seed = value
    elif isinstance(value, str):
        try:
            seed = int(value.strip())
        except ValueError:
            seed = None
    if seed is None:
        raise UsageError(name, f"expected an integer seed, got {value!r}")
    if not 0 <= seed <= MAX_SEED:
        raise UsageError(name, f"must be an integer in [0, 2**63 - 1], got {seed}")
    return seed


def check_seeds(values: Iterable[object], name: str = "seeds") -> tuple[int, ...]:
    """Every value a seed (see :func:`check_seed`), as a tuple.

    Examples
    --------
    >>> check_seeds([3, "4"])
    (3, 4)
    """
    return tuple(check_seed(v, name) for v in values)
