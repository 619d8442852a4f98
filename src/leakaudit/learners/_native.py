"""Open the compiled kernels built with the package: the best variant this CPU runs, chosen at run time.

``setup.py`` compiles each kernel source (``_forest_native.c``, ``_mlp_native.c``) once per instruction-set
variant into a plain shared library beside this module (``_<kernel>_kernel_<variant>.<ext suffix>``), plus the
CPU probe ``_cpu_features.c``. They are opened with :mod:`ctypes` (never imported; ctypes calls release the
GIL). :class:`CompiledKernel` picks the first of :data:`VARIANTS` that was built and that the CPU supports;
nothing is compiled at run time. ``LEAKAUDIT_NATIVE=0`` disables every compiled kernel, and
``LEAKAUDIT_KERNEL_VARIANT`` (``portable``, ``avx2`` or ``avx512``) chooses one variant (for tests and
benchmarks; one the CPU cannot run is refused, with the reason).
"""

from __future__ import annotations

import ctypes
import importlib.util
import os
import threading
from collections.abc import Callable
from dataclasses import dataclass

from ._kernel_flags import CPU_LEVEL as _LEVEL
from ._kernel_flags import VARIANTS as _FLAGS

__all__ = ["VARIANTS", "CompiledKernel", "KernelLibrary", "cpu_level", "library_path", "ptr"]

#: the compiled variants, best first
VARIANTS = tuple(_FLAGS)
_PACKAGE = __name__.rpartition(".")[0]


def library_path(stem: str) -> str | None:
    """Where the extension ``leakaudit.learners.<stem>`` was built (found, not loaded); None if it was not."""
    spec = importlib.util.find_spec(f"{_PACKAGE}.{stem}")
    return None if spec is None or not spec.has_location else spec.origin


_CPU: list = []  # [level] once probed


def cpu_level() -> int:
    """What this CPU runs: 2 AVX-512 (F, VL, BW, DQ) with AVX2 and FMA, 1 AVX2 and FMA, 0 neither or unknown."""
    if not _CPU:
        path = library_path("_cpu_features")
        level = 0
        if path is not None:
            probe = ctypes.CDLL(path).leakaudit_cpu_level
            probe.restype, probe.argtypes = ctypes.c_int64, []
            level = int(probe())
        _CPU.append(level)
    return _CPU[0]


@dataclass(frozen=True)
class KernelLibrary:
    """An opened kernel library: the ctypes handle, which variant it is and the file it came from."""

    lib: ctypes.CDLL
    variant: str
    path: str


class CompiledKernel:
    """One kernel source's compiled library, opened on first use.

    ``name`` is the source's stem in ``setup.py`` (``"forest"``, ``"mlp"``); ``configure(lib)`` declares the
    library's functions (restype, argtypes). :meth:`load` returns the library or None, :attr:`reason` says why
    not (or why a lesser variant than the best built one runs).
    """

    def __init__(self, name: str, configure: Callable[[ctypes.CDLL], None]):
        self.name = name
        self._configure = configure
        self._lock = threading.Lock()
        # (the variant asked for, the CPU level) -> (the library or None, the reason)
        self._cache: dict[tuple[str | None, int], tuple[KernelLibrary | None, str | None]] = {}
        self.reason: str | None = None

    def open_variant(self, variant: str) -> KernelLibrary:
        """Open one variant, whether or not the CPU dispatch would choose it; RuntimeError if it cannot run here."""
        if variant not in _LEVEL:
            raise ValueError(f"variant must be one of {', '.join(VARIANTS)}; got {variant!r}")
        path = library_path(f"_{self.name}_kernel_{variant}")
        if path is None:
            raise RuntimeError(f"the {variant} variant of the {self.name} kernel was not built with the package "
                               "(an editable install builds only this CPU's best: LEAKAUDIT_BUILD_VARIANTS=all "
                               "pip install -e . builds every one; none without a C compiler)")
        if _LEVEL[variant] > cpu_level():
            raise RuntimeError(f"this CPU cannot run the {variant} variant of the {self.name} kernel")
        return self.open_file(path, variant)

    def open_file(self, path: str, variant: str) -> KernelLibrary:
        """Open the library at ``path`` as this kernel's ``variant`` (a test build: ``_kernel_flags.compile_with``)."""
        lib = ctypes.CDLL(str(path))
        self._configure(lib)
        return KernelLibrary(lib, variant, str(path))

    def _choose(self, wanted: str | None) -> tuple[KernelLibrary | None, str | None]:
        if wanted is not None:
            try:
                return self.open_variant(wanted), None
            except (RuntimeError, ValueError, OSError) as e:
                return None, f"LEAKAUDIT_KERNEL_VARIANT={wanted}: {e}"
        skipped = []
        for variant in VARIANTS:
            if library_path(f"_{self.name}_kernel_{variant}") is None:
                continue
            if _LEVEL[variant] > cpu_level():
                skipped.append(f"the CPU lacks the {variant} instructions")
                continue
            try:
                return self.open_variant(variant), "; ".join(skipped) or None
            except (RuntimeError, OSError) as e:  # a library that does not load: try the next variant
                skipped.append(f"{variant}: {type(e).__name__}: {e}")
        why = "; ".join(skipped) or "not built with the package (no C compiler at install time?)"
        return None, f"no compiled {self.name} kernel: {why}"

    def load(self) -> KernelLibrary | None:
        """The library (the variant chosen for this CPU, or by ``LEAKAUDIT_KERNEL_VARIANT``), or None."""
        if os.environ.get("LEAKAUDIT_NATIVE", "1") == "0":
            self.reason = "disabled by LEAKAUDIT_NATIVE=0"
            return None
        wanted = os.environ.get("LEAKAUDIT_KERNEL_VARIANT") or None
        key = (wanted, cpu_level())
        with self._lock:
            if key not in self._cache:
                self._cache[key] = self._choose(wanted)
            loaded, self.reason = self._cache[key]
        return loaded

    def library(self) -> ctypes.CDLL | None:
        """The library's ctypes handle, opened on first call; None if there is none (:attr:`reason` says why)."""
        loaded = self.load()
        return None if loaded is None else loaded.lib


def ptr(a) -> int:
    """The address of array ``a``'s data, for a kernel's struct fields and arguments."""
    return a.ctypes.data
