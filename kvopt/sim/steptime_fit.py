"""Deprecated: moved to :mod:`kvopt.sim.steptime.measured` (measurement sets) and
:mod:`kvopt.sim.steptime.fit` (fitting, calibration, validation); kept for one release."""

from kvopt.core.deprecation import moved_module

__getattr__ = moved_module(__name__, ["kvopt.sim.steptime.fit", "kvopt.sim.steptime.measured",
                                      "kvopt.sim.steptime", "kvopt.core.io"])
