"""How far the sparse MLP path could get toward the matrix-multiply peak: its samples split into the work its FLOP
count counts and the work it does not, and the bound that split puts on the fraction of the peak.

``bench_machine_limit.py`` reports the sparse path's rate as performed FLOPs per CPU second over torch.mm's 1-thread
peak, counting per row and model ``4 (nnz + 1) h`` (the first layer's forward sums and its gradient's scatter) and
``6 h C`` (the output layer). The path also does work that count leaves out: the tanh (a rational function with a
division a unit), its derivative, the softmax (expf and a division), a row's set-up, Adam's update (a square root
and two divisions a parameter), the epochs' orders, the one-hot preparation and the Python around the call. If the
counted work ran at the peak and the rest took the time it takes now, the fraction would be f / (f + u) (f: the
fraction now, u: the share of the time not counted), which no faster multiply-add can pass.

The script builds the MLP kernel with debug lines (``-g``, the variant this CPU runs), runs the ``mlp_sparse`` case
of ``bench_machine_limit.py`` on one thread under ``perf record`` (from after the start-up and a warm-up call; the
whole script took 90 s on 2 cores of an Intel Xeon, 2026-11-28), attributes the rows function's samples to source lines and groups them: counted (forward sums,
logits, output layer's backward, bias gradient, the scatter, the FMA intrinsic) or not (tanh and its derivative,
softmax, a row's set-up); the other functions' samples (Adam, orders, preparation, Python, ...) are not counted work.
The line groups are written for ``_mlp_lanes.h`` and ``_mlp_common.c`` as of this script's revision: the script
refuses when a marker line it relies on moved.

Needs ``perf`` (Linux) and a C compiler. Usage: .venv/bin/python benchmarks/mlp_sparse_bound.py [--calls 30]
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _common as C  # noqa: E402

LEARNERS = C.ROOT / "src" / "leakaudit" / "learners"

#: (file, first line, last line, group): "C ..." counted by bench_machine_limit's FLOP formula, "U ..." not
RANGES = [
    ("_mlp_lanes.h", 44, 57, "U row set-up"), ("_mlp_lanes.h", 85, 86, "U row set-up"),
    ("_mlp_lanes.h", 58, 71, "C forward sums"), ("_mlp_lanes.h", 72, 74, "U tanh"),
    ("_mlp_lanes.h", 75, 82, "C logits"), ("_mlp_lanes.h", 83, 83, "U softmax"),
    ("_mlp_lanes.h", 131, 146, "C output layer backward"), ("_mlp_lanes.h", 150, 151, "U tanh derivative"),
    ("_mlp_lanes.h", 147, 155, "C bias gradient"), ("_mlp_lanes.h", 166, 189, "C scatter"),
    ("_mlp_common.c", 108, 113, "U tanh"), ("_mlp_common.c", 114, 114, "C FMA intrinsic"),
    ("_mlp_common.c", 115, 115, "U tanh"), ("_mlp_common.c", 116, 116, "C broadcast (forward sums, scatter)"),
    ("_mlp_common.c", 118, 119, "C logits"), ("_mlp_common.c", 124, 150, "U tanh"),
    ("_mlp_common.c", 151, 215, "U softmax"),
]
#: lines the ranges above rely on: (file, line, text it must contain)
MARKERS = [
    ("_mlp_lanes.h", 58, "forward: the rows' t-th listed inputs"), ("_mlp_lanes.h", 74, "VTANH"),
    ("_mlp_lanes.h", 80, "b2[c]"), ("_mlp_lanes.h", 83, "softmax_grad"), ("_mlp_lanes.h", 131, "!DP"),
    ("_mlp_lanes.h", 150, "tanh' = 1 - a^2"), ("_mlp_lanes.h", 166, "int64_t nsame = 0"),
    ("_mlp_common.c", 114, "vfma16"), ("_mlp_common.c", 115, "vabs16"), ("_mlp_common.c", 116, "vbcast16"),
    ("_mlp_common.c", 119, "hi8"), ("_mlp_common.c", 148, "tanh_rat16"), ("_mlp_common.c", 215, "}"),
    ("_mlp_common.c", 167, "exp_f32"), ("_mlp_common.c", 193, "softmax_grad"),
]
#: GCC intrinsics' header lines (inlined into the rows function): header, function name, group
INTRINSICS = [("avx512fintrin.h", "_mm512_fmadd_ps", "C FMA intrinsic"),
              ("avx512fintrin.h", "_mm512_mask_blend_ps", "U tanh"),  # vsel16: the tanh's select
              ("avx512fintrin.h", "_mm512_min_ps", "U tanh"), ("avx512fintrin.h", "_mm512_max_ps", "U tanh"),
              ("avx512fintrin.h", "_mm512_castps512_ps256", "C logits"),  # lo8, in VACC8
              ("avx512fintrin.h", "_mm512_extractf64x4_pd", "C logits"),  # what lo8's cast calls
              ("avx512dqintrin.h", "_mm512_andnot_ps", "U tanh"),  # vabs16
              ("avx512dqintrin.h", "_mm512_extractf32x8_ps", "C logits"),  # hi8, in VACC8
              ("avxintrin.h", "_mm256_blendv_ps", "U tanh"), ("avxintrin.h", "_mm256_min_ps", "U tanh"),
              ("avxintrin.h", "_mm256_max_ps", "U tanh"), ("fmaintrin.h", "_mm256_fmadd_ps", "C FMA intrinsic")]

CHILD = """
import sys, time, warnings
sys.path.insert(0, {bench!r})
from leakaudit.learners import _mlp_native
lib = _mlp_native.KERNEL.open_file({lib!r}, {variant!r})
_mlp_native.KERNEL.load = lambda: lib
import bench_machine_limit as M
fn, _, _, desc, _, flops = M.mlp_case(64, 2000, 20, sparse=True, n_threads=1)
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    fn()
    print("ready", time.perf_counter(), flush=True)
    t = time.process_time()
    for _ in range({calls}):
        fn()
    c = (time.process_time() - t) / max({calls}, 1)
print("result", c, flops, flush=True)
"""


def check_markers() -> None:
    for name, line, text in MARKERS:
        got = (LEARNERS / name).read_text().splitlines()[line - 1]
        if text not in got:
            sys.exit(f"{name}:{line} no longer holds {text!r} (it reads {got.strip()!r}): update RANGES and MARKERS")


def intrinsic_lines() -> dict:
    """(header name, line) -> group for the intrinsics' bodies, read off the compiler's own headers."""
    out = {}
    cc = shutil.which("gcc") or shutil.which("cc")
    for header, fn, group in INTRINSICS:
        path = subprocess.run([cc, f"-print-file-name=include/{header}"], capture_output=True, text=True).stdout.strip()
        if not Path(path).exists():
            continue
        lines = Path(path).read_text().splitlines()
        for i, text in enumerate(lines):
            if re.match(rf"{fn}\s*\(", text):
                for j in range(i, min(i + 12, len(lines))):
                    out[(header, j + 1)] = group
                    if lines[j].startswith("}"):
                        break
    return out


def group_of(file: str, line: int, intr: dict) -> str:
    for name, lo, hi, group in RANGES:
        if file == name and lo <= line <= hi:
            return group
    return intr.get((file, line), f"? {file}:{line}")


def peak_1thread() -> float:
    import torch

    torch.set_num_threads(1)
    a, b = torch.randn(2048, 2048), torch.randn(2048, 2048)
    best = min(_cpu(lambda: torch.mm(a, b)) for _ in range(10))
    return 2 * 2048 ** 3 / best / 1e9


def _cpu(fn) -> float:
    t = time.process_time()
    fn()
    return time.process_time() - t


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--calls", type=int, default=30)
    a = ap.parse_args(argv)
    if shutil.which("perf") is None:
        sys.exit("perf is not installed")
    check_markers()
    from leakaudit.learners import _mlp_native
    from leakaudit.learners._kernel_flags import compile_with

    variant = _mlp_native.KERNEL.load().variant
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        lib = compile_with("mlp", variant, ["-g"], tmp / "mlp_g.so")
        code = CHILD.format(bench=str(C.ROOT / "benchmarks"), lib=str(lib), variant=variant, calls=0)
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, env={**os.environ,
                       "OMP_NUM_THREADS": "1"})
        delay_ms = int((time.perf_counter() - t0) * 1000) + 500  # start-up and the warm-up call, left out
        peak_before = peak_1thread()
        data = tmp / "perf.data"
        code = CHILD.format(bench=str(C.ROOT / "benchmarks"), lib=str(lib), variant=variant, calls=a.calls)
        run = subprocess.run(["perf", "record", "-q", "-F", "2000", "-D", str(delay_ms), "-o", str(data),
                              sys.executable, "-c", code], check=True, capture_output=True, text=True,
                             env={**os.environ, "OMP_NUM_THREADS": "1"})
        peak_after = peak_1thread()
        cpu, flops = (float(v) for v in run.stdout.split("result")[1].split())
        syms = subprocess.run(["perf", "report", "-i", str(data), "--stdio", "--sort", "sym"],
                              capture_output=True, text=True).stdout
        by_sym = {m[2]: float(m[1]) for m in re.finditer(r"^\s*([\d.]+)%\s+\[.\]\s+(\S+)", syms, re.M)}
        rows_sym = next((s for s in by_sym if s.startswith("rows_train_")), None)
    if rows_sym is None:
        sys.exit("perf saw no rows_train_* function: the case did not run on the compiled kernel")
        lines = subprocess.run(["perf", "report", "-i", str(data), "--stdio", "--sort", "srcline",
                                f"--symbols={rows_sym}"], capture_output=True, text=True).stdout
    total = sum(float(m[1]) for m in re.finditer(r"^\s*([\d.]+)%", syms, re.M))
    intr = intrinsic_lines()
    groups: dict[str, float] = {}
    for m in re.finditer(r"^\s*([\d.]+)%\s+(\S+?):(\d+)", lines, re.M):
        g = group_of(m[2], int(m[3]), intr)
        groups[g] = groups.get(g, 0.0) + float(m[1]) / total
    rows_share = by_sym[rows_sym] / total
    others = {f"U {s}": v / total for s, v in sorted(by_sym.items(), key=lambda kv: -kv[1])[:8] if s != rows_sym}
    others["U the rest (Python, numpy, ...)"] = 1.0 - rows_share - sum(others.values())
    groups.update(others)
    rate = flops / cpu / 1e9
    print(f"mlp_sparse on 1 thread, {variant} build with -g, {a.calls} calls: {cpu:.4f} CPU s a call, "
          f"{rate:.2f} GFLOP/s performed per CPU second; load {C.loadavg():.1f}")
    print(f"torch.mm 1-thread peak before / after: {peak_before:.1f} / {peak_after:.1f} GFLOP/s per CPU second")
    print(f"\nshare of the samples (the rows function {100 * rows_share:.1f} %):")
    for g, v in sorted(groups.items(), key=lambda kv: (kv[0][0], -kv[1])):
        print(f"  {g:40s} {100 * v:6.2f} %")
    counted = sum(v for g, v in groups.items() if g.startswith("C "))
    unknown = sum(v for g, v in groups.items() if g.startswith("? "))
    u = 1.0 - counted - unknown
    for peak in (peak_before, peak_after):
        f = rate / peak
        print(f"\npeak {peak:.1f}: fraction now f = {f:.3f}; counted work {100 * counted:.1f} % of the time "
              f"(running at {f / counted:.2f} of the peak), not counted u = {100 * u:.1f} %"
              f"{f' (unattributed lines {100 * unknown:.1f} %)' if unknown else ''}")
        print(f"  bound with the counted work at the peak: f / (f + u) = {f / (f + u):.3f}; "
              f"0.6 needs u <= {f * (1 / 0.6 - 1):.3f} (the uncounted work {u / (f * (1 / 0.6 - 1)):.1f}x faster)")


if __name__ == "__main__":
    main()
