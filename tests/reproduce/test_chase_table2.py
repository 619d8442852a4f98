"""chase-table2: the MLP recipe's epochs per training-set size, and the smoke run's rows."""

import pytest

from leakaudit import reproduce as rep
from leakaudit.reproduce.chase import MLP_TRAINING, TABLE2, _mlp_epochs


def test_mlp_epochs_keep_the_number_of_adam_steps():
    assert _mlp_epochs("reduced", 1000) == MLP_TRAINING["epochs"] == 200
    # ten times the rows: a tenth of the epochs, so the same number of batches of 64
    assert _mlp_epochs("reduced", 10000) == 20
    assert _mlp_epochs("full", 10000) == 20
    assert _mlp_epochs("reduced", 10**7) == 5  # never fewer than 5 epochs
    assert _mlp_epochs("smoke", 1000) == 5


def test_table2_lists_the_papers_architectures():
    assert list(TABLE2) == [(2,), (4, 2), (8, 4, 2), (16, 8, 4, 2), (32, 16, 8, 4, 2)]
    assert list(TABLE2.values()) == [1.0, 0.97, 0.94, 0.88, 0.81]


@pytest.mark.slow
def test_table2_smoke_has_every_row_and_no_paper_comparison(tmp_path):
    rep.load_all()
    res = rep.run("chase-table2", profile="smoke", out=tmp_path, random_state=0)
    names = [r["quantity"] for r in res["rows"]]
    assert any("n=3000" in q and "accuracy" in q for q in names)
    assert sum("target AUC" in q for q in names) == sum("accuracy" in q for q in names)
    # synthetic stand-ins: nothing is compared with the paper
    assert all(r["status"] == "no-paper-value" for r in res["rows"])
