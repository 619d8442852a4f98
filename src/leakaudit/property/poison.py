"""Algorithm 1 of Chase et al.: choosing the poisoning data (spec Sec. 3.2).

If the property is rare (``t0 + t1 < 1``) the poison is drawn from ``D+``,
otherwise from ``D-``; all poison points get the label that is in the minority
among the sampled records (``alpha = mean label``; label 0 if ``alpha > 0.5``,
else 1). ``variant`` forces one of Remark 10's four variants instead.
"""

from __future__ import annotations

import numpy as np

from .._random import RandomStateLike, check_random_state
from .._validation import check_choice, check_scalar
from .game import Poison, PropertyData, check_rate, n_poison
from .theory import attacked_subpopulation

__all__ = ["choose_poison", "VARIANTS"]

#: "auto" is Algorithm 1; the others are Remark 10's variants ("X+1" = (X+, 1), ...).
VARIANTS = ("auto", "X+1", "X+0", "X-1", "X-0")


def choose_poison(
    data: PropertyData,
    pool_idx: np.ndarray,
    *,
    t0: float,
    t1: float,
    poison_rate: float,
    n_train: int,
    variant: str = "auto",
    alpha_source: str = "sample",
    random_state: RandomStateLike = None,
) -> Poison:
    """Algorithm 1: draw ``round(p n)`` records of the attacked sub-population and fix their label.

    Parameters
    ----------
    data : PropertyData
    pool_idx : ndarray of int
        The adversary's rows (its sample access to ``D+`` and ``D-``).
    t0, t1 : float
        The two candidate fractions, ``t0 < t1``.
    poison_rate : float in [0, 1)
        ``p``; ``p = 0`` gives an empty poison (the no-poisoning baseline).
    n_train : int
        Victim training-set size ``n``.
    variant : {"auto", "X+1", "X+0", "X-1", "X-0"}, default="auto"
        "auto" is Algorithm 1 (sub-population from ``t0 + t1 < 1``, label from alpha).
    alpha_source : {"sample", "pool"}, default="sample"
        Compute alpha on the ``m`` sampled records (Algorithm 1 line 7) or on the
        whole sub-population of the pool (spec [Choice]: stabler when alpha ~ 0.5).
    random_state : None, int or Generator

    Returns
    -------
    Poison
    """
    check_choice(variant, name="variant", choices=VARIANTS)
    check_choice(alpha_source, name="alpha_source", choices=("sample", "pool"))
    check_rate(poison_rate)
    check_scalar(n_train, name="n_train", kind=(int, np.integer), min_val=1)
    rng = check_random_state(random_state)
    pool_idx = np.asarray(pool_idx)
    sub, _, _ = attacked_subpopulation(t0, t1)  # Algorithm 1 lines 1-6 (and t0 < t1 checked)
    if variant != "auto":
        sub = "f" if variant[1] == "+" else "1-f"
    want = sub == "f"
    candidates = pool_idx[data.f[pool_idx] == want]
    m = n_poison(n_train, poison_rate)
    idx = rng.choice(candidates, size=m, replace=m > candidates.size) if m else np.empty(0, dtype=np.int64)
    ref = idx if alpha_source == "sample" else candidates
    alpha = float(data.y[ref].mean()) if ref.size else float("nan")  # Algorithm 1 line 7
    if variant == "auto":
        label = 0 if alpha > 0.5 else 1  # Algorithm 1 lines 8-11
    else:
        label = int(variant[2])
    name = f"X{'+' if want else '-'}{label}"
    return Poison(X=data.X[idx], label=label, indices=idx, subpopulation=sub, alpha=alpha, variant=name)
