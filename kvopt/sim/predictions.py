"""Deprecated: moved to :mod:`kvopt.sim.predicted_lengths` (kept for one release)."""

from kvopt.core.deprecation import moved_module

__getattr__ = moved_module(__name__, ["kvopt.sim.predicted_lengths"])
