"""Which engine-cost structure: every candidate tried for issue 12's serving-engine layer, with
its leave-one-TP-out error on the calibration set and its error on the other set.

Each candidate adds non-negative terms to the GPU-time profiled models (``-gpu``), fitted by
least squares on relative errors (as :func:`kvopt.sim.steptime.fit.fit_engine_costs`, which
implements the shipped one, ``step + seq + ar (tp-1)``). Columns: LOTO = calibrate on two TP
degrees of the calibration set, score the third (mean of the three medians); out = calibrate on
all of it, score the other set (pooled median abs error, then TP 2 / 4 / 8).

Run from the repository root:
  python reports/steptime/engine_structures.py > reports/steptime/engine_structures.md
"""

import numpy as np
from scipy.optimize import lsq_linear

from kvopt.sim.steptime.measured import MEASUREMENT_SETS

L, HEADS = 80, 64
FEATURES = {
    "step": lambda tp, r: np.ones(len(r)),
    "seq": lambda tp, r: r.decode.astype(float),
    "ar (tp-1)": lambda tp, r: np.full(len(r), 2.0 * L * (tp - 1)),
    "ar log2(tp)": lambda tp, r: np.full(len(r), 2.0 * L * np.log2(tp)),
    "ar 1": lambda tp, r: np.full(len(r), 2.0 * L),
    "prompt": lambda tp, r: (r.prefill > 0).astype(float),
    "unfused attn": lambda tp, r: r.prefill_sq * L * HEADS / tp / 1e12,
}
CANDIDATES = [
    ["step"], ["step", "seq"], ["step", "seq", "ar 1"], ["step", "seq", "ar (tp-1)"],
    ["step", "seq", "ar log2(tp)"], ["seq", "ar (tp-1)"], ["step", "seq", "ar (tp-1)", "prompt"],
    ["step", "seq", "ar (tp-1)", "unfused attn"],
    ["step", "seq", "ar (tp-1)", "prompt", "unfused attn"],
]


def load(name):
    out = []
    for st in MEASUREMENT_SETS[name]().setups:
        out.append((st.tp, st.rows, st.rows.predict_ms(st.gpu_models["profiled"]())))
    return out


def design(data, feats):
    A, b, X = [], [], []
    for tp, r, gpu in data:
        x = np.column_stack([FEATURES[f](tp, r) for f in feats]) * r.nsteps[:, None]
        A.append(x / r.ms[:, None])
        b.append(1.0 - gpu / r.ms)
        X.append(x)
    return np.vstack(A), np.concatenate(b), X


def fit(data, feats):
    A, b, _ = design(data, feats)
    norm = np.linalg.norm(A, axis=0)
    return lsq_linear(A / norm, b, bounds=(0, np.inf), method="bvls", tol=1e-14).x / norm


def score(data, feats, x):
    _, _, X = design(data, feats)
    errs = [np.abs((gpu + xx @ x) / r.ms - 1) for (tp, r, gpu), xx in zip(data, X, strict=True)]
    return float(np.median(np.concatenate(errs))), [float(np.median(e)) for e in errs]


def main():
    sets = {"splitwise-h100": load("splitwise-h100"), "splitwise-a100": load("splitwise-a100")}
    print("Engine-cost structures tried (profiled GPU-time models + the listed terms).\n"
          "Command: `python reports/steptime/engine_structures.py`\n")
    print("| terms | H100: LOTO | H100 -> A100 (out) | A100: LOTO | A100 -> H100 (out) |")
    print("|---|---|---|---|---|")
    for feats in CANDIDATES:
        cells = [" + ".join(feats)]
        for cal, test in (("splitwise-h100", "splitwise-a100"),
                          ("splitwise-a100", "splitwise-h100")):
            tr = sets[cal]
            loto = np.mean([score([tr[k]], feats, fit([d for i, d in enumerate(tr) if i != k],
                                                      feats))[0] for k in range(len(tr))])
            m, per = score(sets[test], feats, fit(tr, feats))
            cells += [f"{100 * loto:.1f}%",
                      f"{100 * m:.1f}% ({' / '.join(f'{100 * v:.1f}' for v in per)})"]
        print("| " + " | ".join(cells) + " |")


if __name__ == "__main__":
    import argparse

    argparse.ArgumentParser(description=__doc__,  # no options: --help says what it prints
                            formatter_class=argparse.RawDescriptionHelpFormatter).parse_args()
    main()
