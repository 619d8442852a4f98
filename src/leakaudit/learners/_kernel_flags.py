"""How ``setup.py`` compiles the kernels: the sources, and the compiler flags of each instruction-set variant.

Read by ``setup.py`` (with :func:`runpy.run_path`, before the package is importable; standard library only), by
:mod:`._native` (the variants it may open), and by the tests and benchmarks that build a kernel with extra
definitions (:func:`compile_with`; the package itself never compiles at run time).
"""

import os
import shutil
import subprocess
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

#: every kernel: no fast-math (IEEE arithmetic throughout); -O3 over the interpreter's CFLAGS, no -fwrapv (which
#: they add; the kernels never rely on signed wrap-around, and it keeps the compiler from proving loop bounds) and no
#: debug information (-g0: smaller libraries, the same code)
COMMON = ["-O3", "-fno-wrapv", "-g0", "-std=gnu11", "-fno-math-errno", "-fno-trapping-math"]
#: kernel name -> (its C sources in this directory, linked into one library; its own flags). The MLP kernel's
#: specialised copies are split over translation units (``_mlp_common.c``, which they include, says which) so that
#: they compile in parallel; its heaviest sources come first, as setup.py starts them in this order
KERNELS = {
    "mlp": (("_mlp_dp.c", "_mlp_train.c", "_mlp_native.c"), []),
    # the forest's trees must be scikit-learn's node for node: no fused multiply-add, which rounds differently
    "forest": (("_forest_native.c",), ["-ffp-contract=off"]),
    # gradient boosting's trees and Newton steps as scikit-learn computes them: no fused multiply-add either
    "gb": (("_gb_native.c",), ["-ffp-contract=off"]),
}
#: (source, variant) -> flags after the others (the last -O wins): -O2 where a source's variant trains as fast as at
#: -O3, with the same numbers, and compiles faster (the timings are in benchmarks/README.md)
SOURCE_FLAGS = {("_mlp_dp.c", "avx512"): ["-O2"], ("_mlp_dp.c", "avx2"): ["-O2"]}
#: kernel name -> the files its sources include (a change to one rebuilds the kernel)
DEPENDS = {"mlp": ("_mlp_common.c", "_mlp_lanes.h"), "forest": ("_sklearn_rand.h",), "gb": ("_sklearn_rand.h",)}
#: variant -> its flags, best first; all but "portable" are built on x86-64 only. Chosen at run time by the CPU's
#: features (``_cpu_features.c``), never by -march=native: the built package runs on any CPU of its platform
VARIANTS = {
    "avx512": ["-mavx2", "-mfma", "-mavx512f", "-mavx512vl", "-mavx512bw", "-mavx512dq"],
    "avx2": ["-mavx2", "-mfma"],
    "portable": [],
}
#: variant -> what leakaudit_cpu_level (``_cpu_features.c``) must return for the CPU to run it
CPU_LEVEL = {"avx512": 2, "avx2": 1, "portable": 0}
X86_ONLY = ("avx512", "avx2")


def compile_with(kernel: str, variant: str, definitions: list[str], out: Path, source_dir: Path | None = None) -> Path:
    """Compile ``kernel`` as ``setup.py`` compiles ``variant``, plus ``definitions`` (e.g. ``-DNAME=1``), into ``out``.

    For tests and benchmarks that compare a build with test definitions against the installed one; needs the
    system C compiler (``$CC``, else cc or gcc: RuntimeError if there is none, CalledProcessError if it fails).
    The sources compile in parallel, one per core, as in ``setup.py``; from ``source_dir`` when given (e.g. another
    revision's sources, for an A/B of two versions), else from this directory.
    """
    cc = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        raise RuntimeError("no C compiler found ($CC, cc, gcc)")
    sources, flags = KERNELS[kernel]
    here = Path(source_dir) if source_dir is not None else Path(__file__).parent
    with tempfile.TemporaryDirectory(dir=Path(out).parent) as tmp:
        objects = [Path(tmp) / f"{Path(source).stem}.o" for source in sources]

        def one(pair):
            source, obj = pair
            subprocess.run([cc, *COMMON, *flags, *VARIANTS[variant], *SOURCE_FLAGS.get((source, variant), []),
                            *definitions, "-fPIC", "-c", "-o", str(obj), str(here / source)], check=True,
                           capture_output=True)

        with ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
            list(pool.map(one, zip(sources, objects)))
        subprocess.run([cc, "-shared", "-o", str(out), *map(str, objects), "-lm"], check=True, capture_output=True)
    return out
