"""``leakaudit dp-audit``: impossible DP parameters are one line and exit 2; a run writes strict JSON with a verdict."""

import json

import pytest

from leakaudit.cli import main

pytest.importorskip("torch")
pytest.importorskip("dp_accounting")


@pytest.mark.parametrize("args, words", [
    (["--epsilon", "2", "--noise-multiplier", "0"], "--noise-multiplier is 0 but epsilon 2 is claimed"),
    (["--epsilon", "2", "--sampling-rate", "0"], "--sampling-rate must be in (0, 1]; got 0"),
    (["--epsilon", "2", "--sampling-rate", "1.5"], "--sampling-rate must be in (0, 1]; got 1.5"),
    (["--epsilon", "2", "--delta", "0.001", "--n-train", "1000"], "--delta=0.001 is at least 1/n = 1/1000"),
    (["--epsilon", "0.5", "--noise-multiplier", "0.8", "--sampling-rate", "0.02", "--epochs", "10"],
     "the claimed epsilon 0.5 cannot be reproduced: the accountant gives"),
    (["--epsilon", "inf"], "--epsilon must be a positive finite number"),
    (["--epsilon", "2", "--canaries", "both"], "--canaries must be gradient or input"),
    (["--epsilon", "2", "--bound", "rdp"], "--bound must be one of steinke2023, fdp, best, gdp; got 'rdp'"),
    (["--epsilon", "2", "--device", "gpu"], "--device must be 'cpu', 'cuda', 'cuda:N' or 'auto'; got 'gpu'"),
])
def test_impossible_parameters_are_one_line_exit_2(args, words, capsys, tmp_path):
    assert main(["dp-audit", *args, "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("leakaudit: error: ")
    assert words in err
    assert not (tmp_path / "dp_audit.json").exists()


def test_a_small_audit_writes_strict_json(capsys, tmp_path):
    rc = main(["dp-audit", "--epsilon", "8", "--noise-multiplier", "0.7", "--sampling-rate", "0.05", "--epochs", "2",
               "--n-train", "600", "--m", "200", "--hidden", "16", "--delta", "1e-4", "--out", str(tmp_path)])
    out = capsys.readouterr().out
    assert rc == 0, out
    text = (tmp_path / "dp_audit.json").read_text()
    s = json.loads(text, parse_constant=lambda c: pytest.fail(f"non-strict JSON token {c}"))
    assert s["claimed_epsilon"] == 8 and s["accounted_epsilon"] <= 8 and s["steps"] == 40
    assert s["verdict"] in ("consistent with the claim",
                            "the claim is violated: the implementation leaks more than it says")
    assert 0 <= s["epsilon_lower_bound"] <= s["accounted_epsilon"]
    assert s["m"] == 200 and s["canaries"] == "gradient" and not s["noise_multiplier_calibrated"]
    assert s["device"] == "cpu"
    assert "verdict: consistent with the claim" in out
    # the deciding bound is the larger of Theorem 3.1 and the f-DP analysis, each at half the error rate, so it is
    # at most the larger of the two alone at the full error rate; each is also shown alone
    assert s["bound"] == "best"
    assert s["epsilon_lower_bound"] <= max(s["steinke_epsilon_lower_bound"], s["fdp_epsilon_lower_bound"])
    assert "each analysis alone at the full confidence: Theorem 3.1 " in out and "f-DP (epsilon, delta) " in out
    # the per-step noise check: its own line and fields, apart from the bound
    assert s["noise_check_verdict"] == "consistent with the claim" and s["trainer"] in ("native", "torch")
    assert "per-step noise check (separate from the bound" in out


def test_a_torch_module_takes_gradient_canaries(capsys, tmp_path, monkeypatch):
    """--module with --canaries gradient: white-box canaries through Opacus, with the per-step noise check."""
    pytest.importorskip("opacus")
    import pathlib

    monkeypatch.syspath_prepend(str(pathlib.Path(__file__).resolve().parents[1] / "learners"))
    rc = main(["dp-audit", "--epsilon", "8", "--noise-multiplier", "0.9", "--sampling-rate", "0.05", "--epochs",
               "1", "--n-train", "400", "--m", "400", "--module", "_torch_module_helpers:TinyNet", "--module-kwargs",
               '{"n_in": 107}', "--delta", "1e-4", "--out", str(tmp_path)])
    out = capsys.readouterr().out
    assert rc == 0, out
    s = json.loads((tmp_path / "dp_audit.json").read_text())
    assert s["trainer"] == "opacus" and s["canaries"] == "gradient" and s["noise_check_violated"] is False
    assert "verdict: consistent with the claim" in out


@pytest.mark.parametrize("kwargs, words", [
    ('{"n_in": 5}', "does not accept the data's 107 input features"),
    ('{"n_in": 107, "n_out": 3}', "outputs shape (256, 3); expected (n, 2) class scores"),
])
def test_a_torch_module_that_does_not_fit_the_data_is_one_line_exit_2(kwargs, words, capsys, tmp_path,
                                                                        monkeypatch):
    """The user's module is probed on the data before Opacus trains it: a wrong width is one line, not a torch
    traceback."""
    pytest.importorskip("opacus")
    import pathlib

    monkeypatch.syspath_prepend(str(pathlib.Path(__file__).resolve().parents[1] / "learners"))
    rc = main(["dp-audit", "--epsilon", "8", "--noise-multiplier", "0.9", "--sampling-rate", "0.05", "--epochs",
               "1", "--n-train", "400", "--m", "400", "--module", "_torch_module_helpers:TinyNet", "--module-kwargs",
               kwargs, "--delta", "1e-4", "--out", str(tmp_path)])
    assert rc == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("leakaudit: error: ") and words in err
    assert not (tmp_path / "dp_audit.json").exists()


@pytest.mark.parametrize("budget, words", [
    ("1MB", "m=4000 gradient canaries through Opacus need about"),
    ("lots", "--memory-budget must be a size such as 512MB"),
])
def test_opacus_canaries_past_the_memory_budget_are_one_line_exit_2(budget, words, capsys, tmp_path, monkeypatch):
    """Opacus holds a --module's canary gradients densely: an --m past --memory-budget is refused before training."""
    pytest.importorskip("opacus")
    import pathlib

    monkeypatch.syspath_prepend(str(pathlib.Path(__file__).resolve().parents[1] / "learners"))
    rc = main(["dp-audit", "--epsilon", "8", "--noise-multiplier", "0.9", "--sampling-rate", "0.05", "--epochs",
               "1", "--n-train", "400", "--m", "4000", "--module", "_torch_module_helpers:TinyNet", "--module-kwargs",
               '{"n_in": 107}', "--delta", "1e-4", "--memory-budget", budget, "--out", str(tmp_path)])
    assert rc == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("leakaudit: error: ") and words in err
    assert not (tmp_path / "dp_audit.json").exists()
