"""Deprecated path of :mod:`kvopt.mip.model.data` (moved by issue 20; kept for one release).

Every name is looked up in :mod:`kvopt.mip.model.data` and handed out with a
:class:`DeprecationWarning` (:func:`kvopt.core.deprecation.moved_module`).
"""

from kvopt.core.deprecation import moved_module

__getattr__ = moved_module(__name__, ("kvopt.mip.model.data",))
