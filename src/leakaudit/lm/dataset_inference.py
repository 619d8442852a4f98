"""Dataset inference: was a collection of texts used to train (or fine-tune) a language model?

Maini, Jia, Papernot and Dziedzic, "LLM Dataset Inference: Did you train on my dataset?" (NeurIPS 2024). Per-text
membership attacks are weak on their own; a set of texts carries more evidence than any one of them. Given a
*suspect* set (texts that may have been used) and an *unseen* set (texts of the same distribution known not to have
been used), the test

1. computes several membership features of every text (:data:`FEATURES`, the per-text attacks of
   :mod:`~leakaudit.lm.attacks`);
2. splits each set at random into halves; on the first halves it learns a linear combination of the features that
   tells suspect from unseen texts (logistic regression on standardised features);
3. scores the second halves with that combination and tests whether the suspect half scores higher than the unseen
   half: a one-sided Welch t-test (the paper's), or a permutation test of the difference in means (exact when the
   two sets are exchangeable, that is when the suspect set was not used and both come from one distribution).

A small p-value says the model tells the suspect texts from the unseen ones. That is evidence of use only when the
two sets do not differ by themselves: an "unseen" set from another source, period or length makes any such test pass.
The blind baseline of :mod:`~leakaudit.lm.blind` (a classifier of the texts alone, with its permutation test)
guards the comparison: when it tells the two sets apart at the test's level, the result is "not comparable" and the
p-value is not read as use.

The features of a text depend on that text and the model(s) alone, so :func:`detection_power` can draw subsets of
given sizes from the scored sets and measure how often the test detects use at each size.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from .._random import RandomStateLike, check_random_state, spawn_seeds
from .._validation import check_choice, check_scalar
from ..exceptions import InvalidInputError
from ..membership import display_name
from .attacks import run_lm_attacks
from .score import TokenScores

__all__ = ["FEATURES", "TESTS", "VERDICTS", "DatasetInference", "SetTest", "PowerCurve", "membership_features",
           "set_test", "detection_power", "dataset_inference", "features_from_scores"]

#: the per-text features combined, in this order, where the inputs allow them (Min-K%++ needs the next-token
#: distribution; the reference ratio a reference model's scores). LiRA and RMIA are left out: with one reference
#: LiRA ranks as the ratio does, and RMIA's score of a text depends on the other audited texts.
FEATURES = ("lm_loss", "lm_zlib", "lm_min_k", "lm_min_k_pp", "lm_reference")
#: the set-level tests
TESTS = ("welch", "permutation")
#: the three outcomes
USED, NOT_DETECTED, NOT_COMPARABLE = "used", "not detected", "not comparable"
VERDICTS = (USED, NOT_DETECTED, NOT_COMPARABLE)
#: fewest texts per set: each half then holds at least 4
MIN_TEXTS = 8
_REG = 1.0  # inverse L2 penalty of the logistic regression on standardised features


def membership_features(ts: TokenScores, texts: Sequence[str], refs: Sequence[TokenScores] = (), *,
                        k: float = 0.2) -> tuple[list[str], np.ndarray]:
    """The per-text features the inputs allow: their names and an array of shape (n, d), higher meaning "member".

    Each feature is the score of the attack of the same name in :mod:`~leakaudit.lm.attacks` (one implementation).
    """
    return features_from_scores(run_lm_attacks(ts, texts, refs, k=k))


def features_from_scores(scores: Mapping[str, np.ndarray]) -> tuple[list[str], np.ndarray]:
    """:func:`membership_features` from the attacks' scores already computed (``run_lm_attacks``'s output): the
    :data:`FEATURES` among them, in that order, as an array of shape (n, d)."""
    names = [f for f in FEATURES if f in scores]
    if not names:
        raise InvalidInputError(f"scores holds none of the features {', '.join(FEATURES)}")
    return names, np.column_stack([np.asarray(scores[f], dtype=float) for f in names])


@dataclass(frozen=True)
class SetTest:
    """One split, one learned combination, one set-level test.

    Attributes
    ----------
    p_value : float
        One-sided p-value of "the suspect half does not score higher than the unseen half".
    statistic : float
        Welch's t (``test="welch"``) or the difference of the halves' mean scores (``"permutation"``).
    mean_difference : float
        Mean combined score of the suspect test half minus the unseen test half's.
    auc : float
        AUC of the combined score on the test halves (suspect = positive).
    coef : dict
        Feature name -> weight of the learned combination (standardised features).
    n_fit, n_test : tuple of int
        (suspect, unseen) texts in the fitting halves and in the test halves.
    test : str
    """

    p_value: float
    statistic: float
    mean_difference: float
    auc: float
    coef: dict
    n_fit: tuple
    n_test: tuple
    test: str


def _check_features(x, name: str, d: int | None = None) -> np.ndarray:
    a = np.asarray(x, dtype=np.float64)
    if a.ndim == 1:
        a = a[:, None]
    if a.ndim != 2:
        raise InvalidInputError(f"{name} must be an array of shape (n_texts, n_features); got shape {a.shape}")
    if d is not None and a.shape[1] != d:
        raise InvalidInputError(f"{name} has {a.shape[1]} features; the suspect set has {d}")
    if a.shape[0] < MIN_TEXTS:
        raise InvalidInputError(f"{name} has {a.shape[0]} texts; dataset inference needs at least {MIN_TEXTS} per "
                                "set (half of each fits the combination, half tests it)")
    if not np.all(np.isfinite(a)):
        raise InvalidInputError(f"{name} holds NaN or infinite feature values")
    return a


def _halves(n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    p = rng.permutation(n)
    return p[: n // 2], p[n // 2:]


def _set_test(xs: np.ndarray, xu: np.ndarray, names, test: str, n_permutations: int,
              rng: np.random.Generator) -> SetTest:
    from scipy import stats
    from sklearn.linear_model import LogisticRegression

    fs, ts_ = _halves(len(xs), rng)
    fu, tu = _halves(len(xu), rng)
    x_fit = np.vstack([xs[fs], xu[fu]])
    mu, sd = x_fit.mean(axis=0), x_fit.std(axis=0)
    sd = np.where(sd > 0, sd, 1.0)
    y_fit = np.r_[np.ones(fs.size), np.zeros(fu.size)]
    clf = LogisticRegression(C=_REG, max_iter=1000).fit((x_fit - mu) / sd, y_fit)
    a = clf.decision_function((xs[ts_] - mu) / sd)
    b = clf.decision_function((xu[tu] - mu) / sd)
    diff = float(a.mean() - b.mean())
    if test == "welch":
        if np.ptp(a) == 0 and np.ptp(b) == 0:  # constant scores: no evidence either way
            stat, p = 0.0, 1.0
        else:
            r = stats.ttest_ind(a, b, equal_var=False, alternative="greater")
            stat, p = float(r.statistic), float(r.pvalue)
    else:
        both = np.r_[a, b]
        q = both[np.argsort(rng.random((n_permutations, both.size)), axis=1)]
        null = q[:, : a.size].mean(axis=1) - q[:, a.size:].mean(axis=1)
        stat, p = diff, float((1 + np.sum(null >= diff - 1e-12)) / (1 + n_permutations))
    from scipy.stats import rankdata

    r = rankdata(np.r_[a, b])
    auc = float((r[: a.size].sum() - a.size * (a.size + 1) / 2) / (a.size * b.size))
    return SetTest(p_value=p, statistic=stat, mean_difference=diff, auc=auc,
                   coef={n: float(c) for n, c in zip(names, clf.coef_[0])}, n_fit=(int(fs.size), int(fu.size)),
                   n_test=(int(ts_.size), int(tu.size)), test=test)


def set_test(x_suspect, x_unseen, *, feature_names: Sequence[str] | None = None, test: str = "welch",
             n_permutations: int = 2000, random_state: RandomStateLike = 0) -> SetTest:
    """The set-level test of Maini et al. on given features: split, learn the combination, test the other halves.

    Parameters
    ----------
    x_suspect : array-like of shape (n_s, d)
        Features of the suspect texts (higher meaning "member"), e.g. from :func:`membership_features`.
    x_unseen : array-like of shape (n_u, d)
        The same features of texts known not to have been used, from the same distribution.
    feature_names : sequence of d str, optional
    test : {"welch", "permutation"}, default "welch"
        One-sided Welch t-test (Maini et al.), or a permutation test of the difference in mean scores.
    n_permutations : int, default 2000
        Relabellings of the permutation test.
    random_state : int, Generator or None
        Seeds the halves (and the permutations).

    Returns
    -------
    SetTest
    """
    check_choice(test, name="test", choices=TESTS)
    check_scalar(n_permutations, name="n_permutations", kind=(int, np.integer), min_val=1)
    xs = _check_features(x_suspect, "x_suspect")
    xu = _check_features(x_unseen, "x_unseen", xs.shape[1])
    names = list(feature_names) if feature_names is not None else [f"f{j}" for j in range(xs.shape[1])]
    if len(names) != xs.shape[1]:
        raise InvalidInputError(f"feature_names has {len(names)} names; the features have {xs.shape[1]} columns")
    return _set_test(xs, xu, names, test, int(n_permutations), check_random_state(random_state))


@dataclass(frozen=True)
class PowerCurve:
    """How often the set-level test detects use at each set size, on subsets of the scored sets.

    Attributes
    ----------
    sizes : list of int
        Texts drawn from each set (suspect and unseen alike), without replacement.
    rate : list of float
        Share of the ``n_repeats`` draws whose p-value was at most ``alpha``.
    interval : list of (float, float)
        Exact (Clopper-Pearson) 95% interval of each rate.
    smallest_detected : int or None
        The smallest size whose rate is at least ``target`` (None when no size reaches it).
    """

    sizes: list
    rate: list
    interval: list
    n_repeats: int
    alpha: float
    target: float
    smallest_detected: int | None
    test: str


def default_sizes(n: int) -> list[int]:
    """Set sizes 8, 10, 20, 50, 100, 200, ... below ``n``, and ``n`` itself."""
    grid = [MIN_TEXTS] + [c * 10 ** j for j in range(1, 7) for c in (1, 2, 5)]
    return sorted({s for s in grid if s < n} | {n})


#: the least work one draw of the power curve takes (its split, its fitted combination and its test), in the work
#: budget's steps: below a draw's measured cost on the tiny demo's features (benchmarks/README.md)
DRAW_STEPS = 10**6


def detection_power(x_suspect, x_unseen, *, sizes: Sequence[int] | None = None, n_repeats: int = 100,
                    alpha: float = 0.05, target: float = 0.8, test: str = "welch", n_permutations: int = 500,
                    random_state: RandomStateLike = 0) -> PowerCurve:
    """Detection rate of :func:`set_test` against set size, from subsets of the given features.

    At each size n, ``n_repeats`` times: n suspect and n unseen texts drawn without replacement, a fresh split and
    combination, one test at level ``alpha``. Near the full sizes the draws overlap, so the rate there describes
    these sets more than the distribution they come from.

    Returns
    -------
    PowerCurve
    """
    check_choice(test, name="test", choices=TESTS)
    check_scalar(n_repeats, name="n_repeats", kind=(int, np.integer), min_val=1)
    check_scalar(alpha, name="alpha", min_val=0.0, max_val=1.0, include_min=False, include_max=False)
    check_scalar(target, name="target", min_val=0.0, max_val=1.0, include_min=False)
    xs = _check_features(x_suspect, "x_suspect")
    xu = _check_features(x_unseen, "x_unseen", xs.shape[1])
    n_max = min(len(xs), len(xu))
    sizes = default_sizes(n_max) if sizes is None else sorted({int(s) for s in sizes})
    for s in sizes:
        if not MIN_TEXTS <= s <= n_max:
            raise InvalidInputError(f"sizes holds {s}; each must be in [{MIN_TEXTS}, {n_max}] (the smaller set)")
    from ..engine import check_work

    check_work(float(n_repeats) * sum((DRAW_STEPS + 4 * s * xs.shape[1]) for s in sizes),
               f"a power curve of {n_repeats:,} draws at each of {len(sizes)} sizes (each draw a split, a fitted "
               f"combination and a test: at least {DRAW_STEPS:.0e} steps)", fix="draw fewer (n_repeats)")
    from scipy.stats import beta as beta_dist

    rng = check_random_state(random_state)
    names = [f"f{j}" for j in range(xs.shape[1])]
    rates, ints = [], []
    for s in sizes:
        hits = 0
        for _ in range(int(n_repeats)):
            i = rng.choice(len(xs), s, replace=False)
            j = rng.choice(len(xu), s, replace=False)
            hits += _set_test(xs[i], xu[j], names, test, int(n_permutations), rng).p_value <= alpha
        r = int(n_repeats)
        lo = 0.0 if hits == 0 else float(beta_dist.ppf(0.025, hits, r - hits + 1))
        hi = 1.0 if hits == r else float(beta_dist.ppf(0.975, hits + 1, r - hits))
        rates.append(hits / r)
        ints.append((lo, hi))
    smallest = next((s for s, r in zip(sizes, rates) if r >= target), None)
    return PowerCurve(sizes=list(sizes), rate=rates, interval=ints, n_repeats=int(n_repeats), alpha=float(alpha),
                      target=float(target), smallest_detected=smallest, test=test)


@dataclass(frozen=True)
class DatasetInference:
    """Dataset inference on a suspect and an unseen set, with the blind-baseline guard.

    Attributes
    ----------
    verdict : {"used", "not detected", "not comparable"}
        "used": the set-level p-value is at most ``alpha`` and the sets are comparable; "not comparable": the blind
        baseline tells the sets apart by their texts alone (p-value at most ``alpha``), so no test of the model
        can show use; "not detected": neither (no evidence of use at this size, not evidence of no use).
    sentence : str
        The verdict in words.
    features : list of str
    test : SetTest
    blind_auc, blind_p_value : float
        The text-only classifier's out-of-fold AUC (suspect = positive) and its permutation p-value (NaN without
        the guard).
    comparable : bool or None
        Whether the guard found the sets comparable (None: the guard was not run).
    power : PowerCurve or None
    n_suspect, n_unseen : int
    alpha : float
    """

    verdict: str
    sentence: str
    features: list
    test: SetTest
    comparable: bool | None
    blind_auc: float
    blind_p_value: float
    n_suspect: int
    n_unseen: int
    alpha: float
    power: PowerCurve | None = None
    feature_auc: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        from dataclasses import asdict

        return asdict(self)


def dataset_inference(suspect_texts: Sequence[str], unseen_texts: Sequence[str], token_scores: TokenScores,
                      reference_scores: Sequence[TokenScores] = (), *, alpha: float = 0.05, test: str = "welch",
                      guard: bool = True, power: bool = True, n_repeats: int = 100, k: float = 0.2,
                      random_state: RandomStateLike = 0,
                      scores: Mapping[str, np.ndarray] | None = None) -> DatasetInference:
    """Was the suspect set used? Features, learned combination, set-level test, blind-baseline guard, power.

    Parameters
    ----------
    suspect_texts : sequence of n_s str
        Texts that may have been used in training.
    unseen_texts : sequence of n_u str
        Texts of the same distribution known not to have been used.
    token_scores : TokenScores
        The model's scores of ``suspect_texts + unseen_texts`` (suspect first), from
        :func:`~leakaudit.lm.score.score_texts` (with ``distribution=True`` for Min-K%++) or
        :func:`~leakaudit.lm.score.scores_from_arrays`.
    reference_scores : sequence of TokenScores
        Reference models' scores of the same texts (e.g. the base model before fine-tuning): adds the reference
        ratio feature.
    alpha : float, default 0.05
        Level of the set-level test and of the guard.
    test : {"welch", "permutation"}
    guard : bool, default True
        Run the blind baseline on the two sets (:func:`~leakaudit.lm.blind.blind_baseline`).
    power : bool, default True
        Also measure :func:`detection_power` on subsets of the two sets.
    n_repeats : int, default 100
        Draws per size of the power curve.
    k : float, default 0.2
        Share of tokens of Min-K% and Min-K%++.
    random_state : int, Generator or None
    scores : mapping of attack name to array of shape (n_s + n_u,), optional
        The attacks' scores of ``suspect_texts + unseen_texts`` already computed from ``token_scores`` (and
        ``reference_scores``, with this ``k``), as :func:`~leakaudit.lm.attacks.run_lm_attacks` returns them (the
        audit's membership step has them); default: computed here.

    Returns
    -------
    DatasetInference
    """
    from .blind import blind_baseline

    check_scalar(alpha, name="alpha", min_val=0.0, max_val=1.0, include_min=False, include_max=False)
    check_choice(test, name="test", choices=TESTS)
    sus, uns = list(suspect_texts), list(unseen_texts)
    n_s, n_u = len(sus), len(uns)
    if token_scores.n_texts != n_s + n_u:
        raise InvalidInputError(f"token_scores holds {token_scores.n_texts} texts; suspect + unseen = {n_s + n_u} "
                                "(score the suspect texts, then the unseen texts)")
    for what, n in (("suspect", n_s), ("unseen", n_u)):
        if n < MIN_TEXTS:
            raise InvalidInputError(f"the {what} set has {n} texts; dataset inference needs at least {MIN_TEXTS} "
                                    "per set (half fits the combination, half tests it)")
    both = set(sus) & set(uns)
    if both:
        raise InvalidInputError(f"{len(both)} text(s) are in both the suspect and the unseen set, e.g. "
                                f"{next(iter(both))[:60]!r}: a text is one or the other")
    s_test, s_blind, s_power = spawn_seeds(random_state, 3)
    texts = sus + uns
    if scores is None:
        names, x = membership_features(token_scores, texts, reference_scores, k=k)
    else:
        names, x = features_from_scores(scores)
        if x.shape[0] != n_s + n_u:
            raise InvalidInputError(f"scores hold {x.shape[0]} texts; suspect + unseen = {n_s + n_u}")
    is_s = np.r_[np.ones(n_s, int), np.zeros(n_u, int)]
    from ..metrics import auc as _auc

    feature_auc = {n: float(_auc(is_s, x[:, j])) for j, n in enumerate(names)}
    st = _set_test(x[:n_s], x[n_s:], names, test, 2000, np.random.default_rng(s_test))
    comparable, b_auc, b_p = None, float("nan"), float("nan")
    if guard:
        bb = blind_baseline(texts, is_s, alpha=alpha, n_boot=0, random_state=s_blind)
        comparable, b_auc, b_p = bool(bb.p_value > alpha), bb.auc, bb.p_value
    pw = detection_power(x[:n_s], x[n_s:], n_repeats=n_repeats, alpha=alpha, test=test,
                         random_state=s_power) if power else None
    shown = f"p = {st.p_value:.3g} ({'one-sided Welch t-test' if test == 'welch' else 'permutation test'})"
    if comparable is False:
        verdict = NOT_COMPARABLE
        sentence = (f"the suspect and unseen sets differ by their texts alone (a classifier that never queries the "
                    f"model tells them apart with AUC {b_auc:.3f}, permutation p = {b_p:.3g}): the set-level test "
                    f"({shown}) would measure that difference, not the model's use of the suspect set; give an "
                    "unseen set from the same distribution")
    elif st.p_value <= alpha:
        verdict = USED
        sentence = (f"the model tells the suspect texts from the unseen ones ({shown}, alpha {alpha:g}): evidence "
                    "that the suspect set was used in training" + ("" if guard else
                                                                     " (the sets' comparability was not checked)"))
    else:
        verdict = NOT_DETECTED
        sentence = (f"no evidence that the suspect set was used ({shown}, alpha {alpha:g}); with more texts the "
                    "test may still detect use")
    return DatasetInference(verdict=verdict, sentence=sentence, features=[display_name(n) for n in names], test=st,
                            comparable=comparable, blind_auc=float(b_auc), blind_p_value=float(b_p), n_suspect=n_s,
                            n_unseen=n_u, alpha=float(alpha), power=pw, feature_auc=feature_auc)
