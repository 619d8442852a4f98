"""Every table and figure the page cites holds what the citation says it does.

:data:`CONTENTS` lists, per paper, what each of its tables and figures holds (from the papers' texts in
shared/papers and the specs: long-dtp.md §5.1-5.6, chase-property.md §5.1-5.8, yeom-overfitting.md §6.4-6.6,
izzo-mip.md), as a pattern the rest of a citation ("Table 2: NB-Adult avg PDTP" -> "NB-Adult avg PDTP") must match.
Every result the page counts (``_ledger``: entries, claims, explanations, what was tried, what is missing), every
figure it redraws (``_figures``) and every Long et al. section's own text is checked against it, so a result cited to
the wrong table or panel fails here.
"""

import json
import re
from pathlib import Path

import pytest

from leakaudit import reproduce
from leakaudit.reproduce import _figures, _ledger
from leakaudit.reproduce import _registry as reg

STORED = Path(__file__).resolve().parents[2] / "docs" / "reproduction"

_LONG_MODEL = r"(NN|NB|LR)-(Adult|Purchase)"
_LONG_ATTACK = r"(untargeted \(Shokri\)|frequency-based|distance-based)"
CONTENTS: dict[str, dict[str, str]] = {
    "Long": {
        # the three attacks on NN-Purchase: accuracy, precision, recall, F1, r with average PDTP, its p-value
        "Table 1": rf"^{_LONG_ATTACK} (accuracy|precision|recall|f1|corr\. with avgPDTP|is the best attack)"
                   r"|^attacks with higher accuracy correlate better with PDTP$"
                   r"|^every attack's correlation with average PDTP is statistically significant$",
        # the distance attack on every target model: model train / test accuracy, attack accuracy, precision,
        # recall, F1, average PDTP, Pearson r with PDTP, its p-value
        "Table 2": rf"^{_LONG_MODEL} (train accuracy|test accuracy|distance-attack (accuracy|precision|recall|f1)"
                   r"|avg PDTP|Pearson r|p-value)$",
        # training stability of classifiers (stable, unknown, not stable): no number, no model of §5
        "Table 3": r"(training[- ]stab|stable)",
        "Fig. 1": r"^NN-Purchase.*each attack's per-target accuracy against average PDTP",
        "Fig. 2": r"(max|best attack's) per-target accuracy",
        "Fig. 3": r"\br\b.*(PDTP )?measurements",
        "Fig. 4a": r"^NN-Purchase", "Fig. 4b": r"^NB-Purchase", "Fig. 4c": r"^LR-Purchase",
        "Fig. 5a": r"^NN-Adult", "Fig. 5b": r"^NB-Adult", "Fig. 5c": r"^LR-Adult",
        "Fig. 6": r"max DTP",
        # §9: 100 NNs on one Adult training set (7) or on 100 samples (8); P(>50K) of a low- (a) or high-salary (b)
        # individual
        "Fig. 7a": r"low-salary individual.*one training set", "Fig. 7b": r"high-salary individual.*one training set",
        "Fig. 8a": r"low-salary individual.*different training sets",
        "Fig. 8b": r"high-salary individual.*different training sets",
    },
    "Chase": {
        # the black box against MLPs of 1-5 hidden layers (n = 1,000, and 10,000 for 5 layers)
        "Table II": r"(layer|training set)",
        # WBAttack (1,000 shadow networks) and the black box at p = 0 (1,000 shadow models), at p = 0.05 / 0.03 /
        # 0.05 (100) and at p = 0.10 (50), for Census random / gender / race; the running times in its text
        "Table III": r"^census-(random|gender|race) white-box accuracy$"
                     r"|^census-random black-box accuracy at p=0\.(00|05|10)$"
                     r"|^census-gender black-box accuracy at p=0\.(00|03|10)$"
                     r"|^census-race black-box accuracy at p=0\.(00|05|10)$"
                     r"|WBAttack",
        # poison rate against attack accuracy, 0-20%: the LR curves and Census random MLP
        "Fig. 1": r"above 90% at p <= 0\.10|poison|MLP target",
        # poison rate against accuracy over a wide range (Enron random)
        "Fig. 2": r"poisoning rate",
        "Fig. 3": r"shadow models|other curves|MLP curve",
        "Fig. 4": r"training set",
        "Fig. 5": r"precision", "Fig. 6": r"recall", "Figs. 5-6": r"precision|recall",
    },
    "Yeom": {
        "Table I": r"threshold and shadow-model precision",
        "Fig. 1": r"Adversary 4", "Fig. 2a": r"^known sigma", "Fig. 2b": r"^unknown sigma", "Fig. 2c": r"CNN",
        "Fig. 3": r"Adversary|attribute|Netflix|inversion|reduction",
        "Fig. 4": r"colluding",
    },
    "Izzo": {
        "Fig. 1": r"noise", "Fig. 2": r"error",
    },
}
_CITATION = re.compile(r"^(Table \w+|Figs?\. [\d]+[a-c]?(?:-\d+)?)(?: / §[\d.]+)?: (.*)$")


def _check(paper: str, label: str) -> None:
    m = _CITATION.match(label)
    if m is None:
        return
    where, what = m.groups()
    contents = CONTENTS.get(paper, {})
    assert where in contents, f"{paper}: {label!r} cites {where}, which CONTENTS does not list"
    assert re.search(contents[where], what), f"{paper}: {label!r}: {where} does not hold {what!r}"


@pytest.fixture(scope="module")
def labels():
    """``{(paper, result)}`` of every row of the stored runs with a paper value, and of every claim."""
    reproduce.load_all()
    out = set()
    runs = {res["name"]: res for res in (json.loads(f.read_text()) for f in sorted(STORED.glob("*.json")))
            if res["name"] in reg.names()}
    for res in runs.values():
        paper = _ledger.paper_of(reg.get(res["name"]).paper)
        for r in res["rows"] + _ledger.claim_rows(res, runs):
            if r["paper"] is not None:
                out.add((paper, _ledger.row_entry(res["name"], r)[0]))
    return out


def test_every_counted_result_cites_the_table_or_figure_that_holds_it(labels):
    assert any(label.startswith("Table 2: ") for paper, label in labels if paper == "Long")
    for paper, label in labels:
        _check(paper, label)
    by_label = {label: paper for paper, label in labels}
    for label in (*_ledger.EXPLAINED, *_ledger.TRIED):
        assert label in by_label, f"{label!r} names no result of the page"
        _check(by_label[label], label)
    for paper, missing in _ledger.MISSING.items():
        for label, _ in missing:
            _check(paper, label)


def test_every_redrawn_figure_is_the_papers_panel():
    names = {"Long et al.": "Long", "Yeom et al.": "Yeom", "Chase et al.": "Chase", "Izzo et al.": "Izzo"}
    for fig in _figures.FIGURES:
        author, rest = fig.title.split(" Fig. ", 1)
        number, what = rest.split(": ", 1)
        paper = names[author]
        if f"Fig. {number}" in CONTENTS[paper]:
            _check(paper, f"Fig. {number}: {what}")
        m = re.search(r"\(\?P<s>(NN|NB|LR)-(Adult|Purchase)\)", fig.pattern)
        if m:  # the rows a panel draws are its model's
            assert what.startswith(f"{m.group(1)}-{m.group(2)}"), (fig.title, fig.pattern)


def test_long_sections_cite_table_2_for_attacks_and_table_3_only_for_stability():
    reproduce.load_all()
    text = " ".join(f"{rep.description} {rep.notes}" for rep in map(reg.get, reg.names())
                    if rep.paper.startswith("Long"))
    text += " " + " ".join(e.result or "" for e in _ledger.ENTRIES if e.section.startswith("long"))
    text += " " + " ".join(f"{k} {v}" for k, v in (*_ledger.EXPLAINED.items(), *_ledger.TRIED.items()))
    for m in re.finditer(r"Table 3\b[^.;]*", text):
        assert re.search(CONTENTS["Long"]["Table 3"], m.group(0)), f"Table 3 cited for {m.group(0)!r}"
    for m in re.finditer(r"Fig\.? ?(5[a-c]|4[a-c])[:,]? ?((?:NN|NB|LR)-\w+)", text):
        _check("Long", f"Fig. {m.group(1)}: {m.group(2)}")


def test_a_wrong_citation_fails():
    with pytest.raises(AssertionError, match="does not hold"):
        _check("Long", "Table 3: NN-Adult Pearson r")
    with pytest.raises(AssertionError, match="does not hold"):
        _check("Long", "Fig. 5a: NB-Adult, per-target distance-attack accuracy against average PDTP")
    with pytest.raises(AssertionError, match="does not list"):
        _check("Long", "Table 4: NN-Adult avg PDTP")
    _check("Long", "Table 2: NN-Adult distance-attack accuracy")
