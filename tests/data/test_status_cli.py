from typer.testing import CliRunner

from leakaudit.cli import app


def test_datasets_command_lists_every_dataset(monkeypatch, tmp_path):
    res = CliRunner().invoke(app, ["datasets"])
    assert res.exit_code == 0, res.output
    lines = res.output.strip().splitlines()
    assert lines[0].startswith("adult (bundled): 48,842 x 15, found at ")
    assert any(line.startswith("fashion-mnist (train): 60,000 x 784, found at ") for line in lines)
    monkeypatch.setenv("LEAKAUDIT_DATA", str(tmp_path))
    res = CliRunner().invoke(app, ["datasets"])
    assert res.exit_code == 0
    assert "iwpc: missing (yeom/iwpc-scaled.csv.gz); from Yeom et al. 2018" in res.output
