"""Pointwise differential training privacy (Long et al., Def 4.3/4.4), for any learner.

``PDTP_{A,T}(t) = max_y | ln p_{A(T)}(y|x(t)) - ln p_{A(T\\{t})}(y|x(t)) |``

in natural-log units (the paper's "in practice" formula omits the logarithm; spec
long-dtp.md §0 and §2.2). Outputs are binned with width 0.01 first (§5.2) unless
``bin_width=None``; binned values lie in ``[0, ln 199]``.

Leave-one-out models come from the cheapest exact path the learner offers:

- ``learner.loo_proba`` (closed form for :class:`~leakaudit.learners.NaiveBayes`
  and :class:`~leakaudit.learners.BayesInference`; warm-started Newton for
  :class:`~leakaudit.learners.LogisticRegression`);
- otherwise retraining ``A(T\\{t})`` for every record through ``fit_many``
  (batched for the torch learners), with a seed policy (spec §2.3):
  ``independent`` (each LOO model its own fresh seed; default) or ``paired``
  (the LOO model reuses the full model's seed, isolating t's influence).

The retrained models go through an engine (``engine=``, default
:func:`leakaudit.engine.default_engine`): its backends, and with a ``cache_dir``
its checksummed, resumable on-disk cache, so a killed run retrains only the
unfinished chunks. The values do not depend on the engine's backend or chunking
(see :class:`SharedOrderBlock` for the paired policy).
"""

from __future__ import annotations

import warnings
from typing import Any, Iterator

import numpy as np

from .._random import spawn_seeds
from .._validation import check_array, check_choice, check_indices, check_scalar
from ..engine import Engine, check_memory, reports_engine_stats, resolve_engine
from ..exceptions import InvalidInputError, InvalidParameterError
from ..learners import Learner, ListModelBank, ModelBank, capabilities, check_fit_inputs
from ..membership.binning import bin_probabilities, check_bin_width
from .results import PDTPResult

__all__ = ["pdtp", "pdtp_models", "pdtp_from_probabilities", "abs_log_ratio", "apply_binning", "loo_probabilities",
           "SEED_POLICIES", "SharedOrderBlock", "check_groups"]

SEED_POLICIES = ("independent", "paired")

# Models per fit_many call of a learner with a shared row order (TorchMLP, order="shared") under the paired seed
# policy: its row order is drawn from the seeds of all models of a call, so every call is padded to this many.
PAIRED_CALL_MODELS = 257


def apply_binning(p: np.ndarray, bin_width: float | None) -> np.ndarray:
    """Bin probabilities (Long et al. §5.2) or return them unchanged when ``bin_width`` is None."""
    p = np.asarray(p, dtype=np.float64)
    if bin_width is None:
        return p
    return bin_probabilities(np.clip(p, 0.0, 1.0), bin_width=bin_width)


def abs_log_ratio(p: np.ndarray, q: np.ndarray) -> np.ndarray:
    """Elementwise ``|ln p - ln q|`` (the ε of Def 4.2); 0 vs 0 gives 0, 0 vs >0 gives inf."""
    p = np.asarray(p, dtype=np.float64)
    q = np.asarray(q, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        d = np.abs(np.log(p) - np.log(q))
    both0 = (p <= 0) & (q <= 0)
    return np.where(both0, 0.0, np.where((p <= 0) | (q <= 0), np.inf, d))


def pdtp_from_probabilities(p_full: Any, p_loo: Any, *, bin_width: float | None = 0.01,
                            lowest_bins: str = "keep") -> np.ndarray:
    """PDTP from the two models' outputs at each record's own features (Def 4.4).

    Parameters
    ----------
    p_full : array-like of shape (n_records, n_classes)
        ``p_{A(T)}(.|x(t))`` for each record t.
    p_loo : array-like of shape (n_records, n_classes)
        ``p_{A(T\\{t})}(.|x(t))``.
    bin_width : float or None, default=0.01
        Bin both vectors first (paper); None compares raw probabilities.
    lowest_bins : {"keep", "ignore"}, default="keep"
        "keep" is the paper's reading (§5.2). "ignore" leaves out of the max every class whose output moves
        between the two lowest bins (both binned outputs at most ``1.5 * bin_width``): see Notes. Needs binning.

    Returns
    -------
    ndarray of shape (n_records,)
        ``max_y |ln bin(p_full) - ln bin(p_loo)|``.

    Notes
    -----
    Binning returns each bin's centre, so the two lowest bins are ``w/2`` and ``3w/2``: an output that crosses
    ``w`` (0.0099 to 0.0101 at ``w = 0.01``) changes PDTP by ``ln 3 = 1.0986``, above the DTP-1 threshold,
    whatever the width, while a move of the same size anywhere else in [w, 1] changes it by almost nothing.
    ``lowest_bins="ignore"`` counts such a class as unchanged at the binning's resolution (it contributes 0),
    so a value above 1 cannot come from that step alone; moves from the lowest bins to any higher bin still
    count. Long et al. do not use it: it is offered to size the step (spec long-dtp.md §2.5).

    Examples
    --------
    >>> float(pdtp_from_probabilities([[0.0, 1.0]], [[0.012, 0.988]])[0].round(4))  # one bin at the bottom: ln 3
    1.0986
    >>> float(pdtp_from_probabilities([[0.0, 1.0]], [[0.012, 0.988]], lowest_bins="ignore")[0].round(4))
    0.0101
    """
    pf = check_array(p_full, name="p_full", ndim=2)
    pl = check_array(p_loo, name="p_loo", ndim=2)
    if pf.shape != pl.shape:
        raise InvalidInputError(f"p_full has shape {pf.shape} but p_loo has shape {pl.shape}")
    for name, a in (("p_full", pf), ("p_loo", pl)):
        if a.min() < -1e-12 or a.max() > 1 + 1e-12:
            raise InvalidInputError(f"{name} must hold probabilities in [0, 1]")
    _check_bin_width(bin_width)
    _check_lowest_bins(lowest_bins, bin_width)
    return _binned_pdtp(pf, pl, bin_width, lowest_bins)


def _binned_pdtp(pf: np.ndarray, pl: np.ndarray, bin_width: float | None, lowest_bins: str) -> np.ndarray:
    """``max_y |ln bin(pf) - ln bin(pl)|`` over the last axis, optionally without moves between the lowest bins."""
    bf, bl = apply_binning(pf, bin_width), apply_binning(pl, bin_width)
    r = abs_log_ratio(bf, bl)
    if lowest_bins == "ignore":
        # bins return their centres: the two lowest are w/2 and 3w/2 (1.5 w with a margin for rounding)
        edge = 1.75 * bin_width
        r = np.where((bf <= edge) & (bl <= edge), 0.0, r)
    return r.max(axis=-1)


def _check_lowest_bins(lowest_bins: str, bin_width: float | None) -> None:
    check_choice(lowest_bins, name="lowest_bins", choices=("keep", "ignore"))
    if lowest_bins == "ignore" and bin_width is None:
        raise InvalidParameterError("lowest_bins='ignore' needs binned outputs; got bin_width=None")


def _check_bin_width(bin_width: float | None) -> None:
    if bin_width is not None:
        check_bin_width(bin_width, max_val=0.5)


def loo_probabilities(learner: Any, X: np.ndarray, y: np.ndarray, records: np.ndarray, *, n_classes: int,
                      seed: int, loo_seeds: list[int], method: str = "auto", batch_size: int = 256,
                      engine: Engine | None = None, groups: np.ndarray | None = None
                      ) -> tuple[np.ndarray, np.ndarray, str]:
    """Outputs of A(T) and of A(T\\{t}) at x(t) for every record t.

    ``groups`` (an integer per row of T: a privacy unit): A(T\\{t}) leaves out every row of t's group, not t
    alone (then always by retraining: a closed form leaves out one row).

    A closed form (``learner.loo_proba``) is used when the learner has one and ``method`` allows it; otherwise
    the models are retrained through ``engine`` (default :func:`leakaudit.engine.default_engine`): the full
    model in one call (queried at every record), then each block of ``batch_size`` records in one call whose
    model k is A(T\\{t_k}) queried at the block's records (its own output is the diagonal), so the engine's
    cache holds (block, block, C) outputs per chunk, never (n_records, n_records, C). A learner with a shared
    row order (``order="shared"``, set by the paired seed policy) is wrapped in :class:`SharedOrderBlock` with
    ``n_models=PAIRED_CALL_MODELS``, so that every model, the full one included, is the model it would be in one
    ``fit_many`` call of that many models of the seed: a record's leave-one-out model, hence its PDTP, depends on
    the seed and the record, not on which other records are measured or how they are chunked (blocks hold at
    most ``PAIRED_CALL_MODELS - 1`` records). In fast mode its stand-ins would cost as much as real models, so
    all the models are trained together in one chunk, and a value there depends on the records measured with it.

    Returns
    -------
    p_full : (n_records, n_classes); p_loo : (n_records, n_classes); method : str
    """
    use_closed = _closed_form(learner, method) and groups is None
    if method == "closed-form" and groups is not None:
        raise InvalidParameterError("method='closed-form' leaves out one row; groups need retraining")
    if method == "closed-form" and capabilities(learner).loo is None:
        raise InvalidParameterError(f"method='closed-form' but {type(learner).__name__} has no loo_proba")
    if use_closed:
        p_full, p_loo = learner.loo_proba(X, y, records, n_classes=n_classes, return_full=True)  # one full fit
        return p_full, p_loo, capabilities(learner).loo
    engine = resolve_engine(engine)
    n = len(X)
    everything = np.arange(n)

    def without(t):  # T \ {t}, or T without t's group
        return np.delete(everything, t) if groups is None else everything[groups != groups[t]]

    shared_order = capabilities(learner).shared_order
    if shared_order is not None:
        if shared_order == "call":
            out = engine.predict_many(learner, X, y, [everything] + [without(t) for t in records],
                                      [seed] + list(loo_seeds), X[records], n_classes=n_classes, together=True)
            out = np.asarray(out, dtype=np.float64)
            return out[0], out[1 + np.arange(len(records)), np.arange(len(records))], "retraining (fit_many)"
        # every model is trained as a model of one call of PAIRED_CALL_MODELS models: the shared row order, hence
        # a record's leave-one-out model, then depends on (seed, record) only, not on the other records measured
        learner = SharedOrderBlock(learner=learner, n_models=PAIRED_CALL_MODELS)
        batch_size = min(batch_size, PAIRED_CALL_MODELS - 1)
    p_full = np.asarray(engine.predict_many(learner, X, y, [everything], [seed], X[records], n_classes=n_classes),
                        dtype=np.float64)[0]
    p_loo = np.empty((len(records), n_classes))
    # one leave-out model per (unit, seed): the records of one unit with one seed share it (same rows, same seed), so
    # it is trained once and queried at each of them; without units every record is its own unit
    unit = groups[records] if groups is not None else np.arange(len(records))
    key = np.stack([unit, np.asarray(loo_seeds[:len(records)], dtype=np.int64)], axis=1)
    _, first, model_of = np.unique(key, axis=0, return_index=True, return_inverse=True)
    model_of = model_of.reshape(-1)
    for s in range(0, len(first), batch_size):
        reps = first[s:s + batch_size]
        ask = np.flatnonzero((model_of >= s) & (model_of < s + len(reps)))
        out = np.asarray(engine.predict_many(learner, X, y, [without(records[r]) for r in reps],
                                             [int(loo_seeds[r]) for r in reps], X[records[ask]], n_classes=n_classes))
        p_loo[ask] = out[model_of[ask] - s, np.arange(len(ask))]
    return p_full, p_loo, "retraining (fit_many)"


def check_groups(groups: Any, n: int) -> np.ndarray | None:
    """``groups`` (one integer per training record, or None) validated: shape (n,), integers; each record's
    leave-out model then leaves out its whole group, of which at least one record must remain outside."""
    if groups is None:
        return None
    g = np.asarray(groups)
    if g.shape != (n,) or not np.issubdtype(g.dtype, np.integer):
        raise InvalidParameterError(f"groups must hold one integer per training record ({n}); got "
                                    f"{g.dtype} of shape {g.shape}")
    if np.unique(g).size < 2:
        raise InvalidInputError("groups: every training record is in one group; leaving it out leaves no records")
    return g.astype(np.int64)


class SharedOrderBlock(Learner):
    """Trains some models of one ``order="shared"`` ``fit_many`` call exactly as that call would.

    A learner with ``order="shared"`` (:class:`~leakaudit.learners.TorchMLP`) draws one row
    permutation per call from the union of the call's subsets and the list of all its seeds;
    every model visits the rows in that order, skipping rows outside its subset. Under the paired
    seed policy all ``n_models`` models of the call (A(T) and every A(T\\{t})) share one seed, so the
    permutation depends only on the union and on ``n_models``. This learner trains any part of that
    call: it pads the requested subsets with one-row stand-in models (one of them holding the rows
    the requested subsets miss) up to ``n_models`` models whose union is every row, and returns the
    requested models only. The stand-ins cost ``epochs`` steps each, about one real model per call.
    Model k is then bit for bit the model of the single call, however the calls are chunked,
    provided the learner trains the models of a call independently given their seeds and row
    orders (TorchMLP's faithful mode; in fast mode the stand-ins cost as much as real models).

    Parameters
    ----------
    learner : Learner with ``order="shared"``
    n_models : int
        Models in the single call being reproduced (PDTP uses ``PAIRED_CALL_MODELS`` for every measurement).
    """

    def __init__(self, *, learner: Any = None, n_models: int = 2):
        self.learner = learner
        self.n_models = n_models

    @property
    def task(self) -> str:
        return self.learner.task

    def _fit(self, X, y, *, random_state, n_classes):
        from .._random import seed_to_int

        return self._fit_many(X, y, [np.arange(len(X))], [seed_to_int(random_state)], n_classes=n_classes).model(0)

    def _fit_many(self, X, y, subsets, seeds, *, n_classes) -> ModelBank:
        check_scalar(self.n_models, name="n_models", kind=(int, np.integer), min_val=1)
        m = len(subsets)
        if m > self.n_models:
            raise InvalidParameterError(f"{m} subsets asked of a call of n_models={self.n_models}")
        if len(set(int(s) for s in seeds)) != 1:
            raise InvalidParameterError("SharedOrderBlock reproduces paired calls: every seed must be the same")
        missing = np.setdiff1d(np.arange(len(X)), np.concatenate(subsets))
        stand_ins = []
        if m < self.n_models:
            if missing.size:
                stand_ins.append(missing)
            stand_ins += [np.array([0])] * (self.n_models - m - len(stand_ins))
        total = m + len(stand_ins)
        # the requested models spread evenly among the stand-ins: a learner that splits the models of a call
        # into equal blocks per thread then gets equal work per thread (the compiled kernels' pool hands out
        # models one at a time, where the spread changes nothing). Positions do not change any model: all
        # seeds are equal and the shared order depends only on the union of rows.
        real = np.round(np.linspace(0, total - 1, m)).astype(int)
        calls: list = [None] * total
        for k, pos in enumerate(real):
            calls[pos] = subsets[k]
        rest = iter(stand_ins)
        calls = [c if c is not None else next(rest) for c in calls]
        bank = self.learner.fit_many(X, y, calls, [int(seeds[0])] * total, n_classes=n_classes)
        return _select_models(bank, real)


def _select_models(bank: ModelBank, idx: np.ndarray) -> ModelBank:
    """Models ``idx`` of ``bank``, in that order (a stacked MLP bank stays stacked)."""
    idx = np.asarray(idx, int)
    if idx.size == bank.n_models and np.array_equal(idx, np.arange(bank.n_models)):
        return bank
    from ..learners import MLPBank

    if isinstance(bank, MLPBank):
        return MLPBank([W[idx] for W in bank.weights_], [b[idx] for b in bank.biases_], bank.activation,
                       info=bank.info)
    return ListModelBank([bank.model(int(k)) for k in idx], bank.n_classes)


def pdtp_values(learner: Any, X: np.ndarray, y: np.ndarray, *, bin_width: float | None = 0.01,
                n_classes: int, random_state: int = 0) -> np.ndarray:
    """PDTP of every row of validated (X, y) as a plain array (no result object; for inner loops).

    Uses the closed form when the learner has ``loo_proba``, else independent-seed retraining.
    """
    records = np.arange(len(X))
    closed = _closed_form(learner)
    seeds = spawn_seeds(random_state, 1 if closed else len(X) + 1)
    p_full, p_loo, _ = loo_probabilities(learner, X, y, records, n_classes=n_classes, seed=seeds[0],
                                         loo_seeds=[] if closed else seeds[1:])
    return _binned_pdtp(p_full, p_loo, bin_width, "keep")


def pdtp_models(learner: Any, n_records: int, n_repeats: int = 1, method: str = "auto") -> int:
    """How many models :func:`pdtp` trains for ``n_records`` records over ``n_repeats`` repeats: each repeat the full
    model and, without a closed form (``loo_proba``), one per record; a learner whose seed does not matter once in
    all (:func:`_loo_repeats` reuses its first repeat)."""
    closed = _closed_form(learner, method)
    return (1 if not capabilities(learner).stochastic else int(n_repeats)) * (1 if closed else int(n_records) + 1)


def _closed_form(learner: Any, method: str = "auto") -> bool:
    """True when leave-one-out outputs come from the learner's ``loo_proba`` (``method`` allows it and it has one)."""
    return method in ("auto", "closed-form") and capabilities(learner).loo is not None


def _loo_repeats(learner: Any, X: np.ndarray, y: np.ndarray, records: np.ndarray, *, n_classes: int,
                 root_seeds: list[int], seed_policy: str = "paired", method: str = "auto", batch_size: int = 256,
                 engine: Engine | None = None, groups: np.ndarray | None = None
                 ) -> Iterator[tuple[np.ndarray, np.ndarray, str]]:
    """Outputs of A(T) and of every A(T\\{t}) at x(t), one triple per repeat (the seed logic of :func:`pdtp`).

    Repeat r trains with seeds derived from ``root_seeds[r]``: the full model's seed (child 0), and per record
    the same seed (``paired``) or the record's own (``independent``: child 1 + t for record t, whatever the other
    records). Under ``paired``, a learner with an ``order`` parameter is switched to ``order="shared"`` and its
    models of a repeat are trained as models of one ``fit_many`` call of ``PAIRED_CALL_MODELS`` models
    (:class:`SharedOrderBlock` chunks through ``engine``). A learner whose seed does not matter
    (``Capabilities.stochastic`` False: the closed forms, and retrained learners such as XGBoost or LightGBM without
    sampling) is measured once and the same arrays yielded for every repeat. Inputs must be validated (X, y,
    records, n_classes).

    Yields
    ------
    p_full : (n_records, n_classes); p_loo : (n_records, n_classes); method : str
    """
    engine = resolve_engine(engine)
    if seed_policy == "paired" and "order" in learner.get_params():
        # TorchMLP: one shared row order in which each LOO model skips its record (spec §2.3 "paired")
        from sklearn.base import clone

        learner = clone(learner).set_params(order="shared")
    closed = _closed_form(learner, method) and groups is None
    first = None
    for r, root in enumerate(root_seeds):
        if r > 0 and not capabilities(learner).stochastic:  # other seeds train the same models: reuse repeat 0's
            yield first
            continue
        # the full model's seed, then record t's own seed (child 1 + t): a record's models do not depend on which
        # other records are measured; closed forms and the paired policy need no per-record seed
        per_record = not closed and seed_policy == "independent"
        seeds = spawn_seeds(root, int(records.max()) + 2 if per_record and len(records) else 1)
        seed = seeds[0]
        loo_seeds = [] if closed else ([seeds[1 + int(t)] for t in records] if per_record else [seed] * len(records))
        out = loo_probabilities(learner, X, y, records, n_classes=n_classes, seed=seed, loo_seeds=loo_seeds,
                                method=method, batch_size=batch_size, engine=engine, groups=groups)
        if first is None:
            first = out
        yield out


@reports_engine_stats
def pdtp(
    learner: Any,
    X: Any,
    y: Any,
    *,
    records: Any = None,
    bin_width: float | None = 0.01,
    seed_policy: str = "independent",
    n_repeats: int = 1,
    method: str = "auto",
    n_classes: int | None = None,
    random_state: Any = None,
    batch_size: int = 256,
    keep_outputs: bool | None = None,
    lowest_bins: str = "keep",
    engine: Engine | None = None,
    groups: Any = None,
) -> PDTPResult:
    """PDTP of records of the training set T = (X, y) under learner A (Long et al. Def 4.4).

    Parameters
    ----------
    learner : Learner
        The training algorithm A.
    X : array-like of shape (n_samples, n_features)
        The training set T.
    y : array-like of shape (n_samples,)
    records : array-like of int, optional
        Rows t of T to measure (default: every training record).
    bin_width : float or None, default=0.01
        Output binning (§5.2); None for raw outputs.
    seed_policy : {"independent", "paired"}, default="independent"
        Seeds of the retrained leave-one-out models (spec §2.3). ``paired`` gives
        each LOO model the full model's seed; whether the example order then skips
        t depends on the learner: learners with an ``order`` parameter (TorchMLP)
        are switched to ``order="shared"`` and trained as one ``fit_many`` call,
        so every LOO model visits the rows in the full model's order, skipping t.
    n_repeats : int, default=1
        Repeated measurements averaged (the paper averages 10). Each repeat
        retrains A(T) and every A(T\\{t}) with fresh seeds. Deterministic
        closed-form paths give identical repeats.
    method : {"auto", "closed-form", "retrain"}, default="auto"
        "auto" uses ``learner.loo_proba`` when the learner has it.
    n_classes : int, optional
    random_state : None, int or Generator
    batch_size : int, default=256
        Leave-one-out models trained per ``fit_many`` call.
    keep_outputs : bool or None, default=None
        Store ``p_full`` / ``p_loo`` in the result (None: only for up to 5,000
        records, since large nested lists make result objects slow to build).
    lowest_bins : {"keep", "ignore"}, default="keep"
        "ignore" leaves out of the max every class whose output moves between the two lowest bins, a ln 3
        step that binning creates however small the move (see :func:`pdtp_from_probabilities`); "keep" is
        the paper's reading.
    engine : leakaudit.engine.Engine, optional
        Retrains the models (its backend and resumable on-disk cache); default
        :func:`leakaudit.engine.default_engine`. The values do not depend on the engine, nor (except for
        a shared row order in fast mode) on ``batch_size`` or on which other ``records`` are measured: a
        record's models come from the seed and the record alone (with the paired policy and a shared row
        order, every model is a model of one ``fit_many`` call of ``PAIRED_CALL_MODELS`` models,
        :class:`SharedOrderBlock`).
    groups : array-like of int of shape (n_samples,), optional
        A group (privacy unit) per training record: record t's leave-out model is trained without every record of
        t's group (leave-one-group-out, by retraining), still measured at x(t).

    Returns
    -------
    PDTPResult
        ``values`` has shape (n_records,), natural-log units, in [0, ln 199] when binned; ``engine_stats``:
        what the engine did.
    """
    X, y, n_classes = check_fit_inputs(X, y, task="classification", n_classes=n_classes)
    records = np.arange(len(X)) if records is None else check_indices(records, name="records", n=len(X))
    check_choice(seed_policy, name="seed_policy", choices=SEED_POLICIES)
    check_choice(method, name="method", choices=("auto", "closed-form", "retrain"))
    check_scalar(n_repeats, name="n_repeats", kind=int, min_val=1)
    check_scalar(batch_size, name="batch_size", kind=int, min_val=1)
    _check_bin_width(bin_width)
    _check_lowest_bins(lowest_bins, bin_width)
    if len(X) < 2:
        raise InvalidInputError("X needs at least 2 training records for leave-one-out")
    groups = check_groups(groups, len(X))
    # refused before any seed is drawn
    check_memory(16.0 * n_repeats * len(records),  # a seed and a float64 per repeat and record
                 f"PDTP of {len(records):,} records over {n_repeats:,} repeats keeps every repeat's values:",
                 fix="measure fewer records or repeats (n_repeats)")
    per_repeat = []
    p_full0 = p_loo0 = None
    used = ""
    for p_full, p_loo, used in _loo_repeats(learner, X, y, records, n_classes=n_classes,
                                            root_seeds=spawn_seeds(random_state, n_repeats), seed_policy=seed_policy,
                                            method=method, batch_size=batch_size, engine=engine, groups=groups):
        if p_full0 is None:
            p_full0, p_loo0 = p_full, p_loo
        # Def 4.4, natural-log ratio (spec §2.2)
        per_repeat.append(_binned_pdtp(p_full, p_loo, bin_width, lowest_bins))
    per = np.vstack(per_repeat)
    if np.isinf(per).any() and bin_width is None:
        warnings.warn("some PDTP values are infinite (a probability is 0 in one model only); bin outputs to avoid it",
                      RuntimeWarning, stacklevel=2)
    if keep_outputs is None:
        keep_outputs = len(records) <= 5000
    if not keep_outputs:
        p_full0 = p_loo0 = []
    return PDTPResult(
        records=records, values=per.mean(axis=0), per_repeat=per, p_full=p_full0, p_loo=p_loo0,
        bin_width=bin_width, seed_policy=seed_policy, n_repeats=n_repeats,
        method=(used if lowest_bins == "keep" else f"{used}; moves between the two lowest bins ignored")
        + ("; leave-one-group-out" if groups is not None else ""),
        learner=type(learner).__name__,
    )
