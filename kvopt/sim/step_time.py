"""Deprecated: the step-time models moved to :mod:`kvopt.sim.steptime` (kept for one release)."""

from kvopt.core.deprecation import moved_module
from kvopt.sim.steptime import __all__  # noqa: F401  (``from kvopt.sim.step_time import *``)

__getattr__ = moved_module(__name__, [
    "kvopt.sim.steptime", "kvopt.sim.steptime.models", "kvopt.sim.steptime.profiled",
    "kvopt.sim.steptime.engine_costs", "kvopt.sim.steptime.registry", "kvopt.core.io"])
