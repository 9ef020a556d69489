"""The examples in the kvopt.predictions docstrings run."""

import doctest
import importlib

import pytest

MODULES = ["kvopt.predictions.distributions", "kvopt.predictions.predictors",
           "kvopt.predictions.workload"]


@pytest.mark.parametrize("name", MODULES)
def test_doctests(name):
    mod = importlib.import_module(name)
    res = doctest.testmod(mod, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert res.attempted > 0 and res.failed == 0
