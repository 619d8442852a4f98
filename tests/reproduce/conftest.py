"""The stored runs of docs/reproduction/, with their claims and classes, and each paper's results by class."""

import json
from pathlib import Path

import pytest

from leakaudit import reproduce
from leakaudit.reproduce import _ledger, _tally
from leakaudit.reproduce import _registry as reg

STORED = Path(__file__).resolve().parents[2] / "docs" / "reproduction"


@pytest.fixture(scope="module")
def runs():
    reproduce.load_all()
    out = [res for res in (json.loads(f.read_text()) for f in sorted(STORED.glob("*.json")))
           if res["name"] in reg.names()]
    by_name = {res["name"]: res for res in out}
    for res in out:
        res["rows"] += _ledger.claim_rows(res, by_name)
        reg.classify(res)
    return out


@pytest.fixture(scope="module")
def books(runs):
    return _tally.per_paper(runs, {res["name"]: reg.get(res["name"]).paper for res in runs})
