"""Issue 65: the independent oracle's numbers (benchmarks/results/long_table2_oracle/*.json) beside leakaudit's stored
run of long-dtp-correlation (docs/reproduction/long-dtp-correlation.json) and the paper's Table 2 (NB-, LR- and
NN-Adult).

Reads the two JSON files only (imports nothing from leakaudit). The two runs draw different D's, targets and halves
(each its own seeds 0-4), so they agree when their seed means agree up to seed-to-seed noise: the table gives each
mean with its 95% t-interval over seeds, and the difference of the means with a Welch 95% interval; 'agree' when
that interval holds 0.

    python benchmarks/long_table2_oracle_compare.py > benchmarks/results/long_table2_oracle/compare.md
    python benchmarks/long_table2_oracle_compare.py --side-by-side lmt_per_target_t25_i20 \
        simplelogistic_per_target_t25_i20 lr_per_target_t25_i20   # oracle runs beside the paper's LR-Adult row
"""

import argparse
import json
from pathlib import Path

import numpy as np
from scipy import stats

HERE = Path(__file__).resolve().parent
ORACLE = HERE / "results" / "long_table2_oracle"
STORED = HERE.parent / "docs" / "reproduction" / "long-dtp-correlation.json"

PAPER = {
    "NB": {"train_acc": 0.8453, "test_acc": 0.8410, "attack_acc": 0.5128, "attack_prec": 0.5876,
           "attack_recall": 0.1027, "attack_f1": 0.1748, "avg_pdtp": 0.0299, "pearson_r": 0.5166},
    "LR": {"train_acc": 0.8711, "test_acc": 0.8536, "attack_acc": 0.5134, "attack_prec": 0.5130,
           "attack_recall": 0.3818, "attack_f1": 0.4378, "avg_pdtp": 0.1460, "pearson_r": -0.0008},
    "NN": {"train_acc": 0.8555, "test_acc": 0.8566, "attack_acc": 0.5340, "attack_prec": 0.5311,
           "attack_recall": 0.4402, "attack_f1": 0.4356, "avg_pdtp": 0.5847, "pearson_r": 0.4588},
}
LEAK_ROW = {"train_acc": "train accuracy", "test_acc": "test accuracy", "attack_acc": "distance-attack accuracy",
            "attack_prec": "distance-attack precision", "attack_recall": "distance-attack recall",
            "attack_f1": "distance-attack f1", "avg_pdtp": "avg PDTP",
            "pearson_r": "Pearson r (avg PDTP vs per-target accuracy)", "max_target_acc": "max per-target accuracy",
            "sd_target_acc": "sd of per-target accuracy", "targets_pdtp_gt_1": "targets with avg PDTP > 1"}
VARIANT = "{m}-Adult, 100 iterations, shadow models trained once per target and reused by its every attack: "
VARIANT_ROW = {"pearson_r": "Pearson r", "max_target_acc": "max per-target accuracy",
               "sd_target_acc": "sd of per-target accuracy", "attack_recall": "distance-attack recall"}

# (label, oracle tag, leakaudit model, leakaudit row template)
SETTINGS = [
    ("NB-Adult, fresh shadow models per attack", "nb_per_attack", "NB", "{m}-Adult {row}", LEAK_ROW),
    ("NB-Adult, shadow models once per target", "nb_per_target", "NB", VARIANT + "{row}", VARIANT_ROW),
    ("NB-Adult, fresh shadow models, in-models NOT paired with out-models (diagnostic)", "nb_per_attack_unpaired",
     "NB", "{m}-Adult {row}", LEAK_ROW),
    ("LR-Adult (L2, C = 1), shadow models once per target", "lr_per_target", "LR", "{m}-Adult {row}", LEAK_ROW),
    # oracle only, at the paper's 100 targets x 100 iterations: Weka's SimpleLogistic and LMT (Weka-exact)
    ("LR-Adult as Weka's SimpleLogistic (oracle only), shadow models once per target",
     "simplelogistic_per_target_weka", "LR", None, {}),
    ("LR-Adult as Weka's LMT (oracle only), shadow models once per target", "lmt_per_target", "LR", None, {}),
    ("NN-Adult (5 epochs), shadow models once per target", "nn_5ep_per_target", "NN", "{m}-Adult {row}", LEAK_ROW),
] + [  # oracle only: 25 targets x 20 iterations (not the paper's 100 x 100), the Weka-exact LogitBoost
    (f"LR-Adult as {name} (oracle only), 25 targets x 20 iterations, shadow models once per target",
     f"{tag}_per_target_t25_i20", "LR", None, {})
    for name, tag in (("Weka's LMT", "lmt"), ("Weka's SimpleLogistic", "simplelogistic"), ("L2, C = 1", "lr"))
]


def ci(v):
    v = np.asarray(v, float)
    m = v.mean()
    if len(v) < 2:
        return m, np.nan, np.nan
    h = stats.t.ppf(0.975, len(v) - 1) * v.std(ddof=1) / np.sqrt(len(v))
    return m, m - h, m + h


def welch(a, b):
    a, b = np.asarray(a, float), np.asarray(b, float)
    if len(a) < 2 or len(b) < 2:
        return np.nan, np.nan, np.nan
    va, vb = a.var(ddof=1) / len(a), b.var(ddof=1) / len(b)
    d = a.mean() - b.mean()
    se = np.sqrt(va + vb)
    if se == 0:
        return d, d, d
    df = (va + vb) ** 2 / (va ** 2 / (len(a) - 1) + vb ** 2 / (len(b) - 1))
    h = stats.t.ppf(0.975, df) * se
    return d, d - h, d + h


def fmt(x):
    return "—" if x is None or not np.isfinite(x) else f"{x:.4f}"


def side_by_side(tags, model="LR"):
    """A markdown table: each oracle run's seed mean [95% t-interval] beside the paper's Table 2 row."""
    runs = [[json.loads(f.read_text()) for f in sorted(ORACLE.glob(f"{tag}_seed*.json"))] for tag in tags]
    out = ["| quantity | paper | " + " | ".join(f"{t} ({len(r)} seeds)" for t, r in zip(tags, runs)) + " |",
           "|---|---:|" + "---|" * len(tags)]
    for k in ["train_acc", "test_acc", "attack_acc", "attack_prec", "attack_recall", "attack_f1", "avg_pdtp",
              "pearson_r", "max_target_acc", "targets_pdtp_gt_1"]:
        cells = []
        for res in runs:
            m, lo, hi = ci([r["metrics"][k] for r in res]) if res else (np.nan,) * 3
            cells.append(f"{fmt(m)} [{fmt(lo)}, {fmt(hi)}]")
        out.append(f"| {k} | {fmt(PAPER[model].get(k))} | " + " | ".join(cells) + " |")
    return "\n".join(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--side-by-side", nargs="+", metavar="TAG", help="oracle run tags to set beside the paper")
    args = ap.parse_args()
    if args.side_by_side:
        print(side_by_side(args.side_by_side))
        return
    stored = {r["quantity"]: r for r in json.loads(STORED.read_text())["rows"]}
    points = {q.split(":")[0]: r["points"] for q, r in stored.items() if "(figure data)" in q}
    out = ["| setting | quantity | paper | leakaudit (stored) mean [95% t] | oracle mean [95% t] | "
           "oracle - leakaudit [Welch 95%] | verdict |", "|---|---|---:|---|---|---|---|"]
    for label, tag, m, tmpl, rows in SETTINGS:
        files = sorted(ORACLE.glob(f"{tag}_seed*.json"))
        res = [json.loads(f.read_text()) for f in files]
        if not res:
            continue
        label = f"{label} ({len(res)} seeds)"
        keys = ["train_acc", "test_acc", "attack_acc", "attack_prec", "attack_recall", "attack_f1", "avg_pdtp",
                "pearson_r", "max_target_acc", "sd_target_acc", "targets_pdtp_gt_1"]
        for k in keys:
            ov = [r["metrics"][k] for r in res]
            lv = None
            if tmpl and k in rows:
                q = tmpl.format(m=m, row=rows[k])
                lv = [x for x in stored[q]["values"] if x is not None] if q in stored else None
            if tmpl and k not in rows:
                continue
            om, olo, ohi = ci(ov)
            pv = PAPER[m].get(k) if k in PAPER[m] else None
            if lv:
                lm, llo, lhi = ci(lv)
                d, dlo, dhi = welch(ov, lv)
                verdict = "agree" if dlo <= 0 <= dhi else "DIFFER"
                ls = f"{fmt(lm)} [{fmt(llo)}, {fmt(lhi)}]"
                ds = f"{d:+.4f} [{dlo:+.4f}, {dhi:+.4f}]"
            else:
                ls, ds, verdict = "—", "—", "—"
            out.append(f"| {label} | {k} | {fmt(pv) if pv is not None else '—'} | {ls} | "
                       f"{fmt(om)} [{fmt(olo)}, {fmt(ohi)}] | {ds} | {verdict} |")
        # shapes of the per-target points: share of targets at PDTP 0 and at accuracy exactly 0.5
        if tmpl is not None and tag in ("nb_per_attack", "lr_per_target", "nn_5ep_per_target"):
            lp = points.get(f"{m}-Adult")
            o_zero = [np.mean(np.array(r["metrics"]["per_target"]["avg_pdtp"]) == 0) for r in res]
            o_half = [np.mean(np.array(r["metrics"]["per_target"]["accuracy"]) == 0.5) for r in res]
            if lp:
                l_zero = [np.mean([p[0] == 0 for p in pts]) for _, pts in lp]
                l_half = [np.mean([p[1] == 0.5 for p in pts]) for _, pts in lp]
                for name, ov, lv in (("share of targets with avg PDTP = 0", o_zero, l_zero),
                                     ("share of targets with accuracy = 0.5", o_half, l_half)):
                    om, olo, ohi = ci(ov)
                    lm, llo, lhi = ci(lv)
                    d, dlo, dhi = welch(ov, lv)
                    verdict = "agree" if dlo <= 0 <= dhi else "DIFFER"
                    out.append(f"| {label} | {name} | — | {fmt(lm)} [{fmt(llo)}, {fmt(lhi)}] | "
                               f"{fmt(om)} [{fmt(olo)}, {fmt(ohi)}] | {d:+.4f} [{dlo:+.4f}, {dhi:+.4f}] | {verdict} |")
    print("\n".join(out))


if __name__ == "__main__":
    main()
