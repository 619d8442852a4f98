"""Model outputs within a memory budget (engine/_store.py): past it a disk-backed array, the same numbers."""

import os

import numpy as np
import pytest

from leakaudit.dtp.screening import reference_loo_shift
from leakaudit.engine import (
    Engine,
    chunk_length,
    default_memory_budget,
    is_disk_backed,
    memory_budget,
    output_array,
    parse_memory_size,
    using_memory_budget,
)
from leakaudit.exceptions import InvalidParameterError
from leakaudit.learners import LogisticRegression
from leakaudit.membership import RMIA, LiRA, fit_reference_models, paired_half_masks


def _data(n=120, d=4, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = (X[:, 0] + 0.5 * rng.normal(size=n) > 0).astype(int)
    return X, y


def test_output_array_in_memory_below_the_budget_on_disk_above_it(tmp_path):
    small = output_array((4, 5, 2), budget=4 * 5 * 2 * 8)
    assert type(small) is np.ndarray and not is_disk_backed(small)
    big = output_array((4, 5, 2), budget=4 * 5 * 2 * 8 - 1, directory=tmp_path)
    assert is_disk_backed(big) and big.dtype == np.float64 and big.shape == (4, 5, 2)
    assert is_disk_backed(big[1:3]) and not is_disk_backed(big[1:3] + 1.0)
    big[:] = np.arange(40.0).reshape(4, 5, 2)
    assert big.sum() == np.arange(40.0).sum()
    assert os.listdir(tmp_path) == []  # the file has no name: nothing to leave behind, even if the run is killed
    del big


def test_the_budget_in_force_and_its_sizes():
    assert parse_memory_size("512MB") == 512 * 2**20
    assert parse_memory_size("1.5 GiB") == int(1.5 * 2**30)
    assert parse_memory_size(1000) == 1000
    for bad in ("lots", "-1GB", 0, 1.5, True):
        with pytest.raises(InvalidParameterError, match="memory_budget"):
            parse_memory_size(bad)
    assert memory_budget() == default_memory_budget() > 0
    with using_memory_budget("1MB") as b:
        assert b == memory_budget() == 2**20
        with using_memory_budget(None):
            assert memory_budget() == 2**20
        assert chunk_length(1000, 2**20 // 8 // 10) == 10
        assert chunk_length(3, 1) == 3 and chunk_length(5, 2**30) == 1
    assert memory_budget() == default_memory_budget()


def test_engine_outputs_on_disk_equal_those_in_memory(tmp_path):
    X, y = _data()
    subsets = [np.arange(0, 80), np.arange(40, 120), np.arange(0, 120, 2)]
    learner = LogisticRegression()
    mem = Engine(chunk_size=1).predict_many(learner, X, y, subsets, [1, 2, 3], X)
    disk = Engine(chunk_size=1, memory_budget=1, cache_dir=tmp_path).predict_many(learner, X, y, subsets,
                                                                                    [1, 2, 3], X)
    assert not is_disk_backed(mem) and is_disk_backed(disk)
    np.testing.assert_array_equal(np.asarray(disk), mem)
    with using_memory_budget(1):  # the budget in force, when the engine is given none
        assert is_disk_backed(Engine(chunk_size=1).predict_many(learner, X, y, subsets, [1, 2, 3], X))
    with pytest.raises(InvalidParameterError, match="memory_budget"):
        Engine(memory_budget="a lot")


@pytest.mark.parametrize("n_models, budget", [(6, 1), (16, 1), (16, 100_000)])
def test_attacks_on_disk_backed_references_in_chunks_give_the_same_numbers(n_models, budget):
    """LiRA (online, offline, fixed variance), RMIA (online, offline) and the screen's reference ranking: bit for
    bit the result in one chunk, with the outputs on disk read one model at a time (budget 1), or in memory read
    a few models at a time (100,000 bytes: chunks of 3 to 6 of the 16, whose sums a chunk-by-chunk sum would
    round differently)."""
    X, y = _data(n=90, seed=1)
    learner = LogisticRegression()
    mask = paired_half_masks(len(y), n_models, random_state=3)
    ref = fit_reference_models(learner, X, y, n_models, in_mask=mask, random_state=4)
    target = learner.fit(X[:45], y[:45], random_state=5).predict_proba(X)
    a, b = slice(0, 60), slice(60, 90)  # audited records and population, as the audit splits them

    def run_all():
        r = fit_reference_models(learner, X, y, n_models, in_mask=mask, random_state=4)
        aud, pop = r.subset(a), r.subset(b)
        out = [LiRA(online=o, fix_variance=f).score(target[a], y[a], aud.probs, aud.in_mask).scores_array
               for o in (True, False) for f in (False, True)]
        out += [RMIA(online=o).score(target[a], y[a], aud.probs, aud.in_mask, target[b], y[b], pop.probs,
                                     pop.in_mask).scores_array for o in (True, False)]
        out.append(reference_loo_shift(aud.probs, aud.in_mask))
        return r, out

    mem_ref, expected = run_all()
    assert not is_disk_backed(mem_ref.probs)
    np.testing.assert_array_equal(mem_ref.probs, ref.probs)
    with using_memory_budget(budget):  # every array on disk, chunks smaller than the model count
        assert chunk_length(n_models, 32 * 60 * 2) < n_models
        disk_ref, got = run_all()
        on_disk = ref.probs.nbytes > budget
        assert is_disk_backed(disk_ref.probs) == on_disk and is_disk_backed(disk_ref.subset(a).probs) == on_disk
    for e, g in zip(expected, got):
        np.testing.assert_array_equal(g, e)


def test_reference_checks_read_a_disk_backed_array_in_chunks_and_name_the_chunk():
    X, y = _data(n=40)
    with using_memory_budget(1):
        ref = fit_reference_models(LogisticRegression(), X, y, 4, random_state=0)
        p = ref.probs
        p[2, 5, 0] = np.nan
        with pytest.raises(Exception, match=r"reference\.probs\[2:3\] contains NaN"):
            type(ref)(p, ref.in_mask)
