"""Chase et al.'s white-box baseline (Table III's WBAttack column) on the Census data one column per attribute.

chase-table3 runs Ganju et al.'s white box on the one-hot Census (503 indicator columns and 7 numeric ones), the
encoding its black-box rows use, and stays 0.24-0.36 below the paper's 0.96 (gender) and 0.95 (race). The paper says
it used the Census data "as is" and names no encoding. This reproduction runs the same white box (the same MLP
recipe, shadow counts, targets, seeds and both meta-classifiers as chase-table3's profile) on the 40 attributes one
column each (``census_property_data(encoding="ordinal")``: a categorical's index in its sorted categories, every
column z-scored). Its rows are variants of Table III's: the paper's setting is chase-table3's, which decides the
result; these say how much of the gap the encoding makes. Other readings of the data that were tried and did not
help (labels balanced 50/50, n = 10,000, a longer meta-classifier fit): benchmarks/chase_wb_hypotheses.py and
docs/chase.md ('White-box baseline').

Profiles: ``full``, the paper's 1,000 shadow networks per world, 100 targets, the whole Census; ``reduced``, 100
per world, 50 targets, 60,000 Census rows; ``smoke``, chase's synthetic stand-in (no encoding to choose).
"""

from __future__ import annotations

import time

import numpy as np

from ._registry import register
from ._registry import row as _row
from .chase import (CONFIG, PAPER, SETTINGS, TABLE3_WB, TABLE3_WB_EPOCHS, TABLE3_WB_SCALE, _data, _log_progress, _n,
                    _seeds, _seeds_row, _smoke_row)


@register(
    "chase-wb-encoding",
    paper=PAPER,
    description="Table III's white box (WBAttack, no poison) on the Census data one column per attribute ('as is'), "
    "beside chase-table3's one-hot rows.",
    notes="The white box of chase-table3 at its profile's counts (MLP (32, 16, 8) shadows and targets, 20 epochs, "
    "Adam lr 1e-3, batch 64; full: the paper's 1,000 shadow networks per world, 100 targets, the whole Census; "
    "reduced: 100 per world, 50 targets, 60,000 rows), both of Ganju et al.'s meta-classifiers on the same shadows, "
    "seeds 0-4; only the encoding differs: the 40 attributes one column each (z-scored category index or number) "
    "instead of 510 one-hot columns. With the sex or race attribute in one input, each first-layer neuron has 41 "
    "parameters instead of 511. Measured beforehand (benchmarks/chase_wb_hypotheses.py, seeds 0-4, full counts): "
    "DeepSets 0.82 on gender and 0.79 on race against one-hot's 0.68 and 0.65; labels balanced 50/50, ten times "
    "larger training sets and a five times longer meta-classifier fit did not help. The rows are variants: chase-table3 "
    "runs the paper's setting (one encoding for the white and the black box) and decides Table III's white-box "
    "results.",
    references=((r"WB accuracy", "printed", "property-attack accuracy"),),
)
def wb_encoding(profile: str, random_state: int):
    from ..property.game import split_pools
    from ..property.whitebox import META_CLASSIFIERS, whitebox_attack

    # The settings and the white-box loop repeat chase-table3's (chase.table3) with the encoding added. One helper in
    # chase.py for both would change chase.py, and with it the code digest of every stored Chase run: merge them when
    # the Chase sections are next rerun together.
    cfg = CONFIG[profile]
    row = _smoke_row if cfg["synthetic"] else _row
    seeds = _seeds(cfg, random_state)
    settings = ["census-gender"] if profile == "smoke" else ["census-gender", "census-race", "census-random"]
    epochs = 5 if profile == "smoke" else TABLE3_WB_EPOCHS
    k_wb = max(10, round(1000 * TABLE3_WB_SCALE[profile]))
    rows = []
    for setting in settings:
        _, _, t0, t1 = SETTINGS[setting]
        wb = {m: [] for m in META_CLASSIFIERS}
        for s in seeds:
            cpu = time.process_time()
            data = _data(setting, cfg["synthetic"], cfg["census_rows"], s, encoding="ordinal")
            adv, vic = split_pools(len(data), random_state=s)
            res = whitebox_attack(data, t0=t0, t1=t1, n_train=_n(setting, cfg), hidden=(32, 16, 8),
                                  epochs=epochs, n_shadow=k_wb, n_targets=cfg["targets"],
                                  adversary_idx=adv, victim_idx=vic, random_state=s)
            for m, r in res.items():
                wb[m].append(r)
                _log_progress(reproduction="chase-wb-encoding", setting=setting, seed=s, whitebox=m, k=k_wb,
                              accuracy=r.accuracy, auc=r.auc, seconds=r.seconds,
                              cpu_seconds=time.process_time() - cpu)
        for m, rs in wb.items():
            what = {"deepsets": "per-layer DeepSets", "sorted": "neuron-sorted vector, MLP"}[m]
            rows.append(_seeds_row(row, f"{setting} WB accuracy, one column per attribute ({what})",
                                   TABLE3_WB[setting], [r.accuracy for r in rs], seeds,
                                   note=f"k={k_wb}/world (paper 1000); {cfg['targets']} targets; "
                                   f"{np.mean([r.seconds for r in rs]):.0f} s per seed"))
            rows.append(_seeds_row(row, f"{setting} WB AUC, one column per attribute ({what})", None,
                                   [r.auc for r in rs], seeds, note="the meta-classifier's score on the targets"))
    return rows
