"""Deprecated path of :mod:`kvopt.mip.model.sizing` (moved by issue 20; kept for one release).

Every name is looked up in :mod:`kvopt.mip.model.sizing` and handed out with a
:class:`DeprecationWarning` (:func:`kvopt.mip._deprecated.alias_module`).
"""

from kvopt.mip._deprecated import alias_module

__getattr__ = alias_module(__name__)
