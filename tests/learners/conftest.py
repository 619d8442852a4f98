import numpy as np
import pytest


@pytest.fixture(scope="module")
def one_torch_thread():
    """The oracles run plain torch; one intra-op thread keeps them fast on a shared 2-core machine."""
    import torch

    old = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(old)


@pytest.fixture(scope="module")
def data():
    """30 rows: 2 numeric columns + a one-hot group of 4 (a sparse first layer applies), 3 classes."""
    rng = np.random.default_rng(0)
    n = 30
    X = np.zeros((n, 6))
    X[:, :2] = rng.normal(size=(n, 2))
    X[np.arange(n), 2 + rng.integers(0, 4, n)] = 1.0
    return X, rng.integers(0, 3, n)
