"""Attribute inference against a classifier: try every value, score the known label.

The classification analogue of Yeom et al.'s Adversary 4 (and of Fredrikson et
al.'s 2014/2015 inversion attacks): the adversary knows a record's other
columns ``v`` and its label ``y``, sets the sensitive column to each candidate
value ``t_i``, queries the model, and returns

    argmax_i  p_i * Pr_model[y | v, t_i]

where ``p_i`` is the prior of ``t_i`` (the model's probability of the known label
plays the role of the error density ``f_A(eps(t_i))``). With ``prior=None`` the
prior is uniform: the value under which the model finds the label most likely.

It is measured like every attribute adversary, with Yeom's attribute advantage
(accuracy on members minus on non-members, Definition 5) and, for the
alternative advantage of Definition 6, against the no-model baseline
(:class:`~leakaudit.attribute.bayes_simulator.BayesSimulator` fitted on data the
model never saw, predicting ``t`` from ``(v, y)``).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .._validation import check_array, check_labels, check_vector
from ..exceptions import InvalidInputError
from ._encoding import attribute_encoding, baseline_simulator, check_audit, check_sizes, disjoint_rows, value_index
from .inversion import check_prior, counterfactual_inputs

__all__ = [
    "label_likelihood_scores",
    "classifier_attribute_scores",
    "infer_attribute_classifier",
    "audit_classifier_attribute",
    "audit_classifier_attributes",
]

_LOG_FLOOR = 1e-300


def label_likelihood_scores(candidate_probs, y, prior=None) -> np.ndarray:
    """Log-scores ``log p_i + log Pr_model[y | v, t_i]`` for each record and candidate value.

    Parameters
    ----------
    candidate_probs : array-like of shape (m, n_samples, n_classes)
        The model's class probabilities with the sensitive attribute set to each
        of the m candidate values.
    y : array-like of shape (n_samples,)
        The known labels (class indices).
    prior : array-like of shape (m,), optional
        Prior of the sensitive values; default uniform.

    Returns
    -------
    ndarray of shape (n_samples, m)
        ``-inf`` where the prior or the model's probability is 0.
    """
    P = check_array(candidate_probs, name="candidate_probs", ndim=3)
    m, n, c = P.shape
    if m < 2:
        raise InvalidInputError(f"candidate_probs needs at least 2 candidate values (first axis); got {m}")
    if P.min() < 0 or np.abs(P.sum(axis=2) - 1).max() > 1e-3:
        raise InvalidInputError("candidate_probs must hold probabilities that sum to 1 over the last axis")
    y = check_labels(y, name="y", n_classes=c)
    if y.shape[0] != n:
        raise InvalidInputError(f"inconsistent numbers of samples: candidate_probs={n}, y={y.shape[0]}")
    p = np.full(m, 1.0 / m) if prior is None else check_prior(prior, m=m)
    lik = P[:, np.arange(n), y].T  # (n, m): Pr_model[y_k | v_k, t_i]
    with np.errstate(divide="ignore"):
        return np.log(p)[None, :] + np.where(lik > 0, np.log(np.maximum(lik, _LOG_FLOOR)), -np.inf)


def classifier_attribute_scores(
    predict_proba: Callable[[np.ndarray], np.ndarray], X, y, *, columns, values=None, prior=None
) -> np.ndarray:
    """Query the classifier with every candidate value and score the known label.

    Parameters
    ----------
    predict_proba : callable
        The model, ``(n, d) -> (n, n_classes)``.
    X : array-like of shape (n_samples, n_features)
        Encoded inputs (the true sensitive value may be present; it is overwritten).
    y : array-like of shape (n_samples,)
    columns, values
        Where the sensitive attribute sits in ``X`` and how each value is written:
        see :func:`~leakaudit.attribute.inversion.counterfactual_inputs` (a block of
        one-hot columns needs no ``values``).
    prior : array-like of shape (m,), optional

    Returns
    -------
    ndarray of shape (n_samples, m)
    """
    y = check_vector(y, name="y", dtype=None)
    cand = counterfactual_inputs(X, columns=columns, values=values)
    m, n, d = cand.shape
    if y.shape[0] != n:
        raise InvalidInputError(f"inconsistent numbers of samples: X={n}, y={y.shape[0]}")
    probs = np.asarray(predict_proba(cand.reshape(m * n, d)), dtype=float)
    probs = probs.reshape(m, n, probs.shape[-1])
    return label_likelihood_scores(probs, y, prior)


def infer_attribute_classifier(
    predict_proba: Callable[[np.ndarray], np.ndarray], X, y, *, columns, values=None, prior=None
) -> np.ndarray:
    """Guess each record's sensitive value from a classifier (ties to the lowest index).

    Parameters are those of :func:`classifier_attribute_scores`.

    Returns
    -------
    ndarray of shape (n_samples,), int
        Index of the guessed value.
    """
    scores = classifier_attribute_scores(predict_proba, X, y, columns=columns, values=values, prior=prior)
    return np.argmax(scores, axis=1)


# ----------------------------------------------------------------------------------------------
# A whole audit on a tabular dataset: members, non-members, a reference sample for the baseline
# ----------------------------------------------------------------------------------------------


def _fit_model(estimator, X, y, n_classes: int, seed: int):
    from sklearn.base import clone

    from ..learners import Learner

    if isinstance(estimator, Learner):
        return estimator.fit(X, y, random_state=seed, n_classes=n_classes)
    est = clone(estimator)
    if "random_state" in est.get_params():
        est.set_params(random_state=seed)
    return est.fit(X, y)


def _full_proba(model, X, n_classes: int) -> np.ndarray:
    p = np.asarray(model.predict_proba(X), dtype=float)
    classes = getattr(model, "classes_", None)
    if classes is not None and p.shape[1] != n_classes:
        out = np.zeros((p.shape[0], n_classes))
        out[:, np.asarray(classes, dtype=int)] = p
        return out
    return p


def audit_classifier_attribute(dataset, attribute: str, estimator, **options):
    """Infer a sensitive column from a classifier trained on part of ``dataset``, and measure it.

    Protocol (Yeom et al.'s split protocol, spec §6.1, with a third disjoint part): draw
    disjoint random rows for the members (the training set), the non-members, and a
    reference sample of ``D``. Train the model on the members. Each adversary sees a
    record's other columns and its label, ``phi(z) = (v, y)``:

    * ``likelihood+prior``: ``argmax_i p_i Pr_model[y | v, t_i]`` (the classifier analogue of
      Adversary 4), prior from the reference sample;
    * ``likelihood``: the same with a uniform prior;
    * ``A7 (loss oracle)``: Adversary 7 with the loss-threshold membership oracle ("member" iff
      ``-log Pr_model[y | v, t_i] <=`` the mean training loss L_S, Yeom et al. §6.3; the paper writes
      ``<``, which accepts nothing when L_S = 0);
    * ``A6 (loss oracle)``: Adversary 6 with the same oracle.

    Each gets Definition 5's attribute advantage (accuracy on members minus on non-members)
    and Definition 6's alternative advantage against the no-model baseline: a
    :class:`~leakaudit.attribute.bayes_simulator.BayesSimulator` (multinomial logistic
    regression of ``t`` on ``(v, one-hot y)``) fitted on the reference sample -- an estimate
    of the Bayes-optimal guess from the other columns.

    Parameters
    ----------
    dataset : leakaudit.data.Dataset
        A classification dataset.
    attribute : str
        A categorical or binary column of ``dataset``.
    estimator : scikit-learn classifier or leakaudit Learner
        Cloned and fitted on the members (its ``random_state`` is set when it has one).
    **options
        Those of :func:`audit_classifier_attributes`: ``n_members=2000``, ``n_nonmembers`` (default
        ``n_members``) and ``n_reference=5000``, the sizes of the three disjoint parts; ``model_name``,
        ``confidence=0.95``, ``random_state``.

    Returns
    -------
    AttributeAudit
    """
    return audit_classifier_attributes(dataset, [attribute], estimator, **options)[0]


def audit_classifier_attributes(
    dataset,
    attributes,
    estimator,
    *,
    n_members: int = 2000,
    n_nonmembers: int | None = None,
    n_reference: int = 5000,
    model_name: str | None = None,
    confidence: float = 0.95,
    random_state=None,
):
    """:func:`audit_classifier_attribute` for several attributes of one trained model.

    The model is trained once (on all columns); each attribute is then inferred in turn.

    Returns
    -------
    list of AttributeAudit
        One per attribute, in order.
    """
    from .._random import check_random_state, seed_to_int
    from ..exceptions import InvalidParameterError

    attributes = [attributes] if isinstance(attributes, str) else list(attributes)
    sizes = (n_members, n_members if n_nonmembers is None else n_nonmembers, n_reference)
    check_audit(dataset, "classification", attributes)
    check_sizes(sizes)
    if sum(sizes) > len(dataset):
        raise InvalidParameterError(
            f"n_members + n_nonmembers + n_reference = {sum(sizes)} exceeds the {len(dataset)} rows of {dataset.name}"
        )
    rng = check_random_state(random_state)
    mem, non, ref = disjoint_rows(rng, len(dataset), sizes)
    X, enc = dataset.encode(fit_idx=mem)
    encs = [attribute_encoding(enc, dataset, a) for a in attributes]  # fail before training
    y = np.asarray(dataset.y, dtype=np.int64)
    k = int(dataset.n_classes)
    model = _fit_model(estimator, X[mem], y[mem], k, seed_to_int(rng))
    seed6 = seed_to_int(rng)
    return [
        _classifier_audit_one(
            dataset, attribute, encs[i], X, y, k, model, mem, non, ref,
            model_name=model_name or type(estimator).__name__, confidence=confidence, seed=seed6 + 2 * i,
        )
        for i, attribute in enumerate(attributes)
    ]


def _classifier_audit_one(dataset, attribute, encoding, X, y, k, model, mem, non, ref, *, model_name, confidence, seed):
    from .experiment import alternative_advantage, attribute_advantage, correct_guesses
    from .reductions import multi_query_reduction, uniform_reduction
    from .results import AttackSummary, AttributeAudit

    columns, values, value_names = encoding
    t = value_index(X, columns, values)
    m = len(value_names)
    prior = np.bincount(t[ref], minlength=m).astype(float)
    prior = (prior + 1e-12) / (prior + 1e-12).sum()  # values absent from the reference keep a tiny prior
    proba = lambda Z: _full_proba(model, Z, k)  # noqa: E731
    p_mem = proba(X[mem])
    train_acc = float(np.mean(np.argmax(p_mem, axis=1) == y[mem]))
    test_acc = float(np.mean(np.argmax(proba(X[non]), axis=1) == y[non]))
    loss_threshold = float(np.mean(-np.log(np.maximum(p_mem[np.arange(mem.size), y[mem]], 1e-300))))

    phi, sim = baseline_simulator(X, columns, np.eye(k)[y], t, ref, m)  # phi(z) = (v, one-hot y)
    sim_ok = {part: correct_guesses(sim.predict(phi[idx]), t[idx]) for part, idx in (("mem", mem), ("non", non))}

    guesses: dict[str, dict[str, np.ndarray]] = {}
    for part, idx in (("mem", mem), ("non", non)):
        cand = counterfactual_inputs(X[idx], columns=columns, values=values)
        P = proba(cand.reshape(m * idx.size, -1)).reshape(m, idx.size, k)
        sc_prior = label_likelihood_scores(P, y[idx], prior)
        sc_flat = label_likelihood_scores(P, y[idx], None)
        loss = -np.log(np.maximum(P[:, np.arange(idx.size), y[idx]].T, 1e-300))  # (n, m)
        # <= rather than the paper's <: identical for continuous losses, but a model with zero training
        # loss (a grown tree) would otherwise accept nothing
        accept = loss <= loss_threshold
        guesses.setdefault("likelihood+prior", {})[part] = np.argmax(sc_prior, axis=1)
        guesses.setdefault("likelihood", {})[part] = np.argmax(sc_flat, axis=1)
        guesses.setdefault("A7 (loss oracle)", {})[part] = multi_query_reduction(accept, prior)
        guesses.setdefault("A6 (loss oracle)", {})[part] = uniform_reduction(accept,
                                                                             random_state=seed + (part == "non"))
    descriptions = {
        "likelihood+prior": "argmax_i p_i Pr_model[y | v, t_i] (Adversary 4 for classifiers)",
        "likelihood": "argmax_i Pr_model[y | v, t_i] (uniform prior)",
        "A7 (loss oracle)": "Adversary 7: most likely value whose loss is at most the mean training loss",
        "A6 (loss oracle)": "Adversary 6: one random value, answered if its loss is at most the mean training loss",
    }
    sim_desc = "estimated Bayes rule: logistic regression of t on (v, one-hot y), fitted on the reference sample"
    attacks = []
    for name, g in guesses.items():
        ok_m, ok_n = correct_guesses(g["mem"], t[mem]), correct_guesses(g["non"], t[non])
        attacks.append(AttackSummary(
            name=name,
            description=descriptions[name],
            attribute_advantage=attribute_advantage(ok_m, ok_n, confidence=confidence),
            alternative_advantage=alternative_advantage(ok_m, sim_ok["non"], confidence=confidence, simulator=sim_desc),
        ))
    return AttributeAudit(
        dataset=dataset.name,
        attribute=attribute,
        model=model_name,
        values=value_names,
        prior=prior.tolist(),
        n_members=int(mem.size),
        n_nonmembers=int(non.size),
        train_accuracy=train_acc,
        test_accuracy=test_acc,
        baseline_accuracy_members=float(sim_ok["mem"].mean()),
        baseline_accuracy_nonmembers=float(sim_ok["non"].mean()),
        baseline=sim_desc,
        attacks=attacks,
        notes=[
            f"{ref.size} reference rows (disjoint from members and non-members) give the prior and the baseline",
            f"loss-threshold oracle: mean training cross-entropy {loss_threshold:.4g}",
        ],
    )
