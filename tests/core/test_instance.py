import json

import numpy as np
import pytest

from kvopt import Instance, InvalidInstanceError, load_instance

GOOD = {"schema": "kvopt.instance", "schema_version": 1, "memory": 40,
        "requests": {"arrival": [0, 0, 3], "prompt": [2, 1, 4], "output": [5, 3, 2]}}


def doc(**changes):
    d = json.loads(json.dumps(GOOD))
    for key, value in changes.items():
        target = d["requests"] if key in ("arrival", "prompt", "output", "pred_lower",
                                          "pred_upper", "pred_point") else d
        if value is KeyError:
            del target[key]
        else:
            target[key] = value
    return d


def test_good_instance_roundtrip(tmp_path):
    inst = Instance.from_dict(GOOD)
    assert inst.n == 3 and inst.memory == 40
    p = tmp_path / "i.json"
    inst.save(p)
    again = load_instance(p)
    assert again.sha256() == inst.sha256()
    assert again.to_dict() == inst.to_dict()


@pytest.mark.parametrize(
    ("changes", "match"),
    [
        ({"schema": KeyError}, r"'schema': missing"),
        ({"schema": "other"}, r"'schema': expected 'kvopt.instance'"),
        ({"schema_version": 2}, r"'schema_version': unsupported version 2"),
        ({"schema_version": KeyError}, r"'schema_version': missing"),
        ({"memory": KeyError}, r"'memory': missing"),
        ({"memory": -3}, r"'memory': must be a positive integer"),
        ({"memory": 12.5}, r"'memory': must be a positive integer"),
        ({"requests": KeyError}, r"'requests': missing"),
        ({"output": KeyError}, r"'requests.output': missing"),
        ({"prompt": [2, -1, 4]}, r"'requests.prompt\[1\]': must be >= 0, got -1"),
        ({"output": [5, 0, 2]}, r"'requests.output\[1\]': must be >= 1, got 0"),
        ({"output": [5, 2.5, 2]}, r"'requests.output\[1\]': must be an integer, got 2.5"),
        ({"output": [5, "x", 2]}, r"'requests.output\[1\]': must be an integer"),
        ({"output": [5, float("nan"), 2]}, r"'requests.output\[1\]': must be finite"),
        ({"arrival": [0, float("inf"), 2]}, r"'requests.arrival\[1\]': must be finite"),
        ({"output": [5, 3]}, r"'requests.output': has length 2 but arrival has length 3"),
        ({"arrival": [], "prompt": [], "output": []}, r"'requests': empty instance"),
        ({"output": [5, 3, 37]}, r"'requests.output\[2\]': impossible request: prompt \+ output"),
        ({"pred_lower": [1, 5, 1], "pred_upper": [2, 4, 3]},
         r"'requests.pred_lower\[1\]': pred_lower = 5 is greater than pred_upper = 4"),
        ({"pred_lower": [1, 1, 1]}, r"'requests.pred_upper': interval predictions need both"),
        ({"pred_point": [1.0, -2.0, 1.0]}, r"'requests.pred_point\[1\]': must be > 0"),
        ({"time_unit": "hour"}, r"'time_unit': must be one of"),
        ({"colour": "red"}, r"'colour': unknown top-level field"),
    ],
)
def test_bad_input_names_the_field(changes, match):
    with pytest.raises(InvalidInstanceError, match=match):
        Instance.from_dict(doc(**changes))


def test_unreadable_file(tmp_path):
    with pytest.raises(InvalidInstanceError, match=r"'path': cannot read"):
        load_instance(tmp_path / "missing.json")
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(InvalidInstanceError, match=r"'path': .* is not valid JSON"):
        load_instance(bad)


def test_arrays_are_read_only():
    inst = Instance.from_dict(GOOD)
    with pytest.raises(ValueError, match="read-only"):
        inst.output[0] = 9


def test_second_unit_takes_float_arrivals():
    inst = Instance(memory=100, arrival=[0.0, 0.25], prompt=[3, 4], output=[5, 6],
                    time_unit="second")
    assert inst.arrival.dtype == np.float64
    with pytest.raises(InvalidInstanceError, match=r"'requests.arrival\[1\]': must be an integer"):
        Instance(memory=100, arrival=[0, 0.25], prompt=[3, 4], output=[5, 6])


def test_trace_csv(tmp_path):
    p = tmp_path / "t.csv"
    p.write_text("arrived_at,num_prefill_tokens,num_decode_tokens\n5.0,10,3\n5.5,20,4\n")
    inst = load_instance(p, memory=100)
    assert inst.time_unit == "second"
    assert inst.arrival.tolist() == [0.0, 0.5]
    assert inst.prompt.tolist() == [10, 20]
    p.write_text("arrived_at,num_prefill_tokens\n5.0,10\n")
    with pytest.raises(InvalidInstanceError, match=r"'num_decode_tokens': missing column"):
        load_instance(p)
    p.write_text("arrived_at,num_prefill_tokens,num_decode_tokens\n5.0,10,300\n")
    with pytest.raises(InvalidInstanceError, match=r"impossible request"):
        load_instance(p, memory=100)


def test_shipped_traces_load():
    conv = load_instance("instances/traces/azure_conv_2023.csv")
    code = load_instance("instances/traces/azure_code_2023.csv")
    assert conv.n == 19366 and code.n == 8819
    assert conv.memory == 16492
    assert np.all(np.diff(conv.arrival) >= 0)
