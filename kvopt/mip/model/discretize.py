"""Explicit conversion of a ``time_unit="second"`` instance (a trace) into slots.

The MIP, its bounds and MC-SF's slotted rule work in unit slots (one batch iteration per slot,
one output token per request per slot). A trace gives arrivals in seconds. This module is the
one documented place where seconds become slots; every other entry point of ``kvopt.mip``
refuses ``time_unit="second"`` with an :class:`~kvopt.core.errors.InvalidInstanceError`
naming ``time_unit``.

Conversion (``slot_seconds = delta``): decision point ``k`` happens at time ``k * delta``;
a request arriving at ``t`` seconds may start at the first decision point not before it,
``a = ceil(t / delta)``. Prompt and output sizes (tokens) and ``M`` are unchanged. A
schedule of the discretised instance therefore runs every batch in exactly ``delta``
seconds (a constant step-time model; the real iteration time grows with the batch).
"""

from __future__ import annotations

import numpy as np

from kvopt.core.errors import InvalidInstanceError
from kvopt.core.instance import Instance


def discretize(instance: Instance, slot_seconds: float) -> Instance:
    """Slotted copy of a seconds instance: ``arrival_slot = ceil(arrival / slot_seconds)``.

    Parameters
    ----------
    instance
        A ``time_unit="second"`` instance (returned unchanged if already slotted).
    slot_seconds
        Duration of one slot (one batch iteration) in seconds, ``> 0``.

    Returns
    -------
    Instance
        ``time_unit="step"``, same prompts, outputs and memory; the name records the slot.

    Examples
    --------
    >>> inst = Instance(memory=100, arrival=[0.0, 0.12, 0.25], prompt=[5, 5, 5],
    ...                 output=[3, 3, 3], time_unit="second")
    >>> discretize(inst, 0.1).arrival.tolist()
    [0, 2, 3]
    """
    if not (isinstance(slot_seconds, (int, float)) and np.isfinite(slot_seconds)
            and slot_seconds > 0):
        raise InvalidInstanceError("slot_seconds", f"must be a positive number, got "
                                   f"{slot_seconds!r}")
    if instance.is_slotted:
        return instance
    arr = np.ceil(np.asarray(instance.arrival, dtype=np.float64) / slot_seconds - 1e-9)
    arr = np.maximum(arr, 0).astype(np.int64)
    name = f"{instance.name or 'trace'}@{slot_seconds:g}s"
    return Instance(memory=instance.memory, arrival=arr, prompt=instance.prompt,
                    output=instance.output, time_unit="step", name=name,
                    source=f"kvopt.mip.discretize(slot_seconds={slot_seconds:g}) of "
                    f"{instance.source or instance.name}")
