"""The models of the hindsight-optimal IP (seed 001), solver-neutral.

- :mod:`~kvopt.mip.model.data`: :class:`~kvopt.mip.model.data.MILPData`, the canonical sparse
  form every backend reads;
- :mod:`~kvopt.mip.model.builder`: the time-indexed formulations (one function per row family,
  its size formula beside it);
- :mod:`~kvopt.mip.model.sizing`: their size before they are built, and the RAM check;
- :mod:`~kvopt.mip.model.cpmodel`: the CP-SAT scheduling models (``cp`` ... ``cp+exact``);
- :mod:`~kvopt.mip.model.discretize`: seconds to slots, explicitly.
"""
