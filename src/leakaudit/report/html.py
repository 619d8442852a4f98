"""Render ``report.html`` from an audit's ``results.json`` and ``records.csv``.

The report reads result files only; it never trains or attacks. One
self-contained file: inline CSS and SVG plots, no scripts, no external fonts.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
from jinja2 import Environment, PackageLoader, select_autoescape

from ..exceptions import DataFileError
from .plots import histogram_svg, pdtp_vs_score_svg, roc_svg

__all__ = ["render_report", "write_report"]

_PROFILE_NOTES = {
    "smoke": "fastest, least power: few reference models and PDTP on a sample; for testing only",
    "standard": "the default trade of time for power",
    "thorough": "most power: more reference models, PDTP averaged over repeats",
}


def render_report(results: dict, records: pd.DataFrame | None) -> str:
    """HTML text of the report for one audit."""
    env = Environment(loader=PackageLoader("leakaudit.report", "templates"), autoescape=select_autoescape(["html", "j2"]))
    tmpl = env.get_template("report.html.j2")
    roc = pdtp_hist = pdtp_scatter = None
    riskiest, riskiest_cols = [], []
    thresholds = results["verdict"]["thresholds"]
    if records is not None and len(records):
        m = records["is_member"].to_numpy(int)
        curves = {name: (m, records[f"score_{name}"].to_numpy(float)) for name in results.get("membership", {})
                  if f"score_{name}" in records}
        if curves:
            roc = roc_svg(curves)
        if "pdtp" in records and records["pdtp"].notna().any():
            mem = records[records["is_member"] == 1]
            pd_ = mem["pdtp"].to_numpy(float)
            ok = np.isfinite(pd_)
            pdtp_hist = histogram_svg(pd_[ok], xlabel="PDTP (nats)", title="PDTP of training records",
                                      threshold=thresholds.get("max_dtp"))
            best = max(curves, key=lambda n: results["membership"][n]["auc"]) if curves else None
            if best:
                pdtp_scatter = pdtp_vs_score_svg(pd_[ok], mem[f"score_{best}"].to_numpy(float)[ok], score_name=best,
                                                 threshold=thresholds.get("max_dtp", 1.0))
        if "risk_rank" in records:
            top = records[records["is_member"] == 1].sort_values("risk_rank").head(15)
            riskiest_cols = ["record", "risk_rank"] + [c for c in top.columns if c == "pdtp" or c.startswith("score_")]
            riskiest = [{c: (f"{r[c]:.4g}" if isinstance(r[c], float) else r[c]) for c in riskiest_cols}
                        for _, r in top.iterrows()]
    dtp_records = _dtp_records(results.get("dtp") or {}, records)
    fprs = []
    for m_ in results.get("membership", {}).values():
        fprs = list(m_.get("tpr_at_fpr", {}).keys())
        break
    return tmpl.render(
        version=results.get("leakaudit_version"),
        created=results.get("created"),
        config=_Obj(results["config"]),
        data=_Obj(results["data"]),
        target=results["target"],
        verdict=_Obj(results["verdict"]),
        membership={k: _Obj(v) for k, v in results.get("membership", {}).items()},
        fprs=fprs,
        dtp=_Obj(results["dtp"]) if results.get("dtp") else None,
        attribute={k: _Obj(v) for k, v in results.get("attribute", {}).items()},
        property={k: _Obj(v) for k, v in results.get("property", {}).items()},
        mip=results.get("mip"),
        skipped=[_Obj(s) for s in results.get("skipped", [])],
        command=results.get("command", ""),
        timings=results.get("timings", {}),
        resources=results.get("resources", {}),
        settings=results.get("settings", {}),
        profile_note=_PROFILE_NOTES.get(results["config"].get("profile"), ""),
        roc_svg=roc,
        pdtp_hist_svg=pdtp_hist,
        pdtp_scatter_svg=pdtp_scatter,
        riskiest=riskiest,
        riskiest_cols=riskiest_cols,
        dtp_records=dtp_records,
    )


def _dtp_records(dtp: dict, records: pd.DataFrame | None, limit: int = 25) -> list[dict]:
    """Rows of the records the statistical DTP-1 rule re-measured, significant first, then by lower bound."""
    test = dtp.get("test")
    if not test or not test.get("records"):
        return []
    lira = None
    if records is not None and "score_lira" in records:
        mem = records[records["is_member"] == 1]
        lira = dict(zip(mem["record"].to_numpy(int), mem["score_lira"].to_numpy(float)))
    single = dict(zip(records[records["is_member"] == 1]["record"], records[records["is_member"] == 1]["pdtp"])) \
        if records is not None and "pdtp" in records else {}
    rows = [{"record": int(r), "pdtp": f"{single.get(r, float('nan')):.3f}", "mean": f"{m:.3f}", "lower": f"{lb:.3f}",
             "significant": bool(sig), "lira": f"{lira[r]:.2f}" if lira and r in lira else "-", "_key": (-sig, -lb)}
            for r, m, lb, sig in zip(test["records"], test["stage2_mean"], test["lower_bound"], test["significant"])]
    rows.sort(key=lambda d: d.pop("_key"))
    return rows[:limit]


class _Obj(dict):
    """A dict whose keys read as attributes in templates."""

    def __getattr__(self, k):
        try:
            v = self[k]
        except KeyError:
            raise AttributeError(k) from None
        return _Obj(v) if isinstance(v, dict) else v


def write_report(out_dir: str | Path) -> Path:
    """Read ``out_dir/results.json`` (and ``records.csv`` if present) and write ``out_dir/report.html``."""
    out_dir = Path(out_dir)
    res_path = out_dir / "results.json"
    if not res_path.is_file():
        raise DataFileError(f"no results.json in {out_dir}; run an audit first")
    results = json.loads(res_path.read_text())
    rec_path = out_dir / "records.csv"
    records = pd.read_csv(rec_path) if rec_path.is_file() else None
    html = render_report(results, records)
    path = out_dir / "report.html"
    tmp = out_dir / ".report.html.tmp"
    tmp.write_text(html)
    tmp.replace(path)
    return path
