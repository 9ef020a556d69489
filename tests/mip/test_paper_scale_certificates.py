"""The committed paper-scale certificates (reports/mip/paper_scale/, written by
benchmarks/mip_paper_scale.py): every best schedule is valid for its instance (independent
checker) and beats MC-SF; on Model 1 MC-SF / best averages far above seed 001's 1.005."""

import statistics
from pathlib import Path

from kvopt import check_schedule, load_instance, load_schedule
from kvopt.core.mcsf import mcsf_starts

CERTS = Path(__file__).resolve().parents[2] / "reports" / "mip" / "paper_scale"


def _pairs():
    return sorted((p.with_name(p.name.replace(".best.json", ".json")), p)
                  for p in CERTS.glob("*.best.json"))


def test_every_certificate_is_valid_and_beats_mcsf():
    pairs = _pairs()
    assert len(pairs) >= 40
    ratios: dict[str, list[float]] = {"model1": [], "model2": []}
    for inst_path, sched_path in pairs:
        inst = load_instance(inst_path)
        assert inst.n >= 40 or inst_path.name.startswith("model2"), inst_path
        rep = check_schedule(inst, load_schedule(sched_path))
        assert rep.ok, (sched_path, str(rep))
        mcsf = inst.tel_of_starts(mcsf_starts(inst))
        assert rep.objective < mcsf, sched_path
        ratios[inst_path.name.split("-")[0]].append(mcsf / rep.objective)
    assert statistics.fmean(ratios["model1"]) > 1.005
    assert statistics.fmean(ratios["model2"]) > 1.0


def test_report_matches_the_certificates():
    """reports/mip/paper_scale.json (the benchmark's record) states each certificate's value."""
    import json

    doc = json.loads((CERTS.parent / "paper_scale.json").read_text())
    for r in doc["records"]:
        name = f"{r['kind']}-seed{r['seed']}"
        inst = load_instance(CERTS / f"{name}.json")
        rep = check_schedule(inst, load_schedule(CERTS / f"{name}.best.json"))
        assert rep.objective == r["best"], name
        assert r["best"] <= min(r["improve"], r["ref"]), name
