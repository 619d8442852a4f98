import json

import pytest

from leakaudit._names import NameTable
from leakaudit.exceptions import InvalidParameterError
from leakaudit.reproduce import _registry as reg
from leakaudit.reproduce import row


def test_row_status():
    assert row("a", 0.5, 0.51, 0.02).status == "match"
    assert row("a", 0.5, 0.6, 0.02).status == "differs"
    assert row("a", None, 0.6).status == "no-paper-value"
    assert row("a", 0.5, float("nan"), 0.1).status == "differs"
    assert row("a", 0.5, None, 0.1).status == "differs"


def test_run_writes_json_and_markdown(tmp_path, monkeypatch):
    monkeypatch.setattr(reg, "_REGISTRY", NameTable("reproduction"))

    @reg.register("toy", version=1, paper="Toy et al.", description="A toy reproduction.",
                  references=((r"", "printed"),))
    def _toy(profile, random_state):
        extra = 1.0 if profile == "smoke" else 2.0
        return [row("answer", 42.0, 41.9, 0.5, note="close"), row("extra", None, extra)]

    with pytest.raises(InvalidParameterError, match="'toy' is already registered"):
        reg.register("toy", version=1, paper="x", description="y")(_toy)
    res = reg.run("toy", profile="smoke", out=tmp_path)
    d = json.loads((tmp_path / "toy.json").read_text())
    assert set(d) >= {"name", "profile", "seconds", "rows"}
    assert d["rows"][0] == {"quantity": "answer", "paper": 42.0, "ours": 41.9, "tolerance": 0.5,
                            "status": "match", "note": "close", "values": None, "seeds": None,
                            "bound": None, "precision": None, "reference": "printed", "quantity_kind": None,
                            "points": None, "verdict": ""}
    assert "| answer | 42 | printed | 41.9 | 0.5 | match | close |" in (tmp_path / "toy.md").read_text()
    assert res["profile"] == "smoke" and d["version"] == 1
    # the fingerprint is the smoke run's, whatever profile the run is at: a full run stores its smoke run's digest
    assert d["fingerprint"] == reg.fingerprint("toy") == reg.numbers_digest("toy", d["rows"])
    full = reg.run("toy", profile="full", out=tmp_path / "full")
    assert full["rows"][1]["ours"] == 2.0 and full["fingerprint"] == d["fingerprint"]
    with pytest.raises(InvalidParameterError, match="profile must be one of"):
        reg.run("toy", profile="huge", out=tmp_path)
    with pytest.raises(InvalidParameterError, match="unknown reproduction 'nope'"):
        reg.get("nope")


def test_register_per_seed_registers_the_rows_over_seeds(monkeypatch):
    from leakaudit.reproduce import _seeds

    monkeypatch.setattr(reg, "_REGISTRY", NameTable("reproduction"))

    @_seeds.register_per_seed("toy-seeds", version=1, paper="Toy et al.", description="Per seed.")
    def _toy_seed(profile, seed):
        return [row("value", 0.5, 0.1 * seed), row("note only", None, None, note=f"seed {seed}")]

    assert _toy_seed("smoke", 3)[0].ours == pytest.approx(0.3)  # the decorated function stays the per-seed one
    rows = reg.get("toy-seeds").func("smoke", 2)
    assert rows == _seeds.rows_over_seeds(_toy_seed, "smoke", 2)
    assert rows[0].seeds == (2, 3, 4, 5, 6) and rows[0].ours == pytest.approx(0.4)
    assert rows[1].note == "seed 2"  # a note-only row keeps the first seed's
