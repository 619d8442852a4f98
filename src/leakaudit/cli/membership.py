"""``leakaudit membership``: run membership attacks on a model trained on a named dataset."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import typer

from ._echo import echo
from ._outputs import writing_into
from ._typer import Command, not_given

if TYPE_CHECKING:  # the engine is imported when a command runs, not for --help
    from ..engine import Engine

__all__ = ["HELP", "load_dataset", "register", "run_membership"]

#: ``leakaudit --help``'s line for the command (its options list the registered datasets and learners, which
#: import the numerical stack: registered only when it runs)
HELP = {"membership": "Membership attacks on a model trained on part of a dataset: AUC with CI, TPR at low FPR, "
                      "advantage."}


def load_dataset(name: str, n_rows: int, random_state: int):
    """Encoded features, labels and a description of the named dataset (``n_rows`` of it, drawn at random).

    The names and loaders are those of :mod:`leakaudit.data.registry`.
    """
    import numpy as np

    from ..data.registry import dataset_names, get_dataset
    from ..exceptions import InvalidParameterError

    if name not in dataset_names():
        raise InvalidParameterError(f"--dataset must be one of {', '.join(dataset_names())}; got {name!r}")
    entry = get_dataset(name)
    if entry.bytes_per_row is not None:  # a generator: refused before it generates more than memory holds
        from ..engine import check_memory

        check_memory(float(n_rows) * entry.bytes_per_row, f"--dataset {name}: generating {n_rows:,} rows would take",
                     how=f" ({entry.bytes_per_row:,} bytes a row)", fix="ask for fewer records")
    rng = np.random.default_rng(random_state)
    ds = entry.load(n_rows=n_rows, random_state=random_state)
    rows = np.sort(rng.choice(len(ds), size=min(n_rows, len(ds)), replace=False))
    ds = ds.subset(rows)
    X, _ = ds.encode()
    return X, np.asarray(ds.y, dtype=np.int64), entry.description


def make_learner(name: str):
    """The named learner of :mod:`leakaudit.learners.registry` with its defaults."""
    from ..exceptions import InvalidParameterError
    from ..learners.registry import learner_names
    from ..learners.registry import make_learner as _make

    names = learner_names(inputs="encoded")
    if name not in names:
        raise InvalidParameterError(f"--model must be one of {', '.join(names)}; got {name!r}")
    return _make(name)


def run_membership(dataset: str, model: str, attacks: list[str], out: Path, *, n_members: int, n_nonmembers: int,
                   n_population: int, n_reference: int, n_boot: int, seed: int, engine: Engine | None = None,
                   on_step=None, device: str = "cpu"):
    """Train a target on members of ``dataset``, audit it with ``attacks``, write membership.json and records.csv.

    ``on_step``: called with a phrase naming each step as it starts ("training the target model", ...).
    ``device``: where a torch learner trains its models (:func:`~leakaudit.cli._device.with_device`).
    """
    import csv
    from numbers import Integral

    import numpy as np

    from .._results import atomic_file, write_json_atomic, writing
    from .._validation import check_scalar
    from ..exceptions import InvalidParameterError
    from ..membership import audit_model, available_attacks, make_attack
    from ._device import resolved_device, with_device

    for flag, value, least in (("--n-members", n_members, 1), ("--n-nonmembers", n_nonmembers, 1),
                               ("--n-population", n_population, 0), ("--n-reference", n_reference, 0),
                               ("--n-boot", n_boot, 1)):
        check_scalar(value, name=flag, kind=Integral, min_val=least)
    for a in attacks:
        if a not in available_attacks():
            raise InvalidParameterError(f"--attacks: unknown attack {a!r}; "
                                        f"choose from {', '.join(available_attacks())}")
    with_refs = [a for a in attacks if "reference" in make_attack(a).needs]
    if with_refs and (n_reference < 2 or n_reference % 2):
        raise InvalidParameterError(f"--n-reference must be even and at least 2 for {', '.join(with_refs)} (reference "
                                    f"models come in complementary pairs); got {n_reference}")
    learner = with_device(make_learner(model), device, model=model)  # refused before any data is read
    step = on_step or (lambda doing: None)
    total = n_members + n_nonmembers + n_population
    step(f"loading {dataset}")
    X, y, note = load_dataset(dataset, total, seed)
    if len(X) < total:
        raise InvalidParameterError(f"{dataset} has {len(X)} rows; members + non-members + population = {total}")
    perm = np.random.default_rng(seed).permutation(len(X))
    mem, non = perm[:n_members], perm[n_members:n_members + n_nonmembers]
    pop = perm[n_members + n_nonmembers:total]
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
        "dataset": dataset, "dataset_note": note, "model": model, "seed": seed, "device": resolved_device(learner),
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
    with writing(out, "the output folder"):
        out.mkdir(parents=True, exist_ok=True)
    write_json_atomic(out / "membership.json", summary)
    row_ids = np.concatenate([mem, non])
    names = list(audit.scores)
    # written whole, then renamed: Ctrl-C or a full disk never leaves half a records.csv
    with atomic_file(out / "records.csv", "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["record", "is_member", "label"] + [f"score_{n}" for n in names])
        for i, r in enumerate(row_ids):
            w.writerow([int(r), audit.is_member[i], int(y[r])] + [repr(float(audit.scores[n][i])) for n in names])
    return summary


def register(app: typer.Typer) -> None:
    """Add ``leakaudit membership`` to the command line."""
    from ..data.registry import dataset_names
    from ..learners.registry import learner_names
    from ._device import DEVICE_HELP

    @app.command(cls=Command, help=HELP["membership"])
    def membership(
        dataset: str = typer.Option("purchase-like", "--dataset", help=f"One of: {', '.join(dataset_names())}."),
        model: str = typer.Option("mlp", "--model", help=f"One of: {', '.join(learner_names(inputs='encoded'))}."),
        attacks: str = typer.Option("loss,lira,rmia,informia,shadow,distance", "--attacks",
                                    help="Comma-separated: loss, yeom_adv1, lira, lira_fixed, lira_offline, rmia, "
                                         "rmia_offline, informia, informia_offline, shadow, shadow_per_class, "
                                         "distance, frequency."),
        out: Path = typer.Option(Path("runs/membership"), "--out", help="Writes membership.json and records.csv here."),
        n_members: int = typer.Option(500, "--n-members", help="Members: records the target model is trained on."),
        n_nonmembers: int = typer.Option(
            500, "--n-nonmembers",
            help="Non-members: records of the same data it never sees."),
        n_population: int = typer.Option(500, "--n-population", help="Extra records for reference models, RMIA and InfoRMIA."),
        n_reference: int = typer.Option(64, "--n-reference",
                                        help="Reference models (even), trained as the audit trains them."),
        n_boot: int = typer.Option(1000, "--n-boot", help="Bootstrap resamples for intervals."),
        seed: int = typer.Option(0, "--seed", help="Random seed of the split, the models and the attacks."),
        cache_dir: Path = not_given("--cache-dir", "Engine cache of trained models' outputs (resume).",
                                    default="none, nothing cached"),
        device: str = typer.Option("cpu", "--device", help=DEVICE_HELP),
    ) -> None:
        from ..engine import Engine
        from ..metrics import tpr_entry

        names = [a.strip() for a in attacks.split(",") if a.strip()]
        with writing_into(out, "membership", ["membership.json", "records.csv"], cache=cache_dir) as progress:
            engine = Engine(cache_dir=cache_dir) if cache_dir else None
            s = run_membership(dataset, model, names, out, n_members=n_members, n_nonmembers=n_nonmembers,
                               n_population=n_population, n_reference=n_reference, n_boot=n_boot, seed=seed,
                               engine=engine, on_step=progress.step, device=device)
        echo(f"{dataset} / {model}: train acc {s['train_accuracy']:.3f}, test acc {s['test_accuracy']:.3f}")
        for name, a in s["attacks"].items():
            tpr = (tpr_entry(a["tpr_at_fpr"], 0.001) or {}).get("tpr", float("nan"))
            echo(f"  {name:>16}: AUC {a['auc']:.3f} [{a['auc_ci'][0]:.3f}, {a['auc_ci'][1]:.3f}]  "
                       f"TPR@0.1%FPR {tpr:.3f}  advantage {a['advantage']:.3f}")
        for name, why in s["skipped"].items():
            echo(f"  {name:>16}: skipped ({why})")
        echo(f"wrote {out}/membership.json, {out}/records.csv")
