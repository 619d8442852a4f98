"""Quantile-regression membership inference of Bertran, Tang, Kearns, Morgenstern, Roth and Wu, "Scalable
Membership Inference Attacks via Quantile Regression" (NeurIPS 2023, arXiv 2307.03694).

No reference models and no training recipe: the attacker holds public records known to be non-members, with
the target model's outputs on them, and learns how the target's confidence on a non-member depends on the
record. A record whose confidence is unusually high *for a record like it* is called a member.

The statistic (per record, from the target's probabilities):

* ``"hinge"`` (the authors' image code): ln p_y − max_{y'≠y} ln p_{y'}, the logit margin of the true class
  (log-probabilities differ from logits by a per-row constant, so this is the hinge score of their
  ``label_logit_and_hinge_scoring_fn``);
* ``"logit"`` (their tabular code): ln p_y − ln Σ_{y'≠y} p_{y'}, LiRA's logit-scaled confidence.

Both coincide on two classes. The regression of the statistic s on the record's features x and label y
(``method``):

* ``"gaussian"`` (the parametrisation of the authors' released code, images and tables alike): s | x ~ N(μ(x),
  σ(x)²); the membership score is the z-statistic (s − μ(x)) / σ(x), one ranking for every FPR. μ is a gradient
  boosted regression of s; σ² a gradient boosted gamma regression (log link) of the squared residuals, which is
  the Gaussian likelihood in σ² given μ (a squared N(0, σ²) residual is σ² χ²_1, a gamma variable). The
  residuals come from μ models that did not see the record (3-fold inside the training set), so an overfit μ
  cannot shrink σ where data are sparse.
* ``"pinball"`` (the paper's Algorithm 1): q(x), the (1 − alpha) conditional quantile of s, fitted with the
  pinball loss; the membership score is s − q(x).

Regressors are scikit-learn's ``HistGradientBoostingRegressor`` (early stopping on a 10 % validation split). The
authors fitted a joint Gaussian mean and log-σ head (CatBoost's ``RMSEWithUncertainty``, a network for images);
scikit-learn has no joint head, hence the two-stage fit.

Cross-fitting: records are split into ``n_folds`` folds (identical records always share one), and the regressors
that score fold j are fitted on the public records of the other folds only, so a public record is scored as a fresh
non-member would be. Decisions use conformal thresholds (Vovk, Gammerman and Shafer 2005; Romano et al. 2019): for
fold j, the ⌈(m + 1)(1 − alpha)⌉-th smallest of the m out-of-fold scores of the public records outside fold j.
With one regressor a non-member exchangeable with the public ones would be called a member with probability at most
alpha; with one per fold (cross-conformal, Vovk 2015) the rate is alpha up to the folds' differences
(benchmarks/README.md).
"""

from __future__ import annotations

import dataclasses
import warnings

import numpy as np
from threadpoolctl import threadpool_limits

from .._random import check_random_state, spawn_seeds
from .._validation import check_array, check_choice, check_consistent_length, check_matrix, check_scalar
from ..exceptions import InvalidInputError, InvalidParameterError, NotEstimableWarning
from ._base import Attack, AttackInputs, AttackResult, Unmet, check_target_inputs, true_class_probability
from .lira import _TINY, check_statistic_params, logit_scaled_confidence

__all__ = ["QuantileRegressionAttack", "conformal_threshold", "hinge_statistic"]

_MIN_STD = 1e-6
_INNER_FOLDS = 3  # out-of-sample residuals for the variance regression


def hinge_statistic(probs, y, clip: float | None = None, votes: int | None = None) -> np.ndarray:
    """ln p_y − max_{y'≠y} ln p_{y'} of each row (the hinge / logit-margin score of Bertran et al.).

    Parameters
    ----------
    probs : ndarray of shape (n, C), C >= 2
    y : ndarray of shape (n,)
    clip : float in (0, 0.5), optional
        Probabilities floored at ``clip`` (default: at 1e-45, as LiRA's statistic).
    votes : int, optional
        The outputs are means of ``votes`` = T votes (a forest's trees):
        ln(T p_y + ½) − ln(T max_{y'≠y} p_{y'} + ½), finite when every tree agrees (as
        :func:`~leakaudit.membership.logit_scaled_confidence`).

    Returns
    -------
    ndarray of shape (n,)
    """
    probs = np.asarray(probs, dtype=float)
    y = np.asarray(y)
    p_y = true_class_probability(probs, y)
    others = probs.copy()
    np.put_along_axis(others, y.reshape(-1, 1), -np.inf, axis=1)
    top = others.max(axis=1)
    if votes is not None:
        return np.log(votes * p_y + 0.5) - np.log(votes * top + 0.5)
    floor = _TINY if clip is None else clip
    return np.log(np.maximum(p_y, floor)) - np.log(np.maximum(top, floor))


def conformal_threshold(calibration_scores, alpha: float) -> float:
    """The ⌈(m + 1)(1 − alpha)⌉-th smallest of m calibration scores (+inf when that rank exceeds m).

    A new score exchangeable with the calibration scores exceeds it with probability at most ``alpha``
    (split conformal prediction: Vovk, Gammerman and Shafer 2005; Lei et al., JASA 2018).
    """
    s = np.sort(np.asarray(calibration_scores, dtype=float))
    k = int(np.ceil((s.size + 1) * (1.0 - alpha)))
    return float(s[k - 1]) if 1 <= k <= s.size else float("inf")


def _check_public(public, n: int) -> np.ndarray:
    m = check_array(public, name="public", ndim=1, dtype=None)
    if m.dtype != bool:
        if m.dtype.kind not in "iuf" or not np.isin(m, (0, 1)).all():
            raise InvalidInputError("public must be a boolean mask (or 0/1) marking the attacker's known "
                                    f"non-members; got values of dtype {m.dtype}")
        m = m.astype(bool)
    if m.shape[0] != n:
        raise InvalidInputError(f"public has {m.shape[0]} entries; expected one per record ({n})")
    return m


class QuantileRegressionAttack(Attack):
    """Membership inference by (cross-fitted) quantile regression on public non-members (Bertran et al. 2023).

    Parameters
    ----------
    alpha : float in (0, 1), default=0.01
        Target false-positive rate of ``decisions`` (and the quantile level 1 − alpha of ``method="pinball"``).
    method : {"gaussian", "pinball"}, default="gaussian"
        Gaussian mean and standard deviation regression (score: z-statistic), or direct regression of the
        (1 − alpha) quantile with the pinball loss (score: statistic minus quantile). See the module docstring.
    statistic : {"hinge", "logit"}, default="hinge"
        The target's confidence statistic (identical on two classes).
    clip : float in (0, 0.5), optional
        Floor on the probabilities inside the statistic (default 1e-45). A model whose outputs are often exactly
        0 or 1 otherwise gives those records statistics of ±103.6, which swamp a squared-error regression.
    votes : int, optional
        The outputs are means of ``votes`` votes (a random forest's number of trees): the statistic becomes the
        empirical logit of the votes (Haldane-Anscombe), finite when all trees agree, as ``LiRA(votes=T)``.
        Exclusive with ``clip``.
    n_folds : int >= 2, default=5
        Cross-fitting folds: every record is scored by regressors fitted on the public records of the other
        folds.
    max_iter : int, default=200
        Boosting iterations of each regressor (early stopping usually ends them sooner).
    learning_rate : float, default=0.05
    max_leaf_nodes : int, default=15
    min_samples_leaf : int, default=20
        Tree shape of the regressors (``HistGradientBoostingRegressor`` arguments).
    n_threads : int or None, default=1
        OpenMP threads of the regressors; None leaves scikit-learn's default (every core). The fits are small:
        one thread is the fastest on a shared machine.
    random_state : None, int or Generator, default=0
        Fold assignment, inner splits and the regressors' early-stopping splits.

    Notes
    -----
    Inputs: the target's probabilities on n records, their labels, optionally their features, and ``public``,
    the records the attacker knows to be non-members (at least ``2 * n_folds``). Without features the regression
    conditions on the label only (a class-conditional calibration of the statistic). Scores do not depend on the
    order of the records: folds are drawn over records sorted by content, and every regressor is fitted on rows
    in that order.
    """

    name = "quantile"
    needs = ()

    def __init__(self, *, alpha: float = 0.01, method: str = "gaussian", statistic: str = "hinge",
                 clip: float | None = None, votes: int | None = None, n_folds: int = 5, max_iter: int = 200,
                 learning_rate: float = 0.05, max_leaf_nodes: int = 15, min_samples_leaf: int = 20,
                 n_threads: int | None = 1, random_state=0):
        self.alpha = alpha
        self.method = method
        self.statistic = statistic
        self.clip = clip
        self.votes = votes
        self.n_folds = n_folds
        self.max_iter = max_iter
        self.learning_rate = learning_rate
        self.max_leaf_nodes = max_leaf_nodes
        self.min_samples_leaf = min_samples_leaf
        self.n_threads = n_threads
        self.random_state = random_state

    # -- inputs from AttackInputs ----------------------------------------------------------------------

    def missing(self, inputs: AttackInputs) -> list[str]:
        """Public non-members come from ``inputs.extra["public"]`` (a mask over the audited records) or from the
        population (``population_probs`` and ``population_y``, features in ``inputs.extra["population_X"]``)."""
        if inputs.extra.get("public") is not None:
            return []
        return [f for f in ("population_probs", "population_y") if getattr(inputs, f) is None]

    def unmet(self, inputs: AttackInputs) -> Unmet | None:
        """As :meth:`Attack.unmet`, and the cross-fitting folds need at least ``2 * n_folds`` public non-members."""
        unmet = super().unmet(inputs)
        public = inputs.extra.get("public")
        if unmet is None and public is not None and int(np.sum(public)) < 2 * self.n_folds:
            return Unmet(f"its {self.n_folds} cross-fitting folds need at least {2 * self.n_folds} non-members; "
                         f"{int(np.sum(public))} given", fix=f"give at least {2 * self.n_folds} non-members",
                         missing=("nonmembers",))
        return unmet

    def run(self, inputs: AttackInputs) -> AttackResult:
        """Score the audited records; the public non-members are the population and/or ``extra["public"]``.

        The population joins the public records when its features are given (``extra["population_X"]``) or
        when it is the only public source; the regression then uses the features only if every record has them.
        """
        miss = self.missing(inputs)
        if miss:
            raise InvalidInputError("the quantile attack needs public non-members: inputs.extra['public'] (a mask "
                                    f"over the audited records) or the population ({', '.join(miss)} missing)")
        n = inputs.n
        mask = inputs.extra.get("public")
        public = np.zeros(n, bool) if mask is None else _check_public(mask, n)
        pop_X = inputs.extra.get("population_X")
        use_pop = inputs.population_probs is not None and inputs.population_y is not None and (
            pop_X is not None or mask is None)
        probs, y, X = inputs.probs, inputs.y, inputs.X
        if use_pop:
            zp = np.asarray(inputs.population_probs)
            X = None if X is None or pop_X is None else np.vstack([check_matrix(X, name="X"),
                                                                   check_matrix(pop_X, name="population_X")])
            probs = np.vstack([np.asarray(inputs.probs), zp])
            y = np.concatenate([np.asarray(inputs.y), np.asarray(inputs.population_y)])
            public = np.r_[public, np.ones(len(zp), bool)]
        res = self.score(probs, y, public, X=X)
        if not use_pop:
            return res
        info = dict(res.info)
        info["n_population"] = int(len(public) - n)
        return AttackResult(attack=res.attack, scores=res.scores[:n], decisions=res.decisions[:n],
                            threshold=res.threshold, info=info)

    # -- the attack on plain arrays -------------------------------------------------------------------

    def _check_params(self):
        check_scalar(self.alpha, name="alpha", min_val=0.0, max_val=1.0, include_min=False, include_max=False)
        check_choice(self.method, name="method", choices=("gaussian", "pinball"))
        check_choice(self.statistic, name="statistic", choices=("hinge", "logit"))
        if self.clip is not None and self.votes is not None:
            raise InvalidParameterError("give clip or votes, not both: each defines the statistic")
        check_statistic_params(self.clip, self.votes)
        check_scalar(self.n_folds, name="n_folds", kind=(int, np.integer), min_val=2)
        check_scalar(self.max_iter, name="max_iter", kind=(int, np.integer), min_val=1)
        check_scalar(self.learning_rate, name="learning_rate", min_val=0.0, include_min=False)
        check_scalar(self.max_leaf_nodes, name="max_leaf_nodes", kind=(int, np.integer), min_val=2)
        check_scalar(self.min_samples_leaf, name="min_samples_leaf", kind=(int, np.integer), min_val=1)
        if self.n_threads is not None:
            check_scalar(self.n_threads, name="n_threads", kind=(int, np.integer), min_val=1)

    def _regressor(self, loss: str, seed: int, categorical):
        from sklearn.ensemble import HistGradientBoostingRegressor

        kw = {"quantile": 1.0 - float(self.alpha)} if loss == "quantile" else {}
        return HistGradientBoostingRegressor(
            loss=loss, max_iter=int(self.max_iter), learning_rate=float(self.learning_rate),
            max_leaf_nodes=int(self.max_leaf_nodes), min_samples_leaf=int(self.min_samples_leaf),
            early_stopping=True, validation_fraction=0.1, n_iter_no_change=10, categorical_features=categorical,
            random_state=seed, **kw)

    def _fit_score(self, F_tr, s_tr, F_te, s_te, seed: int, cat) -> np.ndarray:
        """Membership scores of the test rows from regressors fitted on the training rows."""
        s1, s2, s3 = spawn_seeds(seed, 3)
        if self.method == "pinball":
            q = self._regressor("quantile", s1, cat).fit(F_tr, s_tr)
            return s_te - q.predict(F_te)
        from sklearn.model_selection import KFold, cross_val_predict

        mu = self._regressor("squared_error", s1, cat).fit(F_tr, s_tr)
        mu_oof = cross_val_predict(self._regressor("squared_error", s2, cat), F_tr, s_tr,
                                   cv=KFold(_INNER_FOLDS, shuffle=True, random_state=s2))
        r2 = np.maximum((s_tr - mu_oof) ** 2, 1e-12)
        var = self._regressor("gamma", s3, cat).fit(F_tr, r2).predict(F_te)
        return (s_te - mu.predict(F_te)) / np.maximum(np.sqrt(var), _MIN_STD)

    def score(self, probs, y, public, X=None) -> AttackResult:
        """Score records from plain arrays.

        Parameters
        ----------
        probs : array-like of shape (n, C)
            The target model's class probabilities on the records.
        y : array-like of shape (n,)
            Their labels.
        public : array-like of bool, shape (n,)
            True for the records the attacker knows to be non-members (its public data). They are scored too,
            out of fold, so they can serve as the evaluated non-members.
        X : array-like of shape (n, d), optional
            The records' features (what the regression conditions on, with the label). Without them the label
            alone is used.

        Returns
        -------
        AttackResult
            ``scores`` (higher means member: z-statistic or statistic minus quantile), ``decisions`` (score
            above the record's fold threshold), ``threshold`` None (one per fold, in ``info["thresholds"]``),
            and ``info``: ``public_fpr`` (the share of public records called members, out of fold),
            ``n_public``, ``n_folds``, ``features`` ("features and label" or "label only").
        """
        self._check_params()
        p, yy = check_target_inputs(probs, y)
        n, C = p.shape
        pub = _check_public(public, n)
        if X is not None:
            X = check_matrix(X, name="X")
            check_consistent_length(probs=p, X=X)
        k = int(self.n_folds)
        if pub.sum() < 2 * k:
            raise InvalidInputError(f"public marks {int(pub.sum())} records as known non-members; the quantile "
                                    f"attack needs at least 2 * n_folds = {2 * k}")
        if self.statistic == "hinge":
            stat = hinge_statistic(p, yy, self.clip, self.votes)
        else:
            stat = logit_scaled_confidence(p, yy, self.clip, self.votes)
        # features: X and the label as a categorical column (one-hot codes past scikit-learn's 255 categories)
        lab = yy.reshape(-1, 1).astype(float) if C <= 255 else np.eye(C)[yy]
        F = lab if X is None else np.hstack([X, lab])
        cat = (np.arange(F.shape[1]) == F.shape[1] - 1) if C <= 255 else None
        # folds over records grouped by content (duplicates together), drawn in content order: order-invariant
        _, group = np.unique(np.hstack([F, p]), axis=0, return_inverse=True)
        group = group.ravel()
        rng = check_random_state(self.random_state)
        n_groups = int(group.max()) + 1
        fold_of_group = np.empty(n_groups, np.int64)
        fold_of_group[rng.permutation(n_groups)] = np.arange(n_groups) % k
        fold = fold_of_group[group]
        order = np.argsort(group, kind="stable")  # canonical row order for every fit
        seeds = spawn_seeds(int(rng.integers(0, 2**31 - 1)), k)
        scores = np.empty(n)
        with threadpool_limits(limits=self.n_threads, user_api="openmp"):
            self._cross_fit(F, stat, pub, fold, order, seeds, cat, scores)
        # split-conformal threshold per fold from the public records of the other folds (scored out of fold)
        thresholds = [conformal_threshold(scores[pub & (fold != j)], float(self.alpha)) for j in range(k)]
        if not np.all(np.isfinite(thresholds)):
            need = int(np.ceil(1.0 / float(self.alpha))) - 1
            warnings.warn(f"alpha={self.alpha:g} needs at least {need} public non-members outside each fold for a "
                          f"conformal threshold; {int(pub.sum())} public records in {k} folds give fewer, so those "
                          "folds' records are never called members (scores are unaffected)", NotEstimableWarning,
                          stacklevel=2)
        thr = np.asarray(thresholds)[fold]
        decisions = (scores > thr).astype(int)
        return self.result(scores, decisions, threshold=None, method=self.method, statistic=self.statistic,
                            rule="member iff score > the threshold of the record's fold",
                            thresholds=[t if np.isfinite(t) else None for t in thresholds],
                            public_fpr=float(decisions[pub].mean()), n_public=int(pub.sum()), n_folds=k,
                            features="label only" if X is None else "features and label")

    def _cross_fit(self, F, stat, pub, fold, order, seeds, cat, scores) -> None:
        """Fill ``scores`` fold by fold from regressors fitted on the public records of the other folds."""
        for j in range(len(seeds)):
            tr = order[pub[order] & (fold[order] != j)]
            te = np.flatnonzero(fold == j)
            if te.size == 0:
                continue
            if tr.size < 2:
                raise InvalidInputError(f"fold {j} has fewer than 2 public records to train on; give more public "
                                        "non-members or fewer n_folds")
            scores[te] = self._fit_score(F[tr], stat[tr], F[te], stat[te], seeds[j], cat)


def audit_inputs(ctx, inputs: AttackInputs) -> AttackInputs:
    """The audit's inputs for the quantile attack: the records' encoded features (a table-taking estimator's own
    inputs are row ids), the audited non-members as the attacker's public non-members (each scored out of fold),
    and the population with its features when the model's outputs on it are given (``ctx``: the audit's context)."""
    data, target = ctx.data, ctx.target
    n_pop = len(data.y_pop) if target.probs_pop is not None else 0
    extra = {"public": data.is_member == 0}
    if n_pop:
        extra["population_X"] = data.X_pop
    return dataclasses.replace(inputs, X=np.vstack([data.X_mem, data.X_non]),
                               population_probs=target.probs_pop if n_pop else None,
                               population_y=data.y_pop if n_pop else None, extra=extra)
