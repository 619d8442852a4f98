"""TorchCNN: grouped-convolution batched training equals one-at-a-time nn.Module training."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from leakaudit.exceptions import InvalidInputError, InvalidParameterError  # noqa: E402
from leakaudit.learners import TorchCNN  # noqa: E402
from leakaudit.learners.torch_cnn import _Net  # noqa: E402

pytestmark = pytest.mark.usefixtures("one_torch_thread")  # fixture in conftest.py


SHAPE = (1, 16, 16)  # small images keep the tests fast; 16 -> 14 -> 12 -> 6 -> 4 -> 2 -> 1 (valid padding)


@pytest.fixture(scope="module")
def images():
    rng = np.random.default_rng(0)
    X = rng.random((24, *SHAPE))
    y = rng.integers(0, 3, 24)
    return X, y


def oracle_cnn(X, y, subset, seed, *, size, epochs, batch_size, lr=0.001, betas=(0.5, 0.99), eps=1e-8, decay=5e-4,
               dtype="float64", n_classes=3, padding="valid"):
    """nn.Sequential + autograd + torch.optim.Adam + LambdaLR (Keras decay), same seed contract."""
    nn = torch.nn
    tdt = getattr(torch, dtype)
    rng = np.random.default_rng(seed)
    net_def = _Net(torch, SHAPE, size, n_classes, padding)
    P = net_def.init(rng, np.dtype(dtype))
    pad = 0 if padding == "valid" else 1
    s = size
    layers = [nn.Conv2d(1, s, 3, padding=pad), nn.ReLU(), nn.Conv2d(s, s, 3, padding=pad), nn.ReLU(), nn.MaxPool2d(2),
              nn.Conv2d(s, 2 * s, 3, padding=pad), nn.ReLU(), nn.Conv2d(2 * s, 2 * s, 3, padding=pad), nn.ReLU(),
              nn.MaxPool2d(2), nn.Flatten(), nn.Linear(net_def.flat, 2 * s), nn.ReLU(), nn.Linear(2 * s, n_classes)]
    net = nn.Sequential(*layers).to(tdt)
    params = [m for m in net if isinstance(m, (nn.Conv2d, nn.Linear))]
    with torch.no_grad():
        for i, mod in enumerate(params):
            W = torch.from_numpy(P[2 * i])
            mod.weight.copy_(W.T if isinstance(mod, nn.Linear) else W)
            mod.bias.copy_(torch.from_numpy(P[2 * i + 1]))
    opt = torch.optim.Adam(net.parameters(), lr=lr, betas=betas, eps=eps)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda it: 1.0 / (1.0 + decay * it))
    Xt = torch.from_numpy(X).to(tdt)
    yt = torch.from_numpy(y)
    for _ in range(epochs):
        perm = subset[rng.permutation(subset.size)]
        for i in range(0, perm.size, batch_size):
            b = torch.from_numpy(perm[i : i + batch_size])
            opt.zero_grad()
            loss = torch.nn.functional.cross_entropy(net(Xt[b]), yt[b])
            loss.backward()
            opt.step()
            sched.step()
    out = []
    for mod in params:
        W = mod.weight.detach()
        out += [(W.T if isinstance(mod, nn.Linear) else W).numpy(), mod.bias.detach().numpy()]
    return out


@pytest.mark.parametrize("dtype,tol", [("float64", 1e-10), ("float32", 1e-4)])
def test_fit_many_equals_one_at_a_time(images, dtype, tol):
    X, y = images
    subsets = [np.arange(24), np.arange(3, 14), np.array([0, 5, 9, 20, 22])]  # sizes 24, 11, 5 (partial batches)
    seeds = [4, 5, 6]
    L = TorchCNN(size=2, epochs=2, batch_size=8, image_shape=SHAPE, dtype=dtype, lr=0.01)
    bank = L.fit_many(X, y, subsets, seeds)
    for k, (s, seed) in enumerate(zip(subsets, seeds)):
        ref = oracle_cnn(X, y, s, seed, size=2, epochs=2, batch_size=8, lr=0.01, dtype=dtype)
        err = max(np.abs(r - w[k]).max() for r, w in zip(ref, bank.weights_))
        assert err < tol
        init = _Net(torch, SHAPE, 2, 3, "valid").init(np.random.default_rng(seed), np.dtype(dtype))
        assert max(np.abs(r - i).max() for r, i in zip(ref, init)) > 1e-3  # it trained


def test_fit_equals_fit_many_and_same_seed_is_bit_identical(images):
    X, y = images
    L = TorchCNN(size=2, epochs=1, batch_size=8, image_shape=SHAPE)
    loo = [np.delete(np.arange(24), k) for k in range(2)]
    bank = L.fit_many(X.reshape(24, -1), y, loo, [1, 2], n_classes=4)  # flattened input works too
    P = bank.predict_proba(X)
    assert P.shape == (2, 24, 4)
    np.testing.assert_allclose(P.sum(-1), 1.0, atol=1e-12)
    for k in range(2):
        m = L.fit(X[loo[k]], y[loo[k]], random_state=k + 1, n_classes=4)
        # grouped convolutions over 2 models sum in another order than over 1: equal up to float32 rounding
        for a, b in zip(m.weights_, bank.model(k).weights_):
            np.testing.assert_allclose(a, b, rtol=0, atol=1e-6)
        np.testing.assert_allclose(m.predict_proba(X), P[k], rtol=1e-6, atol=1e-7)
    again = L.fit_many(X, y, loo, [1, 2], n_classes=4)
    for a, b in zip(again.weights_, bank.weights_):
        np.testing.assert_array_equal(a, b)


def test_chunks_and_threads(images):
    """fit_many trains chunks of models_per_chunk on n_threads threads: any thread count gives the same models bit
    for bit; chunks of one model give fit()'s models bit for bit; other chunkings agree to float32 rounding."""
    X, y = images
    subsets = [np.arange(24), np.arange(3, 14), np.array([0, 5, 9, 20, 22]), np.arange(0, 24, 2), np.arange(10)]
    seeds = [4, 5, 6, 7, 8]

    def run(per, threads):
        L = TorchCNN(size=2, epochs=1, batch_size=8, image_shape=SHAPE, n_threads=threads)
        L.models_per_chunk = per
        return L.fit_many(X, y, subsets, seeds, n_classes=4).weights_

    one = run(2, 1)
    for a, b in zip(one, run(2, 2)):
        np.testing.assert_array_equal(a, b)
    singles = run(1, 2)
    for k, (s, seed) in enumerate(zip(subsets, seeds)):
        m = TorchCNN(size=2, epochs=1, batch_size=8, image_shape=SHAPE).fit(X[s], y[s], random_state=seed, n_classes=4)
        for a, b in zip(m.weights_, singles):
            np.testing.assert_array_equal(a, b[k])
    for a, b in zip(one, run(5, 1)):
        np.testing.assert_allclose(a, b, rtol=0, atol=1e-6)


def test_bad_inputs(images):
    X, y = images
    L = TorchCNN(size=1, epochs=1, image_shape=SHAPE)
    with pytest.raises(InvalidInputError, match="images of shape"):
        L.fit(X[:, :, :10], y)
    Xn = X.copy()
    Xn[0, 0, 0, 0] = np.nan
    with pytest.raises(InvalidInputError, match="NaN"):
        L.fit(Xn, y)
    with pytest.raises(InvalidInputError, match=r"subsets\[0\]"):
        L.fit_many(X, y, [np.array([], dtype=int)], [0])
    with pytest.raises(InvalidParameterError, match="size"):
        TorchCNN(size=0).fit(X, y)
    with pytest.raises(InvalidInputError, match="too small"):
        TorchCNN(size=1, image_shape=(1, 5, 5)).fit(np.zeros((4, 25)), [0, 1, 0, 1])


@pytest.mark.slow
def test_fashion_mnist_learns():
    """s=8, 2,000 Fashion-MNIST training images, 3 epochs: at least 4x chance (10%) on 1,000 test images.

    (Measured 0.62 test / 0.64 train accuracy; the bound only checks that training works.)
    """
    from leakaudit.data import load_fashion_mnist

    tr, te = load_fashion_mnist("train"), load_fashion_mnist("test")
    bank = TorchCNN(size=8, epochs=3).fit_many(tr.X[:2000], tr.y[:2000], [np.arange(2000)], [0], n_classes=10)
    acc = (bank.predict_proba(te.X[:1000])[0].argmax(1) == te.y[:1000]).mean()
    assert acc > 0.4
