"""The screened DTP-1 check on known truth at the size of real training sets: does a recipe that leaks nothing pass,
within the cost target, and is one that certainly leaks a few hundred records caught?

The recipe (:class:`PlantedRecipe`, cheap enough to retrain thousands of times on 32,561 records) is a fixed
logistic model of Adult plus training noise that does not cancel between a model and its paired leave-one-out model
(a smooth pseudo-random function of x whose phase depends on the seed and on the rows trained on, about 0.1 on the
logit, as an SGD-trained network's outputs move between training sets): single PDTP values then cross the bins near
0 and exceed the threshold by chance, as the demo network's do, and stage 2 has to discard them. ``--planted K``
members (drawn at random among those whose fixed-model output is at most 0.95) are memorised: a model trained on one
outputs 0.995 for its label at it, so removing it moves the output by at least ln(0.2 / 0.005) = 3.7 nats. Truth: the
K planted members, and no other member, exceed DTP-1.

Each run is the audit's own DTP stage (:func:`leakaudit.audit.steps.dtp.dtp_analysis`, standard profile, the
audit's seeds and thresholds) on the Adult demo split with that seed, the recipe's 64 reference models supplying the
ranking. ``--ranking shuffled`` hands the stage reference models whose records are shuffled, so the ranking says
nothing and only the random sample can find the planted members.

    python benchmarks/screened_dtp1_calibration.py --members 32561 --planted 0 --seeds 0 1 2 3 4
    python benchmarks/screened_dtp1_calibration.py --members 32561 --planted 300 --ranking shuffled --seeds 0 1 2 3 4

Rows are appended to benchmarks/results/screened_dtp1_calibration.jsonl, one per finished run.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
import zlib
from pathlib import Path
from types import SimpleNamespace

import numpy as np

from leakaudit._random import seed_to_int
from leakaudit.learners._base import Learner

HERE = Path(__file__).resolve().parent


class PlantedRecipe(Learner):
    """Fixed logistic outputs, training noise that depends on the rows trained on, and memorised planted records.

    Parameters
    ----------
    coef : ndarray of shape (n_features,)
        The fixed model's weights over the features before the last one (with ``intercept``).
    intercept : float
    noise : float
        Amplitude of the training noise on the logit.
    The last feature is a key: 0 for an ordinary record, k > 0 for planted record k (memorised when trained on).
    """

    def __init__(self, *, coef=None, intercept: float = 0.0, noise: float = 0.1):
        self.coef = coef
        self.intercept = intercept
        self.noise = noise

    def _fit(self, X, y, *, random_state=None, n_classes=None):
        keys = X[:, -1]
        planted = keys > 0
        # the rows trained on (their keys and labels) and the seed set the noise's phase: a leave-one-out model's
        # noise differs from the full model's, as retraining without a record moves a network's outputs
        signature = zlib.crc32(np.ascontiguousarray(X[:, :-1].sum(axis=0)).tobytes()) ^ int(y.sum())
        rng = np.random.default_rng([seed_to_int(random_state), signature, len(X)])
        return _PlantedModel(np.asarray(self.coef, float), float(self.intercept), float(self.noise),
                             rng.normal(size=X.shape[1] - 1), float(rng.uniform(0, 2 * np.pi)),
                             dict(zip(keys[planted].astype(np.int64).tolist(), y[planted].astype(int).tolist())))


class _PlantedModel:
    def __init__(self, coef, intercept, noise, direction, phase, memory):
        self.coef, self.intercept, self.noise = coef, intercept, noise
        self.direction, self.phase, self.memory = direction, phase, memory

    def predict_proba(self, X):
        X = np.asarray(X, float)
        z = X[:, :-1] @ self.coef + self.intercept + self.noise * np.sin(X[:, :-1] @ self.direction + self.phase)
        p1 = 1.0 / (1.0 + np.exp(-z))
        out = np.column_stack([1.0 - p1, p1])
        for i in np.flatnonzero(X[:, -1] > 0):
            c = self.memory.get(int(X[i, -1]))
            if c is not None:
                out[i] = 0.005
                out[i, c] = 0.995
        return out


def run(members: int, seed: int, *, planted: int, ranking: str, cache: str, noise: float) -> dict:
    from sklearn.linear_model import LogisticRegression

    from leakaudit.audit import make_config
    from leakaudit.audit.context import AuditContext
    from leakaudit.audit.inputs.data import prepare_data
    from leakaudit.audit.steps.dtp import dtp_analysis
    from leakaudit.audit.plan import PLAN
    from leakaudit.audit.inputs.target import Target
    from leakaudit.engine import Engine
    from leakaudit.membership import fit_reference_models, paired_half_masks

    cfg = make_config(n_members=members, n_nonmembers=min(members, 16281), seed=seed, profile="standard")
    data = prepare_data(cfg)
    seeds = PLAN.seeds(cfg.seed)
    fixed = LogisticRegression(max_iter=2000).fit(np.vstack([data.X_mem, data.X_non]), np.r_[data.y_mem, data.y_non])
    learner = PlantedRecipe(coef=fixed.coef_[0], intercept=float(fixed.intercept_[0]), noise=noise)
    rng = np.random.default_rng([seed, 31])
    p_max = fixed.predict_proba(data.X_mem).max(axis=1)
    chosen = rng.choice(np.flatnonzero(p_max <= 0.95), size=planted, replace=False) if planted else np.zeros(0, int)
    key = np.zeros(members)
    key[chosen] = 1 + np.arange(planted)
    X_mem = np.column_stack([data.X_mem, key])
    X_non = np.column_stack([data.X_non, np.zeros(len(data.X_non))])
    X_pop = np.column_stack([data.X_pop, np.zeros(len(data.X_pop))])
    engine = Engine(backend="inprocess", cache_dir=cache, progress=False)
    probs = [learner.fit(X_mem, data.y_mem, random_state=seeds["target"]).predict_proba(X) for X in (X_mem, X_non)]
    target = Target(kind="recipe", description="planted recipe", probs_mem=probs[0], probs_non=probs[1],
                    probs_pop=None, learner=learner, X_mem=X_mem, X_non=X_non, X_pop=X_pop)
    t0, c0 = time.perf_counter(), time.process_time()
    Xa, ya = np.vstack([X_mem, X_non]), np.r_[data.y_mem, data.y_non]
    ref = fit_reference_models(learner, Xa, ya, cfg.settings.n_reference,
                               in_mask=paired_half_masks(len(ya), cfg.settings.n_reference, seeds["reference"]),
                               n_classes=data.n_classes, random_state=seeds["reference"], engine=engine)
    if ranking == "shuffled":  # every member gets another member's reference outputs: a ranking that says nothing
        perm = np.r_[np.random.default_rng([seed, 32]).permutation(members), np.arange(members, len(ya))]
        ref = SimpleNamespace(probs=ref.probs[:, perm], in_mask=ref.in_mask[:, perm])
    t_ref = time.perf_counter() - t0
    ctx = AuditContext(cfg=cfg, data=data, target=target, seeds=seeds, engine=engine,
                       check_confidence=1 - (1 - cfg.confidence) / 12)
    dtp = dtp_analysis(ctx, recipe=None, lira=None, reference=ref)
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    check = dtp.checks[0]
    s = dtp.summary
    sc, u = s["screening"], s["screening"]["unmeasured"]
    sig = set(s.get("records_significant", []))
    truth = set(chosen.tolist())
    return {
        "members": members, "seed": seed, "planted": planted, "ranking": ranking, "noise": noise,
        "status": check.status, "sentence": check.sentence,
        "n_significant": len(sig), "true_found": len(sig & truth), "false_found": len(sig - truth),
        "planted_measured": int(np.isfinite(dtp.per_record["pdtp"][:members][chosen]).sum()) if planted else 0,
        "n_top": sc["n_top"], "n_sample": sc["n_sample"], "n_measured": sc["n_measured"],
        "extensions": sc["extensions"], "doubling": sc.get("doubling"),
        "sample_needed": sc["sample_needed"], "sample_k": u["k"], "bound": u["count_upper"],
        "allowance": u["allowance"], "within_allowance": u["within_allowance"], "stage1_above": s["n_above"],
        "models": {k: v.get("trained") for k, v in dtp.resources.items()},
        "seconds_reference": round(t_ref, 1), "seconds": round(wall, 1), "cpu_seconds": round(cpu, 1),
        "load_average": round(os.getloadavg()[0], 2),
    }


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--members", type=int, default=32561)
    ap.add_argument("--planted", type=int, default=0)
    ap.add_argument("--ranking", choices=["reference", "shuffled"], default="reference")
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3, 4])
    ap.add_argument("--noise", type=float, default=0.03, help="the training noise's amplitude on the logit")
    ap.add_argument("--out", type=Path, default=HERE / "results" / "screened_dtp1_calibration.jsonl")
    args = ap.parse_args(argv)
    for seed in args.seeds:
        with tempfile.TemporaryDirectory() as tmp:
            row = run(args.members, seed, planted=args.planted, ranking=args.ranking, cache=tmp, noise=args.noise)
        with args.out.open("a") as fh:  # one line per finished run: a killed run keeps what it finished
            fh.write(json.dumps(row) + "\n")
        print(json.dumps({k: v for k, v in row.items() if k != "sentence"}), flush=True)


if __name__ == "__main__":
    main()
