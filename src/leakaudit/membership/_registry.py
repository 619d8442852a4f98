"""Names of the membership attacks, for the CLI, the audit and the shared checks."""

from __future__ import annotations

from collections.abc import Callable

from .._names import NameTable
from ._base import Attack

__all__ = ["ATTACKS", "make_attack", "available_attacks", "describe"]


def _loss():
    from .threshold import LossThresholdAttack

    return LossThresholdAttack()


def _adv1():
    from .threshold import BoundedLossAdversary

    return BoundedLossAdversary()


def _lira(**kw):
    from .lira import LiRA

    return LiRA(**kw)


def _rmia(**kw):
    from .rmia import RMIA

    return RMIA(**kw)


def _bavaria(**kw):
    from .bavaria import BaVarIA

    return BaVarIA(**kw)


def _quantile(**kw):
    from .quantile import QuantileRegressionAttack

    return QuantileRegressionAttack(**kw)


def _shadow(**kw):
    from .shadow import ShadowModelAttack

    return ShadowModelAttack(**kw)


def _distance():
    from .distance import DistanceAttack

    return DistanceAttack()


def _frequency():
    from .frequency import FrequencyAttack

    return FrequencyAttack()


#: name -> (factory, one-line description)
ATTACKS: NameTable[tuple[Callable[..., Attack], str]] = NameTable("attack", {
    "loss": (_loss, "loss threshold at the average training loss (Yeom et al. Table I; LOSS attack)"),
    "yeom_adv1": (_adv1, "bounded-loss adversary with 0-1 loss: member iff correctly classified (Yeom Adv. 1)"),
    "lira": (lambda: _lira(), "LiRA online, per-record variance (Carlini et al. 2022)"),
    "lira_fixed": (lambda: _lira(fix_variance=True), "LiRA online, fixed variance"),
    "lira_offline": (lambda: _lira(online=False), "LiRA offline (out models only)"),
    "rmia": (lambda: _rmia(), "RMIA online, gamma=2 (Zarifzadeh et al. 2024)"),
    "rmia_offline": (lambda: _rmia(online=False), "RMIA offline, a=0.3"),
    "bavaria": (lambda: _bavaria(), ("LiRA with an empirical-Bayes normal-inverse-gamma prior on per-record "
                                     "variances, Student-t predictive (BaVarIA-style, Brannvall 2026)")),
    "quantile": (lambda: _quantile(),
                 "quantile regression on public non-members, no reference models (Bertran et al. 2023)"),
    "shadow": (lambda: _shadow(random_state=0),
               "shadow-model attack, one attack net with the label as input (Shokri et al. as Long ran it)"),
    "shadow_per_class": (lambda: _shadow(per_class=True, use_features=False, random_state=0),
                         "shadow-model attack, one attack net per class (Shokri et al.'s original)"),
    "distance": (_distance, "distance-based targeted attack with binned outputs (Long et al.)"),
    "frequency": (_frequency, "frequency-based targeted attack, Laplace-smoothed counts (Long et al.)"),
})


def available_attacks() -> list[str]:
    return list(ATTACKS.names())


def describe(name: str) -> str:
    return ATTACKS.get(name)[1]


def make_attack(name: str, **params) -> Attack:
    """A fresh attack with its registry defaults, then ``params`` set on it (``set_params``)."""
    attack = ATTACKS.get(name)[0]()
    return attack.set_params(**params) if params else attack
