"""M/G/1 queueing with predictions: SOAP formulas, classical oracles and a simulator.

Main entry points
-----------------
* :class:`SoapModel` -- mean response of FCFS, SPJF, PSPJF, SPRPT and TRAIL's SPRPT with
  limited preemption (corrected Lemma 1; ``"trail-printed"`` is the paper's printed form);
* :func:`classical_mean` / :func:`classical_given_size` -- P-K, SJF, PSJF, SRPT oracles;
* :func:`soap_mean_response` -- a numerical SOAP evaluator that needs only a rank function;
* :func:`simulate_queue` -- event-driven M/G/1 simulator with the age-proportional memory
  model (:class:`QueueResult`);
* :func:`parse_sizes`, :func:`parse_predictions` -- distributions from spec strings.

Examples
--------
>>> from kvopt.queueing import SoapModel, parse_sizes, parse_predictions
>>> m = SoapModel(parse_sizes("exp:1"), parse_predictions("exp"), lam=0.5)
>>> round(m.mean_response("trail", C=0.8), 4)
1.6616
"""

from kvopt.core.deprecation import renamed_names
from kvopt.queueing.classical import classical_given_size, classical_mean
from kvopt.queueing.distributions import (
    BoundedPareto,
    Deterministic,
    Empirical,
    Exponential,
    HyperExponential,
    LogT,
    SizeDistribution,
    Uniform,
    parse_sizes,
)
from kvopt.queueing.generic import soap_mean_response
from kvopt.queueing.predictions import (
    ExpPredictions,
    LogNormalNoise,
    Perfect,
    PredictionModel,
    UniformNoise,
    parse_predictions,
)
from kvopt.queueing.simulator import QueueResult, simulate_queue
from kvopt.queueing.soap import SOAP_POLICIES, SoapModel

__all__ = [
    "BoundedPareto", "Deterministic", "Empirical", "Exponential", "HyperExponential", "LogT",
    "SizeDistribution", "Uniform", "parse_sizes", "ExpPredictions", "LogNormalNoise",
    "Perfect", "PredictionModel", "UniformNoise", "parse_predictions", "SoapModel",
    "SOAP_POLICIES", "classical_mean", "classical_given_size", "soap_mean_response",
    "simulate_queue", "QueueResult",
]

#: Deprecated names (one release): ``simulate``, ``SimResult`` and ``POLICIES`` clashed with
#: :func:`kvopt.sim.simulate`, :class:`kvopt.sim.SimResult` and :data:`kvopt.sim.POLICIES`.
__getattr__ = renamed_names(__name__, {"simulate": "simulate_queue", "SimResult": "QueueResult",
                                       "POLICIES": "SOAP_POLICIES"})
