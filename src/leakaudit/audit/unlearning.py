"""Unlearning verification: after unlearning, is the forget set as unknown to the model as records it never saw?

The gold standard of unlearning is the model retrained without the forget set (on the retain set alone). This module
asks whether the unlearned model ``after`` is, on the forget set, indistinguishable from that gold standard, the way
a membership attack would look at it: OWASP AISVS 1.0 control 12.2.2 asks that unlearning be verified by a membership
test.

Scores and reference models
---------------------------
Every model is scored on each forget record and each non-member record by LiRA's logit-scaled confidence phi
(Carlini et al. 2022, Sec. IV-B; :func:`leakaudit.membership.logit_scaled_confidence`), or, where the before-model's
probabilities are the mean of T votes (a random or extra-trees forest, bare or a Pipeline's final step), by the
empirical vote logit the audit's LiRA uses (``votes=T``). K reference models are
trained by the ``before`` model's own recipe (the learner :mod:`leakaudit.audit.inputs.target` retrains it with) on the
retain set alone, with K seeds: K draws of the gold standard. Each record's phi is taken relative to the references'
mean and scaled by their spread (LiRA's offline, per-record Gaussian; the spread is floored at its median, and a
deterministic recipe, whose references are all one model, scales every record alike; a difference below rounding,
:data:`RESOLUTION`, counts as none):

    z_m(i) = (phi_m(i) - mean_{k != m} phi_k(i)) / s(i)

Set-level test: the excess forget signal
----------------------------------------
T(m) = AUC(forget against non-members, z_m) is how far model m tells the forget records from records it never saw,
beyond what retraining gives. Each reference k gives a draw of T under exact retraining (with its own mean left
out), and the excess

    E = T(after) - mean_k T(k)

is 0 in expectation when ``after`` is a retrained model: the non-members control for a forget set that differs from
them (a forget set of one class, or of unusual records, is as distinguishable under retraining as after it), and the
references for the recipe's own seed noise. Its variance adds the records' (DeLong et al. 1988's structural
components of the contrast, :func:`leakaudit.metrics.delong_placements`) and the models' (the references' T,
times 1 + 1/K, a Student-t prediction interval's factor, as in :mod:`leakaudit.audit.inputs.recipe`). ``after`` is shown
"remembered" when the one-sided lower bound on E is above 0, "over-unlearned" when the upper bound is below
-tolerance (the forget set recognisable by its absence), and "forgotten" when both bounds lie inside (-tolerance,
tolerance) (two one-sided tests, an equivalence margin on the AUC scale).

Remembered proportion
---------------------
:func:`remembered_proportion`: the share of forget records whose score under ``after`` still behaves like a member's
(``before``'s) rather than a non-member's (the references'), a two-component mixture's weight with bootstrap bounds;
shown above ``max_remembered`` it is "remembered".

Per-record test
---------------
For each forget record, a one-sided p-value of phi_after(i) among the K references' phi(i): where the learner's
capabilities declare votes (a forest, whose vote logits are not Gaussian over seeds), the rank p-value, exact for K
exchangeable references; else the Student-t prediction p-value (a new draw from the gold standard lies below
``mean + t_{K-1} sd sqrt(1 + 1/K)``; Geisser 1993). The most vulnerable records (``before``'s phi over the mean of
``after`` and the references, symmetric in them so that the rank stays exact) are tested first: Holm over the m
largest, m the most a rank p-value, at least 1/(K + 1), can reject (every record for the Gaussian). The same test
on the non-members is the negative control; the Gaussian's flags count as evidence about the forget set only when
they are more frequent among its records than among the non-members (one-sided Fisher exact test). A record every
reference scores alike has no Gaussian distribution: it is left out, counted and said why.

The owner's ``retrained`` model is judged on the two-sided interval of its excess: away from 0 either way (more
forget signal, or less: a model trained on other records) it is "not reproduced", within ``(-tolerance, tolerance)``
"reproduced", else "undecided"; only "reproduced" lets the verdict be other than "inconclusive".

Verdict
-------
"not forgotten": the set-level test, the remembered proportion or the per-record test shows the forget set
remembered; "over-unlearned": the set-level excess is shown below -tolerance; "forgotten": the set-level excess is
shown within the tolerance both ways, the ``before`` model's excess is shown above 0 (the test could tell a model
that did not unlearn) and nothing shows it remembered; "inconclusive" otherwise. The result states the auditor's
access (the models and records it queried) and that it discloses retain-set membership: the references are trained
on the retain set, so comparing a model with them is itself a membership signal on it. Every check is judged at
``1 - (1 - confidence) / n_planned`` (Bonferroni over the planned checks), as the audit's verdict is.
"""

from __future__ import annotations

import math
import numbers
import re
from pathlib import Path
from typing import Any, Literal, Optional

import numpy as np
import pandas as pd
from pydantic import Field
from scipy import stats

from .._random import spawn_seeds
from .._results import Result, record_name
from ..exceptions import DataFileError, InvalidInputError, InvalidParameterError, LeakauditError

__all__ = ["unlearning_check", "UnlearningResult", "UnlearningCheck", "excess_forget_signal",
           "record_p_values", "remembered_proportion", "OUTCOMES"]

#: the verdict's outcomes ("not forgotten" and "over-unlearned" are the two failures of unlearning)
OUTCOMES = ("forgotten", "not forgotten", "over-unlearned", "inconclusive")
_STATUS = Literal["remembered", "forgotten", "over-unlearned", "none flagged", "undecided", "not measurable", "leaks",
                  "no measurable leak", "reproduced", "not reproduced"]


class UnlearningCheck(Result):
    """One check of the unlearning verdict.

    ``value``: the measured excess (an AUC difference) or the number of records flagged; ``interval``: its one-sided
    lower and upper bounds, each at ``confidence`` (the retrained model's: a two-sided interval at ``confidence``);
    ``threshold``: the tolerance it is judged against (None: 0 only); ``status``: what it showed; ``sentence``: that
    in words with the numbers; ``fix``: for "not measurable" or "undecided", what would decide it.
    """

    id: str
    name: str
    status: _STATUS
    value: Optional[float] = None
    interval: Optional[list[float]] = None
    threshold: Optional[float] = None
    confidence: Optional[float] = None
    p_value: Optional[float] = None
    sentence: str
    fix: str = ""


class ForgetRecord(Result):
    """One forget record's per-record test: its name (file and row, or ``forget.loc[label]``), phi under ``after``
    and the references' mean and sd, ``before_signal`` (its vulnerability: ``before``'s phi over the mean of
    ``after``'s and the references'), its p-value and Holm-adjusted p-value (None where the references do not vary
    or it was not among the records tested) and whether it is flagged as remembered."""

    record: str
    phi_after: float
    phi_reference_mean: float
    phi_reference_sd: float
    before_signal: Optional[float] = None
    p_value: Optional[float] = None
    p_adjusted: Optional[float] = None
    flagged: bool = False


class UnlearningResult(Result):
    """What :func:`unlearning_check` found.

    ``outcome``: one of :data:`OUTCOMES`; ``finding``: one sentence saying why, how sure and
    what to do; ``checks``: every planned check (``n_planned``), each judged at ``check_confidence``, the verdict's
    family-wise confidence being ``confidence``; ``auc``: the plain membership AUC of forget records against
    non-members (phi, no reference) under each model with its interval (``[low, high]`` at ``confidence``) -- what
    a simple attack sees, not the test; ``records``: the forget records' per-record tests; ``access``: the models
    and records the auditor queried, and what the result discloses.
    """

    schema_version = 2
    outcome: Literal["forgotten", "not forgotten", "over-unlearned", "inconclusive"]
    finding: str
    confidence: float
    check_confidence: float
    n_planned: int
    checks: list[UnlearningCheck]
    tolerance: float
    max_remembered: float = 0.1
    reference_models: int
    n_forget: int
    n_retain: int
    n_nonmembers: int
    models: dict[str, str]
    access: dict[str, str] = Field(default_factory=dict)
    auc: dict[str, dict[str, Any]] = Field(default_factory=dict)
    records: list[ForgetRecord] = Field(default_factory=list)
    random_state: int

    def summary(self) -> list[str]:
        """Short lines for a terminal: the verdict, then each check's sentence."""
        lines = [f"verdict: {self.outcome}: {self.finding}"]
        lines += [f"  {c.name}: {c.status}. {c.sentence}" for c in self.checks]
        return lines + [f"  {k}: {v}" for k, v in self.access.items()]


# -- the statistics ---------------------------------------------------------------------------------------------


#: relative difference of two models' phi below which they count as equal (rounding, not training)
RESOLUTION = 1e-6


def _scale(phi_refs: np.ndarray) -> np.ndarray:
    """s(i): the references' sd of each record's phi, floored at the median sd (1 everywhere when that is 0: a
    deterministic recipe)."""
    sd = phi_refs.std(axis=0, ddof=1)
    med = float(np.median(sd))
    return np.maximum(sd, med) if med > 0 else np.ones_like(sd)


def _calibrated(phi: np.ndarray, ref_mean: np.ndarray, scale: np.ndarray) -> np.ndarray:
    """z(i) = (phi(i) - ref_mean(i)) / s(i), 0 where the difference is rounding (below :data:`RESOLUTION`)."""
    d = phi - ref_mean
    d[np.abs(d) <= RESOLUTION * (1.0 + np.abs(ref_mean))] = 0.0
    return d / scale


def excess_forget_signal(phi_model, phi_refs, is_forget, *, confidence: float = 0.95) -> dict:
    """E = T(model) - mean_k T(k), the forget signal beyond retraining's, with its one-sided bounds.

    T(m) = AUC(forget records against non-members, z_m), z_m(i) each record's phi relative to the references' mean
    (reference k: to the others'), scaled by their spread (:func:`_scale`). A difference below rounding counts as
    none, so a model the recipe reproduces exactly gives E = 0.

    Parameters
    ----------
    phi_model : ndarray of shape (n,)
        The model's logit-scaled confidence on each record (forget records and non-members).
    phi_refs : ndarray of shape (K, n)
        The same for K >= 2 reference models trained without the forget records.
    is_forget : ndarray of shape (n,)
        1 for a forget record, 0 for a non-member (at least 2 of each).
    confidence : float
        Of each one-sided bound.

    Returns
    -------
    dict with ``excess`` (E), ``lower`` and ``upper`` (E -/+ z se), ``se``, ``p_value`` (of E <= 0),
    ``signal`` (T(model)), ``reference_signal`` (the references' T: mean, sd and K) and the two variance parts.
    """
    from ..metrics import delong_placements

    phi_refs = np.asarray(phi_refs, float)
    is_forget = np.asarray(is_forget, int)
    k = len(phi_refs)
    if k < 2:
        raise InvalidParameterError(f"phi_refs must hold at least 2 reference models; got {k}")
    s, total = _scale(phi_refs), phi_refs.sum(axis=0)
    t_m, v10_m, v01_m = delong_placements(is_forget, _calibrated(np.asarray(phi_model, float), total / k, s))
    t_r, v10_r, v01_r = np.empty(k), 0.0, 0.0
    for j in range(k):
        t_r[j], v10, v01 = delong_placements(is_forget, _calibrated(phi_refs[j], (total - phi_refs[j]) / (k - 1), s))
        v10_r, v01_r = v10_r + v10 / k, v01_r + v01 / k
    excess = float(t_m - t_r.mean())
    c10, c01 = v10_m - v10_r, v01_m - v01_r  # DeLong's components of the contrast
    var_records = float(c10.var(ddof=1) / c10.size + c01.var(ddof=1) / c01.size)
    var_models = float(t_r.var(ddof=1) * (1.0 + 1.0 / k))
    se = math.sqrt(var_records + var_models)
    z = float(stats.norm.ppf(confidence))
    if se > 0:
        p = float(stats.norm.sf(excess / se))
    else:  # the model ranks the records exactly as every reference does
        p = 0.0 if excess > 0 else 1.0
    return {"excess": excess, "lower": excess - z * se, "upper": excess + z * se, "se": se, "p_value": p,
            "signal": float(t_m), "reference_signal": {"mean": float(t_r.mean()), "sd": float(t_r.std(ddof=1)),
                                                       "k": k},
            "var_records": var_records, "var_models": var_models}


def record_p_values(phi_model, phi_refs, *, rank: bool = False) -> np.ndarray:
    """One-sided p-values that each record's ``phi_model`` is a draw of its K references' (higher = more
    member-like). ``rank``: the rank p-value (1 + #{k: phi_k(i) >= phi_model(i)}) / (K + 1), exact whenever the model
    and the references are exchangeable (a retraining by the same recipe), whatever their distribution; a difference
    below :data:`RESOLUTION` counts as a tie. Else the Student-t prediction p-value (LiRA's Gaussian), NaN where the
    references do not vary (a deterministic recipe; unanimous votes)."""
    phi_model = np.asarray(phi_model, float)
    phi_refs = np.asarray(phi_refs, float)
    k = len(phi_refs)
    if rank:
        return (1.0 + (phi_refs >= phi_model - RESOLUTION * (1.0 + np.abs(phi_model))).sum(axis=0)) / (k + 1.0)
    mean, sd = phi_refs.mean(axis=0), phi_refs.std(axis=0, ddof=1)
    p = np.full(phi_model.shape, np.nan)
    ok = sd > 1e-12 * np.maximum(1.0, np.abs(mean))
    p[ok] = stats.t.sf((phi_model[ok] - mean[ok]) / (sd[ok] * math.sqrt(1.0 + 1.0 / k)), df=k - 1)
    return p


def _share_moments(phi_after, phi_before, phi_refs, weights=None) -> tuple[np.ndarray, np.ndarray]:
    """pi and pi2, the mixture weight's two moment estimates (:func:`remembered_proportion`), over ``weights``' rows
    (record weights of shape (B, n); none: the records once each). NaN where before shows no signal."""
    k, sc, mean = len(phi_refs), _scale(phi_refs), phi_refs.mean(axis=0)
    z_after, z_before = (_calibrated(np.array(p, float), mean, sc) for p in (phi_after, phi_before))
    v = phi_refs.var(axis=0, ddof=1) / sc ** 2
    w = np.ones((1, z_after.size)) if weights is None else weights
    den = w @ (z_before ** 2 - v * (1.0 + 1.0 / k))
    ratio = [np.divide(x, den, out=np.full(den.shape, np.nan), where=den > 1e-12 * z_after.size)
             for x in (w @ (z_after * z_before - v / k), w @ (z_after ** 2 - v * (1.0 + 1.0 / k)))]
    return ratio[0], ratio[1]


def remembered_proportion(phi_after, phi_before, phi_refs, *, confidence: float = 0.95, n_boot: int = 2000,
                          random_state: int = 0) -> dict:
    """pi, the share of forget records whose score under ``after`` still behaves like a member's, with its bounds.

    Each record's z (phi relative to the references' mean, scaled by :func:`_scale`) is taken as a two-component
    mixture: with probability pi member-like, a draw around ``before``'s (trained on the record), mu(i); else
    non-member-like, a draw around the references' (retrained without it), 0. Then E[z_after(i) z_before(i)] =
    pi mu(i)^2 + v(i) / K and E[z_before(i)^2] = mu(i)^2 + v(i) (1 + 1/K), v(i) a retrained model's seed variance
    of z(i) (the references'), and pi is their ratio's moment estimate over the records, clipped to [0, 1]. A model
    that pushed the records below retraining gives pi <= 0.

    Its bounds, each one-sided at ``confidence``, hold two sources of error together: the records' (a bootstrap over
    them) and the ``after`` model's own training randomness, which moves every record's score at once and does not
    average out over records. The second is measured by taking each reference in turn as ``after`` (the others as
    references): its sd s_m, and a bound is pi -/+ sqrt(b^2 + (z s_m)^2), b the bootstrap percentile's distance
    from pi, z the normal quantile; clipped to [0, 1] only then. A deterministic recipe has s_m = 0.

    The mixture also fixes the second moment: E[z_after^2] - v (1 + 1/K) = pi (E[z_before^2] - v (1 + 1/K)), whose
    ratio pi2 is at most 1, and 1 where every record is kept. Where pi2's lower bound (the same two errors, one-sided
    at 1 - (1 - ``confidence``) / 10, so that a model keeping every record is rarely taken for one) is above 1,
    ``after`` is farther from retraining on these records than ``before`` is (a model collapsed or driven past
    retraining): neither component describes it, and no share is estimated.

    Parameters
    ----------
    phi_after, phi_before : ndarray of shape (n,)
        Each forget record's logit-scaled confidence under the two models.
    phi_refs : ndarray of shape (K, n)
        The same under K >= 3 reference models.

    Returns
    -------
    dict with ``proportion``, ``lower``, ``upper`` and ``misfit`` (pi2 where the mixture is rejected, else None);
    the first three NaN where ``before`` shows no signal beyond the seed's (sum of z_before^2 at most its noise's):
    nothing member-like to tell apart, or where the mixture is rejected.
    """
    phi_refs = np.asarray(phi_refs, float)
    k, n = phi_refs.shape
    none = {"proportion": math.nan, "lower": math.nan, "upper": math.nan, "misfit": None}
    w = np.vstack([np.ones((1, n)), np.random.default_rng(random_state).multinomial(n, np.full(n, 1.0 / n),
                                                                                   size=n_boot)])
    pi, pi2 = _share_moments(phi_after, phi_before, phi_refs, w)
    if np.isnan(pi[0]):
        return none
    pseudo = np.array([_share_moments(phi_refs[j], phi_before, np.delete(phi_refs, j, axis=0)) for j in range(k)])

    def bounds(est: np.ndarray, s_m: float, conf: float) -> tuple[float, float]:
        lo, hi = np.nanquantile(est[1:], [1.0 - conf, conf])
        z = stats.norm.ppf(conf)
        half = [math.hypot(est[0] - lo, z * s_m), math.hypot(hi - est[0], z * s_m)]
        return float(est[0] - half[0]), float(est[0] + half[1])

    s_m = np.nan_to_num(np.nanstd(pseudo[:, :, 0], axis=0, ddof=1))  # a reference without before's signal: none
    if bounds(pi2, float(s_m[1]), 1.0 - (1.0 - confidence) / 10)[0] > 1.0:
        return {**none, "misfit": float(pi2[0])}
    lo, hi = np.clip(bounds(pi, float(s_m[0]), confidence), 0.0, 1.0)
    return {"proportion": float(np.clip(pi[0], 0.0, 1.0)), "lower": float(lo), "upper": float(hi), "misfit": None}


# -- inputs -----------------------------------------------------------------------------------------------------


def _table(value, name: str) -> tuple[pd.DataFrame, str, bool]:
    """A table argument as a DataFrame, the source its records are named by, and whether that is a file."""
    from .inputs.data import read_records

    if isinstance(value, (str, Path)):
        path = Path(value)
        if not path.is_file():
            raise DataFileError(f"{name}: no such file {path}")
        return read_records(path, f"{name} file"), path.name, True
    if not isinstance(value, pd.DataFrame):
        raise InvalidParameterError(f"{name} must be a pandas DataFrame or the path of a CSV or Parquet file; got "
                                    f"{type(value).__name__}")
    if len(value) == 0:
        raise InvalidInputError(f"{name} has no rows")
    return value, name, False


def _check_tables(tables: dict[str, pd.DataFrame], label: str) -> None:
    """The same columns (by name) in every table, the label among them, at least 2 rows each."""
    if not isinstance(label, str) or not label:
        raise InvalidParameterError(f"label must be the name of the label column; got {label!r}")
    cols = {n: {str(c) for c in t.columns} for n, t in tables.items()}
    if label not in cols["forget"]:
        raise InvalidInputError(f"forget has no column {label!r} (the label); its columns: "
                                f"{', '.join(sorted(cols['forget'])[:10])}")
    for n in ("retain", "nonmembers"):
        missing, extra = sorted(cols["forget"] - cols[n]), sorted(cols[n] - cols["forget"])
        if missing or extra:
            raise InvalidInputError(f"the columns of {n} differ from those of forget: " + "; ".join(
                x for x in (f"missing {', '.join(map(repr, missing[:5]))}" if missing else "",
                            f"extra {', '.join(map(repr, extra[:5]))}" if extra else "") if x))
    for n, t in tables.items():
        if len(t) < 2:
            raise InvalidInputError(f"{n} has {len(t)} row(s); at least 2 are needed")


def _check_forget_in_training(data, n_forget: int) -> None:
    """Refuse a forget set whose records all repeat retain records (the same file given twice); warn on some."""
    import warnings

    from .inputs.data import DuplicateRecordsWarning
    from .inputs.duplicates import row_keys

    (h,) = row_keys([data.frame_mem])
    dup = np.isin(h[:n_forget], h[n_forget:])
    if dup.all():
        raise InvalidInputError(f"every forget record ({n_forget}) is identical to a retain record: the forget set "
                                "must be the records removed from the training set (is the same file given twice?)")
    if dup.any():
        warnings.warn(f"{int(dup.sum())} of the {n_forget} forget records are identical to retain records; a model "
                      "retrained on the retain set still trains on their copies", DuplicateRecordsWarning,
                      stacklevel=3)


def _target(model, data, name: str, model_input: str):
    """The model given as ``name`` (a fitted scikit-learn estimator, or a skops, XGBoost or LightGBM file) as an
    audit :class:`~.target.Target` on ``data``; errors name the argument."""
    from .inputs.target import model_file_target, sklearn_target

    try:
        if isinstance(model, (str, Path)):
            if not Path(model).is_file():
                raise DataFileError(f"no such file {Path(model)}")
            return model_file_target(data, Path(model), model_input=model_input)
        return sklearn_target(data, model, model_input=model_input)
    except LeakauditError as exc:
        raise type(exc)(f"{name}: {exc}") from None


def _votes(t) -> int | None:
    """T where the model's probabilities are the mean of T votes: its learner's vote count, as the audit's LiRA
    reads it, or where that learner wraps the estimator and declares none (a Pipeline, retrained whole; a model
    fitted on the table's columns) that of the estimator, a Pipeline's final step."""
    from sklearn.pipeline import Pipeline

    from ..learners import capabilities
    from ..learners.sklearn import SklearnLearner

    votes = capabilities(t.learner).votes
    est = t.model.steps[-1][1] if isinstance(t.model, Pipeline) else t.model
    if votes is None and hasattr(est, "get_params"):
        votes = capabilities(SklearnLearner(est)).votes
    return votes


def _warn_if_same(before, after, t_before, t_after) -> None:
    """Warn where ``after`` gives ``before``'s probabilities on every record, saying whether it is the same model
    (files of the same bytes, objects of the same serialisation, :func:`.digests.model_digest`)."""
    import hashlib
    import warnings

    from .inputs.digests import model_digest

    if not (np.array_equal(t_before.probs_mem, t_after.probs_mem)
            and np.array_equal(t_before.probs_non, t_after.probs_non)):
        return

    def fingerprint(m) -> str:
        if isinstance(m, (str, Path)):
            with open(m, "rb") as f:
                return "file " + hashlib.file_digest(f, "sha256").hexdigest()
        try:
            return model_digest(m)
        except LeakauditError:  # skops cannot serialise it: only the same object is known to be the same
            return str(id(m))

    def name(m) -> str:
        return str(m) if isinstance(m, (str, Path)) else f"the given {type(m).__name__}"

    n = len(t_before.probs_mem) + len(t_before.probs_non)
    same = "bytes" if isinstance(after, (str, Path)) else "serialisation"
    how = (f"is the same model as before ({name(before)}): the same {same}" if fingerprint(after) == fingerprint(before)
           else f"gives the same probabilities as before ({name(before)}) on all {n:,} records")
    warnings.warn(f"after ({name(after)}) {how}; nothing was unlearned", UserWarning, stacklevel=3)


def _check_retain_classes(data, n_f: int) -> None:
    """Refuse a retain set of one class (the forget set holding every record of the others): the reference models
    would be trained on one class."""
    held = np.unique(data.y_mem[n_f:])
    if held.size < 2:
        gone = [repr(data.class_names[c]) for c in np.setdiff1d(np.unique(data.y_mem[:n_f]), held)]
        raise InvalidInputError(
            f"retain holds one class of label column {data.label!r}, {data.class_names[held[0]]!r}: the forget set "
            f"holds every record of {', '.join(gone)}, and a model retrained on retain alone cannot learn more "
            "than one class; keep records of at least two classes in retain")


#: the most reference models: beyond it the references' mean and spread, and the prediction interval's factor
#: 1 + 1/K, change by less than 1e-4 of their values
MAX_REFERENCE_MODELS = 10_000


def _check_reference_cost(model, k: int, n_retain: int, n_features: int, n_scored: int, n_classes: int) -> None:
    """Refuse, before any is trained, ``k`` reference models whose work (each fit on the ``n_retain`` records and
    prediction on the ``n_scored``, as :func:`.model_budget.model_costs` estimates them on all those rows, at least a
    read of each) exceeds the work budget, or whose probabilities exceed the memory budget."""
    from ..engine import check_memory, check_work
    from .inputs.model_budget import model_costs

    n = n_retain + n_scored
    per_model = max(sum(c.work for c in model_costs(model, "before", n)), float(n) * n_features)
    fix = "give fewer reference_models"
    check_work(k * per_model, f"{k:,} reference models (each the before-model's recipe trained on the {n_retain:,} "
               f"retain records, scoring {n_scored:,})", fix=fix)
    check_memory(8.0 * k * n_scored * n_classes, f"{k:,} reference models' probabilities on {n_scored:,} records "
                 "would take", fix=fix)


# -- the checks --------------------------------------------------------------------------------------------------


def _set_check(res: dict | None, *, which: str, tolerance: float, conf: float, measurable: str) -> UnlearningCheck:
    """The set-level check of ``after`` (remembered / forgotten / undecided)."""
    cid, name = "unlearning.after.excess_signal", "forget signal after unlearning"
    if res is None:
        return UnlearningCheck(id=cid, name=name, status="not measurable", sentence=measurable,
                               fix="give more forget records and non-members, or a learner that can be retrained")
    nums = (f"the {which} model tells the forget records from non-members with AUC {res['signal']:.3f} (each "
            f"record's confidence relative to retraining), against {res['reference_signal']['mean']:.3f} (sd "
            f"{res['reference_signal']['sd']:.3f}) for {res['reference_signal']['k']} retrained models: excess "
            f"{res['excess']:+.3f}, bounds [{res['lower']:+.3f}, {res['upper']:+.3f}] at {100 * conf:.3g}% each")
    status, fix = "undecided", ""
    if res["lower"] > 0:
        status, sentence = "remembered", f"The forget set is still remembered: {nums}."
    elif res["upper"] < -tolerance:
        status, sentence = "over-unlearned", (f"Over-unlearned: the forget set is recognisable by its absence, its "
                                              f"signal shown below retraining's by more than {tolerance:g} AUC: {nums}.")
        fix = "unlearn less (fewer or smaller steps), or retrain on the retain set"
    elif res["lower"] > -tolerance and res["upper"] < tolerance:
        status, sentence = "forgotten", (f"The forget set is as unknown as after retraining, within {tolerance:g} AUC "
                                         f"both ways: {nums}.")
    else:
        sentence = f"Neither shown remembered, over-unlearned nor within {tolerance:g} AUC of retraining both ways: {nums}."
        fix = "more forget records or non-members narrow the interval; a larger tolerance accepts a wider one"
    return UnlearningCheck(id=cid, name=name, status=status, value=res["excess"], interval=[res["lower"], res["upper"]],
                           threshold=tolerance, confidence=conf, p_value=res["p_value"], sentence=sentence, fix=fix)


def _before_check(res: dict | None, *, conf: float, measurable: str) -> UnlearningCheck:
    """Does the model before unlearning show the forget set measurably? Without it no test can tell forgetting."""
    cid, name = "unlearning.before.excess_signal", "forget signal before unlearning"
    if res is None:
        return UnlearningCheck(id=cid, name=name, status="not measurable", sentence=measurable,
                               fix="give more forget records and non-members, or a learner that can be retrained")
    nums = (f"excess {res['excess']:+.3f} AUC over retraining, lower bound {res['lower']:+.3f} at "
            f"{100 * conf:.3g}%")
    if res["lower"] > 0:
        status, fix = "leaks", ""
        sentence = (f"Before unlearning the model measurably remembers the forget set ({nums}): a model that did not "
                    "unlearn would be told apart.")
    else:
        status, fix = "no measurable leak", "more forget records or non-members; a forget set the model memorised more"
        sentence = (f"Before unlearning the model shows no measurable signal of the forget set ({nums}): no "
                    "membership test here could tell whether it was forgotten.")
    return UnlearningCheck(id=cid, name=name, status=status, value=res["excess"], interval=[res["lower"], res["upper"]],
                           confidence=conf, p_value=res["p_value"], sentence=sentence, fix=fix)


def _record_check(p_forget: np.ndarray, p_non: np.ndarray, s_forget: np.ndarray, s_non: np.ndarray, *, conf: float,
                  k: int | None) -> tuple[UnlearningCheck, np.ndarray]:
    """Per-record test, the most vulnerable records (largest ``s``) first: Holm over the m records of largest ``s``,
    with the non-members as negative control. ``k``: the rank test's K (its p-values are at least 1 / (K + 1), so m
    is the most for which Holm's first threshold alpha / m reaches that; flags need no control, the p-values being
    exact); None: the Gaussian test over every record, whose flags count only where they are more frequent than
    among the non-members. Records the references all score alike (NaN p-values) are left out, counted and said
    why."""
    from ..dtp import holm_adjust

    cid, name = "unlearning.after.records", "forget records remembered"
    alpha = 1 - conf
    ok, okn = ~np.isnan(p_forget), ~np.isnan(p_non)
    m = None if k is None else int(alpha * (k + 1) + 1e-9)
    left = "" if ok.all() and okn.all() else (
        f"; left out: {int((~ok).sum())} of the {ok.size} forget records and {int((~okn).sum())} of the {okn.size} "
        "non-members, to each of which every reference model gives the same score (the seed changed none of them: "
        "a deterministic recipe, or every tree voting alike), so that it has no distribution to be tested against")

    def holm_top(p, s, keep):
        idx = np.flatnonzero(keep)
        idx = idx[np.argsort(-s[idx], kind="stable")][:m]
        adj = np.full(p.shape, np.nan)
        adj[idx] = holm_adjust(p[idx], idx.size)
        return adj, idx.size

    (adj, n_t), (adj_n, n_tn) = holm_top(p_forget, s_forget, ok), holm_top(p_non, s_non, okn)
    if not n_t:
        fix = "the set-level test still applies"
        if m == 0:
            left = (f": the rank test's smallest p-value, 1/(K + 1) = {1 / (k + 1):.3g} with {k} reference models, is "
                    f"above the level {alpha:.3g}")
            fix = f"give at least {math.ceil(1 / alpha - 1 - 1e-9)} reference models"
        return UnlearningCheck(id=cid, name=name, status="not measurable", sentence=f"Not measurable{left}.",
                               fix=fix), adj
    flagged, control = int((adj <= alpha).sum()), int((adj_n <= alpha).sum())
    test = "Student-t prediction p-value" if k is None else f"rank among the {k} references"
    nums = (f"{flagged} of {n_t} forget records (the most vulnerable first: largest signal before unlearning) lie "
            f"above their retrained distribution ({test}, Holm-adjusted p <= {alpha:.3g}); control: {control} of "
            f"{n_tn} non-members do{left}")
    p_min = float(np.nanmin(adj))
    if not flagged:
        return UnlearningCheck(id=cid, name=name, status="none flagged", value=0, confidence=conf, p_value=p_min,
                               sentence=f"No record flagged: {nums}."), adj
    # the Gaussian's flags must be more frequent among the forget records than among the non-members (one-sided
    # Fisher exact test); the rank test's are exact under retraining
    specific = 0.0 if k is not None else stats.fisher_exact([[flagged, n_t - flagged], [control, n_tn - control]],
                                                            alternative="greater")[1]
    fisher = nums if k is not None else f"{nums} (Fisher's exact p = {specific:.3g})"
    remembered = specific <= alpha
    return UnlearningCheck(
        id=cid, name=name, status="remembered" if remembered else "undecided", value=flagged, confidence=conf,
        p_value=p_min, sentence=f"Records still remembered: {fisher}." if remembered else
        f"Not specific to the forget set: {fisher}; the model differs from retraining on records it never saw too.",
        fix="" if remembered else "the set-level test, which the non-members calibrate, decides"), adj


def _proportion_check(res: dict | None, *, conf: float, threshold: float, measurable: str) -> UnlearningCheck:
    """The share of forget records still member-like (:func:`remembered_proportion`) against ``threshold``."""
    cid, name = "unlearning.after.remembered_proportion", "share of forget records remembered"
    if res is not None and res.get("misfit") is not None:
        return UnlearningCheck(id=cid, name=name, status="not measurable", threshold=threshold, sentence=(
            f"Not measurable: after unlearning the forget records' scores lie farther from retraining's than before "
            f"unlearning (their second moment {res['misfit']:.3g} times before's, at most 1 for any share kept), so "
            "they are neither member-like nor retrained-like (a model collapsed, or pushed past retraining) and no "
            "share is estimated"), fix="the set-level test and the per-record test still decide")
    if res is None or math.isnan(res["proportion"]):
        return UnlearningCheck(id=cid, name=name, status="not measurable", threshold=threshold, sentence=measurable or (
            "Not measurable: before unlearning the forget records' scores are distributed as after retraining, so "
            "there is no member-like distribution to tell apart"), fix="a forget set the model memorised more")
    nums = (f"{100 * res['proportion']:.0f}% of the forget records behave like members rather than like records never "
            f"trained on, bounds [{100 * res['lower']:.0f}%, {100 * res['upper']:.0f}%] at {100 * conf:.3g}% each, "
            f"against at most {100 * threshold:.3g}%")
    if res["lower"] > threshold:
        status, sentence, fix = "remembered", f"Part of the forget set is still remembered: {nums}.", ""
    elif res["upper"] < threshold:
        status, sentence, fix = "forgotten", f"At most the share allowed is remembered: {nums}.", ""
    else:
        status, sentence = "undecided", f"Neither shown above nor below the share allowed: {nums}."
        fix = "more forget records narrow the interval"
    return UnlearningCheck(id=cid, name=name, status=status, value=res["proportion"],
                           interval=[res["lower"], res["upper"]], threshold=threshold, confidence=conf,
                           sentence=sentence, fix=fix)


def _gold_check(res: dict | None, *, conf: float, tolerance: float) -> UnlearningCheck:
    """Does the recipe reproduce the given retrained model? Two-sided: ``res`` holds its excess over the references
    with bounds at ``1 - (1 - conf) / 2`` each, a two-sided interval at ``conf``."""
    cid, name = "unlearning.retrained.excess_signal", "retrained model against the recipe"
    if res is None:
        return UnlearningCheck(id=cid, name=name, status="not measurable",
                               sentence="Not measurable: too few records or reference models.",
                               fix="give more forget records and non-members")
    lo, hi, se = res["lower"], res["upper"], res["se"]
    p_two_sided = float(2 * stats.norm.sf(abs(res["excess"]) / se)) if se > 0 else float(res["excess"] == 0)
    nums = (f"excess {res['excess']:+.3f} AUC over the recipe's retrained models, interval [{lo:+.3f}, {hi:+.3f}] at "
            f"{100 * conf:.3g}%")
    if lo > 0 or hi < 0:
        status, fix = "not reproduced", "retrain the gold standard with the before-model's recipe on the retain set"
        sentence = (f"The given retrained model shows {'more' if lo > 0 else 'less'} forget signal than the recipe's "
                    f"retrained models ({nums}): they are not the gold standard it is.")
    elif -tolerance < lo and hi < tolerance:
        status, fix = "reproduced", ""
        sentence = f"The recipe reproduces the given retrained model within {tolerance:g} AUC both ways ({nums})."
    else:
        status, fix = "undecided", "more forget records or non-members narrow the interval"
        sentence = (f"Neither shown to differ from the recipe's retrained models nor within {tolerance:g} AUC of "
                    f"them both ways ({nums}).")
    return UnlearningCheck(id=cid, name=name, status=status, value=res["excess"], interval=[lo, hi],
                           threshold=tolerance, confidence=conf, p_value=p_two_sided, sentence=sentence, fix=fix)


def _decide(checks: dict[str, UnlearningCheck], tolerance: float) -> tuple[str, str]:
    """The outcome and its one sentence from the checks."""
    after, rec, before = checks["set"], checks["records"], checks["before"]
    gold = checks.get("gold")
    if gold is not None and gold.status != "reproduced":
        how = "do not reproduce" if gold.status == "not reproduced" else f"are not shown to reproduce ({gold.status})"
        return "inconclusive", (f"the recipe's retrained models {how} the given retrained model, so they are not "
                                f"known to be the gold standard to compare with; {gold.fix}")
    shown = [c.name for c in (after, rec, checks["share"]) if c.status == "remembered"]
    if shown:
        return "not forgotten", (f"{' and '.join(shown)} show{'s' * (len(shown) == 1)} the forget set is still told "
                                 "apart from records never trained on, beyond what retraining gives; the unlearning "
                                 "did not remove it")
    if after.status == "over-unlearned":
        return "over-unlearned", (f"the forget set is recognisable by its absence: after unlearning its signal is "
                                  f"shown below retraining's by more than {tolerance:g} AUC, so whoever queries the "
                                  f"model can tell which records were removed; {after.fix}")
    if after.status == "forgotten" and before.status == "leaks":
        return "forgotten", (f"after unlearning the forget set is within {tolerance:g} AUC of retraining both ways, "
                             f"no share of it above {checks['share'].threshold:g} shown remembered, while before "
                             "unlearning it was measurably remembered")
    if after.status == "forgotten":
        return "inconclusive", ("the forget set is within the tolerance of retraining after unlearning, but the "
                                "model before unlearning showed no measurable signal of it either, so the test "
                                "had nothing to detect; " + before.fix)
    first = after if after.status in ("undecided", "not measurable") else before
    return "inconclusive", f"{first.name} is {first.status}; {first.fix or first.sentence}"


# -- the function -------------------------------------------------------------------------------------------------


def unlearning_check(before=None, after=None, forget=None, retain=None, nonmembers=None, *, label: str | None = None,
                     retrained=None, reference_models: int = 16, tolerance: float = 0.05, max_remembered: float = 0.1,
                     confidence: float = 0.95, model_input: str = "auto", random_state: int = 0,
                     **unknown) -> UnlearningResult:
    """Is the forget set, after unlearning, as unknown to the model as to one retrained without it?

    Parameters
    ----------
    before, after : fitted scikit-learn estimator, or path of a skops, XGBoost or LightGBM model file
        The model trained on forget + retain, and the model after unlearning the forget set.
    forget, retain, nonmembers : pandas.DataFrame, or path of a CSV or Parquet file
        The records to forget, the rest of ``before``'s training set, and records of the same distribution
        neither model trained on (the same columns, ``label`` among them).
    label : str
        The label column.
    retrained : fitted estimator or model file, optional
        A model the owner retrained on the retain set: checked two-sided against the recipe's retrained models
        (unless they are shown to reproduce it, within ``tolerance`` both ways, the verdict is inconclusive).
    reference_models : int, default=16
        Models retrained by ``before``'s recipe on the retain set (the gold standard's draws), 4 to
        :data:`MAX_REFERENCE_MODELS`, their work within the work budget.
    tolerance : float, default=0.05
        The excess forget AUC over retraining within which, both ways, the forget set counts as forgotten.
    max_remembered : float, default=0.1
        The share of forget records still behaving like members above which (its lower bound above it) the forget
        set is "not forgotten", in [0, 1).
    confidence : float, default=0.95
        Family-wise confidence of the verdict (Bonferroni over the planned checks).
    model_input : {"auto", "columns", "encoded"}, default="auto"
        What the models take, as in :func:`leakaudit.audit`.
    random_state : int, default=0
        Seeds the reference models (the command line's ``--seed``), at least 0.

    Returns
    -------
    UnlearningResult

    Raises
    ------
    LeakauditError
        Bad input (an unknown keyword, a setting out of range, a retain set of one class, reference models over the
        work or memory budget) in one line naming the argument, file or row; numpy numbers in range are taken.
    """
    from .._validation import check_choice, check_scalar
    from ..membership import logit_scaled_confidence
    from .inputs.data import data_from_frames

    if unknown:
        hint = " (the seed is random_state)" if "seed" in unknown else ""
        raise InvalidParameterError(f"unlearning_check() got unknown argument(s) {', '.join(sorted(unknown))}"
                                    f"{hint}; it takes label, retrained, reference_models, tolerance, "
                                    "max_remembered, confidence, model_input and random_state")
    reference_models = int(check_scalar(reference_models, name="reference_models", kind=numbers.Integral, min_val=4,
                                        max_val=MAX_REFERENCE_MODELS))
    tolerance = float(check_scalar(tolerance, name="tolerance", min_val=0.0, max_val=0.5, include_min=False))
    max_remembered = float(check_scalar(max_remembered, name="max_remembered", min_val=0.0, max_val=1.0,
                                        include_max=False))
    confidence = float(check_scalar(confidence, name="confidence", min_val=0.5, max_val=1.0, include_min=False,
                                    include_max=False))
    random_state = int(check_scalar(random_state, name="random_state", kind=numbers.Integral, min_val=0))
    check_choice(model_input, name="model_input", choices=("auto", "columns", "encoded"))
    given = {n: _table(v, n) for n, v in (("forget", forget), ("retain", retain), ("nonmembers", nonmembers))}
    frames = {n: g[0] for n, g in given.items()}
    _check_tables(frames, label)
    n_f, n_r, n_n = (len(frames[n]) for n in ("forget", "retain", "nonmembers"))
    members = pd.concat([frames["forget"], frames["retain"][list(frames["forget"].columns)]], ignore_index=True)
    try:
        data = data_from_frames(members, frames["nonmembers"], label=label)
    except LeakauditError as exc:  # data_from_frames names forget + retain "members"
        raise type(exc)(re.sub(r"(?<![\w-])members\b", "forget or retain", str(exc))) from None
    _check_forget_in_training(data, n_f)
    _check_retain_classes(data, n_f)
    t_before = _target(before, data, "before", model_input)
    t_after = _target(after, data, "after", model_input)
    t_gold = None if retrained is None else _target(retrained, data, "retrained", model_input)
    _warn_if_same(before, after, t_before, t_after)

    planned = 4 + (t_gold is not None)
    conf = 1 - (1 - confidence) / planned
    y = np.r_[data.y_mem[:n_f], data.y_non]
    is_forget = np.r_[np.ones(n_f, int), np.zeros(n_n, int)]
    learner = t_before.learner
    votes = _votes(t_before)

    phi = {n: logit_scaled_confidence(np.vstack([t.probs_mem[:n_f], t.probs_non]), y, votes=votes)
           for n, t in (("before", t_before), ("after", t_after), ("retrained", t_gold)) if t is not None}

    from ..metrics import auc_ci_can_exceed

    measurable = ""
    if learner is None:
        measurable = "Not measurable: the before-model's recipe cannot be retrained here (no gold standard)."
    elif not auc_ci_can_exceed(n_f, n_n, 0.5, confidence=conf):
        measurable = (f"Not measurable: {n_f} forget records and {n_n} non-members are too few for any AUC "
                      f"interval at {100 * conf:.3g}% to exclude 0.5.")
    res_after = res_before = res_gold = res_share = None
    phi_refs = None
    if not measurable:
        X_mem, X_non, _ = t_before.inputs(data)
        _check_reference_cost(t_before.model, reference_models, n_r, X_mem.shape[1], n_f + n_n, data.n_classes)
        seeds = spawn_seeds(random_state, reference_models)
        retain_rows = np.arange(n_f, n_f + n_r)
        ref_probs = learner.fit_predict_many(X_mem, data.y_mem, [retain_rows] * reference_models, seeds,
                                             np.vstack([X_mem[:n_f], X_non]), n_classes=data.n_classes)
        phi_refs = logit_scaled_confidence(ref_probs, y, votes=votes)
        res_after = excess_forget_signal(phi["after"], phi_refs, is_forget, confidence=conf)
        res_before = excess_forget_signal(phi["before"], phi_refs, is_forget, confidence=conf)
        if t_gold is not None:  # two-sided: bounds at 1 - (1 - conf) / 2 each
            res_gold = excess_forget_signal(phi["retrained"], phi_refs, is_forget, confidence=(1 + conf) / 2)
        res_share = remembered_proportion(phi["after"][:n_f], phi["before"][:n_f], phi_refs[:, :n_f],
                                          confidence=conf, random_state=random_state)
    checks = {"set": _set_check(res_after, which="unlearned", tolerance=tolerance, conf=conf,
                                measurable=measurable),
              "before": _before_check(res_before, conf=conf, measurable=measurable),
              "share": _proportion_check(res_share, conf=conf, threshold=max_remembered, measurable=measurable)}
    records: list[ForgetRecord] = []
    if phi_refs is not None:
        # the rank test where the scores are votes, not LiRA's Gaussian; records ordered by before's signal over
        # the mean of after and the references, symmetric in them so that the rank stays exact
        k_rank = reference_models if votes is not None else None
        pa = phi["after"]
        p = record_p_values(pa, phi_refs, rank=k_rank is not None)
        vulnerable = phi["before"] - (phi_refs.sum(axis=0) + pa) / (reference_models + 1)
        checks["records"], adj = _record_check(p[:n_f], p[n_f:], vulnerable[:n_f], vulnerable[n_f:], conf=conf,
                                               k=k_rank)
        names = _forget_names(given["forget"], n_f)
        mean, sd = phi_refs.mean(axis=0), phi_refs.std(axis=0, ddof=1)
        records = [ForgetRecord(record=names[i], phi_after=pa[i], phi_reference_mean=mean[i],
                                phi_reference_sd=sd[i], before_signal=vulnerable[i],
                                p_value=None if np.isnan(p[i]) else p[i],
                                p_adjusted=None if np.isnan(adj[i]) else adj[i],
                                flagged=bool(adj[i] <= 1 - conf) and checks["records"].status == "remembered")
                   for i in range(n_f)]
    else:
        checks["records"] = UnlearningCheck(id="unlearning.after.records", name="forget records remembered",
                                            status="not measurable", sentence=measurable,
                                            fix="give more forget records and non-members")
    if t_gold is not None:
        checks["gold"] = _gold_check(res_gold, conf=conf, tolerance=tolerance)
    outcome, finding = _decide(checks, tolerance)
    queried = (f"before and after{' and retrained' if t_gold is not None else ''}: class probabilities on all "
               f"{n_f + n_r + n_n} given records (the {n_f} forget records and {n_n} non-members enter the tests)")
    access = {"models": queried + ("; before's recipe retrained on the retain set" if learner is not None else ""),
              "records": f"{n_f} forget, {n_r} retain and {n_n} non-member records, labels included",
              "discloses": "retain-set membership: the reference models are trained on the retain set, so comparing "
                           "a model with them is itself a membership signal on the retain set's records"}
    models = {"before": t_before.description, "after": t_after.description,
              "reference": (f"{reference_models} models retrained by the before-model's recipe on the {n_r} retain "
                            f"records, seeds spawned from {random_state}") if learner is not None else "none"}
    if t_gold is not None:
        models["retrained"] = t_gold.description
    aucs = {n: _plain_auc(p, is_forget, confidence) for n, p in phi.items()}
    if phi_refs is not None:
        aucs["reference_mean"] = {"auc": float(np.mean([_plain_auc(r, is_forget, confidence)["auc"]
                                                        for r in phi_refs]))}
    return UnlearningResult(outcome=outcome, finding=finding[0].upper() + finding[1:] + ".", confidence=confidence,
                            check_confidence=conf, n_planned=planned, checks=list(checks.values()),
                            tolerance=tolerance, reference_models=reference_models, n_forget=n_f, n_retain=n_r,
                            n_nonmembers=n_n, models=models, access=access, max_remembered=max_remembered,
                            auc=aucs, records=records, random_state=random_state)


def _plain_auc(phi: np.ndarray, is_forget: np.ndarray, confidence: float) -> dict:
    from ..metrics import auc, bootstrap_auc_ci

    return {"auc": float(auc(is_forget, phi)),
            "interval": [float(v) for v in bootstrap_auc_ci(is_forget, phi, confidence=confidence)]}


def _forget_names(given: tuple[pd.DataFrame, str, bool], n: int) -> list[str]:
    frame, source, is_file = given
    if is_file:
        return [record_name(source, i + 1) for i in range(n)]
    if frame.index.is_unique:
        return [record_name("forget", index=i) for i in frame.index]
    return [record_name("forget", i + 1) for i in range(n)]
