"""``leakaudit doctor``: one line per compiled kernel with its variant, and the reason when it does not run; then
one line per optional extra, installed or what it misses."""

import subprocess
import sys

KERNELS = ("forest grow", "forest query", "gradient boosting", "MLP mini-batch", "per-example SGD", "DP-SGD step", "DP-SGD canaries")


def _doctor(env_extra=None):
    import os

    env = {**os.environ, **(env_extra or {})}
    return subprocess.run([sys.executable, "-m", "leakaudit.cli", "doctor"], capture_output=True, text=True, env=env,
                          timeout=120)


def _kernel_lines(stdout):
    lines = stdout.splitlines()
    return lines[2:lines.index(next(ln for ln in lines if ln.startswith("extras")))]


def test_doctor_names_every_kernel_and_its_variant():
    from leakaudit.learners.kernels import kernel_status

    r = _doctor()
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0].startswith("leakaudit ") and lines[1].startswith("CPU: ")
    for s in kernel_status():
        line = next(ln for ln in lines if ln.strip().startswith(f"{s.kernel}:"))
        assert f": {s.variant} (" in line
    assert {ln.strip().split(":")[0] for ln in _kernel_lines(r.stdout)} == set(KERNELS)


def test_doctor_says_why_a_kernel_does_not_run():
    r = _doctor({"LEAKAUDIT_NATIVE": "0"})
    assert r.returncode == 0, r.stderr
    body = _kernel_lines(r.stdout)
    assert len(body) == len(KERNELS) and all("fallback" in ln and "LEAKAUDIT_NATIVE=0" in ln for ln in body)


def test_doctor_lists_each_extra_installed_or_missing():
    from leakaudit._extras import EXTRAS, installed

    r = _doctor()
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    extras = lines[lines.index(next(ln for ln in lines if ln.startswith("extras"))) + 1:]
    assert {ln.strip().split(":")[0] for ln in extras} == {e for _, e in EXTRAS.values()}
    for module, (dist, extra) in EXTRAS.items():
        state = next(ln for ln in extras if ln.strip().startswith(f"{extra}:")).split(": ", 1)[1]
        assert state == "installed" or state.startswith("missing ")
        assert (dist in state.removeprefix("missing ").split(", ")) != installed(module), (extra, state)
