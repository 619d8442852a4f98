"""``leakaudit mip ...`` commands and the izzo reproductions (smoke)."""

import json
import math

import pytest

from leakaudit.cli import main
from leakaudit.mip import mip_constant


def test_calibrate_json(capsys):
    assert main(["mip", "calibrate", "--eta", "0.1", "--M", "4", "--sigma", "1.0", "--dim", "3", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["c"] == pytest.approx(mip_constant(0.1, 4))
    assert out["noise_scale"] == pytest.approx([483.47] * 3, rel=1e-4)
    assert out["dim"] == 3 and out["constant"] == "cor11"


def test_calibrate_text_and_ours(capsys):
    assert main(["mip", "calibrate", "--eta", "0.1", "--sigma", "2.0", "--constant", "tv", "--radial", "gamma"]) == 0
    out = capsys.readouterr().out
    assert "c = 5" in out and "our extension" in out


def test_calibrate_errors(capsys):
    assert main(["mip", "calibrate", "--eta", "0.7"]) == 2
    assert "eta must be in" in capsys.readouterr().err
    assert main(["mip", "calibrate", "--eta", "0.1", "--sigma", "1", "--sigma", "2", "--dim", "3"]) == 2


def test_calibrate_refuses_a_dimension_past_the_memory_budget_before_allocating(capsys):
    """--dim 10^9 held about 300 GiB of scales (a Python list, an array, the result's list): it ran until killed."""
    import time

    from leakaudit.engine import using_memory_budget

    t0 = time.perf_counter()
    assert main(["mip", "calibrate", "--eta", "0.1", "--dim", "1000000000", "--constant", "tight"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "about 298.0 GiB" in err and "over the memory budget" in err
    assert time.perf_counter() - t0 < 30
    with using_memory_budget("1MB"):
        assert main(["mip", "calibrate", "--eta", "0.1", "--dim", "10000"]) == 2
    assert "10,000 coordinates" in capsys.readouterr().err


def test_audit_exact(capsys):
    assert main(["mip", "audit", "--n", "12", "--scale", "0.01", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["eta"] == pytest.approx(0.0465, abs=5e-5)  # spec 6.1 caveat value
    assert main(["mip", "audit", "--n", "12", "--eta", "0.1"]) == 0
    assert "target eta = 0.1" in capsys.readouterr().out
    assert main(["mip", "audit", "--n", "12"]) == 2  # neither --scale nor --eta


def test_audit_csv_mean(tmp_path, capsys):
    p = tmp_path / "d.csv"
    p.write_text("v\n" + "\n".join(str(v) for v in [0, 0, 0, 0, 0, 6]) + "\n")
    assert main(["mip", "audit", "--data", str(p), "--statistic", "mean", "--scale", "0.5", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    # record 5 decides the output: mean 2 (in) or 0 (out), so eta = (1 - exp(-2/(2*0.5)))/2
    assert out["eta"] == pytest.approx((1 - math.exp(-2.0)) / 2, rel=1e-9)
    assert main(["mip", "audit", "--data", str(tmp_path / "none.csv"), "--scale", "1"]) == 2


def test_fig1_smoke_matches():
    from leakaudit import reproduce as rep

    rep.load_all()
    rows = rep.get("izzo-fig1").func("smoke", 0)
    assert all(r.status != "differs" for r in rows), [r for r in rows if r.status == "differs"]
    assert len(rows) > 30
    # nothing in izzo-fig1 is random (closed forms, enumeration), which is why it is not run over seeds
    assert [(r.quantity, r.ours) for r in rows] == [(r.quantity, r.ours) for r in rep.get("izzo-fig1").func("smoke", 7)]


@pytest.mark.slow
def test_fig2_and_adult_smoke_run():
    from leakaudit import reproduce as rep

    rep.load_all()
    rows = rep.get("izzo-fig2").func("smoke", 0)
    assert any("DP-SGD" in r.quantity for r in rows)
    # over seeds 0-4, each claim judged as a lower bound: it matches only when it holds in every seed
    claims = [r for r in rows if r.quantity.startswith("claim")]
    assert len(claims) == 7 and all(r.seeds == (0, 1, 2, 3, 4) and r.bound == "lower" for r in claims)
    # the DP claims judged again with the noise not divided by the batch size: they hold there (the paper's curve)
    undivided = [r for r in claims if "not divided" in r.quantity]
    assert len(undivided) == 3 and all(r.status == "match" for r in undivided)
    assert all((r.status == "match") == all(v == 1 for v in r.values) for r in claims)
    rows = rep.get("izzo-adult").func("smoke", 0)
    assert any("Bayes attacker" in r.quantity for r in rows)
    # over seeds 0-4, and the note kept from the first seed says which seed it describes
    acc = next(r for r in rows if r.quantity.endswith(": test accuracy") and "DP-SGD" not in r.quantity)
    assert acc.seeds == (0, 1, 2, 3, 4) and len(acc.values) == 5 and acc.note.startswith("seed 0: ")
