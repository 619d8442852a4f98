"""TorchMLP fast mode: the compiled kernel = the torch fast path (its reference) = torch.optim one model at a time.

Tolerances. Both paths run the same algorithm from the same inits and row orders; they differ
per step only by float rounding: the kernel's float32 tanh is a rational approximation
(<= 4.4 ulp), sums run in another order, and FMAs fuse. After the <= 24 optimizer steps of these
tests (lr 0.01) the weights differ by ~1e-7 in float32 (measured max 9e-8 for weights of size
~0.5, i.e. a couple of ulp) and by ~1e-15 in float64. We allow 2e-6 (float32) and 1e-11
(float64): 20x and 10^4x margins. A real difference in the algorithm moves weights by far more:
a skipped or extra step, another row order, a wrong bias correction or weight decay by ~lr
(Adam's steps have size ~lr = 0.01); a wrong gradient scale (e.g. the mean's denominator) by
~lr * |g| in the SGD cases (Adam is invariant to the gradient's scale, up to eps and weight
decay, so the SGD and weight-decay cases are what catch that).
"""

import subprocess
import sys

import numpy as np
import pytest
from _learner_helpers import BLOCK_TORCH, adult_like  # noqa: E402

from leakaudit.exceptions import InvalidParameterError  # noqa: E402
from leakaudit.learners import TorchMLP  # noqa: E402
from leakaudit.learners._mlp_native import aligned_rows, csr_rows, pack_1h, unpack_1h  # noqa: E402
from leakaudit.learners._torch_utils import init_mlp, naive_train_mlp  # noqa: E402

TOL = {"float32": 2e-6, "float64": 1e-11}

SUBSETS = [np.arange(30), np.arange(5, 22), np.array([3, 17, 4, 29, 11, 0, 8, 21, 13])]  # 30, 17, 9 rows
SEEDS = [5, 6, 7]


def max_diff(a, b):
    return max(max(np.abs(x - y).max() for x, y in zip(a.weights_, b.weights_)),
               max(np.abs(x - y).max() for x, y in zip(a.biases_, b.biases_)))


def assert_same_bank(a, b):
    for l in range(len(a.weights_)):
        np.testing.assert_array_equal(a.weights_[l], b.weights_[l])
        np.testing.assert_array_equal(a.biases_[l], b.biases_[l])


@pytest.mark.usefixtures("one_torch_thread")
@pytest.mark.parametrize("optimizer", ["adam", "sgd"])
@pytest.mark.parametrize("order", ["independent", "shared"])
def test_torch_fast_path_equals_torch_optim_one_model_at_a_time(data, optimizer, order):
    """The batched torch trainer (float64 nets: the compiled kernel trains float32 only) against nn.Module +
    autograd + torch.optim.Adam/SGD, one model at a time."""
    pytest.importorskip("torch")
    X, y = data
    epochs, B = 3, 4
    bank = TorchMLP(hidden=(8,), mode="fast", epochs=epochs, batch_size=B, lr=0.01, dtype="float64", order=order,
                    optimizer=optimizer, weight_decay=0.003).fit_many(X, y, SUBSETS, SEEDS)
    assert bank.info["backend"] == bank.info["kernel"] == "torch"
    perms = None
    if order == "shared":
        union = np.unique(np.concatenate(SUBSETS))
        srng = np.random.default_rng(np.random.SeedSequence(SEEDS))
        perms = [union[srng.permutation(union.size)] for _ in range(epochs)]
    for k, (s, seed) in enumerate(zip(SUBSETS, SEEDS)):
        rng = np.random.default_rng(seed)
        Ws, bs = init_mlp(rng, [6, 8, 3], np.dtype("float64"))
        batches = []
        for e in range(epochs):
            if perms is None:
                perm = s[rng.permutation(s.size)]
                batches += [perm[i : i + B] for i in range(0, perm.size, B)]
            else:
                for i in range(0, perms[e].size, B):
                    b = perms[e][i : i + B]
                    b = b[np.isin(b, s)]
                    if b.size:
                        batches.append(b)
        rW, rb = naive_train_mlp(X, y, Ws, bs, batches, optimizer=optimizer, lr=0.01, weight_decay=0.003,
                                 dtype="float64")
        for l in range(2):
            assert np.abs(bank.weights_[l][k] - rW[l]).max() < 1e-11
            assert np.abs(bank.biases_[l][k] - rb[l]).max() < 1e-11


@pytest.mark.usefixtures("one_torch_thread")
@pytest.mark.parametrize("order", ["independent", "shared"])
def test_adult_shaped_sparse_and_dense_agree_with_torch(order):
    """Adult-like one-hot rows (107 inputs, 13 non-zero), 2 classes, H=16, batches of 16 with partial ones."""
    pytest.importorskip("torch")
    X, y = adult_like(120)
    subsets = [np.arange(0, 100), np.arange(20, 120), np.arange(5, 60), np.arange(7, 15)]
    kw = dict(hidden=(16,), mode="fast", epochs=3, batch_size=16, order=order, weight_decay=1e-3)
    sp = TorchMLP(sparse_input=True, **kw).fit_many(X, y, subsets, [1, 2, 3, 4])
    de = TorchMLP(sparse_input=False, backend="compiled", **kw).fit_many(X, y, subsets, [1, 2, 3, 4])
    tb = TorchMLP(backend="torch", **kw).fit_many(X, y, subsets, [1, 2, 3, 4])
    assert sp.info["backend"] == de.info["backend"] == "compiled"
    assert max_diff(sp, tb) < TOL["float32"]
    # the dense rows: the same sums as the listed non-zero inputs, reassociated
    assert max_diff(sp, de) < TOL["float32"]


def test_fit_equals_fit_many_bit_for_bit_and_is_deterministic(data):
    """Model k of a bank is fit(X[s_k], seed_k) exactly, wherever it sits in the bank (alignment, threads)."""
    X, y = data
    L = TorchMLP(hidden=(8,), mode="fast", epochs=3, batch_size=4, backend="compiled")
    loo = [np.delete(np.arange(30), k) for k in range(5)]
    seeds = [21, 22, 23, 24, 25]
    bank = L.fit_many(X, y, loo, seeds)
    assert bank.info["backend"] == "compiled"
    for k in [0, 3, 4]:
        m = L.fit(X[loo[k]], y[loo[k]], random_state=seeds[k], n_classes=3)
        for l in range(2):
            np.testing.assert_array_equal(m.weights_[l], bank.weights_[l][k])
            np.testing.assert_array_equal(m.biases_[l], bank.biases_[l][k])
    assert_same_bank(L.fit_many(X, y, loo, seeds), bank)
    # the same model in another position of another bank
    swapped = L.fit_many(X, y, [loo[4], loo[0]], [25, 21])
    for l in range(2):
        np.testing.assert_array_equal(swapped.weights_[l][0], bank.weights_[l][4])
        np.testing.assert_array_equal(swapped.weights_[l][1], bank.weights_[l][0])


@pytest.mark.parametrize("order", ["independent", "shared"])
def test_threads_blocks_and_chunks_do_not_change_any_model(data, order):
    """n_threads 1 vs 2, row orders drawn in blocks of epochs, models trained in chunks: bit for bit equal."""
    X, y = data
    subsets = SUBSETS + [np.arange(0, 30, 2), np.arange(1, 30, 3)]
    seeds = [1, 2, 3, 4, 5]
    kw = dict(hidden=(8,), mode="fast", epochs=4, batch_size=4, order=order, backend="compiled", weight_decay=1e-3)
    one = TorchMLP(n_threads=1, **kw).fit_many(X, y, subsets, seeds)
    two = TorchMLP(n_threads=2, **kw).fit_many(X, y, subsets, seeds)
    assert_same_bank(one, two)
    L = TorchMLP(**kw)
    L.order_block_rows = 20  # one epoch per kernel call (every block smaller than an epoch)
    assert_same_bank(L.fit_many(X, y, subsets, seeds), one)
    L.chunk_bytes = 1.0  # one model per chunk
    assert_same_bank(L.fit_many(X, y, subsets, seeds), one)


def test_backend_choice_and_parameter_errors(data):
    X, y = data
    Xa, ya = adult_like(40)
    auto = TorchMLP(hidden=(8,), mode="fast", epochs=1)
    bank = auto.fit_many(Xa, ya, [np.arange(40)], [0])
    assert bank.info["backend"] == "compiled" and bank.info["sparse_input"] is True
    # dense rows on the compiled kernel too (its blocked matrix products)
    bank = auto.fit_many(X, y, SUBSETS, SEEDS)  # 3 of 6 inputs non-zero: dense
    assert bank.info["backend"] == "compiled" and bank.info["sparse_input"] is False
    with pytest.raises(InvalidParameterError, match="backend='compiled'.*no copy for 4 hidden units"):
        TorchMLP(hidden=(4,), mode="fast", backend="compiled", epochs=1).fit(X, y, random_state=0)
    with pytest.raises(InvalidParameterError, match="backend='compiled'.*float32"):
        TorchMLP(hidden=(8,), dtype="float64", backend="compiled", epochs=1).fit(X, y, random_state=0)
    with pytest.raises(InvalidParameterError, match="backend='compiled'.*weight decay"):
        TorchMLP(hidden=(8,), weight_decay=0.1, backend="compiled", epochs=1).fit(X, y, random_state=0)
    with pytest.raises(InvalidParameterError, match="backend='numba' was removed.*'compiled'"):
        TorchMLP(hidden=(8,), backend="numba", epochs=1).fit(X, y, random_state=0)
    for hidden in ((4, 3), ()):
        with pytest.raises(InvalidParameterError, match="backend='compiled'.*one hidden layer"):
            TorchMLP(hidden=hidden, mode="fast", backend="compiled", epochs=1).fit(X, y, random_state=0)
    pytest.importorskip("torch")
    # auto: torch for the nets the kernel does not train
    for kw in (dict(hidden=(4,)), dict(hidden=(4, 3)), dict(hidden=(8,), dtype="float64")):
        bank = TorchMLP(mode="fast", epochs=1, **kw).fit_many(Xa, ya, [np.arange(40)], [0])
        assert bank.info["backend"] == bank.info["kernel"] == "torch", kw
    with pytest.raises(InvalidParameterError, match="optimizer"):
        TorchMLP(optimizer="rmsprop", mode="fast").fit(X, y, random_state=0)
    with pytest.raises(InvalidParameterError, match="optimizer='adam'.*faithful"):
        TorchMLP(optimizer="adam", mode="faithful").fit(X, y, random_state=0)
    # faithful mode accepts optimizer='sgd' (what it does) and trains the same model as None
    a = TorchMLP(hidden=(4,), epochs=1, optimizer="sgd").fit_many(X, y, SUBSETS, SEEDS)
    b = TorchMLP(hidden=(4,), epochs=1).fit_many(X, y, SUBSETS, SEEDS)
    assert_same_bank(a, b)
    # lr=None: 0.001 for Adam, 0.01 for SGD
    kw = dict(hidden=(4,), mode="fast", epochs=2, batch_size=4)
    assert_same_bank(TorchMLP(optimizer="sgd", **kw).fit_many(X, y, SUBSETS, SEEDS),
                     TorchMLP(optimizer="sgd", lr=0.01, **kw).fit_many(X, y, SUBSETS, SEEDS))
    assert_same_bank(TorchMLP(**kw).fit_many(X, y, SUBSETS, SEEDS),
                     TorchMLP(optimizer="adam", lr=0.001, **kw).fit_many(X, y, SUBSETS, SEEDS))


def test_layout_helpers_round_trip():
    rng = np.random.default_rng(0)
    K, d, H, C = 3, 5, 7, 4
    Ws = [rng.normal(size=(K, d, H)).astype(np.float32), rng.normal(size=(K, H, C)).astype(np.float32)]
    bs = [rng.normal(size=(K, H)).astype(np.float32), rng.normal(size=(K, C)).astype(np.float32)]
    flat = pack_1h(Ws, bs, np.float32)
    assert flat.flags.c_contiguous and flat.ctypes.data % 64 == 0 and flat.strides[0] % 64 == 0
    assert flat.shape == (K, 80)  # 5*7 + 7 + 4*7 + 4 = 74 parameters, rows padded to 80 floats (320 bytes)
    Ws2, bs2 = unpack_1h(flat, d, H, C)
    for a, b in zip(Ws + bs, Ws2 + bs2):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(flat[0, d * H + H : d * H + H + H], Ws[1][0][:, 0])  # W2^T row 0 = column 0
    assert aligned_rows(2, 17, np.float64).shape == (2, 24)
    X = np.array([[0.0, 2.5, 0.0], [0.0, 0.0, 0.0], [-1.0, 0.0, 3.0]])
    ip, ind, val = csr_rows(X, True)
    np.testing.assert_array_equal(ip, [0, 1, 1, 3])
    np.testing.assert_array_equal(ind, [1, 0, 2])
    np.testing.assert_array_equal(val, [2.5, -1.0, 3.0])
    ip, ind, val = csr_rows(X, False)
    np.testing.assert_array_equal(ip, [0, 3, 6, 9])
    np.testing.assert_array_equal(val, X.ravel())
    # scipy's CSR of the same rows (NaN is not zero: listed, as X != 0 lists it), float32 kept, non-contiguous X
    from scipy import sparse

    rng = np.random.default_rng(0)
    X = (rng.normal(size=(40, 9)) * (rng.random((40, 9)) < 0.3)).astype(np.float32)
    X[5, 2], X[7] = np.nan, 0.0
    for Xi in (X, np.asfortranarray(X)):
        ip, ind, val = csr_rows(Xi, True)
        ref = sparse.csr_matrix(np.where(np.isnan(Xi), 1.0, Xi))
        np.testing.assert_array_equal(ip, ref.indptr)
        np.testing.assert_array_equal(ind, ref.indices)
        np.testing.assert_array_equal(val, Xi[Xi != 0])
        assert ip.dtype == ind.dtype == np.int64 and val.dtype == np.float32


CODE = BLOCK_TORCH + r"""
import numpy as np
from leakaudit.learners import TorchMLP
from leakaudit.exceptions import UnsupportedError
rng = np.random.default_rng(0)
X = rng.random((60, 5)); y = (X[:, 0] > 0.5).astype(int)
for opt in ("adam", "sgd"):
    bank = TorchMLP(hidden=(8,), mode="fast", epochs=2, batch_size=8, optimizer=opt).fit_many(
        X, y, [np.arange(60), np.arange(30)], [0, 1], n_classes=2)
    assert bank.info["backend"] == "compiled" and bank.predict_proba(X).shape == (2, 60, 2)
try:
    TorchMLP(hidden=(8,), mode="fast", epochs=1, backend="torch").fit(X, y, random_state=0)
except UnsupportedError as e:
    print("torch:", e)
assert "torch" not in sys.modules
print("ok")
"""


def test_fast_mode_runs_without_torch():
    out = subprocess.run([sys.executable, "-c", CODE], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    lines = out.stdout.strip().splitlines()
    assert lines[-1] == "ok"
    assert any(line.startswith("torch:") and "pip install 'leakaudit[torch]'" in line for line in lines)
