"""Deprecated path of :mod:`kvopt.mip.model.discretize` (moved by issue 20; kept for one release).

Every name is looked up in :mod:`kvopt.mip.model.discretize` and handed out with a
:class:`DeprecationWarning` (:func:`kvopt.core.deprecation.moved_module`). ``kvopt.mip.discretize``
is also the function :func:`kvopt.mip.model.discretize.discretize`: importing this module
binds it as the attribute ``discretize`` of :mod:`kvopt.mip`, so the module calls the function
(without a warning: that name is not deprecated).
"""

import sys
import types
from typing import Any

from kvopt.core.deprecation import moved_module

__getattr__ = moved_module(__name__, ("kvopt.mip.model.discretize",))


class _CallableModule(types.ModuleType):
    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        from kvopt.mip.model.discretize import discretize

        return discretize(*args, **kwargs)


sys.modules[__name__].__class__ = _CallableModule
