"""Deprecated aliases kept for one release after a move or a rename.

Three kinds:

- a *moved module* (``kvopt.sim.step_time`` -> ``kvopt.sim.steptime``): the old module is a
  small file whose ``__getattr__`` (:func:`moved_module`) finds every name (private ones too)
  in the new modules and warns when a name is read through the old path;
- a *renamed name* (``queueing.simulate`` -> ``queueing.simulate_queue``): the module defines
  ``__getattr__ = renamed_names(__name__, {"old": "new", ...})``; reading the old name warns
  and gives the object of the new one;
- a *renamed keyword argument* (``memory_budget=`` -> ``ram=``): the function passes both to
  :func:`renamed_argument`, which warns when the old one is used.

Both warn with :class:`DeprecationWarning` (shown by default only to code run as
``__main__``, and by pytest), and nothing inside ``kvopt`` uses the old names
(``tests/test_deprecations.py``).

Examples
--------
>>> import types, warnings
>>> mod = types.ModuleType("demo")
>>> mod.new = 42
>>> mod.__getattr__ = renamed_names("demo", {"old": "new"}, namespace=vars(mod))
>>> with warnings.catch_warnings(record=True) as seen:
...     warnings.simplefilter("always")
...     value = mod.old
>>> value, seen[0].category.__name__, str(seen[0].message)
(42, 'DeprecationWarning', 'demo.old is deprecated; use demo.new')
"""

from __future__ import annotations

import importlib
import sys
import types
import warnings
from collections.abc import Callable, Mapping, Sequence
from typing import Any

__all__ = ["callable_module", "moved_module", "renamed_argument", "renamed_names"]


def moved_module(old: str, new: Sequence[str], *,
                 renames: Mapping[str, str] | None = None) -> Callable[[str], Any]:
    """The ``__getattr__`` of module ``old``, moved to ``new``: it looks a name up in each of
    the ``new`` modules in turn (private names too; a name in ``renames`` under its new name)
    and warns that ``old`` is deprecated (naming the first of ``new``).

    The warning goes to the code reading the name; code inside ``kvopt`` itself is not warned
    (the modules not yet moved over are listed in ``tests/test_deprecations.py``), so that
    ``python -W error`` runs kvopt meanwhile.

    Examples
    --------
    >>> import math
    >>> lookup = moved_module("old.place", ["math"], renames={"half_turn": "pi"})
    >>> lookup("sqrt")(16.0), lookup("half_turn") == math.pi
    (4.0, True)
    """

    def __getattr__(name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        caller = str(sys._getframe(1).f_globals.get("__name__", ""))
        if not caller.startswith("kvopt."):
            also = f" (as {renames[name]})" if renames and name in renames else ""
            warnings.warn(f"{old} is deprecated; import from {new[0]} instead{also}",
                          DeprecationWarning, stacklevel=2)
        name = renames.get(name, name) if renames else name
        for target in new:
            mod = importlib.import_module(target)
            if hasattr(mod, name):
                return getattr(mod, name)
        raise AttributeError(f"module {old!r} has no attribute {name!r}")

    return __getattr__


def renamed_names(module: str, renames: Mapping[str, str], *,
                  namespace: Mapping[str, Any] | None = None) -> Callable[[str], Any]:
    """A module ``__getattr__`` that serves each old name of ``renames`` (old -> new) with the
    object of the new name in ``module``, warning with :class:`DeprecationWarning`.

    Examples
    --------
    >>> import warnings
    >>> lookup = renamed_names("demo", {"simulate": "simulate_queue"},
    ...                        namespace={"simulate_queue": "the new function"})
    >>> with warnings.catch_warnings(record=True) as seen:
    ...     warnings.simplefilter("always")
    ...     value = lookup("simulate")
    >>> value, str(seen[0].message)
    ('the new function', 'demo.simulate is deprecated; use demo.simulate_queue')
    """

    def __getattr__(name: str) -> Any:
        if name not in renames:
            raise AttributeError(f"module {module!r} has no attribute {name!r}")
        new = renames[name]
        warnings.warn(f"{module}.{name} is deprecated; use {module}.{new}", DeprecationWarning,
                      stacklevel=2)
        ns = namespace if namespace is not None else vars(sys.modules[module])
        return ns[new]

    return __getattr__


def callable_module(module: str, target: str, name: str) -> None:
    """Make the (deprecated) module ``module`` callable as ``target.name``, with a
    :class:`DeprecationWarning`: for a module that shares its name with a function of its
    package (``kvopt.queueing.simulate``), which the module replaces as the package's
    attribute once it is imported.

    Examples
    --------
    >>> import sys, types, warnings
    >>> sys.modules["demo_old"] = types.ModuleType("demo_old")
    >>> callable_module("demo_old", "math", "sqrt")
    >>> with warnings.catch_warnings(record=True) as seen:
    ...     warnings.simplefilter("always")
    ...     root = sys.modules.pop("demo_old")(16.0)
    >>> root, str(seen[0].message)
    (4.0, 'demo_old(...) is deprecated; use math.sqrt')
    """

    class _CallableModule(types.ModuleType):
        def __call__(self, *args: Any, **kwargs: Any) -> Any:
            warnings.warn(f"{module}(...) is deprecated; use {target}.{name}",
                          DeprecationWarning, stacklevel=2)
            return getattr(importlib.import_module(target), name)(*args, **kwargs)

    sys.modules[module].__class__ = _CallableModule


def renamed_argument(new: Any, old: Any, old_name: str, new_name: str) -> Any:
    """The value of a renamed keyword argument: ``new``, or the deprecated ``old`` (with a
    :class:`DeprecationWarning`) when only that one is given.

    Raises
    ------
    kvopt.core.errors.UsageError
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
