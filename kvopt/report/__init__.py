"""Reports built on the theory module and on measured runs of ``kvopt.sim`` / ``kvopt.mip``.

- :mod:`kvopt.report.ratios`: the ratio-vs-alpha table, plots and manifest
  (``kvopt report ratios``);
- :mod:`kvopt.report.measure`: measured ratios vs H-SF and vs OPT;
- :mod:`kvopt.report.search`: counterexample search (``kvopt report search``).
"""
