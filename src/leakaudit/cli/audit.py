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

import re
import shlex
import sys
from pathlib import Path
from typing import Optional

import typer

from ._typer import Command

_NO_METAVAR = ""  # a switch takes no value: no "<bool>" beside it in --help


def register(app: typer.Typer) -> None:
    @app.command(cls=Command)
    def audit(
        config: Optional[Path] = typer.Option(
            None, "--config", help="TOML file of settings: every flag below is a key (out, check_inputs, "
                                   "exit_code, ... with _ for -; docs/config.md); flags given here override it. "
                                   "(default: none)"),
        out: Optional[Path] = typer.Option(
            None, "--out", help="Output folder: results.json, records.csv, report.html (inputs.json with "
                                "--check-inputs). (default: runs/audit)"),
        train: Optional[Path] = typer.Option(
            None, "--train", "--members", help="The members: records the model was trained on (CSV or Parquet; "
                                               "JSONL too with --model-dir). Give --test too. (default: none: the "
                                               "bundled Adult demo)"),
        test: Optional[Path] = typer.Option(
            None, "--test", "--nonmembers", help="The non-members: records of the same distribution the model never "
                                                 "saw (CSV or Parquet; JSONL too with --model-dir). (default: none)"),
        data: Optional[Path] = typer.Option(
            None, "--data", help="Instead of --train/--test: one file with a 0/1 membership column (see "
                                 "--membership-column). (default: none)"),
        membership_column: Optional[str] = typer.Option(
            None, "--membership-column", help="With --data: the column that is 1 for members (trained on), 0 for "
                                              "non-members. (default: none)"),
        label: Optional[str] = typer.Option(
            None, "--label", help="The label column the model predicts (required with your own data). "
                                  "(default: none; the demo uses income)"),
        sensitive: Optional[str] = typer.Option(
            None, "--sensitive", help="Sensitive columns, comma-separated: attribute and property inference run on "
                                      "each (a numeric one must be binned into text categories first). "
                                      "(default: none; the demo uses sex,race,marital_status)"),
        population: Optional[Path] = typer.Option(
            None, "--population", help="Extra records of the same distribution, neither members nor non-members: "
                                       "reference models train on them and RMIA needs them. (default: none)"),
        model: Optional[Path] = typer.Option(
            None, "--model", help="The model to audit: a skops file, or a torch state_dict with --module. "
                                  "(default: none: the demo's MLP is trained on the members)"),
        module: Optional[str] = typer.Option(
            None, "--module", help="With a torch state_dict --model: its class as package.module:Class. "
                                   "(default: none)"),
        module_kwargs: Optional[str] = typer.Option(
            None, "--module-kwargs", help='Constructor arguments of --module as JSON, e.g. \'{"n_in": 108}\'. '
                                          "(default: {})"),
        model_input: Optional[str] = typer.Option(
            None, "--model-input", help="What --model takes: auto (a model fitted on a DataFrame gets the columns "
                                        "it names; one fitted on a bare array is refused), columns (the table's "
                                        "feature columns as they are), encoded (leakaudit's encoding; "
                                        "docs/input.md). (default: auto)"),
        predictions_train: Optional[Path] = typer.Option(
            None, "--predictions-train", help="Instead of a model: its class probabilities on the members, a CSV "
                                              "with one row per --train record and one column per class. Only "
                                              "the attacks that need no retraining run. (default: none)"),
        predictions_test: Optional[Path] = typer.Option(
            None, "--predictions-test", help="With --predictions-train: the model's class probabilities on the "
                                             "non-members (one row per --test record). (default: none)"),
        model_dir: Optional[Path] = typer.Option(
            None, "--model-dir", help="A causal language model to audit: a local transformers directory (config.json "
                                      "and *.safetensors weights, or a peft adapter); needs --text-column. "
                                      "(default: none)"),
        text_column: Optional[str] = typer.Option(
            None, "--text-column", help="With --model-dir: the column of the texts in the members and non-members "
                                        "files. (default: none)"),
        tokenizer: Optional[Path] = typer.Option(
            None, "--tokenizer", help="With --model-dir: the tokenizer's directory. (default: none: --model-dir's "
                                      "own)"),
        logprobs_column: Optional[str] = typer.Option(
            None, "--logprobs-column", help="Instead of --model-dir (scores only): the column of each text's "
                                            "per-token log-probabilities computed by any framework (a list; in CSV a "
                                            "JSON list). Needs --text-column. (default: none)"),
        dataset_inference: Optional[bool] = typer.Option(
            None, "--dataset-inference/--no-dataset-inference", metavar=_NO_METAVAR,
            help="With --model-dir or --logprobs-column: also test the members as a set (dataset inference: was this "
                 "collection used?); one more check. (default: --no-dataset-inference)"),
        reference_dir: Optional[list[Path]] = typer.Option(
            None, "--reference-dir", help="With --model-dir: a reference language model (e.g. the base before "
                                          "fine-tuning), for the reference-ratio, LiRA and RMIA attacks; repeat "
                                          "for more. (default: none)"),
        profile: Optional[str] = typer.Option(
            None, "--profile", help="How much work: smoke (seconds, a first look), standard, thorough (the "
                                    "papers' repeats). (default: standard)"),
        seed: Optional[int] = typer.Option(
            None, "--seed", help="Random seed of every stage: the same seed and inputs give the same results. "
                                 "(default: 0)"),
        backend: Optional[str] = typer.Option(
            None, "--backend", help="Where reference and leave-one-out models train: inprocess, process (every "
                                    "core), ray (--address). (default: inprocess)"),
        device: Optional[str] = typer.Option(
            None, "--device", help="Where torch models train and language models score: cpu, cuda, cuda:N or auto "
                                   "(a GPU when one is visible); the compiled kernels and scikit-learn learners train "
                                   "on the CPU only. (default: cpu)"),
        address: Optional[str] = typer.Option(
            None, "--address", help="With --backend ray: the cluster address (auto, ray://host:10001). "
                                    "(default: none: a local Ray instance)"),
        cache_dir: Optional[Path] = typer.Option(
            None, "--cache-dir", help="Where trained models' outputs are kept, so a stopped audit resumes. "
                                      "(default: $LEAKAUDIT_CACHE, else .leakaudit-cache)"),
        n_members: Optional[int] = typer.Option(
            None, "--n-members", help="Demo only: members drawn from Adult. (default: 1000)"),
        n_nonmembers: Optional[int] = typer.Option(
            None, "--n-nonmembers", help="Demo only: non-members drawn from Adult. (default: 1000)"),
        dtp_rule: Optional[str] = typer.Option(
            None, "--dtp-rule", help="statistical: a record counts against DTP-1 only when its change is "
                                     "significant against training randomness and binning; long: Long et al.'s "
                                     "raw rule on single PDTP values. (default: statistical)"),
        release: Optional[str] = typer.Option(
            None, "--release", help="How the model is released: weights (the model file; adds the structural "
                                    "checks), scores (a service returning class scores), labels (a service returning "
                                    "labels only: label-only attacks; no PDTP or attribute inference). (default: "
                                    "none: not declared, analysed as scores)"),
        policy: Optional[str] = typer.Option(
            None, "--policy", help="The release policy the verdict applies: default (safety shown: publish only when "
                                   "every check is shown below its threshold), leakage-shown (withhold only when one "
                                   "is shown above it), or a TOML policy file with its thresholds and their sources "
                                   "(docs/verdict.md). (default: default)"),
        epsilon_budget: Optional[float] = typer.Option(
            None, "--epsilon-budget", help="Fail when an attack's empirical epsilon lower bound exceeds this. "
                                           "(default: none: no epsilon check)"),
        claimed_epsilon: Optional[float] = typer.Option(
            None, "--claimed-epsilon", help="The model was trained with differential privacy at this epsilon: the "
                                            "report shows it beside every attack's empirical epsilon; the demo trains "
                                            "by DP-SGD to it and audits that recipe in one run. (default: none)"),
        exit_code: Optional[bool] = typer.Option(
            None, "--exit-code/--no-exit-code", metavar=_NO_METAVAR,
            help="Exit status carries the verdict: 0 publish, 3 do not publish, 4 inconclusive (2: bad input). "
                 "(default: --no-exit-code: 0 whatever the verdict)"),
        check_inputs: Optional[bool] = typer.Option(
            None, "--check-inputs/--no-check-inputs", metavar=_NO_METAVAR,
            help="Only read the records and the model, check them, and write inputs.json (the model's accuracy on "
                 "members and non-members, and, for a model leakaudit can retrain, whether 8 retrainings reproduce "
                 "its membership signal: a model not trained on these members fails it); no attacks. (default: "
                 "--no-check-inputs)"),
        memory_budget: Optional[str] = typer.Option(
            None, "--memory-budget", help="Memory that trained models' outputs may take (e.g. 4GB); larger outputs "
                                          "are kept in a temporary file on disk, with the same results. (default: "
                                          "none: a quarter of physical memory)"),
        work_budget: Optional[str] = typer.Option(
            None, "--work-budget", help="Work one model a model file asks for may take, in steps (e.g. 1e13): a "
                                        "file declaring more trees, layers or iterations is refused before any "
                                        "training. (default: none: $LEAKAUDIT_WORK_BUDGET, else 1e13)"),
        quiet: Optional[bool] = typer.Option(
            None, "--quiet/--no-quiet", "-q", metavar=_NO_METAVAR,
            help="No progress on stderr; stdout still gives the verdict and what was not run. (default: "
                 "--no-quiet: progress on stderr, plain lines when it is not a terminal)"),
    ) -> None:
        """Audit a model: membership attacks, PDTP and the DTP-1 rule, attribute and property inference; a verdict."""
        import json

        from ..audit.config import check_outputs_spare_inputs, load_config_and_options, make_config, make_run_options
        from ..audit.output import check_out_writable
        from ..audit.pipeline import check_inputs as _check_inputs
        from ..audit.pipeline import run_audit
        from ..exceptions import AuditInterrupted, InvalidParameterError

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
            predictions_test=predictions_test, profile=profile, seed=seed, backend=backend, address=address, device=device,
            cache_dir=cache_dir, n_members=n_members, n_nonmembers=n_nonmembers, dtp_rule=dtp_rule,
            policy=policy, release=release, epsilon_budget=epsilon_budget, claimed_epsilon=claimed_epsilon, exit_code=exit_code,
            model_dir=model_dir, text_column=text_column,
            tokenizer=tokenizer, reference_dir=reference_dir or None, logprobs_column=logprobs_column,
            dataset_inference=dataset_inference,
        )
        run_flags = dict(out=out, check_inputs=check_inputs, quiet=quiet, memory_budget=memory_budget,
                         work_budget=work_budget)
        if config:
            cfg, opts = load_config_and_options(config, **flags, **run_flags)
        else:
            cfg = make_config(**{k: v for k, v in flags.items() if v is not None})
            opts = make_run_options(**{k: v for k, v in run_flags.items() if v is not None})
        out_dir = opts.out
        check_out_writable(out_dir, name="--out")  # the library names the argument; here the flag
        check_outputs_spare_inputs(cfg, out_dir)
        if opts.check_inputs:
            summ = _check_inputs(cfg, out_dir, memory_budget=opts.memory_budget, work_budget=opts.work_budget)
            d, t = summ["data"], summ["target"]
            if d.get("kind") == "text":
                typer.echo(f"inputs: {d['n_members']} member and {d['n_nonmembers']} non-member texts")
                typer.echo(f"model: {t['description']}")
                for r in t.get("reference_models") or []:
                    typer.echo(f"reference model: {r}")
                typer.echo(f"wrote {out_dir}/inputs.json")
                return
            typer.echo(f"inputs: {d['n_members']} members, {d['n_nonmembers']} non-members, "
                       f"{d['n_population']} population records, {len(d['class_names'])} classes, "
                       f"{d['n_features']} encoded features")
            typer.echo(f"model: {t['description']}")
            typer.echo(f"accuracy: {t['train_accuracy']:.4f} on members, {t['test_accuracy']:.4f} on non-members")
            if summ.get("recipe"):
                r = summ["recipe"]
                typer.echo(f"recipe ({r['n_reference']} models retrained, {r['seconds']:.1f} s): {r['sentence']}")
            typer.echo(f"wrote {out_dir}/inputs.json")
            return
        command = "leakaudit " + " ".join(shlex.quote(a) for a in sys.argv[1:]) if sys.argv[1:] else "leakaudit audit"
        try:
            res = run_audit(cfg, out_dir, command=command, verbose=not opts.quiet, memory_budget=opts.memory_budget,
                            work_budget=opts.work_budget)
        except AuditInterrupted as exc:
            typer.echo(f"leakaudit: {exc}", err=True)
            raise typer.Exit(130) from None
        if not opts.quiet:
            peak = res.resources.get("peak_memory_mb")
            typer.echo("time by stage: " + ", ".join(f"{k} {v:.1f} s" for k, v in res.timings.items())
                       + (f"; peak memory {peak:.0f} MB" if peak is not None else ""), err=True)
        typer.echo(f"wrote {out_dir}/results.json, {out_dir}/records.csv, {out_dir}/report.html, "
                   f"{out_dir}/evidence.json")
        if res.data.get("n_truncated"):
            typer.echo(f"note: {res.data['n_truncated']} text(s) longer than the model's context of "
                       f"{res.target.get('context_length')} tokens were cut to it (records.csv: truncated = 1)")
        for line in summary_lines(res):
            typer.echo(line)
        if cfg.exit_code and res.verdict.exit_code:
            raise typer.Exit(res.verdict.exit_code)


def verdict_line(verdict, records=None) -> str:
    """The verdict in one line: ``verdict: INCONCLUSIVE. No check shows ...`` (the headline's own "Inconclusive:"
    prefix is not repeated); a member it names is named by its file and row, as in the report and records.csv."""
    from ..report import name_records

    head = name_records(verdict.headline, records)
    prefix = re.match(r"\s*(do not publish|publish|inconclusive)\s*:\s*", head, flags=re.IGNORECASE)
    if prefix and prefix.group(1).lower() == verdict.outcome:
        head = head[prefix.end():]
    return f"verdict: {verdict.outcome.upper()}. {head[:1].upper() + head[1:]}"


def summary_lines(res) -> list[str]:
    """What stdout ends with: the check counts, the verdict line, then every check that could not be measured and
    every analysis that did not run, each with what would enable it (a flag or an input, in words)."""
    v = res.verdict
    counts = {s: sum(c.status == s for c in v.checks) for s in ("exceeded", "passed", "not measurable")}
    below = sum(c.decision == "below" for c in v.checks)
    shown = (f" ({below} shown below {'its threshold' if below == 1 else 'their thresholds'})"
             if v.burden_of_proof == "safety shown" and counts["passed"] else "")
    lines = [f"checks: {counts['exceeded']} exceeded, {counts['passed']} passed{shown}, "
             f"{counts['not measurable']} not measurable; policy {v.policy} ({v.burden_of_proof})",
             verdict_line(v, getattr(res, "records", None))]
    for c in v.checks:
        if c.status == "not measurable":
            lines.append(f"  not measurable: {c.name}: {_with_flags(c.fix) if c.fix else _lower_first(c.sentence)}")
    for c in v.checks:
        if c.status == "passed" and c.decision == "undecided" and c.shows == "both" and v.burden_of_proof == "safety shown":
            lines.append(f"  not shown below: {c.name}: {_with_flags(c.fix) if c.fix else _lower_first(c.sentence)}")
    for sk in res.skipped:
        lines.append(f"  not run: {sk['name']}: {_lower_first(_plain_reason(sk))}; "
                     f"to run it: {enabling_hint(sk)}")
    return lines


#: What each input an analysis may lack (``Skipped.missing``: an attack input of ``Attack.needs``, or ``population``
#: / ``model``) means for the user, and what gives it
_INPUTS = {
    "population": "--population FILE (records of the same distribution, neither members nor non-members)",
    "reference": "the model itself (--model: a skops estimator, or a torch state_dict with --module), so that "
                 "reference models can be retrained",
    "model": "the model itself (--model: a skops estimator, or a torch state_dict with --module), so that "
             "reference models can be retrained",
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


def _plain_reason(skipped: dict) -> str:
    """A skipped analysis's reason; one that names only missing inputs (``missing``) says them in words."""
    reason, missing = skipped.get("reason", ""), skipped.get("missing") or []
    if missing and reason.startswith("needs ") and "(" not in reason:
        return "needs " + " and ".join(dict.fromkeys(_input_words(n).split(" (")[0] for n in missing))
    return reason


def enabling_hint(skipped) -> str:
    """The flag or input that would let a skipped analysis run, in words: its own ``fix`` when it has one, else
    what gives the inputs it names as ``missing`` (every analysis that lacks an input names it there)."""
    if skipped.get("fix"):
        return skipped["fix"]
    missing = skipped.get("missing") or []
    if missing:
        return "give " + " and ".join(dict.fromkeys(_input_words(n) for n in missing))
    return "see the report's 'not run' section"


def _with_flags(fix: str) -> str:
    """A check's fix with the settings it names written as the flag or TOML key a user gives."""
    fix = re.sub(r"\bthresholds\.(\w+)", r"\1 in the [thresholds] table of a --config file", fix)
    fix = re.sub(r"\(profile (\w+)\)", r"(--profile \1)", fix)
    fix = re.sub(r"\bdtp_test_max_records\b", "the re-measured records (dtp_test_max_records)", fix)
    if "--" not in fix and re.search(r"\b(non-)?members\b|\brecords\b", fix):
        fix += " (in the --train / --test files, or --data; the demo: --n-members / --n-nonmembers)"
    return fix


def _lower_first(s: str) -> str:
    return s[:1].lower() + s[1:] if s[:2] != s[:2].upper() else s
