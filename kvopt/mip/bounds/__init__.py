"""Lower bounds on the hindsight optimum, from the cheapest to the strongest.

- :mod:`~kvopt.mip.bounds.combinatorial`: trivial, volume, fluid and core bounds (``O(n log n)``);
- :mod:`~kvopt.mip.bounds.relaxations`: the LP relaxation and a windowed Lagrangian;
- :mod:`~kvopt.mip.bounds.blocks`: the Lagrangian bound at the multipliers of coarse block LPs
  (traces of hundreds to thousands of requests, where no time-indexed LP fits);
- :mod:`~kvopt.mip.bounds.lagrangian`: the Lagrangian of a time-indexed model for any
  multipliers (the value every LP-based bound reports, reduced costs, subgradient ascent);
- :mod:`~kvopt.mip.bounds.sparse_lp`: exact sparse forms of the LP (same value, same duals);
- :mod:`~kvopt.mip.bounds.columns`: the LP by column generation over start columns (a bound
  at every round);
- :mod:`~kvopt.mip.bounds.intervals`: lag-interval rows and the interval LP bound;
- :mod:`~kvopt.mip.bounds.branch`: a branch-and-bound whose nodes are the interval LP (a
  bound above it; ``kvopt solve``'s portfolio runs it at ``n <= 30``);
- :mod:`~kvopt.mip.bounds.fixing`: reduced-cost fixing of start slots;
- :mod:`~kvopt.mip.bounds.colgen`: the configuration LP (column generation).

``kvopt.mip.bounds`` was a module until issue 20: its names (``core_bound``,
``combinatorial_bound``, ...) still resolve here, with a :class:`DeprecationWarning` naming
:mod:`kvopt.mip.bounds.combinatorial`, for one release.
"""

from kvopt.core.deprecation import moved_module

__getattr__ = moved_module(__name__, ("kvopt.mip.bounds.combinatorial",))
