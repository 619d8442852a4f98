"""``leakaudit dtp`` commands, the TorchMLP path, and the smoke profile of the long-dtp reproductions."""

import json

import numpy as np
import pytest

from leakaudit.cli import main


def test_cli_pdtp_and_exact(tmp_path, capsys):
    out = tmp_path / "p.json"
    assert main(["dtp", "pdtp", "--data", "adult-proxy", "--model", "nb", "--rows", "400", "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert "PDTP of 400 records" in text and ("publish" in text)
    d = json.loads(out.read_text())
    assert d["type"] == "PDTPResult" and len(d["values"]) == 400
    assert main(["dtp", "exact", "--rows", "300", "--bin-width", "none"]) == 0
    assert "exact DTP over" in capsys.readouterr().out


def test_cli_errors(capsys):
    assert main(["dtp", "pdtp", "--model", "svm"]) == 2
    assert "--model must be one of" in capsys.readouterr().err
    assert main(["dtp", "exact", "--data", "adult"]) == 2
    assert "numeric" in capsys.readouterr().err
    assert main(["dtp", "pdtp", "--bin-width", "abc"]) == 2


@pytest.mark.slow
def test_pdtp_torch_mlp_seed_policies():
    from leakaudit.dtp import pdtp
    from leakaudit.learners import TorchMLP

    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 5))
    y = (X[:, 0] > 0).astype(int)
    mlp = TorchMLP(hidden=(8,), epochs=5, mode="faithful")
    ind = pdtp(mlp, X, y, records=range(10), seed_policy="independent", random_state=0)
    par = pdtp(mlp, X, y, records=range(10), seed_policy="paired", random_state=0)
    assert np.all(np.asarray(ind.values) <= np.log(199) + 1e-12)
    # paired LOO models share init and order: only t's influence remains, far below init noise
    assert np.mean(par.values) < np.mean(ind.values)


@pytest.mark.slow
@pytest.mark.parametrize("name", ["long-dtp-fig6", "long-dtp-table2", "long-dtp-bounds", "long-dtp-correlation"])
def test_reproductions_smoke(name, tmp_path):
    from leakaudit import reproduce as rep

    rep.load_all()
    res = rep.run(name, profile="smoke", out=tmp_path, random_state=0)
    assert res["rows"] and (tmp_path / f"{name}.md").exists()


def test_dtp_out_is_checked_before_any_work(tmp_path, capsys):
    from leakaudit.cli import main

    (tmp_path / "afile").write_text("x")
    for bad in (tmp_path, tmp_path / "afile" / "x.json"):
        assert main(["dtp", "pdtp", "--rows", "40", "--out", str(bad)]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "--out" in err and "Traceback" not in err
    assert main(["dtp", "pdtp", "--rows", "40", "--out", str(tmp_path / "new" / "pdtp.json")]) == 0
    assert (tmp_path / "new" / "pdtp.json").is_file()
