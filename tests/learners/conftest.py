import pytest


@pytest.fixture(scope="module")
def one_torch_thread():
    """The oracles run plain torch; one intra-op thread keeps them fast on a shared 2-core machine."""
    import torch

    old = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(old)
