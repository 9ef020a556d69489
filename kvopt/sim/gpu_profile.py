"""Deprecated: moved to :mod:`kvopt.sim.steptime.gpu_profile` (kept for one release)."""

from kvopt.core.deprecation import moved_module

__getattr__ = moved_module(__name__, ["kvopt.sim.steptime.gpu_profile"])
