"""Multilayer perceptron learner (Long et al.'s NN), trained one at a time or K at once.

The network is ``Linear(d, h1) -> act -> ... -> Linear(h_last, C) -> LogSoftmax``
with the NLL criterion (Long et al. 2017, §4.2; spec ``long-dtp.md`` §4.2).

Two training modes:

``mode="faithful"`` (the paper's Torch7 ``nn.StochasticGradient``)
    Per-example SGD, batch size 1, ``lr=0.01``, no momentum, and **one random
    permutation of the training rows drawn before training and reused in every
    epoch**. K models are trained at once by the compiled kernel's per-model
    loop (``_mlp_native``) that
    touches only the non-zero inputs of each row; where it does not apply, by
    the batched torch trainer.
``mode="fast"``
    Mini-batch Adam (``lr=0.001``, PyTorch defaults; or plain mini-batch SGD,
    ``optimizer="sgd"``), a fresh permutation every epoch, the mean NLL over
    each batch's rows (the last batch of an epoch may be shorter). Two
    trainers of the same computation (equal up to float rounding):
    ``backend="compiled"`` (what "auto" takes where it applies: float32 nets
    with one hidden layer of a width it has a copy for; torch is not needed):
    the package's C kernel trains each model's whole run with its parameters
    and Adam moments in cache, models spread over threads (``_mlp_native``);
    ``backend="torch"``: K models batched in eager torch (``_torch_batched``:
    one flat parameter tensor, one fused Adam call for all models,
    preallocated buffers), the reference the compiled kernel is tested
    against. On sparse inputs (one-hot data) the compiled kernel reads and
    scatter-adds only the weight rows of the non-zero inputs
    (``sparse_input``). Not the paper's training; label
    it as such.

Seeds. Model k's initial weights (PyTorch's default ``nn.Linear`` init,
``U(+-1/sqrt(fan_in))``) and its row orders are drawn, in that order, from
``numpy.random.default_rng(seed_k)``. So ``fit_many(X, y, [s], [seed])``
gives bit for bit the model of ``fit(X[s], y[s], random_state=seed)``, and
the same seed gives the same model on one machine.

``order="shared"`` (for leave-one-out families) instead draws one permutation
of the union of all subsets (per epoch in fast mode) from the seed sequence of
all seeds; model k visits those rows in that order, skipping rows outside its
subset. With every subset equal to "a common set minus one row", models then
differ only by their init and the left-out row. In fast mode this also turns
the first layer of all K models into one big matrix product.

Devices: see the ``device`` parameter; the row orders and inits are drawn on the CPU as above, so a GPU trains the
same models up to float rounding of its sums.
"""

from __future__ import annotations

import numbers
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from .._validation import check_choice, check_scalar
from ..exceptions import InvalidInputError, InvalidParameterError, UnsupportedError
from ._base import Capabilities, keep_params, refuse_removed
from ._torch_utils import (MLPBank, MLPModel, TorchLearner, import_torch, init_mlp, pack_params, resolve_device,
                           torch_threads, unpack_params)

__all__ = ["TorchMLP"]


class TorchMLP(TorchLearner):
    """Feed-forward classifier with softmax (or one logistic unit) output and NLL loss (compiled kernel / PyTorch).

    Parameters
    ----------
    hidden : tuple of int, default=(64,)
        Widths of the hidden layers.
    activation : {"tanh", "relu"}, default="tanh"
    mode : {"faithful", "fast"}, default="faithful"
        Per-example SGD with a fixed permutation (Long et al.), or mini-batch
        training (Adam by default, see ``optimizer``).
    epochs : int, default=30
        Passes over the training rows (Long et al.: 100 for Adult, 30 for Purchase).
    lr : float or None, default=None
        Learning rate; None means 0.001 for Adam and 0.01 for SGD (faithful
        mode, or fast mode with ``optimizer="sgd"``).
    batch_size : int, default=32
        Mini-batch size in fast mode (faithful mode always uses 1).
    weight_decay : float, default=0.0
        L2 penalty added to the gradient, as ``torch.optim.SGD`` / ``Adam`` do.
    init : {"torch", "sklearn"}, default="torch"
        Initial weights: PyTorch's ``nn.Linear`` default (``U(+-1/sqrt(n_in))``) or
        scikit-learn's ``MLPClassifier`` (Glorot: ``U(+-sqrt(6 / (n_in + n_out)))``
        for weights and biases, ``n_out = 1`` for a logistic output layer). Shadow and
        reference models should be trained like the target (for a scikit-learn MLP target,
        ``init="sklearn", output="logistic"``; the LiRA comparison is in benchmarks/README.md).
    output : {"softmax", "logistic"}, default="softmax"
        The output layer: ``n_classes`` logits and a softmax, or, for two classes,
        one logistic unit as scikit-learn's ``MLPClassifier`` has for binary targets
        (class 0's logit is held at 0, so ``p_1 = sigmoid(l_1)``; its weights start
        at 0 and get no gradient). "logistic" needs fast mode and two classes.
    optimizer : {None, "adam", "sgd"}, default=None
        Fast mode's optimizer: ``torch.optim.Adam`` (betas 0.9, 0.999, eps
        1e-8; what None means) or ``torch.optim.SGD`` without momentum.
        Faithful mode is per-example SGD: None or "sgd" ("adam" is refused).
    dtype : {"float32", "float64"}, default="float32"
    order : {"independent", "shared"}, default="independent"
        Row orders of the models of one ``fit_many`` call (see module docstring).
    backend : {"auto", "compiled", "torch"}, default="auto"
        Trainer. "compiled": the package's C kernel (``_mlp_native``, built with
        the package) for float32 nets with exactly one hidden layer of width 8,
        16, 24, 32, 40, 48, 56, 64, 80, 96, 128, 192 or 256 (faithful mode:
        without weight decay); ``InvalidParameterError`` saying why where it does not apply.
        "torch": the batched torch trainer, any net. "auto": "compiled" where it
        applies, else "torch"; ``kernels.kernel_status()`` says whether the
        kernel was built. The two train the same algorithm with the
        same inits and row orders; the kernel sums in another order and uses a
        rational tanh (<= 4.4 ulp), so the models agree to float32 rounding, not
        bit for bit. The bank's ``info["backend"]`` records the choice and
        ``info["kernel"]`` what trained ("native" or "torch"). "numba" (the
        removed numba kernels) is refused with a message naming these.
        On one-hot data the kernel drops each one-hot group's most frequent column
        from the rows and adds it back through the bias
        (``_mlp_native.onehot_prepare``, on each model's own rows;
        ``info["onehot_groups"]``: the most groups a model used): the same sums,
        reassociated. Dense rows go to it as they are: each step's first layer
        is two register-blocked matrix products over the step's rows (the sums
        of CSR rows listing every column).
    n_threads : int or None, default=None
        Threads for training (None: every processor this process may run on).
        The compiled kernel trains one model per task; fast mode's torch trainer
        trains one chunk of models per task, each on one torch intra-op thread
        (its per-step ops are small: on 2 cores intra-op threads only add
        synchronisation, see ``benchmarks/README.md``). Results do not depend on it.
    sparse_input : {"auto", True, False}, default="auto"
        Fast mode on the compiled kernel: give it each row's non-zero inputs
        (it gathers their weight rows forward and scatter-adds their gradients
        backward) instead of the dense rows. Same model up to float summation
        order; Adam still updates every weight. "auto": when the rows of the
        training subsets have at most a quarter of their inputs non-zero
        (one-hot data such as Adult: 14 of 104). The torch trainer always takes
        dense matrix products.
    device : {"cpu", "cuda", "cuda:N", "auto"}, default="cpu"
        Where the torch trainer runs ("auto": a CUDA GPU when torch sees one, else the CPU). The compiled
        kernel runs on the CPU only, so a GPU device trains with ``backend="torch"`` ("auto" picks it;
        "compiled" is refused). ``"cuda"`` where CUDA is not available raises
        :class:`~leakaudit.exceptions.UnsupportedError` at fit time. On a GPU the fast mode's models are
        trained in chunks bounded by ``chunk_bytes`` only, one chunk after another (``n_threads`` does not
        apply); the fitted banks are numpy arrays in host memory, queried on the CPU.

    Notes
    -----
    A subset holding a single class trains like any other: the NLL drives the model
    to predict that class. Every model outputs ``n_classes`` probabilities, also for
    classes its subset misses. ``fit_many`` raises ``InvalidInputError`` for empty or
    out-of-range subsets and non-finite ``X`` (checked by the base class).

    Examples
    --------
    >>> import numpy as np
    >>> from leakaudit.learners import TorchMLP
    >>> X = np.random.default_rng(0).normal(size=(40, 3)); y = (X[:, 0] > 0).astype(int)
    >>> bank = TorchMLP(hidden=(8,), epochs=5).fit_many(X, y, [np.arange(20), np.arange(20, 40)], [1, 2])
    >>> bank.predict_proba(X).shape
    (2, 40, 2)
    """

    #: fast mode trains models in chunks whose weights + gradients + Adam moments take about this many
    #: bytes (the same models as one big batch up to float rounding; bounds memory for very large K)
    chunk_bytes: float = 32e6
    #: ... and, on the torch path, whose per-step inputs and activations (the gathered batch and, per
    #: hidden layer, its pre-activations and two gradients) take at most about this many bytes: steps
    #: whose data stay in cache run faster (measurements in benchmarks/README.md)
    step_bytes: float = 4e6
    #: the compiled fast path draws the row orders of this many row visits at a time (int64, 32 MB)
    order_block_rows: int = 4_000_000

    def __init__(
        self,
        *,
        hidden: Sequence[int] = (64,),
        activation: str = "tanh",
        mode: str = "faithful",
        epochs: int = 30,
        lr: float | None = None,
        batch_size: int = 32,
        weight_decay: float = 0.0,
        optimizer: str | None = None,
        dtype: str = "float32",
        order: str = "independent",
        backend: str = "auto",
        n_threads: int | None = None,
        sparse_input: str | bool = "auto",
        init: str = "torch",
        output: str = "softmax",
        device: str = "cpu",
        **removed: Any,
    ):
        refuse_removed("TorchMLP", removed, native_off="torch")
        keep_params(self, locals())

    #: MLPClassifier settings TorchMLP does not implement, with the value it assumes
    _SKLEARN_ASSUMES = {"solver": "adam", "beta_1": 0.9, "beta_2": 0.999, "epsilon": 1e-8, "shuffle": True,
                        "early_stopping": False}

    @classmethod
    def from_sklearn(cls, estimator: Any, *, n_threads: int | None = None) -> "TorchMLP":
        """A fast-mode TorchMLP that trains scikit-learn's ``MLPClassifier`` recipe, many nets at once.

        Same architecture (``hidden_layer_sizes``, tanh or relu), init (``init="sklearn"``), output
        (one logistic unit when the fitted estimator has two ``classes_``: ``output="logistic"``; else a
        softmax), loss, Adam
        with its ``learning_rate_init`` and betas, batch size (``"auto"``: 200, i.e. ``min(200, n)``),
        rows reshuffled every epoch. Epochs: the fitted estimator's ``n_iter_`` (else ``max_iter``).
        Not the same to the letter: no early stopping on the training loss (every net trains those
        epochs), ``alpha`` becomes ``weight_decay = alpha / batch_size`` (scikit-learn's L2 gradient
        for a full batch) and also reaches the biases (scikit-learn leaves them out; ``alpha`` =
        1e-4 makes that a 5e-7 shrink per step), Adam's eps inside the bias correction (torch's
        form), float32 arithmetic. Raises :class:`~leakaudit.exceptions.UnsupportedError` naming
        any setting outside that (another solver or activation, early stopping, other betas).
        """
        from sklearn.neural_network import MLPClassifier

        if not isinstance(estimator, MLPClassifier):
            raise UnsupportedError(f"estimator must be an MLPClassifier; got {type(estimator).__name__}")
        prm = estimator.get_params(deep=False)
        odd = {k: prm.get(k) for k, v in cls._SKLEARN_ASSUMES.items() if k in prm and prm[k] != v}
        if prm["activation"] not in ("tanh", "relu"):
            odd["activation"] = prm["activation"]
        if odd:
            raise UnsupportedError(f"TorchMLP does not implement {odd} (it assumes {cls._SKLEARN_ASSUMES} and "
                                   "activation 'tanh' or 'relu')")
        hidden = prm["hidden_layer_sizes"]
        hidden = (int(hidden),) if isinstance(hidden, numbers.Integral) else tuple(int(h) for h in hidden)
        batch = 200 if prm["batch_size"] == "auto" else int(prm["batch_size"])
        classes = getattr(estimator, "classes_", None)
        binary = classes is not None and len(classes) == 2
        return cls(hidden=hidden, activation=prm["activation"], mode="fast", optimizer="adam",
                   epochs=int(getattr(estimator, "n_iter_", prm["max_iter"])), lr=float(prm["learning_rate_init"]),
                   batch_size=batch, weight_decay=float(prm["alpha"]) / batch, init="sklearn",
                   output="logistic" if binary else "softmax", n_threads=n_threads)

    # -- parameters -----------------------------------------------------------
    def _check_params(self) -> dict:
        hidden = self.hidden
        if isinstance(hidden, numbers.Integral) and not isinstance(hidden, bool):
            hidden = (int(hidden),)
        try:
            hidden = tuple(hidden)
        except TypeError:
            raise InvalidParameterError(f"hidden must be a tuple of positive ints; got {self.hidden!r}") from None
        for h in hidden:
            if isinstance(h, bool) or not isinstance(h, numbers.Integral) or h < 1:
                raise InvalidParameterError(f"hidden must be a tuple of positive ints; got {self.hidden!r}")
        check_choice(self.activation, name="activation", choices=("tanh", "relu"))
        check_choice(self.mode, name="mode", choices=("faithful", "fast"))
        check_scalar(self.epochs, name="epochs", kind=numbers.Integral, min_val=1)
        optimizer = self.optimizer
        if optimizer is not None:
            check_choice(optimizer, name="optimizer", choices=("adam", "sgd"))
        if self.mode == "faithful":
            if optimizer == "adam":
                raise InvalidParameterError(
                    "optimizer='adam' needs mode='fast'; mode='faithful' is per-example SGD (optimizer=None or 'sgd')")
            optimizer = "sgd"
        elif optimizer is None:
            optimizer = "adam"
        lr = self.lr
        if lr is None:
            lr = 0.001 if optimizer == "adam" else 0.01
        check_scalar(lr, name="lr", min_val=0, include_min=False)
        check_scalar(self.batch_size, name="batch_size", kind=numbers.Integral, min_val=1)
        check_scalar(self.weight_decay, name="weight_decay", min_val=0)
        check_choice(self.dtype, name="dtype", choices=("float32", "float64"))
        check_choice(self.order, name="order", choices=("independent", "shared"))
        check_choice(self.init, name="init", choices=("torch", "sklearn"))
        check_choice(self.output, name="output", choices=("softmax", "logistic"))
        if self.output == "logistic" and self.mode != "fast":
            raise InvalidParameterError("output='logistic' needs mode='fast' (faithful mode trains a softmax output)")
        if self.n_threads is not None:
            check_scalar(self.n_threads, name="n_threads", kind=numbers.Integral, min_val=1)
        if not (isinstance(self.sparse_input, bool) or self.sparse_input == "auto"):
            raise InvalidParameterError(f"sparse_input must be 'auto', True or False; got {self.sparse_input!r}")
        if self.backend == "numba":
            raise InvalidParameterError(
                "backend='numba' was removed with the numba kernels: backend='compiled' is the package's C kernel "
                "(one hidden layer, float32; 'auto' takes it where it applies), 'torch' the reference trainer")
        check_choice(self.backend, name="backend", choices=("auto", "compiled", "torch"))
        device = resolve_device(self.device)
        why_not = _compiled_refusal(self, hidden, device)
        if self.backend == "compiled" and why_not is not None:
            raise InvalidParameterError(f"backend='compiled' cannot train this net: {why_not}; use backend='auto' "
                                        "or 'torch'")
        backend = "compiled" if self.backend != "torch" and why_not is None else "torch"
        return dict(hidden=[int(h) for h in hidden], lr=float(lr), backend=backend, dtype=np.dtype(self.dtype),
                    optimizer=optimizer, device=device)

    @property
    def capabilities(self) -> Capabilities:
        """Cached state; with ``order="shared"`` a model depends on the other models of its call (in faithful mode
        through the call's seeds and size only)."""
        shared = None if self.order != "shared" else "block" if self.mode == "faithful" else "call"
        return Capabilities(state=True, shared_order=shared)

    # -- Learner protocol -----------------------------------------------------
    def _fit_many(self, X, y, subsets, seeds, *, n_classes) -> MLPBank:
        p = self._check_params()
        # torch is imported by the torch trainers only: the compiled kernel and the models' predictions run
        # without it
        dtype = p["dtype"]
        sizes = [X.shape[1], *p["hidden"], int(n_classes)]
        if self.output == "logistic" and sizes[-1] != 2:
            raise InvalidInputError(f"output='logistic' is one logistic unit for two classes; got {sizes[-1]} classes")
        shared = self.order == "shared"
        # a shared row order comes from one generator of all seeds: the per-model generators are not needed
        rngs, inits = _seeded_inits(seeds, sizes, dtype, with_rngs=not shared, scheme=self.init,
                                    logistic=self.output == "logistic")
        if shared:
            for k, s in enumerate(subsets):
                if s.size and np.bincount(s, minlength=X.shape[0]).max() > 1:
                    raise InvalidInputError(f"subsets[{k}] holds duplicate rows; order='shared' needs distinct rows")
            union = np.unique(np.concatenate(subsets))
            shared_rng = np.random.default_rng(np.random.SeedSequence([int(s) for s in seeds]))
        info = dict(mode=self.mode, order=self.order, sizes=sizes, dtype=str(dtype), optimizer=p["optimizer"],
                    backend=p["backend"], device=p["device"])
        if self.mode == "faithful":
            if shared:
                perm = union[shared_rng.permutation(union.size)]
                orders = [perm[_membership([s], X.shape[0])[0, perm]] for s in subsets]
            else:
                orders = [s[rng.permutation(s.size)] for s, rng in zip(subsets, rngs)]
            if p["backend"] == "compiled":
                Ws, bs = self._faithful_compiled(X, y, inits, orders, sizes, p)
            else:
                Ws, bs = self._faithful_torch(X, y, inits, orders, subsets, sizes, p, perm if shared else None)
            info["kernel"] = p.get("kernel", "torch")
        else:
            info["sparse_input"] = sparse = self._use_sparse(X, subsets)
            fast = self._fast_compiled if p["backend"] == "compiled" else self._fast_torch
            Ws, bs = fast(X, y, inits, subsets, rngs, p, (union, shared_rng) if shared else None, sparse)
            info["kernel"] = p.get("kernel", "torch")
            if "onehot_groups" in p:
                info["onehot_groups"] = p["onehot_groups"]
        return MLPBank(Ws, bs, self.activation, info=info)

    # -- SupportsState: the engine caches a bank's weights as arrays ----------------------------------------------
    def parameter_codec(self, X: Any = None, fitted: Any = None) -> tuple:
        """Weights and biases as one vector (:func:`pack_params` order); ``rebuild`` takes the layer sizes from the
        models ``extract`` has seen."""
        seen: dict = {}

        def extract(m):
            seen.setdefault("sizes", [m.weights_[0].shape[0]] + [W.shape[1] for W in m.weights_])
            seen.setdefault("activation", m.activation)
            seen.setdefault("dtype", m.weights_[0].dtype)
            return pack_params(m.weights_, m.biases_)

        def rebuild(v):
            Ws, bs = unpack_params(np.asarray(v, dtype=seen["dtype"])[None, :], seen["sizes"])
            return MLPModel([W[0] for W in Ws], [b[0] for b in bs], seen["activation"])

        return extract, rebuild

    def get_state(self, bank: MLPBank) -> dict[str, np.ndarray]:
        """Every layer's stacked weights ``W{l}`` (K, n_in, n_out) and biases ``b{l}`` (K, n_out), and whether the
        bank is queried through its sparse first layer."""
        state = {f"W{i}": np.asarray(W) for i, W in enumerate(bank.weights_)}
        state.update({f"b{i}": np.asarray(b) for i, b in enumerate(bank.biases_)})
        state["sparse_input"] = np.asarray(bool(bank.info.get("sparse_input")))
        return state

    def from_state(self, state: Mapping[str, np.ndarray]) -> MLPBank:
        """The bank :meth:`get_state` described (the same outputs, bit for bit)."""
        n_layers = sum(1 for name in state if name.startswith("W"))
        return MLPBank([state[f"W{i}"] for i in range(n_layers)], [state[f"b{i}"] for i in range(n_layers)],
                       self.activation, info={"sparse_input": bool(state["sparse_input"])})

    # -- trainers ---------------------------------------------------------------
    def _faithful_compiled(self, X, y, inits, orders, sizes, p):
        """Per-example SGD by the compiled kernel (one hidden layer, float32, no weight decay): model by model over
        threads, reading and updating only the weight rows of each row's non-zero inputs (exact: a zero input
        adds nothing forward and gets a zero gradient)."""
        from . import _mlp_native

        Xd = X.astype(np.float32)
        indptr, indices, values = _mlp_native.csr_rows(Xd, True)
        order = np.concatenate(orders).astype(np.int64)
        order_ptr = np.concatenate([[0], np.cumsum([o.size for o in orders])]).astype(np.int64)
        # W2 transposed, so that the kernel's loops over the H hidden units are contiguous
        W1 = np.stack([w[0] for w, _ in inits])
        b1 = np.stack([b[0] for _, b in inits])
        W2T = np.ascontiguousarray(np.stack([w[1] for w, _ in inits]).transpose(0, 2, 1))
        b2 = np.stack([b[1] for _, b in inits])
        p["kernel"] = "native"
        _mlp_native.train_faithful(W1, b1, W2T, b2, indptr, indices, np.ascontiguousarray(values),
                                   y.astype(np.int64), order, order_ptr, int(self.epochs), float(np.float32(p["lr"])),
                                   0 if self.activation == "tanh" else 1, self.n_threads)
        return [W1, np.ascontiguousarray(W2T.transpose(0, 2, 1))], [b1, b2]

    def _stack(self, inits, torch, dtype, device):
        L = len(inits[0][0])
        Ws = [torch.from_numpy(np.stack([w[l] for w, _ in inits]).astype(dtype)).to(device) for l in range(L)]
        bs = [torch.from_numpy(np.stack([b[l] for _, b in inits]).astype(dtype)).to(device) for l in range(L)]
        return Ws, bs

    def _faithful_torch(self, X, y, inits, orders, subsets, sizes, p, shared_perm):
        from ._torch_batched import BatchedMLPTrainer

        torch = import_torch()
        dtype, device = p["dtype"], p["device"]
        Ws, bs = self._stack(inits, torch, dtype, device)
        Xt, yt = torch.from_numpy(X.astype(dtype)).to(device), torch.from_numpy(y.astype(np.int64)).to(device)
        tr = BatchedMLPTrainer(Ws, bs, Xt, yt, activation=self.activation, optimizer="sgd", lr=p["lr"],
                               weight_decay=self.weight_decay, shared=shared_perm is not None)
        K = len(orders)
        if shared_perm is not None:
            member = _membership(subsets, X.shape[0])  # (K, n) bool
            rows = torch.from_numpy(shared_perm.astype(np.int64))
            mem = torch.from_numpy(member[:, shared_perm])

            def steps():
                for _ in range(self.epochs):
                    for t in range(rows.shape[0]):
                        yield ("shared", rows[t : t + 1], mem[:, t : t + 1])
        else:
            T = max(o.size for o in orders)
            idx = np.full((K, T), -1, dtype=np.int64)
            for k, o in enumerate(orders):
                idx[k, : o.size] = o
            idx_t = torch.from_numpy(idx)

            def steps():
                for _ in range(self.epochs):
                    for t in range(T):
                        yield ("gathered", idx_t[:, t : t + 1])

        with torch_threads(self.n_threads or 1):
            tr.run(steps())
        return tr.weights()

    def _use_sparse(self, X, subsets) -> bool:
        """Whether fast mode's compiled kernel takes the rows as lists of their non-zero inputs (``sparse_input``).

        "auto" looks only at the rows of the subsets, so ``fit(X[s])`` and
        ``fit_many(X, [s])`` decide alike (and give the same model bit for bit).
        """
        if self.sparse_input is False:
            return False
        if self.sparse_input is True:
            return True
        used = np.zeros(X.shape[0], dtype=bool)
        for s in subsets:
            used[s] = True
        return 4 * int(np.count_nonzero(X[used], axis=1).max()) <= X.shape[1]

    def _fast_torch(self, X, y, inits, subsets, rngs, p, shared, sparse):
        from ._threads import for_each_model
        from ._torch_batched import BatchedMLPTrainer

        torch = import_torch()
        dtype, device = p["dtype"], p["device"]
        B = int(self.batch_size)
        Xt, yt = torch.from_numpy(X.astype(dtype)).to(device), torch.from_numpy(y.astype(np.int64)).to(device)
        K = len(subsets)
        if shared is not None:  # the shared permutations of every epoch, drawn once for all chunks
            union, shared_rng = shared
            perms = [torch.from_numpy(union[shared_rng.permutation(union.size)].astype(np.int64))
                     for _ in range(self.epochs)]
        # Models are independent, so train them in chunks of bounded memory (weights, gradients, Adam state)
        # and cache-sized steps (the same models up to float rounding: batched products may round differently).
        n_params = sum(W.size + b.size for W, b in zip(*inits[0]))
        step = B * (X.shape[1] + 1 + 3 * sum(p["hidden"])) * dtype.itemsize
        chunk = max(1, min(K, int(self.chunk_bytes // (4 * n_params * dtype.itemsize))))
        if device == "cpu":  # steps whose data stay in the CPU's cache (a GPU has no use for this bound)
            chunk = max(1, min(chunk, int(self.step_bytes // step)))
        bounds = [(c0, min(K, c0 + chunk)) for c0 in range(0, K, chunk)]
        out: list = [None] * len(bounds)

        def train(c):
            ks = range(*bounds[c])
            Ws, bs = self._stack([inits[k] for k in ks], torch, dtype, device)
            tr = BatchedMLPTrainer(Ws, bs, Xt, yt, activation=self.activation, optimizer=p["optimizer"], lr=p["lr"],
                                   weight_decay=self.weight_decay, shared=shared is not None,
                                   logistic=self.output == "logistic")
            if shared is not None:
                member = torch.from_numpy(_membership([subsets[k] for k in ks], X.shape[0]))

                def steps():
                    for perm in perms:
                        for s in range(0, perm.shape[0], B):
                            rows = perm[s : s + B]
                            yield ("shared", rows, member[:, rows])
            else:
                nmax = max(subsets[k].size for k in ks)
                S = -(-nmax // B)

                def steps():
                    for _ in range(self.epochs):
                        idx = np.full((len(ks), S * B), -1, dtype=np.int64)
                        for i, k in enumerate(ks):
                            idx[i, : subsets[k].size] = subsets[k][rngs[k].permutation(subsets[k].size)]
                        idx_t = torch.from_numpy(idx.reshape(len(ks), S, B))
                        for j in range(S):
                            yield ("gathered", idx_t[:, j])

            tr.run(steps())
            out[c] = tr.weights()

        # chunks are independent (own weights, buffers and generators): n_threads of them at once, each on one
        # torch thread (intra-op threads only add synchronisation to these small ops); same models for any count.
        # On a GPU one chunk after another: each step's kernels already fill it
        with torch_threads(1):
            for_each_model(train, len(bounds), self.n_threads if device == "cpu" else 1)
        L = len(out[0][0])
        return ([np.concatenate([w[l] for w, _ in out]) for l in range(L)],
                [np.concatenate([b[l] for _, b in out]) for l in range(L)])

    def _fast_compiled(self, X, y, inits, subsets, rngs, p, shared, sparse):
        """Fast mode by the compiled kernel (``_mlp_native``): the torch path's computation, model by model.

        The same inits and the same row orders as :meth:`_fast_torch` (model k's permutations from
        its own Generator, epoch after epoch; or the shared permutations of the union, drawn per
        epoch from the shared Generator), drawn for blocks of epochs (``order_block_rows``); the
        models' parameters and Adam state persist between the kernel calls.
        """
        import copy

        from . import _mlp_native
        from ._mlp_native import TANH_COEFS, aligned_rows, csr_rows, n_params_1h, pack_1h, unpack_1h

        dtype = p["dtype"]
        B = int(self.batch_size)
        K = len(subsets)
        n, d = X.shape
        H = int(inits[0][0][0].shape[1])
        C = int(inits[0][0][1].shape[1])
        P = n_params_1h(d, H, C)
        # dense rows as they are (two blocked matrix products a step), or as CSR rows listing every column
        xdense = np.ascontiguousarray(X, dtype=dtype) if not sparse and _mlp_native.DENSE else None
        if xdense is None:
            indptr, indices, values = csr_rows(X.astype(dtype), sparse)
        else:
            indptr = indices = values = None
        y64 = y.astype(np.int64)
        # lr, weight decay, Adam's betas and eps, 1 for a logistic output (class 0's logit gradient held at 0)
        hyper = np.array([p["lr"], self.weight_decay, 0.9, 0.999, 1e-8, float(self.output == "logistic")],
                         dtype=np.float64)
        adam = p["optimizer"] == "adam"
        act = 0 if self.activation == "tanh" else 1
        coefs = TANH_COEFS.astype(dtype)
        epochs = int(self.epochs)
        p["kernel"] = "native"
        # each model's task finds the one-hot groups of its own (sparse) rows
        onehot = sparse and _mlp_native.ONEHOT
        groups_used = np.zeros(K, dtype=np.int64)
        # parameters + two moments per model (the gradient is one buffer per running model)
        chunk = max(1, min(K, int(self.chunk_bytes // (3 * P * dtype.itemsize))))
        out = np.empty((K, P), dtype=dtype)  # trained parameters, kernel layout
        for c0 in range(0, K, chunk):
            ks = range(c0, min(K, c0 + chunk))
            Kc = len(ks)
            params = pack_1h([np.stack([inits[k][0][l] for k in ks]) for l in range(2)],
                             [np.stack([inits[k][1][l] for k in ks]) for l in range(2)], dtype)
            mom1 = aligned_rows(Kc, P, dtype)
            mom2 = aligned_rows(Kc, P, dtype)
            steps = np.zeros(Kc, dtype=np.int64)
            if shared is not None:
                union, shared_rng = shared
                srng = copy.deepcopy(shared_rng)  # every chunk replays the same shared permutations
                member = _membership([subsets[k] for k in ks], n).view(np.uint8)
                length = np.full(Kc, union.size, dtype=np.int64)
                per_epoch = union.size
            else:
                member = np.zeros((1, 1), dtype=np.uint8)
                length = np.array([subsets[k].size for k in ks], dtype=np.int64)
                per_epoch = int(length.sum())
            block = max(1, min(epochs, int(self.order_block_rows) // max(1, per_epoch)))
            Bk = min(B, int(length.max()))  # same batches; the kernel's (B, H) buffers stay small
            # the orders are positions in a row map (the kernel looks the rows up): model k's own subset,
            # or the union for a shared order; one buffer for every block of epochs (no page faults)
            if shared is not None:
                rowmap = union.astype(np.int64)
                rm_start = np.zeros(Kc, dtype=np.int64)
            else:
                rowmap = np.concatenate([subsets[k] for k in ks]).astype(np.int64)
                rm_start = np.concatenate([[0], np.cumsum(length)[:-1]]).astype(np.int64)
            # the kernel draws a model's orders (independent ones) in the task that trains it
            fused = shared is None
            if fused:
                block = max(1, min(epochs, int(self.order_block_rows) // max(1, int(length.max()))))
            order_buf = np.empty(0 if fused else per_epoch * block, dtype=np.int64)
            for e0 in range(0, epochs, block):
                nb = min(block, epochs - e0)
                if fused:
                    order = start = order_buf
                elif shared is not None:
                    order = order_buf[: union.size * nb]
                    _draw_orders(order, np.zeros(1, np.int64), np.array([union.size]), nb, [srng], 1)
                    start = np.zeros(Kc, dtype=np.int64)
                else:  # model k's permutations, epoch after epoch, from its own Generator (as _fast_torch draws)
                    start = np.concatenate([[0], np.cumsum(length * nb)[:-1]]).astype(np.int64)
                    order = order_buf[: int(length.sum()) * nb]
                    _draw_orders(order, start, length, nb, [rngs[k] for k in ks], self.n_threads)
                groups_used[c0 : c0 + Kc] = _mlp_native.train_block(
                    params, mom1, mom2, steps, indptr, indices, values, y64, order, start, rowmap, rm_start, length,
                    member, shared is not None, nb, Bk, d, H, C, hyper, adam, act, coefs, self.n_threads,
                    rngs=[rngs[k] for k in ks] if fused else None, onehot=onehot, x=xdense)
            out[c0 : c0 + Kc] = params[:, :P]
        p["onehot_groups"] = int(groups_used.max(initial=0))  # the most any model used (a bank-wide figure)
        return unpack_1h(out, d, H, C)


def _compiled_refusal(learner: TorchMLP, hidden, device: str = "cpu") -> str | None:
    """Why the compiled kernel cannot train ``learner``'s nets on this machine (on resolved ``device``), or None
    when it can."""
    from . import _mlp_native

    if device != "cpu":
        return f"it is CPU code; device={learner.device!r} trains on the GPU with the torch trainer"
    if len(hidden) != 1:
        return f"it trains nets with exactly one hidden layer; got hidden={tuple(hidden)!r}"
    if learner.dtype != "float32":
        return f"it trains float32 nets; got dtype={learner.dtype!r}"
    if learner.mode == "faithful" and learner.weight_decay != 0:
        return "its per-example SGD (faithful mode) has no weight decay"
    if _mlp_native.library() is None:
        return f"the compiled kernel is not available ({_mlp_native.KERNEL.reason})"
    if not _mlp_native.supports(int(hidden[0]), np.float32):
        return f"it has no copy for {int(hidden[0])} hidden units (widths {_mlp_native.WIDTHS})"
    return None


def _draw_orders(order, start, length, n_epochs, rngs, n_threads) -> None:
    """Fill ``order`` with each model's ``n_epochs`` permutations of ``range(length[k])``, in place.

    Model k's epoch e goes to ``order[start[k] + e * length[k] :][: length[k]]``, drawn by ``rngs[k]``
    exactly as ``rngs[k].permutation(length[k])`` would (numpy's ``permutation`` of an int is
    ``shuffle(arange(n))``). numpy's ``shuffle`` releases the GIL, so the models are spread over
    ``n_threads`` threads (each Generator is used by one thread only: same result for any count). The
    native library draws a model's epochs in one call, the same numbers (``_mlp_native.permutations``).
    """
    from ._mlp_native import permutations
    from ._threads import for_each_model

    def one(k):
        m = int(length[k])
        if permutations(rngs[k], order[start[k] : start[k] + n_epochs * m], n_epochs):
            return
        ar = np.arange(m, dtype=np.int64)
        for e in range(n_epochs):
            v = order[start[k] + e * m : start[k] + (e + 1) * m]
            v[:] = ar
            rngs[k].shuffle(v)

    for_each_model(one, len(rngs), n_threads)


def _seeded_inits(seeds, sizes, dtype, *, with_rngs: bool = True, scheme: str = "torch", logistic: bool = False):
    """Per-model generators (None unless ``with_rngs``) and initial weights, drawn once per distinct seed.

    Models with equal seeds (the paired seed policy gives all of PDTP's models one seed) get the
    same initial weights and generators in the same state (a copy each), as separate draws would give.
    """
    rngs, inits, done = [], [], {}
    for s in seeds:
        s = int(s)
        if s not in done:
            rng = np.random.default_rng(s)
            done[s] = (init_mlp(rng, sizes, dtype, scheme=scheme, logistic=logistic), rng.bit_generator.state)
        elif with_rngs:
            rng = np.random.default_rng()
            rng.bit_generator.state = done[s][1]
        rngs.append(rng if with_rngs else None)
        inits.append(done[s][0])
    return rngs, inits


def _membership(subsets, n: int) -> np.ndarray:
    """Boolean masks (K, n) of the rows in each subset."""
    member = np.zeros((len(subsets), n), dtype=bool)
    for k, s in enumerate(subsets):
        member[k, s] = True
    return member
