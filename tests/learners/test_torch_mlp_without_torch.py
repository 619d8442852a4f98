"""The compiled-kernel TorchMLP and the shadow attack's network run where torch cannot be imported."""

import subprocess
import sys

import pytest
from _learner_helpers import BLOCK_TORCH

from leakaudit.learners import _mlp_native

pytestmark = pytest.mark.skipif(_mlp_native.library() is None, reason="the compiled MLP kernel is not built")

CODE = BLOCK_TORCH + r"""
import numpy as np
from leakaudit.learners import TorchMLP
from leakaudit.membership.shadow import ShadowModelAttack
rng = np.random.default_rng(0)
X = rng.random((60, 5)); y = (X[:, 0] > 0.5).astype(int)
p = TorchMLP(hidden=(8,), mode="faithful", epochs=2).fit_many(X, y, [np.arange(60)], [0], n_classes=2).predict_proba(X)
assert p.shape == (1, 60, 2)
att = ShadowModelAttack(epochs=2, random_state=0).fit(rng.dirichlet([1, 1], size=(2, 60)), np.r_[[True] * 30 + [False] * 30, [False] * 30 + [True] * 30].reshape(2, 60), y, X)
assert att.backend_ == "compiled"
try:
    TorchMLP(hidden=(8,), mode="fast", epochs=1, backend="torch").fit(X, y, random_state=0)
except Exception as e:
    print("fast:", type(e).__name__)
assert "torch" not in sys.modules
print("ok")
"""


def test_faithful_mode_and_shadow_attack_need_no_torch():
    out = subprocess.run([sys.executable, "-c", CODE], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip().splitlines()[-1] == "ok"
    assert "fast:" in out.stdout  # the torch trainer says it needs torch
