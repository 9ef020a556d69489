"""The examples in the kvopt.sim docstrings run."""

import doctest
import importlib

import pytest

MODULES = ["kvopt.sim", "kvopt.sim.admission", "kvopt.sim.engine", "kvopt.sim.policies",
           "kvopt.sim.predictions", "kvopt.sim.step_time", "kvopt.report.table1",
           "kvopt.sim.steptime_fit", "kvopt.sim.gpu_profile", "kvopt.report.steptime",
           "kvopt.report.writers", "kvopt.core.io", "kvopt.report.fig8", "kvopt.report.errata",
           "kvopt.report.agreement"]


@pytest.mark.parametrize("name", MODULES)
def test_doctests(name):
    mod = importlib.import_module(name)
    res = doctest.testmod(mod, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert res.failed == 0
