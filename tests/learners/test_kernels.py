"""kernel_status: which compiled kernels are active, and why not."""

from pathlib import Path

import pytest

from leakaudit.learners import _native
from leakaudit.learners.kernels import kernel_status

KERNELS = ["forest grow", "forest query", "gradient boosting", "MLP mini-batch", "per-example SGD", "DP-SGD step", "DP-SGD canaries"]


def test_status_names_each_kernel_and_its_variant():
    statuses = kernel_status()
    assert [s.kernel for s in statuses] == KERNELS
    for s in statuses:
        if s.variant == "fallback":  # a machine where the package was installed without a C compiler
            assert s.library is None and "not built with the package" in s.reason
        else:
            assert s.variant in _native.VARIANTS and Path(s.library).is_file()
            assert s.implementation.startswith("compiled C") and s.cpu


def test_status_says_why_a_kernel_is_not_compiled(monkeypatch):
    monkeypatch.setenv("LEAKAUDIT_NATIVE", "0")
    for s in kernel_status():
        assert s.variant == "fallback" and s.library is None and s.reason == "disabled by LEAKAUDIT_NATIVE=0"
        assert ("scikit-learn" if s.kernel in ("forest grow", "gradient boosting") else
                "numpy" if s.kernel == "forest query" else "torch") in s.implementation


def test_status_names_a_forced_variant_and_a_refused_one(monkeypatch):
    if any(s.variant == "fallback" for s in kernel_status()):
        pytest.skip("the kernels were not built with the package")
    # the least variant built: portable in a wheel; an editable install builds only this CPU's best (setup.py)
    forced = [v for v in _native.VARIANTS if _native.library_path(f"_mlp_kernel_{v}") is not None][-1]
    monkeypatch.setenv("LEAKAUDIT_KERNEL_VARIANT", forced)
    assert {s.variant for s in kernel_status()} == {forced}
    monkeypatch.setattr(_native, "_CPU", [0])  # as on a CPU without AVX2
    monkeypatch.setenv("LEAKAUDIT_KERNEL_VARIANT", "avx512")
    for s in kernel_status():
        assert s.variant == "fallback" and "LEAKAUDIT_KERNEL_VARIANT=avx512" in s.reason
        assert "neither AVX2 nor AVX-512" in s.cpu


def test_dp_step_says_when_the_library_lacks_it(monkeypatch):
    from leakaudit.learners import _mlp_native

    if any(s.variant == "fallback" for s in kernel_status()):
        pytest.skip("the kernels were not built with the package")
    assert {s.kernel: s.variant for s in kernel_status()}["DP-SGD step"] != "fallback"
    monkeypatch.setattr(_mlp_native, "supports_dp", lambda: False)  # as with a library built before the DP step
    dp = {s.kernel: s for s in kernel_status()}["DP-SGD step"]
    assert dp.variant == "fallback" and "without the DP-SGD step" in dp.reason and "torch" in dp.implementation


def test_dp_canaries_say_when_the_library_predates_them(monkeypatch):
    """A library built before the compiled DP step took the audit's canaries (no leakaudit_dp_abi): the torch loop
    inserts them, and the status says so and why; the DP step itself is still compiled."""
    from leakaudit.learners import _mlp_native

    if any(s.variant == "fallback" for s in kernel_status()):
        pytest.skip("the kernels were not built with the package")
    assert {s.kernel: s.variant for s in kernel_status()}["DP-SGD canaries"] != "fallback"
    monkeypatch.setattr(_mlp_native, "supports_dp_canaries", lambda: False)
    st = {s.kernel: s for s in kernel_status()}
    assert st["DP-SGD step"].variant != "fallback"
    c = st["DP-SGD canaries"]
    assert c.variant == "fallback" and "without the DP-SGD canaries" in c.reason and "torch" in c.implementation
