"""Build the compiled training kernels with the package (``pip install .`` / ``pip install -e .``).

Each kernel source in ``src/leakaudit/learners`` (``_forest_native.c``, ``_mlp_native.c``) is compiled into a
plain shared library per instruction-set variant (``_kernel_flags.py``): ``portable`` (the compiler's baseline
for the target, e.g. x86-64 with SSE2) and, on x86-64, ``avx2`` (AVX2 + FMA) and ``avx512``. They are built as
setuptools extensions so that the build backend places them beside the Python modules, but they are opened
with :mod:`ctypes`, not imported (``learners/_native.py``, which picks at run time the best variant the CPU
supports, asking ``_cpu_features.c``). Every extension is optional: a machine without a C compiler still
installs the package, whose learners then fall back to the reference libraries
(``leakaudit.learners.kernels.kernel_status()`` says which kernels are active and why).
"""

from __future__ import annotations

import copy
import os
import platform
import runpy

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

LEARNERS = "src/leakaudit/learners"
FLAGS = runpy.run_path(f"{LEARNERS}/_kernel_flags.py")
X86 = platform.machine().lower() in ("x86_64", "amd64")

extensions = [Extension("leakaudit.learners._cpu_features", [f"{LEARNERS}/_cpu_features.c"],
                        extra_compile_args=["-O2"], optional=True)]
for kernel, (source, kernel_flags) in FLAGS["KERNELS"].items():
    for variant, variant_flags in FLAGS["VARIANTS"].items():
        if variant in FLAGS["X86_ONLY"] and not X86:
            continue
        extensions.append(Extension(f"leakaudit.learners._{kernel}_kernel_{variant}", [f"{LEARNERS}/{source}"],
                                    extra_compile_args=FLAGS["COMMON"] + kernel_flags + variant_flags,
                                    libraries=["m"], optional=True))



class ParallelBuildExt(build_ext):
    """build_ext compiling the extensions in parallel, one per core (unless --parallel says otherwise)."""

    def finalize_options(self):
        super().finalize_options()
        if self.parallel is None:
            self.parallel = os.cpu_count() or 1

    def build_extension(self, ext):
        # the variants of a kernel compile the same source: each gets its own object directory, else two threads
        # write one object file and a variant may link another's code (AVX-512 instructions in "portable")
        own = copy.copy(self)
        own.build_temp = os.path.join(self.build_temp, ext.name)
        super(ParallelBuildExt, own).build_extension(ext)


setup(ext_modules=extensions, cmdclass={"build_ext": ParallelBuildExt})
