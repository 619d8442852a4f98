"""Which compiled training kernels are active on this machine, and why (for ``leakaudit doctor``).

The package's C kernels are built with it (``setup.py``) in a portable and, on x86-64, AVX2 and AVX-512
variants; at run time the best one this CPU runs is opened (``learners/_native.py``). Where none is available
(no C compiler when the package was installed, ``LEAKAUDIT_NATIVE=0``, a variant forced by
``LEAKAUDIT_KERNEL_VARIANT`` that the CPU cannot run) the learners fall back to the reference library the
kernel re-implements (scikit-learn for forests, torch for networks), and :func:`kernel_status` says which and why.
Where the kernel is compiled, a learner still uses the reference for a configuration the kernel does not train
(TorchMLP with two hidden layers, float64 or an unlisted width; its bank's ``info["kernel"]`` says which ran).

Examples
--------
>>> from leakaudit.learners.kernels import kernel_status
>>> [s.kernel for s in kernel_status()]  # doctest: +NORMALIZE_WHITESPACE
['forest grow', 'forest query', 'gradient boosting', 'MLP mini-batch', 'per-example SGD',
 'DP-SGD step', 'DP-SGD canaries']
"""

from __future__ import annotations

from dataclasses import dataclass

from . import _forest_native, _mlp_native, gradient_boosting
from ._native import cpu_level

__all__ = ["KernelStatus", "kernel_status"]

_CPU_NAMES = {2: "AVX-512 (F, VL, BW, DQ), AVX2 and FMA", 1: "AVX2 and FMA", 0: "neither AVX2 nor AVX-512"}

# kernel -> (its compiled library, the C source, what runs without it, and for a kernel that a library built from
# an older source may lack, the check that the loaded library has it)
_KERNELS = {
    "forest grow": (_forest_native.KERNEL, "_forest_native.c",
                    "scikit-learn's RandomForestClassifier (the same trees), converted to a bank", None),
    "forest query": (_forest_native.KERNEL, "_forest_native.c", "numpy: the bank's trees descended a level a step",
                     None),
    "gradient boosting": (gradient_boosting.KERNEL, "_gb_native.c",
                          "scikit-learn's GradientBoostingClassifier (the same algorithm)", None),
    "MLP mini-batch": (_mlp_native.KERNEL, "_mlp_native.c", "torch (_torch_batched.BatchedMLPTrainer)", None),
    "per-example SGD": (_mlp_native.KERNEL, "_mlp_native.c", "torch (_torch_batched.BatchedMLPTrainer, batch 1)",
                        None),
    "DP-SGD step": (_mlp_native.KERNEL, "_mlp_native.c", "torch (dp_sgd's batched per-example-clipping loop)",
                    lambda: _mlp_native.supports_dp()),
    # the one-run audit's white-box canaries inserted by the compiled DP step (leakaudit_dp_abi() >= 2)
    "DP-SGD canaries": (_mlp_native.KERNEL, "_mlp_native.c",
                        "torch (dp_sgd's batched loop inserts the audit's gradient canaries)",
                        lambda: _mlp_native.supports_dp_canaries()),
}


@dataclass(frozen=True)
class KernelStatus:
    """One training kernel's state on this machine.

    Attributes
    ----------
    kernel : str
        "forest grow", "forest query", "gradient boosting", "MLP mini-batch", "per-example SGD", "DP-SGD step" or
        "DP-SGD canaries" (the one-run audit's gradient canaries inserted by the DP step).
    variant : str
        The compiled variant in use ("avx512", "avx2", "portable"), or "fallback" when none is.
    implementation : str
        What runs: the C source of the compiled kernel, or the fallback implementation.
    library : str or None
        The compiled library's file (None for the fallback).
    reason : str or None
        Why the kernel is not compiled (variant "fallback"), or why a lesser variant than the best built one
        runs; None when the best variant runs.
    cpu : str
        The instruction sets this CPU (and its operating system) supports, of those the variants need.
    """

    kernel: str
    variant: str
    implementation: str
    library: str | None
    reason: str | None
    cpu: str


def kernel_status() -> tuple[KernelStatus, ...]:
    """The state of each training kernel: the variant in use and, when not the best or not compiled, why.

    Opens the compiled libraries if no learner has yet (never compiles anything).

    Returns
    -------
    statuses : tuple of KernelStatus
        One per kernel, in the order forest grow, forest query, gradient boosting, MLP mini-batch, per-example SGD,
        DP-SGD step, DP-SGD canaries.
    """
    cpu = _CPU_NAMES[cpu_level()]
    out = []
    for name, (compiled, source, fallback, has_kernel) in _KERNELS.items():
        loaded = compiled.load()
        if loaded is None:
            out.append(KernelStatus(name, "fallback", fallback, None, compiled.reason, cpu))
        elif has_kernel is not None and not has_kernel():
            out.append(KernelStatus(name, "fallback", fallback, None, f"the compiled library was built from a "
                                    f"source without the {name} (rebuild the package)", cpu))
        else:
            out.append(KernelStatus(name, loaded.variant, f"compiled C ({source})", loaded.path, compiled.reason,
                                    cpu))
    return tuple(out)
