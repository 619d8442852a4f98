"""``leakaudit lm-dataset-inference`` and ``leakaudit lm-canary-audit insert|score``: set-level questions about a
causal language model (was a collection used? how much can fine-tuning leak, in epsilon?)."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from ._echo import echo
from ._typer import Command, Group, not_given

__all__ = ["register", "run_dataset_inference", "run_canary_insert", "run_canary_score"]

_DEVICE_HELP = "Where the language models score: cpu, cuda, cuda:N or auto (a GPU when one is visible)."


def _quiet() -> None:
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()
    hf_logging.set_verbosity_error()


def run_dataset_inference(*, model_dir: Path, tokenizer: Optional[Path], reference_dir: list[Path], suspect: Path,
                          unseen: Path, text_column: str, alpha: float, test: str, power: bool, n_repeats: int,
                          seed: int, out: Path, device: str = "cpu", on_step=None) -> dict:
    """Read the sets, score them, run :func:`leakaudit.lm.dataset_inference.dataset_inference`, write
    ``dataset_inference.json``; return what it holds."""
    from .._results import to_strict_jsonable, write_json_atomic
    from .._validation import check_scalar
    from ..lm.dataset_inference import TESTS, dataset_inference
    from ..lm.load import load_causal_lm
    from ..lm.score import score_texts
    from ..learners._threads import default_threads
    from ..lm.texts import read_texts
    from .._validation import check_choice

    step = on_step or (lambda doing: None)
    check_scalar(alpha, name="--alpha", min_val=0.0, max_val=1.0, include_min=False, include_max=False)
    check_choice(test, name="--test", choices=TESTS)
    check_scalar(n_repeats, name="--power-repeats", kind=int, min_val=1)
    _quiet()
    step("reading the suspect and unseen texts")
    sus, uns = read_texts(suspect, text_column), read_texts(unseen, text_column)
    step("loading the language model")
    lm = load_causal_lm(model_dir, tokenizer, device=device)
    refs = [load_causal_lm(d, what="reference model directory", device=device) for d in reference_dir]
    texts, n = sus + uns, default_threads()
    step(f"scoring {len(texts):,} texts under {1 + len(refs)} model{'s' if refs else ''}")
    ts = score_texts(lm.model, lm.tokenizer, texts, max_length=lm.context_length, n_threads=n)
    ref_ts = [score_texts(r.model, r.tokenizer, texts, max_length=r.context_length, n_threads=n, distribution=False)
              for r in refs]
    step("the set-level test, the blind baseline and the power curve")
    res = dataset_inference(sus, uns, ts, ref_ts, alpha=alpha, test=test, power=power, n_repeats=n_repeats,
                            random_state=seed)
    summary = {"command": "lm-dataset-inference", "model": lm.description,
               "reference_models": [r.description for r in refs], "suspect": str(suspect), "unseen": str(unseen),
               "seed": seed, "n_truncated": int(ts.n_truncated), **res.to_dict()}
    step("writing the results")
    out.mkdir(parents=True, exist_ok=True)
    write_json_atomic(out / "dataset_inference.json", to_strict_jsonable(summary))
    return summary


def _write_texts(path: Path, texts: list[str], column: str) -> None:
    import json

    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as fh:
        for t in texts:
            fh.write(json.dumps({column: t}, ensure_ascii=False) + "\n")


def run_canary_insert(*, data: Path, text_column: str, tokenizer: Optional[Path], design: str, m: int,
                      secret_length: int, seed: int, out: Path) -> dict:
    """Design the canaries, write ``canaries.json`` (the auditor's key) and ``train_with_canaries.jsonl``."""
    from ..lm.canary import insert_canaries, make_canaries
    from ..lm.texts import read_texts

    design = design.replace("-", "_")
    texts = read_texts(data, text_column)
    tok = None
    if design == "rare_token":
        if tokenizer is None:
            from ..exceptions import InvalidInputError

            raise InvalidInputError("--design rare-token needs --tokenizer DIR (the tokenizer of the model to be "
                                    "fine-tuned): the rarest tokens are its own")
        from ..lm.load import load_tokenizer

        _quiet()
        tok = load_tokenizer(tokenizer)
    c = make_canaries(texts, m=m, design=design, tokenizer=tok, secret_length=secret_length, random_state=seed)
    aug = insert_canaries(texts, c, random_state=seed)
    out.mkdir(parents=True, exist_ok=True)
    c.to_json(out / "canaries.json")
    _write_texts(out / "train_with_canaries.jsonl", aug, text_column)
    return {"m": c.m, "n_included": int((c.included == 1).sum()), "n_texts": len(texts), "n_augmented": len(aug),
            "design": c.design, "new_tokens": c.new_tokens}


def run_canary_score(*, canaries: Path, model_dir: Path, tokenizer: Optional[Path], claimed_epsilon: float,
                     delta: float, confidence: float, bound: str, out: Path, device: str = "cpu",
                     on_step=None) -> dict:
    """Score the canaries' secrets under the fine-tuned model and write ``canary_audit.json``."""
    from dataclasses import asdict

    from .._results import to_strict_jsonable, write_json_atomic
    from .._validation import check_choice, check_scalar
    from ..dpaudit.search import BOUNDS
    from ..lm.canary import canary_audit, read_canaries, secret_scores
    from ..learners._threads import default_threads
    from ..lm.load import load_causal_lm

    step = on_step or (lambda doing: None)
    check_scalar(claimed_epsilon, name="--epsilon", min_val=0.0)
    check_scalar(delta, name="--delta", min_val=0.0, max_val=1.0, include_max=False)
    check_scalar(confidence, name="--confidence", min_val=0.0, max_val=1.0, include_min=False, include_max=False)
    check_choice(bound, name="--bound", choices=BOUNDS)
    _quiet()
    step("reading the canaries")
    c = read_canaries(canaries)
    step("loading the fine-tuned model")
    lm = load_causal_lm(model_dir, tokenizer, device=device)
    step(f"scoring {c.m:,} canary secrets")
    s = secret_scores(lm.model, lm.tokenizer, c, max_length=lm.context_length, n_threads=default_threads())
    res = canary_audit(c, s, claimed_epsilon=claimed_epsilon, delta=delta, confidence=confidence, bound=bound)
    summary = {"command": "lm-canary-audit score", "model": lm.description, "canaries": str(canaries),
               **asdict(res), "scores": s.tolist()}
    step("writing the results")
    out.mkdir(parents=True, exist_ok=True)
    write_json_atomic(out / "canary_audit.json", to_strict_jsonable(summary))
    return summary


def register(app: typer.Typer) -> None:
    """Add ``leakaudit lm-dataset-inference`` and ``leakaudit lm-canary-audit insert|score``."""

    @app.command("lm-dataset-inference", cls=Command)
    def lm_dataset_inference(
        model_dir: Path = typer.Option(..., "--model-dir", help="The language model (transformers directory, "
                                                                "safetensors)."),
        suspect: Path = typer.Option(..., "--suspect", help="Texts that may have been used (JSONL, CSV, Parquet)."),
        unseen: Path = typer.Option(..., "--unseen", help="Texts of the same distribution known not to have been "
                                                          "used."),
        text_column: str = typer.Option("text", "--text-column", help="The column holding the texts."),
        tokenizer: Path = not_given("--tokenizer", "Tokenizer directory.", default="the model's"),
        reference_dir: list[Path] = typer.Option([], "--reference-dir",
                                                 help="A reference model (e.g. the base before fine-tuning); "
                                                      "repeatable. Adds the reference-ratio feature. "
                                                      "[default: none]"),
        alpha: float = typer.Option(0.05, "--alpha", help="Level of the set-level test and of the blind baseline."),
        test: str = typer.Option("welch", "--test", help="welch (one-sided Welch t-test, Maini et al.) or "
                                                         "permutation (exact for comparable sets)."),
        power: bool = typer.Option(True, "--power/--no-power", metavar="",
                                   help="Also measure the detection rate against set size on subsets of the two "
                                        "sets. (default: --power)"),
        n_repeats: int = typer.Option(100, "--power-repeats", help="Subsets drawn per set size."),
        seed: int = typer.Option(0, "--seed", help="Seed of the split, the guard and the power curve."),
        device: str = typer.Option("cpu", "--device", help=_DEVICE_HELP),
        out: Path = typer.Option(Path("runs/lm-dataset-inference"), "--out", help="Writes dataset_inference.json "
                                                                                  "here."),
    ) -> None:
        """Was the suspect set used to train the model? Set-level test (Maini et al. 2024), blind-baseline guard."""
        from .._interrupt import on_interrupt

        with on_interrupt("lm-dataset-inference", outputs=[out / "dataset_inference.json"],
                          doing="starting") as progress:
            s = run_dataset_inference(model_dir=model_dir, tokenizer=tokenizer, reference_dir=list(reference_dir),
                                      suspect=suspect, unseen=unseen, text_column=text_column, alpha=alpha,
                                      test=test, power=power, n_repeats=n_repeats, seed=seed, out=out,
                                      device=device, on_step=progress.step)
        t = s["test"]
        echo(f"{s['n_suspect']} suspect and {s['n_unseen']} unseen texts; features: {', '.join(s['features'])}")
        echo(f"set-level test on the held-out halves ({t['n_test'][0]} + {t['n_test'][1]} texts): "
                   f"p = {t['p_value']:.3g}, combined-score AUC {t['auc']:.3f}")
        if s["comparable"] is not None:
            echo(f"blind baseline (texts only): AUC {s['blind_auc']:.3f}, permutation p = "
                       f"{s['blind_p_value']:.3g}: {'comparable' if s['comparable'] else 'NOT comparable'}")
        if s["power"] is not None:
            pw = s["power"]
            shown = ", ".join(f"{n}: {r:.2f}" for n, r in zip(pw["sizes"], pw["rate"]))
            small = pw["smallest_detected"]
            echo(f"detection rate by set size ({pw['n_repeats']} subsets each): {shown}; smallest size "
                       f"detected in {pw['target']:.0%} of subsets: {small if small is not None else 'none'}")
        echo(f"verdict: {s['verdict']}: {s['sentence']}")
        echo(f"wrote {out}/dataset_inference.json")

    canary = typer.Typer(help="Canary audit of language-model fine-tuning (Panda et al. 2025): insert designed "
                              "canaries, then bound epsilon from the fine-tuned model.", no_args_is_help=True,
                         cls=Group)

    @canary.command("insert", cls=Command)
    def insert_cmd(
        data: Path = typer.Option(..., "--data", help="The fine-tuning texts (JSONL, CSV, Parquet)."),
        text_column: str = typer.Option("text", "--text-column", help="The column holding the texts."),
        tokenizer: Path = not_given("--tokenizer", "Tokenizer of the model to be fine-tuned (needed for rare-token "
                                                   "secrets)."),
        design: str = typer.Option("rare-token", "--design", help="rare-token (the tokenizer's tokens rarest in "
                                                                  "the data) or new-token (fresh tokens to add to "
                                                                  "the tokenizer)."),
        m: int = typer.Option(1000, "--m", help="Canaries; each is inserted with probability 1/2."),
        secret_length: int = typer.Option(8, "--secret-length", help="Tokens per secret."),
        seed: int = typer.Option(0, "--seed", help="Seed of the canaries and of which are inserted."),
        out: Path = typer.Option(Path("runs/lm-canaries"), "--out",
                                 help="Writes canaries.json (keep it) and train_with_canaries.jsonl here."),
    ) -> None:
        """Design canaries and write the fine-tuning set with the inserted ones."""
        from ..exceptions import InvalidParameterError

        if design not in ("rare-token", "new-token", "rare_token", "new_token"):
            raise InvalidParameterError(f"--design must be rare-token or new-token; got {design!r}")
        s = run_canary_insert(data=data, text_column=text_column, tokenizer=tokenizer, design=design, m=m,
                              secret_length=secret_length, seed=seed, out=out)
        echo(f"{s['n_included']} of {s['m']} {s['design'].replace('_', '-')} canaries inserted into "
                   f"{s['n_texts']} texts: wrote {out}/train_with_canaries.jsonl ({s['n_augmented']} texts) and "
                   f"{out}/canaries.json (which canaries were inserted: keep it for the audit)")
        if s["new_tokens"]:
            echo(f"before fine-tuning, add the {len(s['new_tokens'])} canary tokens (listed in canaries.json, "
                       "new_tokens) to the tokenizer: tokenizer.add_tokens(new_tokens); "
                       "model.resize_token_embeddings(len(tokenizer))")
        echo("fine-tune on the whole of train_with_canaries.jsonl, then run leakaudit lm-canary-audit score")

    @canary.command("score", cls=Command)
    def score_cmd(
        canaries: Path = typer.Option(..., "--canaries", help="canaries.json written by insert."),
        model_dir: Path = typer.Option(..., "--model-dir", help="The fine-tuned model (transformers directory, "
                                                                "safetensors)."),
        epsilon: float = typer.Option(..., "--epsilon", help="The claimed epsilon of the fine-tuning."),
        delta: float = typer.Option(1e-5, "--delta", help="The claimed delta."),
        tokenizer: Path = not_given("--tokenizer", "Tokenizer directory.", default="the model's"),
        confidence: float = typer.Option(0.95, "--confidence", help="Confidence of the lower bound."),
        bound: str = typer.Option("best", "--bound", help="best, steinke2023, fdp or gdp (leakaudit dp-audit)."),
        device: str = typer.Option("cpu", "--device", help=_DEVICE_HELP),
        out: Path = typer.Option(Path("runs/lm-canaries"), "--out", help="Writes canary_audit.json here."),
    ) -> None:
        """Score the canaries under the fine-tuned model: the one-run epsilon lower bound against the claim."""
        from .._interrupt import on_interrupt

        with on_interrupt("lm-canary-audit score", outputs=[out / "canary_audit.json"],
                          doing="starting") as progress:
            s = run_canary_score(canaries=canaries, model_dir=model_dir, tokenizer=tokenizer,
                                 claimed_epsilon=epsilon, delta=delta, confidence=confidence, bound=bound, out=out,
                                 device=device, on_step=progress.step)
        echo(f"{s['m']} canaries ({s['n_included']} inserted): secret-score AUC {s['auc']:.3f}; "
                   f"{s['correct']} of {s['guesses']} guesses right")
        echo(f"empirical lower bound: epsilon {s['epsilon_lower_bound']:.3f} at {s['confidence']:.0%} "
                   f"confidence ({s['bound']}), claimed {s['claimed_epsilon']:g} at delta {s['delta']:g}")
        echo(f"verdict: {s['verdict']}")
        echo(f"wrote {out}/canary_audit.json")

    app.add_typer(canary, name="lm-canary-audit")
