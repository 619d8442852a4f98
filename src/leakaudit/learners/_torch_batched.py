"""Batched MLP training in eager PyTorch: K models with stacked weights, no autograd.

Each step every model takes one (mini-)batch of its own rows, given as an index
tensor of shape (K, B) padded with -1; a model whose batch is all padding does
not move (its SGD/Adam state is untouched). The loss of model k is the mean NLL
over its real rows, so a padded batch equals the shorter batch the plain
trainer would take (a DataLoader's last partial batch).

Two layouts:

* gathered (any per-model orders): x of shape (K, B, d), layers by ``baddbmm``;
* shared (all models see the same rows, each masks the rows outside its
  subset; approach 3 of ``notes/batched-training.md``): the first layer of all
  models is one GEMM, ``x (B, d) @ W1 (d, K*h)``, and its weight gradient too.

Backprop is by hand, in ``torch.optim.SGD`` / ``torch.optim.Adam`` order (all
gradients at the old weights, then the update), so results match the
per-model autograd oracle (``_torch_utils.naive_train_mlp``) up to rounding.
"""

from __future__ import annotations

from collections.abc import Iterable

from ._torch_utils import import_torch

__all__ = ["BatchedMLPTrainer"]


class BatchedMLPTrainer:
    """Stacked weights of K MLPs and one optimizer step for all of them.

    Parameters
    ----------
    Ws : list of tensors (K, n_in, n_out); bs : list of tensors (K, n_out)
    X : tensor (n, d); y : tensor (n,) int64
    activation : {"tanh", "relu"}
    optimizer : {"sgd", "adam"}
    """

    def __init__(self, Ws, bs, X, y, *, activation, optimizer, lr, weight_decay=0.0, betas=(0.9, 0.999), eps=1e-8,
                 shared=False):
        torch = import_torch()
        self.torch = torch
        self.K = Ws[0].shape[0]
        self.shared = bool(shared)
        self.Ws = [W.contiguous() for W in Ws]
        self.bs = [b.contiguous() for b in bs]
        # shape that broadcasts a per-model (K,) vector against each parameter
        self.kshape = [(-1,) + (1,) * (p.dim() - 1) for p in self.Ws + self.bs]
        if self.shared:  # first layer kept as (d, K, h): all models' weights of one input are one row
            self.Ws[0] = self.Ws[0].permute(1, 0, 2).contiguous()
            self.kshape[0] = (1, -1, 1)
        self.X = X
        self.y = y
        self.C = self.Ws[-1].shape[2]
        self.activation = activation
        self.optimizer = optimizer
        self.lr = float(lr)
        self.wd = float(weight_decay)
        self.b1, self.b2 = float(betas[0]), float(betas[1])
        self.eps = float(eps)
        if optimizer == "adam":
            self.m = [torch.zeros_like(p) for p in self.Ws + self.bs]
            self.v = [torch.zeros_like(p) for p in self.Ws + self.bs]
            self.t = torch.zeros(self.K, dtype=torch.float64)

    # -- forward/backward ---------------------------------------------------
    def _act(self, z):
        return self.torch.tanh(z) if self.activation == "tanh" else self.torch.relu(z)

    def _act_grad(self, ga, a):
        if self.activation == "tanh":
            return ga * (1 - a * a)
        return ga * (a > 0).to(ga.dtype)

    def _output_grad(self, logits, yb, w):
        """d(mean NLL)/d logits: (softmax - onehot) * w, w = mask / count per model."""
        torch = self.torch
        g = torch.softmax(logits, dim=-1)
        g.scatter_add_(-1, yb.unsqueeze(-1), torch.full_like(g[..., :1], -1.0))
        return g * w.unsqueeze(-1)

    def step_gathered(self, idx) -> None:
        """One step; ``idx`` (K, B) int64 rows per model, -1 = padding."""
        torch = self.torch
        mask = idx >= 0
        count = mask.sum(1)
        active = count > 0
        safe = idx.clamp(min=0)
        w = mask.to(self.X.dtype) / count.clamp(min=1).to(self.X.dtype).unsqueeze(1)
        a = [self.X[safe]]  # (K, B, d)
        L = len(self.Ws)
        for l in range(L):
            z = torch.baddbmm(self.bs[l].unsqueeze(1), a[-1], self.Ws[l])
            a.append(self._act(z) if l < L - 1 else z)
        g = self._output_grad(a[-1], self.y[safe], w)
        gW, gb = [None] * L, [None] * L
        for l in range(L - 1, -1, -1):
            gW[l] = torch.bmm(a[l].transpose(1, 2), g)
            gb[l] = g.sum(1)
            if l > 0:
                g = self._act_grad(torch.bmm(g, self.Ws[l].transpose(1, 2)), a[l])
        self._update(gW, gb, active)

    def step_shared(self, rows, member) -> None:
        """One step where every model sees ``rows`` (B,), masked by ``member`` (K, B) bool."""
        torch = self.torch
        count = member.sum(1)
        active = count > 0
        w = member.to(self.X.dtype) / count.clamp(min=1).to(self.X.dtype).unsqueeze(1)
        K = self.K
        x = self.X[rows]  # (B, d)
        B = x.shape[0]
        d, h = self.Ws[0].shape[0], self.Ws[0].shape[2]
        # first layer for all models at once: (B, d) @ (d, K*h)
        z = torch.addmm(self.bs[0].view(1, K * h), x, self.Ws[0].view(d, K * h)).view(B, K, h).transpose(0, 1)
        L = len(self.Ws)
        a = [None, self._act(z) if L > 1 else z]
        for l in range(1, L):
            z = torch.baddbmm(self.bs[l].unsqueeze(1), a[-1], self.Ws[l])
            a.append(self._act(z) if l < L - 1 else z)
        g = self._output_grad(a[-1], self.y[rows].expand(K, B), w)
        gW, gb = [None] * L, [None] * L
        for l in range(L - 1, 0, -1):
            gW[l] = torch.bmm(a[l].transpose(1, 2), g)
            gb[l] = g.sum(1)
            g = self._act_grad(torch.bmm(g, self.Ws[l].transpose(1, 2)), a[l])
        # first layer's weight gradient, all models at once: (d, B) @ (B, K*h)
        gcat = g.transpose(0, 1).reshape(B, K * h)
        gW[0] = (x.t() @ gcat).view(d, K, h)
        gb[0] = g.sum(1)
        self._update(gW, gb, active)

    # -- optimizers -----------------------------------------------------------
    def _update(self, gW, gb, active) -> None:
        torch = self.torch
        params = self.Ws + self.bs
        grads = list(gW) + list(gb)
        all_active = bool(active.all())
        if self.optimizer == "sgd":
            for i, (p, g) in enumerate(zip(params, grads)):
                if self.wd:
                    g = g + self.wd * p
                if not all_active:
                    g = g * active.view(self.kshape[i]).to(g.dtype)
                p.sub_(self.lr * g)
            return
        # Adam (torch.optim.Adam): per-model step counts
        self.t += active.to(torch.float64)
        if all_active and hasattr(torch, "_fused_adam_") and bool((self.t == self.t[0]).all()):
            # every model takes the same step: PyTorch's fused CPU Adam kernel, one pass per tensor
            step = float(self.t[0])
            torch._fused_adam_(
                params, [g.contiguous() for g in grads], self.m, self.v, [],
                [torch.tensor(step) for _ in params],
                lr=self.lr, beta1=self.b1, beta2=self.b2, weight_decay=self.wd, eps=self.eps,
                amsgrad=False, maximize=False,
            )
            return
        tt = self.t.clamp(min=1)
        bc1 = 1 - self.b1**tt
        bc2 = 1 - self.b2**tt
        step_size = (self.lr / bc1).to(params[0].dtype)
        bc2_sqrt = bc2.sqrt().to(params[0].dtype)
        for i, (p, g) in enumerate(zip(params, grads)):
            shape = self.kshape[i]
            if self.wd:
                g = g + self.wd * p
            m, v = self.m[i], self.v[i]
            if all_active:
                m.lerp_(g, 1 - self.b1)
                v.mul_(self.b2).addcmul_(g, g, value=1 - self.b2)
                denom = (v.sqrt() / bc2_sqrt.view(shape)).add_(self.eps)
                p.addcdiv_(m * step_size.view(shape), denom, value=-1.0)
            else:
                act = active.view(shape)
                m.copy_(torch.where(act, torch.lerp(m, g, 1 - self.b1), m))
                v.copy_(torch.where(act, v * self.b2 + (1 - self.b2) * g * g, v))
                denom = (v.sqrt() / bc2_sqrt.view(shape)).add_(self.eps)
                p.copy_(torch.where(act, p - (m * step_size.view(shape)) / denom, p))

    def weights(self):
        """Trained (Ws, bs) as numpy, weights in (K, n_in, n_out) layout."""
        Ws = list(self.Ws)
        if self.shared:
            Ws[0] = Ws[0].permute(1, 0, 2).contiguous()
        return [W.numpy() for W in Ws], [b.numpy() for b in self.bs]

    def run(self, steps: Iterable) -> None:
        """Run the steps: items are ``("gathered", idx)`` or ``("shared", rows, member)``."""
        with self.torch.no_grad():
            for item in steps:
                if item[0] == "gathered":
                    self.step_gathered(item[1])
                else:
                    self.step_shared(item[1], item[2])
