import numpy as np
import pytest

from leakaudit._random import check_random_state, seed_to_int, spawn_seeds
from leakaudit.exceptions import InvalidParameterError


def test_check_random_state_kinds():
    g = np.random.default_rng(1)
    assert check_random_state(g) is g
    assert check_random_state(3).integers(1 << 30) == np.random.default_rng(3).integers(1 << 30)
    assert isinstance(check_random_state(np.random.RandomState(0)), np.random.Generator)
    for bad in ("1", 1.5, -1, True):
        with pytest.raises(InvalidParameterError, match="random_state"):
            check_random_state(bad)


def test_spawn_seeds_prefix_stable_and_distinct():
    a = spawn_seeds(7, 10)
    assert a[:5] == spawn_seeds(7, 5)
    assert len(set(a)) == 10
    assert a != spawn_seeds(8, 10)
    assert seed_to_int(5) == 5
