"""TorchMLP: batched training equals the plain per-model autograd trainer."""

import subprocess
import sys

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from _learner_helpers import adult_like  # noqa: E402

from leakaudit.exceptions import InvalidInputError, InvalidParameterError  # noqa: E402
from leakaudit.learners import TorchMLP  # noqa: E402
from leakaudit.learners._torch_utils import init_mlp, naive_train_mlp  # noqa: E402

pytestmark = pytest.mark.usefixtures("one_torch_thread")  # fixture in conftest.py


BACKENDS = ["auto", "torch"]  # "auto": the compiled kernel where it trains the net, torch elsewhere
TOL = {"float32": 1e-5, "float64": 1e-10}


def oracle(X, y, subset, seed, *, hidden, activation="tanh", mode="faithful", epochs=3, lr=None, batch_size=4,
           weight_decay=0.0, dtype="float32", n_classes=3, order=None, shared_perms=None):
    """Train one model with nn.Module + autograd from the documented seed contract."""
    rng = np.random.default_rng(seed)
    sizes = [X.shape[1], *hidden, n_classes]
    Ws, bs = init_mlp(rng, sizes, np.dtype(dtype))
    if mode == "faithful":
        if order is None:
            order = subset[rng.permutation(subset.size)]
        batches = [[i] for _ in range(epochs) for i in order]
        return naive_train_mlp(X, y, Ws, bs, batches, activation=activation, lr=lr or 0.01,
                               weight_decay=weight_decay, dtype=dtype)
    batches = []
    for e in range(epochs):
        if shared_perms is None:
            perm = subset[rng.permutation(subset.size)]
            batches += [perm[i : i + batch_size] for i in range(0, perm.size, batch_size)]
        else:  # shared batches of the union, rows outside the subset dropped
            perm = shared_perms[e]
            for i in range(0, perm.size, batch_size):
                b = perm[i : i + batch_size]
                b = b[np.isin(b, subset)]
                if b.size:
                    batches.append(b)
    return naive_train_mlp(X, y, Ws, bs, batches, activation=activation, optimizer="adam", lr=lr or 0.001,
                           weight_decay=weight_decay, dtype=dtype)


def max_diff(bank, k, ref):
    Ws, bs = ref
    return max(
        max(np.abs(W - bank.weights_[l][k]).max() for l, W in enumerate(Ws)),
        max(np.abs(b - bank.biases_[l][k]).max() for l, b in enumerate(bs)),
    )


SUBSETS = [np.arange(30), np.arange(5, 22), np.array([3, 17, 4, 29, 11, 0, 8, 21, 13])]  # sizes 30, 17, 9


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize(
    "hidden,activation,weight_decay", [((8,), "tanh", 0.0), ((8,), "relu", 0.0), ((5, 4), "tanh", 0.0), ((8,), "tanh", 0.01)]
)
def test_faithful_fit_many_equals_oracle(data, backend, dtype, hidden, activation, weight_decay):
    X, y = data
    seeds = [11, 12, 13]
    L = TorchMLP(hidden=hidden, activation=activation, epochs=3, dtype=dtype, backend=backend, weight_decay=weight_decay)
    bank = L.fit_many(X, y, SUBSETS, seeds)
    assert bank.weights_[0].dtype == np.dtype(dtype)
    for k, (s, seed) in enumerate(zip(SUBSETS, seeds)):
        ref = oracle(X, y, s, seed, hidden=hidden, activation=activation, weight_decay=weight_decay, dtype=dtype)
        assert max_diff(bank, k, ref) < TOL[dtype]
    # the models did train: weights moved away from their init
    W0, _ = init_mlp(np.random.default_rng(seeds[0]), [6, *hidden, 3], np.dtype(dtype))
    assert np.abs(bank.weights_[0][0] - W0[0]).max() > 1e-3


SPARSE = [False, True]


@pytest.mark.parametrize("sparse", SPARSE)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("order", ["independent", "shared"])
@pytest.mark.parametrize(
    "hidden,activation,weight_decay",
    [((8,), "tanh", 0.0), ((8,), "relu", 0.01), ((5, 4), "tanh", 0.0), ((), "tanh", 0.0)],
)
def test_fast_fit_many_equals_oracle(data, dtype, order, sparse, hidden, activation, weight_decay):
    """Mini-batch Adam, K models at once (dense or sparse first layer) = torch.optim.Adam one model at a time.

    The subsets have 30, 17 and 9 rows with batches of 4, so last batches are padded and the
    short models sit out whole steps (the per-model Adam path), besides the fused all-active path.
    """
    X, y = data
    seeds = [5, 6, 7]
    L = TorchMLP(hidden=hidden, activation=activation, mode="fast", epochs=3, batch_size=4, dtype=dtype, order=order,
                 lr=0.01, weight_decay=weight_decay, sparse_input=sparse)
    bank = L.fit_many(X, y, SUBSETS, seeds)
    assert bank.info["sparse_input"] is sparse
    shared_perms = None
    if order == "shared":
        union = np.unique(np.concatenate(SUBSETS))
        srng = np.random.default_rng(np.random.SeedSequence(seeds))
        shared_perms = [union[srng.permutation(union.size)] for _ in range(3)]
    for k, (s, seed) in enumerate(zip(SUBSETS, seeds)):
        ref = oracle(X, y, s, seed, hidden=hidden, activation=activation, mode="fast", lr=0.01, dtype=dtype,
                     shared_perms=shared_perms, weight_decay=weight_decay)
        assert max_diff(bank, k, ref) < TOL[dtype] * (10 if dtype == "float32" else 1)
    # the models did train
    W0, _ = init_mlp(np.random.default_rng(seeds[0]), [6, *hidden, 3], np.dtype(dtype))
    assert np.abs(bank.weights_[0][0] - W0[0]).max() > 1e-3


@pytest.mark.parametrize("order", ["independent", "shared"])
def test_fast_sparse_equals_dense_on_one_hot_data(order):
    """The sparse first layer (only the 13 non-zero inputs of 107) trains the dense path's models."""
    X, y = adult_like(120)
    subsets = [np.arange(0, 100), np.arange(20, 120), np.arange(5, 60)]
    kw = dict(hidden=(16,), mode="fast", epochs=3, batch_size=16, order=order, weight_decay=1e-3)
    dense = TorchMLP(sparse_input=False, **kw).fit_many(X, y, subsets, [1, 2, 3])
    sparse = TorchMLP(sparse_input=True, **kw).fit_many(X, y, subsets, [1, 2, 3])
    auto = TorchMLP(**kw).fit_many(X, y, subsets, [1, 2, 3])
    assert not dense.info["sparse_input"] and sparse.info["sparse_input"] and auto.info["sparse_input"]
    for l in range(2):
        np.testing.assert_allclose(sparse.weights_[l], dense.weights_[l], rtol=0, atol=1e-5)
        np.testing.assert_allclose(sparse.biases_[l], dense.biases_[l], rtol=0, atol=1e-5)
        np.testing.assert_array_equal(auto.weights_[l], sparse.weights_[l])
    # and both equal the plain trainer for one model
    perms = None if order == "independent" else _shared_perms(subsets, [1, 2, 3], 3)
    ref = oracle(X, y, subsets[2], 3, hidden=(16,), mode="fast", epochs=3, batch_size=16, n_classes=2,
                 weight_decay=1e-3, shared_perms=perms)
    assert max_diff(sparse, 2, ref) < 1e-5


def _shared_perms(subsets, seeds, epochs):
    union = np.unique(np.concatenate(subsets))
    srng = np.random.default_rng(np.random.SeedSequence(seeds))
    return [union[srng.permutation(union.size)] for _ in range(epochs)]


def test_sparse_auto_decides_on_the_subset_rows_only(data):
    """'auto' picks the sparse layer for one-hot rows, not for dense rows; fit == fit_many bit for bit."""
    X, y = adult_like(60)
    L = TorchMLP(hidden=(8,), mode="fast", epochs=2, batch_size=8)
    bank = L.fit_many(X, y, [np.arange(40), np.arange(20, 60)], [4, 5])
    assert bank.info["sparse_input"] is True
    m = L.fit(X[20:60], y[20:60], random_state=5)
    for W, Wb in zip(m.weights_, bank.model(1).weights_):
        np.testing.assert_array_equal(W, Wb)
    Xd = np.random.default_rng(0).normal(size=(30, 8))
    assert TorchMLP(hidden=(4,), mode="fast", epochs=1).fit_many(Xd, y[:30], [np.arange(30)], [1]).info[
        "sparse_input"] is False


@pytest.mark.parametrize("order", ["independent", "shared"])
def test_fast_chunks_of_models_give_the_same_models(data, order):
    """fast mode trains models in cache-sized chunks; one model per chunk must give the same bank."""
    X, y = data
    L = TorchMLP(hidden=(8,), mode="fast", epochs=2, batch_size=4, order=order)
    whole = L.fit_many(X, y, SUBSETS, [1, 2, 3])
    L.chunk_bytes = 1.0  # one model per chunk
    parts = L.fit_many(X, y, SUBSETS, [1, 2, 3])
    for l in range(2):
        np.testing.assert_allclose(parts.weights_[l], whole.weights_[l], rtol=0, atol=1e-6)


def test_fast_torch_chunks_are_bounded_by_step_bytes(data, monkeypatch):
    """The torch path cuts K models into chunks whose per-step data fit ``step_bytes``; same models."""
    from leakaudit.learners import _torch_batched

    X, y = data
    seen = []
    real = _torch_batched.BatchedMLPTrainer

    class Spy(real):
        def __init__(self, Ws, *a, **k):
            seen.append(Ws[0].shape[0])
            super().__init__(Ws, *a, **k)

    monkeypatch.setattr(_torch_batched, "BatchedMLPTrainer", Spy)
    L = TorchMLP(hidden=(8,), mode="fast", epochs=2, batch_size=4, backend="torch")
    subsets = SUBSETS * 3
    whole = L.fit_many(X, y, subsets, list(range(9)))
    assert seen == [9]
    per_model_step = 4 * (X.shape[1] + 1 + 3 * 8) * 4  # batch x (inputs + 1 + 3 per hidden unit) float32
    L.step_bytes = 2 * per_model_step
    seen.clear()
    parts = L.fit_many(X, y, subsets, list(range(9)))
    assert sorted(seen, reverse=True) == [2, 2, 2, 2, 1]  # chunks train on threads: any order
    for l in range(2):
        np.testing.assert_allclose(parts.weights_[l], whole.weights_[l], rtol=0, atol=1e-6)


@pytest.mark.parametrize("mode", ["faithful", "fast"])
def test_fit_is_fit_many_with_one_subset_bit_for_bit(data, mode):
    X, y = data
    L = TorchMLP(hidden=(8,), epochs=2, mode=mode)
    loo = [np.delete(np.arange(30), k) for k in range(4)]
    bank = L.fit_many(X, y, loo, [21, 22, 23, 24])
    for k in range(4):
        m = L.fit(X[loo[k]], y[loo[k]], random_state=21 + k, n_classes=3)
        for W, Wb in zip(m.weights_, bank.model(k).weights_):
            np.testing.assert_array_equal(W, Wb)
    again = L.fit_many(X, y, loo, [21, 22, 23, 24])
    for l in range(2):
        np.testing.assert_array_equal(again.weights_[l], bank.weights_[l])
        np.testing.assert_array_equal(again.biases_[l], bank.biases_[l])


@pytest.mark.parametrize("backend", BACKENDS)
def test_shared_order_loo_family_equals_oracle(data, backend):
    """order='shared': model k visits one shared permutation of the union, skipping row k."""
    X, y = data
    n = 12
    loo = [np.delete(np.arange(n), k) for k in range(n)]
    seeds = list(range(100, 100 + n))
    bank = TorchMLP(hidden=(6,), epochs=3, order="shared", backend=backend).fit_many(X, y, loo, seeds)
    perm = np.arange(n)[np.random.default_rng(np.random.SeedSequence(seeds)).permutation(n)]
    for k in [0, 5, 11]:
        ref = oracle(X, y, loo[k], seeds[k], hidden=(6,), order=perm[perm != k])
        assert max_diff(bank, k, ref) < 1e-5


def test_predict_proba_shapes_and_standalone_models(data):
    X, y = data
    bank = TorchMLP(hidden=(8,), epochs=2).fit_many(X, y, SUBSETS, [1, 2, 3])
    P = bank.predict_proba(X[:7])
    assert P.shape == (3, 7, 3) and len(bank) == 3
    np.testing.assert_allclose(P.sum(-1), 1.0, atol=1e-12)
    assert (P > 0).all()
    for k in range(3):
        np.testing.assert_allclose(bank.model(k).predict_proba(X[:7]), P[k], rtol=1e-6, atol=1e-7)
    # a standalone model converts to the equivalent torch module
    torch = torch = pytest.importorskip("torch")
    net = bank.model(1).to_torch()
    with torch.no_grad():
        out = net(torch.from_numpy(X[:7].astype(np.float32))).exp().numpy()
    np.testing.assert_allclose(out, P[1], atol=1e-6)


def test_n_classes_larger_than_labels_present(data):
    X, y = data
    yb = (y > 0).astype(int)  # labels 0/1 only
    bank = TorchMLP(hidden=(4,), epochs=2).fit_many(X, yb, SUBSETS[:2], [1, 2], n_classes=5)
    P = bank.predict_proba(X)
    assert P.shape == (2, 30, 5)
    np.testing.assert_allclose(P.sum(-1), 1.0, atol=1e-12)
    # training pushes mass away from the unseen classes 2..4
    assert P[..., 2:].mean() < P[..., :2].mean()


def test_single_class_subset_trains_towards_that_class(data):
    """Documented behaviour: allowed; the NLL drives the model to predict the one class seen."""
    X, y = data
    s = np.flatnonzero(y == 2)
    m = TorchMLP(hidden=(8,), epochs=20, lr=0.05).fit(X[s], y[s], random_state=0, n_classes=3)
    assert (m.predict_proba(X).argmax(1) == 2).all()


def test_bad_inputs(data):
    X, y = data
    L = TorchMLP(hidden=(4,), epochs=1)
    with pytest.raises(InvalidInputError, match=r"subsets\[1\]"):
        L.fit_many(X, y, [np.arange(5), np.array([], dtype=int)], [1, 2])
    with pytest.raises(InvalidInputError, match="out of range"):
        L.fit_many(X, y, [np.array([0, 30])], [1])
    Xn = X.copy()
    Xn[3, 1] = np.nan
    with pytest.raises(InvalidInputError, match="NaN"):
        L.fit_many(Xn, y, [np.arange(30)], [1])
    with pytest.raises(InvalidInputError, match="n_classes"):
        L.fit(X, y, n_classes=2)
    bank = L.fit_many(X, y, [np.arange(30)], [1])
    with pytest.raises(InvalidInputError, match="features"):
        bank.predict_proba(X[:, :4])
    with pytest.raises(InvalidInputError, match="out of range"):
        bank.model(3)
    with pytest.raises(InvalidInputError, match="duplicate"):
        TorchMLP(order="shared", epochs=1).fit_many(X, y, [np.array([0, 0, 1])], [1])


@pytest.mark.parametrize(
    "kw,name",
    [
        (dict(hidden=(0,)), "hidden"),
        (dict(activation="sigmoid"), "activation"),
        (dict(mode="slow"), "mode"),
        (dict(epochs=0), "epochs"),
        (dict(lr=-1.0), "lr"),
        (dict(batch_size=0), "batch_size"),
        (dict(dtype="float16"), "dtype"),
        (dict(order="random"), "order"),
        (dict(n_threads=0), "n_threads"),
        (dict(sparse_input="yes"), "sparse_input"),
    ],
)
def test_bad_parameters(data, kw, name):
    X, y = data
    with pytest.raises(InvalidParameterError, match=name):
        TorchMLP(**kw).fit(X, y, random_state=0)


def test_imports_without_torch_and_says_how_to_install():
    code = (
        "import sys, importlib.abc\n"
        "class Block(importlib.abc.MetaPathFinder):\n"
        "    def find_spec(self, name, path, target=None):\n"
        "        if name == 'torch' or name.startswith('torch.'):\n"
        "            raise ImportError('No module named torch')\n"
        "sys.meta_path.insert(0, Block())\n"
        "import numpy as np\n"
        "from leakaudit.learners import TorchMLP\n"
        "from leakaudit.exceptions import UnsupportedError\n"
        "try:\n"  # the torch trainer needs torch; the compiled kernel does not (own test)
        "    TorchMLP(epochs=1, mode='fast', backend='torch').fit(np.zeros((4, 2)), np.array([0, 1, 0, 1]), random_state=0)\n"
        "except UnsupportedError as e:\n"
        "    print('OK', e)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert "OK" in out.stdout and "pip install 'leakaudit[torch]'" in out.stdout, out.stderr


def _fit_in_child(seed):
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(20, 3)), rng.integers(0, 2, 20)
    return TorchMLP(hidden=(4,), epochs=2).fit(X, y, random_state=seed).weights_[0]


@pytest.mark.skipif(sys.platform != "linux", reason="fork start method")
def test_compiled_kernel_is_fork_safe():
    """After the kernel ran in the parent, forked workers (process pools) can still train."""
    import multiprocessing as mp

    parent = _fit_in_child(3)
    with mp.get_context("fork").Pool(2) as pool:
        children = pool.map_async(_fit_in_child, [3, 3]).get(timeout=120)
    for W in children:
        np.testing.assert_array_equal(W, parent)


@pytest.mark.slow
def test_faithful_many_models_match_oracle_on_adult_shape():
    """100 LOO models on 200 Adult-shaped rows (107 inputs, 13 non-zero): models 0 and 99 vs the oracle."""
    n = 200
    X, y = adult_like(n, seed=1)
    loo = [np.delete(np.arange(n), k) for k in range(100)]
    bank = TorchMLP(epochs=10).fit_many(X, y, loo, list(range(100)))
    for k in [0, 99]:
        ref = oracle(X, y, loo[k], k, hidden=(64,), epochs=10, n_classes=2)
        assert max_diff(bank, k, ref) < 1e-5


@pytest.mark.parametrize("mode", ["faithful", "fast"])
def test_repeated_seeds_in_one_call_give_the_separate_fits(mode):
    # initial weights and generators are drawn once per distinct seed and copied: no model may share state
    X, y = adult_like(120, seed=4)
    L = TorchMLP(hidden=(8,), epochs=2, mode=mode, batch_size=16)
    subs = [np.arange(80), np.arange(30, 110), np.arange(80)]
    bank = L.fit_many(X, y, subs, [5, 6, 5], n_classes=2)
    for k, (s, seed) in enumerate(zip(subs, [5, 6, 5])):
        one = L.fit(X[s], y[s], random_state=seed, n_classes=2)
        np.testing.assert_array_equal(bank.model(k).predict_proba(X), one.predict_proba(X))


def test_a_rows_outputs_do_not_depend_on_the_rows_queried_with_it():
    """One queried row takes BLAS's matrix-vector kernel unless padded; on AVX2 OpenBLAS that sums in
    another order (1 float32 ulp), which broke PDTP's bit-for-bit chunked-engine equality."""
    from leakaudit.learners._torch_utils import MLPBank

    rng = np.random.default_rng(0)
    W = [rng.normal(size=(3, 5, 6)).astype(np.float32), rng.normal(size=(3, 6, 2)).astype(np.float32)]
    b = [rng.normal(size=(3, 6)).astype(np.float32), rng.normal(size=(3, 2)).astype(np.float32)]
    bank = MLPBank(W, b, "tanh")
    X = rng.normal(size=(9, 5))
    full = bank.decision_function(X)
    for rows in ([0], [0, 1], [0, 1, 2], list(range(5))):
        np.testing.assert_array_equal(bank.decision_function(X[rows]), full[:, rows])


def test_sparse_inputs_take_the_sparse_first_layer_with_the_dense_result():
    """A bank trained with a sparse first layer is queried the same way (the listed inputs only): same
    logits as the dense product to float32 rounding, and a row's outputs whatever rows come with it."""
    from _learner_helpers import adult_like

    from leakaudit.learners import _torch_utils
    from leakaudit.learners._torch_utils import MLPBank

    X, yy = adult_like(300)
    rng = np.random.default_rng(1)
    W = [rng.normal(size=(4, 107, 16)).astype(np.float32) * 0.2, rng.normal(size=(4, 16, 3)).astype(np.float32)]
    b = [rng.normal(size=(4, 16)).astype(np.float32), rng.normal(size=(4, 3)).astype(np.float32)]
    bank = MLPBank(W, b, "tanh", info={"sparse_input": True})
    got = bank.decision_function(X)
    dense = np.tanh(np.matmul(X.astype(np.float32)[None], W[0]) + b[0][:, None]) @ W[1] + b[1][:, None]
    np.testing.assert_allclose(got, dense, rtol=1e-5, atol=1e-5)
    for rows in ([7], [7, 8], list(range(100, 200))):
        np.testing.assert_array_equal(bank.decision_function(X[rows]), got[:, rows])
    # the dense kernels skip zero inputs: the same sums as the listed inputs only
    np.testing.assert_array_equal(_torch_utils.MLPBank(W, b, "tanh").decision_function(X), got)
    trained = TorchMLP(hidden=(8,), mode="fast", epochs=1).fit_many(X, yy, [np.arange(100)], [0])
    assert trained.info["sparse_input"] is True


def logistic_oracle(X, y, subset, seed, *, hidden, epochs, batch_size, lr, weight_decay, dtype, scheme):
    """One net with ONE logistic output unit (BCE-with-logits, mean over the batch), nn.Module + torch.optim.Adam,
    from the seed contract of TorchMLP(init=scheme, output="logistic"): its (Ws, bs) in TorchMLP's 2-column layout."""
    rng = np.random.default_rng(seed)
    Ws, bs = init_mlp(rng, [X.shape[1], *hidden, 2], np.dtype(dtype), scheme=scheme, logistic=True)
    assert np.all(Ws[-1][:, 0] == 0) and bs[-1][0] == 0
    tdt = getattr(torch, dtype)
    layers = []
    for l, (W, b) in enumerate(zip(Ws, bs)):
        last = l == len(Ws) - 1
        W, b = (W[:, 1:], b[1:]) if last else (W, b)
        lin = torch.nn.Linear(*W.shape).to(tdt)
        with torch.no_grad():
            lin.weight.copy_(torch.from_numpy(W.T.copy()))
            lin.bias.copy_(torch.from_numpy(b.copy()))
        layers += [lin] if last else [lin, torch.nn.Tanh()]
    net = torch.nn.Sequential(*layers)
    opt = torch.optim.Adam(net.parameters(), lr=lr, weight_decay=weight_decay)
    Xt, yt = torch.from_numpy(X).to(tdt), torch.from_numpy(y.astype(np.float64)).to(tdt)
    for _ in range(epochs):
        perm = subset[rng.permutation(subset.size)]
        for i in range(0, perm.size, batch_size):
            it = torch.from_numpy(perm[i : i + batch_size].astype(np.int64))
            opt.zero_grad()
            torch.nn.functional.binary_cross_entropy_with_logits(net(Xt[it])[:, 0], yt[it]).backward()
            opt.step()
    lins = [m for m in net if isinstance(m, torch.nn.Linear)]
    Wo = [m.weight.detach().numpy().T.copy() for m in lins]
    bo = [m.bias.detach().numpy().copy() for m in lins]
    Wo[-1] = np.hstack([np.zeros_like(Wo[-1]), Wo[-1]])
    bo[-1] = np.r_[0.0, bo[-1]].astype(bo[-1].dtype)
    return Wo, bo


LOGISTIC_PATHS = [dict(backend="torch"), dict(backend="auto", sparse_input=False), dict(backend="auto", sparse_input=True)]


@pytest.mark.parametrize("path", LOGISTIC_PATHS, ids=lambda p: "-".join(f"{k}={v}" for k, v in p.items()))
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("scheme", ["sklearn", "torch"])
def test_logistic_output_is_one_logistic_unit(path, dtype, scheme):
    """output='logistic' trains what a net with one logistic output unit trains (scikit-learn's binary MLP):
    every fast-mode trainer equals the nn.Module + BCE oracle, and class 0's weights stay exactly 0."""
    X, _ = adult_like(40)
    y = (X[:, 0] > 0).astype(np.int64)
    subsets = [np.arange(40), np.arange(3, 31)]
    L = TorchMLP(hidden=(8,), mode="fast", epochs=3, batch_size=8, lr=0.01, weight_decay=0.001, dtype=dtype,
                 init=scheme, output="logistic", **path)
    bank = L.fit_many(X, y, subsets, [7, 8])
    for k in range(2):
        assert np.all(bank.weights_[-1][k][:, 0] == 0) and bank.biases_[-1][k][0] == 0
        ref = logistic_oracle(X, y, subsets[k], 7 + k, hidden=(8,), epochs=3, batch_size=8, lr=0.01,
                              weight_decay=0.001, dtype=dtype, scheme=scheme)
        assert max_diff(bank, k, ref) < TOL[dtype] * (10 if dtype == "float32" else 1)
    p = bank.predict_proba(X)
    W, b = bank.weights_, bank.biases_
    l1 = np.tanh(X @ W[0][0].astype(float) + b[0][0]) @ W[1][0][:, 1].astype(float) + b[1][0][1]
    np.testing.assert_allclose(p[0, :, 1], 1 / (1 + np.exp(-l1)), rtol=1e-5 if dtype == "float32" else 1e-10)


def test_init_and_output_are_validated():
    X, _ = adult_like(20)
    y = np.arange(20) % 3
    with pytest.raises(InvalidParameterError, match="init"):
        TorchMLP(mode="fast", init="glorot").fit(X, y % 2, random_state=0)
    with pytest.raises(InvalidParameterError, match="output"):
        TorchMLP(mode="fast", output="sigmoid").fit(X, y % 2, random_state=0)
    with pytest.raises(InvalidParameterError, match="mode='fast'"):
        TorchMLP(mode="faithful", output="logistic").fit(X, y % 2, random_state=0)
    with pytest.raises(InvalidInputError, match="two classes; got 3 classes"):
        TorchMLP(mode="fast", output="logistic").fit(X, y, random_state=0)


def test_sklearn_init_draws_glorot_bounds():
    Ws, bs = init_mlp(np.random.default_rng(0), [100, 50, 2], np.float64, scheme="sklearn")
    for W, b, (nin, nout) in zip(Ws, bs, [(100, 50), (50, 2)]):
        bound = np.sqrt(6 / (nin + nout))
        assert W.shape == (nin, nout) and np.abs(W).max() <= bound and np.abs(W).max() > 0.9 * bound
        assert np.abs(b).max() <= bound
    Ws, bs = init_mlp(np.random.default_rng(0), [100, 50, 2], np.float64, scheme="sklearn", logistic=True)
    assert np.all(Ws[1][:, 0] == 0) and bs[1][0] == 0 and np.abs(Ws[1][:, 1]).max() <= np.sqrt(6 / 51)


@pytest.mark.parametrize("order", ["independent", "shared"])
def test_fast_torch_chunks_in_parallel_give_the_same_models_bit_for_bit(data, order):
    """The torch trainer's chunks run n_threads at a time; the models do not depend on the count."""
    X, y = data
    banks = []
    for n_threads in (1, 2, 3):
        L = TorchMLP(hidden=(8,), mode="fast", epochs=2, batch_size=4, backend="torch", order=order,
                     n_threads=n_threads)
        L.step_bytes = 1.0  # one model per chunk: several chunks in flight at once
        banks.append(L.fit_many(X, y, SUBSETS * 2, list(range(6))))
    for other in banks[1:]:
        for l in range(2):
            np.testing.assert_array_equal(other.weights_[l], banks[0].weights_[l])
            np.testing.assert_array_equal(other.biases_[l], banks[0].biases_[l])


def test_fast_torch_takes_an_int_hidden_width(data):
    """hidden=8 means (8,) on every path, the torch trainer's chunk sizing included."""
    X, y = data
    one = TorchMLP(hidden=8, mode="fast", epochs=1, backend="torch").fit_many(X, y, SUBSETS, [1, 2, 3])
    tup = TorchMLP(hidden=(8,), mode="fast", epochs=1, backend="torch").fit_many(X, y, SUBSETS, [1, 2, 3])
    np.testing.assert_array_equal(one.predict_proba(X), tup.predict_proba(X))


def test_from_sklearn_maps_the_estimator_and_refuses_others():
    import warnings

    from sklearn.ensemble import RandomForestClassifier
    from sklearn.neural_network import MLPClassifier

    from leakaudit.exceptions import UnsupportedError

    X, _ = adult_like(60)
    y3 = np.arange(60) % 3
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = MLPClassifier(hidden_layer_sizes=(8, 4), batch_size=16, alpha=0.01, max_iter=3).fit(X, y3)
    L = TorchMLP.from_sklearn(est, n_threads=1)
    assert (L.hidden, L.output, L.epochs, L.batch_size, L.weight_decay, L.n_threads) == ((8, 4), "softmax", 3, 16,
                                                                                          0.01 / 16, 1)
    assert L.fit(X, y3, random_state=0).predict_proba(X).shape == (60, 3)
    assert TorchMLP.from_sklearn(MLPClassifier(max_iter=7)).epochs == 7  # unfitted: max_iter
    with pytest.raises(UnsupportedError, match="MLPClassifier"):
        TorchMLP.from_sklearn(RandomForestClassifier())
    with pytest.raises(UnsupportedError, match="lbfgs"):
        TorchMLP.from_sklearn(MLPClassifier(solver="lbfgs"))


@pytest.mark.parametrize("sparse", [True, False])
@pytest.mark.parametrize("hidden", [(16,), (16, 8), (5,)])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_a_rows_logits_are_the_same_bits_in_any_batch_of_a_trained_bank(sparse, hidden, dtype):
    """MLPBank / MLPModel logits of a row are the same bits whichever rows are queried with it (1, a few, many:
    BLAS would pick other kernels by size; on AVX-512 OpenBLAS float32 logits moved by an ulp), and a bank's model
    k alone gives what the bank gives for k."""
    X, _ = adult_like(600, seed=3)
    y = (X[:, 0] + X[:, 1] > 0).astype(np.int64)
    L = TorchMLP(hidden=hidden, mode="fast", epochs=2, batch_size=32, dtype=dtype, sparse_input=sparse)
    bank = L.fit_many(X, y, [np.arange(300), np.arange(300, 600), np.arange(0, 600, 2)], [0, 1, 2])
    assert bank.info["sparse_input"] == sparse
    full = bank.decision_function(X)
    for n in (1, 2, 3, 17, 64, 257):
        np.testing.assert_array_equal(bank.decision_function(X[:n]), full[:, :n])
        np.testing.assert_array_equal(bank.decision_function(X[-n:]), full[:, -n:])
    for k in range(3):
        np.testing.assert_array_equal(bank.model(k).decision_function(X[5:9]), full[k, 5:9])
    ref = X.astype(dtype)  # and they are the network's logits
    for W, b in zip(bank.weights_[:-1], bank.biases_[:-1]):
        ref = np.tanh(ref @ W[1] + b[1]) if ref.ndim == 2 else None
    ref = ref @ bank.weights_[-1][1] + bank.biases_[-1][1]
    np.testing.assert_allclose(full[1], ref, rtol=1e-4 if dtype == "float32" else 1e-10, atol=1e-5)


def test_softmax_class_by_class_is_numpys_reductions():
    """softmax adds up to 7 classes column by column: the numbers of numpy's reductions over the last axis, NaN
    rows kept NaN, the input untouched; 1 and 8+ classes take those reductions."""
    from leakaudit.learners._torch_utils import softmax

    rng = np.random.default_rng(0)
    for C in range(1, 10):
        L = (rng.normal(size=(3, 50, C)) * rng.choice([0.1, 3.0, 300.0], size=(3, 50, 1))).astype(np.float32)
        L[0, 0, 0] = np.nan
        keep = L.copy()
        z = L.astype(np.float64) - L.astype(np.float64).max(axis=-1, keepdims=True)
        ref = np.exp(z) / np.exp(z).sum(axis=-1, keepdims=True)
        got = softmax(L)
        np.testing.assert_array_equal(got, ref)
        np.testing.assert_array_equal(L, keep)
        assert got.dtype == np.float64 and np.isnan(got[0, 0]).all()
