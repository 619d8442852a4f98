"""Shared pieces of the torch learners: lazy import, init, layouts, the oracle, banks.

* :func:`import_torch` imports torch on first use (leakaudit imports without it).
* :func:`check_device` / :func:`resolve_device` validate a learner's ``device``
  ("cpu", "cuda", "cuda:N" or "auto") and say which device it means on this machine.
* :func:`init_mlp` draws PyTorch's default ``nn.Linear`` init,
  ``U(-1/sqrt(fan_in), 1/sqrt(fan_in))`` for weights and biases, from a numpy
  Generator, so one seed gives the same model whichever trainer runs.
* :func:`naive_train_mlp` is the per-model ``nn.Module`` + autograd +
  ``torch.optim`` trainer: the test oracle of every batched path.
* :class:`MLPBank` / :class:`MLPModel` hold stacked weights and predict for all
  K models with batched matmuls.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import numpy as np

from .._extras import require
from .._validation import check_matrix
from ..exceptions import InvalidInputError, InvalidParameterError, UnsupportedError
from ._base import BankLearner, ModelBank, ProbaModel

__all__ = [
    "import_torch",
    "DEVICE_CHOICES",
    "check_device",
    "resolve_device",
    "device_kind",
    "to_numpy",
    "to_tensor",
    "init_mlp",
    "mlp_layout",
    "pack_params",
    "unpack_params",
    "naive_train_mlp",
    "MLPModel",
    "MLPBank",
    "softmax",
    "check_predict_X",
]


def is_torch_module(obj) -> bool:
    """Whether ``obj`` is a ``torch.nn.Module``, without importing torch (an object cannot be one unless torch
    is imported already)."""
    import sys

    torch = sys.modules.get("torch")
    return torch is not None and isinstance(obj, torch.nn.Module)


def import_torch():
    """Import torch, or raise our error saying how to install it."""
    return require("torch", "the torch learners")


#: the values a ``device`` parameter takes, in words (for messages and docstrings)
DEVICE_CHOICES = "'cpu', 'cuda', 'cuda:N' or 'auto'"
_DEVICE = re.compile(r"cpu|auto|cuda(:(0|[1-9][0-9]*))?")


def check_device(device: Any, *, name: str = "device") -> str:
    """``device`` if it is one of :data:`DEVICE_CHOICES`, without asking whether this machine has it.

    Raises
    ------
    InvalidParameterError
        Any other value, in one line naming ``name``.
    """
    if not isinstance(device, str) or _DEVICE.fullmatch(device) is None:
        raise InvalidParameterError(f"{name} must be {DEVICE_CHOICES}; got {device!r}")
    return device


class TorchLearner(BankLearner):
    """A learner whose nets train with torch on its ``device`` (TorchMLP, TorchCNN, TorchModuleLearner)."""

    def validate_params(self) -> None:
        """The form of ``device``; whether this machine has it, and the other parameters, are checked when training
        starts (a Ray driver need not see its cluster's GPUs)."""
        check_device(self.device)


def resolve_device(device: Any, *, name: str = "device") -> str:
    """The device ``device`` means on this machine: ``"cpu"``, ``"cuda"`` or ``"cuda:N"``.

    ``"auto"`` is ``"cuda"`` (torch's current CUDA device) when torch sees a CUDA device, else ``"cpu"``.
    ``"cpu"`` is returned without importing torch (the compiled kernels train without it).

    Raises
    ------
    InvalidParameterError
        A value outside :data:`DEVICE_CHOICES`, or ``"cuda:N"`` past the last CUDA device.
    UnsupportedError
        ``"cuda"`` or ``"cuda:N"`` where torch sees no CUDA device (a CPU-only torch, or no GPU).
    """
    check_device(device, name=name)
    if device == "cpu":
        return "cpu"
    torch = import_torch()
    available = bool(torch.cuda.is_available())
    if device == "auto":
        return "cuda" if available else "cpu"
    flag = name.startswith("-")  # a command-line flag: "--device cuda", not "device='cuda'"
    said = f"{name} {device}" if flag else f"{name}={device!r}"
    if not available:
        build = "a CPU-only build" if getattr(torch.version, "cuda", None) is None else "no CUDA device is visible"
        instead = f"{name} cpu or auto" if flag else f"{name}='cpu' or 'auto'"
        raise UnsupportedError(f"{said} but CUDA is not available here (torch {torch.__version__}: {build}); "
                               f"use {instead}")
    if ":" in device:
        count = int(torch.cuda.device_count())
        if int(device.split(":")[1]) >= count:
            raise InvalidParameterError(f"{said} but this machine has {count} CUDA device"
                                        f"{'s' if count != 1 else ''} (cuda:0 to cuda:{count - 1})")
    return device


def device_kind(device: Any) -> str:
    """``"cpu"`` or ``"cuda"``: the kind of device ``device`` names (what decides the arithmetic; which of several
    CUDA devices does not). Only ``"auto"`` asks this machine; ``"cuda"`` is "cuda" even where CUDA is absent (a
    Ray driver without a GPU names the work of its GPU workers)."""
    check_device(device)
    return resolve_device(device) if device == "auto" else device.split(":")[0]


def to_tensor(a, dtype):
    """``a`` as a torch tensor of ``dtype``, sharing its memory where torch can: the audit hands its data
    around read-only, and torch cannot share a read-only array (it warns and shares it anyway), so such an
    array is copied first."""
    torch = import_torch()
    a = np.asarray(a)
    if not a.flags.writeable:
        a = a.copy()
    return torch.as_tensor(a, dtype=dtype)


def to_numpy(t) -> np.ndarray:
    """A tensor's values as a numpy array, copied to host memory from any device (a CPU tensor's own memory,
    as ``Tensor.numpy`` gives it)."""
    return t.detach().cpu().numpy()


class torch_threads:
    """Context manager: run torch with ``n`` intra-op threads, then restore."""

    def __init__(self, n: int | None):
        self.n = n

    def __enter__(self):
        torch = import_torch()
        self.old = torch.get_num_threads()
        if self.n is not None:
            torch.set_num_threads(int(self.n))
        return self

    def __exit__(self, *exc):
        import_torch().set_num_threads(self.old)
        return False


# ---------------------------------------------------------------------------
# layout and init
# ---------------------------------------------------------------------------
def mlp_layout(sizes: Sequence[int]) -> tuple[np.ndarray, np.ndarray, int]:
    """Offsets of each layer's weight (n_in, n_out) and bias in one flat vector.

    Returns ``w_off (L,), b_off (L,), n_params``.
    """
    w_off, b_off, pos = [], [], 0
    for nin, nout in zip(sizes[:-1], sizes[1:]):
        w_off.append(pos)
        pos += nin * nout
        b_off.append(pos)
        pos += nout
    return np.asarray(w_off, np.int64), np.asarray(b_off, np.int64), pos


def init_mlp(rng: np.random.Generator, sizes: Sequence[int], dtype, *, scheme: str = "torch",
             logistic: bool = False) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """Initial weights of every layer, (n_in, n_out) each; draws in the order W_0, b_0, W_1, b_1, ...

    * ``scheme="torch"``: PyTorch's default ``nn.Linear`` init, weight and bias
      ``U(-1/sqrt(n_in), 1/sqrt(n_in))``, the weight drawn in PyTorch's (n_out, n_in)
      order and returned transposed.
    * ``scheme="sklearn"``: scikit-learn's ``MLPClassifier._init_coef`` (tanh/relu
      nets): weight (drawn as (n_in, n_out)) and bias ``U(+-sqrt(6 / (n_in + n_out)))``.

    ``logistic``: the last layer is one logistic unit for two classes: the unit is
    drawn with n_out = 1 and becomes column 1; column 0 (class 0's logit) is 0.
    """
    Ws, bs = [], []
    L = len(sizes) - 1
    for l, (nin, nout) in enumerate(zip(sizes[:-1], sizes[1:])):
        unit = logistic and l == L - 1
        n = 1 if unit else nout
        if scheme == "sklearn":
            bound = np.sqrt(6.0 / (nin + n))
            W, b = rng.uniform(-bound, bound, size=(nin, n)), rng.uniform(-bound, bound, size=n)
        else:
            bound = 1.0 / np.sqrt(nin)
            W, b = rng.uniform(-bound, bound, size=(n, nin)).T, rng.uniform(-bound, bound, size=n)
        if unit:  # class 0's logit held at 0: p_1 = sigmoid(l_1)
            W, b = np.hstack([np.zeros((nin, 1)), W]), np.r_[0.0, b]
        Ws.append(np.ascontiguousarray(W.astype(dtype)))
        bs.append(b.astype(dtype))
    return Ws, bs


def pack_params(Ws: list[np.ndarray], bs: list[np.ndarray]) -> np.ndarray:
    """Flatten one model's (W_0, b_0, W_1, ...) into the kernel's flat layout."""
    return np.concatenate([part for W, b in zip(Ws, bs) for part in (W.ravel(), b.ravel())])


def unpack_params(flat: np.ndarray, sizes: Sequence[int]) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """Inverse of :func:`pack_params` on (K, P) rows: lists of (K, n_in, n_out) and (K, n_out)."""
    w_off, b_off, _ = mlp_layout(sizes)
    K = flat.shape[0]
    Ws, bs = [], []
    for l, (nin, nout) in enumerate(zip(sizes[:-1], sizes[1:])):
        Ws.append(np.ascontiguousarray(flat[:, w_off[l] : w_off[l] + nin * nout].reshape(K, nin, nout)))
        bs.append(np.ascontiguousarray(flat[:, b_off[l] : b_off[l] + nout]))
    return Ws, bs


# ---------------------------------------------------------------------------
# the oracle: one model, nn.Module + autograd + torch.optim
# ---------------------------------------------------------------------------
def build_module(Ws: list[np.ndarray], bs: list[np.ndarray], activation: str, dtype: str, device: str = "cpu"):
    """``nn.Sequential`` of Linear/activation layers with the given weights (n_in, n_out), on ``device``."""
    torch = import_torch()
    nn = torch.nn
    tdtype = getattr(torch, dtype)
    layers: list[Any] = []
    for l, (W, b) in enumerate(zip(Ws, bs)):
        lin = nn.Linear(W.shape[0], W.shape[1], dtype=tdtype, device=device)
        with torch.no_grad():
            lin.weight.copy_(torch.from_numpy(np.ascontiguousarray(W.T)))
            lin.bias.copy_(torch.from_numpy(np.ascontiguousarray(b)))
        layers.append(lin)
        if l < len(Ws) - 1:
            layers.append(nn.Tanh() if activation == "tanh" else nn.ReLU())
    layers.append(nn.LogSoftmax(dim=1))
    return nn.Sequential(*layers)


def naive_train_mlp(
    X: np.ndarray,
    y: np.ndarray,
    Ws: list[np.ndarray],
    bs: list[np.ndarray],
    batches: Sequence[np.ndarray],
    *,
    activation: str = "tanh",
    optimizer: str = "sgd",
    lr: float = 0.01,
    weight_decay: float = 0.0,
    betas: tuple[float, float] = (0.9, 0.999),
    eps: float = 1e-8,
    dtype: str = "float32",
    device: str = "cpu",
) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """Train one MLP the plain way: the reference the batched trainers must match.

    Parameters
    ----------
    X : ndarray of shape (n, d); y : ndarray of shape (n,)
    Ws, bs : initial weights (n_in, n_out) and biases (n_out,) per layer
    batches : sequence of index arrays, one optimizer step each, in order
        (per-example SGD: arrays of one index).
    optimizer : {"sgd", "adam"}
        ``torch.optim.SGD`` (no momentum) or ``torch.optim.Adam`` (L2 ``weight_decay``).
    device : str, default="cpu"
        A resolved device (:func:`resolve_device`) the net and the data are put on.

    Returns
    -------
    Ws, bs : the trained weights in the same layout.
    """
    torch = import_torch()
    tdtype = getattr(torch, dtype)
    net = build_module(Ws, bs, activation, dtype, device)
    Xt = to_tensor(X, tdtype).to(device)
    yt = to_tensor(np.asarray(y, dtype=np.int64), torch.int64).to(device)
    if optimizer == "sgd":
        opt = torch.optim.SGD(net.parameters(), lr=lr, weight_decay=weight_decay)
    else:
        opt = torch.optim.Adam(net.parameters(), lr=lr, betas=betas, eps=eps, weight_decay=weight_decay)
    loss_fn = torch.nn.NLLLoss()
    for idx in batches:
        it = torch.from_numpy(np.asarray(idx, dtype=np.int64)).to(device)
        opt.zero_grad()
        loss = loss_fn(net(Xt[it]), yt[it])
        loss.backward()
        opt.step()
    lins = [m for m in net if isinstance(m, torch.nn.Linear)]
    return (
        [to_numpy(m.weight).T.copy() for m in lins],
        [to_numpy(m.bias).copy() for m in lins],
    )


# ---------------------------------------------------------------------------
# fitted models
# ---------------------------------------------------------------------------
def softmax(logits: np.ndarray) -> np.ndarray:
    """Row softmax over the last axis, in float64.

    Up to 7 classes the max and the sum go class by class over whole columns (numpy reduces a short last
    axis element by element, which is slower): the same numbers, as numpy adds fewer than 8 terms left to right.
    """
    C = logits.shape[-1]
    if not 2 <= C <= 7:
        z = logits.astype(np.float64, copy=False)
        z = z - z.max(axis=-1, keepdims=True)
        np.exp(z, out=z)
        z /= z.sum(axis=-1, keepdims=True)
        return z
    z = logits.astype(np.float64, copy=True)
    m = z[..., 0].copy()
    for c in range(1, C):
        np.maximum(m, z[..., c], out=m)
    z -= m[..., None]
    np.exp(z, out=z)
    s = z[..., 0].copy()
    for c in range(1, C):
        s += z[..., c]
    z /= s[..., None]
    return z


def check_predict_X(X: Any, n_features: int, *, name: str = "X") -> np.ndarray:
    X = check_matrix(X, name=name, allow_empty=True)
    if X.shape[1] != n_features:
        raise InvalidInputError(f"{name} has {X.shape[1]} features; the model was trained on {n_features}")
    return X


def _act(h: np.ndarray, activation: str) -> np.ndarray:
    if activation == "tanh":
        return np.tanh(h, out=h)
    return np.maximum(h, 0, out=h)


def stacked_logits(weights, biases, activation: str, X: np.ndarray, sparse_first: bool) -> np.ndarray:
    """Logits (K, n, C) of K stacked MLPs (weights[l]: (K, n_in, n_out), biases[l]: (K, n_out)) on X (n, d).

    Every layer sums each output over its inputs in a fixed order (the compiled kernel ``_mlp_native``, not
    BLAS, whose kernel and blocking depend on the matrices' sizes: on AVX-512 OpenBLAS a row's float32 logits moved by
    an ulp with the number of rows queried), so a row's outputs do not depend on the rows queried with it or on the
    chunking: PDTP compares one model's outputs on one record with another's on many. ``sparse_first``: the first
    layer from the non-zero inputs listed as CSR rows, as nets trained with a sparse first layer were; the same sums
    as the dense copies, which skip zero inputs too (vectorised copies for the training widths and for fewer than 8
    outputs, plain loops for other widths and float64). Without the compiled kernel numpy's products (BLAS)
    compute them.
    """
    from . import _mlp_native

    dt = weights[0].dtype
    Xd = np.ascontiguousarray(X, dtype=dt)
    K, n = weights[0].shape[0], Xd.shape[0]
    out = np.empty((K, n, weights[-1].shape[2]), dtype=dt)
    if n == 0 or K == 0:
        return out
    if _mlp_native.library() is None:
        h = Xd[None]
        for l, (W, b) in enumerate(zip(weights, biases)):
            h = np.matmul(h, W) + b[:, None, :]
            if l < len(weights) - 1:
                h = _act(h, activation)
        return h
    widest = max(W.shape[2] for W in weights)
    chunk = max(1, int(16_000_000 // max(1, n * widest)))  # models per pass: hidden activations <= ~64 MB
    sparse = sparse_first and _mlp_native.supports(weights[0].shape[2], dt)
    csr = _mlp_native.csr_rows(Xd, True) if sparse else None
    for s in range(0, K, chunk):
        e = min(K, s + chunk)
        for l, (W, b) in enumerate(zip(weights, biases)):
            Wc, bc = np.ascontiguousarray(W[s:e]), np.ascontiguousarray(b[s:e])
            h_out = out[s:e] if l == len(weights) - 1 else np.empty((e - s, n, W.shape[2]), dtype=dt)
            x = Xd[None] if l == 0 else h
            if l == 0 and csr is not None:  # a row's sums in registers
                _mlp_native.first_layer(*csr, Wc, bc, h_out)
            elif _mlp_native.supports_dense(W.shape[2], dt):
                _mlp_native.dense_layer(x, Wc, bc, h_out)
            else:
                _mlp_native.layer(x, Wc, bc, h_out)
            h = h_out
            if l < len(weights) - 1:
                h = _act(h, activation)
    return out


class MLPModel(ProbaModel):
    """One fitted MLP: ``predict_proba(X) -> (n, n_classes)``.

    Attributes
    ----------
    weights_ : list of ndarray (n_in, n_out); biases_ : list of ndarray (n_out,)
    activation : str; n_classes : int
    sparse_input : bool, whether the first layer is computed from the non-zero inputs only (as the net was
        trained; the bank it came from says so): the same outputs as its bank gives for it
    """

    def __init__(self, weights, biases, activation: str, sparse_input: bool = False):
        self.weights_ = list(weights)
        self.biases_ = list(biases)
        self.activation = activation
        self.sparse_input = bool(sparse_input)
        self.n_features_in_ = self.weights_[0].shape[0]
        self.n_classes = self.weights_[-1].shape[1]
        self.classes_ = np.arange(self.n_classes)

    def decision_function(self, X: Any) -> np.ndarray:
        """Logits, shape (n, n_classes), in the model's dtype (a row's logits do not depend on the other rows)."""
        X = check_predict_X(X, self.n_features_in_)
        return stacked_logits([W[None] for W in self.weights_], [b[None] for b in self.biases_], self.activation,
                              X, self.sparse_input)[0]

    def predict_proba(self, X: Any) -> np.ndarray:
        """Class probabilities, shape (n, n_classes), float64."""
        return softmax(self.decision_function(X))

    def to_torch(self):
        """The model as an ``nn.Sequential`` (ending in LogSoftmax)."""
        return build_module(self.weights_, self.biases_, self.activation, str(self.weights_[0].dtype))


class MLPBank(ModelBank):
    """K fitted MLPs with stacked weights (K, n_in, n_out), queried together.

    ``predict_proba(X)`` runs every model's layers together through compiled kernels (in chunks of
    models that keep the hidden activations under ~64 MB).
    """

    def __init__(self, weights, biases, activation: str, info: dict | None = None):
        self.weights_ = list(weights)
        self.biases_ = list(biases)
        self.activation = activation
        self.n_models = self.weights_[0].shape[0]
        self.n_features_in_ = self.weights_[0].shape[1]
        self.n_classes = self.weights_[-1].shape[2]
        self.info = dict(info or {})

    def decision_function(self, X: Any) -> np.ndarray:
        """Logits of every model, shape (K, n, n_classes), in the models' dtype.

        A row's logits do not depend on the rows queried with it (:func:`stacked_logits`). Nets trained with a
        sparse first layer (fast mode on one-hot data) are queried the same way, the non-zero inputs only:
        decided by the bank, never by the query.
        """
        X = check_predict_X(X, self.n_features_in_)
        return stacked_logits(self.weights_, self.biases_, self.activation, X, bool(self.info.get("sparse_input")))

    def predict_proba(self, X: Any) -> np.ndarray:
        """Probabilities of every model, shape (K, n, n_classes), float64."""
        return softmax(self.decision_function(X))

    def model(self, k: int) -> MLPModel:
        if not -self.n_models <= k < self.n_models:
            raise InvalidInputError(f"k={k} is out of range for a bank of {self.n_models} models")
        return MLPModel([W[k] for W in self.weights_], [b[k] for b in self.biases_], self.activation,
                        sparse_input=bool(self.info.get("sparse_input")))
