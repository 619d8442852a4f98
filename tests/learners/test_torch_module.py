"""TorchModuleLearner: fresh instances of a user's module class, trained with a stated recipe.

Checked against torch.optim's own Adam / SGD loops on the same mini-batches (the reference implementation),
batched (vmap) against one at a time, and the fallbacks and errors."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from leakaudit.exceptions import InvalidInputError, InvalidParameterError  # noqa: E402
from leakaudit.learners.torch_module import TorchModuleLearner  # noqa: E402

TINY = "_torch_module_helpers:TinyNet"  # tests/learners is on sys.path (pytest's rootdir-relative import)


def _data(n=50, d=4, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = (X[:, 0] - X[:, 1] > 0).astype(int)
    return X, y


def _reference_train(cls, kwargs, X, y, subset, seed, *, opt, lr, epochs, batch, wd=0.0, momentum=0.0, probs=False):
    """The recipe written with torch.optim: same init seed, same batches."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        m = cls(**kwargs).float()
    o = (torch.optim.Adam(m.parameters(), lr=lr, weight_decay=wd) if opt == "adam"
         else torch.optim.SGD(m.parameters(), lr=lr, momentum=momentum, weight_decay=wd))
    rng = np.random.default_rng(seed)
    Xt, yt = torch.as_tensor(X, dtype=torch.float32), torch.as_tensor(y)
    m.train()
    for _ in range(epochs):
        order = subset[rng.permutation(subset.size)]
        for s in range(0, order.size, batch):
            b = torch.from_numpy(order[s:s + batch])
            o.zero_grad()
            out = m(Xt[b])
            loss = (torch.nn.functional.nll_loss(torch.log(out.clamp_min(1e-12)), yt[b]) if probs
                    else torch.nn.functional.cross_entropy(out, yt[b]))
            loss.backward()
            o.step()
    m.eval()
    with torch.no_grad():
        out = m(Xt).double()
    return (out if probs else torch.softmax(out, -1)).numpy()


@pytest.mark.parametrize("opt,wd,mom", [("adam", 0.0, 0.0), ("adam", 0.01, 0.0), ("sgd", 0.0, 0.0), ("sgd", 0.01, 0.9)])
def test_matches_torch_optim_loop(opt, wd, mom):
    from _torch_module_helpers import TinyNet

    X, y = _data()
    subsets = [np.arange(50), np.arange(5, 42), np.arange(0, 50, 2)]  # unequal sizes: the step mask matters
    seeds = [3, 4, 5]
    lr = 0.01 if opt == "adam" else 0.1
    lrn = TorchModuleLearner(module=TINY, module_kwargs={"n_in": 4, "hidden": 6}, optimizer=opt, lr=lr, epochs=4,
                             batch_size=8, weight_decay=wd, momentum=mom)
    bank = lrn.fit_many(X, y, subsets, seeds)
    assert bank.info["trained"] == "vmap"
    got = bank.predict_proba(X)
    for k, (s, sd) in enumerate(zip(subsets, seeds)):
        ref = _reference_train(TinyNet, {"n_in": 4, "hidden": 6}, X, y, s, sd, opt=opt, lr=lr, epochs=4, batch=8,
                               wd=wd, momentum=mom)
        np.testing.assert_allclose(got[k], ref, atol=2e-5)
        one = lrn.fit(X[s], y[s], random_state=sd).predict_proba(X)  # fit on the subset alone: same model
        np.testing.assert_allclose(one, ref, atol=2e-5)


def test_probability_outputs_train_on_minus_log_p():
    from _torch_module_helpers import SoftmaxNet

    X, y = _data()
    lrn = TorchModuleLearner(module="_torch_module_helpers:SoftmaxNet", optimizer="adam", lr=0.02, epochs=3,
                             batch_size=10)
    bank = lrn.fit_many(X, y, [np.arange(50), np.arange(30)], [1, 2])
    assert bank.info["output_kind"] == "probs"
    ref = _reference_train(SoftmaxNet, {}, X, y, np.arange(30), 2, opt="adam", lr=0.02, epochs=3, batch=10, probs=True)
    np.testing.assert_allclose(bank.predict_proba(X)[1], ref, atol=2e-5)


def test_seeded_and_leaves_global_rng_alone():
    X, y = _data()
    lrn = TorchModuleLearner(module=TINY, epochs=2)
    torch.manual_seed(123)
    before = torch.rand(3)
    torch.manual_seed(123)
    a = lrn.fit(X, y, random_state=7).predict_proba(X)
    after = torch.rand(3)
    assert torch.equal(before, after)
    b = lrn.fit(X, y, random_state=7).predict_proba(X)
    c = lrn.fit(X, y, random_state=8).predict_proba(X)
    assert np.array_equal(a, b) and not np.array_equal(a, c)
    np.testing.assert_allclose(a.sum(1), 1.0)


def test_batchnorm_module_is_trained_one_at_a_time():
    from _torch_module_helpers import BatchNormNet

    X, y = _data()
    lrn = TorchModuleLearner(module="_torch_module_helpers:BatchNormNet", optimizer="sgd", lr=0.1, epochs=2,
                             batch_size=8)
    subsets = [np.arange(50), np.arange(10, 50)]
    bank = lrn.fit_many(X, y, subsets, [1, 2])
    assert bank.info["trained"] == "loop"
    for k in range(2):
        ref = _reference_train(BatchNormNet, {}, X, y, subsets[k], k + 1, opt="sgd", lr=0.1, epochs=2, batch=8)
        np.testing.assert_allclose(bank.predict_proba(X)[k], ref, atol=2e-5)
    with pytest.raises(InvalidParameterError, match="buffers"):
        TorchModuleLearner(module="_torch_module_helpers:BatchNormNet", batched="vmap").fit_many(
            X, y, subsets, [1, 2])


def test_engine_caches_it(tmp_path):
    from leakaudit.engine import Engine

    X, y = _data()
    lrn = TorchModuleLearner(module=TINY, epochs=2)
    eng = Engine(cache_dir=tmp_path, progress=False)
    a = eng.predict_many(lrn, X, y, [np.arange(25), np.arange(25, 50)], [1, 2], X)
    assert eng.stats.cache_used and eng.stats.models_trained == 2
    b = eng.predict_many(lrn, X, y, [np.arange(25), np.arange(25, 50)], [1, 2], X)
    assert eng.stats.models_trained == 0 and np.array_equal(a, b)
    eng.predict_many(TorchModuleLearner(module=TINY, epochs=3), X, y, [np.arange(25), np.arange(25, 50)], [1, 2], X)
    assert eng.stats.models_trained == 2  # another recipe is another key


def test_bad_modules_give_our_errors():
    X, y = _data()
    with pytest.raises(InvalidParameterError, match="package.module:Class"):
        TorchModuleLearner(module="nocolon").fit(X, y)
    with pytest.raises(InvalidParameterError, match="cannot import"):
        TorchModuleLearner(module="no_such_pkg_xyz:Net").fit(X, y)
    with pytest.raises(InvalidParameterError, match="not a torch.nn.Module"):
        TorchModuleLearner(module="numpy:ndarray").fit(X, y)
    with pytest.raises(InvalidParameterError, match="module_kwargs"):
        TorchModuleLearner(module=TINY, module_kwargs={"nope": 1}).fit(X, y)
    with pytest.raises(InvalidInputError, match="input features"):
        TorchModuleLearner(module=TINY, module_kwargs={"n_in": 7}).fit(X, y)
    with pytest.raises(InvalidInputError, match=r"expected \(n, 2\)"):
        TorchModuleLearner(module=TINY, module_kwargs={"n_out": 3}).fit(X, y)
    with pytest.raises(InvalidParameterError, match="optimizer"):
        TorchModuleLearner(module=TINY, optimizer="rmsprop").fit(X, y)
    with pytest.raises(InvalidParameterError, match="module is required"):
        TorchModuleLearner().fit(X, y)


def test_read_only_data_reaches_torch_without_its_warning():
    """The audit hands its arrays around read-only; every torch entry point copies such an array instead of
    letting torch share it (torch warns "not writable" and writes through it at will)."""
    import warnings

    from leakaudit.learners._torch_utils import to_tensor

    a = np.arange(6, dtype=np.float32).reshape(3, 2)
    a.setflags(write=False)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        t = to_tensor(a, torch.float32)
    t[0, 0] = 99.0
    assert a[0, 0] == 0.0
    w = np.arange(6, dtype=np.float32).reshape(3, 2)
    assert to_tensor(w, torch.float32).data_ptr() == w.ctypes.data  # a writable array is shared, not copied
