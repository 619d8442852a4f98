"""results.json's sections are typed models that still read as the mappings results.json holds."""

import json
import math

import pytest
from pydantic import ValidationError

from leakaudit.audit.results import AuditResult
from leakaudit.audit.sections import AttackMetrics, DtpSection, Skipped


def _attack(**extra):
    return {"n_members": 10, "n_nonmembers": 12, "auc": 0.61, "auc_ci": [0.5, 0.7], "advantage": float("nan"),
            "tpr_at_fpr": {"0.01": {"tpr": 0.1, "ci": [0.0, 0.3]}, "0.001": {"tpr": float("nan"), "ci": [None, None]}},
            **extra}


def test_fields_are_typed_and_the_section_reads_as_its_mapping():
    m = AttackMetrics.model_validate(_attack(display="blind baseline"))
    assert m.auc == 0.61 and m["auc"] == 0.61 and m.get("auc_ci") == [0.5, 0.7]
    assert m.tpr_at(0.01).tpr == 0.1 and m.tpr_at_fpr["0.01"]["ci"] == [0.0, 0.3] and m.tpr_at(0.05) is None
    assert m.display == "blind baseline" and "display" in m and "epsilon" not in m and m.get("epsilon", 1) == 1
    with pytest.raises(KeyError):
        m["epsilon"]  # a documented field the analysis did not give is absent, as in the file
    assert list(m) == list(_attack(display=0)) and dict(m.items())["n_members"] == 10
    with pytest.raises(ValidationError):
        AttackMetrics.model_validate(_attack(auc="high"))
    with pytest.raises(ValidationError):
        AttackMetrics.model_validate({k: v for k, v in _attack().items() if k != "auc"})


def test_a_section_is_written_as_given_keys_in_their_order():
    given = {"n_records": 3, "rule": "statistical", "max": 1.5, "mean": 0.5, "n_above": 1, "records_above": [2],
             "kind": "PDTP", "noise_floor": {"median": 0.2, "what": "std", "extra": 1}}
    d = DtpSection.model_validate(given)
    assert d.model_dump() == given and list(d.model_dump()) == list(given)
    assert d.noise_floor.median == 0.2 and d.test is None and "test" not in d
    from leakaudit.audit.sections import Settings

    assert Settings().model_dump() == {} and list(Settings()) == []  # built with nothing given: nothing written
    assert Skipped(name="x", reason="y").model_dump() == {"name": "x", "reason": "y"}
    assert Skipped(name="x", reason="y", missing=[]).as_dict() == {"name": "x", "reason": "y"}  # none named
    assert Skipped(name="x", reason="y", missing=["population"])["missing"] == ["population"]
    with pytest.raises(ValidationError):
        Skipped(name="x", reason="y", why="unknown keys are refused here")


def test_an_audit_result_reads_back_typed(tmp_path):
    from leakaudit.cli import main

    assert main(["audit", "--profile", "smoke", "--n-members", "150", "--n-nonmembers", "150", "--out",
                 str(tmp_path), "--quiet"]) == 0
    text = (tmp_path / "results.json").read_text()
    res = AuditResult.from_json(text)
    assert res.data.n_members == 150 and res.target.kind == "demo" and res.data["label"] == "income"
    lira = res.membership["lira"]
    assert isinstance(lira, AttackMetrics) and 0 <= lira.auc <= 1 and lira["auc"] == lira.auc
    assert res.dtp is None or isinstance(res.dtp.n_above, int)
    assert all(isinstance(s, Skipped) and s.reason for s in res.skipped)
    assert res.resources.stage("reference_models").n_models > 0
    # written again, it is the same file (keys, order and values), nulls where nothing could be measured
    again = json.loads(res.to_json())
    first = json.loads(text)
    assert again == first and list(again["membership"]["lira"]) == list(first["membership"]["lira"])
    tprs = [t.tpr for m in res.membership.values() for t in m.tpr_at_fpr.values()]
    assert any(t is None or (isinstance(t, float) and math.isnan(t)) for t in tprs)
