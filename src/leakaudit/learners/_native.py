"""Build a C source of this package into a shared library for this machine, once, and cache it.

Used by the native kernels (``_mlp_native``, ``_forest_native``). The source is compiled with the system C
compiler (``$CC``, else ``cc``/``gcc``/``clang``) into a cache directory (``$LEAKAUDIT_CACHE_DIR``, else
``~/.cache/leakaudit``), named by a hash of the source, the flags, the compiler's version and the CPU, so
a changed source, flag, compiler or machine builds anew and a cached library is never loaded on another CPU.
"""

from __future__ import annotations

import ctypes
import hashlib
import os
import platform
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Callable

__all__ = ["compiler", "cpu_tag", "compile_shared", "load_once"]


def compiler() -> str | None:
    """The C compiler to use: ``$CC``, else the first of cc, gcc, clang on the PATH; None if there is none."""
    for cand in (os.environ.get("CC"), "cc", "gcc", "clang"):
        if cand and shutil.which(cand):
            return cand
    return None


def cpu_tag() -> str:
    """This CPU's model name and flags (part of the cache key: ``-march=native`` code is CPU-specific)."""
    try:
        with open("/proc/cpuinfo") as f:
            lines = [ln for ln in f if ln.startswith(("model name", "flags"))]
        return "".join(sorted(set(lines)))
    except OSError:
        return platform.processor() or platform.machine()


def compile_shared(source: Path, flags: list[str], stem: str) -> Path:
    """Compile ``source`` with ``flags`` (plus ``-shared -fPIC``, ``-lm``) into ``<cache>/<stem>_<key>.so``.

    Returns the library's path (built now, or found in the cache). Raises RuntimeError naming the compiler's
    error when no compiler is found or the build fails; the build writes a temporary file and renames it,
    so a concurrent or failed build never leaves a half-written library behind.
    """
    cc = compiler()
    if cc is None:
        raise RuntimeError("no C compiler found ($CC, cc, gcc, clang)")
    version = subprocess.run([cc, "--version"], capture_output=True, text=True, timeout=30).stdout
    src = Path(source).read_bytes()
    key = hashlib.sha256(src + " ".join(flags).encode() + version.encode() + cpu_tag().encode()).hexdigest()[:20]
    cache = Path(os.environ.get("LEAKAUDIT_CACHE_DIR") or Path.home() / ".cache" / "leakaudit")
    target = cache / f"{stem}_{key}.so"
    if not target.exists():
        cache.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(suffix=".so", dir=cache)
        os.close(fd)
        try:
            res = subprocess.run([cc, *flags, "-shared", "-fPIC", "-o", tmp, str(source), "-lm"],
                                 capture_output=True, text=True, timeout=300)
            if res.returncode != 0:
                raise RuntimeError(f"{cc} failed: {res.stderr.strip()[-500:]}")
            os.replace(tmp, target)  # atomic: a concurrent build never loads a half-written file
        finally:
            if os.path.exists(tmp):
                os.unlink(tmp)
    return target


def load_once(g: dict, build: Callable[[], ctypes.CDLL]) -> ctypes.CDLL | None:
    """The library of a native-kernel module, built by ``build()`` on the module's first call; None if unusable.

    ``g`` is the module's ``globals()``, which hold its state: ``_LOCK``, ``_LIB``, ``_TRIED``, ``_REASON``
    (a one-item list: the build's failure) and ``UNAVAILABLE_REASON`` (why the library is not used, None while
    it is). A failed build (no compiler, a compiler error, a library that does not load) is tried once and
    then falls back to the numba kernels; ``LEAKAUDIT_NATIVE=0`` disables every native kernel.
    """
    if os.environ.get("LEAKAUDIT_NATIVE", "1") == "0":
        g["UNAVAILABLE_REASON"] = "disabled by LEAKAUDIT_NATIVE=0"
        return None
    with g["_LOCK"]:
        if not g["_TRIED"]:
            g["_TRIED"] = True
            try:
                g["_LIB"] = build()
            except Exception as e:  # no compiler, a failed build or load: the numba kernels run instead
                g["_REASON"][0] = f"{type(e).__name__}: {e}"
                g["_LIB"] = None
        g["UNAVAILABLE_REASON"] = g["_REASON"][0]
    return g["_LIB"]
