"""Label-only membership inference by noise robustness (Choquette-Choo et al., "Label-Only Membership Inference
Attacks", ICML 2021).

An adversary who sees only the predicted label cannot read a confidence, but can ask how far a record lies from the
decision boundary: a model that fitted a training record tends to classify it correctly in a wider neighbourhood
than a record it never saw. Of Choquette-Choo et al.'s two measures, a boundary search (HopSkipJump) and robustness
to perturbations, this module implements the second for tabular records: the score is the fraction of the record
and its ``n_queries`` perturbed copies (:func:`perturb_records`) classified as its true label.

A boundary search needs an input space in which a distance means something (one-hot columns have none) and
hundreds of queries per record; the robustness score needs ``n_queries``, is seeded, and works on any model that
returns a label. ``n_queries = 0`` is the gap attack (member iff correctly classified; Yeom et al.'s Adversary 1),
the baseline Choquette-Choo et al. compare against. A model that memorises a record inside a small region (a fully
grown tree's leaf) classifies it correctly at itself but not around it, where robustness can rank members worse
than the gap attack: an audit of a labels-only release runs both.

The model is reached only through ``inputs.extra["predict_labels"]``, a callable taking an array (m, d) in the
column layout of ``inputs.X`` and returning m class indices in the coding of ``inputs.y``; without it, the arg-max
of ``inputs.model.predict_proba``. The target's probabilities ``inputs.probs`` are never read.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence

import numpy as np

from .._random import seed_to_int
from .._validation import check_consistent_length, check_labels, check_matrix, check_scalar
from ..exceptions import InvalidInputError, InvalidParameterError
from ._base import Attack, AttackInputs, AttackResult

__all__ = ["LabelOnlyAttack", "perturb_records", "labels_from_model"]

#: perturbed rows queried per call of ``predict_labels`` (bounds the memory of one batch, not the result)
_BATCH_ROWS = 100_000


def _column_groups(onehot_groups, d: int) -> list[np.ndarray]:
    """The one-hot groups as arrays of column indices (slices or sequences of ints), checked against d columns."""
    groups: list[np.ndarray] = []
    seen = np.zeros(d, dtype=bool)
    for k, g in enumerate(onehot_groups or ()):
        idx = np.arange(d)[g] if isinstance(g, slice) else np.asarray(g, dtype=np.int64).ravel()
        if idx.size < 2:
            raise InvalidParameterError(f"onehot_groups[{k}] must name at least 2 columns; got {idx.size}")
        if idx.min() < 0 or idx.max() >= d:
            raise InvalidParameterError(f"onehot_groups[{k}] names column {int(idx.max())}, out of range for {d} "
                                        "columns")
        if seen[idx].any():
            raise InvalidParameterError(f"onehot_groups[{k}] overlaps another group (column "
                                        f"{int(idx[seen[idx]][0])})")
        seen[idx] = True
        groups.append(idx)
    return groups


def perturb_records(X, n_copies: int, *, noise_scale: float = 0.1, flip_prob: float = 0.05, onehot_groups=None,
                    scale=None, binary=None, random_state=None) -> np.ndarray:
    """``n_copies`` random perturbations of every record.

    Parameters
    ----------
    X : array of shape (n, d)
        Numeric records (e.g. leakaudit's encoding: z-scored numerics, 0/1 binaries, one-hot groups).
    n_copies : int >= 1
    noise_scale : float >= 0
        Gaussian noise on continuous columns, in units of ``scale`` (default: each column's standard deviation
        over ``X``).
    flip_prob : float in [0, 1]
        Probability that a binary column flips, and that a one-hot group switches to another category.
    onehot_groups : sequence of slice or of int sequences, optional
        Column groups that one-hot encode one feature (exactly one 1 per row). Columns outside every group whose
        values in ``X`` are all 0 or 1 are binary; the rest continuous.
    scale : array of shape (d,), optional
        Per-column noise unit for continuous columns.
    binary : array of bool, shape (d,), optional
        Which columns outside the groups are binary (default: those whose values in ``X`` are all 0 or 1); give it
        when ``X`` is one batch of a larger set, so every batch treats a column alike.
    random_state : None, int or Generator
        With the record's values, it determines the record's copies: a record gets the same copies wherever it sits
        among the records.

    Returns
    -------
    ndarray of shape (n, n_copies, d)
        ``out[i, j]`` is the j-th perturbed copy of record i.
    """
    X = check_matrix(X, name="X")
    check_scalar(n_copies, name="n_copies", kind=(int, np.integer), min_val=1)
    check_scalar(noise_scale, name="noise_scale", min_val=0.0)
    check_scalar(flip_prob, name="flip_prob", min_val=0.0, max_val=1.0)
    n, d = X.shape
    groups = _column_groups(onehot_groups, d)
    in_group = np.zeros(d, dtype=bool)
    for g in groups:
        in_group[g] = True
    if binary is None:
        binary = np.all((X == 0) | (X == 1), axis=0)
    binary = np.asarray(binary, dtype=bool)
    if binary.shape != (d,):
        raise InvalidInputError(f"binary must have shape ({d},); got {binary.shape}")
    binary = binary & ~in_group
    continuous = ~in_group & ~binary
    if scale is None:
        scale = X.std(axis=0)
    scale = np.asarray(scale, dtype=float)
    if scale.shape != (d,):
        raise InvalidInputError(f"scale must have shape ({d},); got {scale.shape}")
    seed = seed_to_int(random_state)
    c, b = np.flatnonzero(continuous), np.flatnonzero(binary)
    out = np.repeat(X[:, None, :], n_copies, axis=1)
    for i in range(n):
        rng = _record_rng(seed, X[i])
        if c.size and noise_scale > 0:
            out[i][:, c] += rng.normal(size=(n_copies, c.size)) * (noise_scale * scale[c])
        if b.size and flip_prob > 0:
            flips = rng.random((n_copies, b.size)) < flip_prob
            out[i][:, b] = np.where(flips, 1.0 - out[i][:, b], out[i][:, b])
        for g in groups:
            if flip_prob == 0:
                continue
            current = int(X[i, g].argmax())
            switch = rng.random(n_copies) < flip_prob
            shift = rng.integers(1, g.size, size=n_copies)  # another category, uniformly: current + 1..k-1 mod k
            new = np.where(switch, (current + shift) % g.size, current)
            block = np.zeros((n_copies, g.size))
            block[np.arange(n_copies), new] = 1.0
            out[i][:, g] = block
    return out


def _record_rng(seed: int, x: np.ndarray) -> np.random.Generator:
    """A generator determined by the seed and the record's values: a record gets the same perturbations whatever
    its position among the records and however they are batched."""
    digest = hashlib.blake2b(np.ascontiguousarray(x, dtype=np.float64).tobytes(), digest_size=16).digest()
    return np.random.default_rng(np.random.SeedSequence([seed, *np.frombuffer(digest, dtype=np.uint32).tolist()]))


def labels_from_model(model) -> Callable[[np.ndarray], np.ndarray]:
    """A labels-only view of a model with ``predict_proba``: the arg-max column (ties to the lowest index)."""
    if not hasattr(model, "predict_proba"):
        raise InvalidInputError("model must have predict_proba to serve labels; pass inputs.extra['predict_labels']")

    def predict_labels(X):
        return np.asarray(model.predict_proba(X)).argmax(axis=1)

    return predict_labels


class LabelOnlyAttack(Attack):
    """Noise-robustness label-only attack (Choquette-Choo et al. 2021): the share of perturbed copies still
    classified correctly.

    Parameters
    ----------
    n_queries : int, default=64
        Perturbed copies queried per record (0: the gap attack, member iff correctly classified).
    noise_scale : float, default=0.1
        Gaussian noise on continuous columns, in standard deviations of each column over the audited records.
    flip_prob : float, default=0.05
        Probability that a binary column flips and that a one-hot group switches category.
    onehot_groups : sequence of slice or int sequences, optional
        The one-hot groups of the column layout (e.g. ``TabularEncoder.onehot_groups``).
    threshold : float, default=0.5
        ``decisions``: member iff the score exceeds it (more than half of the answers correct). Uncalibrated:
        the audit's checks read the scores (AUC, TPR at low FPR), not these decisions.
    random_state : None, int or Generator, default=0

    Notes
    -----
    Reads ``inputs.X`` (n, d), ``inputs.y`` (n,) and ``inputs.extra["predict_labels"]`` (or ``inputs.model``);
    never ``inputs.probs``. The noise unit is each column's standard deviation over the audited records, the
    population statistics an adversary is assumed to know. Queries: ``n * (n_queries + 1)`` labels.
    """

    name = "label_only"
    needs = ("X",)

    def __init__(self, *, n_queries: int = 64, noise_scale: float = 0.1, flip_prob: float = 0.05,
                 onehot_groups: Sequence | None = None, threshold: float = 0.5, random_state=0):
        self.n_queries = n_queries
        self.noise_scale = noise_scale
        self.flip_prob = flip_prob
        self.onehot_groups = onehot_groups
        self.threshold = threshold
        self.random_state = random_state

    def missing(self, inputs: AttackInputs) -> list[str]:
        miss = super().missing(inputs)
        if "predict_labels" not in inputs.extra and not hasattr(inputs.model, "predict_proba"):
            miss.append("extra['predict_labels'] (the model's labels on any records)")
        return miss

    def score(self, X, y, predict_labels: Callable[[np.ndarray], np.ndarray]) -> AttackResult:
        """Scores from records (n, d), their true labels (n,) and a function returning the model's labels.

        Parameters
        ----------
        X : array of shape (n, d)
        y : array of shape (n,)
            True class indices.
        predict_labels : callable
            ``predict_labels(Z)`` for Z of shape (m, d) returns m class indices.

        Returns
        -------
        AttackResult
            ``scores`` in [0, 1] (share of correct answers over the record and its copies); ``info`` holds the
            number of queries and the share of records whose unperturbed label was correct.
        """
        check_scalar(self.n_queries, name="n_queries", kind=(int, np.integer), min_val=0)
        check_scalar(self.threshold, name="threshold")
        X = check_matrix(X, name="X")
        y = check_labels(y, name="y")
        check_consistent_length(X=X, y=y)
        if not callable(predict_labels):
            raise InvalidInputError("predict_labels must be a callable returning the model's labels")
        n = len(X)
        correct = (self._ask(predict_labels, X) == y).astype(float)
        total = correct.copy()
        if self.n_queries > 0:
            seed = seed_to_int(self.random_state)
            scale = X.std(axis=0)
            binary = np.all((X == 0) | (X == 1), axis=0)
            step = max(1, _BATCH_ROWS // self.n_queries)
            for s in range(0, n, step):
                block = perturb_records(X[s:s + step], self.n_queries, noise_scale=self.noise_scale,
                                        flip_prob=self.flip_prob, onehot_groups=self.onehot_groups, scale=scale,
                                        binary=binary, random_state=seed)
                m = block.shape[0]
                answers = self._ask(predict_labels, block.reshape(m * self.n_queries, -1))
                total[s:s + step] += (answers.reshape(m, self.n_queries) == y[s:s + step, None]).sum(axis=1)
        scores = total / (self.n_queries + 1)
        return self.result(scores, (scores > self.threshold).astype(int), threshold=self.threshold,
                            rule="member iff the share of correct answers exceeds threshold",
                            n_queries=int(n * (self.n_queries + 1)), accuracy_unperturbed=float(correct.mean()))

    @staticmethod
    def _ask(predict_labels, Z: np.ndarray) -> np.ndarray:
        out = np.asarray(predict_labels(Z))
        if out.shape != (len(Z),):
            raise InvalidInputError(f"predict_labels returned shape {out.shape} for {len(Z)} records; expected "
                                    f"({len(Z)},): one label per record")
        return out

    def run(self, inputs: AttackInputs) -> AttackResult:
        miss = self.missing(inputs)
        if miss:
            raise InvalidInputError(f"the label-only attack needs {', '.join(miss)}")
        predict = inputs.extra.get("predict_labels") or labels_from_model(inputs.model)
        return self.score(inputs.X, inputs.y, predict)
