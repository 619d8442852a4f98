"""``leakaudit membership``: run membership attacks on a model trained on a named dataset."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import typer

from ..exceptions import InvalidParameterError

DATASETS = ("adult", "purchase-like", "texas-like", "supermarket", "census")
MODELS = ("mlp", "logreg", "tree", "forest", "knn")


def load_dataset(name: str, n_rows: int, random_state: int) -> tuple[np.ndarray, np.ndarray, str]:
    """Encoded features, labels and a description of the named dataset (``n_rows`` of it)."""
    from .. import data

    rng = np.random.default_rng(random_state)
    if name == "purchase-like":
        ds = data.make_purchase_like(n_records=n_rows, n_features=600, n_classes=10, random_state=random_state)
        note = "synthetic Purchase-like (600 binary features, 10 k-means classes)"
    elif name == "texas-like":
        ds = data.make_texas_like(n_records=n_rows, random_state=random_state)
        note = "synthetic Texas-like"
    elif name == "adult":
        ds = data.load_adult(columns="long")
        note = "UCI Adult, Long et al.'s 13 attributes"
    elif name == "supermarket":
        ds = data.supermarket_clusters(10, random_state=random_state)
        note = "supermarket baskets, 10 k-means clusters (Purchase built the same way)"
    elif name == "census":
        ds = data.load_census_kdd()
        note = "Census-Income (KDD)"
    else:
        raise InvalidParameterError(f"--dataset must be one of {', '.join(DATASETS)}; got {name!r}")
    rows = np.sort(rng.choice(len(ds), size=min(n_rows, len(ds)), replace=False))
    ds = ds.subset(rows)
    X, _ = ds.encode()
    return X, np.asarray(ds.y, dtype=np.int64), note


def make_learner(name: str) -> Any:
    """The named learner with the defaults the CLI uses."""
    from ..learners import LogisticRegression, SklearnLearner, TorchMLP

    if name == "mlp":
        return TorchMLP(hidden=(64,), activation="tanh", mode="fast", epochs=30)
    if name == "logreg":
        return LogisticRegression(C=1e3)
    if name == "tree":
        from sklearn.tree import DecisionTreeClassifier

        return SklearnLearner(DecisionTreeClassifier())
    if name == "forest":
        from sklearn.ensemble import RandomForestClassifier

        return SklearnLearner(RandomForestClassifier(n_estimators=50))
    if name == "knn":
        from sklearn.neighbors import KNeighborsClassifier

        return SklearnLearner(KNeighborsClassifier(n_neighbors=5))
    raise InvalidParameterError(f"--model must be one of {', '.join(MODELS)}; got {name!r}")


def run_membership(dataset: str, model: str, attacks: list[str], out: Path, *, n_members: int, n_nonmembers: int,
                   n_population: int, n_reference: int, n_boot: int, seed: int, engine=None, on_step=None):
    """Train a target on members of ``dataset``, audit it with ``attacks``, write membership.json and records.csv.

    ``on_step``: called with a phrase naming each step as it starts ("training the target model", ...).
    """
    import csv
    import os

    from .._results import write_json_atomic
    from ._registry import available_attacks
    from .protocols import audit_model

    for a in attacks:
        if a not in available_attacks():
            raise InvalidParameterError(f"--attacks: unknown attack {a!r}; choose from {', '.join(available_attacks())}")
    step = on_step or (lambda doing: None)
    total = n_members + n_nonmembers + n_population
    step(f"loading {dataset}")
    X, y, note = load_dataset(dataset, total, seed)
    if len(X) < total:
        raise InvalidParameterError(f"{dataset} has {len(X)} rows; members + non-members + population = {total}")
    perm = np.random.default_rng(seed).permutation(len(X))
    mem, non = perm[:n_members], perm[n_members:n_members + n_nonmembers]
    pop = perm[n_members + n_nonmembers:total]
    learner = make_learner(model)
    C = int(y.max()) + 1
    step("training the target model")
    target = learner.fit(X[mem], y[mem], random_state=seed, n_classes=C)
    step(f"running the attacks ({', '.join(attacks)})")
    audit = audit_model(target, X[mem], y[mem], X[non], y[non], attacks=attacks, learner=learner,
                        X_population=X[pop] if n_population else None, y_population=y[pop] if n_population else None,
                        n_reference=n_reference, n_classes=C, n_boot=n_boot, random_state=seed, engine=engine)
    acc_tr = float(np.mean(target.predict_proba(X[mem]).argmax(1) == y[mem]))
    acc_te = float(np.mean(target.predict_proba(X[non]).argmax(1) == y[non]))
    summary = {
        "dataset": dataset, "dataset_note": note, "model": model, "seed": seed,
        "n_members": n_members, "n_nonmembers": n_nonmembers, "n_population": n_population,
        "n_reference": n_reference, "train_accuracy": acc_tr, "test_accuracy": acc_te,
        "attacks": {
            name: {"auc": s.metrics.auc, "auc_ci": list(s.metrics.auc_ci), "tpr_at_fpr": s.metrics.tpr_at_fpr,
                   "advantage": s.metrics.advantage, "decision_advantage": s.decision_metrics["advantage"],
                   "roc": s.roc}
            for name, s in audit.attacks.items()
        },
        "skipped": audit.skipped,
        "settings": audit.settings,
    }
    step("writing the results")
    out.mkdir(parents=True, exist_ok=True)
    write_json_atomic(out / "membership.json", summary)
    row_ids = np.concatenate([mem, non])
    names = list(audit.scores)
    tmp = out / ".records.csv.tmp"  # written whole, then renamed: Ctrl-C never leaves half a records.csv
    try:
        with open(tmp, "w", newline="") as fh:
            w = csv.writer(fh)
            w.writerow(["record", "is_member", "label"] + [f"score_{n}" for n in names])
            for i, r in enumerate(row_ids):
                w.writerow([int(r), audit.is_member[i], int(y[r])] + [repr(float(audit.scores[n][i])) for n in names])
        os.replace(tmp, out / "records.csv")
    finally:
        if tmp.exists():
            tmp.unlink()
    return summary


def register(app: typer.Typer) -> None:
    @app.command()
    def membership(
        dataset: str = typer.Option("purchase-like", "--dataset", help=f"One of: {', '.join(DATASETS)}."),
        model: str = typer.Option("mlp", "--model", help=f"One of: {', '.join(MODELS)}."),
        attacks: str = typer.Option("loss,lira,rmia,shadow,distance", "--attacks",
                                    help="Comma-separated: loss, yeom_adv1, lira, lira_fixed, lira_offline, rmia, "
                                         "rmia_offline, shadow, shadow_per_class, distance, frequency."),
        out: Path = typer.Option(Path("runs/membership"), "--out", help="Writes membership.json and records.csv here."),
        n_members: int = typer.Option(500, "--n-members", help="Members: records the target model is trained on."),
        n_nonmembers: int = typer.Option(500, "--n-nonmembers", help="Non-members: records of the same data it never sees."),
        n_population: int = typer.Option(500, "--n-population", help="Extra records for reference models and RMIA."),
        n_reference: int = typer.Option(16, "--n-reference", help="Reference models (even)."),
        n_boot: int = typer.Option(1000, "--n-boot", help="Bootstrap resamples for intervals."),
        seed: int = typer.Option(0, "--seed", help="Random seed of the split, the models and the attacks."),
        cache_dir: Path = typer.Option(None, "--cache-dir", help="Engine cache of trained models' outputs (resume). [default: none, nothing cached]"),
    ) -> None:
        """Membership attacks on a model trained on part of a dataset: AUC with CI, TPR at low FPR, advantage."""
        from .._interrupt import on_interrupt
        from ..engine import Engine

        names = [a.strip() for a in attacks.split(",") if a.strip()]
        with on_interrupt("membership", outputs=[out / "membership.json", out / "records.csv"],
                          cache=cache_dir, doing="starting") as progress:
            engine = Engine(cache_dir=cache_dir) if cache_dir else None
            s = run_membership(dataset, model, names, out, n_members=n_members, n_nonmembers=n_nonmembers,
                               n_population=n_population, n_reference=n_reference, n_boot=n_boot, seed=seed,
                               engine=engine, on_step=progress.step)
        typer.echo(f"{dataset} / {model}: train acc {s['train_accuracy']:.3f}, test acc {s['test_accuracy']:.3f}")
        for name, a in s["attacks"].items():
            tpr = a["tpr_at_fpr"].get("0.001", {}).get("tpr", float("nan"))
            typer.echo(f"  {name:>16}: AUC {a['auc']:.3f} [{a['auc_ci'][0]:.3f}, {a['auc_ci'][1]:.3f}]  "
                       f"TPR@0.1%FPR {tpr:.3f}  advantage {a['advantage']:.3f}")
        for name, why in s["skipped"].items():
            typer.echo(f"  {name:>16}: skipped ({why})")
        typer.echo(f"wrote {out}/membership.json, {out}/records.csv")
