"""``leakaudit audit``: the main job."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path
from typing import Optional

import typer


def register(app: typer.Typer) -> None:
    @app.command()
    def audit(
        config: Optional[Path] = typer.Option(None, "--config", help="TOML config file (flags override it)."),
        out: Path = typer.Option(Path("runs/audit"), "--out", help="Output folder: results.json, records.csv, report.html."),
        train: Optional[Path] = typer.Option(None, "--train", help="Members (CSV or Parquet)."),
        test: Optional[Path] = typer.Option(None, "--test", help="Non-members (CSV or Parquet)."),
        data: Optional[Path] = typer.Option(None, "--data", help="One file with a membership column (see --membership-column)."),
        membership_column: Optional[str] = typer.Option(None, "--membership-column"),
        label: Optional[str] = typer.Option(None, "--label", help="Label column."),
        sensitive: Optional[str] = typer.Option(None, "--sensitive", help="Sensitive columns, comma-separated."),
        population: Optional[Path] = typer.Option(None, "--population", help="Extra records of the same distribution."),
        model: Optional[Path] = typer.Option(None, "--model", help="skops file, or torch state_dict with --module."),
        module: Optional[str] = typer.Option(None, "--module", help="package.module:Class of a torch module."),
        module_kwargs: Optional[str] = typer.Option(
            None, "--module-kwargs", help='Constructor arguments of --module as JSON, e.g. \'{"n_in": 108}\'.'),
        model_input: Optional[str] = typer.Option(
            None, "--model-input", help="What --model takes: auto (default: a model fitted on a DataFrame gets the "
                                        "columns it names; one fitted on a bare array is refused), columns (the "
                                        "table's feature columns as they are), encoded (leakaudit's encoding; "
                                        "docs/input.md)."),
        predictions_train: Optional[Path] = typer.Option(None, "--predictions-train"),
        predictions_test: Optional[Path] = typer.Option(None, "--predictions-test"),
        profile: Optional[str] = typer.Option(None, "--profile", help="smoke | standard | thorough."),
        seed: Optional[int] = typer.Option(None, "--seed"),
        backend: Optional[str] = typer.Option(None, "--backend", help="inprocess | process | ray."),
        address: Optional[str] = typer.Option(None, "--address", help="Ray cluster address."),
        cache_dir: Optional[Path] = typer.Option(None, "--cache-dir", help="Cache of trained models' outputs (resume)."),
        n_members: Optional[int] = typer.Option(None, "--n-members", help="Demo: members drawn from Adult."),
        n_nonmembers: Optional[int] = typer.Option(None, "--n-nonmembers", help="Demo: non-members drawn from Adult."),
        dtp_rule: Optional[str] = typer.Option(
            None, "--dtp-rule", help="statistical (default): a record counts against DTP-1 only when its change is "
                                     "significant against training randomness and binning; long: Long et al.'s raw "
                                     "rule on single PDTP values."),
        epsilon_budget: Optional[float] = typer.Option(
            None, "--epsilon-budget", help="Fail when an attack's empirical epsilon lower bound exceeds this."),
        exit_code: Optional[bool] = typer.Option(
            None, "--exit-code/--no-exit-code",
            help="Exit status carries the verdict: 0 publish, 3 do not publish, 4 inconclusive (2: bad input)."),
        check_inputs: bool = typer.Option(
            False, "--check-inputs",
            help="Only read the records and the model, check them, and write inputs.json (the model's accuracy on "
                 "members and non-members); no attacks. Takes seconds."),
    ) -> None:
        """Audit a model: membership attacks, PDTP and the DTP-1 rule, attribute and property inference; a verdict."""
        import json

        from ..exceptions import AuditInterrupted, InvalidParameterError
        from .config import load_config, make_config
        from .pipeline import check_inputs as _check_inputs
        from .pipeline import run_audit

        kwargs_dict = None
        if module_kwargs is not None:
            try:
                kwargs_dict = json.loads(module_kwargs)
            except json.JSONDecodeError as exc:
                raise InvalidParameterError(f"--module-kwargs is not valid JSON: {exc}") from None
            if not isinstance(kwargs_dict, dict):
                raise InvalidParameterError("--module-kwargs must be a JSON object of constructor arguments")

        flags = dict(
            train=train, test=test, data=data, membership_column=membership_column, label=label,
            sensitive=[s.strip() for s in sensitive.split(",") if s.strip()] if sensitive else None,
            population=population, model=model, module=module, module_kwargs=kwargs_dict, model_input=model_input,
            predictions_train=predictions_train,
            predictions_test=predictions_test, profile=profile, seed=seed, backend=backend, address=address,
            cache_dir=cache_dir, n_members=n_members, n_nonmembers=n_nonmembers, dtp_rule=dtp_rule,
            epsilon_budget=epsilon_budget, exit_code=exit_code,
        )
        cfg = load_config(config, **flags) if config else make_config(**{k: v for k, v in flags.items() if v is not None})
        if check_inputs:
            summ = _check_inputs(cfg, out)
            d, t = summ["data"], summ["target"]
            typer.echo(f"inputs: {d['n_members']} members, {d['n_nonmembers']} non-members, "
                       f"{d['n_population']} population records, {len(d['class_names'])} classes, "
                       f"{d['n_features']} encoded features")
            typer.echo(f"model: {t['description']}")
            typer.echo(f"accuracy: {t['train_accuracy']:.4f} on members, {t['test_accuracy']:.4f} on non-members")
            typer.echo(f"wrote {out}/inputs.json")
            return
        command = "leakaudit " + " ".join(shlex.quote(a) for a in sys.argv[1:]) if sys.argv[1:] else "leakaudit audit"
        try:
            res = run_audit(cfg, out, command=command)
        except AuditInterrupted as exc:
            typer.echo(f"leakaudit: {exc}", err=True)
            raise typer.Exit(130) from None
        v = res.verdict
        typer.echo(f"verdict: {v.outcome.upper()}. {v.headline.split(': ', 1)[-1]}")
        counts = {s: sum(c.status == s for c in v.checks) for s in ("exceeded", "passed", "not measurable")}
        typer.echo(f"checks: {counts['exceeded']} exceeded, {counts['passed']} passed, "
                   f"{counts['not measurable']} not measurable")
        for c in v.checks:
            if c.status == "not measurable":
                typer.echo(f"  not measurable: {c.name}" + (f" ({c.fix})" if c.fix else ""))
        for sk in res.skipped:
            if sk.get("fix"):
                typer.echo(f"  not run: {sk['name']}: {sk['reason']} ({sk['fix']})")
        typer.echo("time by stage: " + ", ".join(f"{k} {v:.1f} s" for k, v in res.timings.items())
                   + f"; peak memory {res.resources.get('peak_memory_mb', float('nan')):.0f} MB")
        typer.echo(f"wrote {out}/results.json, {out}/records.csv, {out}/report.html")
        if cfg.exit_code and v.exit_code:
            raise typer.Exit(v.exit_code)
