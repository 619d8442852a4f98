"""``leakaudit property``: property inference from poisoning (Chase et al.) on a dataset.

Writes ``DIR/property.json`` (one :class:`~leakaudit.property.results.PropertyAttackResult`
per poisoning rate: accuracy of telling t0 from t1 with its interval, the poison used, the
numbers of queries and shadow models, the time) and ``DIR/property.png`` (accuracy against
poisoning rate) when several rates are given. ``--theory`` prints Theorem 9's windows only.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Optional

import typer

from ..exceptions import InvalidParameterError
from ._echo import echo
from ._outputs import png_figure, writing_into
from ._typer import Command, not_given

__all__ = ["register", "load_property_data", "run_property_audit", "plot_accuracy"]

DATASETS = ("census-kdd", "spamassassin", "synthetic")


def _floats(text: str, name: str) -> list[float]:
    try:
        vals = [float(v) for v in text.split(",") if v.strip()]
    except ValueError:
        raise InvalidParameterError(f"{name} must be a comma-separated list of numbers; got {text!r}") from None
    if not vals:
        raise InvalidParameterError(f"{name} is empty")
    return vals


def load_property_data(dataset: str, prop: str, *, rows: Optional[int], seed: int, text_values: str = "tfidf"):
    """PropertyData for a named dataset and property (see :mod:`leakaudit.property.datasets`).

    ``text_values`` ("binary" or "tfidf") is the SpamAssassin featurisation (ignored otherwise).
    """
    from ..property.datasets import census_property_data, spam_property_data
    from ..property.synthetic import make_property_data

    if dataset == "census-kdd":
        return census_property_data(prop, n_rows=rows, random_state=seed)[0]
    if dataset == "spamassassin":
        return spam_property_data(prop, values=text_values, random_state=seed)[0]
    if dataset == "synthetic":
        if prop != "random":
            raise InvalidParameterError("--dataset synthetic supports only --property random")
        return make_property_data(rows or 6000, 5, bias=-1.5, random_state=seed)[0]
    raise InvalidParameterError(f"--dataset must be one of {', '.join(DATASETS)}; got {dataset!r}")


def run_property_audit(data, *, t0: float, t1: float, poison_rates: list[float], dataset: str, prop: str,
                       seed: int = 0, n_targets: int = 100, matched_shadows: bool = False, engine=None,
                       **attack_params) -> list:
    """One attack per poisoning rate (Algorithm 2's clean queries shared); returns the results.

    ``engine`` (a :class:`leakaudit.engine.Engine`, default the in-process one) trains every model; one with a
    cache directory makes a rerun reuse the models already trained.

    ``matched_shadows``: shadow clean sets exclude the query rows and the poison originals, and
    Algorithm 2 uses out-of-bag certainty (needed when the adversary's pool is small beside n;
    see docs/reproduction/chase-fig1.md). False is the paper's protocol.
    """
    from ..property.game import logistic_learner
    from ..property.attack import PoisoningPropertyAttack, evaluate_attack
    from ..property.game import split_pools
    from ..property.queries import select_queries

    adv, vic = split_pools(len(data), random_state=seed)
    learner = logistic_learner()
    q = select_queries(learner, data, adv, n_train=attack_params["n_train"], n_ensemble=attack_params["n_ensemble"],
                       n_queries=attack_params["n_queries"], band=attack_params["band"],
                       out_of_bag=matched_shadows, random_state=seed + 1, engine=engine)
    out = []
    for p in poison_rates:
        a = PoisoningPropertyAttack(t0=t0, t1=t1, poison_rate=p, learner=learner, random_state=seed + 2,
                                    exclude_query_rows=matched_shadows, exclude_poison_rows=matched_shadows,
                                    oob_certainty=matched_shadows, **attack_params)
        a.fit(data, adv, queries=q, engine=engine)
        out.append(evaluate_attack(a, data, adversary_idx=adv, victim_idx=vic, n_targets=n_targets,
                                   dataset=dataset, property_name=prop, random_state=seed + 3, engine=engine))
    return out


def plot_accuracy(results: list, path: Path) -> None:
    """Accuracy (with its 95% interval) against poisoning rate."""
    ps = [r.poison_rate for r in results]
    acc = [r.accuracy for r in results]
    lo = [r.accuracy - r.accuracy_ci[0] for r in results]
    hi = [r.accuracy_ci[1] - r.accuracy for r in results]
    with png_figure(path, (5, 3.5)) as ax:
        ax.errorbar(ps, acc, yerr=[lo, hi], marker="o", capsize=3)
        ax.axhline(0.5, color="grey", lw=0.8, ls="--")
        ax.set_xlabel("poisoning rate p")
        ax.set_ylabel("attack accuracy")
        ax.set_ylim(0.3, 1.02)
        ax.set_title(f"{results[0].dataset}: {results[0].property} ({results[0].t0} vs {results[0].t1})")


def register(app: typer.Typer) -> None:
    """Add ``leakaudit property`` to the command line."""

    @app.command("property", cls=Command)
    def property_cmd(
        dataset: str = typer.Option("census-kdd", "--dataset", help=f"One of {', '.join(DATASETS)}."),
        prop: str = typer.Option("random", "--property",
                                 help="'random' (added bit the model sees), 'column=value' (e.g. sex=Female), "
                                      "or 'negative' (VADER sentiment, spamassassin)."),
        t0: float = typer.Option(..., "--t0", help="Smaller candidate fraction of records with the property."),
        t1: float = typer.Option(..., "--t1", help="Larger candidate fraction."),
        poison: str = typer.Option("0.05", "--poison", help="Poisoning rate(s), comma-separated (0 = no poison)."),
        n_train: int = typer.Option(1000, "--n-train", help="Victim training-set size n."),
        shadow: int = typer.Option(100, "--shadow", help="Shadow models per world (k)."),
        ensemble: int = typer.Option(100, "--ensemble", help="Clean ensemble models of Algorithm 2 (r)."),
        queries: int = typer.Option(500, "--queries", help="Uncertain queries (q); poison points are added."),
        targets: int = typer.Option(100, "--targets", help="Target models used to measure accuracy."),
        band: float = typer.Option(0.4, "--band", help="Certainty band of Algorithm 2."),
        variant: str = typer.Option("auto", "--variant", help="auto (Algorithm 1), X+1, X+0, X-1 or X-0."),
        accounting: str = typer.Option("replace", "--poison-accounting", help="replace (game) or add (Alg. 3)."),
        sampling: str = typer.Option("exact", "--prevalence-sampling", help="exact or binomial."),
        text_values: str = typer.Option("tfidf", "--text-values",
                                        help="SpamAssassin features: tfidf (default) or binary term presence."),
        matched_shadows: bool = typer.Option(False, "--matched-shadows/--paper-shadows", metavar="",
                                             help="Keep query rows and poison originals out of the shadow sets and "
                                                  "use out-of-bag certainty (small pools, e.g. spamassassin)."),
        rows: Optional[int] = not_given("--rows", "Use a random subset of this many rows.", default="none, every row"),
        seed: int = typer.Option(0, "--seed", help="Random seed."),
        theory: bool = typer.Option(
            False, "--theory", metavar="",
            help="Only print Theorem 9's windows; train nothing. [default: off]"),
        out: Path = typer.Option(Path("property-out"), "--out", help="Output folder."),
        cache_dir: Path = not_given("--cache-dir", "Engine cache of trained models (resume).",
                                    default="none, nothing cached"),
    ) -> None:
        """Property inference from poisoning: can a poisoner tell t0 from t1 with label-only queries?"""
        from .._results import write_json_atomic
        from ..property.theory import theorem9_window

        rates = _floats(poison, "--poison")
        if theory:
            for p in rates:
                w = theorem9_window(p, t0, t1)
                echo(f"p={p:g}: poison {w.subpopulation}, window {w.describe()}, "
                           f"empty from p >= {w.max_poison_rate:.3f}")
            return
        start = time.perf_counter()
        with writing_into(out, "property", ["property.json"] + (["property.png"] if len(rates) > 1 else []),
                          cache=cache_dir, doing=f"loading {dataset}") as progress:
            from ..engine import Engine

            engine = Engine(cache_dir=cache_dir) if cache_dir else None
            data = load_property_data(dataset, prop, rows=rows, seed=seed, text_values=text_values)
            progress.step("training shadow and target models")
            results = run_property_audit(
                data, t0=t0, t1=t1, poison_rates=rates, dataset=dataset, prop=prop, seed=seed, n_targets=targets,
                n_train=n_train, n_shadow=shadow, n_ensemble=ensemble, n_queries=queries, band=band, variant=variant,
                poison_accounting=accounting, prevalence_sampling=sampling, matched_shadows=matched_shadows,
                engine=engine,
            )
            progress.step("writing the results")
            write_json_atomic(out / "property.json", {"results": [r.to_dict() for r in results],
                                                      "seconds": time.perf_counter() - start})
            if len(results) > 1:
                plot_accuracy(results, out / "property.png")
        for r in results:
            echo(f"p={r.poison_rate:g}: accuracy {r.accuracy:.3f} [{r.accuracy_ci[0]:.3f}, "
                       f"{r.accuracy_ci[1]:.3f}] over {r.n_targets} targets; {r.n_poison} poison points "
                       f"({r.poison_variant}), {r.n_queries} queries, {r.n_shadow_total} shadow models")
        echo(f"wrote {out / 'property.json'}")
