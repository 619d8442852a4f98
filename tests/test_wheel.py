"""``python -m build``: an sdist with the kernels' sources, and from it a platform wheel with every compiled variant,
which runs its kernels where no compiler is on PATH.

The wheel is built from the sdist (``python -m build``'s default), so the sdist is checked to build the kernels too.
It is installed with ``--no-deps`` into a fresh virtual environment whose dependencies come from this one (a
``.pth`` line to its site-packages; nothing of this checkout is on the new environment's path), and ``leakaudit
doctor`` runs there with ``PATH`` holding only the environment's ``bin``: every kernel must be the compiled one
(the best variant this CPU runs), opened from the installed wheel.
"""

import os
import platform
import subprocess
import sys
import sysconfig
import tarfile
import zipfile
from pathlib import Path

import pytest

from leakaudit.learners._kernel_flags import CPU_LEVEL, DEPENDS, KERNELS, VARIANTS, X86_ONLY

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parents[1]
X86 = platform.machine().lower() in ("x86_64", "amd64")


@pytest.fixture(scope="module")
def dist(tmp_path_factory):
    pytest.importorskip("build", reason="python -m build needs the build package (the dev extra)")
    out = tmp_path_factory.mktemp("dist")
    # no isolation, no dependency check: the build backend of this environment (setuptools, which builds wheels
    # itself), nothing downloaded
    r = subprocess.run([sys.executable, "-m", "build", "--no-isolation", "--skip-dependency-check", "--outdir",
                        str(out), str(ROOT)],
                       capture_output=True, text=True, timeout=3600)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    return out


def test_sdist_holds_every_kernel_source(dist):
    (sdist,) = dist.glob("leakaudit-*.tar.gz")
    with tarfile.open(sdist) as t:
        names = {Path(n).name for n in t.getnames()}
    sources = {s for srcs, _ in KERNELS.values() for s in srcs} | {d for ds in DEPENDS.values() for d in ds}
    assert sources | {"_cpu_features.c", "_kernel_flags.py", "setup.py"} <= names


def test_wheel_holds_every_variant_and_is_a_platform_wheel(dist):
    (wheel,) = dist.glob("leakaudit-*.whl")
    assert not wheel.name.endswith("-none-any.whl"), wheel.name  # compiled code: a platform wheel
    with zipfile.ZipFile(wheel) as z:
        names = {Path(n).name.split(".")[0] for n in z.namelist() if n.startswith("leakaudit/learners/")}
    variants = [v for v in VARIANTS if X86 or v not in X86_ONLY]
    assert {f"_{k}_kernel_{v}" for k in KERNELS for v in variants} | {"_cpu_features"} <= names


def test_installed_wheel_runs_the_compiled_kernels_without_a_compiler(dist, tmp_path):
    (wheel,) = dist.glob("leakaudit-*.whl")
    venv = tmp_path / "venv"
    # nothing of this process's environment (PYTHONPATH, PIP_*): only the venv's bin on PATH
    env = {"PATH": str(venv / "bin"), "HOME": str(tmp_path), "LANG": "C.UTF-8"}
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=600, env=env)
    py = venv / "bin" / "python"
    subprocess.run([str(py), "-m", "pip", "install", "--quiet", "--no-deps", "--no-index", str(wheel)], check=True,
                   timeout=600, env=env, cwd=tmp_path)
    site = Path(subprocess.run([str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                               capture_output=True, text=True, check=True, env=env).stdout.strip())
    here = {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]}
    (site / "_dependencies.pth").write_text("\n".join(sorted(here)) + "\n")
    for tool in ("cc", "gcc", "clang"):
        assert not any((Path(d) / tool).exists() for d in env["PATH"].split(os.pathsep))
    cli = venv / "bin" / "leakaudit"  # the wheel's console script
    assert cli.is_file()
    r = subprocess.run([str(cli), "doctor"], capture_output=True, text=True, env=env, cwd=tmp_path, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    lines = r.stdout.splitlines()
    kernels = lines[2:lines.index(next(ln for ln in lines if ln.startswith("extras")))]
    assert len(kernels) == 7, r.stdout
    from leakaudit.learners._native import cpu_level

    best = next(v for v in VARIANTS if (X86 or v not in X86_ONLY) and CPU_LEVEL[v] <= cpu_level())
    for line in kernels:
        assert f": {best} (compiled C" in line, line
    # opened from the wheel's files, not this checkout's
    code = "from leakaudit.learners.kernels import kernel_status; print(*{s.library for s in kernel_status()})"
    libraries = subprocess.run([str(py), "-c", code], capture_output=True, text=True, env=env, cwd=tmp_path,
                               check=True).stdout.split()
    assert libraries and all(Path(p).is_relative_to(site) for p in libraries), libraries
