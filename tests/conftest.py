import importlib.util
import os
import sys
from pathlib import Path

import numpy as np
import pytest

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"

# Library code never seeds globally; tests get their generators from this fixture.
SEED = int(os.environ.get("LEAKAUDIT_TEST_SEED", "42"))


@pytest.fixture
def rng():
    return np.random.default_rng(SEED)


@pytest.fixture
def global_random_seed():
    return SEED


@pytest.fixture
def load_benchmark():
    """``load_benchmark(name)`` imports ``benchmarks/name.py`` (its folder on ``sys.path``: the scripts import their
    siblings, such as ``_common``)."""

    def load(name: str):
        if str(BENCHMARKS) not in sys.path:
            sys.path.insert(0, str(BENCHMARKS))
        spec = importlib.util.spec_from_file_location(name, BENCHMARKS / f"{name}.py")
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        return mod

    return load
