"""Wide data (issue 28): 5,000 standardised columns made the shadow attack's per-example SGD diverge to NaN.

One SGD step on a row x moves the first layer's output by about ``lr * ||x||^2`` times the gradient (50 at lr
0.01 and 5,000 columns); the attack now scales the attributes so that ``lr * mean ||x||^2 <= 1``.
"""

import numpy as np
import pytest

from leakaudit.membership.shadow import ShadowModelAttack, _compiled_ready
from leakaudit.metrics import auc

pytestmark = pytest.mark.skipif(not _compiled_ready(), reason="the compiled MLP kernel is not built")


def _wide(d, n=300, M=4, seed=0):
    """Shadow outputs confident on "in" records (complementary pairs) and a target trained on the first half."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = rng.integers(0, 2, n)
    mask = np.zeros((M, n), bool)
    for j in range(0, M, 2):
        mask[j, rng.permutation(n)[: n // 2]] = True
        mask[j + 1] = ~mask[j]

    def outputs(in_mask):
        p_true = np.clip(np.where(in_mask, 0.95, 0.55) + 0.05 * rng.normal(size=in_mask.shape), 0.01, 0.99)
        p1 = np.where(y == 1, p_true, 1 - p_true)
        return np.stack([1 - p1, p1], axis=-1)

    member = np.arange(n) < n // 2
    return outputs(mask), mask, y, X, outputs(member), member


@pytest.mark.parametrize("batch_size", [1, 32])
def test_5000_columns_give_finite_scores_that_find_members(batch_size):
    probs, mask, y, X, target, member = _wide(5000)
    att = ShadowModelAttack(batch_size=batch_size, random_state=0).fit(probs, mask, y, X)
    scores = att.score(target, y, X).scores_array
    assert np.isfinite(scores).all()
    assert all(np.isfinite(w).all() for w in att.models_[None].weights_)
    assert att.feature_scale_ == pytest.approx(1 / np.sqrt(0.01 * np.mean((X ** 2).sum(1))))
    assert auc(member.astype(int), scores) > 0.75


def test_narrow_data_is_not_rescaled():
    probs, mask, y, X, target, member = _wide(50)
    att = ShadowModelAttack(random_state=0).fit(probs, mask, y, X)
    assert att.feature_scale_ == 1.0
    assert auc(member.astype(int), att.score(target, y, X).scores_array) > 0.75
