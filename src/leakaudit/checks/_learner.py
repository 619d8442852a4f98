"""Shared checks of the learner protocol (:mod:`leakaudit.learners._base`).

Each ``check_learner_*(learner, X=None, y=None)`` trains a few small models and
raises ``AssertionError`` naming the learner and the broken contract; with no
data it builds a small synthetic problem suited to the learner's ``task``
(binary 0/1 features, so categorical learners such as naive Bayes accept it).
Run them on your own learner, or all at once with :func:`check_learner`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from sklearn.base import clone

from .._random import spawn_seeds
from ..exceptions import LeakauditError

__all__ = [
    "check_learner",
    "check_learner_fit_many_equals_fit",
    "check_learner_fit_predict_many_equals_fit_many",
    "check_learner_same_seed_same_model",
    "check_learner_bad_input_raises",
    "check_learner_clone_roundtrip",
    "check_learner_chunking_invariant",
    "check_learner_sparse_input",
    "check_learner_capabilities",
    "LEARNER_CHECKS",
]


def _name(learner: Any) -> str:
    return type(learner).__name__


def _data(learner: Any, X: Any, y: Any, random_state: int = 0) -> tuple[np.ndarray, np.ndarray, int | None]:
    """(X, y, n_classes): the given data, or a small synthetic problem for the learner's task."""
    if X is not None:
        X = np.asarray(X, dtype=np.float64)
        y = np.asarray(y)
        n_classes = int(y.max()) + 1 if learner.task == "classification" else None
        return X, y, n_classes
    rng = np.random.default_rng(random_state)
    n, d = 60, 6
    if learner.task == "classification":
        y = np.arange(n) % 3
        # Binary features whose frequencies depend on the class.
        p = 0.2 + 0.6 * ((y[:, None] + np.arange(d)[None, :]) % 3 == 0)
        X = (rng.random((n, d)) < p).astype(np.float64)
        return X, y, 3
    X = rng.normal(size=(n, d))
    y = X @ rng.normal(size=d) + 0.1 * rng.normal(size=n)
    return X, y, None


def _outputs(learner: Any, fitted: Any, Xq: np.ndarray) -> np.ndarray:
    return np.asarray(fitted.predict_proba(Xq) if learner.task == "classification" else fitted.predict(Xq))


def _subsets(n: int, y: np.ndarray, task: str, random_state: int) -> list[np.ndarray]:
    rng = np.random.default_rng(random_state)
    subsets = [np.sort(rng.choice(n, n // 2, replace=False)) for _ in range(2)]
    if task == "classification":
        # A subset missing the last class: its model must still output every class.
        subsets.append(np.flatnonzero(y != y.max()))
    subsets.append(np.arange(n))
    return subsets


def _close(a: np.ndarray, b: np.ndarray, atol: float) -> bool:
    return a.shape == b.shape and bool(np.all(np.abs(a - b) <= atol))


def _maxdiff(a: np.ndarray, b: np.ndarray) -> str:
    if a.shape != b.shape:
        return f"shapes {a.shape} and {b.shape}"
    return f"max |diff| = {np.max(np.abs(a - b)):.3g}"


def check_learner_fit_many_equals_fit(learner: Any, X: Any = None, y: Any = None, *, atol: float = 1e-5,
                                      random_state: int = 0) -> None:
    """``fit_many`` gives model k = ``fit(X[subsets[k]], ..., random_state=seeds[k])``, with all classes.

    Also checks output shapes ((K, n, C) probabilities that are non-negative and
    sum to 1, or (K, n) regression outputs), and that ``bank.model(k)`` predicts
    as row k of the bank.

    Parameters
    ----------
    learner : Learner
    X, y : array-like, optional
        Data to use (default: a small synthetic problem).
    atol : float, default=1e-5
        Allowed absolute difference (batched float32 training and prediction
        may differ from one model at a time by rounding).
    random_state : int, default=0
    """
    X, y, n_classes = _data(learner, X, y, random_state)
    subsets = _subsets(len(X), y, learner.task, random_state)
    seeds = spawn_seeds(random_state, len(subsets))
    if n_classes is not None:
        n_classes += 1  # one class more than any label: its column must be present (and 0 for most learners)
    bank = learner.fit_many(X, y, subsets, seeds, n_classes=n_classes)
    name = _name(learner)
    assert len(bank) == len(subsets), f"{name}.fit_many returned {len(bank)} models for {len(subsets)} subsets"
    many = _outputs(learner, bank, X)
    want_shape = (len(subsets), len(X)) + ((n_classes,) if n_classes else ())
    assert many.shape == want_shape, f"{name}: bank outputs have shape {many.shape}; expected {want_shape}"
    if n_classes:
        assert np.all(many >= 0) and np.allclose(many.sum(axis=2), 1.0, atol=1e-6), (
            f"{name}: bank probabilities are negative or do not sum to 1")
    for k, (s, seed) in enumerate(zip(subsets, seeds)):
        one = _outputs(learner, learner.fit(X[s], y[s], random_state=seed, n_classes=n_classes), X)
        assert _close(many[k], one, atol), (
            f"{name}.fit_many differs from fit for model {k} with the same subset and seed "
            f"({_maxdiff(many[k], one)}, atol={atol})")
        alone = _outputs(learner, bank.model(k), X)
        if alone.ndim == many.ndim:  # a single-model bank
            alone = alone[0]
        assert _close(many[k], alone, atol), (
            f"{name}: bank.model({k}) predicts differently from the bank's row {k} ({_maxdiff(many[k], alone)})")


def check_learner_same_seed_same_model(learner: Any, X: Any = None, y: Any = None, *, atol: float = 0.0,
                                       random_state: int = 0) -> None:
    """Same data and seed give the same model; fitting leaves the hyperparameters unchanged."""
    X, y, n_classes = _data(learner, X, y, random_state)
    name = _name(learner)
    before = learner.get_params(deep=False)
    a = _outputs(learner, learner.fit(X, y, random_state=7, n_classes=n_classes), X)
    b = _outputs(learner, learner.fit(X, y, random_state=7, n_classes=n_classes), X)
    assert _close(a, b, atol), f"{name}.fit with the same seed gave different models ({_maxdiff(a, b)})"
    subsets = _subsets(len(X), y, learner.task, random_state)[:2]
    m1 = _outputs(learner, learner.fit_many(X, y, subsets, [3, 4], n_classes=n_classes), X)
    m2 = _outputs(learner, learner.fit_many(X, y, subsets, [3, 4], n_classes=n_classes), X)
    assert _close(m1, m2, atol), f"{name}.fit_many with the same seeds gave different models ({_maxdiff(m1, m2)})"
    after = learner.get_params(deep=False)
    changed = [k for k in before if not _same_param(before[k], after.get(k))]
    assert not changed, f"{name}.fit changed its hyperparameters {changed}; fit must leave __init__ arguments alone"


def _same_param(a: Any, b: Any) -> bool:
    if a is b:
        return True
    if hasattr(a, "get_params") and hasattr(b, "get_params"):
        return type(a) is type(b) and repr(a.get_params(deep=False)) == repr(b.get_params(deep=False))
    try:
        return bool(np.all(a == b))
    except Exception:  # noqa: BLE001
        return False


def _bad_inputs(learner: Any, X: np.ndarray, y: np.ndarray, n_classes: int | None) -> list[tuple[str, Callable]]:
    n = len(X)
    Xnan = X.copy()
    Xnan[1, 0] = np.nan
    cases: list[tuple[str, Callable]] = [
        ("X with NaN", lambda: learner.fit(Xnan, y)),
        ("X with inf", lambda: learner.fit(np.where(np.arange(X.shape[1]) == 0, np.inf, X), y)),
        ("1-D X", lambda: learner.fit(X[:, 0], y)),
        ("X and y of different lengths", lambda: learner.fit(X, y[:-1])),
        ("X with no rows", lambda: learner.fit(X[:0], y[:0])),
        ("no subsets", lambda: learner.fit_many(X, y, [], [])),
        ("an empty subset", lambda: learner.fit_many(X, y, [np.array([], dtype=np.int64)], [0])),
        ("an index out of range", lambda: learner.fit_many(X, y, [np.array([0, n])], [0])),
        ("a negative index", lambda: learner.fit_many(X, y, [np.array([-1, 0, 1])], [0])),
        ("fewer seeds than subsets", lambda: learner.fit_many(X, y, [np.arange(n), np.arange(n)], [0])),
        ("X as text", lambda: learner.fit(np.full(X.shape, "a"), y)),
    ]
    if learner.task == "classification":
        cases += [
            ("fit_predict_many with NaN in X", lambda: learner.fit_predict_many(Xnan, y, [np.arange(n)], [0], X)),
            ("fit_predict_many with an index out of range",
             lambda: learner.fit_predict_many(X, y, [np.array([0, n])], [0], X)),
            ("fit_predict_many with a query of another width",
             lambda: learner.fit_predict_many(X, y, [np.arange(n)], [0], np.c_[X, X[:, :1]])),
            ("negative labels", lambda: learner.fit(X, y - 1)),
            ("non-integer labels", lambda: learner.fit(X, y + 0.5)),
            ("n_classes below the labels", lambda: learner.fit(X, y, n_classes=int(y.max()))),
        ]
    return cases


def check_learner_bad_input_raises(learner: Any, X: Any = None, y: Any = None, *, random_state: int = 0,
                                   check_predict: bool = True) -> None:
    """Bad training input (NaN, inf, shapes, empty or out-of-range subsets, bad labels) raises a
    :class:`~leakaudit.exceptions.LeakauditError`, and so does querying a model with the wrong
    number of features (``check_predict``). All failures are reported together."""
    X, y, n_classes = _data(learner, X, y, random_state)
    name = _name(learner)
    cases = _bad_inputs(learner, X, y, n_classes)
    if check_predict:
        model = learner.fit(X, y, random_state=0, n_classes=n_classes)
        for what, Xq in (("a query with one feature too many", np.c_[X, X[:, :1]]),
                         ("a query with NaN", np.where(np.arange(X.shape[1]) == 0, np.nan, X))):
            cases.append((what, lambda Xq=Xq: _outputs(learner, model, Xq)))
    problems = []
    for what, call in cases:
        try:
            call()
        except LeakauditError:
            continue
        except Exception as exc:  # noqa: BLE001
            problems.append(f"{what}: raised {type(exc).__name__} ({exc}) instead of a LeakauditError")
            continue
        problems.append(f"{what}: no error")
    assert not problems, f"{name} does not reject bad input with leakaudit's errors:\n  " + "\n  ".join(problems)


def check_learner_fit_predict_many_equals_fit_many(learner: Any, X: Any = None, y: Any = None, *,
                                                   atol: float = 1e-5, random_state: int = 0) -> None:
    """``fit_predict_many`` (the path the engine takes) gives ``fit_many(...).predict_proba(X_query)``: the same
    models, queried as they are trained (classifiers only)."""
    if learner.task != "classification":
        return
    X, y, n_classes = _data(learner, X, y, random_state)
    name = _name(learner)
    subsets = _subsets(len(X), y, learner.task, random_state)
    seeds = list(range(11, 11 + len(subsets)))
    want = _outputs(learner, learner.fit_many(X, y, subsets, seeds, n_classes=n_classes), X)
    got = np.asarray(learner.fit_predict_many(X, y, subsets, seeds, X, n_classes=n_classes))
    assert got.shape == want.shape, f"{name}.fit_predict_many returned shape {got.shape}; fit_many gives {want.shape}"
    assert _close(got, want, atol), f"{name}.fit_predict_many differs from fit_many ({_maxdiff(got, want)})"


def check_learner_clone_roundtrip(learner: Any, X: Any = None, y: Any = None, *, random_state: int = 0) -> None:
    """``sklearn.base.clone`` gives an equal, unfitted learner that trains the same models,
    with the same engine cache fingerprint; ``set_params(**get_params())`` is a no-op."""
    from ..engine import learner_fingerprint

    name = _name(learner)
    c = clone(learner)
    assert type(c) is type(learner) and c is not learner, f"clone({name}) is not a new {name}"
    p0, p1 = learner.get_params(deep=False), c.get_params(deep=False)
    assert set(p0) == set(p1) and all(_same_param(p0[k], p1[k]) for k in p0), (
        f"clone({name}) has different hyperparameters: {p0} vs {p1}")
    assert learner_fingerprint(c) == learner_fingerprint(learner), f"clone({name}) has another cache fingerprint"
    c.set_params(**c.get_params(deep=False))
    assert learner_fingerprint(c) == learner_fingerprint(learner), f"{name}.set_params(**get_params()) changed it"
    repr(c)
    X, y, n_classes = _data(learner, X, y, random_state)
    a = _outputs(learner, learner.fit(X, y, random_state=11, n_classes=n_classes), X)
    b = _outputs(learner, c.fit(X, y, random_state=11, n_classes=n_classes), X)
    assert _close(a, b, 0.0), f"clone({name}) trains a different model with the same seed ({_maxdiff(a, b)})"


def check_learner_chunking_invariant(learner: Any, X: Any = None, y: Any = None, *, atol: float = 1e-5,
                                     random_state: int = 0) -> None:
    """Model k does not depend on which other models share its ``fit_many`` call:
    the engine's outputs are the same for chunks of 1, 2 and all models (so cache
    entries and backends agree)."""
    from ..engine import Engine

    X, y, n_classes = _data(learner, X, y, random_state)
    subsets = _subsets(len(X), y, learner.task, random_state) * 2
    seeds = spawn_seeds(random_state + 1, len(subsets))
    name = _name(learner)
    ref = Engine(chunk_size=len(subsets), progress=False).predict_many(learner, X, y, subsets, seeds, X,
                                                                       n_classes=n_classes)
    for cs in (1, 3):
        got = Engine(chunk_size=cs, progress=False).predict_many(learner, X, y, subsets, seeds, X,
                                                                 n_classes=n_classes)
        assert _close(got, ref, atol), (
            f"{name}: models depend on how they are grouped into fit_many calls (chunks of {cs} vs "
            f"{len(subsets)}: {_maxdiff(got, ref)}); model k must depend only on subsets[k] and seeds[k]")


def check_learner_sparse_input(learner: Any, X: Any = None, y: Any = None, *, atol: float = 1e-5,
                               random_state: int = 0) -> None:
    """A SciPy sparse ``X`` trains the same models as the same ``X`` dense, in ``fit`` and ``fit_many``
    (a learner without ``accepts_sparse`` gets the rows its subsets use, densified); a bank that
    ``accepts_sparse`` predicts the same for a sparse query."""
    import scipy.sparse as sp

    X, y, n_classes = _data(learner, X, y, random_state)
    name = _name(learner)
    Xs = sp.csr_matrix(X)
    subsets = _subsets(len(X), y, learner.task, random_state)
    seeds = spawn_seeds(random_state, len(subsets))
    dense = _outputs(learner, learner.fit_many(X, y, subsets, seeds, n_classes=n_classes), X)
    bank = learner.fit_many(Xs, y, subsets, seeds, n_classes=n_classes)
    got = _outputs(learner, bank, X)
    assert _close(got, dense, atol), f"{name}.fit_many on sparse X differs from dense X ({_maxdiff(got, dense)})"
    if getattr(bank, "accepts_sparse", False):
        q = _outputs(learner, bank, Xs)
        assert _close(q, dense, atol), f"{name}: its bank predicts a sparse query differently ({_maxdiff(q, dense)})"
    a = _outputs(learner, learner.fit(X, y, random_state=5, n_classes=n_classes), X)
    b = _outputs(learner, learner.fit(Xs, y, random_state=5, n_classes=n_classes), X)
    assert _close(a, b, atol), f"{name}.fit on sparse X differs from dense X ({_maxdiff(a, b)})"


def check_learner_capabilities(learner: Any, X: Any = None, y: Any = None, *, atol: float = 1e-5,
                               random_state: int = 0) -> None:
    """What ``learner.capabilities`` declares holds: its closed-form leave-one-out (``loo``, ``loo_models``) gives
    what refitting without the record gives; a learner that is not ``stochastic`` trains the same model whatever
    the seed; with ``state``, ``from_state(get_state(bank))`` predicts as the bank."""
    from ..learners import capabilities

    caps = capabilities(learner)
    X, y, n_classes = _data(learner, X, y, random_state)
    name = _name(learner)
    records = np.arange(3)
    loo = {}
    if caps.loo is not None:
        full, loo["loo_proba"] = learner.loo_proba(X, y, records, n_classes=n_classes, return_full=True)
        want = _outputs(learner, learner.fit(X, y, random_state=0, n_classes=n_classes), X[records])
        assert _close(np.asarray(full), want, atol), (
            f"{name}.loo_proba(return_full=True) gives other full-model outputs than fit ({_maxdiff(full, want)})")
    if caps.loo_models:
        _, models = learner.loo_models(X, y, records, n_classes=n_classes)
        loo["loo_models"] = np.stack([m.predict_proba(X[t:t + 1])[0] for m, t in zip(models, records)])
    for how, got in loo.items():
        want = np.stack([_outputs(learner, learner.fit(np.delete(X, t, axis=0), np.delete(y, t), random_state=0,
                                                       n_classes=n_classes), X[t:t + 1])[0] for t in records])
        assert _close(np.asarray(got), want, atol), (
            f"{name} declares a closed-form leave-one-out, but its {how} differs from refitting without the "
            f"record ({_maxdiff(np.asarray(got), want)}, atol={atol})")
    if not caps.stochastic:
        a = _outputs(learner, learner.fit(X, y, random_state=1, n_classes=n_classes), X)
        b = _outputs(learner, learner.fit(X, y, random_state=2, n_classes=n_classes), X)
        assert _close(a, b, 0.0), (
            f"{name} declares stochastic=False, but other seeds train other models ({_maxdiff(a, b)})")
    if caps.state:
        subsets = _subsets(len(X), y, learner.task, random_state)
        bank = learner.fit_many(X, y, subsets, spawn_seeds(random_state, len(subsets)), n_classes=n_classes)
        back = learner.from_state(learner.get_state(bank))
        a, b = _outputs(learner, bank, X), _outputs(learner, back, X)
        assert _close(a, b, 0.0), f"{name}.from_state(get_state(bank)) predicts differently ({_maxdiff(a, b)})"


LEARNER_CHECKS = (
    check_learner_fit_many_equals_fit,
    check_learner_fit_predict_many_equals_fit_many,
    check_learner_same_seed_same_model,
    check_learner_bad_input_raises,
    check_learner_clone_roundtrip,
    check_learner_chunking_invariant,
    check_learner_sparse_input,
    check_learner_capabilities,
)


def check_learner(learner: Any, X: Any = None, y: Any = None) -> None:
    """Run every learner check; raise one ``AssertionError`` listing all failures."""
    failures = []
    for check in LEARNER_CHECKS:
        try:
            check(learner, X, y)
        except AssertionError as exc:
            failures.append(f"{check.__name__}: {exc}")
    assert not failures, "\n".join(failures)
