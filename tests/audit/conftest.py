import os

import pytest


@pytest.fixture(scope="session", autouse=True)
def _private_cache(tmp_path_factory):
    """Audits in tests write their model cache to a temporary folder, not the checkout."""
    old = os.environ.get("LEAKAUDIT_CACHE")
    os.environ["LEAKAUDIT_CACHE"] = str(tmp_path_factory.mktemp("leakaudit-cache"))
    yield
    if old is None:
        os.environ.pop("LEAKAUDIT_CACHE", None)
    else:
        os.environ["LEAKAUDIT_CACHE"] = old
