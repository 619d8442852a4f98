"""The blind baseline: telling members from non-members by their texts alone, with no model.

Das, Zhang and Tramèr, "Blind Baselines Beat Membership Inference Attacks for Foundation Models" (2024, arXiv
2406.16201) show that many published member / non-member splits of language-model benchmarks differ in
distribution (dates, topics, length), so that a classifier which never queries the model separates them as well as
the attacks do. An attack's AUC on such a split measures the split, not the model.

The classifier: TF-IDF of character 2-4-grams and of word 1-2-grams plus the text's log length, fitted without
labels on all texts, and kernel ridge regression (linear kernel, penalty :data:`RIDGE`) of the 0/1 membership on
them, scored out of fold: every text's score comes from a fit that did not see it. Folds are drawn without the
labels and keep near-duplicate texts together (character n-gram cosine similarity at least :data:`NEAR_DUPLICATE`),
so a text is never scored by a fit that saw its near-copy.

Two tests, each honest about the out-of-fold scores being dependent (the folds' fits differ and share training
texts), which makes the Mann-Whitney / DeLong interval of a fixed scorer too narrow:

* **Does the split differ at all?** A permutation test of the blind AUC: the same out-of-fold procedure rerun on
  ``n_permutations`` random relabellings of the same texts; p = (1 + #{null AUC >= observed}) / (1 + B), exact for any
  B (Phipson and Smyth 2010) when the split is a random split of one pool. Ridge scores are linear in the labels,
  so every relabelling costs one matrix product per fold.
* **Does an attack beat the texts alone?** A paired bootstrap of AUC(attack) - AUC(blind) that refits the blind
  classifier on every resample (members and non-members resampled apart, a resampled text keeping its fold), giving
  the standard deviation of the difference and of the blind AUC itself. Above :data:`BOOT_TEXTS` texts each resample
  holds that many and the standard deviations are scaled by sqrt(m / n) (the m-out-of-n bootstrap, Bickel, Götze and
  van Zwet 1997), which bounds the cost.

At most :data:`MAX_TEXTS` texts enter (a seeded random subset of each class when more are given; the others get no
blind score), which bounds the kernel's memory (MAX_TEXTS**2 float64).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from .._random import RandomStateLike, check_random_state
from .._validation import check_scalar
from ..exceptions import InvalidInputError
from ..metrics import check_is_member
from .score import check_texts

__all__ = [
    "BOOT_TEXTS",
    "MAX_TEXTS",
    "NEAR_DUPLICATE",
    "RIDGE",
    "BlindBaseline",
    "blind_baseline",
    "blind_baseline_scores",
]

#: ridge penalty of the kernel regression (each of the three feature blocks has rows of norm about 1)
RIDGE = 1.0
#: character n-gram cosine similarity at which two texts count as near-duplicates and share a fold
NEAR_DUPLICATE = 0.8
#: most texts the baseline uses (its kernel is MAX_TEXTS x MAX_TEXTS float64: 128 MiB)
MAX_TEXTS = 4000
#: most texts per bootstrap resample (the m of the m-out-of-n bootstrap)
BOOT_TEXTS = 1000
#: permutations per unit of 1 / alpha: about 20 null AUCs beyond the critical value
_PERMS_PER_ALPHA = 20
_PERM_CHUNK = 512


@dataclass(frozen=True)
class BlindBaseline:
    """The blind baseline's out-of-fold scores and its two tests.

    Attributes
    ----------
    scores : ndarray of shape (n,)
        Each text's out-of-fold score (higher means "member"); NaN for texts left out above MAX_TEXTS.
    used : bool ndarray of shape (n,)
        The texts that entered.
    auc : float
        AUC of the scores on the texts used.
    auc_sd : float
        Its standard deviation from the refitting bootstrap.
    p_value : float
        Permutation p-value of ``auc`` under "the split is a random split of one pool of texts".
    n_permutations : int
    null_sd : float
        Standard deviation of the permutation null AUCs (what the dependence of out-of-fold scores does to the
        spread; a fixed scorer's would be sqrt((n1 + n0 + 1) / (12 n1 n0))).
    n_groups : int
        Near-duplicate groups the folds were drawn from (n_groups < n: some texts have near-copies).
    n_folds : int
    versus : dict
        Per compared attack: ``auc`` (on the texts used), ``diff`` (its AUC minus the blind AUC) and ``diff_sd``.
    n_boot : int
    """

    scores: np.ndarray
    used: np.ndarray
    auc: float
    auc_sd: float
    p_value: float
    n_permutations: int
    null_sd: float
    n_groups: int
    n_folds: int
    n_boot: int
    versus: dict = field(default_factory=dict)


def _kernels(docs: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """The linear kernel of the three feature blocks, and the character block's alone (cosine similarities)."""
    from sklearn.feature_extraction.text import TfidfVectorizer

    char = TfidfVectorizer(analyzer="char_wb", ngram_range=(2, 4), min_df=2, max_features=50_000,
                           sublinear_tf=True).fit_transform(docs)
    k_char = (char @ char.T).toarray()
    k = k_char.copy()
    try:
        word = TfidfVectorizer(analyzer="word", ngram_range=(1, 2), min_df=2, max_features=50_000,
                               sublinear_tf=True).fit_transform(docs)
        k += (word @ word.T).toarray()
    except ValueError:  # no word occurs twice: the block carries nothing
        pass
    ln = np.array([[np.log1p(len(t)), np.log1p(len(t.split()))] for t in docs])  # characters and words
    sd = ln.std(axis=0)
    ln = (ln - ln.mean(axis=0)) / np.where(sd > 0, sd, 1.0) / np.sqrt(2)  # the block's rows have norm about 1
    k += ln @ ln.T
    return k, k_char


def _groups(k_char: np.ndarray, similar: float) -> np.ndarray:
    """Connected components of the graph joining texts whose character n-gram cosine is at least ``similar``."""
    from scipy.sparse import csr_matrix
    from scipy.sparse.csgraph import connected_components

    adj = csr_matrix(np.triu(k_char >= similar, 1))
    return connected_components(adj, directed=False)[1]


def _folds(groups: np.ndarray, n_folds: int, rng: np.random.Generator) -> np.ndarray:
    """Each text's fold: whole groups, in random order, largest first, each to the emptiest fold (labels unused)."""
    ids, size = np.unique(groups, return_counts=True)
    order = rng.permutation(ids.size)
    order = order[np.argsort(-size[order], kind="stable")]
    load, of_group = np.zeros(n_folds, int), np.empty(ids.size, int)
    for g in order:
        f = int(np.argmin(load))
        of_group[g], load[f] = f, load[f] + size[g]
    return of_group[np.searchsorted(ids, groups)]


def _oof(k: np.ndarray, fold: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Out-of-fold ridge scores for each column of ``y`` (shape (n, B)); targets centred on each fit's mean.

    Each fold's test scores are K[te, tr] (K[tr, tr] + RIDGE I)^-1 (y[tr] - mean): the solve is applied to the
    targets, or, when there are more target columns than test texts, to K[tr, te] (the fit's hat matrix)."""
    from scipy.linalg import cho_factor, cho_solve

    out = np.empty(y.shape)
    for f in np.unique(fold):
        te, tr = np.flatnonzero(fold == f), np.flatnonzero(fold != f)
        yt = y[tr] - y[tr].mean(axis=0)
        c = cho_factor(k[np.ix_(tr, tr)] + RIDGE * np.eye(tr.size), lower=True, check_finite=False)
        if y.shape[1] > te.size:
            out[te] = cho_solve(c, k[np.ix_(tr, te)], check_finite=False).T @ yt
        else:
            out[te] = k[np.ix_(te, tr)] @ cho_solve(c, yt, check_finite=False)
    return out


def _auc_columns(s: np.ndarray, m: np.ndarray) -> np.ndarray:
    """Mann-Whitney AUC of each column of ``s`` (n, B) for the 0/1 labels in each column of ``m`` (ties count
    half)."""
    from scipy.stats import rankdata

    r = rankdata(s, axis=0)
    n1 = m.sum(axis=0)
    n0 = m.shape[0] - n1
    return ((r * m).sum(axis=0) - n1 * (n1 + 1) / 2) / (n1 * n0)


def blind_baseline(texts: Sequence[str], is_member, *, versus: Mapping[str, np.ndarray] | None = None,
                   alpha: float = 0.05, n_folds: int = 5, n_permutations: int | None = None, n_boot: int = 200,
                   similar: float = NEAR_DUPLICATE, random_state: RandomStateLike = 0) -> BlindBaseline:
    """The text-only classifier's out-of-fold scores, its permutation test and its paired comparison with attacks.

    Parameters
    ----------
    texts : sequence of n str
    is_member : array-like of shape (n,) of 0/1
    versus : mapping of name -> array of shape (n,), optional
        Attack scores (higher means "member") to compare with the blind baseline on the same texts.
    alpha : float, default 0.05
        The level the permutation p-value will be judged at; it sets the default number of permutations.
    n_folds : int, default 5
    n_permutations : int, optional
        Default ``max(200, ceil(20 / alpha))``: about 20 null AUCs beyond the critical value.
    n_boot : int, default 200
        Bootstrap resamples of the paired comparison (0: none; ``auc_sd`` and ``diff_sd`` are then NaN).
    similar : float, default NEAR_DUPLICATE
        Character n-gram cosine at which texts share a fold (above 1: every text its own group).
    random_state : int, Generator or None
        Seeds the subset above MAX_TEXTS, the folds, the permutations and the bootstrap.

    Returns
    -------
    BlindBaseline
    """
    docs = check_texts(texts)
    m_all = check_is_member(is_member)
    check_scalar(similar, name="similar", min_val=0.0)
    if len(docs) != m_all.size:
        raise InvalidInputError(f"texts has {len(docs)} texts but is_member has {m_all.size} values")
    check_scalar(n_folds, name="n_folds", kind=(int, np.integer), min_val=2)
    check_scalar(alpha, name="alpha", kind=(float, int), min_val=0, max_val=1, include_min=False, include_max=False)
    check_scalar(n_boot, name="n_boot", kind=(int, np.integer), min_val=0)
    if n_permutations is not None:
        check_scalar(n_permutations, name="n_permutations", kind=(int, np.integer), min_val=1)
    versus = dict(versus or {})
    for name, s in versus.items():
        if np.asarray(s).shape != (m_all.size,):
            raise InvalidInputError(f"versus[{name!r}] has shape {np.asarray(s).shape}; expected ({m_all.size},)")
    if min(m_all.sum(), m_all.size - m_all.sum()) < 2:
        raise InvalidInputError("the blind baseline needs at least 2 members and 2 non-members")
    from threadpoolctl import threadpool_limits

    rng = check_random_state(random_state)
    # the linear algebra is many small solves, which threads slow down on a shared machine
    with threadpool_limits(1 if min(m_all.size, MAX_TEXTS) <= BOOT_TEXTS else None):
        return _blind_baseline(docs, m_all, versus, alpha, n_folds, n_permutations, n_boot, similar, rng)


def _blind_baseline(docs, m_all, versus, alpha, n_folds, n_permutations, n_boot, similar, rng) -> BlindBaseline:
    used = np.ones(m_all.size, bool)
    if m_all.size > MAX_TEXTS:  # a random subset of each class, in the classes' proportions
        used[:] = False
        for c in (0, 1):
            idx = np.flatnonzero(m_all == c)
            used[rng.choice(idx, max(2, round(MAX_TEXTS * idx.size / m_all.size)), replace=False)] = True
    keep = np.flatnonzero(used)
    m = m_all[keep]
    k, k_char = _kernels([docs[i] for i in keep])
    groups = _groups(k_char, similar)
    n_groups = int(groups.max()) + 1
    folds = min(int(n_folds), n_groups)
    if folds < 2:
        raise InvalidInputError(f"the texts are all near-copies of each other (character n-gram cosine >= similar="
                                f"{similar:g}): the blind baseline needs at least two groups of distinct texts")
    fold = _folds(groups, folds, rng)
    s = _oof(k, fold, m[:, None].astype(float))[:, 0]
    auc = float(_auc_columns(s[:, None], m[:, None])[0])

    # permutation test: the same folds (drawn without labels) and fits, on relabelled texts
    n_perm = int(n_permutations) if n_permutations is not None else max(200, int(np.ceil(_PERMS_PER_ALPHA / alpha)))
    null = []
    for start in range(0, n_perm, _PERM_CHUNK):
        b = min(_PERM_CHUNK, n_perm - start)
        y = np.stack([rng.permutation(m) for _ in range(b)], axis=1)
        null.append(_auc_columns(_oof(k, fold, y.astype(float)), y))
    null = np.concatenate(null)
    p = float((1 + np.sum(null >= auc - 1e-12)) / (1 + n_perm))

    att = {name: np.asarray(v, float)[keep] for name, v in versus.items()}
    att_auc = {name: float(_auc_columns(v[:, None], m[:, None])[0]) for name, v in att.items()}
    auc_sd, diff_sd = np.nan, {name: np.nan for name in att}
    if n_boot:
        auc_sd, diff_sd = _paired_bootstrap(k, fold, m, att, n_boot, rng)
    out = np.full(m_all.size, np.nan)
    out[keep] = s
    return BlindBaseline(
        scores=out, used=used, auc=auc, auc_sd=float(auc_sd), p_value=p, n_permutations=n_perm,
        null_sd=float(null.std(ddof=1)) if n_perm > 1 else float("nan"), n_groups=n_groups, n_folds=folds,
        n_boot=int(n_boot),
        versus={name: {"auc": att_auc[name], "diff": att_auc[name] - auc, "diff_sd": float(diff_sd[name])}
                for name in att})


def _paired_bootstrap(k, fold, m, att, n_boot, rng):
    """Standard deviations of the blind AUC and of each AUC(attack) - AUC(blind), refitting the blind classifier on
    every resample (members and non-members resampled apart; m-out-of-n above BOOT_TEXTS, scaled back)."""
    n = m.size
    size = min(n, BOOT_TEXTS)
    pos, neg = np.flatnonzero(m == 1), np.flatnonzero(m == 0)
    n_pos = max(2, round(size * pos.size / n))
    b_auc, b_diff = np.empty(n_boot), {name: np.empty(n_boot) for name in att}
    for b in range(n_boot):
        idx = np.r_[rng.choice(pos, n_pos), rng.choice(neg, size - n_pos)]
        mb = m[idx]
        sb = _oof(k[np.ix_(idx, idx)], fold[idx], mb[:, None].astype(float))
        cols = np.column_stack([sb[:, 0]] + [att[name][idx] for name in att])
        aucs = _auc_columns(cols, np.repeat(mb[:, None], cols.shape[1], axis=1))
        b_auc[b] = aucs[0]
        for j, name in enumerate(att):
            b_diff[name][b] = aucs[j + 1] - aucs[0]
    scale = np.sqrt(size / n)
    return (float(b_auc.std(ddof=1) * scale),
            {name: float(v.std(ddof=1) * scale) for name, v in b_diff.items()})


def blind_baseline_scores(texts: Sequence[str], is_member, *, n_folds: int = 5,
                          random_state: RandomStateLike = 0) -> np.ndarray:
    """Out-of-fold scores of the text-only classifier alone (no tests), shape (n,); see :func:`blind_baseline`."""
    return blind_baseline(texts, is_member, n_folds=n_folds, n_permutations=1, n_boot=0,
                          random_state=random_state).scores
