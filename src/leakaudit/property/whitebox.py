"""White-box property inference on fully connected networks (Ganju et al., CCS'18), the baseline of Chase et al.

Ganju et al.'s meta-classifiers see every parameter of a shadow MLP and must not
depend on the order of its hidden neurons, which training does not fix (permuting a
layer's neurons, with the next layer's rows, leaves the function unchanged). Two
representations, both in Ganju et al. (Sec. 4):

- **neuron sorting** (:func:`sort_neurons`, :func:`sorted_parameters`): each hidden
  layer's neurons in decreasing norm of their incoming weights and bias, the next
  layer's rows permuted alike, then all parameters flattened. Chase et al.'s
  WBAttack (Table III) is this "vector attack". :class:`SortedMetaClassifier` reads the
  vector with a small neural network (scikit-learn's ``MLPClassifier``) on standardised
  features.
- **DeepSets per layer** (:class:`DeepSetsMetaClassifier`): a hidden neuron is an
  element of its layer's set. Layer 1's neuron ``j`` is the vector of its incoming
  weights and bias, ``[W1[:, j], b1[j]]`` (the inputs are ordered features); a later
  layer's neuron ``j`` is ``[sum_k Wl[k, j] e_{l-1,k}, bl[j]]``, its incoming weights
  applied to the previous layer's neuron embeddings ``e_{l-1,k}``, which does not depend
  on that layer's order. Each layer's elements pass through their own network ``phi_l``
  and are summed into a layer code ``L_l = sum_j phi_l(node_j)``; a network ``rho`` on
  the concatenated codes gives the logit of the t1 world. The sum makes it invariant to
  every hidden-layer permutation.

:func:`whitebox_attack` trains the shadow MLPs without poison on the adversary's pool
in both worlds, fits the meta-classifiers on the same shadows, and tests them on target
MLPs trained on the victim pool.

References
----------
Ganju, K., Wang, Q., Yang, W., Gunter, C. A. & Borisov, N. (2018). Property inference
attacks on fully connected neural networks using permutation invariant representations.
CCS'18, Sec. 4.1 (neuron sorting), Sec. 4.2 (DeepSets set representation).
Zaheer, M. et al. (2017). Deep Sets. NeurIPS.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator

from .._random import RandomStateLike, check_random_state
from .._validation import check_choice, check_scalar
from ..engine import Engine, resolve_engine
from ..exceptions import InvalidInputError, LeakauditError
from ..learners import torch_threads
from ..metrics import auc as _auc
from ..metrics import clopper_pearson
from .game import PropertyData, mlp_learner, sample_worlds, split_pools
from .results import WhiteBoxResult

__all__ = ["META_CLASSIFIERS", "DeepSetsMetaClassifier", "SortedMetaClassifier", "sort_neurons", "sorted_parameters",
           "whitebox_attack"]

META_CLASSIFIERS = ("deepsets", "sorted")


def sort_neurons(weights: list[np.ndarray], biases: list[np.ndarray]) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """Canonical neuron order of one MLP (Ganju et al.'s sorting; spec Sec. 3.5).

    Parameters
    ----------
    weights : list of arrays (fan_in, fan_out), one per layer
    biases : list of arrays (fan_out,)

    Returns
    -------
    (weights, biases) with each hidden layer's neurons in decreasing order of
    ``||[W_in[:, j]; b_j]||_2``, outgoing rows permuted to match. The function
    the network computes is unchanged.
    """
    W = [w.copy() for w in weights]
    b = [v.copy() for v in biases]
    for layer in range(len(W) - 1):
        norms = np.sqrt((W[layer] ** 2).sum(axis=0) + b[layer] ** 2)
        order = np.argsort(-norms, kind="stable")
        W[layer], b[layer] = W[layer][:, order], b[layer][order]
        W[layer + 1] = W[layer + 1][order, :]
    return W, b


def sorted_parameters(weights: list[np.ndarray], biases: list[np.ndarray]) -> np.ndarray:
    """Flattened neuron-sorted parameters of K networks, shape (K, n_params).

    ``weights[l]`` has shape (K, fan_in, fan_out) and ``biases[l]`` (K, fan_out), as in a
    :class:`~leakaudit.learners.TorchMLP` bank's ``weights_`` / ``biases_``.
    """
    rows = []
    for k in range(weights[0].shape[0]):
        W, b = sort_neurons([w[k] for w in weights], [v[k] for v in biases])
        rows.append(np.concatenate([np.concatenate([w.ravel(), v.ravel()]) for w, v in zip(W, b)]))
    return np.vstack(rows)


def _check_params(weights, biases) -> tuple[list[np.ndarray], list[np.ndarray]]:
    W = [np.asarray(w, dtype=np.float64) for w in weights]
    b = [np.asarray(v, dtype=np.float64) for v in biases]
    if not W or len(W) != len(b):
        raise InvalidInputError(f"weights and biases must be non-empty lists of the same length; got {len(W)} and "
                                f"{len(b)}")
    K = W[0].shape[0]
    for i, (w, v) in enumerate(zip(W, b)):
        if w.ndim != 3 or v.shape != (K, w.shape[2]) or w.shape[0] != K:
            raise InvalidInputError(f"weights[{i}] must have shape (K, fan_in, fan_out) and biases[{i}] (K, fan_out) "
                                    f"with K = {K}; got {w.shape} and {v.shape}")
        if i and w.shape[1] != W[i - 1].shape[2]:
            raise InvalidInputError(f"weights[{i}] has fan_in {w.shape[1]}; the layer before has {W[i - 1].shape[2]} "
                                    "neurons")
    return W, b


class SortedMetaClassifier(BaseEstimator):
    """Ganju et al.'s vector attack: neuron-sorted flattened parameters, standardised, into a small neural network.

    Parameters
    ----------
    hidden : tuple of int, default=(64,)
        Hidden layers of scikit-learn's ``MLPClassifier``.
    alpha : float, default=1e-2
        Its L2 penalty.
    max_iter : int, default=200
        Adam epochs at most (scikit-learn stops earlier once the training loss stalls).
    random_state : None, int or Generator
    """

    def __init__(self, *, hidden: tuple[int, ...] = (64,), alpha: float = 1e-2, max_iter: int = 200,
                 random_state: RandomStateLike = None):
        self.hidden = hidden
        self.alpha = alpha
        self.max_iter = max_iter
        self.random_state = random_state

    def fit(self, weights, biases, b) -> SortedMetaClassifier:
        """Fit on K shadow networks' parameters and their world bits ``b`` (K,)."""
        import warnings

        from sklearn.exceptions import ConvergenceWarning
        from sklearn.neural_network import MLPClassifier
        from sklearn.pipeline import make_pipeline
        from sklearn.preprocessing import StandardScaler
        from threadpoolctl import threadpool_limits

        W, B = _check_params(weights, biases)
        y = _check_bits(b, W[0].shape[0])
        seed = int(check_random_state(self.random_state).integers(0, 2**31 - 1))
        self.model_ = make_pipeline(StandardScaler(), MLPClassifier(
            hidden_layer_sizes=tuple(self.hidden), alpha=self.alpha, max_iter=self.max_iter, random_state=seed))
        with threadpool_limits(1), warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)  # a cap on iterations, reported by n_iter_
            self.model_.fit(sorted_parameters(W, B), y)
        return self

    def decision_function(self, weights, biases) -> np.ndarray:
        """Probability of the t1 world for each network, shape (K,)."""
        if not hasattr(self, "model_"):
            raise LeakauditError("the meta-classifier is not fitted; call fit first")
        W, B = _check_params(weights, biases)
        return self.model_.predict_proba(sorted_parameters(W, B))[:, 1]


class DeepSetsMetaClassifier(BaseEstimator):
    """Ganju et al.'s permutation-invariant meta-classifier: one DeepSets encoder per layer (module docstring).

    Parameters
    ----------
    embed : int, default=16
        Width of each neuron's embedding ``phi_l(node)`` and of each layer code.
    hidden : int, default=32
        Hidden width of ``rho``.
    epochs : int, default=300
        Full-batch Adam steps.
    lr : float, default=1e-3
    weight_decay : float, default=1e-3
        Adam's L2 penalty.
    random_state : None, int or Generator
        Initial weights (drawn with NumPy; the global torch seed is never touched).

    Notes
    -----
    Each layer's weights and biases are divided by their standard deviation over the
    training networks (``scale_``), so that layers of different fan-in feed ``phi`` on
    one scale.
    """

    def __init__(self, *, embed: int = 16, hidden: int = 32, epochs: int = 300, lr: float = 1e-3,
                 weight_decay: float = 1e-3, random_state: RandomStateLike = None):
        self.embed = embed
        self.hidden = hidden
        self.epochs = epochs
        self.lr = lr
        self.weight_decay = weight_decay
        self.random_state = random_state

    def _init(self, W: list[np.ndarray]) -> None:
        import torch

        rng = check_random_state(self.random_state)
        e, h = int(self.embed), int(self.hidden)

        def linear(fan_in: int, fan_out: int):
            bound = 1.0 / np.sqrt(fan_in)  # torch.nn.Linear's default range
            return [torch.tensor(rng.uniform(-bound, bound, size=(fan_in, fan_out)), dtype=torch.float32,
                                 requires_grad=True),
                    torch.tensor(rng.uniform(-bound, bound, size=fan_out), dtype=torch.float32, requires_grad=True)]

        self.params_ = []
        for layer, w in enumerate(W):
            d_in = (w.shape[1] if layer == 0 else e) + 1
            self.params_.append(linear(d_in, e) + linear(e, e))  # phi_l: two layers, ReLU
        self.params_.append(linear(len(W) * e, h) + linear(h, 1))  # rho

    def _forward(self, W, B):
        import torch

        codes, prev = [], None
        for layer, (w, v) in enumerate(zip(W, B)):
            if layer == 0:
                nodes = torch.cat([w.transpose(1, 2), v[:, :, None]], dim=2)  # (K, fan_out, fan_in + 1)
            else:
                agg = torch.einsum("kij,kie->kje", w, prev)  # incoming weights applied to the previous embeddings
                nodes = torch.cat([agg, v[:, :, None]], dim=2)
            a1, c1, a2, c2 = self.params_[layer]
            prev = torch.relu(torch.relu(nodes @ a1 + c1) @ a2 + c2)  # (K, fan_out, embed)
            codes.append(prev.sum(dim=1))
        a1, c1, a2, c2 = self.params_[-1]
        return (torch.relu(torch.cat(codes, dim=1) @ a1 + c1) @ a2 + c2)[:, 0]

    def _tensors(self, W, B):
        import torch

        return ([torch.tensor(w / s[0], dtype=torch.float32) for w, s in zip(W, self.scale_)],
                [torch.tensor(v / s[1], dtype=torch.float32) for v, s in zip(B, self.scale_)])

    def fit(self, weights, biases, b) -> DeepSetsMetaClassifier:
        """Fit on K shadow networks (``weights[l]`` (K, fan_in, fan_out), ``biases[l]`` (K, fan_out)) and their
        world bits ``b`` (K,)."""
        import torch

        check_scalar(self.embed, name="embed", kind=(int, np.integer), min_val=1)
        check_scalar(self.hidden, name="hidden", kind=(int, np.integer), min_val=1)
        check_scalar(self.epochs, name="epochs", kind=(int, np.integer), min_val=1)
        check_scalar(self.lr, name="lr", min_val=0.0, include_min=False)
        check_scalar(self.weight_decay, name="weight_decay", min_val=0.0)
        W, B = _check_params(weights, biases)
        y = torch.tensor(_check_bits(b, W[0].shape[0]), dtype=torch.float32)
        self.scale_ = [(max(float(w.std()), 1e-12), max(float(v.std()), 1e-12)) for w, v in zip(W, B)]
        self._init(W)
        Wt, Bt = self._tensors(W, B)
        flat = [p for group in self.params_ for p in group]
        opt = torch.optim.Adam(flat, lr=self.lr, weight_decay=self.weight_decay)
        loss_fn = torch.nn.BCEWithLogitsLoss()
        self.loss_curve_ = []
        with torch_threads(1):  # one core per fit, like the learners' trainers
            for _ in range(int(self.epochs)):
                opt.zero_grad()
                loss = loss_fn(self._forward(Wt, Bt), y)
                loss.backward()
                opt.step()
                self.loss_curve_.append(float(loss.detach()))
        return self

    def decision_function(self, weights, biases) -> np.ndarray:
        """Probability of the t1 world for each network, shape (K,)."""
        import torch

        if not hasattr(self, "params_"):
            raise LeakauditError("the meta-classifier is not fitted; call fit first")
        W, B = _check_params(weights, biases)
        if len(W) != len(self.scale_) or W[0].shape[1] + 1 != self.params_[0][0].shape[0]:
            raise InvalidInputError(f"the networks have {len(W)} layers and {W[0].shape[1]} inputs; the "
                                    f"meta-classifier was fitted on {len(self.scale_)} layers and "
                                    f"{self.params_[0][0].shape[0] - 1} inputs")
        with torch.no_grad(), torch_threads(1):
            return torch.sigmoid(self._forward(*self._tensors(W, B))).numpy().astype(np.float64)


def _check_bits(b, K: int) -> np.ndarray:
    y = np.asarray(b)
    if y.shape != (K,) or not np.isin(y, (0, 1)).all():
        raise InvalidInputError(f"b must hold one world bit (0 or 1) per network, shape ({K},); got {y.shape}")
    if np.unique(y).size < 2:
        raise InvalidInputError("b must hold networks of both worlds")
    return y.astype(np.float64)


def _make_meta(name: str, random_state: int) -> Any:
    return (DeepSetsMetaClassifier(random_state=random_state) if name == "deepsets"
            else SortedMetaClassifier(random_state=random_state))


def whitebox_attack(
    data: PropertyData, *, t0: float, t1: float, n_train: int = 1000, hidden: tuple[int, ...] = (32, 16, 8),
    epochs: int = 20, lr: float = 1e-3, n_shadow: int = 500, n_targets: int = 100,
    meta_classifiers: tuple[str, ...] = META_CLASSIFIERS, adversary_idx: np.ndarray | None = None,
    victim_idx: np.ndarray | None = None, dataset: str = "data", property_name: str = "f",
    random_state: RandomStateLike = None, engine: Engine | None = None,
) -> dict[str, WhiteBoxResult]:
    """WBAttack: ``n_shadow`` MLPs per world without poison, one or more meta-classifiers on them, tested on targets.

    Parameters
    ----------
    data : PropertyData
    t0, t1 : float
    n_train : int
        Training-set size of shadows and targets.
    hidden : tuple of int
        MLP hidden layers (white-box access to all weights).
    epochs, lr : int, float
        MLP training (Adam, batch 64; :func:`~leakaudit.property.game.mlp_learner`).
    n_shadow : int
        Shadow models per world (all meta-classifiers share them).
    n_targets : int
        Target models (half per world), trained on the victim pool.
    meta_classifiers : tuple of {"deepsets", "sorted"}
    adversary_idx, victim_idx : ndarray of int, optional
        Disjoint pools (default: a random 1/3 : 2/3 split).
    engine : leakaudit.engine.Engine, optional
        Trains the shadow and target networks (:meth:`~leakaudit.engine.Engine.fit_bank`, 100 per call);
        default :func:`leakaudit.engine.default_engine`.

    Returns
    -------
    dict
        Meta-classifier name -> :class:`WhiteBoxResult`; ``seconds`` is the shared shadow
        and target training plus that meta-classifier's fit; ``engine_stats`` what the engine did for both.
    """
    check_scalar(n_shadow, name="n_shadow", kind=(int, np.integer), min_val=2)
    check_scalar(n_targets, name="n_targets", kind=(int, np.integer), min_val=2)
    for m in meta_classifiers:
        check_choice(m, name="meta_classifiers", choices=META_CLASSIFIERS)
    rng = check_random_state(random_state)
    engine = resolve_engine(engine)
    t_start = time.perf_counter()
    if adversary_idx is None or victim_idx is None:
        adversary_idx, victim_idx = split_pools(len(data), random_state=rng)
    learner = mlp_learner(tuple(hidden), epochs=epochs, lr=lr)

    def train(pool, bits):
        sets, seeds = sample_worlds(data, pool, n_train, [t1 if bi else t0 for bi in bits], rng=rng)
        Ws, Bs = [], []
        for s in range(0, len(sets), 100):
            bank = engine.fit_bank(learner, data.X, data.y, sets[s : s + 100], seeds[s : s + 100], n_classes=2)
            for j in range(bank.n_chunks):  # every chunk is a TorchMLP bank with its weights
                chunk = bank.chunk(j)
                Ws.append([np.asarray(w) for w in chunk.weights_])
                Bs.append([np.asarray(v) for v in chunk.biases_])
        return ([np.concatenate([c[i] for c in Ws]) for i in range(len(Ws[0]))],
                [np.concatenate([c[i] for c in Bs]) for i in range(len(Bs[0]))])

    with engine.counting() as counted:
        b_shadow = np.repeat([0, 1], n_shadow)
        W_s, B_s = train(np.asarray(adversary_idx), b_shadow)
        b_target = rng.permutation(np.arange(n_targets) % 2)
        W_t, B_t = train(np.asarray(victim_idx), b_target)
    shared = time.perf_counter() - t_start
    out = {}
    for name in meta_classifiers:
        t = time.perf_counter()
        meta = _make_meta(name, int(rng.integers(0, 2**31 - 1))).fit(W_s, B_s, b_shadow)
        scores = meta.decision_function(W_t, B_t)
        correct = int(((scores > 0.5).astype(int) == b_target).sum())
        out[name] = WhiteBoxResult(
            dataset=dataset, property=property_name, t0=t0, t1=t1, hidden=tuple(hidden), n_shadow=n_shadow,
            n_targets=n_targets, accuracy=correct / n_targets, accuracy_ci=clopper_pearson(correct, n_targets),
            auc=_auc(b_target, scores), seconds=shared + time.perf_counter() - t, meta_classifier=name,
            engine_stats=counted.stats,
        )
    return out
