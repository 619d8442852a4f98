"""``leakaudit attribute``: infer a sensitive column from a model trained on part of a dataset.

Writes ``DIR/attribute.json`` (an :class:`~leakaudit.attribute.results.AttributeAudit`: per
adversary the attribute advantage with its interval, accuracies on members and non-members,
the alternative advantage against the no-model baseline) and ``DIR/attribute.png``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from ..exceptions import InvalidParameterError
from ._echo import echo
from ._outputs import png_figure, writing_into
from ._typer import Command, not_given

__all__ = ["register", "make_estimator", "load_named_dataset", "run_attribute_audit", "plot_audit"]

DATASETS = ("adult", "census-kdd", "iwpc")


def make_estimator(name: str, task: str, *, depth: Optional[int] = None, alpha: float = 1.0):
    """A scikit-learn estimator by short name.

    Classifiers: ``mlp``, ``logreg``, ``tree``, ``forest``; regressors: ``tree``, ``ridge``, ``linear``.
    """
    from sklearn.ensemble import RandomForestClassifier
    from sklearn.linear_model import LinearRegression, LogisticRegression, Ridge
    from sklearn.neural_network import MLPClassifier
    from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor

    kind = "classification" if task == "classification" else "regression"
    makers = {"classification": {
        # no weight decay and many epochs: an overfit model, as the attack needs to show leakage
        "mlp": lambda: MLPClassifier(hidden_layer_sizes=(128,), alpha=0.0, max_iter=300),
        "logreg": lambda: LogisticRegression(max_iter=2000),
        "tree": lambda: DecisionTreeClassifier(max_depth=depth),
        "forest": lambda: RandomForestClassifier(n_estimators=100, max_depth=depth),
    }, "regression": {
        "tree": lambda: DecisionTreeRegressor(max_depth=depth),
        "ridge": lambda: Ridge(alpha=alpha),
        "linear": LinearRegression,
    }}[kind]
    if name not in makers:
        raise InvalidParameterError(f"--model must be one of {', '.join(makers)} for a {kind} dataset; got {name!r}")
    return makers[name]()


def load_named_dataset(name: Optional[str], data: Optional[Path], label: Optional[str]):
    """A built-in dataset by name, or a user's CSV/Parquet table with its label column."""
    from .. import data as ld

    if (name is None) == (data is None):
        raise InvalidParameterError("give exactly one of --dataset NAME or --data FILE (with --label)")
    if data is not None:
        if not label:
            raise InvalidParameterError("--label is required with --data")
        from ..audit.inputs.data import read_records

        return ld.from_frame(read_records(data, "--data"), label, name=Path(data).stem)
    if name not in DATASETS:
        raise InvalidParameterError(f"--dataset must be one of {', '.join(DATASETS)}; got {name!r}")
    return {"adult": ld.load_adult, "census-kdd": ld.load_census_kdd, "iwpc": ld.load_iwpc}[name]()


def run_attribute_audit(dataset, attribute: str, model: str, *, n_members: Optional[int] = None,
                        depth: Optional[int] = None, alpha: float = 1.0, seed: int = 0):
    """Dispatch to the classifier or regression audit; returns an AttributeAudit."""
    from ..attribute.classifier import audit_classifier_attribute
    from ..attribute.experiment import audit_regression_attribute

    est = make_estimator(model, dataset.task, depth=depth, alpha=alpha)
    name = model if depth is None else f"{model}(depth={depth})"
    n = len(dataset)
    if n_members is not None:  # members, as many non-members (a quarter of the rows for regression), 10 reference rows
        most = (n - 10) // 2 if dataset.task == "classification" else n - n // 4 - 10
        if not 10 <= n_members <= most:
            raise InvalidParameterError(f"--n-members {n_members:,}: {dataset.name} has {n:,} rows, room for 10 to "
                                        f"{most:,} members beside the non-members and the reference rows")
    if dataset.task == "classification":
        n_mem = min(2000, n // 4) if n_members is None else n_members
        n_ref = min(5000, n - 2 * n_mem)
        return audit_classifier_attribute(dataset, attribute, est, n_members=n_mem, n_reference=n_ref,
                                          model_name=name, random_state=seed)
    return audit_regression_attribute(dataset, attribute, est, n_members=n_members, model_name=name, random_state=seed)


def plot_audit(audit, path: Path) -> None:
    """Bar chart: each adversary's attribute advantage (Def. 5) and alternative advantage (Def. 6) with intervals."""
    import numpy as np

    names = [a.name for a in audit.attacks]
    x = np.arange(len(names))
    with png_figure(path, (1.6 * len(names) + 2, 3.6)) as ax:
        for off, key, label in ((-0.2, "attribute_advantage", "advantage (Def. 5)"),
                                (0.2, "alternative_advantage", "alternative advantage (Def. 6)")):
            vals = [getattr(a, key) for a in audit.attacks]
            mid = np.array([v.advantage if v else np.nan for v in vals])
            lo = np.array([v.ci_low if v else np.nan for v in vals])
            hi = np.array([v.ci_high if v else np.nan for v in vals])
            ax.bar(x + off, mid, width=0.4, label=label, yerr=[mid - lo, hi - mid], capsize=3)
        ax.axhline(0, color="black", lw=0.8)
        ax.set_xticks(x, names, fontsize=8)
        ax.set_ylabel("advantage")
        ax.set_title(f"{audit.dataset}: inferring {audit.attribute} from {audit.model}", fontsize=9)
        ax.legend(fontsize=7)


def register(app: typer.Typer) -> None:
    """Add ``leakaudit attribute`` to the command line."""

    @app.command("attribute", cls=Command)
    def attribute(
        dataset: Optional[str] = not_given("--dataset",
                                           f"Built-in dataset: {', '.join(DATASETS)}. Give this or --data."),
        data: Optional[Path] = not_given("--data", "Your own table (CSV or Parquet) instead of --dataset."),
        label: Optional[str] = not_given("--label", "Label column of --data (required with it)."),
        attribute_: str = typer.Option(..., "--attribute", help="Sensitive column to infer (categorical or binary)."),
        model: str = typer.Option(
            "mlp", "--model",
            help="Classifiers: mlp, logreg, tree, forest. Regressors: tree, ridge, linear."),
        depth: Optional[int] = not_given("--depth", "max_depth for tree and forest models.",
                                         default="none, grown fully"),
        alpha: float = typer.Option(1.0, "--alpha", help="Ridge regularisation."),
        n_members: Optional[int] = typer.Option(
            None, "--n-members",
            help="Training-set size (default: 2000, or half for regression)."),
        seed: int = typer.Option(0, "--seed", help="Random seed."),
        out: Path = typer.Option(Path("runs/attribute"), "--out", help="Output folder."),
    ) -> None:
        """Infer a sensitive column (Yeom et al. Adversaries 4, 6, 7) and compare with the no-model baseline."""
        from .._results import write_json_atomic

        with writing_into(out, "attribute", ["attribute.json", "attribute.png"], doing="loading the data") as progress:
            ds = load_named_dataset(dataset, data, label)
            progress.step(f"training the model and inferring {attribute_}")
            audit = run_attribute_audit(ds, attribute_, model, n_members=n_members, depth=depth, alpha=alpha,
                                        seed=seed)
            progress.step("writing the results")
            write_json_atomic(out / "attribute.json", audit.to_dict())
            plot_audit(audit, out / "attribute.png")
        echo(f"{audit.dataset}: {audit.attribute} ({len(audit.values)} values) from {audit.model}; "
                   f"no-model baseline accuracy {audit.baseline_accuracy_nonmembers:.3f}")
        for a in audit.attacks:
            adv, alt = a.attribute_advantage, a.alternative_advantage
            echo(f"  {a.name:<18} members {adv.accuracy_members:.3f}  non-members {adv.accuracy_nonmembers:.3f}  "
                       f"advantage {adv.advantage:+.3f} [{adv.ci_low:+.3f}, {adv.ci_high:+.3f}]  "
                       f"alternative {alt.advantage:+.3f}")
        echo(f"wrote {out}/attribute.json and {out}/attribute.png")
