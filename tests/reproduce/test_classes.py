"""One rule for the page's classes (``_tally``): a number's class follows from its intervals and the setting that
produced it, alike for every number of a paper's row; every claim and row on substitute data counts apart; a
difference measured only below the paper's scale says so."""

import re

from leakaudit import reproduce
from leakaudit.reproduce import _ledger, _tally

# where each substitute data set is used, read off the reproductions' code independently of the ledger: (section,
# quantity) patterns; long_dtp.py adds the 'Fig 3: r with k PDTP measurements' rows under NB-Purchase
ON_SUBSTITUTE = {
    "purchase generator": (r"long-.*", r"Purchase|^Fig 3: r with"),
    "SpamAssassin": (r"chase-.*", r"enron-|^poisoning rate where"),  # chase-fig2 runs Fig. 2 on SpamAssassin only
    "Fashion-MNIST": (r"yeom-fig4|yeom-table1|yeom-fig2c", r""),
    "ACS proxy": (r"long-dtp-fig6", r""),
}


def _on(section: str, quantity: str) -> str | None:
    return next((k for k, (sec, q) in ON_SUBSTITUTE.items()
                 if re.fullmatch(sec, section) and re.search(q, quantity)), None)


def test_every_entry_and_claim_on_substitute_data_is_flagged(runs):
    rows = {(res["name"], r["quantity"]): r for res in runs for r in res["rows"]}
    wrong = []
    for (name, q), r in rows.items():
        flagged = _ledger.row_entry(name, r)[1].substitute
        if r.get("claim"):
            continue
        if flagged != _on(name, q):
            wrong.append((name, q, flagged))
    assert not wrong, wrong[:10]
    # every claim: flagged exactly when a row it reads runs on a substitute (its own or another section's)
    stored = {res["name"]: {r["quantity"]: r for r in res["rows"] if r.get("claim")} for res in runs}
    for c in _ledger.CLAIMS:
        row = stored[c.section][c.quantity]
        read = _ledger._Reading(_ledger._per_seed(next(res for res in runs if res["name"] == c.section)))
        for other in c.others:
            read.update(_ledger._per_seed(next(res for res in runs if res["name"] == other), f"{other}: "))
        c.holds(read)
        subs = {_on(*_ledger._section_of(q, c)) for q in read.used} - {None}
        assert row["claim"]["substitute"] == (subs.pop() if subs else None), c.quantity
    # Fig. 3's claim runs on the Purchase generator
    assert _ledger.row_entry("long-dtp-correlation", stored["long-dtp-correlation"][
        "claim: Fig 3 r rises with the PDTP measurements and flattens after 10 (1 = holds)"])[1].substitute


def test_a_setting_that_reproduces_numbers_explains_them_all_alike(books):
    long = books["Long"]
    nearest, judged = long["settings"]["Table 2: LR-Adult"][0]
    assert nearest == "long-dtp-lr-setup: LR-Adult as SimpleLogistic, n = 1000, 5 shadow pairs"
    classes = {res: cls for res, (cls, _) in long["results"].items() if res.startswith("Table 2: LR-Adult")}
    for result, status in judged.items():
        if classes[result].startswith("differs"):
            # the same setting decides every number of the row: not ruled out -> explained, ruled out -> not
            assert (classes[result] == "differs, explained") == (status in ("match", reproduce.STATUSES[2])), result
    assert classes["Table 2: LR-Adult Pearson r"] == classes["Table 2: LR-Adult distance-attack accuracy"] \
        == "differs, explained"
    assert classes["Table 2: LR-Adult avg PDTP"] == "differs, unexplained"  # SimpleLogistic doubles it
    closing = _tally.closing_text(books)
    assert "Settings of Table 2: LR-Adult, nearest first (each on the 8 numbers it measures" in closing
    assert f"Explained: the setting '{nearest}'" in closing


def test_settings_rule_on_a_toy_row():
    from leakaudit.reproduce._ledger import Entry

    def row(status):
        return {"status": status, "quantity": "q", "ours": 0.5}

    paper, a, b = Entry("s", ""), Entry("s", "", variant=True, setting="A"), Entry("s", "", variant=True, setting="B")
    results = {"x": [("s", row("differs"), paper), ("s", row("match"), a), ("s", row("differs"), b)],
               "y": [("s", row("match"), paper), ("s", row("differs"), a), ("s", row("match"), b)],
               "z": [("s", row("differs"), paper), ("s", row("differs"), a), ("s", row("inconclusive: too noisy"), b)]}
    # A rules out y, which the paper's setting reproduces: it may not explain x; B rules out x only
    settings = _tally._settings(results)
    assert [s for s, _ in settings] == ["s: B", None]
    assert _tally._class(results["z"], "z", settings[0], set()) == "differs, explained"
    assert _tally._class(results["x"], "x", settings[0], set()) == "differs, unexplained"
    assert _tally._class(results["x"], "x", settings[0], {"s"}) == _ledger.NOT_AT_SCALE


def test_chase_table2_gaps_are_not_tested_at_the_papers_scale_and_izzo_dp_is_unexplained(books):
    chase = {r: c for r, (c, _) in books["Chase"]["results"].items() if r.startswith("chase-table2: MLP")}
    assert len(chase) == 6 and set(chase.values()) == {_ledger.NOT_AT_SCALE}
    closing = _tally.closing_text(books)
    assert "600 shadow MLPs per world" in closing and "25 shadow MLPs per world" in closing
    izzo = books["Izzo"]["results"]
    assert izzo["izzo-fig2: claim 1: eta>=0.1, MIP (all M) below DP (1 = holds)"][0] == "differs, unexplained"
    assert izzo["Fig. 2: the DP curve is drawn where M = 2's error is too large to draw"][0] == "reproduced"
