"""A batched fully connected network trainer: K small MLPs trained at once with batched matmuls.

Used for the paper's MLP experiments (Census random MLP 32-16-8, Table II's
depth sweep) and for Ganju et al.'s white-box baseline, which needs the
weights. Spec Sec. 4.4 [Choice]: ReLU, Adam (lr 1e-3), batch 64, binary
cross-entropy (as 2-class softmax), ``epochs`` passes. Each model gets its own
initialisation and minibatch order from its seed; models whose subsets differ
in size are padded with zero-weight rows, which changes nothing in their
gradients.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import scipy.sparse as sp

from .._validation import check_scalar
from ..exceptions import InvalidInputError
from ..learners import Learner, ModelBank
from ..learners._base import resolve_seeds

__all__ = ["BatchedMLPLearner", "MLPBank"]


class _one_thread:
    """Run torch with one intra-op thread, then restore (2.6 s against 14 s for 400 small steps
    on the shared 2-core machine)."""

    def __enter__(self):
        import torch

        self.old = torch.get_num_threads()
        torch.set_num_threads(1)
        return self

    def __exit__(self, *exc):
        import torch

        torch.set_num_threads(self.old)
        return False


def _dense(X) -> np.ndarray:
    return X.toarray() if sp.issparse(X) else np.asarray(X, dtype=np.float64)


class MLPBank(ModelBank):
    """K trained MLPs. ``weights[l]`` has shape (K, fan_in, fan_out), ``biases[l]`` (K, fan_out)."""

    accepts_sparse = True

    def __init__(self, weights: list[np.ndarray], biases: list[np.ndarray]):
        self.weights = weights
        self.biases = biases
        self.n_models = weights[0].shape[0]
        self.n_classes = 2

    def __len__(self) -> int:
        return self.n_models

    def predict_proba(self, X: Any) -> np.ndarray:
        """Probabilities, shape (K, n_samples, 2)."""
        import torch

        with torch.no_grad(), _one_thread():
            h = torch.as_tensor(_dense(X), dtype=torch.float32)
            h = h.unsqueeze(0).expand(self.n_models, -1, -1)
            for i, (W, b) in enumerate(zip(self.weights, self.biases)):
                W_t, b_t = torch.as_tensor(W, dtype=torch.float32), torch.as_tensor(b, dtype=torch.float32)
                h = torch.bmm(h, W_t) + b_t[:, None, :]
                if i < len(self.weights) - 1:
                    h = torch.relu(h)
            return torch.softmax(h, dim=-1).double().numpy()

    def model(self, k: int) -> MLPBank:
        return MLPBank([w[k : k + 1] for w in self.weights], [b[k : k + 1] for b in self.biases])


class BatchedMLPLearner(Learner):
    """K fully connected ReLU networks trained together (Adam, minibatches, cross-entropy).

    Parameters
    ----------
    hidden : tuple of int, default=(32, 16, 8)
        Hidden layer sizes (the paper's Census MLP).
    epochs : int, default=50
    lr : float, default=1e-3
    batch_size : int, default=64
    weight_decay : float, default=0.0
    """

    def __init__(self, *, hidden: tuple[int, ...] = (32, 16, 8), epochs: int = 50, lr: float = 1e-3,
                 batch_size: int = 64, weight_decay: float = 0.0):
        self.hidden = hidden
        self.epochs = epochs
        self.lr = lr
        self.batch_size = batch_size
        self.weight_decay = weight_decay

    accepts_sparse = True

    def _fit(self, X, y, *, random_state, n_classes):
        return self.fit_many(X, y, [np.arange(len(y))], [int(random_state or 0)])

    def fit_many(self, X: Any, y: Any, subsets: Sequence[Any], random_states=None, *, n_classes=None) -> MLPBank:
        """Train one network per subset (rows of X, y); X may be sparse. Returns an :class:`MLPBank`."""
        with _one_thread():
            return self._train(X, y, subsets, random_states)

    def _train(self, X, y, subsets, random_states) -> MLPBank:
        import torch

        check_scalar(self.epochs, name="epochs", kind=(int, np.integer), min_val=1)
        check_scalar(self.batch_size, name="batch_size", kind=(int, np.integer), min_val=1)
        y = np.asarray(y)
        if not np.isin(y, (0, 1)).all():
            raise InvalidInputError("y must hold binary labels 0/1 for BatchedMLPLearner")
        if len(subsets) == 0:
            raise InvalidInputError("subsets is empty; give at least one index subset")
        seeds = resolve_seeds(random_states, len(subsets))
        subsets = [np.asarray(s, dtype=np.int64) for s in subsets]
        used, inverse = np.unique(np.concatenate(subsets), return_inverse=True)
        Xd = _dense(X[used]).astype(np.float32)  # only the rows some model trains on
        y = y[used]
        pieces = np.cumsum([0] + [s.size for s in subsets])
        subsets = [inverse[a:b] for a, b in zip(pieces[:-1], pieces[1:])]
        K, d = len(subsets), Xd.shape[1]
        n_max = max(s.size for s in subsets)
        idx = np.zeros((K, n_max), dtype=np.int64)
        mask = np.zeros((K, n_max), dtype=np.float32)
        for k, s in enumerate(subsets):
            idx[k, : s.size], mask[k, : s.size] = s, 1.0
        gens = [torch.Generator().manual_seed(int(s)) for s in seeds]
        sizes = [d, *map(int, self.hidden), 2]
        Ws, bs = [], []
        for fi, fo in zip(sizes[:-1], sizes[1:]):
            bound = 1.0 / np.sqrt(fi)  # PyTorch's default nn.Linear initialisation range
            Ws.append(torch.stack([(torch.rand(fi, fo, generator=g) * 2 - 1) * bound for g in gens]).requires_grad_())
            bs.append(torch.stack([(torch.rand(fo, generator=g) * 2 - 1) * bound for g in gens]).requires_grad_())
        opt = torch.optim.Adam(Ws + bs, lr=self.lr, weight_decay=self.weight_decay)
        Xt, yt = torch.as_tensor(Xd), torch.as_tensor(y, dtype=torch.long)
        idx_t, mask_t = torch.as_tensor(idx), torch.as_tensor(mask)
        orders = [np.random.default_rng(s) for s in seeds]
        B = int(self.batch_size)
        for _ in range(int(self.epochs)):
            perm = torch.as_tensor(np.stack([o.permutation(n_max) for o in orders]))
            for start in range(0, n_max, B):
                cols = perm[:, start : start + B]
                rows = torch.gather(idx_t, 1, cols)
                w = torch.gather(mask_t, 1, cols)
                if float(w.sum()) == 0:
                    continue
                h = Xt[rows]  # (K, B, d)
                for i, (W, b) in enumerate(zip(Ws, bs)):
                    h = torch.bmm(h, W) + b[:, None, :]
                    if i < len(Ws) - 1:
                        h = torch.relu(h)
                loss_each = torch.nn.functional.cross_entropy(h.reshape(-1, 2), yt[rows].reshape(-1), reduction="none")
                # per-model mean over its real rows; summing over models keeps the models independent
                loss = ((loss_each.view(K, -1) * w).sum(1) / w.sum(1).clamp_min(1)).sum()
                opt.zero_grad()
                loss.backward()
                opt.step()
        return MLPBank([W.detach().numpy().copy() for W in Ws], [b.detach().numpy().copy() for b in bs])
