"""Membership audit of causal language models: loading, per-token scoring, attacks and the blind baseline.

Modules: :mod:`~leakaudit.lm.load` (a local transformers directory, safetensors only; peft adapters),
:mod:`~leakaudit.lm.score` (batched per-token log-probabilities, or arrays given), :mod:`~leakaudit.lm.attacks`
(loss, zlib, Min-K%, Min-K%++, reference ratio, offline LiRA and RMIA), :mod:`~leakaudit.lm.blind` (the text-only
baseline of Das et al.), :mod:`~leakaudit.lm.dataset_inference` (was a set of texts used? Maini et al.'s set-level
test, guarded by the blind baseline), :mod:`~leakaudit.lm.canary` (canary audit of fine-tuning: designed canaries and
the one-run epsilon lower bound, Panda et al.), :mod:`~leakaudit.lm.extraction` (can the training text be drawn out?
Hayes et al.'s (n, p)-extraction against the non-members' base rate, generations, the most extractable spans),
:mod:`~leakaudit.lm.texts` (reading texts from files) and
:mod:`~leakaudit.lm.demo` (a small GPT-2 model fine-tuned here on SpamAssassin e-mails). torch and transformers are
imported only when used.
"""

from .attacks import run_lm_attacks
from .blind import BlindBaseline, blind_baseline, blind_baseline_scores
from .extraction import Extraction, Sampler, extraction_audit
from .score import TokenScores, score_texts, scores_from_arrays

__all__ = ["BlindBaseline", "Extraction", "Sampler", "TokenScores", "blind_baseline", "blind_baseline_scores",
           "extraction_audit", "register_attacks", "run_lm_attacks", "score_texts", "scores_from_arrays"]


def register_attacks() -> None:
    """leakaudit's own ``leakaudit.attacks`` entry point (pyproject.toml): loading it imported this package, whose
    :mod:`~leakaudit.lm.attacks` registered the built-in text attacks; nothing is left to do."""
