"""The forest kernel under AddressSanitizer: trained trees and crafted ones, every access in bounds.

The kernel is compiled as ``setup.py`` compiles its portable variant, plus ``-fsanitize=address``, and run in a child
process with the sanitizer's runtime preloaded (Python itself is not instrumented; the kernel is). The child runs
this package's forest tests (trained trees, compared with scikit-learn) and predicts with banks of crafted trees (a
lone leaf, a chain 60 deep, random shapes splitting on the last column, infinite thresholds, rows at the float32 extremes and
on a threshold; irregular numbers of trees per model) against the NumPy path. Any out-of-bounds access aborts the
child, which fails the test. Skipped, with the reason, where there is no C compiler or no sanitizer runtime.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]


def random_tree(rng, n_features: int, n_classes: int, max_depth: int, chain: bool = False) -> SimpleNamespace:
    """A scikit-learn-shaped tree (children numbered after their parent, leaves -1): random splits on any feature,
    the last one included; ``chain``: every left child a leaf, ``max_depth`` deep."""
    left, right, feat, thr, val = [], [], [], [], []

    def node(depth: int) -> int:
        i = len(left)
        left.append(-1), right.append(-1), feat.append(-2), thr.append(-2.0)
        val.append(rng.random(n_classes) + 1e-3)
        split = depth < max_depth and (chain or rng.random() < 0.8 or depth == 0)
        if split:
            feat[i] = n_features - 1 if chain or rng.random() < 0.3 else int(rng.integers(n_features))
            thr[i] = float(rng.choice([-np.inf, np.inf, rng.normal()], p=[0.05, 0.05, 0.9]))
            left[i] = node(max_depth if chain else depth + 1)
            right[i] = node(depth + 1)
        return i

    node(0)
    return SimpleNamespace(children_left=np.array(left), children_right=np.array(right), feature=np.array(feat),
                           threshold=np.array(thr), value=np.array(val)[:, None, :])


def crafted_bank(seed: int = 0, n_features: int = 4, n_classes: int = 3):
    """A bank of crafted trees in four models of 1, 3, 1 and 5 trees, and query rows at the extremes."""
    from leakaudit.learners.forest import RandomForestBank, _breadth_first, _tree_offsets

    rng = np.random.default_rng(seed)
    lone = SimpleNamespace(children_left=np.array([-1]), children_right=np.array([-1]), feature=np.array([-2]),
                           threshold=np.array([-2.0]), value=np.ones((1, 1, n_classes)))
    trees = [lone, random_tree(rng, n_features, n_classes, 60, chain=True)]
    trees += [random_tree(rng, n_features, n_classes, int(rng.integers(1, 12))) for _ in range(8)]
    parts = [_breadth_first(t, np.arange(n_classes), n_classes) for t in trees]
    nn = np.array([p[0].size for p in parts], dtype=np.int64)
    node_off, leaf_off = _tree_offsets(nn)
    feat, thr, left, leaf, value, depth = (np.concatenate([p[i] for p in parts]) for i in range(6))
    tree_ptr = np.array([0, 1, 4, 5, 10], dtype=np.int64)
    bank = RandomForestBank(tree_ptr, node_off, leaf_off, depth, feat, thr, left, leaf, value,
                            n_features=n_features, n_threads=2)
    X = rng.normal(size=(37, n_features))
    X[::5, -1] = 3e38
    X[1::7, 0] = -3e38
    X[2::7, -1] = thr[np.isfinite(thr)][0]  # a row exactly on a threshold
    return bank, X


CHILD = textwrap.dedent("""
    import sys
    import numpy as np
    import pytest
    sys.path.insert(0, {tests!r})
    from leakaudit.learners import _forest_native, forest
    from test_forest_asan import crafted_bank

    lib = _forest_native.KERNEL.open_file({lib!r}, "portable")
    _forest_native.KERNEL.load = lambda: lib
    assert _forest_native.library() is lib.lib
    for seed in range(4):
        bank, X = crafted_bank(seed)
        X32 = forest._as_float32(X, "X")
        want = forest._predict_numpy(bank, X32, np.zeros((bank.n_models, len(X), bank.n_classes)))
        np.testing.assert_array_equal(bank.predict_proba(X), want)
    print("crafted banks: ok", flush=True)
    sys.exit(pytest.main(["-q", "-p", "no:cacheprovider", {test_file!r}, "-k", {select!r}]))
""")


CONTROL = textwrap.dedent("""
    import sys
    sys.path.insert(0, {tests!r})
    from leakaudit.learners import _forest_native
    from test_forest_asan import crafted_bank

    lib = _forest_native.KERNEL.open_file({lib!r}, "portable")
    _forest_native.KERNEL.load = lambda: lib
    bank, X = crafted_bank(0)
    bank.feature = bank.feature.copy()
    bank.feature[bank.leaf < 0] = 4  # one past the last column: the last row's read lands in the redzone after X
    bank.predict_proba(X)
""")


def _asan_runtime() -> str | None:
    cc = os.environ.get("CC") or shutil.which("gcc") or shutil.which("cc")
    if cc is None:
        return None
    out = subprocess.run([cc, "-print-file-name=libasan.so"], capture_output=True, text=True).stdout.strip()
    return out if out and os.path.isabs(out) and os.path.exists(out) else None


@pytest.mark.slow
def test_forest_kernel_under_address_sanitizer(tmp_path):
    from leakaudit.learners._kernel_flags import compile_with

    runtime = _asan_runtime()
    if runtime is None:
        pytest.skip("no AddressSanitizer runtime (gcc -print-file-name=libasan.so found none)")
    try:
        lib = compile_with("forest", "portable", ["-fsanitize=address", "-fno-omit-frame-pointer"],
                           tmp_path / "forest_asan.so")
    except (RuntimeError, subprocess.CalledProcessError) as e:
        pytest.skip(f"the kernel does not compile with -fsanitize=address here: {e}")
    select = ("not variant and not disabled and not without_the_kernel and not refused and not adult "
              "and not sklearn_learner")
    code = CHILD.format(tests=str(Path(__file__).parent), lib=str(lib),
                        test_file=str(Path(__file__).with_name("test_forest.py")), select=select)
    env = {**os.environ, "LD_PRELOAD": runtime, "ASAN_OPTIONS": "detect_leaks=0:abort_on_error=1",
           "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=900,
                          cwd=tmp_path)
    out = proc.stdout + proc.stderr
    assert "AddressSanitizer" not in out, out[-4000:]
    assert proc.returncode == 0, out[-4000:]
    assert "crafted banks: ok" in out and " passed" in out, out[-2000:]
    # the control: a bank whose splits read past the rows is caught (so the run above could have failed)
    bad = CONTROL.format(tests=str(Path(__file__).parent), lib=str(lib))
    proc = subprocess.run([sys.executable, "-c", bad], capture_output=True, text=True, env=env, timeout=300,
                          cwd=tmp_path)
    assert proc.returncode != 0 and "heap-buffer-overflow" in proc.stderr, (proc.returncode, proc.stderr[-2000:])


def test_crafted_banks_predict_as_numpy_does_with_the_installed_kernel():
    """The crafted banks themselves, with the installed kernel (no sanitizer): the same numbers as the NumPy path."""
    from leakaudit.learners import forest

    if forest._compiled() is None:
        pytest.skip("no compiled forest kernel")
    for seed in range(2):
        bank, X = crafted_bank(seed)
        want = forest._predict_numpy(bank, forest._as_float32(X, "X"), np.zeros((bank.n_models, len(X), 3)))
        np.testing.assert_array_equal(bank.predict_proba(X), want)
