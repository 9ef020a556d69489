import doctest
import importlib

import pytest

MODULES = ["_quad", "distributions", "predictions", "soap", "classical", "closed_forms",
           "generic", "simulate", "plot", "errata", "agreement", "__init__"]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    mod = importlib.import_module("kvopt.queueing" if name == "__init__"
                                  else f"kvopt.queueing.{name}")
    res = doctest.testmod(mod, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert res.failed == 0
