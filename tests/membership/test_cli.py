import csv
import json

from leakaudit.cli import main


def test_membership_cli_writes_json_and_records(tmp_path, capsys):
    out = tmp_path / "m"
    rc = main(["membership", "--dataset", "purchase-like", "--model", "logreg", "--attacks", "loss,lira,distance",
               "--out", str(out), "--n-members", "60", "--n-nonmembers", "60", "--n-population", "40",
               "--n-reference", "4", "--n-boot", "50"])
    assert rc in (0, None)
    js = json.loads((out / "membership.json").read_text())
    assert set(js["attacks"]) == {"loss", "lira", "distance"}
    for a in js["attacks"].values():
        assert 0 <= a["auc"] <= 1 and len(a["auc_ci"]) == 2 and "advantage" in a and "0.01" in a["tpr_at_fpr"]
    rows = list(csv.DictReader(open(out / "records.csv")))
    assert len(rows) == 120
    assert {"score_loss", "score_lira", "score_distance", "is_member"} <= set(rows[0])
    assert sum(int(r["is_member"]) for r in rows) == 60


def test_membership_cli_bad_attack(tmp_path, capsys):
    rc = main(["membership", "--attacks", "loss,nope", "--out", str(tmp_path), "--n-members", "10",
               "--n-nonmembers", "10", "--n-population", "0"])
    assert rc == 2
    assert "unknown attack 'nope'" in capsys.readouterr().err
