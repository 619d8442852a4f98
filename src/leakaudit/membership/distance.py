"""Long et al.'s distance-based targeted attack (§5.3; spec long-dtp.md §3.2).

For a target t the adversary trains pairs of shadow models with t ("in") and
without t ("out"), bins their outputs at x(t), averages them into ``pbar_in``
and ``pbar_out`` and accepts H1 ("member") iff::

    D_KL(q || pbar_out) > D_KL(q || pbar_in)          (strict: ties go to H0)

where q is the binned target output at x(t). The score is the difference
``D_KL(q || pbar_out) − D_KL(q || pbar_in)`` (natural log). All binned entries
are ≥ 0.005, so every KL is finite.
"""

from __future__ import annotations

import numpy as np

from .._random import check_random_state, spawn_seeds
from .._validation import check_indices, check_labels, check_matrix, check_scalar
from ..engine import Engine, resolve_engine
from ..exceptions import InvalidInputError
from ._base import Attack, AttackInputs, AttackResult, ReferenceSet, check_probs, check_reference_inputs
from .binning import bin_probabilities

__all__ = ["DistanceAttack", "kl_divergence", "in_out_means"]


def kl_divergence(p, q) -> np.ndarray:
    """D_KL(P||Q) = Σ_i p_i ln(p_i/q_i) along the last axis (entries must be > 0 where p > 0)."""
    p, q = np.asarray(p, float), np.asarray(q, float)
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(p > 0, p * (np.log(p) - np.log(q)), 0.0)
    return terms.sum(axis=-1)


def in_out_means(ref_probs, ref_in):
    """Per-record averages of the in and out models' outputs.

    Returns
    -------
    pbar_in, pbar_out : ndarray (n, C)
    """
    n_in = ref_in.sum(axis=0)
    n_out = (~ref_in).sum(axis=0)
    if np.any(n_in == 0) or np.any(n_out == 0):
        i = int(np.flatnonzero((n_in == 0) | (n_out == 0))[0])
        raise InvalidInputError(f"record {i} lacks an in or an out shadow model; targeted attacks need both")
    w_in = ref_in[..., None]
    pbar_in = (ref_probs * w_in).sum(axis=0) / n_in[:, None]
    pbar_out = (ref_probs * ~w_in).sum(axis=0) / n_out[:, None]
    return pbar_in, pbar_out


class DistanceAttack(Attack):
    """Long et al.'s distance-based attack.

    Parameters
    ----------
    bin_width : float or None, default=0.01
        Bin target and shadow outputs (Long §5.2); None compares raw outputs
        (then zero probabilities are clipped to 1e-12 in the KL).
    renormalize : bool, default=False
        Renormalise binned vectors to sum to 1 (the paper does not).
    """

    name = "distance"
    needs = ("reference",)

    def __init__(self, *, bin_width: float | None = 0.01, renormalize: bool = False):
        self.bin_width = bin_width
        self.renormalize = renormalize

    def _bin(self, p):
        if self.bin_width:
            return bin_probabilities(p, bin_width=self.bin_width, renormalize=self.renormalize)
        return np.clip(p, 1e-12, 1.0)

    def score(self, probs, ref_probs, ref_in) -> AttackResult:
        """Score records from plain arrays.

        Parameters
        ----------
        probs : array (n, C)
            Target model's outputs at the targets.
        ref_probs : array (K, n, C)
            Shadow models' outputs at the targets.
        ref_in : array (K, n) of bool
            Whether target i was in shadow model k's training set.
        """
        p = check_probs(probs)
        rp, rin = check_reference_inputs(ref_probs, ref_in, target=p)
        q = self._bin(p)
        pbar_in, pbar_out = in_out_means(self._bin(rp), rin)
        scores = kl_divergence(q, pbar_out) - kl_divergence(q, pbar_in)
        return self.result(scores, (scores > 0).astype(int), threshold=0.0)

    def run(self, inputs: AttackInputs) -> AttackResult:
        if inputs.reference is None:
            raise InvalidInputError("the distance attack needs shadow models (inputs.reference)")
        return self.score(inputs.probs, inputs.reference.probs, inputs.reference.in_mask)


def train_targeted_shadows(
    learner,
    X,
    y,
    targets,
    *,
    train_size: int,
    n_pairs: int = 5,
    candidates=None,
    n_classes: int | None = None,
    random_state=None,
    engine: Engine | None = None,
):
    """Long et al.'s targeted shadow models: pairs with and without each target (§3.2, Step 1).

    For target t: sample ``T'_j`` of size ``train_size − 1`` uniformly from
    ``D \\ {t}`` (D = ``candidates``, default all rows), train ``A(T'_j ∪ {t})``
    ("in") and ``A(T'_j)`` ("out") for j = 1..``n_pairs``, and query both at x(t).

    Parameters
    ----------
    learner : Learner
    X, y : arrays (N, d), (N,)
    targets : array of int (T,)
        Row indices of the targets.
    train_size : int
        |T| = n, the target model's training-set size.
    n_pairs : int, default=5
    candidates : array of int, optional
        The adversary's data D (row indices).
    n_classes : int, optional
    random_state : None, int or Generator
    engine : leakaudit.engine.Engine, optional
        Trains the shadow models; default :func:`leakaudit.engine.default_engine`.

    Returns
    -------
    ReferenceSet of shape (2·n_pairs, T, C): rows 0..n_pairs−1 are the in
    models, the rest the out models (model k of column a is not model k of
    column b: each target has its own shadow models).
    """
    X = check_matrix(X, name="X")
    y = check_labels(y, name="y")
    targets = check_indices(targets, name="targets", n=len(X))
    cand = np.arange(len(X)) if candidates is None else check_indices(candidates, name="candidates", n=len(X))
    check_scalar(n_pairs, name="n_pairs", kind=(int, np.integer), min_val=1)
    check_scalar(train_size, name="train_size", kind=(int, np.integer), min_val=2, max_val=len(cand))
    engine = resolve_engine(engine)
    rng = check_random_state(random_state)
    n_classes = n_classes or max(int(y.max()) + 1, 2)
    subsets = []
    for t in targets:
        pool = cand[cand != t]
        for _ in range(n_pairs):
            base = rng.choice(pool, size=train_size - 1, replace=False)
            subsets.append((np.append(base, t), base))
    flat = [s for pair in subsets for s in pair]  # per target: in_1, out_1, in_2, out_2, ...
    seeds = spawn_seeds(int(rng.integers(0, 2**31 - 1)), len(flat))
    out = np.empty((2 * n_pairs, len(targets), n_classes))
    # train in chunks so the bank of models never holds more than a few hundred at once
    chunk = 2 * n_pairs * max(1, 200 // (2 * n_pairs))
    for start in range(0, len(flat), chunk):
        part = flat[start:start + chunk]
        idx_t = np.arange(start, start + len(part)) // (2 * n_pairs)
        probs = engine.predict_many(learner, X, y, part, seeds[start:start + len(part)],
                                    X[targets[np.unique(idx_t)]], n_classes)
        first = idx_t.min()
        for m in range(len(part)):
            g = start + m
            a = g // (2 * n_pairs)
            within = g % (2 * n_pairs)
            row = within // 2 if within % 2 == 0 else n_pairs + within // 2
            out[row, a] = probs[m, a - first]
    in_mask = np.zeros((2 * n_pairs, len(targets)), dtype=bool)
    in_mask[:n_pairs] = True
    return ReferenceSet(out, in_mask)
