"""A search-based LOWER estimate of DTP for models without a closed form (spec long-dtp.md §8 item 1).

DTP(t) is a maximum over every query x and label y (Def 4.2); for neural
networks or logistic regression it cannot be enumerated. We search for queries
where ``|ln p_T(y|x) - ln p_{T\\t}(y|x)|`` is large:

- ``self``: x(t) itself (gives PDTP);
- ``neighbours``: the nearest candidate records of x(t) (L1 distance);
- ``flips``: single feature flips of binary features (±1 code steps for integer
  features), then pairs of the best single flips;
- ``random``: random perturbations of x(t);
- ``hill``: hill climbing from the best point found;
- ``gradient``: gradient ascent on relaxed (continuous) inputs inside the
  feature box, gradients by central finite differences (or SPSA in high
  dimension), binary features rounded at the end.

Every value found is attained by a real query, so the result is a lower bound
on the true DTP(t): an *estimate*, reported with the ratio DTP-estimate / PDTP
(an empirical training-stability estimate δ̂, Table 3's "unknown" classes).
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from .._random import check_random_state, spawn_seeds
from .._validation import check_choice, check_indices, check_matrix, check_vector
from ..engine import Engine, reports_engine_stats
from ..exceptions import InvalidInputError
from ..learners import capabilities, check_fit_inputs
from .pdtp import _binned_pdtp, _check_bin_width
from .results import SearchResult

__all__ = ["dtp_search", "dtp_search_estimate", "STRATEGIES"]

STRATEGIES = ("self", "neighbours", "flips", "random", "hill", "gradient")


def _objective(pf: Callable, pl: Callable, bin_width: float | None) -> Callable[[np.ndarray], np.ndarray]:
    return lambda Q: _binned_pdtp(pf(Q), pl(Q), bin_width, "keep")


def _smooth_objective(pf: Callable, pl: Callable) -> Callable[[np.ndarray], np.ndarray]:
    """Unbinned, finite version for gradients: max_y |ln p - ln p'| with probabilities floored at 1e-12."""
    def f(Q):
        a = np.clip(pf(Q), 1e-12, 1.0)
        b = np.clip(pl(Q), 1e-12, 1.0)
        return np.abs(np.log(a) - np.log(b)).max(axis=1)
    return f


def _feature_kinds(X_ref: np.ndarray) -> np.ndarray:
    """'binary' (values in {0,1}), 'integer' (integer codes) or 'real', per feature."""
    binary = np.all((X_ref == 0) | (X_ref == 1), axis=0)
    return np.where(binary, "binary", np.where(np.all(X_ref == np.round(X_ref), axis=0), "integer", "real"))


def dtp_search(
    predict_full: Callable[[np.ndarray], np.ndarray],
    predict_loo: Callable[[np.ndarray], np.ndarray],
    x_t: Any,
    *,
    X_reference: Any,
    feature_kinds: Any = None,
    strategies: tuple[str, ...] = STRATEGIES,
    n_neighbours: int = 50,
    max_pairs: int = 200,
    n_random: int = 200,
    n_hill: int = 20,
    n_gradient_steps: int = 30,
    bin_width: float | None = 0.01,
    random_state: Any = None,
) -> dict:
    """Search queries x maximising the binned |ln p_T(y|x) - ln p_{T\\t}(y|x)|.

    Parameters
    ----------
    predict_full, predict_loo : callables mapping (n, n_features) -> (n, n_classes)
        The models A(T) and A(T\\{t}).
    x_t : array-like of shape (n_features,)
    X_reference : array-like of shape (n_ref, n_features)
        Candidate records (the set D): used for neighbours, the feature box
        ``[min, max]`` and the feature kinds.
    feature_kinds : array-like of {"binary", "integer", "real"}, optional (inferred from X_reference)
    strategies : tuple of names from STRATEGIES
    bin_width : float or None

    Returns
    -------
    dict with ``value`` (float), ``best_x`` (n_features,), ``pdtp`` (value at x(t)),
    ``by_strategy`` (name -> best value), ``n_evaluations`` (int).
    """
    x_t = check_vector(x_t, name="x_t")
    R = check_matrix(X_reference, name="X_reference")
    if R.shape[1] != x_t.size:
        raise InvalidInputError(f"X_reference has {R.shape[1]} features; x_t has {x_t.size}")
    for s in strategies:
        check_choice(s, name="strategies", choices=STRATEGIES)
    _check_bin_width(bin_width)
    kinds = _feature_kinds(np.vstack([R, x_t])) if feature_kinds is None else np.asarray(feature_kinds)
    lo = np.minimum(R.min(axis=0), x_t)
    hi = np.maximum(R.max(axis=0), x_t)
    rng = check_random_state(random_state)
    f = _objective(predict_full, predict_loo, bin_width)
    d = x_t.size
    state = {"best": -1.0, "x": x_t.copy(), "n": 0}
    by = {}

    def evaluate(Q: np.ndarray, name: str) -> np.ndarray:
        if len(Q) == 0:
            return np.zeros(0)
        v = f(Q)
        state["n"] += len(Q)
        i = int(np.argmax(v))
        by[name] = max(by.get(name, -np.inf), float(v[i]))
        if v[i] > state["best"]:
            state["best"], state["x"] = float(v[i]), Q[i].copy()
        return v

    pd_ = float(evaluate(x_t[None], "self")[0])
    binary = kinds == "binary"
    integer = kinds == "integer"
    real = kinds == "real"
    scale = np.where(real, R.std(axis=0) + 1e-12, 1.0)

    def single_moves(x: np.ndarray) -> np.ndarray:
        moves = []
        for j in np.flatnonzero(binary):
            z = x.copy(); z[j] = 1 - z[j]; moves.append(z)  # noqa: E702
        for j in np.flatnonzero(integer):
            for s in (-1, 1):
                if lo[j] <= x[j] + s <= hi[j]:
                    z = x.copy(); z[j] += s; moves.append(z)  # noqa: E702
        for j in np.flatnonzero(real):
            for s in (-1, 1):
                z = x.copy(); z[j] = np.clip(z[j] + s * 0.5 * scale[j], lo[j], hi[j]); moves.append(z)  # noqa: E702
        if not moves:
            return np.zeros((0, d))
        moves = np.array(moves)
        return moves[np.any(moves != x, axis=1)]  # a move clipped at the box edge changes nothing

    if "neighbours" in strategies:
        dist = np.abs((R - x_t) / scale).sum(axis=1)
        evaluate(R[np.argsort(dist, kind="stable")[:n_neighbours]], "neighbours")
    if "flips" in strategies:
        M = single_moves(x_t)
        v = evaluate(M, "flips")
        if len(M) > 1 and max_pairs > 0:
            changed = [np.flatnonzero(m != x_t)[0] for m in M]
            top = np.argsort(-v, kind="stable")[: int(np.ceil(np.sqrt(2 * max_pairs))) + 1]
            pairs = []
            for a in range(len(top)):
                for b in range(a + 1, len(top)):
                    i, k = top[a], top[b]
                    if changed[i] != changed[k]:
                        z = M[i].copy(); z[changed[k]] = M[k][changed[k]]; pairs.append(z)  # noqa: E702
            evaluate(np.array(pairs[:max_pairs]) if pairs else np.zeros((0, d)), "flips")
    if "random" in strategies and n_random > 0:
        Q = np.repeat(x_t[None], n_random, axis=0)
        n_change = rng.integers(1, max(2, min(6, d) + 1), size=n_random)
        for r in range(n_random):
            js = rng.choice(d, size=min(d, n_change[r]), replace=False)
            for j in js:
                if binary[j]:
                    Q[r, j] = 1 - Q[r, j]
                elif integer[j]:
                    Q[r, j] = rng.integers(lo[j], hi[j] + 1)
                else:
                    Q[r, j] = np.clip(Q[r, j] + rng.normal() * scale[j], lo[j], hi[j])
        evaluate(Q, "random")
    if "hill" in strategies and n_hill > 0:
        x = state["x"].copy()
        cur = state["best"]
        for _ in range(n_hill):
            M = single_moves(x)
            if len(M) > 256:
                M = M[rng.choice(len(M), 256, replace=False)]
            v = evaluate(M, "hill")
            if len(v) == 0 or v.max() <= cur:
                break
            x, cur = M[int(np.argmax(v))], float(v.max())
    if "gradient" in strategies and n_gradient_steps > 0 and np.any(binary | real):
        g_obj = _smooth_objective(predict_full, predict_loo)
        relax = binary | real
        idx = np.flatnonzero(relax)
        width = np.where(relax, hi - lo, 0.0)
        x = state["x"].astype(float).copy()
        step = 0.1
        h = 1e-4
        for _ in range(n_gradient_steps):
            if idx.size <= 200:
                E = np.zeros((2 * idx.size, d))
                E[np.arange(idx.size), idx] = h * np.maximum(width[idx], 1e-12)
                E[idx.size + np.arange(idx.size), idx] = -h * np.maximum(width[idx], 1e-12)
                vals = g_obj(x[None] + E)
                grad = np.zeros(d)
                grad[idx] = (vals[: idx.size] - vals[idx.size:]) / (2 * h * np.maximum(width[idx], 1e-12))
            else:  # SPSA: 16 random ±1 directions
                D = rng.choice([-1.0, 1.0], size=(16, d)) * relax
                vals = g_obj(np.vstack([x + h * width * D, x - h * width * D]))
                grad = ((vals[:16] - vals[16:])[:, None] * D / (2 * h * np.maximum(width, 1e-12))).mean(axis=0)
            state["n"] += len(vals)
            gn = np.abs(grad * width).max()
            if gn == 0 or not np.isfinite(gn):
                break
            x = np.clip(x + step * width * (grad * width) / gn, lo, hi)  # each coordinate moves <= step * width
            x[~relax] = state["x"][~relax]
            evaluate(x[None], "gradient")
            xr = x.copy()
            xr[binary] = np.round(xr[binary])
            evaluate(xr[None], "gradient")
    return {"value": state["best"], "best_x": state["x"], "pdtp": pd_, "by_strategy": by, "n_evaluations": state["n"]}


@reports_engine_stats
def dtp_search_estimate(
    learner: Any,
    X: Any,
    y: Any,
    *,
    records: Any = None,
    X_reference: Any = None,
    seed_policy: str = "paired",
    bin_width: float | None = 0.01,
    n_classes: int | None = None,
    random_state: Any = None,
    engine: Engine | None = None,
    **search_kw: Any,
) -> SearchResult:
    """Search-based lower estimate of DTP(t) for records of T, with the ratio estimate / PDTP.

    Parameters
    ----------
    learner : Learner
        Leave-one-out models come from ``learner.loo_models`` (logistic
        regression, warm-started Newton), ``learner.loo_proba`` (naive Bayes,
        Bayes inference) or retraining through ``engine``.
    X, y : the training set T
    records : array-like of int, optional (default: all)
    X_reference : array-like, optional
        Candidate records spanning the feature space (default: X).
    seed_policy : {"paired", "independent"}, default="paired"
        For retrained learners: "paired" gives the LOO model the full model's
        seed, so the search measures t's influence rather than init noise.
    engine : leakaudit.engine.Engine, optional
        Retrains the leave-one-out models; default :func:`leakaudit.engine.default_engine`.
    **search_kw : passed to :func:`dtp_search`

    Returns
    -------
    SearchResult (values are lower bounds on DTP; ``engine_stats``: what the engine did)
    """
    X, y, n_classes = check_fit_inputs(X, y, task="classification", n_classes=n_classes)
    records = np.arange(len(X)) if records is None else check_indices(records, name="records", n=len(X))
    check_choice(seed_policy, name="seed_policy", choices=("paired", "independent"))
    R = X if X_reference is None else check_matrix(X_reference, name="X_reference")
    seeds = spawn_seeds(random_state, len(records) + 2)
    full = learner.fit(X, y, random_state=seeds[0], n_classes=n_classes)
    loo_fns: list[Callable] = []
    caps = capabilities(learner)
    if caps.loo_models:
        _, models = learner.loo_models(X, y, records, n_classes=n_classes)
        loo_fns = [m.predict_proba for m in models]
    elif caps.loo is not None:
        loo_fns = [(lambda Q, t=int(t): learner.loo_proba(X, y, [t], X_query=Q, n_classes=n_classes)[0])
                   for t in records]
    else:
        everything = np.arange(len(X))
        lseeds = [seeds[0]] * len(records) if seed_policy == "paired" else seeds[2:]
        bank = engine.fit_bank(learner, X, y, [np.delete(everything, t) for t in records], lseeds,
                               n_classes=n_classes)
        loo_fns = [bank.model(i).predict_proba for i in range(len(records))]
    vals, pds, bests, ns = [], [], [], []
    by: dict[str, list[float]] = {}
    sub = spawn_seeds(seeds[1], len(records))
    for i, t in enumerate(records):
        out = dtp_search(full.predict_proba, loo_fns[i], X[t], X_reference=R, bin_width=bin_width,
                         random_state=sub[i], **search_kw)
        vals.append(out["value"]); pds.append(out["pdtp"]); bests.append(out["best_x"])  # noqa: E702
        ns.append(out["n_evaluations"])
        for k in STRATEGIES:
            by.setdefault(k, []).append(out["by_strategy"].get(k, float("nan")))
    v, p = np.asarray(vals), np.asarray(pds)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(p > 0, v / p, np.where(v > 0, np.inf, 1.0))
    return SearchResult(records=records, values=v, pdtp=p, ratio=ratio, by_strategy=by, best_x=np.array(bests),
                        n_evaluations=ns, bin_width=bin_width)
