"""Why a boosted calibration audit's DTP-1 check withholds its model: the records behind it, looked into.

For one ``--set boosted`` case audited with its folder kept (``calibration.py --keep``, or
``_calibration_cases.run_case(case, dir, keep=True)``), reads the DTP-1 test of its ``results.json`` (each
re-measured record's mean bin-aware ln ratio over the paired repeats, its sd and lower confidence bound, and the test
of the given model's outputs), rebuilds the case's members and model as the calibration does, and, for a learner whose
seed does not matter (LightGBM without sampling: its leave-one-out is exact), retrains each record's leave-one-out
model: the probabilities before and after (Long et al.'s bins of width 0.01), the plain and bin-aware ln ratios, how
many trees changed and the first split that moved (feature, thresholds, the record's own value and how many members
share it). For LightGBM it retrains the same leave-one-out once more on the full members' histogram bins
(``lightgbm.Dataset(reference=...)``): whether the change comes from the bins LightGBM draws from its training data.

Writes (merges) ``benchmarks/results/calibration_boosted_dtp.json``, one entry per case id, which
``calibration.py``'s boosted section reads ("Why the benign boosted audits miss").

Usage:
    .venv/bin/python benchmarks/boosted_dtp_records.py CASE_ID AUDIT_DIR [--out PATH]
"""

from __future__ import annotations

import argparse
import json
import sys
import warnings
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import _calibration_cases as K  # noqa: E402

OUT = HERE / "results" / "calibration_boosted_dtp.json"


def _splits(booster) -> list[list[tuple]]:
    """Each tree's splits (feature, threshold), depth first, of a LightGBM booster."""
    out = []
    for t in booster.dump_model()["tree_info"]:
        s, stack = [], [t["tree_structure"]]
        while stack:
            n = stack.pop()
            if "split_feature" in n:
                s.append((int(n["split_feature"]), float(n["threshold"])))
                stack += [n["left_child"], n["right_child"]]
        out.append(s)
    return out


def test_summary(results: dict) -> dict:
    """The DTP-1 test of an audit's results.json: the check, and each re-measured record above the threshold."""
    dtp = results["dtp"]
    t = dtp.get("test") or {}
    check = next(c for c in results["verdict"]["checks"] if c["id"] == "dtp.dtp1")
    recs = [{"record": r, "stage1": s1, "mean": m, "sd": sd, "lower_bound": lb, "p_adjusted": p, "significant": sig}
            for r, s1, m, sd, lb, p, sig in zip(t.get("records", []), t.get("stage1_values", []) or [None] * 999,
                                                t.get("stage2_mean", []), t.get("sd", []), t.get("lower_bound", []),
                                                t.get("p_adjusted", []), t.get("significant", []))
            if m > t.get("threshold", 1.0) or sig]
    return {"status": check["status"], "describes": check.get("describes"), "value": check.get("value"),
            "n_records_measured": dtp["n_records"], "n_above_stage1": dtp["n_above"], "n_tested": len(t.get("records", [])),
            "n_repeats": t.get("n_repeats"), "confidence": t.get("confidence"), "method": t.get("method"),
            "n_significant": dtp.get("n_significant"), "retrains_exactly": dtp.get("retrains_exactly", False),
            "confirmation": dtp.get("confirmation"), "records": recs, "outcome": results["verdict"]["outcome"]}


#: LightGBM's parameters that decide a Dataset's histogram bins
_BINNING = ("max_bin", "min_data_in_bin", "bin_construct_sample_cnt", "use_missing", "zero_as_missing",
            "feature_pre_filter", "enable_bundle", "max_bin_by_feature", "forcedbins_filename")


def exact_loo(case: K.Case, rows: list[int]) -> tuple[list[dict], list[str]]:
    """Each member row's (1 = the first after the header) exact leave-one-out, retrained by the recipe's learner; and
    the class names."""
    import lightgbm as lgb

    from leakaudit.audit.inputs.boosted import boosted_from_memory
    from leakaudit.audit.config import make_config
    from leakaudit.audit.inputs.data import prepare_data
    from leakaudit.audit.inputs.target import boosted_target
    from leakaudit.dtp.significance import bin_aware_log_ratio

    df, label, sensitive = K.load_table(case.dataset)
    mem, non, _own, _pop, _info = K._split(case, df, label)
    import tempfile

    with tempfile.TemporaryDirectory() as d:
        mem.to_csv(Path(d) / "members.csv", index=False)
        non.to_csv(Path(d) / "nonmembers.csv", index=False)
        data = prepare_data(make_config(train=Path(d) / "members.csv", test=Path(d) / "nonmembers.csv", label=label,
                                        sensitive=sensitive or None, profile=case.profile, seed=case.seed))
    X, y = data.X_mem, data.y_mem
    target = boosted_target(data, boosted_from_memory(K._boosted_model(case, X, y)), model_input="encoded")
    learner = target.learner
    full = learner.fit(X, y, random_state=0, n_classes=data.n_classes)
    if not np.allclose(full.predict_proba(X), target.probs_mem, rtol=0, atol=1e-9):
        raise RuntimeError(f"{case.id}: the recipe does not retrain the given model")
    names = list(data.encoder.feature_names_out)
    S_full = _splits(full.booster_)
    params = learner._train_params(0, data.n_classes)
    # the recipe's own binning parameters (min_data_in_bin, max_bin, ...) build the bins: a Dataset's bins are fixed
    # when it is constructed, whatever lgb.train is given later
    ds_params = {"verbosity": -1, **{k: v for k, v in params.items() if k in _BINNING}}
    full_ds = lgb.Dataset(X, label=y.astype(float), params=ds_params, free_raw_data=False).construct()
    b_full = lgb.train(params, full_ds, num_boost_round=learner.n_rounds)
    out = []
    for r in rows:
        i = r - 1
        keep = np.delete(np.arange(len(y)), i)
        loo = learner.fit(X[keep], y[keep], random_state=0, n_classes=data.n_classes)
        pf, pl = full.predict_proba(X[i:i + 1])[0], loo.predict_proba(X[i:i + 1])[0]
        S = _splits(loo.booster_)
        changed = [t for t in range(len(S_full)) if S_full[t] != S[t]]
        first = None
        if changed:
            t = changed[0]
            (fa, ta), (fb, tb) = next((a, b) for a, b in zip(S_full[t], S[t]) if a != b)
            col = names[fa].split("=")[0]
            first = {"tree": t, "feature": names[fa], "threshold_full": ta, "feature_loo": names[fb],
                     "threshold_loo": tb, "record_value_encoded": float(X[i, fa]),
                     "record_value": mem.iloc[i][col].item() if col in mem.columns else None,
                     "members_with_that_value": int(np.sum(X[:, fa] == X[i, fa]))}
        ds = lgb.Dataset(X[keep], label=y[keep].astype(float), reference=full_ds, params=ds_params)
        p_fixed = lgb.train(params, ds, num_boost_round=learner.n_rounds).predict(X[i:i + 1])[0]
        pf_fixed = b_full.predict(X[i:i + 1])[0]
        out.append({"row": r, "label": data.class_names[int(y[i])], "p_full": pf.tolist(), "p_loo": pl.tolist(),
                    "bins_full": np.floor(pf / 0.01).astype(int).tolist(),
                    "bins_loo": np.floor(pl / 0.01).astype(int).tolist(),
                    "ln_ratio": np.log(pf / pl).tolist(), "bin_aware": bin_aware_log_ratio(pf, pl).tolist(),
                    "trees_changed": len(changed), "n_trees": len(S_full), "first_change": first,
                    "fixed_bins": {"p_full": [1 - pf_fixed, pf_fixed], "p_loo": [1 - p_fixed, p_fixed],
                                   "bin_aware": bin_aware_log_ratio([1 - pf_fixed, pf_fixed],
                                                                    [1 - p_fixed, p_fixed]).tolist()}})
    return out, list(data.class_names)


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("case", help="a --set boosted or --set lightgbm-bins case id")
    ap.add_argument("audit", type=Path, help="its audit folder (holding results.json)")
    ap.add_argument("--out", type=Path, default=OUT)
    a = ap.parse_args(argv)
    warnings.filterwarnings("ignore")
    case = next(c for c in K.boosted_cases(12, 5, 5) + K.lightgbm_bins_cases(5) if c.id == a.case)
    results = json.loads((a.audit / "results.json").read_text())
    entry = {"case": case.id, "description": case.description, **test_summary(results)}
    if case.family == "lightgbm":
        rows = [int(r["record"].rsplit("row ", 1)[1]) for r in entry["records"]]
        entry["leave_one_out"], entry["classes"] = exact_loo(case, rows)
    merged = json.loads(a.out.read_text()) if a.out.exists() else {}
    merged[case.id] = entry
    a.out.write_text(json.dumps(merged, indent=1) + "\n")
    print(json.dumps(entry, indent=1)[:3000])
    return entry


if __name__ == "__main__":
    main()
