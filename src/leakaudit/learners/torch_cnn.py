"""VGG-like CNN of Yeom et al. (2018, §6.3) with size parameter s, trained one or K at a time.

Architecture (spec ``yeom-overfitting.md`` §6.3), all hidden activations ReLU::

    conv3x3(s) -> conv3x3(s) -> maxpool2x2 -> conv3x3(2s) -> conv3x3(2s) -> maxpool2x2
    -> dense(2s) -> dense(n_classes) -> softmax

Not stated in the paper, our choices: ``padding="valid"`` (the Keras default;
28x28 -> 4x4 before the dense layers), Glorot-uniform kernels and zero biases
(Keras defaults), no augmentation, and ``epochs=20``, ``batch_size=64``.
Optimiser: Adam with the values the paper lists as "Keras defaults"
(lr 0.001, beta1 0.5, beta2 0.99, eps 1e-8, decay 5e-4; Keras' real defaults
differ, see the spec); ``decay`` is Keras' time-based decay,
``lr_t = lr / (1 + decay * t)`` for update t = 0, 1, ..., applied to PyTorch's
Adam update rule.

``fit_many`` trains the K models in chunks (``TorchCNN.models_per_chunk``: 16
// size, at least 1), on every core at once; a chunk's models train together as
one network with grouped convolutions (``groups``: the chunk's models; their
images are the input channels) and batched matmuls for the dense layers; each
model draws its own mini-batches. Only small nets gain from grouped
convolutions over one model at a time (measurements, and the comparison with
``torch.func.vmap``, in ``benchmarks/README.md``).
Seeds: model k's init and its per-epoch permutations come, in that order, from
``numpy.random.default_rng(seed_k)``, so ``fit_many`` equals fitting one at a
time with the same seeds up to float rounding (grouped convolutions over several
models sum in another order than over one: ~1e-9 in float32 after a few
steps; bit for bit where a chunk holds one model, from size 16); the same call
with the same seeds is bit-identical on one machine, for any thread count.

Devices. ``device="cuda"`` trains the same chunks on the GPU, one after another
(each chunk's grouped network already fills it; ``models_per_chunk`` sets how
many models a chunk holds there too): inits, permutations and per-model step
counts are drawn and kept on the CPU, the parameters, Adam moments and images
on the GPU. The same models up to float rounding of the GPU's convolutions
(cuDNN may use TF32 for float32 convolutions unless
``torch.backends.cudnn.allow_tf32`` is turned off). The bank remembers the
device and predicts there; its probabilities come back as numpy arrays.
"""

from __future__ import annotations

import numbers
from collections.abc import Sequence
from typing import Any

import numpy as np

from .._random import RandomStateLike
from .._validation import check_array, check_choice, check_scalar
from ..exceptions import InvalidInputError, InvalidParameterError
from ._base import ModelBank, ProbaModel, keep_params
from ._threads import for_each_model
from ._torch_utils import TorchLearner, import_torch, resolve_device, softmax, to_numpy, torch_threads

__all__ = ["TorchCNN", "CNNBank", "CNNModel"]


def _check_images(X: Any, image_shape: tuple[int, int, int], *, name: str = "X", allow_empty=False) -> np.ndarray:
    """Images as (n, c, h, w) or flattened (n, c*h*w), dense or SciPy sparse; return the flattened float64 matrix."""
    import scipy.sparse as sp

    if sp.issparse(X):  # pixels are dense data: a sparse matrix of flattened images is densified
        X = X.toarray()
    X = check_array(X, name=name, ndim=(2, 3, 4), allow_empty=allow_empty)
    flat = int(np.prod(image_shape))
    if X.ndim == 2 and X.shape[1] == flat:
        return X
    if X.ndim == 4 and X.shape[1:] == tuple(image_shape):
        return X.reshape(X.shape[0], flat)
    if X.ndim == 3 and image_shape[0] == 1 and X.shape[1:] == tuple(image_shape[1:]):
        return X.reshape(X.shape[0], flat)
    raise InvalidInputError(
        f"{name} must hold images of shape {tuple(image_shape)} as (n, {', '.join(map(str, image_shape))}) "
        f"or flattened (n, {flat}); got shape {X.shape}"
    )


class _Net:
    """K stacked VGG-like nets evaluated as one grouped network (pure functions of the params)."""

    def __init__(self, torch, image_shape, s, n_classes, padding):
        self.torch = torch
        self.F = torch.nn.functional
        self.c, self.h, self.w = image_shape
        self.s = s
        self.n_classes = n_classes
        self.pad = 0 if padding == "valid" else 1
        h, w = self.h, self.w
        for _ in range(2):
            h, w = h - 2 + 2 * self.pad, w - 2 + 2 * self.pad
            h, w = h - 2 + 2 * self.pad, w - 2 + 2 * self.pad
            h, w = h // 2, w // 2
        if h < 1 or w < 1:
            raise InvalidInputError(f"images of shape {image_shape} are too small for two conv-conv-pool blocks")
        self.flat = 2 * s * h * w
        # (name, shape without K, fan_in, fan_out) in draw order
        c, s2 = self.c, 2 * s
        self.shapes = [
            ("conv1", (s, c, 3, 3), c * 9, s * 9), ("b1", (s,), 0, 0),
            ("conv2", (s, s, 3, 3), s * 9, s * 9), ("b2", (s,), 0, 0),
            ("conv3", (s2, s, 3, 3), s * 9, s2 * 9), ("b3", (s2,), 0, 0),
            ("conv4", (s2, s2, 3, 3), s2 * 9, s2 * 9), ("b4", (s2,), 0, 0),
            ("dense1", (self.flat, s2), self.flat, s2), ("b5", (s2,), 0, 0),
            ("dense2", (s2, n_classes), s2, n_classes), ("b6", (n_classes,), 0, 0),
        ]

    def init(self, rng: np.random.Generator, dtype) -> list[np.ndarray]:
        """Glorot-uniform kernels, zero biases (Keras defaults)."""
        out = []
        for _, shape, fi, fo in self.shapes:
            if fi == 0:
                out.append(np.zeros(shape, dtype=dtype))
            else:
                lim = np.sqrt(6.0 / (fi + fo))
                out.append(rng.uniform(-lim, lim, size=shape).astype(dtype))
        return out

    def logits(self, P, x):
        """P: list of stacked params (K, ...); x: (K, B, c, h, w) -> logits (K, B, C)."""
        torch, F = self.torch, self.F
        K, B = x.shape[0], x.shape[1]
        z = x.permute(1, 0, 2, 3, 4).reshape(B, K * self.c, self.h, self.w)
        for i in range(4):
            W, b = P[2 * i], P[2 * i + 1]
            z = F.conv2d(z, W.reshape(-1, *W.shape[2:]), b.reshape(-1), padding=self.pad, groups=K)
            z = torch.relu(z)
            if i in (1, 3):
                z = F.max_pool2d(z, 2)
        z = z.reshape(B, K, self.flat).transpose(0, 1)  # per model (channel, h, w) flatten
        z = torch.relu(torch.baddbmm(P[9].unsqueeze(1), z, P[8]))
        return torch.baddbmm(P[11].unsqueeze(1), z, P[10])


class TorchCNN(TorchLearner):
    """Yeom et al.'s VGG-like CNN for small images (Fashion-MNIST, MNIST), size parameter s.

    Parameters
    ----------
    size : int, default=32
        The size parameter s (channels of the first block; the paper sweeps 2^0..2^7).
    epochs : int, default=20
    batch_size : int, default=64
    lr : float, default=0.001
    betas : tuple of float, default=(0.5, 0.99)
        As listed by Yeom et al. (not Keras' real defaults).
    eps : float, default=1e-8
    decay : float, default=5e-4
        Keras time-based learning-rate decay per update.
    padding : {"valid", "same"}, default="valid"
    image_shape : tuple of int, default=(1, 28, 28)
    dtype : {"float32", "float64"}, default="float32"
    n_threads : int or None, default=None
        Threads for ``fit_many``: the models are trained in chunks of
        ``models_per_chunk``, the chunks on ``n_threads`` threads at once, each
        on one torch intra-op thread (intra-op threads only synchronise the
        small convolution steps, ``benchmarks/README.md``). None: every processor
        this process may run on. The chunks do not depend on it, so neither do
        the models. On a GPU the chunks train one after another.
    device : {"cpu", "cuda", "cuda:N", "auto"}, default="cpu"
        Where the nets train and predict ("auto": a CUDA GPU when torch sees one, else the CPU);
        ``"cuda"`` where CUDA is not available raises :class:`~leakaudit.exceptions.UnsupportedError`.
    """

    #: fit_many trains the models in chunks of this many, one grouped network a chunk; None: ``max(1, 16 // size)``.
    #: It depends on the net only, so a model does not depend on the thread count. Grouped convolutions pay off only
    #: for small nets, so larger nets train one model a chunk (measurements in benchmarks/README.md).
    models_per_chunk: int | None = None

    def __init__(
        self,
        *,
        size: int = 32,
        epochs: int = 20,
        batch_size: int = 64,
        lr: float = 0.001,
        betas: Sequence[float] = (0.5, 0.99),
        eps: float = 1e-8,
        decay: float = 5e-4,
        padding: str = "valid",
        image_shape: Sequence[int] = (1, 28, 28),
        dtype: str = "float32",
        n_threads: int | None = None,
        device: str = "cpu",
    ):
        keep_params(self, locals())

    def _check_params(self):
        check_scalar(self.size, name="size", kind=numbers.Integral, min_val=1)
        check_scalar(self.epochs, name="epochs", kind=numbers.Integral, min_val=1)
        check_scalar(self.batch_size, name="batch_size", kind=numbers.Integral, min_val=1)
        check_scalar(self.lr, name="lr", min_val=0, include_min=False)
        check_scalar(self.eps, name="eps", min_val=0, include_min=False)
        check_scalar(self.decay, name="decay", min_val=0)
        try:
            b1, b2 = (float(b) for b in self.betas)
        except (TypeError, ValueError):
            raise InvalidParameterError(f"betas must be two floats in [0, 1); got {self.betas!r}") from None
        if not (0 <= b1 < 1 and 0 <= b2 < 1):
            raise InvalidParameterError(f"betas must be two floats in [0, 1); got {self.betas!r}")
        check_choice(self.padding, name="padding", choices=("valid", "same"))
        check_choice(self.dtype, name="dtype", choices=("float32", "float64"))
        shape = tuple(int(v) for v in self.image_shape)
        if len(shape) != 3 or min(shape) < 1:
            raise InvalidParameterError(f"image_shape must be (channels, height, width); got {self.image_shape!r}")
        if self.n_threads is not None:
            check_scalar(self.n_threads, name="n_threads", kind=numbers.Integral, min_val=1)
        resolve_device(self.device)
        return shape, (b1, b2)

    # images may come as (n, c, h, w): flatten before the base class's 2-D checks
    def fit(self, X, y, *, random_state: RandomStateLike = None, n_classes: int | None = None):
        shape, _ = self._check_params()
        return super().fit(_check_images(X, shape), y, random_state=random_state, n_classes=n_classes)

    def fit_many(self, X, y, subsets, random_states=None, *, n_classes: int | None = None) -> CNNBank:
        shape, _ = self._check_params()
        return super().fit_many(_check_images(X, shape), y, subsets, random_states, n_classes=n_classes)

    def _fit_many(self, X, y, subsets, seeds, *, n_classes) -> CNNBank:
        shape, (b1, b2) = self._check_params()
        torch = import_torch()
        device = resolve_device(self.device)
        dtype = np.dtype(self.dtype)
        net = _Net(torch, shape, int(self.size), int(n_classes), self.padding)
        K = len(subsets)
        rngs = [np.random.default_rng(int(s)) for s in seeds]
        inits = [net.init(rng, dtype) for rng in rngs]
        Xt = torch.from_numpy(X.astype(dtype).reshape(len(X), *shape)).to(device)
        yt = torch.from_numpy(y.astype(np.int64)).to(device)
        B = int(self.batch_size)
        # chunks of a size fixed by the net, so a model does not depend on the thread count
        per = int(self.models_per_chunk or max(1, 16 // int(self.size)))
        bounds = [(c0, min(K, c0 + per)) for c0 in range(0, K, per)]
        out: list = [None] * len(bounds)

        def train(c):
            ks = range(*bounds[c])
            Kc = len(ks)
            P = [torch.from_numpy(np.stack([inits[k][i] for k in ks])).to(device).requires_grad_(True)
                 for i in range(len(net.shapes))]
            m = [torch.zeros_like(p) for p in P]
            v = [torch.zeros_like(p) for p in P]
            t = np.zeros(Kc)  # per-model update counts
            S = -(-max(subsets[k].size for k in ks) // B)
            for _ in range(int(self.epochs)):
                idx = np.full((Kc, S * B), -1, dtype=np.int64)
                for i, k in enumerate(ks):
                    idx[i, : subsets[k].size] = subsets[k][rngs[k].permutation(subsets[k].size)]
                idx = idx.reshape(Kc, S, B)
                for j in range(S):
                    ij = torch.from_numpy(idx[:, j])
                    mask = ij >= 0
                    count = mask.sum(1)
                    active = (count > 0).numpy()
                    safe = ij.clamp(min=0).to(device)
                    w = (mask.to(Xt.dtype) / count.clamp(min=1).to(Xt.dtype).unsqueeze(1)).to(device)
                    logits = net.logits(P, Xt[safe])
                    nll = -torch.log_softmax(logits, -1).gather(-1, yt[safe].unsqueeze(-1)).squeeze(-1)
                    loss = (nll * w).sum()  # sum over models of each model's mean NLL
                    grads = torch.autograd.grad(loss, P)
                    with torch.no_grad():
                        _adam_step(torch, P, grads, m, v, t, active, self.lr, self.decay, b1, b2, self.eps)
            out[c] = [to_numpy(p) for p in P]

        # the chunks on n_threads threads, each on one torch intra-op thread (intra-op threads slow these small
        # convolution steps down under load: benchmarks/README.md); on a GPU one after another
        with torch_threads(1):
            for_each_model(train, len(bounds), self.n_threads if device == "cpu" else 1)
        weights = [np.concatenate([w[i] for w in out]) for i in range(len(net.shapes))]
        info = dict(size=int(self.size), padding=self.padding, image_shape=shape, dtype=str(dtype), device=device)
        return CNNBank(weights, net_args=(shape, int(self.size), int(n_classes), self.padding), info=info,
                       device=device)


def _adam_step(torch, P, grads, m, v, t, active, lr, decay, b1, b2, eps):
    """PyTorch's Adam update per model, with Keras time-based decay lr/(1 + decay*t); inactive models stay."""
    lr_k = lr / (1.0 + decay * t)  # t = updates taken before this one (on the CPU; the results go to P's device)
    t[active] += 1
    tt = np.maximum(t, 1)
    device = P[0].device
    step_size = torch.from_numpy(lr_k / (1 - b1**tt)).to(device)
    bc2_sqrt = torch.from_numpy(np.sqrt(1 - b2**tt)).to(device)
    act = torch.from_numpy(active).to(device)
    for p, g, mm, vv in zip(P, grads, m, v):
        shape = (-1,) + (1,) * (p.dim() - 1)
        a = act.view(shape)
        mm.copy_(torch.where(a, torch.lerp(mm, g, 1 - b1), mm))
        vv.copy_(torch.where(a, vv * b2 + (1 - b2) * g * g, vv))
        denom = (vv.sqrt() / bc2_sqrt.to(p.dtype).view(shape)).add_(eps)
        p.copy_(torch.where(a, p - step_size.to(p.dtype).view(shape) * mm / denom, p))


class CNNBank(ModelBank):
    """K fitted CNNs with stacked parameters; ``predict_proba(X) -> (K, n, n_classes)``.

    ``weights_`` are numpy arrays in host memory; ``device`` (a resolved device) is where the nets are
    evaluated.
    """

    def __init__(self, weights, net_args, info=None, device: str = "cpu"):
        self.device = device
        self.weights_ = list(weights)
        self.net_args = tuple(net_args)
        self.image_shape = tuple(net_args[0])
        self.n_models = self.weights_[0].shape[0]
        self.n_classes = int(net_args[2])
        self.info = dict(info or {})

    def predict_proba(self, X: Any, *, batch_size: int = 256) -> np.ndarray:
        """Probabilities of every model, shape (K, n, n_classes), float64."""
        X = _check_images(X, self.image_shape, allow_empty=True)
        torch = import_torch()
        net = _Net(torch, *self.net_args)
        P = [torch.from_numpy(w).to(self.device) for w in self.weights_]
        dt = P[0].dtype
        Xt = torch.from_numpy(X.reshape(len(X), *self.image_shape)).to(dt)
        out = np.empty((self.n_models, len(X), self.n_classes))
        with torch.no_grad():
            for s in range(0, len(X), batch_size):
                xb = Xt[s : s + batch_size].to(self.device)
                x = xb.unsqueeze(0).expand(self.n_models, *xb.shape)
                out[:, s : s + batch_size] = softmax(to_numpy(net.logits(P, x)))
        return out

    def model(self, k: int) -> CNNModel:
        if not -self.n_models <= k < self.n_models:
            raise InvalidInputError(f"k={k} is out of range for a bank of {self.n_models} models")
        return CNNModel(CNNBank([w[k : k + 1] for w in self.weights_], self.net_args, self.info, self.device))


class CNNModel(ProbaModel):
    """One fitted CNN: ``predict_proba(X) -> (n, n_classes)``; ``X`` as images or flattened."""

    def __init__(self, bank: CNNBank):
        self._bank = bank
        self.n_classes = bank.n_classes
        self.classes_ = np.arange(self.n_classes)

    @property
    def weights_(self) -> list[np.ndarray]:
        """Parameters (conv1, b1, ..., dense2, b6) without the model axis."""
        return [w[0] for w in self._bank.weights_]

    def predict_proba(self, X: Any) -> np.ndarray:
        return self._bank.predict_proba(X)[0]
