"""Build the compiled training kernels with the package (``pip install .`` / ``pip install -e .``).

Each kernel's sources in ``src/leakaudit/learners`` (``_forest_native.c``; ``_mlp_native.c``, ``_mlp_train.c``,
``_mlp_dp.c``) are compiled into a plain shared library per instruction-set variant (``_kernel_flags.py``): ``portable`` (the compiler's baseline
for the target, e.g. x86-64 with SSE2) and, on x86-64, ``avx2`` (AVX2 + FMA) and ``avx512``. They are built as
setuptools extensions so that the build backend places them beside the Python modules, but they are opened
with :mod:`ctypes`, not imported (``learners/_native.py``, which picks at run time the best variant the CPU
supports, asking ``_cpu_features.c``). Every extension is optional: a machine without a C compiler still
installs the package, whose learners then fall back to the reference libraries
(``leakaudit.learners.kernels.kernel_status()`` says which kernels are active and why).

Which variants: a wheel or a plain ``pip install .`` (``python -m build`` makes the wheel from the sdist) builds
every one, as it may run on any CPU of its platform. An editable install (``pip install -e .``, as ``make audit``
and ``make install`` run it: setuptools' ``editable_mode``) runs where it was built, so it builds only the best
variant this CPU runs (asked of the CPU probe, built first) and removes the checkout's libraries of the others, which
would be stale. ``LEAKAUDIT_BUILD_VARIANTS=all`` (or ``=host``) overrides that choice either way.
"""

from __future__ import annotations

import copy
import ctypes
import functools
import os
import platform
import runpy
import threading
from concurrent.futures import ThreadPoolExecutor

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext
from setuptools.errors import BaseError, CCompilerError

LEARNERS = "src/leakaudit/learners"
FLAGS = runpy.run_path(f"{LEARNERS}/_kernel_flags.py")
X86 = platform.machine().lower() in ("x86_64", "amd64")

# every kernel variant, the heaviest first (setup.py starts the compiler on them in this order), then the CPU probe
extensions = []
for kernel, (sources, kernel_flags) in FLAGS["KERNELS"].items():
    for variant, variant_flags in FLAGS["VARIANTS"].items():
        if variant in FLAGS["X86_ONLY"] and not X86:
            continue
        extensions.append(Extension(f"leakaudit.learners._{kernel}_kernel_{variant}",
                                    [f"{LEARNERS}/{source}" for source in sources],
                                    depends=[f"{LEARNERS}/{d}" for d in FLAGS["DEPENDS"].get(kernel, ())],
                                    extra_compile_args=FLAGS["COMMON"] + kernel_flags + variant_flags,
                                    libraries=["m"], optional=True))
extensions.append(Extension("leakaudit.learners._cpu_features", [f"{LEARNERS}/_cpu_features.c"],
                            extra_compile_args=["-O2"], optional=True))


class ParallelBuildExt(build_ext):
    """build_ext compiling every source of every extension at once, as many compiler processes as cores.

    setuptools' --parallel builds extensions side by side but an extension's sources one after another; here each
    source is a job of its own (a kernel variant's translation units compile in parallel, then link), and a
    semaphore keeps the compiler processes at the number of cores (``--parallel N``: N).
    """

    def finalize_options(self):
        super().finalize_options()
        asked = self.parallel if isinstance(self.parallel, int) and not isinstance(self.parallel, bool) else 0
        self.slots = threading.BoundedSemaphore(asked if asked > 0 else os.cpu_count() or 1)
        self.parallel = max(1, len(self.extensions or ()))  # a thread per extension; the semaphore bounds the work

    def build_extensions(self):
        if os.environ.get("LEAKAUDIT_BUILD_VARIANTS", "host" if self.editable_mode else "all") == "host":
            self.extensions = self._host_variants()
        super().build_extensions()

    def _host_variants(self):
        """The CPU probe and, of each kernel, the best variant this CPU runs; the checkout's other variants removed."""
        probe = next(e for e in self.extensions if e.name.endswith("._cpu_features"))
        try:
            self.build_extension(probe)
            ask = ctypes.CDLL(os.path.abspath(self.get_ext_fullpath(probe.name))).leakaudit_cpu_level
            ask.restype = ctypes.c_int64
            level = ask()
        except (BaseError, CCompilerError, OSError):  # no compiler: every extension fails alike (all are optional)
            level = 0
        host = next(v for v, needs in FLAGS["CPU_LEVEL"].items()
                    if needs <= level and (X86 or v not in FLAGS["X86_ONLY"]))
        keep = [e for e in self.extensions if e is probe or e.name.endswith(f"_kernel_{host}")]
        for ext in self.extensions:
            if ext not in keep:  # a library left by an earlier build (editable: in the checkout) would be stale
                for path in (self.get_ext_fullpath(ext.name), os.path.join("src", self.get_ext_filename(ext.name))):
                    if os.path.exists(path):
                        os.remove(path)
        return keep

    def build_extension(self, ext):
        # the variants of a kernel compile the same sources: each gets its own object directory, else two threads
        # write one object file and a variant may link another's code (AVX-512 instructions in "portable")
        own = copy.copy(self)
        own.build_temp = os.path.join(self.build_temp, ext.name)
        own.compiler = copy.copy(self.compiler)  # a CCompiler still (build_ext checks), compiling sources in parallel
        own.compiler.compile = functools.partial(_compile_in_parallel, self.compiler.compile, self.slots,
                                                 ext.name.rpartition("_")[2])
        super(ParallelBuildExt, own).build_extension(ext)


def _compile_in_parallel(compile, slots, variant, sources, *args, extra_postargs=None, **kwargs):
    """CCompiler.compile with each source in a thread of its own, each holding one of ``slots`` while it compiles,
    with the flags of that source in ``variant`` after the extension's (``SOURCE_FLAGS``)."""
    def one(source):
        with slots:
            own = FLAGS["SOURCE_FLAGS"].get((os.path.basename(source), variant), [])
            return compile([source], *args, extra_postargs=[*(extra_postargs or []), *own], **kwargs)

    with ThreadPoolExecutor(max_workers=len(sources) or 1) as pool:
        return [obj for objects in pool.map(one, sources) for obj in objects]


setup(ext_modules=extensions, cmdclass={"build_ext": ParallelBuildExt})
