"""Batched MLP training in eager PyTorch: K models with stacked weights, no autograd.

Each step every model takes one (mini-)batch of its own rows, given as an index
tensor of shape (K, B) padded with -1; a model whose batch is all padding does
not move (its SGD/Adam state is untouched). The loss of model k is the mean NLL
over its real rows, so a padded batch equals the shorter batch the plain
trainer would take (a DataLoader's last partial batch).

Two layouts:

* gathered (any per-model orders): x of shape (K, B, d), layers by ``bmm``;
* shared (all models see the same rows, each masks the rows outside its
  subset): the first layer of all models is one GEMM, ``x (B, d) @ W1 (d, K*h)``,
  and its weight gradient too.

Backprop is by hand, in ``torch.optim.SGD`` / ``torch.optim.Adam`` order (all
gradients at the old weights, then the update), so results match the
per-model autograd oracle (``_torch_utils.naive_train_mlp``) up to rounding.

Throughput (``benchmarks/train_many.py``, ``benchmarks/bench_machine_limit.py``):

* the first layer's bias is the weight row of a constant-1 input column
  appended to X, so its forward add and its gradient (a row sum) come out of
  the first layer's two matrix products;
* all parameters of all K models live in ONE flat tensor (and their gradients
  in a second one, with the same views), so Adam is a single call of PyTorch's
  fused CPU kernel and SGD one ``add_``;
* every per-step temporary is preallocated once per batch shape and written
  with ``out=`` / in-place ops (fresh multi-MB tensors cost page faults);
* the output layer works in a (K, C, B) layout, so the softmax reduces over a
  short strided axis with long contiguous rows (torch's last-axis softmax over
  C = 2 is much slower).

This is the reference trainer of :class:`~leakaudit.learners.TorchMLP` (every
configuration the compiled kernel does not train, and its test oracle): torch's
own operators throughout, tanh included.

Devices. The weights, X and y may live on any one device (a CUDA GPU): every
parameter, moment and buffer is made on the weights' device. The step's index
tensors come from the caller on the CPU; what decides whether a step is padded
(the mask, the per-model step counts, the Adam bias corrections) is computed
there and only its results are copied to the device.
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
        On the weights' device.
    activation : {"tanh", "relu"}
    optimizer : {"sgd", "adam"}
    shared : bool
        Keep the first layer as (d, K, h) for ``step_shared``.
    logistic : bool
        Two classes, one logistic unit: class 0's logit gets no gradient (its
        weights, initialised at 0, stay 0), so ``p_1 = sigmoid(l_1)``.
    """

    def __init__(self, Ws, bs, X, y, *, activation, optimizer, lr, weight_decay=0.0, betas=(0.9, 0.999), eps=1e-8,
                 shared=False, logistic=False):
        torch = import_torch()
        self.torch = torch
        self.K = K = Ws[0].shape[0]
        self.L = len(Ws)
        self.shared = bool(shared)
        self.sizes = [Ws[0].shape[1]] + [W.shape[2] for W in Ws]
        dtype = Ws[0].dtype
        self.dtype = dtype
        self.device = device = Ws[0].device
        # one flat tensor for all parameters, one for their gradients; per-layer views into both
        total = sum(W.numel() + b.numel() for W, b in zip(Ws, bs))
        self.flat = torch.empty(total, dtype=dtype, device=device)
        self.gflat = torch.zeros(total, dtype=dtype, device=device)
        self.Ws, self.bs, self.gWs, self.gbs = [], [], [], []
        self.kshape = []  # shape that broadcasts a per-model (K,) vector against each view (W0, b0, W1, ...)
        pos = 0
        for l, (W, b) in enumerate(zip(Ws, bs)):
            nin, nout = W.shape[1], W.shape[2]
            n = W.numel() + b.numel()
            if l == 0:  # weights and bias as one (d + 1)-row matrix per model: the bias is input d's row
                if self.shared:  # (d + 1, K, h): all models' weights of one input are one row
                    P, G = (f[pos : pos + n].view(nin + 1, K, nout) for f in (self.flat, self.gflat))
                    self.W0b, self.gW0b = P, G
                    views = [(P[:nin], G[:nin], W.permute(1, 0, 2), (1, -1, 1)), (P[nin], G[nin], b, (-1, 1))]
                else:
                    P, G = (f[pos : pos + n].view(K, nin + 1, nout) for f in (self.flat, self.gflat))
                    self.W0b, self.gW0b = P, G
                    views = [(P[:, :nin], G[:, :nin], W, (-1, 1, 1)), (P[:, nin], G[:, nin], b, (-1, 1))]
            else:
                P, G = (f[pos : pos + W.numel()] for f in (self.flat, self.gflat))
                Pb, Gb = (f[pos + W.numel() : pos + n] for f in (self.flat, self.gflat))
                if l == self.L - 1:  # output layer stored transposed, (K, C, h): see _head
                    self.WLT, self.gWLT = P.view(K, nout, nin), G.view(K, nout, nin)
                    P, G = self.WLT.transpose(1, 2), self.gWLT.transpose(1, 2)
                else:
                    P, G = P.view(K, nin, nout), G.view(K, nin, nout)
                views = [(P, G, W, (-1, 1, 1)), (Pb.view(K, nout), Gb.view(K, nout), b, (-1, 1))]
            for (pv, gv, src, ks), (plist, glist) in zip(views, [(self.Ws, self.gWs), (self.bs, self.gbs)]):
                pv.copy_(src)
                plist.append(pv)
                glist.append(gv)
                self.kshape.append(ks)
            pos += n
        self.params = [p for pair in zip(self.Ws, self.bs) for p in pair]
        self.grads = [g for pair in zip(self.gWs, self.gbs) for g in pair]
        self.X = X.contiguous()
        # X with a constant-1 column: the first layer's bias is that column's weight row
        self.X1 = torch.cat([self.X, torch.ones(X.shape[0], 1, dtype=X.dtype, device=X.device)], dim=1)
        self.y = y
        self.C = self.sizes[-1]
        self.activation = activation
        self.optimizer = optimizer
        self.lr = float(lr)
        self.wd = float(weight_decay)
        self.b1, self.b2 = float(betas[0]), float(betas[1])
        self.eps = float(eps)
        self.logistic = bool(logistic)
        if optimizer == "adam":
            self.m = torch.zeros_like(self.flat)
            self.v = torch.zeros_like(self.flat)
            self.t = torch.zeros(K, dtype=torch.float64)  # per-model step counts, on the CPU
            self._step_t = torch.zeros((), dtype=torch.float32, device=device)
        self._buffers: dict = {}

    # -- preallocated temporaries -------------------------------------------
    def _buf(self, name, shape, dtype=None):
        key = (name, shape)
        t = self._buffers.get(key)
        if t is None:
            t = self._buffers[key] = self.torch.empty(shape, dtype=dtype or self.dtype, device=self.device)
        return t

    # -- forward/backward pieces ------------------------------------------------
    def _act_(self, z):
        """Activation in place (torch's own tanh or relu)."""
        if self.activation != "tanh":
            return z.relu_()
        return z.tanh_()

    def _act_grad(self, gh, a, out):
        """out = d loss / d pre-activation = gh * act'(.), from the activation's output a (any layouts).

        Autograd's own kernels (one pass): tanh' = 1 - a^2, relu' = [a > 0].
        """
        aten = self.torch.ops.aten
        if self.activation == "tanh":
            return aten.tanh_backward.grad_input(gh, a, grad_input=out)
        return aten.threshold_backward.grad_input(gh, a, 0, grad_input=out)

    def _output_grad(self, lgT, yb, w, B):
        """d(mean NLL)/d logits = (softmax - onehot(y)) * w, all in (K, C, B) layout.

        lgT : logits (K, C, B) (any strides); yb : labels (K, B); w : None (every row
        real: weight 1/B) or (K, 1, B) per-row weights mask/count.
        """
        torch = self.torch
        K = lgT.shape[0]
        g = torch.softmax(lgT, dim=1)  # over C, with contiguous rows of B (a last-axis softmax over C=2 is slower)
        g.scatter_add_(1, yb.unsqueeze(1), self._buf("neg1", (K, 1, B)).fill_(-1.0))
        if self.logistic:  # one logistic unit: class 0's logit is held at 0 (no gradient)
            g[:, 0].zero_()
        return g.mul_(1.0 / B) if w is None else g.mul_(w)

    def _head(self, a, yb, w, K, B):
        """Output layer forward + backward from the last hidden activations a (K, B, h), any strides.

        Fills the output layer's gradients and returns d loss / d a (K, B, h) (a preallocated buffer).
        The layer is stored transposed, W^T (K, C, h): with C as small as 2, these three products
        then run faster than in the (K, B, C) layout (benchmarks/README.md).
        """
        torch = self.torch
        lgT = self._buf("logits", (K, self.C, B))
        torch.baddbmm(self.bs[-1].unsqueeze(2), self.WLT, a.transpose(1, 2), out=lgT)
        gT = self._output_grad(lgT, yb, w, B)
        torch.sum(gT, 2, out=self.gbs[-1])
        torch.bmm(gT, a, out=self.gWLT)
        gh = self._buf("gh_last", (K, B, self.WLT.shape[2]))
        torch.bmm(gT.transpose(1, 2), self.WLT, out=gh)
        return gh

    def _hidden_forward(self, a0, K, B):
        """Layers 1 .. L-2 (hidden to hidden); returns the list of activations [a0, a1, ...]."""
        torch = self.torch
        acts = [a0]
        for l in range(1, self.L - 1):
            z = self._buf(f"z{l}", (K, B, self.sizes[l + 1]))
            torch.baddbmm(self.bs[l].unsqueeze(1), acts[-1], self.Ws[l], out=z)
            acts.append(self._act_(z))
        return acts

    def _hidden_backward(self, acts, gh, K, B):
        """Backprop through layers L-2 .. 1; returns d loss / d (first layer's pre-activation)."""
        torch = self.torch
        for l in range(self.L - 2, 0, -1):
            gz = self._buf(f"gz{l}", tuple(gh.shape))
            self._act_grad(gh, acts[l], gz)
            torch.sum(gz, 1, out=self.gbs[l])
            torch.bmm(acts[l - 1].transpose(1, 2), gz, out=self.gWs[l])
            gh = self._buf(f"gh{l}", (K, B, self.sizes[l]))
            torch.bmm(gz, self.Ws[l].transpose(1, 2), out=gh)
        return gh

    def _on_device(self, t):
        """``t`` (a CPU tensor, or None) on the trainer's device (itself on the CPU)."""
        return t if t is None else t.to(self.device)

    @staticmethod
    def _weights_of(idx, dtype):
        """(full, w, active): per-row loss weights mask/count as (K, 1, B), or None when no row is padding.

        ``idx`` on the CPU; so are the results."""
        if int(idx.min()) >= 0:
            return True, None, None
        mask = idx >= 0
        count = mask.sum(1)
        w = mask.to(dtype) / count.clamp(min=1).to(dtype).unsqueeze(1)
        return False, w.unsqueeze(1), count > 0

    def step_gathered(self, idx) -> None:
        """One step; ``idx`` (K, B) int64 rows per model (on the CPU), -1 = padding."""
        torch = self.torch
        K, B = idx.shape
        full, w, active = self._weights_of(idx, self.dtype)
        safe = self._on_device(idx if full else idx.clamp(min=0))
        w = self._on_device(w)
        d1, h1 = self.sizes[0] + 1, self.sizes[1]
        z = self._buf("z0", (K, B, h1))
        x = self._buf("x", (K, B, d1))  # [x, 1] @ [W; b]
        torch.index_select(self.X1, 0, safe.reshape(-1), out=x.view(K * B, d1))
        torch.bmm(x, self.W0b, out=z)
        if self.L == 1:  # no hidden layer: z are the logits
            gz = self._buf("gz0", (K, B, h1))
            gz.copy_(self._output_grad(z.transpose(1, 2), self.y[safe], w, B).transpose(1, 2))
        else:
            acts = self._hidden_forward(self._act_(z), K, B)
            gh = self._head(acts[-1], self.y[safe], w, K, B)
            gh = self._hidden_backward(acts, gh, K, B)
            gz = self._act_grad(gh, acts[0], self._buf("gz0", (K, B, h1)))
        # [x, 1]^T @ gz: weight gradient and (last row) bias gradient
        torch.bmm(x.transpose(1, 2), gz, out=self.gW0b)
        self._update(active)

    def step_shared(self, rows, member) -> None:
        """One step where every model sees ``rows`` (B,), masked by ``member`` (K, B) bool (both on the CPU)."""
        torch = self.torch
        K = self.K
        B = rows.shape[0]
        d, h = self.sizes[0], self.sizes[1]
        if bool(member.all()):
            w, active = None, None
        else:
            count = member.sum(1)
            active = count > 0
            w = (member.to(self.dtype) / count.clamp(min=1).to(self.dtype).unsqueeze(1)).unsqueeze(1)
            if bool(active.all()):
                active = None
        rows, w = self._on_device(rows), self._on_device(w)
        # first layer for all models at once: (B, d) @ (d, K*h) -> (B, K*h)
        zc = self._buf("zc", (B, K * h))
        W0b = self.W0b.view(d + 1, K * h)
        x = self._buf("xs", (B, d + 1))  # [x, 1] @ [W; b]
        torch.index_select(self.X1, 0, rows, out=x)
        torch.mm(x, W0b, out=zc)
        yb = self.y[rows].expand(K, B)
        gzc = self._buf("gzc", (B, K * h))  # the first layer's gradient in the (B, K*h) layout of its GEMM
        if self.L == 1:  # no hidden layer: zc are the logits
            gzc.view(B, K, h).copy_(self._output_grad(zc.view(B, K, h).permute(1, 2, 0), yb, w, B).permute(2, 0, 1))
        else:
            a1 = self._act_(zc).view(B, K, h).transpose(0, 1)  # (K, B, h), strided
            acts = self._hidden_forward(a1, K, B)
            gh = self._head(acts[-1], yb, w, K, B)
            gh = self._hidden_backward(acts, gh, K, B)
            self._act_grad(gh, a1, gzc.view(B, K, h).transpose(0, 1))
        gW0b = self.gW0b.view(d + 1, K * h)
        torch.mm(x.t(), gzc, out=gW0b)
        self._update(active)

    # -- optimizers -----------------------------------------------------------
    def _update(self, active) -> None:
        """Optimizer step; ``active`` (K,) bool on the CPU, or None (every model takes the step)."""
        torch = self.torch
        act_d = self._on_device(active)
        if self.optimizer == "sgd":
            if active is None:
                g = self.gflat if not self.wd else torch.add(self.gflat, self.flat, alpha=self.wd)
                self.flat.sub_(self.lr * g)
                return
            for i, (p, g) in enumerate(zip(self.params, self.grads)):
                if self.wd:
                    g = g + self.wd * p
                p.sub_(self.lr * (g * act_d.view(self.kshape[i]).to(g.dtype)))
            return
        # Adam (torch.optim.Adam): per-model step counts
        self.t += 1.0 if active is None else active.to(torch.float64)
        if active is None and hasattr(torch, "_fused_adam_") and bool((self.t == self.t[0]).all()):
            # every model takes the same step: PyTorch's fused Adam kernel (CPU or CUDA), one pass over the flat tensor
            self._step_t.fill_(float(self.t[0]))
            torch._fused_adam_(
                [self.flat], [self.gflat], [self.m], [self.v], [], [self._step_t],
                lr=self.lr, beta1=self.b1, beta2=self.b2, weight_decay=self.wd, eps=self.eps,
                amsgrad=False, maximize=False,
            )
            return
        tt = self.t.clamp(min=1)
        bc1 = 1 - self.b1**tt
        bc2 = 1 - self.b2**tt
        step_size = self._on_device((self.lr / bc1).to(self.dtype))
        bc2_sqrt = self._on_device(bc2.sqrt().to(self.dtype))
        for i, (p, g) in enumerate(zip(self.params, self.grads)):
            # the moments of p: the same (possibly strided) view into the moment tensors
            m = self.m.as_strided(p.shape, p.stride(), p.storage_offset())
            v = self.v.as_strided(p.shape, p.stride(), p.storage_offset())
            shape = self.kshape[i]
            if self.wd:
                g = g + self.wd * p
            if active is None:
                m.lerp_(g, 1 - self.b1)
                v.mul_(self.b2).addcmul_(g, g, value=1 - self.b2)
                denom = (v.sqrt() / bc2_sqrt.view(shape)).add_(self.eps)
                p.addcdiv_(m * step_size.view(shape), denom, value=-1.0)
            else:
                act = act_d.view(shape)
                m.copy_(torch.where(act, torch.lerp(m, g, 1 - self.b1), m))
                v.copy_(torch.where(act, v * self.b2 + (1 - self.b2) * g * g, v))
                denom = (v.sqrt() / bc2_sqrt.view(shape)).add_(self.eps)
                p.copy_(torch.where(act, p - (m * step_size.view(shape)) / denom, p))

    def weights(self):
        """Trained (Ws, bs) as numpy copies (in host memory), weights in (K, n_in, n_out) layout."""
        Ws = [W.permute(1, 0, 2) if (self.shared and l == 0) else W for l, W in enumerate(self.Ws)]
        return ([W.contiguous().cpu().clone().numpy() for W in Ws],
                [b.contiguous().cpu().clone().numpy() for b in self.bs])

    def run(self, steps: Iterable) -> None:
        """Run the steps: items are ``("gathered", idx)`` or ``("shared", rows, member)``, index tensors on the CPU."""
        with self.torch.no_grad():
            for item in steps:
                if item[0] == "gathered":
                    self.step_gathered(item[1])
                else:
                    self.step_shared(item[1], item[2])
