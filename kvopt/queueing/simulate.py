"""Deprecated: moved to :mod:`kvopt.queueing.simulator`, where ``simulate`` is
:func:`~kvopt.queueing.simulator.simulate_queue` and ``SimResult`` is
:class:`~kvopt.queueing.simulator.QueueResult` (kept for one release)."""

from kvopt.core.deprecation import callable_module, moved_module

__getattr__ = moved_module(__name__, ["kvopt.queueing.simulator"],
                           renames={"simulate": "simulate_queue", "SimResult": "QueueResult"})
# once imported, this module is the package's attribute ``simulate``: keep it callable
callable_module(__name__, "kvopt.queueing.simulator", "simulate_queue")
