"""Deprecated path of :mod:`kvopt.mip.bounds.sparse_lp` (moved by issue 20; kept for one release).

Every name is looked up in :mod:`kvopt.mip.bounds.sparse_lp` and handed out with a
:class:`DeprecationWarning` (:func:`kvopt.core.deprecation.moved_module`).
"""

from kvopt.core.deprecation import moved_module

__getattr__ = moved_module(__name__, ("kvopt.mip.bounds.sparse_lp",))
