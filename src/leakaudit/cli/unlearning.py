"""``leakaudit unlearning-check``: is the forget set, after unlearning, as unknown as after retraining without it?"""

from __future__ import annotations

import re
from pathlib import Path

import typer

from ._echo import echo
from ._outputs import writing_into
from ._typer import Command, not_given

__all__ = ["HELP", "register"]

#: ``leakaudit --help``'s line for the command
HELP = {"unlearning-check": "Verify unlearning: is the forget set, after unlearning, as unknown to the model as "
                            "to one retrained without it? (forgotten / not forgotten / over-unlearned / "
                            "inconclusive; exit status 0 for each)"}

#: the library's names of the settings, as this command's flags (its messages name them)
_FLAGS = {"reference_models": "--reference-models", "tolerance": "--tolerance", "max_remembered": "--max-remembered",
          "confidence": "--confidence",
          "model_input": "--model-input", "random_state": "--seed"}


def register(app: typer.Typer) -> None:
    """Add ``leakaudit unlearning-check`` to the command line."""

    @app.command("unlearning-check", cls=Command, help=HELP["unlearning-check"])
    def unlearning_check(
        before: Path = typer.Option(..., "--before", help="The model before unlearning (skops, XGBoost JSON/UBJSON "
                                                          "or LightGBM text), trained on forget + retain."),
        after: Path = typer.Option(..., "--after", help="The model after unlearning the forget set (same formats)."),
        forget: Path = typer.Option(..., "--forget", help="CSV or Parquet: the records to forget."),
        retain: Path = typer.Option(..., "--retain", help="CSV or Parquet: the rest of the before-model's training "
                                                          "set."),
        nonmembers: Path = typer.Option(..., "--nonmembers", help="CSV or Parquet: records of the same "
                                                                  "distribution neither model trained on."),
        label: str = typer.Option(..., "--label", help="The label column."),
        retrained: Path = not_given("--retrained", "A model retrained on the retain set, checked two-sided against "
                                                   "the recipe's retrained models.",
                                    default="none; the recipe's models alone"),
        reference_models: int = typer.Option(16, "--reference-models",
                                             help="Models retrained by the before-model's recipe on the retain set "
                                                  "(4 to 10,000, within the work budget)."),
        tolerance: float = typer.Option(0.05, "--tolerance",
                                        help="Excess forget AUC over retraining within which, both ways, the set "
                                             "counts as forgotten (below minus it: over-unlearned)."),
        max_remembered: float = typer.Option(0.1, "--max-remembered",
                                             help="Share of forget records still behaving like members above which "
                                                  "the set is not forgotten, in [0, 1)."),
        confidence: float = typer.Option(0.95, "--confidence", help="Family-wise confidence of the verdict."),
        model_input: str = typer.Option("auto", "--model-input", help="auto, columns or encoded: what the models "
                                                                      "take (docs/input.md)."),
        seed: int = typer.Option(0, "--seed", help="Seed of the reference models."),
        out: Path = typer.Option(Path("runs/unlearning"), "--out", help="Writes unlearning.json here."),
    ) -> None:
        from .._results import write_json_atomic
        from ..audit.unlearning import unlearning_check as check
        from ..exceptions import InvalidParameterError

        with writing_into(out, "unlearning-check", ["unlearning.json"]) as progress:
            progress.step(f"retraining {reference_models} reference models and testing")
            try:
                result = check(before, after, forget, retain, nonmembers, label=label, retrained=retrained,
                               reference_models=reference_models, tolerance=tolerance,
                               max_remembered=max_remembered, confidence=confidence,
                               model_input=model_input, random_state=seed)
            except InvalidParameterError as exc:
                raise type(exc)(re.sub(r"\b(" + "|".join(_FLAGS) + r")\b", lambda m: _FLAGS[m.group(1)],
                                       str(exc))) from None
            progress.step("writing the results")
            write_json_atomic(out / "unlearning.json", result.to_dict())
        for line in result.summary():
            echo(line)
        echo(f"wrote {out}/unlearning.json")
