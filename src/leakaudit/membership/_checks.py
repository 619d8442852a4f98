"""Contract checks every membership attack must pass (scikit-learn's ``estimator_checks`` style).

Each ``check_attack_*(attack)`` takes an :class:`~leakaudit.membership.Attack`
(or a registry name), builds seeded synthetic inputs, and raises
``AssertionError`` naming the attack and the broken contract. The shared suite
runs them on every registered attack via :func:`all_checks`.

The synthetic world (:func:`synthetic_inputs`): each record has a difficulty
d_i ~ N(0, 1); a model that trained on the record gives its true class the
logit ``d_i + signal + noise``, a model that did not, ``d_i + noise``. The
target and K reference models (complementary pairs) follow the same law, so
``signal = 0`` is a null model (membership leaves no trace). For label-only attacks the target also answers labels
on any input (``inputs.extra["predict_labels"]``): a 1-nearest-neighbour model on the two pure-noise features,
fitted on the members (on the population records when ``signal = 0``), so it memorises its training records'
labels, which the noise features do not predict.
"""

from __future__ import annotations

import numpy as np

from ..metrics import auc, bootstrap_auc_ci
from ._base import AttackInputs, ReferenceSet, cross_entropy_loss, paired_half_masks
from ._registry import as_attack, available_attacks

__all__ = [
    "synthetic_inputs",
    "check_attack_scores_shape",
    "check_attack_higher_means_member",
    "check_attack_order_invariant",
    "check_attack_null_auc",
    "check_attack_swap_members",
    "all_checks",
]


def _probs_from_logit(logit, y, C):
    p_true = 1.0 / (1.0 + np.exp(-logit))
    out = np.repeat(((1.0 - p_true) / (C - 1))[..., None], C, axis=-1)
    np.put_along_axis(out, np.broadcast_to(y.reshape(-1, 1), out.shape[:-1] + (1,)), p_true[..., None], axis=-1)
    return out


def synthetic_inputs(n: int = 200, n_population: int = 100, n_reference: int = 8, n_classes: int = 3,
                     signal: float = 2.0, noise: float = 0.5, member_mask=None, seed: int = 0):
    """Seeded synthetic attack inputs and the truth.

    Returns
    -------
    inputs : AttackInputs
        Target outputs, labels, features, reference and population arrays.
    is_member : ndarray of int (n,)
    """
    rng = np.random.default_rng(seed)
    N = n + n_population
    C = n_classes
    y = rng.integers(0, C, N)
    X = np.hstack([np.eye(C)[y] + 0.3 * rng.normal(size=(N, C)), rng.normal(size=(N, 2))])
    diff = rng.normal(size=N)
    if member_mask is None:
        member_mask = np.zeros(N, bool)
        member_mask[rng.permutation(n)[: n // 2]] = True
    else:
        member_mask = np.r_[np.asarray(member_mask, bool), np.zeros(n_population, bool)]
    ref_in = paired_half_masks(N, n_reference, rng)
    t_logit = diff + signal * member_mask + noise * rng.normal(size=N)
    r_logit = diff[None] + signal * ref_in + noise * rng.normal(size=(n_reference, N))
    probs = _probs_from_logit(t_logit, y, C)
    ref = ReferenceSet(_probs_from_logit(r_logit, y, C), ref_in)
    aud, pop = np.arange(n), np.arange(n, N)
    m = member_mask[aud].astype(int)
    trained = np.flatnonzero(member_mask) if signal > 0 else pop
    inputs = AttackInputs(
        probs=probs[aud], y=y[aud], X=X[aud], reference=ref.subset(aud),
        population_probs=probs[pop], population_y=y[pop], population_reference=ref.subset(pop),
        train_loss=float(np.mean(cross_entropy_loss(probs[aud][m == 1], y[aud][m == 1]))),
        extra={"predict_labels": _NearestLabel(X[trained][:, -2:], y[trained])},
    )
    return inputs, m


class _NearestLabel:
    """Labels of a 1-nearest-neighbour model on the last two features (the synthetic world's pure noise)."""

    def __init__(self, X_train, y_train):
        self.X_train, self.y_train = X_train, y_train

    def __call__(self, Z):
        Z = np.asarray(Z, dtype=float)[:, -2:]
        out = np.empty(len(Z), dtype=np.int64)
        for s in range(0, len(Z), 4096):
            d = ((Z[s:s + 4096, None, :] - self.X_train[None]) ** 2).sum(axis=2)
            out[s:s + 4096] = self.y_train[d.argmin(axis=1)]
        return out


def check_attack_scores_shape(attack) -> None:
    """Scores are finite floats of shape (n,); decisions are 0/1 of shape (n,)."""
    att = as_attack(attack)
    inputs, _ = synthetic_inputs()
    res = att.run(inputs)
    s, d = res.scores_array, res.decisions_array
    assert s.shape == (inputs.n,), f"{att.name}: scores have shape {s.shape}, expected ({inputs.n},)"
    assert np.all(np.isfinite(s)), f"{att.name}: scores contain NaN or inf"
    assert d.shape == (inputs.n,) and np.isin(d, (0, 1)).all(), f"{att.name}: decisions must be 0/1 of shape (n,)"


def check_attack_higher_means_member(attack, *, min_auc: float = 0.6) -> None:
    """With a strong membership signal the attack's AUC exceeds ``min_auc`` (higher score = member)."""
    att = as_attack(attack)
    inputs, m = synthetic_inputs(signal=3.0, seed=1)
    a = auc(m, att.run(inputs).scores_array)
    assert a > min_auc, f"{att.name}: AUC {a:.3f} <= {min_auc} on a strongly leaking model; are scores reversed?"


def check_attack_order_invariant(attack) -> None:
    """Permuting the audited records permutes the scores the same way."""
    att = as_attack(attack)
    inputs, _ = synthetic_inputs(seed=2)
    perm = np.random.default_rng(3).permutation(inputs.n)
    s = att.run(inputs).scores_array
    s_perm = as_attack(attack).run(inputs.subset(perm)).scores_array
    # rtol 1e-6: float32 attack networks (the shadow attack's) round differently when a row sits at another
    # position of a BLAS block (seen: 2.4e-7 relative); an order-dependent attack differs far more
    np.testing.assert_allclose(s_perm, s[perm], rtol=1e-6, atol=1e-9,
                               err_msg=f"{att.name}: scores depend on the order of the records")


def check_attack_null_auc(attack, *, n: int = 600) -> None:
    """On a null model (membership leaves no trace) the AUC's 95% interval contains 0.5."""
    att = as_attack(attack)
    inputs, m = synthetic_inputs(n=n, signal=0.0, seed=4)
    s = att.run(inputs).scores_array
    lo, hi = bootstrap_auc_ci(m, s, n_boot=500, random_state=0)
    assert lo <= 0.5 <= hi, f"{att.name}: null-model AUC interval [{lo:.3f}, {hi:.3f}] excludes 0.5"


def check_attack_swap_members(attack, *, tol: float = 0.1) -> None:
    """Swapping members and non-members gives 1 − AUC.

    Exactly for the same scores with labels swapped, and approximately (within
    ``tol``) when the target model is trained on the non-members instead.
    """
    att = as_attack(attack)
    inputs, m = synthetic_inputs(signal=2.0, seed=5)
    s = att.run(inputs).scores_array
    a = auc(m, s)
    assert abs(auc(1 - m, s) - (1 - a)) < 1e-12, f"{att.name}: AUC with swapped labels is not 1 − AUC"
    inputs2, m2 = synthetic_inputs(signal=2.0, seed=5, member_mask=(1 - m).astype(bool))
    a2 = auc(m, as_attack(attack).run(inputs2).scores_array)
    assert abs(a2 - (1 - a)) < tol, (f"{att.name}: training the target on the non-members gives AUC {a2:.3f} "
                                     f"against the original labels; expected about 1 − {a:.3f}")


CHECKS = (check_attack_scores_shape, check_attack_higher_means_member, check_attack_order_invariant,
          check_attack_null_auc, check_attack_swap_members)


def all_checks():
    """(attack name, check) pairs for every registered attack, for ``pytest.mark.parametrize``."""
    return [(name, chk) for name in available_attacks() for chk in CHECKS]
