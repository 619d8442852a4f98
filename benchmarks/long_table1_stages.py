"""Where long-table1's time goes, per stage, in CPU seconds, at the full profile's settings on fewer targets.

Runs the reproduction's own code for one dataset and seed (``reproduce.long_membership._long_rows``, hence
``membership.protocols.long_protocol`` and ``_avg_pdtp``) with the full profile's settings (|D| = 2,000, 100
iterations x 2 target models, M = 20 untargeted shadow models, 5 targeted shadow pairs per target, 10 PDTP
measurements, 30 epochs) except the number of targets (``--targets``, default 10 instead of 100; PDTP is measured
for the same targets). Stage clocks are wrapped around the functions each stage calls; a clock counts the process's
CPU time (every thread of it) and the wall time spent in its stage, less what nested clocks count.

Stages, and how each is projected to the full profile (fixed; with the targets; with the PDTP models):

- data: make_purchase_like / supermarket_clusters (k-means). Fixed.
- target models: the protocol's first ``predict_many``, 2 x iterations models. Fixed.
- untargeted shadow models: its second ``predict_many``, M models. Fixed.
- attack model: ``ShadowModelAttack.fit`` (Long's Algorithm 1 and the attack network). Fixed.
- untargeted scoring: ``ShadowModelAttack.score``, once per target model. Targets.
- targeted shadow models: ``predict_many`` inside ``train_targeted_shadows``, 10 per target. Targets.
- targeted shadows (other): the rest of ``train_targeted_shadows`` (subset draws). Targets.
- targeted scoring: ``FrequencyAttack.score`` and ``DistanceAttack.score``, once per target model. Targets.
- protocol (other): the rest of ``long_protocol`` (halves, truth, summaries). Targets.
- PDTP models: ``predict_many`` inside ``_avg_pdtp``, A(D_i) and A(D_i \\ {t}). PDTP models.
- PDTP (other): the rest of ``_avg_pdtp``. PDTP models.
- rows: the rest of ``_long_rows`` (correlations, claims, rows). Targets.

Stages that grow with the targets are projected by 100 / ``--targets`` (an upper bound where a call has a fixed
part); PDTP stages by the ratio of PDTP models, 10 x (2 + 100) = 1,020 at full (every half then holds a target)
against those trained here. One JSON line per dataset and seed goes to ``results/long_table1_stages.jsonl``
(appended as each finishes, so a killed run loses nothing), with the load average before and after.

    OMP_NUM_THREADS=1 nice -n 10 python benchmarks/long_table1_stages.py --seeds 0 --datasets purchase supermarket

Timings are taken on a shared 2-core machine: compare CPU seconds, not wall seconds.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from collections import defaultdict
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
FULL_TARGETS = 100

# how each stage's cost grows from the measured run to the full profile
SCALES_WITH = {
    "data": "fixed", "target models": "fixed", "untargeted shadow models": "fixed", "attack model": "fixed",
    "untargeted scoring": "targets", "targeted shadow models": "targets", "targeted shadows (other)": "targets",
    "targeted scoring": "targets", "protocol (other)": "targets", "PDTP models": "models", "PDTP (other)": "models",
    "rows": "targets",
}


class StageClock:
    """Exclusive CPU and wall seconds per stage, from wrappers pushed on a stack as the wrapped calls nest."""

    def __init__(self):
        self.cpu: dict[str, float] = defaultdict(float)
        self.wall: dict[str, float] = defaultdict(float)
        self.models: dict[str, int] = defaultdict(int)
        self.calls: dict[str, int] = defaultdict(int)
        self.stack: list[list] = []
        self._undo: list = []

    def top(self) -> str | None:
        return self.stack[-1][0] if self.stack else None

    def enter(self, label: str) -> None:
        self.stack.append([label, time.process_time(), time.perf_counter(), 0.0, 0.0])
        self.calls[label] += 1

    def leave(self) -> None:
        label, c0, w0, child_cpu, child_wall = self.stack.pop()
        dc, dw = time.process_time() - c0, time.perf_counter() - w0
        self.cpu[label] += dc - child_cpu
        self.wall[label] += dw - child_wall
        if self.stack:  # the parent's clock excludes this call
            self.stack[-1][3] += dc
            self.stack[-1][4] += dw

    def wrap(self, owner, attr: str, label) -> None:
        """Replace ``owner.attr`` by a timed call; ``label`` is a string or ``label(clock, args, kwargs)``."""
        orig = getattr(owner, attr)

        def timed(*args, **kwargs):
            name = label(self, args, kwargs) if callable(label) else label
            self.enter(name)
            try:
                return orig(*args, **kwargs)
            finally:
                self.leave()

        setattr(owner, attr, timed)
        self._undo.append((owner, attr, orig))

    def restore(self) -> None:
        for owner, attr, orig in reversed(self._undo):
            setattr(owner, attr, orig)
        self._undo.clear()


def _predict_label(clock: StageClock, args, kwargs) -> str:
    """The stage of an Engine.predict_many call, from the stage that called it (and, in the protocol, the order)."""
    subsets = args[4] if len(args) > 4 else kwargs["subsets"]
    parent = clock.top()
    if parent == "protocol (other)":
        # long_protocol trains the target models first, then the untargeted shadow models
        name = "target models" if clock.models["target models"] == 0 else "untargeted shadow models"
    elif parent == "targeted shadows (other)":
        name = "targeted shadow models"
    elif parent == "PDTP (other)":
        name = "PDTP models"
    else:
        name = f"models under {parent}"
    clock.models[name] += len(subsets)
    return name


def install(clock: StageClock) -> None:
    from leakaudit.engine import Engine
    from leakaudit.membership import distance, frequency, protocols, shadow
    from leakaudit.reproduce import long_membership

    clock.wrap(Engine, "predict_many", _predict_label)
    clock.wrap(protocols, "long_protocol", "protocol (other)")
    clock.wrap(distance, "train_targeted_shadows", "targeted shadows (other)")
    clock.wrap(shadow.ShadowModelAttack, "fit", "attack model")
    clock.wrap(shadow.ShadowModelAttack, "score", "untargeted scoring")
    clock.wrap(frequency.FrequencyAttack, "score", "targeted scoring")
    clock.wrap(distance.DistanceAttack, "score", "targeted scoring")
    clock.wrap(long_membership, "_avg_pdtp", "PDTP (other)")


def measure(dataset: str, seed: int, n_targets: int) -> dict:
    from leakaudit.data import make_purchase_like, supermarket_clusters
    from leakaudit.data.purchase import LONG_PURCHASE_PARAMS
    from leakaudit.reproduce import long_membership as lm

    s = dict(lm._long_settings("full"), n_targets=n_targets)
    clock = StageClock()
    load0 = os.getloadavg()[0]
    cpu0, wall0 = time.process_time(), time.perf_counter()
    clock.enter("data")
    if dataset == "purchase":
        ds = make_purchase_like(n_records=s["n_records"], n_features=s["n_features"], n_classes=10,
                                random_state=seed, **LONG_PURCHASE_PARAMS)
    else:
        ds = supermarket_clusters(10, random_state=seed)
    X, y = ds.encode()[0], np.asarray(ds.y, np.int64)
    clock.leave()
    install(clock)
    try:
        clock.enter("rows")
        rows = lm._long_rows(dataset, X, y, s, seed, paper=dataset == "purchase", data_note=dataset)
        clock.leave()
    finally:
        clock.restore()
    cpu, wall = time.process_time() - cpu0, time.perf_counter() - wall0
    pdtp_full = s["n_pdtp_iterations"] * (2 + FULL_TARGETS)
    factor = {"fixed": 1.0, "targets": FULL_TARGETS / n_targets,
              "models": pdtp_full / max(clock.models["PDTP models"], 1)}
    projected = {k: clock.cpu[k] * factor[SCALES_WITH[k]] for k in clock.cpu}
    values = {r.quantity: r.ours for r in rows if isinstance(r.ours, float)}
    return {
        "dataset": dataset, "seed": seed, "n_targets": n_targets, "settings": s,
        "cpu_s": round(cpu, 2), "wall_s": round(wall, 2),
        "stage_cpu_s": {k: round(v, 3) for k, v in clock.cpu.items()},
        "stage_wall_s": {k: round(v, 3) for k, v in clock.wall.items()},
        "models": dict(clock.models), "calls": dict(clock.calls),
        "projected_full_cpu_s": {k: round(v, 1) for k, v in projected.items()},
        "projected_full_total_cpu_s": round(sum(projected.values()), 1),
        "scales_with": SCALES_WITH, "factors": factor,
        "values": values, "loadavg_before": load0, "loadavg_after": os.getloadavg()[0],
        "threads_env": {k: os.environ.get(k) for k in ("OMP_NUM_THREADS",)},
        "time_utc": time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime()),
    }


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seeds", type=int, nargs="+", default=[0])
    ap.add_argument("--datasets", nargs="+", choices=("purchase", "supermarket"), default=["purchase", "supermarket"])
    ap.add_argument("--targets", type=int, default=10, help="targets measured (the full profile has 100)")
    ap.add_argument("--out", type=Path, default=HERE / "results" / "long_table1_stages.jsonl")
    ap.add_argument("--tag", default="")
    args = ap.parse_args(argv)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    for seed in args.seeds:
        for dataset in args.datasets:
            rec = measure(dataset, seed, args.targets)
            rec["tag"] = args.tag
            with args.out.open("a") as f:
                f.write(json.dumps(rec) + "\n")
            stages = sorted(rec["stage_cpu_s"], key=lambda k: -rec["projected_full_cpu_s"][k])
            print(f"{dataset} seed {seed}: {rec['cpu_s']} CPU s, {rec['wall_s']} s wall (load "
                  f"{rec['loadavg_before']:.1f}); projected full {rec['projected_full_total_cpu_s']} CPU s")
            for k in stages:
                models = f"  ({rec['models'][k]} models)" if k in rec["models"] else ""
                print(f"  {k:26s} {rec['stage_cpu_s'][k]:9.2f} CPU s  -> full {rec['projected_full_cpu_s'][k]:9.1f}"
                      + models)


if __name__ == "__main__":
    main()
