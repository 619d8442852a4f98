"""``--device`` of the commands that train torch models: put the learner on the device, or say it cannot go there."""

from __future__ import annotations

from typing import Any

__all__ = ["DEVICE_HELP", "resolved_device", "with_device"]

DEVICE_HELP = ("Where torch models train: cpu, cuda, cuda:N or auto (a GPU when one is visible). Learners without "
               "torch (logreg, tree, forest, gradient-boosting, knn, naive Bayes) train on the CPU only.")


def with_device(learner: Any, device: str, *, model: str, flag: str = "--device") -> Any:
    """``learner`` with its ``device`` parameter set to ``device`` (checked now: CUDA must be available).

    A learner without a ``device`` parameter takes only ``"cpu"`` (and ``"auto"``, which then means the CPU);
    anything else is refused in one line naming ``flag`` and ``model``.
    """
    from ..exceptions import InvalidParameterError
    from ..learners import check_device, resolve_device

    check_device(device, name=flag)
    if "device" in learner.get_params(deep=False):
        resolve_device(device, name=flag)  # fails fast where CUDA is absent
        return learner.set_params(device=device)
    if device not in ("cpu", "auto"):
        raise InvalidParameterError(f"{flag} {device}: --model {model} ({type(learner).__name__}) trains on the CPU "
                                    "only; a GPU serves the torch learners")
    return learner


def resolved_device(learner: Any) -> str:
    """Where ``learner`` trains: its resolved ``device`` ("cpu", "cuda", "cuda:N"), "cpu" for a learner without one
    (a DPSGD without its own: the wrapped learner's)."""
    from ..learners import resolve_device

    device = learner.get_params(deep=False).get("device")
    if device is None:
        inner = learner.get_params(deep=False).get("learner")
        return resolved_device(inner) if inner is not None else "cpu"
    return resolve_device(device)
