"""Before/after table for issue 12: the step-time models of commit b09c6d9 (pairwise-NVLink
all-reduce at TP 4, cumulative-max profiles, no H100 / TP-8 models) against the current ones,
on the same measurement rows (kvopt.sim.steptime.fit.validate with a model override).

Run from the repository root:
  python reports/steptime/before_after.py > reports/steptime/before_after.md
"""

import importlib.util
import subprocess
import sys
import tempfile
from pathlib import Path

from kvopt.report.steptime import _abs_pct, _pct
from kvopt.sim.steptime.fit import validate

BEFORE = "b09c6d9"


def old_module():
    src = subprocess.run(["git", "show", f"{BEFORE}:kvopt/sim/step_time.py"], check=True,
                         capture_output=True, text=True).stdout
    path = Path(tempfile.mkdtemp()) / "old_step_time.py"
    path.write_text(src)
    spec = importlib.util.spec_from_file_location("old_step_time", path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules["old_step_time"] = mod
    spec.loader.exec_module(mod)
    mod.PROFILE_DIR = Path("kvopt/data/profiles")      # the old code read files beside itself
    return mod


def main() -> None:
    old = old_module()

    def before(setup):
        name = setup.label.replace(" llama2-", "-llama2-").replace(" tp", "-tp")
        if name in old.STEP_TIME_MODELS and "shard" not in name:
            return {name: old.STEP_TIME_MODELS[name]}
        return {}

    b = validate(["splitwise-a100"], models=before)
    a = validate(["splitwise-a100"])
    print(f"Profiled A100 models before (commit {BEFORE}) and after, against Splitwise's "
          f"A100 Llama-2-70B runs: after = the GPU-time `-gpu` model and the serving-engine "
          f"model (engine costs calibrated on the Splitwise H100 set only, so these A100 rows "
          f"are out-of-sample).\nCommand: `python reports/steptime/before_after.py`\n")
    print("| setup | kind | n | before: median abs | before: worst | after, GPU time: median "
          "abs | after, GPU time: worst | after, engine: median abs | after, engine: worst |")
    print("|---|---|---|---|---|---|---|---|---|")
    for sb, sa in zip(b["sets"][0]["setups"], a["sets"][0]["setups"], strict=True):
        fams = {m["family"]: m for m in sa["models"]}
        ma, me = fams["profiled-gpu"], fams["profiled-engine"]
        mb = sb["models"][0] if sb["models"] else None
        for kind, ea in ma["default"].items():
            eb = mb["default"][kind] if mb else None
            ee = me["default"][kind]
            cells = [sa["setup"], kind, str(ea["n"]),
                     _abs_pct(eb["median_abs"]) if eb else "no model",
                     _pct(eb["worst"]) if eb else "-", _abs_pct(ea["median_abs"]),
                     _pct(ea["worst"]), _abs_pct(ee["median_abs"]), _pct(ee["worst"])]
            print("| " + " | ".join(cells) + " |")
    for name, doc in (("GPU time", a["sets"][0]["pooled"]["profiled-gpu"]),
                      ("engine", a["sets"][0]["pooled"]["profiled-engine"])):
        e = doc["default"]["all"]
        print(f"\nAll A100 rows, after ({name}): median abs {_abs_pct(e['median_abs'])}, "
              f"worst {_pct(e['worst'])} (n = {e['n']}).")

if __name__ == "__main__":
    import argparse

    argparse.ArgumentParser(description=__doc__,  # no options: --help says what it prints
                            formatter_class=argparse.RawDescriptionHelpFormatter).parse_args()
    main()
