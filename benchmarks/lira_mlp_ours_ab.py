"""Our side of RESULTS.md's lira_mlp rows, an older build of the MLP kernel against the default one (issue 66).

Each row's timed work of ``bench_lira_vs_sacroml.ours`` (``fit_reference_models`` with TorchMLP fast mode, all
shadows batched, then offline LiRA), the old build (the source built with DEFINITION, ``kernel_ab._mlp_builds``:
``-DLEAKAUDIT_SHARED_PREFIX=0`` the previous scatter, the default; ``-DLEAKAUDIT_VEC16=0`` the AVX-512 build's rows in
8-lane vectors) and the installed kernel alternating, ``REPS`` pairs after a warm-up pair; wall and CPU
seconds of each, the paired CPU ratios new / old, and whether both trained models giving the same LiRA scores. The
peer (SACRO-ML) is not run: the target is a scikit-learn MLP trained here with the row's seed for the epochs the
row's result file records, standing in for the peer driver's (the timed work does not depend on it).
Writes results/lira_mlp_ours_kernel_ab.json (with the definition: results/lira_mlp_ours_kernel_ab_<name>.json).

Usage: OMP_NUM_THREADS=1 .venv/bin/python benchmarks/lira_mlp_ours_ab.py [REPS [DEFINITION]]   (default 5,
       -DLEAKAUDIT_SHARED_PREFIX=0)
"""
import json
import re
import sys
import warnings
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parent))
import numpy as np
import _common as C
import bench_lira_vs_sacroml as L
from kernel_ab import _mlp_builds
from leakaudit.learners import _mlp_native
from sklearn.neural_network import MLPClassifier
definition = sys.argv[2] if len(sys.argv) > 2 else "-DLEAKAUDIT_SHARED_PREFIX=0"
libs = dict(zip(("old", "new"), _mlp_builds(definition, "old", "new").values()))
reps = int(sys.argv[1]) if len(sys.argv) > 1 else 5
rows = [("lira_vs_sacroml_mlp", 0, 100), ("lira_vs_sacroml_mlp_20shadows", 0, 20), ("lira_vs_sacroml_mlp_seed1", 1, 100),
        ("lira_vs_sacroml_mlp_seed2", 2, 100), ("lira_vs_sacroml_mlp_seed3", 3, 100)]
warnings.simplefilter("ignore")
load = _mlp_native.KERNEL.load
out = {"load_start": C.loadavg(), "old_build": definition, "variant": libs["new"].variant}
for tag, seed, K in rows:
    res = json.load(open(Path(__file__).parent / "results" / f"{tag}.json"))
    n_iter = int(re.search(r"(\d+) epochs", json.dumps(res)).group(1))
    Xtr, ytr, Xte, yte = L.split(1000, seed)
    tgt = MLPClassifier(hidden_layer_sizes=(64,), activation="tanh", random_state=seed, max_iter=n_iter).fit(Xtr, ytr)
    pt, pe = tgt.predict_proba(Xtr), tgt.predict_proba(Xte)
    r = {"n_iter": n_iter, "old": [], "new": []}
    scores = {}
    for rep in range(reps + 1):
        for name, lib in libs.items():
            _mlp_native.KERNEL.load = lambda lib=lib: lib  # noqa: E731
            t, s, _ = L.ours("mlp", Xtr, ytr, Xte, yte, pt, pe, K, seed, n_iter, 100, 1)
            if rep:
                r[name].append((t[0], t[1]))
            scores[name] = s
    r["scores_equal"] = bool(np.array_equal(scores["old"], scores["new"]))
    for name in libs:
        a = np.array(r[name]); r[name + "_min_wall"], r[name + "_min_cpu"] = a[:, 0].min(), a[:, 1].min()
        r[name + "_med_cpu"] = float(np.median(a[:, 1]))
    r["paired_cpu_ratio_median"] = float(np.median(np.array(r["new"])[:, 1] / np.array(r["old"])[:, 1]))
    print(tag, {k: (round(v, 3) if isinstance(v, float) else v) for k, v in r.items() if k not in ("old", "new")}, flush=True)
    out[tag] = r
_mlp_native.KERNEL.load = load
out["load_end"] = C.loadavg()
name = "" if definition == "-DLEAKAUDIT_SHARED_PREFIX=0" else "_" + definition.removeprefix("-D").split("=")[0].lower()
json.dump(out, open(Path(__file__).parent / "results" / f"lira_mlp_ours_kernel_ab{name}.json", "w"), indent=1)
