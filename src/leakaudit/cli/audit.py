"""``leakaudit audit``: the main job.

Every flag is also a key of the ``--config`` TOML file (docs/config.md); a flag given on the command line wins over
the file. The flags default to "not given" so the file can fill them; the help text states the default that applies
when neither gives a value (the defaults of :class:`~leakaudit.audit.config.AuditConfig` and
:class:`~leakaudit.audit.config.RunOptions`, checked by tests/test_help.py).

Output: progress on stderr (``--quiet`` silences it; plain lines when stderr is not a terminal); on stdout the files
written, the verdict in one line, then every check that could not be measured and every analysis that did not run,
each with the flag or input that would enable it.
"""

from __future__ import annotations

import contextlib
import inspect
import re
import shlex
import sys
import time
import typing
from pathlib import Path
from typing import Optional

import typer

from ._echo import echo
from ._typer import Command

_NO_METAVAR = ""  # a switch takes no value: no "<bool>" beside it in --help
#: ``--mlflow`` given without a URI: MLflow's own default tracking store (MLFLOW_TRACKING_URI)
MLFLOW_DEFAULT = "MLFLOW_TRACKING_URI"
#: The exit status of an audit written to --out whose logging to MLflow failed (docs/input.md)
MLFLOW_FAILED = 5


def _in_words(description: str) -> str:
    """A setting's description (written for docs/config.md) as its --help text: a setting that has a flag becomes
    the flag (``backend = "ray"`` becomes ``--backend ray``), other code marks and links are dropped."""
    from ..audit.config import in_words

    text = re.sub(r"\[([^\]]+)\]\([^)]+\)", lambda m: f"docs/{m.group(1)}", in_words(description, flags=True))
    return text.replace("`", "")


def _default_words(field, flag) -> str:
    """What "not given" means, for the help's "(default: ...)": the flag's own words, else the setting's default."""
    if flag.default:
        return flag.default
    d = field.default_factory() if field.default_factory else field.default
    if isinstance(d, bool):
        return flag.names[0].split("/")[1 if not d else 0]
    return "none" if d is None else "{}" if d == {} else str(d)


def _option_type(annotation):
    """The type the flag takes: paths, numbers and switches as they are; everything else as text (a JSON object, a
    comma-separated list, a size, one of a few names), which the settings model reads."""
    if typing.get_origin(annotation) is list:  # a list setting that cannot be none: a repeated flag
        return Optional[annotation]
    kinds = [a for a in (typing.get_args(annotation) or (annotation,)) if a is not type(None)]
    if len(kinds) == 1 and kinds[0] in (bool, list[Path], Path, int, float):
        return Optional[kinds[0]]
    return Optional[str]


def _options() -> list[inspect.Parameter]:
    """``--config`` and one option per setting declared with a :class:`~leakaudit.audit.config.Flag` (the
    settings of :class:`~leakaudit.audit.config.AuditConfig` and :class:`~leakaudit.audit.config.RunOptions`):
    every option defaults to "not given", so that a --config file can fill it; its help is the setting's
    description with the default that applies when neither gives a value."""
    from ..audit.config import AuditConfig, RunOptions, flag_of

    fields = {**AuditConfig.model_fields, **RunOptions.model_fields}
    flagged = {k: flag for k, f in fields.items() if (flag := flag_of(f)) is not None}
    order = ["out"] + [k for k in flagged if k != "out"]
    params = [inspect.Parameter("config", inspect.Parameter.KEYWORD_ONLY, annotation=Optional[Path], default=typer.Option(
        None, "--config", help="TOML file of settings: every flag below is a key (out, check_inputs, exit_code, ... "
                               "with _ for -; docs/config.md); flags given here override it. (default: none)"))]
    for k in order:
        field, flag = fields[k], flagged[k]
        kind = _option_type(field.annotation)
        help_ = f"{_in_words(field.description or '')} (default: {_default_words(field, flag)})"
        extra = {"metavar": _NO_METAVAR} if kind == Optional[bool] else {}
        if k == "mlflow":  # a value or none (_AuditCommand): --mlflow alone is MLflow's default store
            extra = {"metavar": "[URI]"}
        opt = typer.Option(None, *flag.names, help=help_, **extra)
        params.append(inspect.Parameter(k, inspect.Parameter.KEYWORD_ONLY, annotation=kind, default=opt))
        if k == "check_inputs":  # a way to run the command, not a setting: no key of the --config file
            params.append(inspect.Parameter("estimate", inspect.Parameter.KEYWORD_ONLY, annotation=bool,
                                            default=typer.Option(False, "--estimate", metavar=_NO_METAVAR, help=(
                "Only print the plan and its estimated time. The inputs are read and checked as the audit reads "
                "them, two fits of the retraining recipe are timed on them, and each analysis is listed with the "
                "models it will train and their time; no audit model is trained, nothing is written. (default: off)"
                ))))
    return params


def register(app: typer.Typer) -> None:
    def audit(**given) -> None:
        """Audit a model: membership attacks, PDTP and the DTP-1 rule, attribute and property inference; a verdict."""
        import json

        from ..audit.config import AuditConfig, RunOptions, load_config_and_options, make_config, make_run_options
        from ..audit.result.output import check_out_writable
        from ..exceptions import InvalidParameterError

        config, estimate = given.pop("config"), given.pop("estimate")
        if given.get("module_kwargs") is not None:
            try:
                given["module_kwargs"] = json.loads(given["module_kwargs"])
            except json.JSONDecodeError as exc:
                raise InvalidParameterError(f"--module-kwargs is not valid JSON: {exc}") from None
            if not isinstance(given["module_kwargs"], dict):
                raise InvalidParameterError("--module-kwargs must be a JSON object of constructor arguments")
        for k in ("reference_dir", "extraction_prefix", "extraction_n"):  # a repeated flag not given: an empty list
            given[k] = given.get(k) or None
        flags = {k: v for k, v in given.items() if k in AuditConfig.model_fields}
        run_flags = {k: v for k, v in given.items() if k in RunOptions.model_fields}
        if config:
            cfg, opts = load_config_and_options(config, **flags, **run_flags)
        else:
            cfg = make_config(**{k: v for k, v in flags.items() if v is not None})
            opts = make_run_options(**{k: v for k, v in run_flags.items() if v is not None})
        out_dir = opts.out
        check_out_writable(out_dir, name="--out")  # the library names the argument; here the flag
        with contextlib.ExitStack() as stack:
            if opts.quiet:
                from ..audit.result.mlflow_log import quiet_mlflow

                stack.enter_context(quiet_mlflow())
            cfg, store = _resolve_model_uri(cfg, opts, stack)
            _audit(cfg, opts, out_dir, store, estimate)

    def _audit(cfg, opts, out_dir, store, estimate) -> None:
        from ..audit.config import check_outputs_spare_inputs
        from ..audit.pipeline import check_inputs as _check_inputs
        from ..audit.pipeline import run_audit
        from ..exceptions import AuditInterrupted

        check_outputs_spare_inputs(cfg, out_dir)
        if estimate:
            from ..audit.pipeline import audit_core
            from ..exceptions import InvalidParameterError

            if opts.check_inputs:
                raise InvalidParameterError("--estimate and --check-inputs: give one (--check-inputs gives the "
                                            "estimate too)")
            echo(str(audit_core(cfg, estimate=True, verbose=not opts.quiet, memory_budget=opts.memory_budget,
                                work_budget=opts.work_budget, flags=True)))
            return
        if opts.check_inputs:
            summ = _check_inputs(cfg, out_dir, memory_budget=opts.memory_budget, work_budget=opts.work_budget)
            d, t = summ["data"], summ["target"]
            if d.get("kind") == "text":
                echo(f"inputs: {d['n_members']} member and {d['n_nonmembers']} non-member texts")
                echo(f"model: {t['description']}")
                for r in t.get("reference_models") or []:
                    echo(f"reference model: {r}")
                echo(f"wrote {out_dir}/inputs.json")
                return
            echo(f"inputs: {d['n_members']} members, {d['n_nonmembers']} non-members, "
                       f"{d['n_population']} population records, {len(d['class_names'])} classes, "
                       f"{d['n_features']} encoded features")
            echo(f"model: {t['description']}")
            echo(f"accuracy: {t['train_accuracy']:.4f} on members, {t['test_accuracy']:.4f} on non-members")
            if summ.get("recipe"):
                r = summ["recipe"]
                echo(f"recipe ({r['n_reference']} models retrained, {r['seconds']:.1f} s): {r['sentence']}")
            echo(f"estimate: {summ['estimate']['headline']}")
            echo(f"wrote {out_dir}/inputs.json")
            return
        command = "leakaudit " + " ".join(shlex.quote(a) for a in sys.argv[1:]) if sys.argv[1:] else "leakaudit audit"
        start = time.perf_counter()
        try:
            res = run_audit(cfg, out_dir, command=command, verbose=not opts.quiet, memory_budget=opts.memory_budget,
                            work_budget=opts.work_budget, flags=True, redact=opts.redact)
        except AuditInterrupted as exc:
            echo(f"leakaudit: {exc}", err=True)
            raise typer.Exit(130) from None
        if not opts.quiet:
            peak = res.resources.get("peak_memory_mb")
            echo("time by stage: " + ", ".join(f"{k} {v:.1f} s" for k, v in res.timings.items())
                       + (f"; peak memory {peak:.0f} MB" if peak is not None else ""), err=True)
        echo(f"wrote {out_dir}/results.json, {out_dir}/records.csv, {out_dir}/report.html, "
                   f"{out_dir}/evidence.json")
        failed = None
        if opts.mlflow is not None:
            from ..audit.result.mlflow_log import log_audit_folder
            from ..exceptions import LeakauditError

            try:
                run_id = log_audit_folder(res, out_dir, tracking_uri=store, run_id=opts.mlflow_run,
                                          nested=opts.mlflow_nested)
                echo(f"logged MLflow run {run_id} at {store}")
            except LeakauditError as exc:  # the audit stands: its verdict is still said, then the failure
                failed = f"leakaudit: error: the audit is in {out_dir}, but logging it to MLflow failed: {exc}"
        if res.data.get("n_truncated"):
            echo(f"note: {res.data['n_truncated']} text(s) longer than the model's context of "
                       f"{res.target.get('context_length')} tokens were cut to it (records.csv: truncated = 1)")
        for line in summary_lines(res):
            echo(line)
        cost = removal_cost(res.timings, time.perf_counter() - start)
        if cost:
            echo(f"note: {cost}")
        if failed:
            echo(" ".join(failed.split()), err=True)
            raise typer.Exit(MLFLOW_FAILED)
        if cfg.exit_code and res.verdict.exit_code:
            raise typer.Exit(res.verdict.exit_code)


    audit.__signature__ = inspect.Signature(_options())
    app.command(cls=_AuditCommand)(audit)


#: ``leakaudit audit --help``'s sections, each named at its first option (the options in the order of _options)
SECTIONS = {"config": "Settings and output", "train": "Records", "model": "Model", "model_dir": "Language models",
            "profile": "How the audit runs", "release": "The decision", "check_inputs": "Run"}


def _first_sentence(text: str) -> str:
    """An option's help as the short --help gives it: its first sentence or clause, without the default or asides."""
    text = text.rpartition(" (default: ")[0] or text
    while (shorter := re.sub(r" \([^()]*\)(?=[\s,;:.]|$)", "", text)) != text:
        text = shorter
    text = re.split(r"\.(?=\s+[A-Z]|$)", text, maxsplit=1)[0]
    return re.sub(r"^(.{30,}?); .*", r"\1", text)  # its first clause, when that says enough


class _AuditCommand(Command):
    """``leakaudit audit``: ``--mlflow`` takes a URI or none (alone, or before another option: MLflow's default
    store); ``--help`` gives each option in a line or two (its description's first sentence) under
    :data:`SECTIONS`, ``--help-all`` (read as ``--help``) each in full, with its value's kind."""

    def parse_args(self, ctx, args):
        args = list(args)
        for i, a in enumerate(args):
            if a == "--mlflow" and (i + 1 == len(args) or args[i + 1].startswith("-")):
                args.insert(i + 1, MLFLOW_DEFAULT)
            if a == "--help-all":
                ctx.meta["help_all"], args[i] = True, "--help"
        return super().parse_args(ctx, args)

    def format_help(self, ctx, formatter):
        import textwrap

        full = ctx.meta.get("help_all", False)
        indent = 6 if full else 23  # the description's column (full: under the names)
        self.format_usage(ctx, formatter)
        formatter.write_paragraph()
        formatter.write_text(f"{self.help} Every option is also a key of the --config file (docs/config.md)."
                             + ("" if full else " --help-all: each option in full, with its default."))
        for p in self.get_params(ctx):
            if p.name in SECTIONS:
                formatter.write(f"\n{SECTIONS[p.name]}:\n")
            names = ", ".join(p.opts).replace("--", "--[no-]", 1) if p.secondary_opts else ", ".join(p.opts)
            if full:  # and the value it takes (<path>, <int>; nothing for a switch)
                names = f"{names} {p.display_type_rich(ctx)}".rstrip()
            lines = textwrap.wrap(p.help or "" if full else _first_sentence(p.help or ""), formatter.width - indent,
                                  max_lines=None if full else 2, placeholder=" ...", break_on_hyphens=False)
            if full or len(names) > indent - 3:  # a long name on a line of its own: never cut
                lines.insert(0, "")
            formatter.write(f"  {names:<{indent - 2}}{lines[0]}".rstrip()
                            + "".join(f"\n{' ' * indent}{line}" for line in lines[1:]) + "\n")


def _resolve_model_uri(cfg, opts, stack: contextlib.ExitStack):
    """(``cfg``, the MLflow tracking store): the store ``--mlflow`` names (or that resolves ``--model``), checked
    before the audit starts (:func:`leakaudit.audit.result.mlflow_log.check_store`; None: no MLflow), and ``cfg`` with a
    ``--model`` given as an MLflow model URI (``models:/...``, ``runs:/...``) replaced by the model file it names,
    downloaded into a temporary folder that ``stack`` removes (:func:`leakaudit.audit.result.mlflow_log.model_from_uri`:
    safe flavours only)."""
    import tempfile

    m = re.search(r"(?:^|/)((?:models|runs):/.+)$", "" if cfg.model is None else str(cfg.model))
    if opts.mlflow is None and m is None:
        return cfg, None
    from ..audit.result.mlflow_log import check_store, model_from_uri

    store = check_store(None if opts.mlflow in (None, MLFLOW_DEFAULT) else opts.mlflow, run_id=opts.mlflow_run,
                        name="--mlflow")
    if m is None:
        return cfg, store
    tmp = stack.enter_context(tempfile.TemporaryDirectory(prefix="leakaudit-model-"))
    path, flavour = model_from_uri(m.group(1), tmp, tracking_uri=store)
    if not opts.quiet:
        echo(f"model: {m.group(1)} (MLflow flavour {flavour}) read from {path.name}", err=True)
    return cfg.model_copy(update={"model": path}), store


def verdict_line(verdict) -> str:
    """The verdict in one line: ``verdict: INCONCLUSIVE. No check shows ...`` (the outcome, then the verdict's
    finding, which names a record by its file and row, as the report and records.csv do)."""
    finding = _said(verdict, "finding")
    return f"verdict: {verdict.outcome.upper()}. {finding[:1].upper() + finding[1:]}"


def summary_lines(res) -> list[str]:
    """What stdout ends with: the check counts, the verdict line, then every check that could not be measured and
    every analysis that did not run, each with what would enable it (a flag or an input, in words), then the
    records' duplicates (what they do to the per-record figures, and what would remove it)."""
    from ..audit.result.checks import EXCEEDED, STATUSES, to_decide

    v = res.verdict
    counts = ", ".join(f"{v.counts.get(s, 0)} {s}" for s in STATUSES)
    lines = [f"checks: {counts}; policy {v.policy} ({v.burden_of_proof})", verdict_line(v)]
    for c in v.checks:  # ranked: exceeded first
        if c.status == EXCEEDED:
            lines.append(f"  exceeded: {c.name}: {_lower_first(c.sentence)}")
    # the checks that keep it from "publish", the one to decide first leading, each with what would decide it
    lines += [f"  {c.status}: {c.name}: {_said(c, 'fix') if c.fix else _lower_first(c.sentence)}"
              for c in to_decide(v.checks, v.burden_of_proof == "safety shown")]
    for sk in res.skipped:
        lines.append(f"  not run: {sk['name']}: {_lower_first(_plain_reason(sk))}; to run it: {enabling_hint(sk)}")
    dup = getattr(res, "duplicates", None)
    if dup is not None:  # the records' duplicates and what they do to the per-record figures
        lines.append(f"duplicates: {_lower_first(dup.sentence)}" + (f" To remove their effect: {_said(dup, 'fix')}."
                                                                   if dup.fix else ""))
    return lines


def removal_cost(timings: dict, wall: float) -> str:
    """What the removal analysis cost, when it ran: its time (results.json's ``timings``) and share of the audit's
    ``wall`` seconds, and the flag that skips it; '' when it did not run."""
    from ..audit.progress import duration

    took = timings.get("dtp_removal")
    if not took or wall <= 0:
        return ""
    return f"the removal analysis took {duration(took)}, {took / wall:.0%} of the audit's {duration(wall)}; --no-removal skips it"


#: What each input an analysis may lack (``Skipped.missing``: an attack input of ``Attack.needs``, or ``population``
#: / ``model``) means for the user, and what gives it
_MODEL = ("the model itself (--model: a skops estimator, or a torch state_dict with --module), so that reference "
          "models can be retrained")
_INPUTS = {
    "population": "--population FILE (records of the same distribution, neither members nor non-members)",
    "reference": _MODEL,
    "model": _MODEL,
    "X": "the model itself (--model) and the records' features",
    "train_loss": "the model's predictions on the members (--model, or --predictions-train)",
    "nonmembers": "more non-members (--test)",
    "sensitive": "sensitive columns the model takes as input, with --sensitive COL,COL (not the label)",
    "parameters": "a model leakaudit can retrain and whose weights it can read (a scikit-learn MLP in a skops file, "
                  "or a torch state_dict with --module), or `leakaudit mip` run on the training algorithm",
}


def _input_words(name: str) -> str:
    """A missing input's name (``population_probs``, ``reference``) as the flag or input that gives it."""
    for key, words in _INPUTS.items():
        if name == key or name.startswith(key + "_"):
            return words
    return name.replace("_", " ")


def _said(result, name: str) -> str:
    """A sentence of a result (a check's or skipped analysis's ``fix``, the verdict's ``finding``) for the command
    line: each setting it names as its flag (:meth:`~leakaudit.audit.config.Phrased.said`)."""
    if hasattr(result, "said"):
        return result.said(name, flags=True)
    return result.get(name, "") if isinstance(result, dict) else getattr(result, name)


def _plain_reason(skipped) -> str:
    """A skipped analysis's reason; one that names only missing inputs (``missing``) says them in words."""
    reason, missing = _said(skipped, "reason"), skipped.get("missing") or []
    if missing and reason.startswith("needs ") and "(" not in reason:
        return "needs " + " and ".join(dict.fromkeys(_input_words(n).split(" (")[0] for n in missing))
    return reason


def enabling_hint(skipped) -> str:
    """The flag or input that would let a skipped analysis run, in words: its own ``fix`` when it has one, else
    what gives the inputs it names as ``missing`` (every analysis that lacks an input names it there)."""
    if skipped.get("fix"):
        return _said(skipped, "fix")
    missing = skipped.get("missing") or []
    if missing:
        return "give " + " and ".join(dict.fromkeys(_input_words(n) for n in missing))
    return "see the report's 'not run' section"


def _lower_first(s: str) -> str:
    return s[:1].lower() + s[1:] if s[:2] != s[:2].upper() else s
