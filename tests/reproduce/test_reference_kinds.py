"""What each reproduction row's paper value is (printed, plot, derived, claim, formula, spec run, self-check), the
allowance of its kind of quantity, and the page's totals by kind of reference."""

import json
import re
from pathlib import Path

import pytest

from leakaudit import reproduce
from leakaudit.exceptions import InvalidParameterError
from leakaudit.reproduce import _registry as reg
from leakaudit.reproduce import _ledger, _tally
from leakaudit.reproduce._judge import BEATS, INCONCLUSIVE
from leakaudit.reproduce._kinds import ALLOWANCES, PAPER_REFERENCES, REFERENCES
from leakaudit.reproduce._tally import JUDGED
from leakaudit.reproduce._seeds import seed_row

STORED = Path(__file__).resolve().parents[2] / "docs" / "reproduction"


def _stored_runs() -> list[dict]:
    reproduce.load_all()
    runs = [json.loads(f.read_text()) for f in sorted(STORED.glob("*.json"))]
    return [r for r in runs if r["name"] in reg.names()]


def test_every_stored_row_with_a_paper_value_has_a_reference_kind():
    runs = _stored_runs()
    assert len(runs) >= 20
    for res in runs:
        missing = reg.classify(res)
        assert not missing, f"{res['name']}: rows with a paper value and no reference kind: {missing}"
        for r in res["rows"]:
            if r["paper"] is None:
                assert r["reference"] is None and r["quantity_kind"] is None
            else:
                assert r["reference"] in REFERENCES, (res["name"], r["quantity"])
                assert r["quantity_kind"] is None or r["quantity_kind"] in ALLOWANCES, (res["name"], r["quantity"])


def test_no_entry_of_a_reference_table_is_dead():
    # every (pattern, reference, kind) entry classifies at least one stored row: a pattern that no longer fits its
    # rows (a renamed quantity) would otherwise let the rows fall through to a later, wrong entry
    runs = {res["name"]: res for res in _stored_runs()}
    for name in reg.names():
        rep = reg.get(name)
        quantities = [r["quantity"] for r in runs.get(name, {"rows": []})["rows"] if r["paper"] is not None]
        for pattern, reference, _ in rep.references:
            first = [q for q in quantities if rep.kinds_of(q)[0] is not None
                     and next(p for p, _, _ in rep.references if re.search(p, q)) == pattern]
            assert first, f"{name}: the entry {pattern!r} -> {reference} classifies no stored row"


def test_printed_values_are_numbers_the_papers_print():
    # spot checks against the papers' text: Long et al.'s Table 2 prints 0.5166 (NB-Adult r) and 3.4019, the spec's
    # re-run (not Yeom et al.) gives the IWPC trees' R_cv, Izzo et al.'s Fig. 1 prints no number
    kinds = {(res["name"], r["quantity"]): r["reference"] for res in _stored_runs() if not reg.classify(res)
             for r in res["rows"] if r["paper"] is not None}
    assert kinds["long-dtp-correlation", "NB-Adult Pearson r (avg PDTP vs per-target accuracy)"] == "printed"
    assert kinds["long-table1", "Purchase-like: average PDTP"] == "printed"
    assert kinds["long-table1", "Purchase-like: distance-based is the best attack (1 = yes)"] == "claim"
    assert kinds["chase-table3", "census-gender WB/BB time ratio"] == "derived"
    assert kinds["yeom-fig2ab", "IWPC depth 30: R_cv"] == "spec run"
    assert kinds["yeom-fig3", "Fig. 3 shape: membership at deepest trees"] == "plot"
    assert kinds["yeom-fig1", "Thm 5 advantage, tau/sigma_S=1, sigma_D/sigma_S=5"] == "formula"
    assert {v for (n, _), v in kinds.items() if n == "izzo-fig1"} == {"formula", "claim"}
    assert kinds["long-purchase-calibration", "chosen point is LONG_PURCHASE_PARAMS (1 = yes)"] == "self-check"


def test_gathered_totals_add_up(tmp_path):
    runs = _stored_runs()
    for res in runs:
        reg.classify(res)
    t = reg.totals(runs)
    n_rows = sum(len(res["rows"]) for res in runs)
    assert sum(t["status"].values()) == n_rows
    by = t["by_reference"]
    assert "unclassified" not in by
    for status in JUDGED:
        assert sum(v[status] for v in by.values()) == t["status"][status]
        assert t["randomised"][status] <= t["status"][status]
    # the page shows the same numbers: each group's bold line is the sum of its kinds' lines
    for f in STORED.glob("*.json"):
        (tmp_path / f.name).write_text(f.read_text())
    page = reg.gather(tmp_path)
    head = page.split("\n## ", 1)[0]
    cells = {m[0]: tuple(int(x) for x in m[1:])
             for m in re.findall(r"^\| ([a-z -]+) \| (\d+) \| (\d+) \| (\d+) \| (\d+) \| (\d+) \|$", head, flags=re.M)}
    assert set(cells) == set(REFERENCES)
    gathered = [json.loads(f.read_text()) for f in sorted(tmp_path.glob("*.json"))]
    by_name = {res["name"]: res for res in gathered}
    for res in gathered:
        res["rows"] += _ledger.claim_rows(res, by_name)
        reg.classify(res)
    by = reg.totals(gathered)["by_reference"]
    for k, counts in cells.items():
        assert counts[:-1] == tuple(by[k][s] for s in JUDGED) and counts[-1] == sum(counts[:-1]), k
    groups = re.findall(r"^\| \*\*against [a-z ,]+\*\* \([^)]*\) \| " + r" \| ".join([r"\*\*(\d+)\*\*"] * 5) + r" \|$",
                        head, flags=re.M)
    paper = tuple(sum(cells[k][i] for k in PAPER_REFERENCES) for i in range(5))
    other = tuple(sum(cells[k][i] for k in cells if k not in PAPER_REFERENCES) for i in range(5))
    assert [tuple(map(int, g)) for g in groups] == [paper, other]
    # each kind of quantity's allowance is listed once, with its reason
    for kind, a in ALLOWANCES.items():
        assert head.count(f"| {kind} | {a.text()} | ") == 1


def test_classify_judges_with_the_allowance_of_the_rows_kind(monkeypatch):
    from leakaudit._names import NameTable

    monkeypatch.setattr(reg, "_REGISTRY", NameTable("reproduction"))
    reg.register("toy", version=1, paper="Toy", description="toy", references=(
        (r"accuracy", "printed", "model accuracy"), (r"PDTP", "printed", "average PDTP"),
        (r"single", "spec run", "RMSE against the spec's re-run"), (r"ratio", "derived", "running time")))(None)
    vals, seeds = [0.80, 0.81, 0.82, 0.81, 0.80], [0, 1, 2, 3, 4]  # mean 0.808, interval about [0.7966, 0.8194]
    near = seed_row("test accuracy", 0.815, vals, seeds)  # the interval lies within 0.02 of 0.815
    far = seed_row("test accuracy", 0.86, vals, seeds)
    pdtp = seed_row("avg PDTP", 1.2, [1.0, 1.01, 1.02, 1.01, 1.0], seeds)  # about 0.19 off: 30% of 1.2 is 0.36
    ratio = seed_row("time ratio", 9.5, [1.4, 1.5, 1.6, 1.5, 1.4], seeds)
    rows = [dict(vars(r)) for r in (near, far, pdtp, ratio)]
    # a stored verdict written under an older rule is replaced, not appended to
    rows[0]["verdict"] = "; the paper's value is 0.01 above the interval (within the 0.5 stated for this kind)"
    rows.append(dict(vars(reg.row("single value", 0.8899, 0.8915, 0.0))))  # 0.0016 off: within 0.002
    res = {"name": "toy", "rows": rows}
    assert reg.classify(res) == []
    notes = [r["note"] + r["verdict"] for r in res["rows"]]
    assert all("the interval" not in r["note"] for r in res["rows"])  # the page's judgement is in the verdict
    assert "0.5 stated" not in notes[0] and "above the interval" not in notes[0]
    assert notes[1].endswith("above the interval (tolerance 0.02: the allowance for model accuracy, 0.02)")
    assert notes[1].count("above the interval") == 1
    # running times are reported beside the paper's, not compared: no status of a judged row, no gap sentence
    assert "above the interval" not in notes[3]
    assert [r["status"] for r in res["rows"]] == ["match", "differs", "match", "not-compared", "match"]
    assert [r["tolerance"] for r in res["rows"][:3]] == [0.02, 0.02, pytest.approx(0.36)]
    t = reg.totals([res])
    assert t["status"]["not-compared"] == 1 and sum(t["randomised"].values()) == 3
    assert "1 are reported beside the paper's value and not compared" in _tally.totals_text(t)
    assert res["rows"][4]["tolerance"] == 0.002 and res["rows"][4]["reference"] == "spec run"
    assert [r["reference"] for r in res["rows"]] == ["printed", "printed", "printed", "derived", "spec run"]
    # a noisy row within the allowance cannot match: the interval must fit in it too
    noisy = seed_row("train accuracy", 0.81, [0.70, 0.92, 0.80, 0.85, 0.78], seeds)
    res = {"name": "toy", "rows": [dict(vars(noisy))]}
    reg.classify(res)
    assert res["rows"][0]["status"] == INCONCLUSIVE and "reaches past the tolerance 0.02" in res["rows"][0]["verdict"]


def test_a_row_without_a_kind_is_counted_apart():
    res = {"name": "yeom-table1", "rows": [dict(vars(reg.row("no such quantity", 0.5, 0.5, 0.0)))]}
    reproduce.load_all()
    assert reg.classify(res) == ["no such quantity"]
    t = reg.totals([res])
    assert t["by_reference"]["unclassified"] == {"match": 1, BEATS: 0, INCONCLUSIVE: 0, "differs": 0}
    assert "unclassified" in _tally.totals_text(t) and "| unclassified |" in reg.to_markdown(
        {**res, "profile": "reduced", "seconds": 1.0, "random_state": 0})


def test_register_checks_the_reference_table():
    with pytest.raises(InvalidParameterError, match="reference must be one of printed, plot"):
        reg.register("x", version=1, paper="p", description="d", references=((r"", "table"),))
    with pytest.raises(InvalidParameterError, match="quantity kind must be one of model accuracy"):
        reg.register("x", version=1, paper="p", description="d", references=((r"", "printed", "accuracy"),))
