"""Scheduling policies and their registry :data:`POLICIES`.

Modules: :mod:`~kvopt.sim.policies.base` (the base class, replay, plain functions, scan
orders), :mod:`~kvopt.sim.policies.future_memory`, :mod:`~kvopt.sim.policies.greedy`,
:mod:`~kvopt.sim.policies.registry` (names, options, metadata).

A policy is an object with ``reset(state)``, ``on_arrival(state, ids)``,
``on_complete(state, ids)`` and ``decide(state) -> Decision`` (see
:mod:`kvopt.sim.engine`); a plain function ``f(state) -> admit ids | Decision`` is wrapped
by :class:`FunctionPolicy`. Registry entries are factories
``factory(instance, predictions, **options) -> policy``.

Two families cover every policy of the seeds: :class:`FutureMemoryPolicy` (admission by
seed 001's future-memory check over a scan order: ``mcsf``, ``mc-benchmark``, ``hsf``,
``amax``, ``amin``, ``amin-multi``, ``a-l``, ``mcsf-margin``; table in
:mod:`~kvopt.sim.policies.future_memory`) and :class:`GreedyPolicy` (admission by current
memory: ``fcfs``, ``sjf``, ``edf``, ``alpha-protection``, ``alpha-beta-clearing``; see
:mod:`~kvopt.sim.policies.greedy`).

Overflow is detected at the decision point before the slot that would exceed ``M`` (the
engine guarantees a call there); evicted requests keep their priority and may restart in the
same decision point.
"""

from __future__ import annotations

from kvopt.core.deprecation import renamed_names
from kvopt.sim.policies.base import (
    FunctionPolicy,
    Policy,
    ReplayPolicy,
    arrival_rank,
    due_rank,
    random_rank,
)
from kvopt.sim.policies.future_memory import FutureMemoryPolicy
from kvopt.sim.policies.greedy import GreedyPolicy
from kvopt.sim.policies.registry import (
    POLICIES,
    POLICY_INFO,
    PolicyInfo,
    declare_policy_options,
    policy_info,
    policy_options,
    register_policy,
)

__all__ = [
    "FunctionPolicy",
    "FutureMemoryPolicy",
    "GreedyPolicy",
    "POLICIES",
    "POLICY_INFO",
    "Policy",
    "PolicyInfo",
    "ReplayPolicy",
    "arrival_rank",
    "due_rank",
    "declare_policy_options",
    "policy_info",
    "policy_options",
    "random_rank",
    "register_policy",
]

#: Deprecated (one release): ``deadline_rank``, now :func:`due_rank`.
__getattr__ = renamed_names(__name__, {"deadline_rank": "due_rank"})
