"""Audit stage: the MIP noise (Izzo et al., Algorithm 1) that would give eta-MIP, and its accuracy cost.

Applies to models whose output is a parameter vector leakaudit can read and set
(its own MLPs and logistic regressions). Algorithm 1 trains on a random half of
the members, estimates each coordinate's spread from B runs on random halves
(here of the full member set: ``sigma_split="half_of_full"``, which depends on
the data set only; the paper's choice of halves of the training half can leak
membership through coordinates that are constant on it, see docs/mip.md), and
adds Corollary 8's noise. Reported: the noise constant, its size, and the test
accuracy with and without it.
"""

from __future__ import annotations

import warnings

import numpy as np

from .checks import Analysis, Skipped
from .context import AuditContext

__all__ = ["mip_analysis", "MIP_ETA"]

MIP_ETA = 0.05


def _vector_codec(model):
    """(extract(model) -> vector, rebuild(vector) -> model) for models we can read and set, else None."""
    from ..learners._torch_utils import MLPModel, pack_params, unpack_params

    if isinstance(model, MLPModel):
        sizes = [model.weights_[0].shape[0]] + [W.shape[1] for W in model.weights_]
        act = model.activation

        def extract(m):
            return pack_params(m.weights_, m.biases_)

        def rebuild(v):
            Ws, bs = unpack_params(np.asarray(v, dtype=model.weights_[0].dtype)[None, :], sizes)
            return MLPModel([W[0] for W in Ws], [b[0] for b in bs], act)

        return extract, rebuild
    return None


def _torch_module_codec(learner, X: np.ndarray):
    """Codec for a ``--module`` target's retrained instances (TorchModuleModel): parameters as one vector."""
    import torch

    from ..learners.torch_module import TorchModuleLearner, TorchModuleModel, _output_kind

    if not isinstance(learner, TorchModuleLearner):
        return None
    cls, kwargs = learner._check_params()
    template = learner._new_module(cls, kwargs, 0).eval()
    with torch.no_grad():
        kind = _output_kind(template(torch.as_tensor(X[:256], dtype=torch.float32)))
    n_classes = None

    def extract(m):
        nonlocal n_classes
        n_classes = m.n_classes
        return torch.nn.utils.parameters_to_vector(m.module.parameters()).detach().double().numpy()

    def rebuild(v):
        mod = learner._new_module(cls, kwargs, 0)
        with torch.no_grad():
            torch.nn.utils.vector_to_parameters(torch.as_tensor(np.asarray(v), dtype=torch.float32), mod.parameters())
        return TorchModuleModel(mod.eval(), kind, X.shape[1], n_classes)

    return extract, rebuild


def mip_analysis(ctx: AuditContext) -> Analysis:
    """The noise that gives eta-MIP (Izzo et al.) and its accuracy cost (informational: no check)."""
    skipped: list[dict] = []
    out = _mip(ctx.cfg, ctx.data, ctx.target, ctx.seeds, skipped)
    return Analysis(name="mip", summary=out, skipped=tuple(Skipped(**s) for s in skipped))


def _mip(cfg, data, target, seeds: dict, skipped: list) -> dict | None:
    from ..mip.mechanism import learner_train_many, mip_noise_addition

    codec = _vector_codec(target.model) if target.learner is not None else None
    if codec is None and target.learner is not None:
        codec = _torch_module_codec(target.learner, target.inputs(data)[0])
    if codec is None:
        skipped.append({"name": "MIP noise (Izzo et al.)",
                        "reason": "needs a model whose parameters leakaudit can read and set (its MLPs, or a torch "
                                  "module class it retrains); "
                                  "use `leakaudit mip` for other vector-valued training algorithms"})
        return None
    extract, rebuild = codec
    X_mem = target.inputs(data)[0]
    X_non = target.inputs(data)[1]
    B = {"smoke": 8, "standard": 32, "thorough": 128}[cfg.profile]
    train_many = learner_train_many(target.learner, extract, n_classes=data.n_classes)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rel = mip_noise_addition(None, X_mem, data.y_mem, eta=MIP_ETA, B=B, sigma_split="half_of_full",
                                 train_many=train_many, random_state=seeds["mip"])
    acc_half = float(np.mean(rebuild(rel.theta).predict(X_non) == data.y_non))
    acc_noised = float(np.mean(rebuild(rel.theta_hat).predict(X_non) == data.y_non))
    return {
        "eta": MIP_ETA,
        "M": rel.M,
        "B": B,
        "constant_c": float(rel.c),
        "parameters": int(rel.d),
        "parameters_with_noise": int(rel.d_eff),
        "noise_norm": float(np.linalg.norm(rel.noise)),
        "parameter_norm": float(np.linalg.norm(rel.theta)),
        "test_accuracy_without_noise": acc_half,
        "test_accuracy_with_noise": acc_noised,
        "accuracy_cost": acc_half - acc_noised,
        "method": "Algorithm 1 on a random half of the members, Corollary 8 noise (Laplace radius, Cor 11 constant), "
                  "sigma from halves of all members",
    }
