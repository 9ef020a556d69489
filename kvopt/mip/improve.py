"""Deprecated path of :mod:`kvopt.mip.search.improve` (moved by issue 20; kept for one release).

Every name is looked up in :mod:`kvopt.mip.search.improve` and handed out with a
:class:`DeprecationWarning` (:func:`kvopt.core.deprecation.moved_module`).
"""

from kvopt.core.deprecation import moved_module

__getattr__ = moved_module(__name__, ("kvopt.mip.search.improve",))
