import numpy as np
import pytest

from kvopt.core.errors import UsageError
from kvopt.queueing.distributions import parse_sizes
from kvopt.queueing.generic import RANKS, soap_mean_response
from kvopt.queueing.predictions import parse_predictions
from kvopt.queueing.soap import SoapModel


@pytest.mark.parametrize("policy,C", [("fcfs", None), ("spjf", None), ("pspjf", None),
                                      ("sprpt", None), ("trail", 0.5)])
@pytest.mark.parametrize("spec", ["exp:1", "hyperexp:0.5,0.5,0.5,1.5"])
def test_generic_matches_closed_formulas(policy, C, spec):
    d = parse_sizes(spec)
    lam = 0.7 / d.mean
    ref = SoapModel(d, parse_predictions("perfect"), lam).mean_response(policy, C)
    got = soap_mean_response(policy, lam, d, C=C, n_nodes=12)
    assert got == pytest.approx(ref, rel=5e-3)


def test_generic_with_exp_predictions():
    d, pm = parse_sizes("exp:1"), parse_predictions("exp")
    ref = SoapModel(d, pm, 0.6).mean_response("trail", 0.5)
    got = soap_mean_response("trail", 0.6, d, pm, C=0.5, n_nodes=5, n_age=100)
    assert got == pytest.approx(ref, rel=1e-2)


def test_generic_las_on_exponential_is_mm1():
    # foreground-background is size-blind: for exponential sizes E[T] = 1 / (1 - lam)
    lam = 0.7
    got = soap_mean_response(RANKS["las"](), lam, parse_sizes("exp:1"), n_nodes=12)
    assert got == pytest.approx(1 / (1 - lam), rel=5e-3)


def test_generic_custom_rank_function():
    # a rank that is the negative of SRPT's (longest remaining first) is much worse than SRPT
    d = parse_sizes("exp:1")
    lrpt = soap_mean_response(lambda x, y, a: -(x - a), 0.5, d, n_nodes=8)
    srpt = soap_mean_response("sprpt", 0.5, d, n_nodes=8)
    assert lrpt > srpt * 1.2 and np.isfinite(lrpt)


def test_generic_bad_policy():
    with pytest.raises(UsageError, match="invalid policy"):
        soap_mean_response("nope", 0.5, parse_sizes("exp:1"))
