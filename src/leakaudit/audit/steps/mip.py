"""Audit stage: the MIP noise (Izzo et al., Algorithm 1) that would give eta-MIP, and its accuracy cost.

Applies to models whose parameters are one vector of fixed length that leakaudit can read and set: its
MLPs (the demo, a scikit-learn MLPClassifier retrained by TorchMLP), a torch module class it retrains, and bare
scikit-learn linear models and MLPClassifiers retrained by scikit-learn. Forests (trees of varying shape) and
Pipelines (preprocessing fitted on the members beside the parameters) are skipped, saying why. Algorithm 1 trains on a random half of
the members, estimates each coordinate's spread from B runs on random halves
(here of the full member set: ``sigma_split="half_of_full"``, which depends on
the data set only; the paper's choice of halves of the training half can leak
membership through coordinates that are constant on it, see docs/mip.md), and
adds Corollary 8's noise. Reported: the noise constant, its size, and the test
accuracy with and without it (Clopper-Pearson intervals; the cost with a paired interval), with a sentence.

eta-MIP (Izzo et al., Definition 2): no attacker, shown the released parameters and a record drawn from the
training set or from outside it with equal chance, guesses which with accuracy above 1/2 + eta.
"""

from __future__ import annotations

import warnings

import numpy as np

from ..result.checks import GIVE_MODEL, Analysis, Skipped
from ..context import AuditContext

__all__ = ["MIP_ETA", "accuracy_cost", "mip_analysis"]

MIP_ETA = 0.05


def _codec(target, X: np.ndarray) -> tuple[tuple | None, str]:
    """The (extract, rebuild) pair for the target's retrained models (the learner's
    :meth:`~leakaudit.learners.Learner.parameter_codec`), or None and why the mechanism does not apply: Izzo et
    al.'s mechanism adds noise to one parameter vector of fixed length."""
    from ...exceptions import UnsupportedError

    try:
        return target.learner.parameter_codec(X, fitted=target.model), ""
    except UnsupportedError as exc:
        return None, str(exc)


def accuracy_cost(correct_without: np.ndarray, correct_with: np.ndarray, *, confidence: float = 0.95) -> dict:
    """Test accuracy without and with the noise, and the cost (their difference), each with an interval.

    Parameters
    ----------
    correct_without, correct_with : array-like of bool, shape (n_test,)
        Whether the model without (with) the noise classifies each test record correctly (the same records).

    Returns
    -------
    dict: ``test_accuracy_without_noise`` / ``_with_noise`` and their ``_interval`` (Clopper-Pearson),
    ``accuracy_cost`` (without minus with) and ``accuracy_cost_interval`` (normal approximation on the paired
    differences, clipped to [-1, 1]), ``n_test``.
    """
    from ...metrics import clopper_pearson, paired_mean_interval

    a, b = np.asarray(correct_without, bool), np.asarray(correct_with, bool)
    n = int(a.size)
    cost, (lo, hi) = paired_mean_interval(a, b, confidence=confidence)
    return {
        "test_accuracy_without_noise": float(a.mean()),
        "test_accuracy_without_noise_interval": list(clopper_pearson(int(a.sum()), n, confidence=confidence)),
        "test_accuracy_with_noise": float(b.mean()),
        "test_accuracy_with_noise_interval": list(clopper_pearson(int(b.sum()), n, confidence=confidence)),
        "accuracy_cost": cost,
        "accuracy_cost_interval": [max(-1.0, lo), min(1.0, hi)],
        "n_test": n,
    }


def mip_analysis(ctx: AuditContext) -> Analysis:
    """The noise that gives eta-MIP (Izzo et al.) and its accuracy cost (informational: no check)."""
    skipped: list[dict] = []
    out = _mip(ctx.cfg, ctx.data, ctx.target, ctx.seeds, skipped)
    return Analysis(name="mip", summary=out, skipped=tuple(Skipped(**s) for s in skipped))


def _mip(cfg, data, target, seeds: dict, skipped: list) -> dict | None:
    from ...mip.mechanism import learner_train_many, mip_noise_addition

    if target.learner is None:
        skipped.append({"name": "MIP noise (Izzo et al.)",
                        "reason": "needs the training algorithm (the model, not only its predictions)",
                        "fix": GIVE_MODEL, "missing": ["model"]})
        return None
    X_mem, X_non, _ = target.inputs(data)
    codec, why = _codec(target, X_mem)
    if codec is None:
        skipped.append({"name": "MIP noise (Izzo et al.)", "reason": why, "missing": ["parameters"]})
        return None
    extract, rebuild = codec
    B = {"smoke": 8, "standard": 32, "thorough": 128}[cfg.profile]
    train_many = learner_train_many(target.learner, extract, n_classes=data.n_classes)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rel = mip_noise_addition(None, X_mem, data.y_mem, eta=MIP_ETA, B=B, sigma_split="half_of_full",
                                 train_many=train_many, random_state=seeds["mip"])
    acc = accuracy_cost(rebuild(rel.theta).predict(X_non) == data.y_non,
                        rebuild(rel.theta_hat).predict(X_non) == data.y_non, confidence=cfg.confidence)
    noise, norm = float(np.linalg.norm(rel.noise)), float(np.linalg.norm(rel.theta))
    lo, hi = acc["accuracy_cost_interval"]
    pc = f"{cfg.confidence * 100:g}%"
    def num(x: float) -> str:  # 74,352 rather than 7.435e+04
        return f"{x:,.0f}" if abs(x) >= 1000 else f"{x:.4g}"

    ratio = f" ({num(noise / norm)} times their size)" if norm > 0 else ""
    a0, a1 = acc["test_accuracy_without_noise"] * 100, acc["test_accuracy_with_noise"] * 100
    sentence = (f"to make the released parameters {MIP_ETA:g}-MIP (no attacker guesses whether a record was trained on "
                f"with accuracy above {50 + MIP_ETA * 100:g}%), Izzo et al.'s mechanism adds noise of norm "
                f"{num(noise)} to parameters of norm {num(norm)}{ratio}; on the {acc['n_test']:,} non-members, the "
                f"test accuracy of the model it trains on half of the members {'falls' if a1 < a0 else 'goes'} from "
                f"{a0:.1f}% to {a1:.1f}% with the noise: a cost of {acc['accuracy_cost'] * 100:.1f} points ({pc} "
                f"interval {lo * 100:.1f} to {hi * 100:.1f})")
    return {
        "eta": MIP_ETA,
        "M": rel.M,
        "B": B,
        "constant_c": float(rel.c),
        "parameters": int(rel.d),
        "parameters_with_noise": int(rel.d_eff),
        "noise_norm": noise,
        "parameter_norm": norm,
        **acc,
        "confidence": float(cfg.confidence),
        "sentence": sentence,
        "method": "Algorithm 1 on a random half of the members, Corollary 8 noise (Laplace radius, Cor 11 constant), "
                  "sigma from halves of all members",
    }
