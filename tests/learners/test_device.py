"""The ``device`` of the torch learners: checked at the boundary, 'cpu' (the default) and 'auto' on a machine without
a GPU change nothing, a GPU trains the same models up to float rounding (those tests skip where CUDA is absent)."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from leakaudit.exceptions import InvalidParameterError, UnsupportedError  # noqa: E402
from leakaudit.learners import DPSGD, TorchCNN, TorchMLP  # noqa: E402
from leakaudit.learners._torch_utils import check_device, device_kind, resolve_device  # noqa: E402
from leakaudit.learners.torch_module import TorchModuleLearner  # noqa: E402

CUDA = torch.cuda.is_available()
gpu_only = pytest.mark.skipif(not CUDA, reason="CUDA not available")
no_cuda = pytest.mark.skipif(CUDA, reason="checks the refusal on a machine without CUDA")

LINEAR = {"module": "torch.nn:Linear", "module_kwargs": {"in_features": 6, "out_features": 2}}


@pytest.fixture(scope="module")
def xy():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 6))
    return X, (X[:, 0] + 0.5 * rng.normal(size=60) > 0).astype(int)


@pytest.fixture(scope="module")
def images():
    rng = np.random.default_rng(1)
    return rng.random((60, 64)), rng.integers(0, 3, 60)


SUBSETS = [np.arange(0, 30), np.arange(20, 60), np.arange(0, 60, 2)]
SEEDS = [1, 2, 3]


def _learners():
    """(id, learner factory of device, data fixture name, n_classes) of every torch learner's torch path."""
    cnn = dict(size=2, epochs=1, batch_size=16, image_shape=(1, 8, 8), padding="same")
    return [
        ("mlp-faithful", lambda d: TorchMLP(hidden=(5,), epochs=1, backend="torch", device=d), "xy", 2),
        ("mlp-fast", lambda d: TorchMLP(hidden=(5, 4), mode="fast", epochs=2, backend="torch", device=d), "xy", 2),
        ("mlp-shared", lambda d: TorchMLP(hidden=(5,), mode="fast", epochs=2, backend="torch", order="shared",
                                          device=d), "xy", 2),
        ("module", lambda d: TorchModuleLearner(**LINEAR, epochs=2, batch_size=16, device=d), "xy", 2),
        ("cnn", lambda d: TorchCNN(**cnn, device=d), "images", 3),
        ("dp-mlp", lambda d: DPSGD(learner=TorchMLP(hidden=(5,), backend="torch", device=d), sampling_rate=0.2,
                                   epochs=1), "xy", 2),
        ("dp-cnn", lambda d: DPSGD(learner=TorchCNN(**cnn), sampling_rate=0.3, epochs=1, device=d), "images", 3),
    ]


LEARNERS = _learners()
IDS = [x[0] for x in LEARNERS]


def test_check_device_takes_the_four_forms_and_names_the_argument():
    for ok in ("cpu", "cuda", "cuda:0", "cuda:12", "auto"):
        assert check_device(ok) == ok
    for bad in ("gpu", "CUDA", "cuda:", "cuda:01", "cuda:-1", "cpu:0", "", None, 0):
        with pytest.raises(InvalidParameterError, match=r"^device must be 'cpu', 'cuda', 'cuda:N' or 'auto'; got"):
            check_device(bad)
    with pytest.raises(InvalidParameterError, match="^--device must be"):
        check_device("tpu", name="--device")


def test_auto_is_cuda_where_torch_sees_a_gpu_and_cpu_elsewhere():
    assert resolve_device("cpu") == "cpu"
    assert resolve_device("auto") == ("cuda" if CUDA else "cpu")
    assert device_kind("auto") == ("cuda" if CUDA else "cpu")


@no_cuda
@pytest.mark.parametrize("device", ["cuda", "cuda:0", "cuda:3"])
def test_cuda_without_cuda_is_one_line_naming_the_argument(device):
    with pytest.raises(UnsupportedError) as err:
        resolve_device(device)
    msg = str(err.value)
    assert msg.startswith(f"device={device!r} but CUDA is not available here") and "\n" not in msg


def test_device_is_a_parameter_defaulting_to_cpu():
    for cls in (TorchMLP, TorchModuleLearner, TorchCNN):
        assert cls().get_params()["device"] == "cpu"
    assert DPSGD().get_params()["device"] is None  # the wrapped learner's


REFUSALS = [("gpu", InvalidParameterError, "device must be 'cpu', 'cuda', 'cuda:N' or 'auto'; got 'gpu'")]
if not CUDA:
    REFUSALS.append(("cuda", UnsupportedError, "'cuda' but CUDA is not available here"))


@pytest.mark.parametrize("device, err, match", REFUSALS, ids=[r[0] for r in REFUSALS])
@pytest.mark.parametrize("kind, make, data, C", LEARNERS, ids=IDS)
def test_a_device_that_cannot_be_used_is_refused_at_fit(kind, make, data, C, device, err, match, request):
    X, y = request.getfixturevalue(data)
    with pytest.raises(err, match=match):
        make(device).fit_many(X, y, SUBSETS, SEEDS, n_classes=C)


@no_cuda
@pytest.mark.parametrize("kind, make, data, C", LEARNERS, ids=IDS)
def test_cpu_and_auto_give_the_default_models_bit_for_bit(kind, make, data, C, request, one_torch_thread):
    """Without a GPU 'auto' is the CPU; 'cpu' is the default: the same bytes out."""
    X, y = request.getfixturevalue(data)
    got = [make(d).fit_many(X, y, SUBSETS, SEEDS, n_classes=C).predict_proba(X) for d in ("cpu", "auto")]
    if kind.startswith("dp"):
        base = DPSGD(**{k: v for k, v in make("cpu").get_params(deep=False).items() if k != "device"})
    else:
        base = type(make("cpu"))(**{k: v for k, v in make("cpu").get_params(deep=False).items() if k != "device"})
    want = base.fit_many(X, y, SUBSETS, SEEDS, n_classes=C).predict_proba(X)
    for g in got:
        assert g.tobytes() == want.tobytes()


def test_the_compiled_kernel_is_cpu_code():
    from leakaudit.learners.torch_mlp import _compiled_refusal

    why = _compiled_refusal(TorchMLP(hidden=(8,), device="cuda"), (8,), "cuda")
    assert why is not None and "CPU code" in why and "device='cuda'" in why


def test_dpsgd_device_defaults_to_the_wrapped_learners():
    assert DPSGD(learner=TorchMLP(hidden=(4,)))._device() == "cpu"
    assert DPSGD(learner=TorchMLP(hidden=(4,), device="auto"))._device() == resolve_device("auto")
    with pytest.raises(InvalidParameterError, match="^TorchMLP.device must be"):
        DPSGD(learner=TorchMLP(hidden=(4,), device="gpu"))._device()


def test_banks_say_where_they_trained(xy, one_torch_thread):
    X, y = xy
    assert TorchMLP(hidden=(4,), mode="fast", epochs=1).fit_many(X, y, SUBSETS, SEEDS).info["device"] == "cpu"
    bank = TorchModuleLearner(**LINEAR, epochs=1).fit_many(X, y, SUBSETS, SEEDS)
    assert bank.info["device"] == "cpu" and bank.model(0).device == "cpu"


def test_fingerprint_leaves_a_cpu_device_out_and_names_a_gpu_by_kind():
    from leakaudit.engine._fingerprint import learner_fingerprint

    doc = learner_fingerprint(TorchMLP(hidden=(4,)))["learner"]
    assert "device" not in doc["params"]
    assert learner_fingerprint(TorchMLP(hidden=(4,), device="auto"))["learner"] == (
        doc if not CUDA else {**doc, "params": {**doc["params"], "device": "cuda"}})
    inner = learner_fingerprint(DPSGD(learner=TorchMLP(hidden=(4,))))["learner"]
    assert "device" not in inner["params"] and "device" not in inner["params"]["learner"]["params"]


# -- on a GPU ------------------------------------------------------------------------------------------------------
def _pair(make, X, y, C, **kw):
    cpu = make("cpu").fit_many(X, y, SUBSETS, SEEDS, n_classes=C, **kw)
    gpu = make("cuda").fit_many(X, y, SUBSETS, SEEDS, n_classes=C, **kw)
    return cpu, gpu


@pytest.mark.parametrize("make", [
    lambda d: TorchMLP(hidden=(5, 4), mode="fast", epochs=3, backend="torch", dtype="float64", device=d),
    lambda d: TorchMLP(hidden=(5,), mode="fast", epochs=3, order="shared", optimizer="sgd", dtype="float64",
                       device=d),
    lambda d: TorchMLP(hidden=(5,), epochs=2, backend="torch", dtype="float64", device=d),
    lambda d: TorchMLP(hidden=(5,), mode="fast", epochs=3, output="logistic", init="sklearn", dtype="float64",
                       device=d),
], ids=["fast-adam", "fast-shared-sgd", "faithful", "logistic"])
@pytest.mark.gpu
@gpu_only
def test_torch_mlp_on_a_gpu_trains_the_cpu_models(make, xy):
    X, y = xy
    cpu, gpu = _pair(make, X, y, 2)
    assert gpu.info["device"] == "cuda" and gpu.info["backend"] == "torch"
    np.testing.assert_allclose(gpu.predict_proba(X), cpu.predict_proba(X), rtol=0, atol=1e-9)


@pytest.mark.gpu
@gpu_only
def test_auto_backend_takes_torch_on_a_gpu_and_compiled_is_refused(xy):
    X, y = xy
    bank = TorchMLP(hidden=(8,), mode="fast", epochs=1, device="cuda").fit_many(X, y, SUBSETS, SEEDS)
    assert bank.info["backend"] == "torch"
    with pytest.raises(InvalidParameterError, match="backend='compiled' cannot train this net: it is CPU code"):
        TorchMLP(hidden=(8,), mode="fast", backend="compiled", device="cuda").fit(X, y)


@pytest.mark.gpu
@gpu_only
@pytest.mark.parametrize("batched", ["vmap", "loop"])
def test_module_learner_on_a_gpu_trains_and_predicts_there(batched, xy):
    X, y = xy
    make = lambda d: TorchModuleLearner(**LINEAR, epochs=3, batch_size=16, batched=batched, device=d)  # noqa: E731
    cpu, gpu = _pair(make, X, y, 2)
    assert next(gpu.model(0).module.parameters()).device.type == "cuda"
    np.testing.assert_allclose(gpu.predict_proba(X), cpu.predict_proba(X), rtol=0, atol=1e-5)


@pytest.mark.gpu
@gpu_only
def test_cnn_on_a_gpu_trains_the_cpu_models(images):
    X, y = images
    make = lambda d: TorchCNN(size=2, epochs=2, batch_size=16, image_shape=(1, 8, 8), padding="same",  # noqa: E731
                              dtype="float64", device=d)
    cpu, gpu = _pair(make, X, y, 3)
    assert gpu.device == "cuda" and gpu.model(1)._bank.device == "cuda"
    np.testing.assert_allclose(gpu.predict_proba(X), cpu.predict_proba(X), rtol=0, atol=1e-9)


@pytest.mark.gpu
@gpu_only
@pytest.mark.parametrize("inner", ["mlp", "cnn"])
def test_dpsgd_on_a_gpu_without_noise_trains_the_cpu_models(inner, xy, images):
    """Noise comes from another generator on a GPU (Philox): without it the models agree to rounding."""
    if inner == "mlp":
        (X, y), C, net = xy, 2, TorchMLP(hidden=(5,), dtype="float64")
    else:
        (X, y), C, net = images, 3, TorchCNN(size=2, image_shape=(1, 8, 8), padding="same", dtype="float64")
    make = lambda d: DPSGD(learner=net, noise_multiplier=0.0, max_grad_norm=0.5, sampling_rate=0.2,  # noqa: E731
                           epochs=1, device=d)
    cpu, gpu = _pair(make, X, y, C)
    assert gpu.info["kernel"] == "torch"
    np.testing.assert_allclose(gpu.predict_proba(X), cpu.predict_proba(X), rtol=0, atol=1e-9)


@pytest.mark.gpu
@gpu_only
def test_dpsgd_canaries_and_noise_run_on_a_gpu(xy):
    X, y = xy
    inc = np.random.default_rng(2).random((3, 8)) < 0.5
    d = DPSGD(learner=TorchMLP(hidden=(5,)), sampling_rate=0.2, epochs=1, device="cuda")
    for directions in ("extra", "dirac", "random"):
        bank, scores = d.fit_many_with_canaries(X, y, SUBSETS, SEEDS, included=inc, directions=directions)
        assert scores.shape == (3, 8) and np.isfinite(scores).all()
        assert np.isfinite(bank.predict_proba(X)).all()


@pytest.mark.gpu
@gpu_only
def test_opacus_on_a_gpu_without_noise_trains_the_cpu_models(xy):
    pytest.importorskip("opacus")
    X, y = xy
    make = lambda d: DPSGD(learner=TorchModuleLearner(**LINEAR), noise_multiplier=0.0, batch_size=10,  # noqa: E731
                           epochs=1, device=d)
    cpu = make("cpu").fit_many(X, y, SUBSETS[:2], SEEDS[:2])
    gpu = make("cuda").fit_many(X, y, SUBSETS[:2], SEEDS[:2])
    np.testing.assert_allclose(gpu.predict_proba(X), cpu.predict_proba(X), rtol=0, atol=1e-5)
