import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from leakaudit.data import from_frame, sampling
from leakaudit.exceptions import InvalidInputError, InvalidParameterError


def test_candidate_set_and_halves():
    D = sampling.candidate_set(10_000, 2_000, random_state=0)
    assert D.shape == (2_000,) and np.unique(D).size == 2_000 and np.all(np.diff(D) > 0)
    assert D.min() >= 0 and D.max() < 10_000
    np.testing.assert_array_equal(D, sampling.candidate_set(10_000, 2_000, random_state=0))
    assert not np.array_equal(D, sampling.candidate_set(10_000, 2_000, random_state=1))
    a, b = sampling.random_halves(D, random_state=3)
    assert a.size == b.size == 1_000
    assert np.intersect1d(a, b).size == 0
    np.testing.assert_array_equal(np.union1d(a, b), D)
    a2, b2 = sampling.random_halves(np.arange(7), random_state=0)
    assert (a2.size, b2.size) == (3, 4)


def test_candidate_set_errors():
    with pytest.raises(InvalidParameterError, match="size=20 exceeds the 10 rows"):
        sampling.candidate_set(10, 20)
    with pytest.raises(InvalidInputError, match="duplicate"):
        sampling.candidate_set([1, 1, 2], 1)
    with pytest.raises(InvalidParameterError, match="at least 2"):
        sampling.random_halves([4])


def test_accepts_dataset():
    import pandas as pd

    ds = from_frame(pd.DataFrame({"a": range(10), "y": [0, 1] * 5}), label="y")
    idx = sampling.candidate_set(ds, 4, random_state=0)
    assert len(ds.subset(idx)) == 4


def test_shadow_pools_disjoint_from_target():
    target = sampling.candidate_set(1_000, 200, random_state=0)
    pools = sampling.shadow_pools(1_000, target, n_pools=5, pool_size=300, random_state=1)
    assert len(pools) == 5
    for p in pools:
        assert p.size == 300 and np.intersect1d(p, target).size == 0
    dis = sampling.shadow_pools(1_000, target, n_pools=4, pool_size=200, random_state=1, disjoint=True)
    allp = np.concatenate(dis)
    assert np.unique(allp).size == 800 and np.intersect1d(allp, target).size == 0
    with pytest.raises(InvalidParameterError, match="n_pools \\* pool_size=1000 exceeds the 800"):
        sampling.shadow_pools(1_000, target, n_pools=5, pool_size=200, disjoint=True)
    with pytest.raises(InvalidParameterError, match="pool_size=900 exceeds the 800"):
        sampling.shadow_pools(1_000, target, n_pools=1, pool_size=900)
    rest = sampling.disjoint_pool(10, [0, 1, 2])
    np.testing.assert_array_equal(rest, np.arange(3, 10))


def test_with_and_without():
    D = np.arange(100, 200)
    w, wo = sampling.with_and_without(D, 150, size=20, random_state=0)
    assert w.size == 20 and 150 in w and wo.size == 19 and 150 not in wo
    np.testing.assert_array_equal(np.setdiff1d(w, wo), [150])
    assert np.all(np.isin(w, D))
    w2, wo2 = sampling.with_and_without(D, 150, size=20, random_state=0, mode="replace")
    assert w2.size == wo2.size == 20 and 150 not in wo2
    assert np.setdiff1d(w2, wo2).tolist() == [150] and np.setdiff1d(wo2, w2).size == 1
    with pytest.raises(InvalidParameterError, match=r"size=101 needs 100 rows besides the record \(mode='remove'\); only 99"):
        sampling.with_and_without(D, 150, size=101)


def test_leave_one_out():
    subs = sampling.leave_one_out([3, 5, 9])
    assert [s.tolist() for s in subs] == [[5, 9], [3, 9], [3, 5]]
    assert [s.tolist() for s in sampling.leave_one_out([3, 5, 9], records=[9])] == [[3, 5]]
    with pytest.raises(InvalidInputError, match="not in rows"):
        sampling.leave_one_out([3, 5, 9], records=[4])


def test_in_out_splits_balanced():
    subsets, member = sampling.in_out_splits(np.arange(10, 60), n_models=8, random_state=0)
    assert member.shape == (8, 50)
    np.testing.assert_array_equal(member.sum(axis=0), 4)  # every record in exactly half of the models
    for k in range(8):
        np.testing.assert_array_equal(subsets[k], np.arange(10, 60)[member[k]])
    _, m2 = sampling.in_out_splits(50, n_models=8, random_state=0)
    np.testing.assert_array_equal(member, m2)
    with pytest.raises(InvalidParameterError, match="at least one model"):
        sampling.in_out_splits(10, n_models=1)


@settings(max_examples=50, deadline=None)
@given(n=st.integers(2, 300), frac=st.floats(0.01, 1.0), seed=st.integers(0, 2**31 - 1))
def test_halves_partition_property(n, frac, seed):
    size = max(2, int(frac * n))
    D = sampling.candidate_set(n, size, random_state=seed)
    a, b = sampling.random_halves(D, random_state=seed)
    assert a.size + b.size == D.size and abs(a.size - b.size) <= 1
    assert np.intersect1d(a, b).size == 0
    np.testing.assert_array_equal(np.sort(np.concatenate([a, b])), D)


def test_as_indices_array_like_is_not_a_population():
    import pandas as pd

    np.testing.assert_array_equal(sampling.as_indices(pd.Series([7, 3])), [3, 7])
    np.testing.assert_array_equal(sampling.as_indices(5), np.arange(5))
    with pytest.raises(InvalidInputError, match="integer row indices"):
        sampling.as_indices(np.array([True, False]))
