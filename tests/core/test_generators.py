import numpy as np

from kvopt import check_schedule
from kvopt.core.generators import model1, model2, random_small
from kvopt.core.mcsf import mcsf_schedule


def test_model1_ranges_and_determinism():
    for seed in range(20):
        inst = model1(seed)
        assert 40 <= inst.n <= 60 and 30 <= inst.memory <= 50
        assert (inst.arrival == 0).all()
        assert ((inst.prompt >= 1) & (inst.prompt <= 5)).all()
        assert ((inst.output >= 1) & (inst.output <= inst.memory - inst.prompt)).all()
        assert inst.to_dict() == model1(seed).to_dict()
    assert model1(1).to_dict() != model1(2).to_dict()


def test_model2_poisson_arrivals():
    sizes = []
    for seed in range(30):
        inst = model2(seed)
        assert inst.arrival.min() >= 1 and inst.arrival.max() <= 60
        assert np.all(np.diff(inst.arrival) >= 0)
        sizes.append(inst.n)
        assert inst.to_dict() == model2(seed).to_dict()
    # E[n] = lambda*T with lambda~U[.5,1.5], T~U{40..60}: about 50
    assert 35 < np.mean(sizes) < 65


def test_generator_accepts_generator_object():
    rng = np.random.default_rng(4)
    a, b = model1(rng), model1(rng)
    assert a.to_dict() != b.to_dict()


def test_mcsf_reference_is_feasible_on_random_instances():
    for seed in range(50):
        inst = random_small(seed)
        rep = check_schedule(inst, mcsf_schedule(inst))
        assert rep.ok, (seed, str(rep))
