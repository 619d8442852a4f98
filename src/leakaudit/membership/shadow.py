"""Shadow-model attack of Shokri et al. (S&P 2017) as Long et al. ran it (spec long-dtp.md §3.1).

Shadow models ``A(T_j)`` trained on subsets of the adversary's data D are
queried on every record r of D; Algorithm 1 of Long et al. builds the attack
training set::

    for j = 1..M, for r in D:
        f_r = concat(x_r, onehot(y_r), bin(A(T_j)(x_r)))      label "in" iff r ∈ T_j

An attack network (one hidden layer of 32 ReLU units, trained with SGD at
learning rate 0.01 for at most 30 epochs, NLL loss) is fitted on these rows and
queried with ``(x(t), y(t), bin(c(x(t))))``; "member" iff p_in > p_out.

``per_class=True`` gives Shokri et al.'s original variant: one attack model per
class label, each trained on the shadow rows of that class.

Two trainers for the attack network (``backend``; "auto" takes "compiled" wherever it applies):

``"compiled"``: :class:`leakaudit.learners.TorchMLP`'s compiled kernel (torch is not needed), float32. With
    ``batch_size=1``, ``mode="faithful"``: exactly Long's net, ``Linear(d, 32) -> ReLU -> Linear(32, 2) ->
    LogSoftMax`` with the NLL criterion, per-example SGD (lr 0.01, no momentum) over one row order drawn before
    training (Torch7's ``nn.StochasticGradient``), PyTorch's default init; it reads only the non-zero inputs of a
    row, and with ``per_class=True`` one batched ``fit_many`` call trains every class model. With
    ``batch_size > 1``, ``mode="fast", optimizer="sgd"``: plain SGD on the batch-mean NLL, rows reshuffled
    every epoch.
``"sklearn"`` (the fallback): ``MLPClassifier`` with plain SGD, rows reshuffled every epoch, one logistic output
    unit for two classes (the same function class and loss, another parametrisation and init); slow at
    ``batch_size=1`` (one Python-level step per row).

Wide data: the attributes are scaled down when they would make per-example SGD diverge. One step on a row x
moves the network's first-layer output on that row by about ``learning_rate * ||x||^2`` times the gradient; at
lr 0.01 with 5,000 standardised columns that is 50 times the gradient, and the weights overflow to NaN (wide
data trains worse well before that: benchmarks/README.md). So the attribute block
is multiplied by ``feature_scale_ = min(1, 1 / sqrt(learning_rate * mean ||x||^2))`` (the mean over the
records given to ``fit``, applied unchanged in ``score``): a linear first layer loses nothing, and data with
``learning_rate * mean ||x||^2 <= 1`` (Adult 13, Purchase-like 55, Texas-like 16 at lr 0.01) is not changed.

Rows of the attack training set are put in a canonical order (lexicographic on
the feature vector, then the "in" label) before training, so for a given ``random_state`` the fitted
network(s), hence the scores, do not depend on the order of the records or of
the shadow models.
"""

from __future__ import annotations

import dataclasses
import time
import warnings

import numpy as np
from sklearn.exceptions import ConvergenceWarning
from sklearn.neural_network import MLPClassifier

from .._random import RandomStateLike, check_random_state
from .._validation import check_choice, check_consistent_length, check_matrix, check_scalar
from ..exceptions import InvalidInputError, InvalidParameterError
from ._base import Attack, AttackInputs, AttackResult, check_reference_inputs, check_target_inputs
from .binning import bin_probabilities

__all__ = ["ShadowModelAttack", "attack_features"]


def attack_features(X, y, probs, *, n_classes: int, bin_width: float | None = 0.01, use_features: bool = True,
                    x_scale: float = 1.0):
    """Long et al.'s attack feature vector ``concat(x, onehot(y), bin(q))``.

    Parameters
    ----------
    X : ndarray (n, d) or None
        Record attributes (dropped when ``use_features`` is False or X is None).
    y : ndarray (n,)
    probs : ndarray (n, C)
        A model's outputs on the records.
    n_classes : int
    bin_width : float or None
        Bin the outputs (§2.5); None keeps them raw.
    use_features : bool
    x_scale : float, default=1.0
        Factor applied to the attributes X (see ``ShadowModelAttack.feature_scale_``).

    Returns
    -------
    ndarray (n, d + 2C) (or (n, 2C) without attributes)
    """
    q = bin_probabilities(probs, bin_width=bin_width) if bin_width else np.asarray(probs, float)
    onehot = np.eye(n_classes)[y]
    parts = ([np.asarray(X, float) * x_scale] if use_features and X is not None else []) + [onehot, q]
    return np.hstack(parts)


def _feature_scale(X, learning_rate: float) -> float:
    """``min(1, 1 / sqrt(learning_rate * mean ||x||^2))``: keeps per-example SGD steps on the attributes stable."""
    if X is None or not len(X):
        return 1.0
    mean_sq = float(np.mean(np.einsum("ij,ij->i", X, X)))
    step = learning_rate * mean_sq
    return 1.0 if step <= 1.0 else float(1.0 / np.sqrt(step))


def _compiled_ready(hidden: int = 32) -> bool:
    """Whether TorchMLP's compiled kernel trains the attack network of ``hidden`` units here (it needs no torch)."""
    from ..learners import _mlp_native

    return _mlp_native.supports(int(hidden), np.float32)


#: Without the compiled per-example trainer, scikit-learn's per-example SGD is far too slow: an audit then uses at
#: most this many shadow models, trained in mini-batches of this size (:func:`shadow_plan`).
FALLBACK_MODELS = 8
FALLBACK_BATCH = 32


def shadow_plan(n_models: int | None, batch: int) -> tuple[int | None, int, str | None]:
    """(shadow models, attack batch, note): as asked, or the fallback when per-example SGD (``batch == 1``) has no
    compiled trainer here (``note`` says so)."""
    if batch == 1 and not _compiled_ready():
        k = FALLBACK_MODELS if n_models is None else min(n_models, FALLBACK_MODELS)
        return k, FALLBACK_BATCH, ("the compiled per-example trainer is not available: scikit-learn mini-batches "
                                   f"of {FALLBACK_BATCH}, at most {FALLBACK_MODELS} shadow models")
    return n_models, batch, None


class ShadowModelAttack(Attack):
    """Shokri et al.'s shadow-model attack in Long et al.'s single-attack-model form.

    Parameters
    ----------
    per_class : bool, default=False
        One attack model per class (Shokri et al.'s original) instead of one
        model with the label as an input (Long et al.).
    use_features : bool, default=True
        Include the record's attributes x in the attack features (Long et al.
        do; Shokri et al.'s attack uses only the prediction vector).
    hidden : int, default=32
    learning_rate : float, default=0.01
        Per-example SGD learning rate (Long et al.: 0.01).
    epochs : int, default=30
    batch_size : int, default=1
        1 is Long's per-example SGD (faithful). Larger values train mini-batches
        (rows reshuffled every epoch).
    scale_lr : bool, default=True
        With mini-batches, step with ``learning_rate * batch_size`` on the batch-mean
        gradient (the linear scaling rule), so one batch moves the weights about as
        far as ``batch_size`` per-example steps would (without it, batch 32 at lr
        0.01 barely trains in 30 epochs).
    bin_width : float or None, default=0.01
    backend : {"auto", "compiled", "sklearn"}, default="auto"
        Attack-network trainer (see the module docstring). "compiled" raises ``InvalidParameterError`` where the
        kernel is not available (``leakaudit doctor`` says why) or has no copy for ``hidden`` units; "auto" then
        takes scikit-learn. "numba" is refused with a message naming "compiled".
    random_state : None, int or Generator

    Attributes
    ----------
    models_ : dict
        Fitted attack network per class (``per_class=True``) or ``{None: net}``;
        each has ``predict_proba(features) -> (n, 2)``.
    constant_ : dict
        Classes whose shadow rows were all "in" (or all "out"): that constant p_in.
    backend_ : str
        The trainer that ran, "compiled" or "sklearn".
    feature_scale_ : float
        Factor applied to the record attributes, 1 unless ``learning_rate * mean ||x||^2 > 1`` (wide data;
        see the module docstring).
    """

    name = "shadow"
    needs = ("reference",)

    def __init__(self, *, per_class: bool = False, use_features: bool = True, hidden: int = 32,
                 learning_rate: float = 0.01, epochs: int = 30, batch_size: int = 1, scale_lr: bool = True,
                 bin_width: float | None = 0.01, backend: str = "auto", random_state: RandomStateLike = None):
        self.per_class = per_class
        self.use_features = use_features
        self.hidden = hidden
        self.learning_rate = learning_rate
        self.epochs = epochs
        self.batch_size = batch_size
        self.scale_lr = scale_lr
        self.bin_width = bin_width
        self.backend = backend
        self.random_state = random_state

    def _resolve_backend(self) -> str:
        if self.backend == "numba":
            raise InvalidParameterError("backend='numba' is now called backend='compiled' (TorchMLP's compiled "
                                        "kernel; the numba kernels were removed)")
        check_choice(self.backend, name="backend", choices=("auto", "compiled", "sklearn"))
        if self.backend == "sklearn":
            return "sklearn"
        if _compiled_ready(int(self.hidden)):
            return "compiled"
        if self.backend == "compiled":
            from ..learners import _mlp_native

            why = (f"has no copy for hidden={self.hidden} units (widths {_mlp_native.WIDTHS})"
                   if _mlp_native.library() is not None else f"is not available: {_mlp_native.KERNEL.reason}")
            raise InvalidParameterError(f"backend='compiled' cannot train the attack network: the compiled kernel "
                                        f"{why}; use backend='auto' or 'sklearn'")
        return "sklearn"

    def _lr(self) -> float:
        """The step size: per-example lr, or the linear scaling rule's lr * batch_size on batch means."""
        return float(self.learning_rate) * (int(self.batch_size) if self.scale_lr else 1)

    def _torch_net(self):
        from ..learners import TorchMLP

        if int(self.batch_size) == 1:
            return TorchMLP(hidden=(int(self.hidden),), activation="relu", mode="faithful",
                            lr=float(self.learning_rate), epochs=int(self.epochs), backend="compiled")
        return TorchMLP(hidden=(int(self.hidden),), activation="relu", mode="fast", optimizer="sgd", lr=self._lr(),
                        batch_size=int(self.batch_size), epochs=int(self.epochs), backend="compiled")

    def _net(self, seed):
        lr = self._lr()
        return MLPClassifier(hidden_layer_sizes=(int(self.hidden),), activation="relu", solver="sgd",
                             learning_rate_init=lr, momentum=0.0, nesterovs_momentum=False,
                             alpha=0.0, batch_size=int(self.batch_size), max_iter=int(self.epochs), shuffle=True,
                             random_state=seed, early_stopping=False, n_iter_no_change=int(self.epochs) + 1)

    def fit(self, shadow_probs, shadow_in, y, X=None) -> "ShadowModelAttack":
        """Build the attack training set (Long's Algorithm 1) and train the attack model(s).

        Parameters
        ----------
        shadow_probs : array (M, n, C)
            Shadow model j's outputs on every record r of D.
        shadow_in : array (M, n) of bool
            Whether r is in T_j.
        y : array (n,)
            Labels of the records of D.
        X : array (n, d), optional
            Attributes of the records of D.

        Returns
        -------
        self, with ``models_`` (dict class -> network, or {None: network}), ``constant_`` and ``backend_``.
        """
        check_scalar(self.hidden, name="hidden", kind=(int, np.integer), min_val=1)
        check_scalar(self.epochs, name="epochs", kind=(int, np.integer), min_val=1)
        check_scalar(self.batch_size, name="batch_size", kind=(int, np.integer), min_val=1)
        check_scalar(self.learning_rate, name="learning_rate", min_val=0, include_min=False)
        backend = self._resolve_backend()
        sp, sin = check_reference_inputs(shadow_probs, shadow_in, name="shadow")
        M, n, C = sp.shape
        yy = np.asarray(y, dtype=np.int64)
        if yy.shape != (n,):
            raise InvalidInputError(f"y has shape {yy.shape}; expected ({n},)")
        if n and (yy.min() < 0 or yy.max() >= C):
            raise InvalidInputError(f"y holds labels outside 0..{C - 1} (shadow_probs has {C} classes)")
        if X is not None and self.use_features:
            X = check_matrix(X, name="X")
            check_consistent_length(X=X, y=yy)
        self.n_classes_ = C
        self.feature_scale_ = _feature_scale(X if self.use_features else None, float(self.learning_rate))
        feats = np.vstack([attack_features(X, yy, sp[j], n_classes=C, bin_width=self.bin_width,
                                           use_features=self.use_features, x_scale=self.feature_scale_)
                           for j in range(M)])
        labels = sin.reshape(-1).astype(int)
        classes = np.tile(yy, M)
        # canonical row order (lexicographic on features, then label; keys as column views, last = primary, so no
        # third (M n, d) copy of the rows): the fitted networks do not depend on the order of records or shadows
        order = np.lexsort([labels] + [feats[:, j] for j in range(feats.shape[1] - 1, -1, -1)])
        feats, labels, classes = feats[order], labels[order], classes[order]
        rng = check_random_state(self.random_state)
        groups = np.unique(classes) if self.per_class else [None]
        self.models_ = {}
        self.constant_ = {}
        # one seed per group with both labels, drawn in class order whichever trainer runs
        trainable, subsets, seeds = [], [], []
        for g in groups:
            rows = np.arange(len(labels)) if g is None else np.flatnonzero(classes == g)
            lab = labels[rows]
            if lab.min() == lab.max():  # a class seen only "in" (or only "out") by the shadows
                self.constant_[g] = float(lab[0])
                continue
            trainable.append(g)
            subsets.append(rows)
            seeds.append(int(rng.integers(0, 2**31 - 1)))
        self.backend_ = backend
        if backend == "compiled":
            if trainable:  # every attack model in one batched call: model k on rows subsets[k], seed seeds[k]
                bank = self._torch_net().fit_many(feats, labels, subsets, seeds, n_classes=2)
                self.models_ = {g: bank.model(k) for k, g in enumerate(trainable)}
        else:
            for g, rows, seed in zip(trainable, subsets, seeds):
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", ConvergenceWarning)
                    self.models_[g] = self._net(seed).fit(feats[rows], labels[rows])
        self.uses_features_ = X is not None and self.use_features
        return self

    def score(self, probs, y, X=None) -> AttackResult:
        """p_in of the fitted attack model(s) for target outputs ``probs`` (n, C) on records (X, y)."""
        if not hasattr(self, "models_"):
            raise InvalidInputError("ShadowModelAttack is not fitted; call fit(shadow_probs, shadow_in, y, X) first")
        p, yy = check_target_inputs(probs, y)
        if p.shape[1] != self.n_classes_:
            raise InvalidInputError(f"probs has {p.shape[1]} classes; the attack was fitted on {self.n_classes_}")
        if self.uses_features_ and X is None:
            raise InvalidInputError("X is required: the attack model was trained with record attributes")
        f = attack_features(X if self.uses_features_ else None, yy, p, n_classes=self.n_classes_,
                            bin_width=self.bin_width, use_features=self.uses_features_,
                            x_scale=getattr(self, "feature_scale_", 1.0))
        p_in = np.zeros(len(yy))
        if self.per_class:
            for g in np.unique(yy):
                rows = yy == g
                if g in self.models_:
                    p_in[rows] = self.models_[g].predict_proba(f[rows])[:, 1]
                else:  # unseen class: no evidence either way, or the constant shadow label
                    p_in[rows] = self.constant_.get(g, 0.5)
        elif None in self.models_:
            p_in = self.models_[None].predict_proba(f)[:, 1]
        else:
            p_in[:] = self.constant_[None]
        return self.result(p_in, (p_in > 0.5).astype(int), threshold=0.5)

    def run(self, inputs: AttackInputs) -> AttackResult:
        """Fit on the reference (shadow) models' outputs on the audited records, then score."""
        if inputs.reference is None:
            raise InvalidInputError("the shadow attack needs shadow models (inputs.reference)")
        self.fit(inputs.reference.probs, inputs.reference.in_mask, inputs.y, inputs.X)
        return self.score(inputs.probs, inputs.y, inputs.X)


def audit_run(ctx, atk: "ShadowModelAttack", inputs: AttackInputs) -> tuple[AttackResult, dict]:
    """Shokri et al.'s shadow-model attack in the audit, with the first reference models as its shadow models, and
    what it used (results.json's ``resources["shadow_attack"]``; ``ctx``: the audit's context).

    The reference models already trained for LiRA and RMIA are exactly what Long et al.'s Algorithm 1 needs: models
    of the same training algorithm, each trained on a known half of the audited records. The first
    ``shadow_attack_models`` of them (whole complementary pairs, so every record is seen "in" and "out" equally
    often) give the attack network ``shadow_attack_models * n`` training rows ``(x, onehot(y), bin(q))`` labelled
    in/out, ``x`` the records' encoded features (a table-taking estimator's own inputs are row ids); the network
    then scores the target's outputs.
    """
    st = ctx.cfg.settings
    ref = inputs.reference
    k, _, note = shadow_plan(st.shadow_attack_models, st.shadow_attack_batch)
    k = ref.n_models if k is None else min(int(k), ref.n_models)
    cap = max(2, int(st.shadow_attack_max_rows) // max(1, inputs.n))
    if k > cap:
        k = cap
        capped = (f"{k} of {ref.n_models} reference models used as shadow models: the attack network's training "
                  f"rows are capped at shadow_attack_max_rows = {st.shadow_attack_max_rows:,}")
        note = f"{note}; {capped}" if note else capped
    k = max(2, k - k % 2)  # whole pairs
    t0 = time.perf_counter()
    X_features = np.vstack([ctx.data.X_mem, ctx.data.X_non])
    res = atk.run(dataclasses.replace(inputs, X=X_features, reference=ref.models(slice(0, k))))
    info = {
        "n_shadow_models": int(k),
        "n_reference_models": int(ref.n_models),
        "attack_training_rows": int(k * inputs.n),
        "network": f"{atk.hidden} ReLU units, SGD lr {atk.learning_rate}, batch {atk.batch_size}, {atk.epochs} epochs"
                   + (f", trainer {atk.get_params().get('backend')}" if "backend" in atk.get_params() else ""),
        "uses_record_features": bool(atk.use_features),
        "seconds": round(time.perf_counter() - t0, 3),
        **({"note": note} if note else {}),
    }
    return res, {"shadow_attack": info}
