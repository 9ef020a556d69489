"""Load vs capacity of a simulation: the stability rate ``mu = M / (b E[g])`` with ``b`` from
a step-time model (formulas in :mod:`kvopt.core.stability`).

How ``b`` depends on the batch, and which reading is used
--------------------------------------------------------
A step's duration grows with the batch: prefill tokens, decode count and the KV tokens the
decodes read (:mod:`kvopt.sim.step_time`). ``mu`` is a statement about the boundary of
stability, where the memory is full in steady state, so ``b`` is read at *the steady-state
batch that fills M*: with ``lambda* = M / E[g]`` starts per step (Little's law on memory),
the batch holds ``D = lambda* E[o]`` running requests whose KV is ``M``, of which
``lambda*`` are prefilled in the step (``lambda* E[s]`` prompt tokens, ``lambda* E[s^2]``
for the quadratic attention term). Below ``mu`` the batches are smaller and faster, so the
server only gains headroom; reading ``b`` at an emptier batch would overstate ``mu``. The
mean batch is used (fractional counts rounded to whole tokens), so for ``lambda* < 1``
the prefill work is spread evenly over steps, which is exact for step-time models affine in
the prefill tokens.

On a slotted instance arrivals are counted in slots, so ``b = 1`` slot whatever step-time
model maps slots to seconds, and ``mu = M / E[g]`` per slot.

Examples
--------
>>> from kvopt import Instance
>>> inst = Instance(memory=12, arrival=[0, 2, 4, 6], prompt=[0] * 4, output=[3] * 4)
>>> h = instance_headroom(inst)
>>> h.mean_g, h.mu, round(h.load, 4)          # g = 1 + 2 + 3; mu = 12 / 6 per slot
(6.0, 2.0, 0.25)
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from kvopt.core.instance import Instance
from kvopt.core.stability import Headroom, mean_token_steps
from kvopt.sim.steptime import StepTimeModel, get_step_time

__all__ = ["capacity_batch", "instance_headroom", "step_at_capacity"]


def capacity_batch(memory: int, prompt: ArrayLike, output: ArrayLike) -> dict[str, float]:
    """The steady-state batch at the stability boundary (see the module docstring).

    Returns
    -------
    dict
        ``starts`` (``lambda* = M / E[g]`` per step), ``running`` (``D``), ``prefill``,
        ``prefill_sq``, ``decode`` (running requests not prefilled in the step) and ``kv``
        (KV tokens the decodes read).

    Examples
    --------
    >>> capacity_batch(60, [0, 0], [3, 3])
    {'starts': 10.0, 'running': 30.0, 'prefill': 0.0, 'prefill_sq': 0.0, 'decode': 20.0, 'kv': 60.0}
    """
    s = np.asarray(prompt, dtype=np.float64)
    o = np.asarray(output, dtype=np.float64)
    lam = float(memory) / mean_token_steps(prompt, output)
    running = lam * float(o.mean())
    prefill = lam * float(s.mean())
    return {"starts": lam, "running": running, "prefill": prefill,
            "prefill_sq": lam * float((s * s).mean()), "decode": max(running - lam, 0.0),
            "kv": max(float(memory) - prefill, 0.0)}


def step_at_capacity(model: str | StepTimeModel, memory: int, prompt: ArrayLike,
                     output: ArrayLike) -> float:
    """``b``: the step-time model's duration of :func:`capacity_batch` (seconds; 1 for
    ``unit``).

    Examples
    --------
    >>> step_at_capacity("unit", 60, [0, 0], [3, 3])
    1.0
    >>> b = step_at_capacity("a100-llama2-70b-tp2", 16492, [300] * 4, [200] * 4)
    >>> 0.01 < b < 1.0
    True
    """
    m = get_step_time(model)
    cb = capacity_batch(memory, prompt, output)
    p = round(cb["prefill"])
    d = round(cb["decode"])
    dur = m.durations(np.array([p + d]), np.array([d]), np.array([round(cb["kv"])]),
                      np.array([p]), np.array([cb["prefill_sq"]]))
    return float(dur[0])


def instance_headroom(instance: Instance, step_time: str | StepTimeModel = "unit"
                      ) -> Headroom:
    """``lambda``, ``mu`` and ``lambda / mu`` of an instance (a trace window, a generator's
    draw) under a step-time model; see the module docstring for ``b``.

    Examples
    --------
    >>> from kvopt import Instance
    >>> inst = Instance(memory=100, arrival=[0.0, 1.0, 2.0], prompt=[10] * 3,
    ...                 output=[4] * 3, time_unit="second")
    >>> instance_headroom(inst).mu          # unit steps: b = 1 s; E[g] = 50
    2.0
    """
    s, o = instance.prompt, instance.output
    if instance.is_slotted:
        return Headroom.of(instance.arrival, s, o, instance.memory, 1.0, "step", "slot")
    b = step_at_capacity(step_time, instance.memory, s, o)
    return Headroom.of(instance.arrival, s, o, instance.memory, b, "second",
                       "full-memory batch")

