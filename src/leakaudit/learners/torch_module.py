"""Retraining a user's own torch module class: the training algorithm of a ``--module pkg.mod:Class`` target.

An audit given a torch ``state_dict`` and its module class knows the architecture
but not how the weights were trained. This learner trains fresh instances of the
class with a stated, configurable recipe, so that reference, shadow and
leave-one-out models (LiRA, RMIA, the shadow attack, PDTP) can be trained:

- a fresh instance ``Class(**module_kwargs)`` per model, its parameters
  initialised by the class's own initialisation under ``torch.manual_seed(seed)``
  (the caller's global torch random state is left as it was);
- ``epochs`` passes over the model's rows in a fresh order each epoch
  (``numpy.random.default_rng(seed)``), mini-batches of ``batch_size`` (the
  last one smaller), the batch-mean cross-entropy;
- the optimizer ``"adam"`` (``torch.optim.Adam``'s update: betas 0.9/0.999,
  eps 1e-8, L2 ``weight_decay`` added to the gradient) or ``"sgd"``
  (``torch.optim.SGD``'s update with ``momentum`` and L2 ``weight_decay``).

Outputs. A module may end in logits, log-probabilities or probabilities. The
kind is decided once per call on the fresh modules' outputs on the training rows:
rows of non-negative values summing to 1 are probabilities (the loss is
``-ln p_y``), anything else is read as logits (softmax cross-entropy; a
log-softmax output gives the same loss). Predictions are the matching
probabilities, as the audit reads the target's outputs.

Batching. ``fit_many`` trains the K models together when the module allows it:
their parameters are stacked with ``torch.func.stack_module_state`` and one
``vmap`` of ``torch.func.functional_call`` runs every model's forward and
backward on its own mini-batch; the optimizer update is elementwise, with a
per-model mask so that a model whose epoch is over (smaller subset) does not
move. A module with buffers (BatchNorm's running statistics: the padding
rows of a vmapped batch would enter its batch statistics) or that ``vmap``
cannot run (dropout, data-dependent control flow) is trained one model at a
time with the same recipe, each mini-batch holding only the model's own rows. Both paths give the same
models up to floating-point rounding of the batched matrix products.

Devices. With ``device="cuda"`` the fresh modules are initialised on the CPU as above (the same initial
weights on any device) and then moved to the GPU with the data; the mini-batches are drawn on the CPU, and
only each step's index and mask tensors go to the device. The trained models stay on it and predict there
(their probabilities come back as numpy arrays).
"""

from __future__ import annotations

import importlib
import numbers
from typing import Any

import numpy as np

from .._validation import check_choice, check_scalar, clip
from ..exceptions import InvalidInputError, InvalidParameterError
from ._base import ListModelBank, ModelBank, ProbaModel, keep_params
from ._torch_utils import (TorchLearner, check_predict_X, import_torch, resolve_device, to_numpy, to_tensor,
                           torch_threads)

__all__ = ["TorchModuleLearner", "TorchModuleModel", "import_module_class", "RECIPE_DEFAULTS"]

#: The default training recipe (stated in the audit report).
RECIPE_DEFAULTS = {"optimizer": "adam", "lr": 1e-3, "epochs": 20, "batch_size": 32, "weight_decay": 0.0,
                   "momentum": 0.0}

_ADAM_BETAS = (0.9, 0.999)
_ADAM_EPS = 1e-8


def import_module_class(spec: str):
    """The ``torch.nn.Module`` subclass named ``package.module:Class``; our error otherwise."""
    torch = import_torch()
    if not isinstance(spec, str) or ":" not in spec:
        raise InvalidParameterError(f"module must look like package.module:Class; got {spec!r}")
    mod_name, cls_name = spec.split(":", 1)
    try:
        cls = getattr(importlib.import_module(mod_name), cls_name)
    except (ImportError, AttributeError) as exc:
        raise InvalidParameterError(f"cannot import {spec}: {exc}") from None
    if not (isinstance(cls, type) and issubclass(cls, torch.nn.Module)):
        raise InvalidParameterError(f"module {spec} is not a torch.nn.Module class")
    return cls


def _probs_from_outputs(out, kind: str):
    """Probabilities (float64 tensor) from a module's outputs of the given kind."""
    torch = import_torch()
    out = out.double()
    if kind == "probs":
        return out.clamp(0.0, 1.0)
    return torch.softmax(out, dim=-1)


def _output_kind(out) -> str:
    """``"probs"`` when every row is non-negative and sums to 1 (within 1e-3), else ``"logits"``."""
    torch = import_torch()
    out = out.detach().double()
    ones = torch.ones(out.shape[:-1], dtype=out.dtype, device=out.device)
    if torch.all(out >= 0) and torch.allclose(out.sum(-1), ones, atol=1e-3):
        return "probs"
    return "logits"


def probe_output_kind(module, Xt, *, name: str, n_classes: int) -> str:
    """Run ``module`` (left in eval mode) on the first 256 rows of ``Xt`` and return its output kind.

    Raises
    ------
    InvalidInputError
        One line naming the module: it rejects the data's input width, or its outputs are not
        ``(n, n_classes)`` class scores.
    """
    torch = import_torch()
    with torch.no_grad():
        try:
            probe = module.eval()(Xt[:256])
        except Exception as exc:  # noqa: BLE001 - the user's module rejected the data
            raise InvalidInputError(f"{name} does not accept the data's {Xt.shape[1]} input "
                                    f"features: {clip(str(exc), 200)}") from None
    if probe.ndim != 2 or probe.shape[1] != n_classes:
        raise InvalidInputError(f"{name} outputs shape {tuple(probe.shape)}; expected (n, {n_classes}) class scores")
    return _output_kind(probe)


class TorchModuleModel(ProbaModel):
    """One trained instance of the user's module: ``predict_proba(X) -> (n, n_classes)`` float64.

    Attributes
    ----------
    module : torch.nn.Module (in eval mode)
    output_kind : {"logits", "probs"}
    n_classes : int
    device : str
        The (resolved) device the module is on; queries are copied there.
    """

    def __init__(self, module, output_kind: str, n_features: int, n_classes: int, device: str = "cpu"):
        self.module = module
        self.device = device
        self.output_kind = output_kind
        self.n_features_in_ = n_features
        self.n_classes = n_classes
        self.classes_ = np.arange(n_classes)

    def predict_proba(self, X: Any) -> np.ndarray:
        torch = import_torch()
        X = check_predict_X(X, self.n_features_in_)
        with torch.no_grad(), torch_threads(1):
            out = self.module(to_tensor(X, torch.float32).to(self.device))
        return to_numpy(_probs_from_outputs(out, self.output_kind))


class TorchModuleLearner(TorchLearner):
    """Trains fresh instances of a torch module class with a stated recipe (see module docstring).

    Parameters
    ----------
    module : str
        ``package.module:Class`` of a ``torch.nn.Module`` subclass; it must take
        a float32 batch (B, n_features) and return (B, n_classes) scores.
    module_kwargs : dict or None, default=None
        Keyword arguments of the class's constructor.
    optimizer : {"adam", "sgd"}, default="adam"
    lr : float, default=1e-3
    epochs : int, default=20
    batch_size : int, default=32
    weight_decay : float, default=0.0
        L2 penalty added to the gradient (as torch.optim's ``weight_decay``).
    momentum : float, default=0.0
        SGD momentum (ignored by Adam).
    batched : {"auto", "vmap", "loop"}, default="auto"
        ``fit_many``: "vmap" trains the K models together (error if the module
        does not allow it), "loop" one at a time, "auto" tries "vmap" and falls
        back to "loop".
    n_threads : int, default=1
        torch intra-op threads while training.
    device : {"cpu", "cuda", "cuda:N", "auto"}, default="cpu"
        Where the modules train and predict ("auto": a CUDA GPU when torch sees one, else the CPU);
        ``"cuda"`` where CUDA is not available raises :class:`~leakaudit.exceptions.UnsupportedError`.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.random.default_rng(0).normal(size=(40, 3)); y = (X[:, 0] > 0).astype(int)
    >>> lrn = TorchModuleLearner(module="torch.nn:Linear", module_kwargs={"in_features": 3, "out_features": 2},
    ...                          epochs=3)
    >>> lrn.fit_many(X, y, [np.arange(20), np.arange(20, 40)], [1, 2]).predict_proba(X).shape
    (2, 40, 2)
    """

    def __init__(self, *, module: str | None = None, module_kwargs: dict | None = None, optimizer: str = "adam",
                 lr: float = 1e-3, epochs: int = 20, batch_size: int = 32, weight_decay: float = 0.0,
                 momentum: float = 0.0, batched: str = "auto", n_threads: int = 1, device: str = "cpu"):
        keep_params(self, locals())

    # -- parameters ---------------------------------------------------------------
    def _check_params(self):
        if self.module is None:
            raise InvalidParameterError("module is required: package.module:Class of a torch.nn.Module")
        cls = import_module_class(self.module)
        kwargs = dict(self.module_kwargs or {})
        check_choice(self.optimizer, name="optimizer", choices=("adam", "sgd"))
        check_scalar(self.lr, name="lr", min_val=0, include_min=False)
        check_scalar(self.epochs, name="epochs", kind=numbers.Integral, min_val=1)
        check_scalar(self.batch_size, name="batch_size", kind=numbers.Integral, min_val=1)
        check_scalar(self.weight_decay, name="weight_decay", min_val=0)
        check_scalar(self.momentum, name="momentum", min_val=0, max_val=1, include_max=False)
        check_choice(self.batched, name="batched", choices=("auto", "vmap", "loop"))
        check_scalar(self.n_threads, name="n_threads", kind=numbers.Integral, min_val=1)
        resolve_device(self.device)
        return cls, kwargs

    def recipe(self) -> dict:
        """The training recipe as a plain dict (for reports)."""
        return {"module": self.module, "module_kwargs": dict(self.module_kwargs or {}), "optimizer": self.optimizer,
                "lr": float(self.lr), "epochs": int(self.epochs), "batch_size": int(self.batch_size),
                "weight_decay": float(self.weight_decay), "momentum": float(self.momentum)}

    def recipe_words(self) -> str:
        """The recipe in words, for descriptions: 'fresh instances of TinyNet(n_in=97, hidden=16), adam lr 0.001,
        5 epochs, batch 32, weight decay 0' (the class's name and its arguments as a call, never a dict's repr)."""
        cls = str(self.module).rpartition(":")[2] if self.module else "the module"
        args = ", ".join(f"{k}={v!r}" for k, v in (self.module_kwargs or {}).items())
        return (f"fresh instances of {cls}({args}), {self.optimizer} lr {self.lr:g}, {self.epochs} epochs, batch "
                f"{self.batch_size}, weight decay {self.weight_decay:g}"
                + (f", momentum {self.momentum:g}" if self.optimizer == "sgd" else ""))

    def _new_module(self, cls, kwargs, seed: int, device: str = "cpu"):
        """A fresh instance initialised on the CPU under ``torch.manual_seed(seed)`` (the global RNG state is
        restored), then moved to ``device``."""
        torch = import_torch()
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(int(seed))
            try:
                m = cls(**kwargs)
            except TypeError as exc:
                raise InvalidParameterError(f"{self.module} cannot be built with module_kwargs={kwargs}: {exc}") from None
        return m.float().to(device)

    def parameter_codec(self, X: Any, fitted: Any = None) -> tuple:
        """The module's parameters as one vector (``parameters_to_vector`` order); ``rebuild`` sets a vector into a
        fresh instance of the class, whose output kind is read from one pass over the first rows of ``X``."""
        import torch

        cls, kwargs = self._check_params()
        template = self._new_module(cls, kwargs, 0).eval()
        with torch.no_grad():
            kind = _output_kind(template(to_tensor(X[:256], torch.float32)))
        n_classes = None

        def extract(m):
            nonlocal n_classes
            n_classes = m.n_classes
            return torch.nn.utils.parameters_to_vector(m.module.parameters()).detach().double().numpy()

        def rebuild(v):
            mod = self._new_module(cls, kwargs, 0)
            with torch.no_grad():
                torch.nn.utils.vector_to_parameters(torch.as_tensor(np.asarray(v), dtype=torch.float32),
                                                    mod.parameters())
            return TorchModuleModel(mod.eval(), kind, X.shape[1], n_classes)

        return extract, rebuild

    # -- Learner protocol ---------------------------------------------------------
    def _fit_many(self, X, y, subsets, seeds, *, n_classes) -> ModelBank:
        torch = import_torch()
        cls, kwargs = self._check_params()
        device = resolve_device(self.device)
        with torch_threads(int(self.n_threads)):
            modules = [self._new_module(cls, kwargs, s, device) for s in seeds]
            Xt = to_tensor(X, torch.float32).to(device)
            yt = to_tensor(y, torch.int64).to(device)
            kind = probe_output_kind(modules[0], Xt, name=self.module, n_classes=n_classes)
            plans = [self._batches(s, seed) for s, seed in zip(subsets, seeds)]
            mode = self.batched
            stateful = any(True for _ in modules[0].buffers())
            if self.batched == "vmap" and stateful:
                raise InvalidParameterError(f"batched='vmap' but {self.module} has buffers (e.g. BatchNorm running "
                                            "statistics) that a batch padded for vmap would change")
            if mode in ("auto", "vmap") and len(modules) > 1 and not stateful:
                try:
                    self._train_vmap(modules, plans, Xt, yt, kind)
                    mode = "vmap"
                except Exception as exc:  # noqa: BLE001 - vmap cannot run this module
                    if self.batched == "vmap":
                        raise InvalidParameterError(f"batched='vmap' but {self.module} cannot be vmapped: "
                                                    f"{clip(str(exc), 200)}") from None
                    modules = [self._new_module(cls, kwargs, s, device) for s in seeds]
                    mode = "loop"
            else:
                mode = "loop"
            if mode == "loop":
                for m, plan in zip(modules, plans):
                    try:
                        self._train_vmap([m], [plan], Xt, yt, kind, use_vmap=False)
                    except (RuntimeError, ValueError) as exc:
                        raise InvalidInputError(
                            f"training {self.module} failed (mini-batches of up to {self.batch_size} rows; the last "
                            f"batch of an epoch may be smaller): {clip(str(exc), 200)}") from None
        for m in modules:
            m.eval()
        bank = ListModelBank([TorchModuleModel(m, kind, X.shape[1], int(n_classes), device) for m in modules],
                             n_classes)
        bank.info = {"trained": mode, "output_kind": kind, "device": device}
        return bank

    # -- training -------------------------------------------------------------------
    def _batches(self, subset: np.ndarray, seed: int) -> list[np.ndarray]:
        """Model's mini-batches (row indices) over all epochs: a fresh permutation per epoch."""
        rng = np.random.default_rng(int(seed))
        B = int(self.batch_size)
        out = []
        for _ in range(int(self.epochs)):
            order = subset[rng.permutation(subset.size)]
            out += [order[s:s + B] for s in range(0, order.size, B)]
        return out

    def _train_vmap(self, modules, plans, Xt, yt, kind: str, use_vmap: bool = True) -> None:
        """Train ``modules`` in place, model k on mini-batches ``plans[k]``.

        With ``use_vmap`` the K modules' parameters are stacked and one vmapped functional call runs all
        forwards; otherwise ``modules`` holds one module, trained through its own forward. Either way the
        optimizer update is elementwise with a leading model axis, and a per-model step mask idles models
        whose plan is over.
        """
        torch = import_torch()
        from torch.func import functional_call, stack_module_state, vmap

        K = len(modules)
        for m in modules:
            m.train()
        if use_vmap:
            params, buffers = stack_module_state(modules)
            base = modules[0]

            def one(p, b, xb):
                return functional_call(base, (p, b), (xb,))

            vforward = vmap(one, in_dims=(0, 0, 0))
            leaves = dict(params)
            views = leaves
            forward = lambda xb: vforward(params, buffers, xb)  # noqa: E731
        else:
            if K != 1:
                raise InvalidParameterError("the one-at-a-time path trains one module per call")
            leaves = dict(modules[0].named_parameters())
            views = {n: v.unsqueeze(0) for n, v in leaves.items()}  # share storage: updates reach the module
            forward = lambda xb: modules[0](xb[0]).unsqueeze(0)  # noqa: E731
        names = [n for n, v in leaves.items() if v.requires_grad]
        state = {n: {"m": torch.zeros_like(views[n]), "v": torch.zeros_like(views[n])} for n in names}
        device = Xt.device
        steps = torch.zeros(K, dtype=torch.float64, device=device)
        B = int(self.batch_size)
        for t in range(max(len(p) for p in plans)):
            idx = np.zeros((K, B), dtype=np.int64)
            mask = np.zeros((K, B), dtype=bool)
            active = np.zeros(K, dtype=bool)
            for k, plan in enumerate(plans):
                if t < len(plan):
                    rows = plan[t]
                    idx[k, :rows.size] = rows
                    mask[k, :rows.size] = True
                    active[k] = True
            if not use_vmap:  # a single model: no padding rows through its forward (BatchNorm sees the true batch)
                n_true = int(mask[0].sum())
                idx, mask = idx[:, :n_true], mask[:, :n_true]
            idx_t = torch.from_numpy(idx).to(device)
            mask_t = torch.from_numpy(mask).to(device)
            out = forward(Xt[idx_t])  # (K, B, C)
            yb = yt[idx_t].unsqueeze(-1)
            logp = torch.log(out.clamp_min(1e-12)) if kind == "probs" else torch.log_softmax(out, dim=-1)
            nll = -logp.gather(-1, yb).squeeze(-1)
            counts = mask_t.sum(1).clamp_min(1).to(nll.dtype)
            loss = ((nll * mask_t).sum(1) / counts).sum()  # sum over models of each one's batch-mean loss
            grads = torch.autograd.grad(loss, [leaves[n] for n in names], allow_unused=True)
            act = torch.from_numpy(active).to(device)
            steps += act.double()
            with torch.no_grad():
                for n, g in zip(names, grads):
                    p = views[n]
                    g = torch.zeros_like(p) if g is None else g.reshape(p.shape)
                    self._update(p, g, state[n], act, steps)
        if use_vmap:
            with torch.no_grad():
                for k, m in enumerate(modules):
                    for n, p in m.named_parameters():
                        p.copy_(params[n][k])
                    for n, b in m.named_buffers():
                        b.copy_(buffers[n][k])

    def _update(self, p, g, st, active, steps) -> None:
        """One optimizer step for the models marked ``active`` (elementwise, as torch.optim's Adam / SGD)."""
        torch = import_torch()
        shape = (-1,) + (1,) * (p.ndim - 1)
        a = active.view(shape)
        if self.weight_decay:
            g = g + self.weight_decay * p
        if self.optimizer == "adam":
            b1, b2 = _ADAM_BETAS
            m_new = torch.where(a, st["m"] * b1 + g * (1 - b1), st["m"])
            v_new = torch.where(a, st["v"] * b2 + g * g * (1 - b2), st["v"])
            st["m"], st["v"] = m_new, v_new
            t = steps.clamp_min(1)
            bc1 = (1 - b1 ** t).to(p.dtype).view(shape)
            bc2 = (1 - b2 ** t).to(p.dtype).view(shape)
            denom = v_new.sqrt() / bc2.sqrt() + _ADAM_EPS
            delta = (self.lr / bc1) * m_new / denom
        else:
            if self.momentum:
                first = (steps <= 1).view(shape)
                buf = torch.where(first, g, st["m"] * self.momentum + g)
                st["m"] = torch.where(a, buf, st["m"])
                delta = self.lr * st["m"]
            else:
                delta = self.lr * g
        p.sub_(torch.where(a, delta, torch.zeros_like(delta)))

