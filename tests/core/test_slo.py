"""SLO fields of the instance, goodput in the validator and the metrics (kvopt.core.slo)."""

import json

import numpy as np
import pytest

from kvopt import Instance, InvalidInstanceError, Schedule, check_schedule, compute_metrics
from kvopt.core.slo import GoodputRule

BASE = {"memory": 30, "arrival": [0, 0, 1], "prompt": [1, 0, 2], "output": [1, 20, 3]}
SLO = {"slo_kind": ["deadline", "deadline", "stream"], "deadline": [20, 20, None],
       "ttft_slo": [None, None, 2], "tbt_slo": [None, None, 1]}


def make(**kw):
    return Instance(**{**BASE, **SLO, **kw})


@pytest.mark.parametrize("changes, field", [
    ({"slo_kind": ["deadline", "deadline", "chat"]}, "requests.slo_kind[2]"),
    ({"slo_kind": ["deadline", "deadline"]}, "requests.slo_kind"),
    ({"slo_kind": "deadline"}, "requests.slo_kind"),
    ({"slo_kind": None}, "requests.slo_kind"),
    ({"deadline": [20, None, None]}, "requests.deadline[1]"),
    ({"deadline": [20, 0, None]}, "requests.deadline[1]"),
    ({"deadline": [20, -3, None]}, "requests.deadline[1]"),
    ({"deadline": [20, 20, 5]}, "requests.deadline[2]"),
    ({"deadline": [20, "x", None]}, "requests.deadline[1]"),
    ({"deadline": [20, float("inf"), None]}, "requests.deadline[1]"),
    ({"deadline": [20, 20]}, "requests.deadline"),
    ({"ttft_slo": [None, None, None]}, "requests.ttft_slo[2]"),
    ({"ttft_slo": [None, None, -1]}, "requests.ttft_slo[2]"),
    ({"ttft_slo": [1, None, 2]}, "requests.ttft_slo[0]"),
    ({"tbt_slo": [None, None, 0]}, "requests.tbt_slo[2]"),
    ({"tbt_slo": [None, None, None]}, "requests.tbt_slo[2]"),
    ({"value": [0, None, None]}, "requests.value[0]"),
    ({"value": [True, None, None]}, "requests.value[0]"),
    ({"slo_kind": ["none", "deadline", "stream"], "deadline": [None, 20, None],
      "value": [3, None, None]}, "requests.value[0]"),
    ({"slo_kind": ["compound", "deadline", "stream"]}, "requests.group[0]"),
    ({"group": [0, None, None]}, "requests.group[0]"),
    ({"group": [None, 1.5, None]}, "requests.group[1]"),
    ({"stage": [1, None, None]}, "requests.stage[0]"),
    ({"slo_kind": ["compound", "compound", "stream"], "group": [0, 0, None],
      "deadline": [20, 21, None]}, "requests.deadline[1]"),
    ({"slo_kind": ["compound", "compound", "stream"], "group": [0, 0, None],
      "stage": [0, -1, None]}, "requests.stage[1]"),
    ({"max_batch": 0}, "max_batch"),
    ({"max_batch": 1.5}, "max_batch"),
    ({"goodput": {"rule": "graded"}}, "goodput.rule"),
    ({"goodput": {"input_weight": -1}}, "goodput.input_weight"),
    ({"goodput": {"penalty": "x"}}, "goodput.penalty"),
    ({"goodput": {"weights": 1}}, "goodput.weights"),
    ({"goodput": 3}, "goodput"),
])
def test_bad_slo_field_names_the_field(changes, field):
    with pytest.raises(InvalidInstanceError) as exc:
        make(**changes)
    assert exc.value.field == field, str(exc.value)


def test_slo_array_without_kind_is_rejected():
    with pytest.raises(InvalidInstanceError, match=r"requests\.slo_kind"):
        Instance(**BASE, deadline=[1, 2, 3])


def test_json_roundtrip_and_unknown_field(tmp_path):
    inst = make(max_batch=2, goodput={"rule": "soft", "output_weight": 8})
    path = tmp_path / "i.json"
    inst.save(path)
    doc = json.loads(path.read_text())
    assert doc["requests"]["deadline"] == [20, 20, None]
    assert doc["max_batch"] == 2 and doc["goodput"]["rule"] == "soft"
    back = Instance.from_dict(doc)
    assert back.to_dict() == doc
    assert back.sha256() == inst.sha256() != make().sha256()  # max_batch is hashed
    assert make().sha256() == Instance(**BASE).sha256()        # SLOs are not
    doc["requests"]["deadlines"] = doc["requests"].pop("deadline")
    with pytest.raises(InvalidInstanceError, match=r"requests\.deadlines"):
        Instance.from_dict(doc)


def test_take_keeps_slos():
    sub = make().take([2, 0])
    assert sub.slo.kind.tolist() == [1, 2]
    assert np.isnan(sub.slo.deadline[0]) and sub.slo.deadline[1] == 20


def _stream_loop(k, a, o, ttft, tbt):
    """Independent per-token loop: token j emitted at slot k + j."""
    return sum(1 for j in range(1, o + 1) if k + j - a <= ttft + (j - 1) * tbt)


def test_goodput_by_hand():
    inst = make()
    # A (1 token, prompt 1) at 0: done 1 <= 20 -> 2; B (20 tokens) at 1: done 21 > 20 -> 0;
    # stream C (a=1, s=2, o=3, ttft 2, tbt 1) at 1: tokens at 2, 3, 4 due 3, 4, 5 -> 3 + 2
    sched = Schedule.from_starts(inst, [0, 1, 1])
    rep = check_schedule(inst, sched)
    assert rep.ok
    g = rep.goodput
    assert g.goodput.tolist() == [2.0, 0.0, 5.0]
    assert g.met.tolist() == [True, False, True]
    assert g.token_goodput == 7.0 and g.request_goodput == 2
    assert g.attainment == {"stream": 1.0, "deadline": 0.5}
    # stream started at 3: tokens at 4, 5, 6 due 3, 4, 5 -> none on time, no input
    g2 = check_schedule(inst, Schedule.from_starts(inst, [0, 0, 3])).goodput
    assert g2.goodput.tolist() == [2.0, 20.0, 0.0]
    assert g2.on_time_tokens.tolist() == [1, 20, 0]


@pytest.mark.parametrize("tbt", [0.5, 1.0, 1.5, 3.0])
def test_stream_tokens_match_a_loop(tbt):
    rng = np.random.default_rng(3)
    for _ in range(30):
        o = int(rng.integers(1, 9))
        a = int(rng.integers(0, 4))
        ttft = float(rng.integers(1, 6))
        inst = Instance(memory=20, arrival=[a], prompt=[0], output=[o], slo_kind=["stream"],
                        ttft_slo=[ttft], tbt_slo=[tbt], goodput={"input_weight": 0})
        k = a + int(rng.integers(0, 6))
        rep = check_schedule(inst, Schedule.from_starts(inst, [k]))
        assert rep.goodput.token_goodput == _stream_loop(k, a, o, ttft, tbt)


def test_compound_all_or_nothing_and_value():
    inst = Instance(memory=20, arrival=[0, 2, 0], prompt=[0, 0, 0], output=[2, 2, 3],
                    slo_kind=["compound", "compound", "deadline"], group=[7, 7, None],
                    stage=[0, 1, None], deadline=[5, 5, 3], value=[None, None, 10])
    ok = check_schedule(inst, Schedule.from_starts(inst, [0, 3, 0])).goodput  # group done 5
    assert ok.goodput.tolist() == [2.0, 2.0, 10.0] and ok.request_goodput == 2
    late = check_schedule(inst, Schedule.from_starts(inst, [0, 4, 1])).goodput  # done 6, 4
    assert late.goodput.tolist() == [0.0, 0.0, 0.0] and late.attainment == {"deadline": 0.0,
                                                                           "compound": 0.0}


def test_soft_rule_discounts_instead_of_zeroing():
    inst = make(goodput={"rule": "soft"})
    g = check_schedule(inst, Schedule.from_starts(inst, [0, 5, 1])).goodput
    # B: R = 20, latency 25 > 20 -> 20 * 20/25
    assert g.goodput[1] == pytest.approx(16.0)
    assert g.goodput[0] == 2.0 and g.goodput[2] == 5.0  # on time: full gain
    assert g.met.tolist() == [True, False, True]


def test_batch_violation_and_claimed_goodput():
    inst = make(max_batch=1)
    rep = check_schedule(inst, Schedule.from_starts(inst, [0, 0, 21]))
    assert rep.kinds() == {"batch"}
    good = Schedule.from_starts(inst, [0, 1, 21], meta={"claimed_goodput": 7.0})
    rep = check_schedule(inst, good)
    assert rep.kinds() == {"goodput"}, str(rep)  # recomputed 2 + 0 + 0
    assert check_schedule(inst, good.with_meta(claimed_goodput=2.0)).ok


def test_metrics_report_goodput():
    inst = make()
    m = compute_metrics(inst, Schedule.from_starts(inst, [0, 1, 1]))
    assert (m.token_goodput, m.request_goodput) == (7.0, 2)
    assert m.slo_attainment == {"stream": 1.0, "deadline": 0.5} and m.goodput_rule == "binary"
    assert compute_metrics(Instance(**BASE), Schedule.from_starts(
        Instance(**BASE), [0, 1, 21])).token_goodput is None


def test_goodput_rule_weights():
    inst = make(goodput=GoodputRule(input_weight=0, output_weight=8))
    g = check_schedule(inst, Schedule.from_starts(inst, [0, 1, 1])).goodput
    assert g.goodput.tolist() == [8.0, 0.0, 24.0]


def test_second_unit_instance_uses_schedule_times():
    inst = Instance(memory=20, arrival=[0.0, 0.05], prompt=[1, 1], output=[3, 2],
                    time_unit="second", slo_kind=["stream", "deadline"],
                    ttft_slo=[0.15, None], tbt_slo=[0.1, None], deadline=[None, 0.3])
    times = [0.0, 0.1, 0.2, 0.3, 0.5]          # decision points 0..4
    sched = Schedule.from_starts(inst, [0, 1], times=times)
    g = check_schedule(inst, sched).goodput
    # stream: tokens at 0.1, 0.2, 0.3 due 0.15, 0.25, 0.35 -> all 3 (+ prompt 1)
    # deadline: done at times[3] = 0.3, latency 0.25 <= 0.3 -> 1 + 2
    assert g.goodput.tolist() == [4.0, 3.0] and g.request_goodput == 2
    slow = Schedule.from_starts(inst, [0, 2], times=times)
    assert check_schedule(inst, slow).goodput.goodput.tolist() == [4.0, 0.0]  # 0.45 > 0.3
