"""Deprecated path of :mod:`kvopt.mip.bounds.relaxations` (moved by issue 20; kept for one release).

Every name is looked up in :mod:`kvopt.mip.bounds.relaxations` and handed out with a
:class:`DeprecationWarning` (:func:`kvopt.core.deprecation.moved_module`).
"""

from kvopt.core.deprecation import moved_module

__getattr__ = moved_module(__name__, ("kvopt.mip.bounds.relaxations",))
