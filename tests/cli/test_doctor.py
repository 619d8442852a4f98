"""``leakaudit doctor``: one line per compiled kernel with its variant, and the reason when it does not run."""

import subprocess
import sys

KERNELS = ("forest grow", "forest query", "MLP mini-batch", "per-example SGD", "DP-SGD step", "DP-SGD canaries")


def _doctor(env_extra=None):
    import os

    env = {**os.environ, **(env_extra or {})}
    return subprocess.run([sys.executable, "-m", "leakaudit.cli", "doctor"], capture_output=True, text=True, env=env,
                          timeout=120)


def test_doctor_names_every_kernel_and_its_variant():
    from leakaudit.learners.kernels import kernel_status

    r = _doctor()
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0].startswith("leakaudit ") and lines[1].startswith("CPU: ")
    for s in kernel_status():
        line = next(ln for ln in lines if ln.strip().startswith(f"{s.kernel}:"))
        assert f": {s.variant} (" in line
    assert {ln.strip().split(":")[0] for ln in lines[2:]} == set(KERNELS)


def test_doctor_says_why_a_kernel_does_not_run():
    r = _doctor({"LEAKAUDIT_NATIVE": "0"})
    assert r.returncode == 0, r.stderr
    body = [ln for ln in r.stdout.splitlines() if ln.startswith("  ")]
    assert len(body) == len(KERNELS) and all("fallback" in ln and "LEAKAUDIT_NATIVE=0" in ln for ln in body)
