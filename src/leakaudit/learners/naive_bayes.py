"""Naive Bayes and Bayes inference (full-joint lookup), with exact leave-one-out.

Both learners are count-based, so a model trained on ``T \\ {t}`` differs from
the model trained on ``T`` only by decremented counts. :meth:`NaiveBayes.loo_proba`
and :meth:`BayesInference.loo_proba` compute the leave-one-out predictions of
every record by count arithmetic, without retraining (spec long-dtp.md §2.4);
the tests check they equal retraining on ``T \\ {t}``.

Feature encoding
----------------
Categorical features hold integer codes ``0 .. n_values[i]-1`` (see
:func:`encode_for_naive_bayes` to get them from a table). Numeric features
(naive Bayes only) are modelled by one Gaussian per class, as Weka's
``NaiveBayes`` does by default.

References
----------
Long, Bindschaedler, Gunter, "Towards Measuring Membership Privacy" (2017),
§5.2 (naive Bayes with Laplace smoothing), Prop 6.3 (Bayes inference),
Props 6.4/6.5 (naive Bayes).
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np
from scipy.special import logsumexp

from .._validation import check_choice, check_indices, check_matrix, check_scalar, plain
from ..exceptions import InvalidInputError, InvalidParameterError
from ._base import Capabilities, Learner, ProbaModel, keep_params

__all__ = ["NaiveBayes", "NaiveBayesModel", "BayesInference", "BayesInferenceModel", "encode_for_naive_bayes"]

#: largest category code accepted (count tables have one row per code value up to the largest seen)
MAX_CODE = 2**24 - 1


def _check_codes(X: np.ndarray, cols: np.ndarray, name: str) -> None:
    if cols.size == 0:
        return
    sub = X[:, cols]
    if sub.size and (sub.min() < 0 or not np.all(sub == np.round(sub))):
        bad = np.argwhere((sub < 0) | (sub != np.round(sub)))[0]
        raise InvalidInputError(
            f"{name}: categorical column {int(cols[bad[1]])} must hold integer codes >= 0; row {int(bad[0])} holds "
            f"{plain(sub[bad[0], bad[1]])} (encode categories with encode_for_naive_bayes, or mark the column numeric)"
        )
    if sub.size and sub.max() > MAX_CODE:  # count tables are indexed by code: a huge code would overflow int64
        bad = np.argwhere(sub > MAX_CODE)[0]
        raise InvalidInputError(
            f"{name}: categorical column {int(cols[bad[1]])} holds code {plain(sub[bad[0], bad[1]])} in row "
            f"{int(bad[0])}; "
            f"codes must be at most {MAX_CODE:,} (encode categories as 0..k-1 with encode_for_naive_bayes)"
        )


def row_groups(A: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Group identical rows: (index of the first row of each group, group of every row).

    Mixed-radix integer keys from per-column codes (much faster than
    ``np.unique(axis=0)``), falling back to it when keys would overflow.
    """
    A = np.asarray(A)
    if A.ndim != 2 or A.shape[0] == 0:
        raise InvalidInputError(f"expected a non-empty 2D array; got shape {A.shape}")
    key = np.zeros(A.shape[0], dtype=np.int64)
    radix = 1
    for j in range(A.shape[1]):
        _, code = np.unique(A[:, j], return_inverse=True)
        size = int(code.max()) + 1
        if radix * size >= 2**62:
            _, first, inv = np.unique(A, axis=0, return_index=True, return_inverse=True)
            return first, inv.reshape(-1)
        key += code.reshape(-1).astype(np.int64) * radix
        radix *= size
    _, first, inv = np.unique(key, return_index=True, return_inverse=True)
    return first, inv.reshape(-1)


def _log_ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    """``ln(num / den)`` for counts; 0/0 (a class with no records) gives -inf."""
    num, den = np.broadcast_arrays(np.asarray(num, dtype=np.float64), np.asarray(den, dtype=np.float64))
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.log(num) - np.log(den)
    return np.where(den > 0, out, -np.inf)


def _normalise_log_joint(lj: np.ndarray) -> np.ndarray:
    """Posterior from log joint scores along the last axis; a row of all -inf gives uniform."""
    lj = np.asarray(lj, dtype=np.float64)
    dead = np.all(lj == -np.inf, axis=-1, keepdims=True)
    safe = np.where(dead, 0.0, lj)
    return np.exp(safe - logsumexp(safe, axis=-1, keepdims=True))


class NaiveBayesModel(ProbaModel):
    """A fitted naive Bayes model (counts and Gaussian statistics).

    Attributes
    ----------
    class_count_ : ndarray of shape (n_classes,)
    cat_counts_ : list of ndarray, one of shape (n_classes, n_values[i]) per categorical feature
    num_mean_, num_m2_ : ndarray of shape (n_classes, n_numeric)
        Per-class mean and sum of squared deviations of each numeric feature.
    """

    def __init__(self, learner: "NaiveBayes", categorical: np.ndarray, numeric: np.ndarray, n_values: np.ndarray,
                 class_count: np.ndarray, cat_counts: list[np.ndarray], num_mean: np.ndarray, num_m2: np.ndarray):
        self.alpha = float(learner.alpha)
        self.prior_smoothing = bool(learner.prior_smoothing)
        self.min_std = float(learner.min_std)
        self.categorical_ = categorical
        self.numeric_ = numeric
        self.n_values_ = n_values
        self.class_count_ = class_count.astype(np.float64)
        k = int(class_count.size)
        self.v_max_ = int(n_values.max()) if n_values.size else 1
        # counts_[y, j, v] = n_{v,y} of categorical feature j; column v_max_ (and v >= n_values[j]) stay 0: unseen
        self.counts_ = np.zeros((k, len(cat_counts), self.v_max_ + 1))
        for j, c in enumerate(cat_counts):
            self.counts_[:, j, : c.shape[1]] = c
        self.cat_counts_ = [self.counts_[:, j, : int(n_values[j])] for j in range(len(cat_counts))]
        with np.errstate(divide="ignore"):
            # ln(n_{v,y} + alpha): the numerators of ln p(x_j = v | y); -inf where the count and alpha are 0
            self.log_num_ = np.log(self.counts_ + self.alpha)
        self.num_mean_ = num_mean
        self.num_m2_ = num_m2
        self.n_classes = int(class_count.size)
        self.n_features_in_ = int(categorical.size + numeric.size)

    # Log prior, log p(x_i | y): the factors of the unnormalised score p(y) prod_i p(x_i|y) (Long et al. Prop 6.4).
    def log_prior(self, class_count: np.ndarray | None = None) -> np.ndarray:
        cc = self.class_count_ if class_count is None else class_count
        a = 1.0 if self.prior_smoothing else 0.0
        return _log_ratio(cc + a, cc.sum(axis=-1, keepdims=True) + a * self.n_classes)

    def log_joint(self, X: np.ndarray) -> np.ndarray:
        """Unnormalised log scores ``ln p(y) + sum_i ln p(x_i|y)``, shape (n_samples, n_classes)."""
        X = check_matrix(X, name="X")
        if X.shape[1] != self.n_features_in_:
            raise InvalidInputError(f"X has {X.shape[1]} features; the model was fitted on {self.n_features_in_}")
        _check_codes(X, self.categorical_, "X")
        out = np.broadcast_to(self.log_prior(), (X.shape[0], self.n_classes)).copy()
        if self.categorical_.size:
            out += self.log_numerators(self._codes(X)) - self.log_denominators(self.class_count_)[None, :]
        if self.numeric_.size:
            var = self._var(self.num_m2_, self.class_count_[:, None])
            xs = X[:, self.numeric_]  # (n, q)
            out += _gauss_loglik(xs[:, None, :], self.num_mean_[None], var[None]).sum(axis=-1)
        return out

    def log_numerators(self, codes: np.ndarray) -> np.ndarray:
        """``sum_j ln(n_{x_j, y} + alpha)`` for every query and class, shape (n, n_classes).

        One sparse product of the queries' one-hot codes with the table ``log_num_``
        (O(n m k), whatever the number of values).
        """
        from scipy import sparse

        n, m = codes.shape
        V1 = self.v_max_ + 1
        cols = (np.arange(m)[None, :] * V1 + codes).ravel()
        S = sparse.csr_matrix((np.ones(n * m), cols, np.arange(0, n * m + 1, m)), shape=(n, m * V1))
        table = self.log_num_.reshape(self.n_classes, m * V1).T  # (m V1, k)
        finite = np.isfinite(table)
        out = S @ np.where(finite, table, 0.0)
        if not finite.all():  # a selected -inf entry makes the score -inf (kept out of the product: 0 * inf)
            out[(S @ (~finite).astype(np.float64)) > 0] = -np.inf
        return out

    def log_denominators(self, class_count: np.ndarray) -> np.ndarray:
        """``sum_j ln(n_y + alpha v_j)`` for each class (last axis); +inf where a term is 0 (an empty class)."""
        d = class_count[..., None] + self.alpha * self.n_values_  # (..., k, m)
        with np.errstate(divide="ignore"):
            out = np.log(d).sum(axis=-1)
        return np.where((d <= 0).any(axis=-1), np.inf, out)

    def _codes(self, X: np.ndarray) -> np.ndarray:
        """Category codes of the categorical columns, unseen codes mapped to the all-zero column v_max_."""
        return np.minimum(X[..., self.categorical_].astype(np.int64), self.v_max_)

    def _var(self, m2: np.ndarray, n: np.ndarray) -> np.ndarray:
        with np.errstate(invalid="ignore", divide="ignore"):
            var = np.where(n > 0, m2 / np.maximum(n, 1), 0.0)
        return np.maximum(var, self.min_std**2)

    def predict_proba(self, X: np.ndarray) -> np.ndarray:
        """Normalised posteriors ``p(y|x)``, shape (n_samples, n_classes)."""
        return _normalise_log_joint(self.log_joint(X))


def _gauss_loglik(x: np.ndarray, mean: np.ndarray, var: np.ndarray) -> np.ndarray:
    return -0.5 * (np.log(2 * np.pi * var) + (x - mean) ** 2 / var)


class NaiveBayes(Learner):
    """Naive Bayes classifier with exact closed-form leave-one-out.

    Parameters
    ----------
    categorical : "all", "none" or array-like of int, default="all"
        Columns holding integer category codes; the others are numeric and get
        one Gaussian per class (Weka's default for numeric attributes).
    n_values : array-like of int, optional
        Number of values of each categorical column (in the order of
        ``categorical``). Default: ``max code + 1`` in the training data. Fix it
        when models are trained on different subsets (the Laplace denominator
        ``n_y + alpha * v_i`` depends on it).
    alpha : float, default=1.0
        Laplace smoothing of categorical likelihoods:
        ``p(x_i = v | y) = (n_{v,y} + alpha) / (n_y + alpha * v_i)``. 0 = none.
    prior_smoothing : bool, default=True
        Smooth the class prior as ``(n_y + 1) / (n + k)`` (Weka does); else ``n_y / n``.
    min_std : float, default=1e-3
        Floor on the standard deviation of each Gaussian (a class with one
        record, or a constant feature).

    Notes
    -----
    The model outputs normalised posteriors. A query whose scores are zero for
    every class (possible with ``alpha=0``) gets the uniform distribution.
    """

    family = "naive-bayes"
    capabilities = Capabilities(loo="closed-form NaiveBayes.loo_proba", stochastic=False)

    def __init__(self, *, categorical: Any = "all", n_values: Any = None, alpha: float = 1.0,
                 prior_smoothing: bool = True, min_std: float = 1e-3):
        keep_params(self, locals())

    # -- configuration ---------------------------------------------------
    def validate_params(self) -> None:
        check_scalar(self.alpha, name="alpha", min_val=0.0)
        check_scalar(self.min_std, name="min_std", min_val=0.0, include_min=False)
        if not isinstance(self.prior_smoothing, (bool, np.bool_)):
            raise InvalidParameterError(f"prior_smoothing must be a bool; got {self.prior_smoothing!r}")
        if isinstance(self.categorical, str):
            check_choice(self.categorical, name="categorical", choices=("all", "none"))

    def _columns(self, X: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(categorical columns, numeric columns, values per categorical column) of X, the parameters checked."""
        self.validate_params()
        m = X.shape[1]
        if isinstance(self.categorical, str):
            cat = np.arange(m) if self.categorical == "all" else np.zeros(0, dtype=np.int64)
        else:
            cat = check_indices(np.asarray(self.categorical, dtype=np.int64).reshape(-1), name="categorical", n=m,
                                allow_empty=True, unique=True)
        num = np.setdiff1d(np.arange(m), cat)
        _check_codes(X, cat, "X")
        mx = X[:, cat].max(axis=0).astype(np.int64) + 1 if (cat.size and X.shape[0]) else np.ones(cat.size, np.int64)
        if self.n_values is None:
            nv = mx
        else:
            nv = np.asarray(self.n_values, dtype=np.int64).reshape(-1)
            if nv.size != cat.size:
                raise InvalidParameterError(f"n_values has {nv.size} entries for {cat.size} categorical columns")
            if np.any(mx > nv):
                j = int(np.argmax(mx > nv))
                raise InvalidInputError(f"X column {int(cat[j])} holds code {mx[j] - 1} but n_values[{j}]={nv[j]}")
        return cat, num, nv

    # -- fitting -----------------------------------------------------------
    def _fit(self, X, y, *, random_state=None, n_classes=None):
        cat, num, nv = self._columns(X)
        return self._fit_arrays(X[:, cat].astype(np.int64), X[:, num], y, cat, num, nv, int(n_classes))

    def _fit_arrays(self, codes, Xnum, y, cat, num, nv, k):
        class_count = np.bincount(y, minlength=k).astype(np.float64)
        cat_counts = []
        if cat.size:
            m, V = cat.size, int(nv.max())
            flat = (y[:, None] * m + np.arange(m)[None, :]) * V + codes  # codes < nv checked in _columns
            allc = np.bincount(flat.ravel(), minlength=k * m * V).reshape(k, m, V).astype(float)
            cat_counts = [allc[:, j, : nv[j]] for j in range(m)]
        q = num.size
        mean = np.zeros((k, q))
        m2 = np.zeros((k, q))
        for c in range(k):
            rows = Xnum[y == c]
            if rows.shape[0]:
                mean[c] = rows.mean(axis=0)
                m2[c] = ((rows - mean[c]) ** 2).sum(axis=0)
        return NaiveBayesModel(self, cat, num, nv, class_count, cat_counts, mean, m2)

    def _fit_many(self, X, y, subsets, seeds, *, n_classes=None):
        """Validate and encode once, then count each subset (same models as fitting one at a time)."""
        from ._base import ListModelBank

        cat, num, nv_all = self._columns(X)
        codes = X[:, cat].astype(np.int32)
        Xnum = X[:, num]
        models = []
        for s in subsets:
            cs = codes[s].astype(np.int64)
            if self.n_values is None:
                nv = cs.max(axis=0) + 1 if (cat.size and len(s)) else np.ones(cat.size, np.int64)
            else:
                nv = nv_all
            models.append(self._fit_arrays(cs, Xnum[s], y[s], cat, num, nv, int(n_classes)))
        return ListModelBank(models, n_classes)

    # -- exact leave-one-out ------------------------------------------------
    def loo_log_joint(self, X: Any, y: Any, records: Any = None, *, X_query: Any = None,
                      n_classes: int | None = None, model: NaiveBayesModel | None = None) -> np.ndarray:
        """Unnormalised leave-one-out log scores ``ln p'(y) + sum_i ln p'(x_i|y)``.

        Same arguments and shapes as :meth:`loo_proba`.
        """
        X, y, records, n_classes = self._check_loo_inputs(X, y, records, n_classes)
        if model is None:
            model = self._fit(X, y, n_classes=n_classes)
        if X_query is None:
            return self._loo_at_self(model, X, y, records)
        Xq = check_matrix(X_query, name="X_query")
        if Xq.shape[1] != X.shape[1]:
            raise InvalidInputError(f"X_query has {Xq.shape[1]} features; X has {X.shape[1]}")
        _check_codes(Xq, model.categorical_, "X_query")
        return self._loo_at_queries(model, X, y, records, Xq)

    def loo_proba(self, X: Any, y: Any, records: Any = None, *, X_query: Any = None,
                  n_classes: int | None = None, return_full: bool = False):
        """Exact leave-one-out posteriors ``p_{A(T\\{t})}(.|x)`` by count arithmetic.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The training set T.
        y : array-like of shape (n_samples,)
        records : array-like of int, optional
            Rows t of T to leave out (default: all).
        X_query : array-like of shape (n_query, n_features), optional
            Where to query each leave-one-out model; default: at the left-out
            record's own features x(t).
        n_classes : int, optional
        return_full : bool, default=False
            Also return the full model's outputs at the same points.

        Returns
        -------
        ndarray of shape (n_records, n_classes) when ``X_query`` is None (row r
        is ``p_{A(T\\{t_r})}(.|x(t_r))``), else (n_records, n_query, n_classes).
        With ``return_full=True``, the pair (full model's outputs at the records,
        (n_records, n_classes), or at ``X_query``, (n_query, n_classes); those outputs).

        Notes
        -----
        ``n_values`` (the Laplace denominators) stays that of the full model, as
        if the attribute's declared values were known in advance (Weka's header).
        Records with identical (x, y) share one computation.
        """
        loo = _normalise_log_joint(self.loo_log_joint(X, y, records, X_query=X_query, n_classes=n_classes))
        return (_full_outputs(self, X, y, records, X_query, n_classes), loo) if return_full else loo

    def _loo_at_self(self, model: NaiveBayesModel, X, y, records) -> np.ndarray:
        Xr = X[records]
        yr = y[records]
        first, inv = row_groups(np.concatenate([Xr, yr[:, None].astype(float)], axis=1))
        Xu, yu = Xr[first], yr[first]
        step = max(1, 2_000_000 // max(1, X.shape[1] * model.n_classes))
        out = np.concatenate([self._loo_eval(model, Xu[s:s + step], yu[s:s + step], Xu[s:s + step, None, :])[:, 0, :]
                              for s in range(0, len(Xu), step)])
        return out[inv]

    def _loo_at_queries(self, model, X, y, records, Xq) -> np.ndarray:
        n_r, n_q, k = len(records), Xq.shape[0], model.n_classes
        out = np.empty((n_r, n_q, k))
        m = max(1, X.shape[1])
        chunk = max(1, int(2_000_000 // max(1, n_q * k * m)))
        num_q = model.log_numerators(model._codes(Xq)) if model.categorical_.size else None
        for s in range(0, n_r, chunk):
            r = records[s:s + chunk]
            out[s:s + chunk] = self._loo_eval(model, X[r], y[r], np.broadcast_to(Xq, (len(r),) + Xq.shape), num_q)
        return out

    def _loo_eval(self, model: NaiveBayesModel, Xt: np.ndarray, yt: np.ndarray, Xq: np.ndarray,
                  num_q: np.ndarray | None = None) -> np.ndarray:
        """Log scores of the models trained without each record t at queries.

        Xt : (R, m) left-out records; yt : (R,); Xq : (R, Q, m) queries per record;
        num_q : (Q, k) full-model ``log_numerators`` when every record shares the same queries.
        Returns (R, Q, k).
        """
        R, Q = Xq.shape[0], Xq.shape[1]
        k = model.n_classes
        onehot = (np.arange(k)[None, :] == yt[:, None])  # (R, k): the class that loses a record
        cc = model.class_count_[None, :] - onehot  # (R, k) class counts of T \ {t}
        out = np.broadcast_to(model.log_prior(cc)[:, None, :], (R, Q, k)).copy()
        alpha = model.alpha
        if model.categorical_.size:
            m = model.categorical_.size
            codes = model._codes(Xq)  # (R, Q, m)
            own = model._codes(Xt)  # (R, m)
            if num_q is None:
                num = model.log_numerators(codes.reshape(R * Q, m)).reshape(R, Q, k)
            else:
                num = np.broadcast_to(num_q[None], (R, Q, k)).copy()
            # T\{t} changes only class y(t): n_{x_j(t), y(t)} -> n - 1 on features where the query shares t's value
            n_own = model.counts_[yt[:, None], np.arange(m)[None, :], own]  # (R, m), >= 1
            with np.errstate(divide="ignore"):
                delta = np.log(n_own - 1 + alpha) - np.log(n_own + alpha)  # (R, m), finite or -inf
            same = codes == own[:, None, :]  # (R, Q, m)
            fin = np.isfinite(delta)
            corr = (same * np.where(fin, delta, 0.0)[:, None, :]).sum(axis=2)
            corr = np.where((same & ~fin[:, None, :]).any(axis=2), -np.inf, corr)  # (R, Q)
            num[np.arange(R), :, yt] += corr
            den = model.log_denominators(cc)  # (R, k)
            cat_part = num - den[:, None, :]
            out += np.where(np.isinf(den)[:, None, :], -np.inf, cat_part)
        if model.numeric_.size:
            num = model.numeric_
            n = model.class_count_  # (k,)
            mean, m2 = model.num_mean_, model.num_m2_  # (k, q)
            xt = Xt[:, num]  # (R, q)
            # Welford removal of x from class y(t): mean' = (n mean - x)/(n-1); M2' = M2 - (x - mean)(x - mean').
            n_t = n[yt][:, None]
            with np.errstate(invalid="ignore", divide="ignore"):
                mean_t = np.where(n_t > 1, (n_t * mean[yt] - xt) / np.maximum(n_t - 1, 1), 0.0)
            m2_t = np.where(n_t > 1, np.maximum(m2[yt] - (xt - mean[yt]) * (xt - mean_t), 0.0), 0.0)
            means = np.broadcast_to(mean[None], (R,) + mean.shape).copy()
            m2s = np.broadcast_to(m2[None], (R,) + m2.shape).copy()
            means[np.arange(R), yt] = mean_t
            m2s[np.arange(R), yt] = m2_t
            var = model._var(m2s, cc[:, :, None])  # (R, k, q)
            xq = Xq[:, :, num]  # (R, Q, q)
            out += _gauss_loglik(xq[:, :, None, :], means[:, None], var[:, None]).sum(axis=-1)
        return out


class BayesInferenceModel(ProbaModel):
    """A fitted Bayes-inference (full joint lookup) model: counts per distinct x."""

    def __init__(self, learner: "BayesInference", keys: np.ndarray, counts: np.ndarray, class_count: np.ndarray):
        self.alpha = float(learner.alpha)
        self.unseen = learner.unseen
        self.keys_ = keys  # (n_distinct, m) sorted distinct training rows
        self.counts_ = counts.astype(np.float64)  # (n_distinct, k)
        self.class_count_ = class_count.astype(np.float64)
        self.n_classes = int(class_count.size)
        self.n_features_in_ = int(keys.shape[1])

    def lookup(self, X: np.ndarray) -> np.ndarray:
        """Row of ``keys_`` equal to each query (-1 if the query was never seen)."""
        return _lookup(self.keys_, X)

    def predict_proba(self, X: np.ndarray) -> np.ndarray:
        """``p(y|x) = (n_{x,y} + alpha) / (n_x + k alpha)``, shape (n_samples, n_classes)."""
        X = check_matrix(X, name="X")
        if X.shape[1] != self.n_features_in_:
            raise InvalidInputError(f"X has {X.shape[1]} features; the model was fitted on {self.n_features_in_}")
        idx = self.lookup(X)
        c = np.where(idx[:, None] >= 0, self.counts_[np.maximum(idx, 0)], 0.0)
        return _bi_proba(c, self.class_count_[None, :], self.alpha, self.unseen)


def _lookup(keys: np.ndarray, X: np.ndarray) -> np.ndarray:
    if keys.shape[0] == 0:
        return np.full(X.shape[0], -1)
    allrows = np.concatenate([keys, X], axis=0)
    _, inv = np.unique(allrows, axis=0, return_inverse=True)
    inv = inv.reshape(-1)
    pos = np.full(inv.max() + 1, -1)
    pos[inv[: keys.shape[0]]] = np.arange(keys.shape[0])
    return pos[inv[keys.shape[0]:]]


def _bi_proba(c: np.ndarray, class_count: np.ndarray, alpha: float, unseen: str) -> np.ndarray:
    """Bayes-inference posteriors from counts n_{x,y} (..., k); fallback where n_x + k alpha = 0."""
    k = c.shape[-1]
    tot = c.sum(axis=-1, keepdims=True) + alpha * k
    if unseen == "prior":
        fb = class_count / np.maximum(class_count.sum(axis=-1, keepdims=True), 1e-300)
    else:
        fb = np.full(k, 1.0 / k)
    with np.errstate(invalid="ignore", divide="ignore"):
        p = (c + alpha) / tot
    return np.where(tot > 0, p, np.broadcast_to(fb, p.shape))


class BayesInference(Learner):
    """Bayes inference by full joint lookup: ``p(y|x) = n_{x,y} / n_x`` (Long et al. Prop 6.3).

    Parameters
    ----------
    alpha : float, default=0.0
        Additive smoothing: ``(n_{x,y} + alpha) / (n_x + k alpha)``. The paper's model is ``alpha=0``.
    unseen : {"uniform", "prior"}, default="uniform"
        Output for a query never seen in training (with ``alpha=0``): the
        uniform distribution, or the class prior ``n_y / n``.
    """

    family = "bayes-inference"
    capabilities = Capabilities(loo="closed-form BayesInference.loo_proba", stochastic=False)

    def __init__(self, *, alpha: float = 0.0, unseen: str = "uniform"):
        keep_params(self, locals())

    def validate_params(self) -> None:
        check_scalar(self.alpha, name="alpha", min_val=0.0)
        check_choice(self.unseen, name="unseen", choices=("uniform", "prior"))

    def _fit(self, X, y, *, random_state=None, n_classes=None):
        k = int(n_classes)
        keys, inv = np.unique(X, axis=0, return_inverse=True)
        inv = inv.reshape(-1)
        counts = np.zeros((keys.shape[0], k))
        np.add.at(counts, (inv, y), 1.0)
        return BayesInferenceModel(self, keys, counts, np.bincount(y, minlength=k))

    def loo_proba(self, X: Any, y: Any, records: Any = None, *, X_query: Any = None,
                  n_classes: int | None = None, return_full: bool = False):
        """Exact leave-one-out posteriors by decrementing ``n_{x(t)}`` and ``n_{x(t),y(t)}``.

        Parameters and returns as :meth:`NaiveBayes.loo_proba`: shape
        (n_records, n_classes) at each record's own x(t), or
        (n_records, n_query, n_classes) at ``X_query``; with ``return_full=True``
        the pair (full model's outputs, those).
        """
        if return_full:
            loo = self.loo_proba(X, y, records, X_query=X_query, n_classes=n_classes)
            return _full_outputs(self, X, y, records, X_query, n_classes), loo
        X, y, records, n_classes = self._check_loo_inputs(X, y, records, n_classes)
        model = self._fit(X, y, n_classes=n_classes)
        k = model.n_classes
        idx_t = model.lookup(X[records])  # (R,)
        onehot = (np.arange(k)[None, :] == y[records][:, None]).astype(float)
        cc = model.class_count_[None, :] - onehot
        if X_query is None:
            c = model.counts_[idx_t] - onehot
            return _bi_proba(c, cc, model.alpha, model.unseen)
        Xq = check_matrix(X_query, name="X_query")
        if Xq.shape[1] != X.shape[1]:
            raise InvalidInputError(f"X_query has {Xq.shape[1]} features; X has {X.shape[1]}")
        idx_q = model.lookup(Xq)  # (Q,)
        cq = np.where(idx_q[:, None] >= 0, model.counts_[np.maximum(idx_q, 0)], 0.0)  # (Q, k)
        same = (idx_q[None, :] == idx_t[:, None]) & (idx_q[None, :] >= 0)  # (R, Q)
        c = cq[None] - same[..., None] * onehot[:, None, :]
        return _bi_proba(c, cc[:, None, :], model.alpha, model.unseen)


def _full_outputs(learner, X, y, records, X_query, n_classes) -> np.ndarray:
    """The full model's outputs at the records (or at ``X_query``), for ``loo_proba(return_full=True)``."""
    X, y, records, n_classes = learner._check_loo_inputs(X, y, records, n_classes)
    model = learner._fit(X, y, n_classes=n_classes)
    if X_query is None:
        return model.predict_proba(X[records])
    return model.predict_proba(check_matrix(X_query, name="X_query"))


def encode_for_naive_bayes(frame: Any, *, numeric: Sequence[str] | str = "auto",
                           categories: dict | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray, dict]:
    """Encode a table for :class:`NaiveBayes`: category codes and raw numerics.

    Parameters
    ----------
    frame : pandas.DataFrame
        Raw features (text columns categorical; missing values become their own category).
    numeric : "auto", "none" or list of column names
        Columns kept numeric (Gaussian). "auto": the numeric-dtype columns;
        "none": every column is categorical (numbers become categories).
    categories : dict, optional
        Column -> list of category values, to fix codes across subsets.

    Returns
    -------
    X : ndarray of shape (n_samples, n_columns)
    categorical : ndarray of int, the indices of categorical columns
    n_values : ndarray of int, number of categories per categorical column
    categories : dict, the category list of each categorical column
    """
    import pandas as pd

    if not isinstance(frame, pd.DataFrame):
        raise InvalidInputError(f"frame must be a pandas DataFrame; got {type(frame).__name__}")
    if isinstance(numeric, str):
        check_choice(numeric, name="numeric", choices=("auto", "none"))
        num_cols = list(frame.select_dtypes(include="number").columns) if numeric == "auto" else []
    else:
        num_cols = list(numeric)
        missing = [c for c in num_cols if c not in frame.columns]
        if missing:
            raise InvalidParameterError(f"numeric names columns not in frame: {missing}")
    cats = dict(categories or {})
    cols, cat_idx, nv = [], [], []
    for i, name in enumerate(frame.columns):
        s = frame[name]
        if name in num_cols:
            v = pd.to_numeric(s, errors="coerce").to_numpy(dtype=np.float64)
            if np.isnan(v).any():
                raise InvalidInputError(f"numeric column {name!r} has missing values; impute or make it categorical")
            cols.append(v)
            continue
        vals = s.astype("object").where(s.notna(), "?").astype(str)
        if name not in cats:
            cats[name] = sorted(pd.unique(vals))
        lookup = {v: j for j, v in enumerate(cats[name])}
        codes = vals.map(lookup)
        if codes.isna().any():
            raise InvalidInputError(f"column {name!r} holds values not in categories[{name!r}]")
        cols.append(codes.to_numpy(dtype=np.float64))
        cat_idx.append(i)
        nv.append(len(cats[name]))
    X = np.column_stack(cols) if cols else np.zeros((len(frame), 0))
    return X, np.asarray(cat_idx, dtype=np.int64), np.asarray(nv, dtype=np.int64), cats
