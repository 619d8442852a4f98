"""results.json's sections are typed models that still read as the mappings results.json holds."""

import json
import math

import pytest
from pydantic import ValidationError

from leakaudit.audit.result.results import AuditResult
from leakaudit.audit.result.sections import AttackMetrics, DtpSection, Skipped


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
    given = {"n_records": 3, "rule": "statistical", "max": 1.5, "mean": 0.5, "n_above": 1,
             "records_above": ["train.csv, row 3"], "kind": "PDTP", "noise_floor": {"median": 0.2, "what": "std"}}
    d = DtpSection.model_validate(given)
    assert d.model_dump() == given and list(d.model_dump()) == list(given)
    assert d.noise_floor.median == 0.2 and d.test is None and "test" not in d
    for wrong in ({"noise_floor": {"median": 0.2, "extra": 1}}, {"records_above": [2]}, {"screening": {"x": 1}}):
        with pytest.raises(ValidationError):  # closed: a key it does not declare, a record by its 0-based key
            DtpSection.model_validate({**given, **wrong})
    from leakaudit.audit.result.sections import Settings

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


def _schema3_file(version: int) -> dict:
    """A results.json of schema ``version`` (2 or 3): its DTP lists hold records.csv's 0-based ``record`` keys, its
    retraining recipe lists the parameters beside the algorithm, its dp section carries its own schema_version."""
    from leakaudit.audit.result.checks import Check
    from leakaudit.audit.config import AuditConfig

    check = Check(id="dtp.dtp1", analysis="dtp", name="DTP-1", status="exceeded", sentence="s", value=2.0).model_dump()
    verdict = {"publish": False, "headline": "Do not publish: s", "reasons": ["s"], "thresholds": {"max_dtp": 1.0},
               "outcome": "do not publish", "checks": [check]}
    # schema 2: ``passed`` (``shown_below`` and ``counts`` are read from the checks)
    verdict.update({"passed": []} if version == 2 else {"shown_below": [], "counts": {"exceeded": 1}})
    return {"schema_version": version, "type": "AuditResult", "leakaudit_version": "0.1.0", "created": "now",
            "command": "leakaudit audit", "config": AuditConfig().model_dump(mode="json"),
            "data": {"n_members": 4, "n_nonmembers": 4, "label": "y", "class_names": ["a", "b"]},
            "target": {"kind": "demo", "description": "d"}, "membership": {}, "attribute": {}, "property": {},
            "mip": None, "skipped": [], "timings": {}, "resources": {"peak_memory_mb": 1.0,
                                                                     "pdtp_models": {"n_models": 3}},
            "dtp": {"n_records": 4, "max": 2.0, "mean": 1.0, "n_above": 2, "records_above": [0, 3],
                    "rule": "statistical", "records_significant": [3], "records_untested": [],
                    "test": {"records": [0, 3], "significant": [False, True], "untested": []},
                    "screening": {"ranking": "none", "n_members": 4, "n_top": 0, "n_sample": 2, "n_measured": 2,
                                  "n_unmeasured": 2, "sample_budget": 2, "sample_records": [0, 3], "sample_above": 2},
                    "removal": None},
            "settings": {"profile": "smoke", "retraining_recipe": {"algorithm": "a", "module arguments": "k=1",
                                                                   "lr": 0.1, "seeds": "fresh"}},
            "verdict": verdict}


@pytest.mark.parametrize("version", [2, 3])
def test_a_schema_2_or_3_file_is_read_as_schema_4(version):
    from leakaudit.audit.result.results import SCHEMA_VERSION, read_result

    data = _schema3_file(version)
    res = read_result(data)
    assert SCHEMA_VERSION == 4 and res.to_dict()["schema_version"] == 4
    # each record of a DTP list is named by its records.csv key: results.json alone does not say its file and row
    assert res.dtp.records_above == ["records.csv, record 0", "records.csv, record 3"]
    assert res.dtp.records_significant == ["records.csv, record 3"] and res.dtp.records_untested == []
    assert res.dtp.test.records == res.dtp.records_above and res.dtp.screening.sample_records == res.dtp.records_above
    recipe = res.settings.retraining_recipe
    assert (recipe.algorithm, recipe.module_arguments, recipe.parameters, recipe.seeds) == ("a", "k=1", {"lr": 0.1},
                                                                                           "fresh")
    assert res.resources.stage("pdtp_models").n_models == 3 and res.config.profile == "standard"
    assert res.verdict.outcome == "do not publish" and res.verdict.counts["exceeded"] == 1
    assert data["dtp"]["records_above"] == [0, 3]  # the data read is left as it was
    again = read_result(json.loads(res.to_json()))  # written as schema 4, read back the same
    assert again.dtp == res.dtp and again.settings == res.settings


def test_a_plug_in_attacks_resources_land_typed():
    """An attack registered from outside reports what it used (``audit_run``): the counters a stage declares stay
    typed, its own land under ``values``; results.json's resources refuse anything else."""
    from leakaudit.audit.steps.membership import _stage
    from leakaudit.audit.result.sections import Resources

    used = _stage({"seconds": 1.5, "n_queries": 300, "oracle": "remote"})
    res = Resources.model_validate({"peak_memory_mb": 1.0, "my_attack": used})
    assert res.stage("my_attack").seconds == 1.5 and res.stage("my_attack").values == {"n_queries": 300,
                                                                                       "oracle": "remote"}
    assert res.model_dump()["my_attack"] == {"seconds": 1.5, "values": {"n_queries": 300, "oracle": "remote"}}
    assert _stage({"seconds": 1.0}) == {"seconds": 1.0}
    with pytest.raises(ValidationError):
        Resources.model_validate({"my_attack": {"n_queries": 300}})


def test_a_schema_3_file_beside_its_records_csv_names_its_records_as_sentences_do():
    """Read with records.csv (as `leakaudit report` re-renders a folder), a schema-3 file's records get their names."""
    import pandas as pd

    from leakaudit.audit.result.results import AuditResult

    records = pd.DataFrame({"record": range(4), "source": "train.csv", "row": [2, 5, 7, 9]})
    res = AuditResult.from_dict(_schema3_file(3), records=records)
    assert res.dtp.records_above == ["train.csv, row 2", "train.csv, row 9"]
    assert res.dtp.records_significant == ["train.csv, row 9"] and res.dtp.test.records == res.dtp.records_above
    assert list(res.settings.retraining_recipe) == ["algorithm", "module_arguments", "parameters", "seeds"]
