import pytest
from threadpoolctl import threadpool_limits


@pytest.fixture(autouse=True, scope="module")
def _one_blas_thread():
    """Small fits on a shared 2-core machine: BLAS threads only spin (10x slower)."""
    with threadpool_limits(limits=1):
        yield
