"""Helpers shared by the learner tests (imported as a plain module: tests/ is on sys.path)."""

import numpy as np

#: Python source that makes ``import torch`` fail in a subprocess (prepend to the subprocess's code)
BLOCK_TORCH = r"""
import sys, importlib.abc
class Block(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name == "torch" or name.startswith("torch."):
            raise ImportError("torch blocked by the test")
sys.meta_path.insert(0, Block())
"""


def adult_like(n, seed=0):
    """n rows shaped like Adult: 5 numeric columns + 8 one-hot groups (107 inputs, 13 non-zero), binary y."""
    rng = np.random.default_rng(seed)
    X = np.zeros((n, 107))
    X[:, :5] = rng.normal(size=(n, 5))
    o = 5
    for w in [9, 16, 7, 15, 6, 5, 2, 42]:
        X[np.arange(n), o + rng.integers(0, w, n)] = 1
        o += w
    return X, (X[:, 0] + X[:, 5] > 0).astype(int)
