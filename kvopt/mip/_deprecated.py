"""Deprecated module paths of :mod:`kvopt.mip` (kept for one release).

Issue 20 moved the flat modules into rooms (:mod:`kvopt.mip.model`, :mod:`kvopt.mip.bounds`,
:mod:`kvopt.mip.search`). The old module paths stay importable for one release: each is a
module whose ``__getattr__`` (:func:`alias_module`) hands out the names of its new home with a
:class:`DeprecationWarning` naming it.
"""

from __future__ import annotations

import importlib
import warnings
from collections.abc import Callable
from typing import Any

#: Old module path -> new module paths searched in order (the first that has the name).
MOVED: dict[str, tuple[str, ...]] = {
    "kvopt.mip.bounds": ("kvopt.mip.bounds.combinatorial",),
    "kvopt.mip.data": ("kvopt.mip.model.data",),
    "kvopt.mip.builder": ("kvopt.mip.model.builder",),
    "kvopt.mip.sizing": ("kvopt.mip.model.sizing",),
    "kvopt.mip.discretize": ("kvopt.mip.model.discretize",),
    "kvopt.mip.cpmodel": ("kvopt.mip.model.cpmodel",),
    "kvopt.mip.relaxations": ("kvopt.mip.bounds.relaxations",),
    "kvopt.mip.sparse_lp": ("kvopt.mip.bounds.sparse_lp",),
    "kvopt.mip.colgen": ("kvopt.mip.bounds.colgen",),
    "kvopt.mip.intervals": ("kvopt.mip.bounds.intervals", "kvopt.mip.bounds.lagrangian"),
    "kvopt.mip.fixing": ("kvopt.mip.bounds.fixing", "kvopt.mip.bounds.lagrangian"),
    "kvopt.mip.improve": ("kvopt.mip.search.improve",),
}


def alias_module(old: str) -> Callable[[str], Any]:
    """The module ``__getattr__`` of the deprecated path ``old`` (a key of :data:`MOVED`).

    Examples
    --------
    >>> import warnings
    >>> get = alias_module("kvopt.mip.improve")
    >>> with warnings.catch_warnings(record=True) as w:
    ...     warnings.simplefilter("always")
    ...     f = get("improve")
    >>> f.__module__, w[0].category.__name__
    ('kvopt.mip.search.improve', 'DeprecationWarning')
    """
    targets = MOVED[old]

    def __getattr__(name: str) -> Any:
        if not name.startswith("__"):
            for new in targets:
                mod = importlib.import_module(new)
                if hasattr(mod, name):
                    warnings.warn(f"{old} is deprecated and will be removed in the next "
                                  f"release; import {name} from {new}", DeprecationWarning,
                                  stacklevel=2)
                    return getattr(mod, name)
        raise AttributeError(f"module {old!r} has no attribute {name!r}")

    return __getattr__


def renamed_argument(new: Any, old: Any, old_name: str, new_name: str) -> Any:
    """The value of a keyword argument renamed by issue 20: ``new``, or the deprecated
    ``old`` (with a :class:`DeprecationWarning`) when only that one is given.

    Raises
    ------
    UsageError
        Both are given.

    Examples
    --------
    >>> renamed_argument("4G", None, "memory_budget", "ram")
    '4G'
    """
    if old is None:
        return new
    from kvopt.core.errors import UsageError

    if new is not None:
        raise UsageError(old_name, f"is the deprecated name of {new_name}; give only {new_name}")
    warnings.warn(f"the argument {old_name}= is deprecated and will be removed in the next "
                  f"release; use {new_name}=", DeprecationWarning, stacklevel=3)
    return old
