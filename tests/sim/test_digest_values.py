"""Reference values computed independently in the seed digests (notes/seed-00x)."""

import numpy as np
import pytest

from kvopt import Instance
from kvopt.sim import simulate


@pytest.mark.parametrize("M,expected", [(16, 31), (36, 89), (64, 188), (100, 342), (400, 2289),
                                        (1600, 16504), (6400, 124709)])
def test_theorem41_instance_mcsf(M, expected):
    # seed 001 Thm 4.1 construction, r = b + M - sqrt(M)/2 with b = 0 (digest §6 table)
    m = int(np.sqrt(M)) // 2
    n = M // 2
    inst = Instance(memory=M, arrival=[0] + [M - m] * n, prompt=[1] * (n + 1),
                    output=[M - 1] + [1] * n)
    assert simulate(inst, "mcsf").metrics.total_latency == expected


def test_theorem2_instance_hsf_and_amax():
    # seed 000 R10: l=4, u=64, a=2, b=8, s=0, M=256: H-SF = 10240 exactly; a token-level
    # Amax is about 3.3 x H-SF (digest: ~33964)
    o = np.array([4] * 128 + [64] * 32)
    inst = Instance(memory=256, arrival=np.zeros(160, dtype=int), prompt=np.zeros(160, dtype=int),
                    output=o, pred_lower=np.full(160, 4), pred_upper=np.full(160, 64))
    assert simulate(inst, "hsf").metrics.total_latency == 10240
    amax = np.mean([simulate(inst, "amax", seed=k).metrics.total_latency for k in range(3)])
    assert 3.0 < amax / 10240 < 3.6
