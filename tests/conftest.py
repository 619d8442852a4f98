import os

import numpy as np
import pytest

# Library code never seeds globally; tests get their generators from this fixture.
SEED = int(os.environ.get("LEAKAUDIT_TEST_SEED", "42"))


@pytest.fixture
def rng():
    return np.random.default_rng(SEED)


@pytest.fixture
def global_random_seed():
    return SEED
