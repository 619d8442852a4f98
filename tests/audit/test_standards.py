"""The evidence record mapped to the standards (leakaudit.audit.result.standards): every check the audits can make and
every attack class has its mapping, and evidence.json carries it, validated."""

import copy
import json
import re
from pathlib import Path

import pytest

import leakaudit
from leakaudit.audit.result.evidence import ATTACK_CLASSES, build_evidence, write_evidence
from leakaudit.audit.steps.lm import LM_PLAN
from leakaudit.audit.plan import PLAN
from leakaudit.audit.result.standards import (CHECKS, CLASSES, ITEMS, CheckStandards, ClassStandards, ItemStatus,
                                       check_mapping, identifiability_basis)
from leakaudit.membership import audit_attacks

from test_evidence import WHEN, _check, _results

SRC = Path(leakaudit.__file__).parent


def _check_ids_in_source() -> set[str]:
    """The check ids the package's analyses write, read from the modules that make checks: every string literal
    ``ANALYSIS.…`` (ANALYSIS a step of the tabular or the language-model plan), an f-string's fields as ``*``."""
    names = "|".join(sorted({s.name for s in PLAN.steps + LM_PLAN.steps}))
    literal = re.compile(rf'f?"((?:{names})\.[a-z0-9_{{}}]+(?:\.[a-z0-9_{{}}]+)*)"')
    ids = set()
    for path in SRC.rglob("*.py"):
        text = path.read_text()
        if "Check(" in text:
            ids |= {re.sub(r"\{[^}]*\}", "*", m) for m in literal.findall(text)}
    return ids


def test_every_check_the_audits_can_make_is_mapped():
    """Fails when an analysis makes a check no mapping covers: add it to leakaudit.audit.result.standards.CHECKS."""
    ids = _check_ids_in_source()
    expected = {"membership.*.auc", "membership.*.tpr_at_low_fpr", "membership.*.epsilon", "dtp.dtp1",
                "attribute.*.advantage", "dp.one_run", "dp.noise_check", "structural.instance_based",
                "structural.leaf_size", "structural.parameters_per_record", "membership.blind_baseline.auc",
                "dataset_inference.set_test"}
    assert expected <= ids  # the scan finds them all (it cannot pass by finding none)
    assert [i for i in sorted(ids) if check_mapping(i) is None] == []
    for attack in set(audit_attacks(True)) | set(audit_attacks(False)) | set(audit_attacks(True, "labels")):
        for metric in ("auc", "tpr_at_low_fpr", "epsilon"):
            assert check_mapping(f"membership.{attack}.{metric}").pattern == f"membership.*.{metric}"
    assert check_mapping("membership.blind_baseline.auc").items == ()  # not the attacks' pattern
    assert check_mapping("myplugin.thing") is None


def test_every_attack_class_and_item_is_mapped():
    assert [c.attack_class for c in CLASSES] == list(ATTACK_CLASSES)
    known = {i.id for i in ITEMS}
    for m in CHECKS + CLASSES:
        assert set(m.items) <= known, m
    assert {"11.3.3", "12.3.2", "AML.T0024.000", "AML.T0024.001", "AML.T0024.002"} <= known
    assert check_mapping("membership.lira.auc").items == ("11.3.3", "membership inference", "AML.T0024.000", "8.2.2",
                                                         "8.2.3")
    assert "12.3.2" in check_mapping("membership.lira.epsilon").items
    assert check_mapping("dp.one_run").items == ("12.3.2", "8.2.2")


def _items(rec):
    return {i["id"]: i for i in rec["standards"]["items"]}


def test_evidence_carries_the_mapping_and_validates(tmp_path):
    res = _results()
    res["duplicates"] = {"n_members": 1000, "members_repeated": 4, "members_in_nonmembers": 2,
                         "sentence": "4 members of the 1,000 are repeated"}
    rec = build_evidence(res, recorded=WHEN)
    back = json.loads(write_evidence(tmp_path / "evidence.json", rec).read_text())
    assert back["evidence_version"] == 5
    for c in back["checks"]:
        CheckStandards.model_validate(c["standards"])
    for c in back["attack_classes"]:
        ClassStandards.model_validate(c["standards"])
    for i in back["standards"]["items"]:
        ItemStatus.model_validate(i)
    assert [i["id"] for i in back["standards"]["items"]] == [i.id for i in ITEMS]
    by = {c["id"]: c for c in back["checks"]}
    assert by["membership.lira.auc"]["standards"]["aisvs"] == ["11.3.3"]
    assert by["membership.lira.auc"]["standards"]["atlas"] == ["AML.T0024.000"]
    items = _items(back)
    # the not-measurable TPR check tests nothing; the AUC check tests 11.3.3
    assert items["11.3.3"]["status"] == "tested" and items["11.3.3"]["checks"] == ["membership.lira.auc"]
    assert items["12.3.2"]["status"] == "not applicable" and "no epsilon was declared" in items["12.3.2"]["reason"]
    assert items["AML.T0057"]["status"] == "not applicable"
    assert items["AML.T0024.002"]["status"] == "not tested"
    assert back["duplicates"]["members_repeated"] == 4 and "4 members" in back["limitations"]
    assert back["unit"].startswith("record")
    assert "EDPS v SRB" in back["release"]["identifiability_basis"]


def test_item_statuses_follow_the_audit():
    res = _results(claimed_epsilon=4.0)
    res["verdict"]["checks"].append({**_check("dp.one_run", "dp", value=0.7, threshold=4.0), "shows": "leakage only"})
    items = _items(build_evidence(res, release="weights", recorded=WHEN))
    assert items["12.3.2"]["status"] == "tested" and items["12.3.2"]["checks"] == ["dp.one_run"]
    assert items["AML.T0024.002"]["status"] == items["C11.5"]["status"] == "not applicable"  # weights published
    none = copy.deepcopy(res)
    for c in none["verdict"]["checks"]:
        c["status"] = "not measurable"
    items = _items(build_evidence(none, recorded=WHEN))
    assert items["11.3.3"]["status"] == "not tested" and items["12.3.2"]["status"] == "not tested"
    assert items["11.3.3"]["reason"]


@pytest.mark.parametrize("release,recipient", [("weights", "model file"), ("scores", "class scores"),
                                               ("labels", "labels it returns"), (None, "no recipient is stated")])
def test_the_recipient_is_the_basis_of_identifiability(release, recipient):
    text = identifiability_basis(release)
    assert recipient in text and "EDPB Opinion 28/2024" in text
    assert build_evidence(_results(), release=release, recorded=WHEN)["release"]["identifiability_basis"] == text


def test_a_tested_item_says_whether_it_is_met():
    from leakaudit.audit.result.standards import finding

    assert finding(["shown below", "shown below"]) == "met"
    assert finding(["shown below", "exceeded", "undecided"]) == "not met"
    assert finding(["shown below", "undecided"]) == "undecided"
    assert finding([]) is None
    res = _results()
    for c in res["verdict"]["checks"]:
        c["status"] = "shown below" if c["status"] != "not measurable" else c["status"]
    items = _items(build_evidence(res, recorded=WHEN))
    assert items["11.3.3"]["finding"] == "met" and items["12.3.2"].get("finding") is None
    res["verdict"]["checks"][0]["status"] = "exceeded"  # membership.lira.auc
    rec = build_evidence(res, recorded=WHEN)
    assert _items(rec)["11.3.3"]["finding"] == "not met"
    assert {c["class"]: c.get("finding") for c in rec["attack_classes"]}["membership inference"] == "not met"
    for i in rec["standards"]["items"]:
        ItemStatus.model_validate(i)


def test_iso_27559_and_the_closed_set_of_statuses():
    """ISO/IEC 27559's clauses: identifiability assessment (quantifying, adversarial testing) tested by the attacks;
    context, data assessment, mitigation and governance "not evaluable", each with its reason; the statuses are a
    closed set, the new one refused without a reason."""
    assert set(ItemStatus.model_fields["status"].annotation.__args__) == {"tested", "not applicable", "not evaluable",
                                                                           "not tested"}
    iso = [i for i in ITEMS if i.standard == "ISO/IEC 27559:2022"]
    assert {i.id for i in iso} == {"6.2", "6.3", "7.2", "7.3", "8.2.2", "8.2.3", "8.3", "9"}
    assert {i.id for i in iso if i.not_evaluable is None} == {"8.2.2", "8.2.3"}
    rec = build_evidence(_results(), recorded=WHEN)
    items = _items(rec)
    for i in iso:
        if i.not_evaluable:
            assert items[i.id]["status"] == "not evaluable" and items[i.id]["reason"] == i.not_evaluable
    assert items["8.2.3"]["status"] == "tested" and "membership.lira.auc" in items["8.2.3"]["checks"]
    assert items["8.2.2"]["status"] == "tested" and "dtp.dtp1" in items["8.2.2"]["checks"]
    assert items["AML.T0057"]["status"] == "not applicable"  # a language model's item in a tabular audit
    assert {i["status"] for i in rec["standards"]["items"]} >= {"tested", "not applicable", "not evaluable"}
    by = {c["id"]: c for c in rec["checks"]}
    assert by["attribute.sex.advantage"]["standards"]["iso_27559"] == ["8.2.3"]
    assert "ISO/IEC 27559:2022" in rec["standards"]["sources"]
    with pytest.raises(ValueError):
        ItemStatus(standard="ISO/IEC 27559:2022", id="9", title="governance", status="not evaluable", checks=[],
                   reason="")
    with pytest.raises(ValueError):
        ItemStatus(standard="ISO/IEC 27559:2022", id="9", title="governance", status="unknown", checks=[],
                   reason="why")
