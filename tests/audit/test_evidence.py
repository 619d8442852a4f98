"""The evidence record (evidence.json) built from results.json and the input files."""

import copy
import hashlib
import json
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
import pytest
from sklearn.neighbors import KNeighborsClassifier

import leakaudit
from leakaudit.audit.result.evidence import ATTACK_CLASSES, build_evidence, environment, write_evidence
from leakaudit.audit.policy import DEFAULT_POLICY, LEAKAGE_SHOWN_POLICY
from leakaudit.audit.inputs.structural import structural_checks
from leakaudit.data import DATA_FILES
from leakaudit.exceptions import InvalidInputError, InvalidParameterError

WHEN = datetime(2026, 1, 2, 3, 4, 5, tzinfo=timezone.utc)


def _check(id_, analysis, status="passed", value=0.52, threshold=0.6):
    return {"id": id_, "analysis": analysis, "name": id_, "status": status, "value": value,
            "interval": [0.48, 0.56] if value is not None else None, "threshold": threshold, "confidence": 0.99,
            "sentence": f"{id_} in words", "fix": "" if status != "not measurable" else "more records",
            "describes": "model"}


def _results(**config):
    """A results.json of the shape docs/results.schema.json describes, with the fields the record reads."""
    cfg = {"dataset": "adult", "train": None, "test": None, "data": None, "population": None, "model": None,
           "predictions_train": None, "predictions_test": None, "model_dir": None, "tokenizer": None,
           "reference_dir": None, "confidence": 0.95, "dtp_rule": "statistical", "epsilon_budget": None,
           "epsilon_delta": 1e-5, "thresholds": DEFAULT_POLICY.audit_settings()["thresholds"].model_dump()}
    cfg.update(config)
    checks = [_check("membership.lira.auc", "membership"),
              _check("membership.lira.tpr_at_low_fpr", "membership", "not measurable", None, 0.05),
              _check("dtp.dtp1", "dtp", value=0.8, threshold=1.0),
              _check("attribute.sex.advantage", "attribute", value=0.01, threshold=0.05)]
    return {"schema_version": 1, "type": "leakaudit audit", "leakaudit_version": "0.1.0",
            "created": "2026-01-01T00:00:00+00:00", "command": "leakaudit audit --profile smoke", "config": cfg,
            "data": {"name": "adult", "n_members": 1000, "n_nonmembers": 1000, "label": "income",
                     "class_names": ["<=50K", ">50K"], "record_columns": ["income", "age"]},
            "target": {"kind": "sklearn", "description": "a model"}, "skipped": [],
            "settings": {"profile": "smoke", "n_reference": 8, "pdtp_records": 100},
            "verdict": {"outcome": "inconclusive", "headline": "Inconclusive.", "confidence": 0.95,
                        "check_confidence": 0.99, "n_checks": len(checks), "checks": checks,
                        "recipe": {"reproduces": True}, "burden_of_proof": "safety shown"}}


def _sha(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_every_input_file_is_fingerprinted(tmp_path):
    (tmp_path / "model.skops").write_bytes(b"not really a model")
    (tmp_path / "train.csv").write_text("age,income\n30,1\n")
    (tmp_path / "test.csv").write_text("age,income\n40,0\n")
    res = _results(model="model.skops", train="train.csv", test=str(tmp_path / "test.csv"), label="income")
    rec = build_evidence(res, base_dir=tmp_path, recorded=WHEN)
    by_role = {f["role"]: f for f in rec["files"]}
    assert set(by_role) == {"model", "members", "non-members"}
    for role, name in (("model", "model.skops"), ("members", "train.csv"), ("non-members", "test.csv")):
        assert by_role[role]["sha256"] == _sha(tmp_path / name)
        assert by_role[role]["bytes"] == (tmp_path / name).stat().st_size
    (tmp_path / "train.csv").write_text("age,income\n31,1\n")  # one byte changed: another digest
    again = build_evidence(res, base_dir=tmp_path, recorded=WHEN)
    assert {f["role"]: f["sha256"] for f in again["files"]}["members"] != by_role["members"]["sha256"]


def test_a_folder_is_fingerprinted_file_by_file(tmp_path):
    d = tmp_path / "lm"
    (d / "sub").mkdir(parents=True)
    (d / "config.json").write_text("{}")
    (d / "sub" / "model.safetensors").write_bytes(b"\x00" * 10)
    rec = build_evidence(_results(), files={"language model": d}, recorded=WHEN)
    entry = rec["files"][0]
    assert entry["role"] == "language model"
    assert [f["path"] for f in entry["files"]] == ["config.json", "sub/model.safetensors"]
    assert entry["files"][1]["sha256"] == _sha(d / "sub" / "model.safetensors")


def test_missing_input_file_is_one_clear_error(tmp_path):
    with pytest.raises(InvalidInputError, match="nope.csv does not exist"):
        build_evidence(_results(train="nope.csv", test="nope2.csv"), base_dir=tmp_path)


def test_demo_records_the_bundled_digests():
    rec = build_evidence(_results(), recorded=WHEN)
    assert [f["path"] for f in rec["files"]] == sorted(k for k in DATA_FILES if k.startswith("adult/"))
    assert all(f["sha256"] == DATA_FILES[f["path"]].sha256 for f in rec["files"])
    generated = build_evidence(_results(dataset="purchase-like"), recorded=WHEN)["files"]
    assert generated[0]["sha256"] is None and "generated" in generated[0]["note"]


def test_environment_versions():
    env = environment()
    assert env["libraries"]["numpy"] == np.__version__
    import sklearn

    assert env["libraries"]["scikit-learn"] == sklearn.__version__
    assert env["leakaudit"] and env["python"]


def test_policy_must_be_the_one_the_audit_applied():
    res = _results()
    res["config"]["thresholds"]["max_auc"] = 0.55
    with pytest.raises(InvalidParameterError, match="max_auc = 0.6.*used 0.55"):
        build_evidence(res)
    old = _results()
    del old["verdict"]["burden_of_proof"]  # a verdict from before policies: leakage shown
    with pytest.raises(InvalidParameterError, match="burden_of_proof"):
        build_evidence(old)
    strange = _results()
    strange["config"]["thresholds"]["max_mystery"] = 1
    with pytest.raises(InvalidInputError, match="max_mystery"):
        build_evidence(strange)
    rec = build_evidence(old, policy=LEAKAGE_SHOWN_POLICY, recorded=WHEN)
    assert rec["verdict"]["burden_of_proof"] == "leakage shown"
    assert rec["policy"]["name"] == LEAKAGE_SHOWN_POLICY.name
    assert [s["key"] for s in rec["policy"]["settings"]] == [r["key"] for r in LEAKAGE_SHOWN_POLICY.table()]


def test_every_check_with_its_threshold_source():
    res = _results()
    rec = build_evidence(res, recorded=WHEN)
    assert [c["id"] for c in rec["checks"]] == [c["id"] for c in res["verdict"]["checks"]]
    by = {c["id"]: c for c in rec["checks"]}
    assert [s["key"] for s in by["membership.lira.auc"]["policy_settings"]] == ["max_auc"]
    assert by["membership.lira.auc"]["threshold_source"] == f"max_auc: {DEFAULT_POLICY.sources['max_auc']}"
    assert [s["key"] for s in by["membership.lira.tpr_at_low_fpr"]["policy_settings"]] == [
        "max_tpr_at_low_fpr", "low_fpr"]
    assert "Long et al." in by["dtp.dtp1"]["threshold_source"]
    assert by["membership.lira.tpr_at_low_fpr"]["status"] == "not measurable"
    assert by["membership.lira.tpr_at_low_fpr"]["fix"] == "more records"


def test_structural_checks_join_and_test_reconstruction():
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(50, 3)), rng.integers(0, 2, 50)
    checks = structural_checks(KNeighborsClassifier(1).fit(X, y), 50)
    rec = build_evidence(_results(), structural=checks, release="weights", recorded=WHEN)
    by = {c["id"]: c for c in rec["checks"]}
    assert by["structural.instance_based"]["status"] == "exceeded"
    assert "SACRO-ML" in by["structural.instance_based"]["threshold_source"]
    assert [s["key"] for s in by["structural.parameters_per_record"]["policy_settings"]] == [
        "max_parameters_per_record"]
    cls = {c["class"]: c for c in rec["attack_classes"]}
    assert cls["reconstruction and regurgitation"]["status"] == "tested"
    assert cls["reconstruction and regurgitation"]["checks"] == ["structural.instance_based"]
    assert cls["extraction"]["status"] == "not applicable"  # the weights are published


def test_attack_classes_are_accounted_for():
    rec = build_evidence(_results(), release="labels", recorded=WHEN)
    classes = rec["attack_classes"]
    assert [c["class"] for c in classes] == list(ATTACK_CLASSES)
    assert all(c["status"] in ("tested", "not applicable", "not tested") and c["reason"] for c in classes)
    cls = {c["class"]: c for c in classes}
    assert cls["membership inference"]["status"] == "tested"
    # a check that could not be measured tests nothing
    assert "membership.lira.tpr_at_low_fpr" not in cls["membership inference"]["checks"]
    assert cls["attribute inference"]["checks"] == ["attribute.sex.advantage"]
    assert cls["model inversion"]["status"] == "not tested"
    assert cls["extraction"]["status"] == "not tested"
    assert rec["release"]["context"] == "labels" and "only the predicted label" in rec["release"]["threat_model"]


def test_untested_classes_say_why():
    res = _results()
    res["verdict"]["checks"] = [c for c in res["verdict"]["checks"] if c["analysis"] != "attribute"]
    res["skipped"] = [{"name": "attribute inference", "reason": "no sensitive columns given", "fix": "--sensitive"}]
    for c in res["verdict"]["checks"]:
        c["status"] = "not measurable"
    cls = {c["class"]: c for c in build_evidence(res, recorded=WHEN)["attack_classes"]}
    assert {k: v for k, v in cls["attribute inference"].items() if k != "standards"} == {
        "class": "attribute inference", "status": "not tested", "checks": [],
        "reason": "attribute inference: no sensitive columns given"}
    assert cls["membership inference"]["status"] == "not tested"
    text = _results()
    text["data"]["kind"] = "text"
    cls = {c["class"]: c for c in build_evidence(text, recorded=WHEN)["attack_classes"]}
    assert cls["attribute inference"]["status"] == "not applicable"


def test_limitations_paragraph():
    res = _results()
    res["verdict"]["recipe"] = {"reproduces": False}
    text = build_evidence(res, recorded=WHEN)["limitations"]
    assert "1000 members and 1000 non-members" in text
    assert "smoke profile (8 reference models; PDTP measured for 100 members, not all)" in text
    assert "Not tested: reconstruction and regurgitation, model inversion, extraction." in text
    assert "membership.lira.tpr_at_low_fpr" in text
    assert "did not reproduce" in text and "No release context was declared" in text


def test_release_is_checked_and_record_is_strict_json(tmp_path):
    with pytest.raises(InvalidParameterError, match="release must be one of weights, scores, labels"):
        build_evidence(_results(), release="api")
    with pytest.raises(InvalidInputError, match="results.json"):
        build_evidence({"config": {}})
    res = _results()
    res["verdict"]["checks"][0]["value"] = float("nan")
    rec = build_evidence(res, recorded=WHEN)
    path = write_evidence(tmp_path / "evidence.json", rec)
    back = json.loads(path.read_text())  # strict JSON: NaN written as null
    assert back["checks"][0]["value"] is None
    assert back["recorded"] == "2026-01-02T03:04:05+00:00"
    assert back == json.loads(json.dumps(build_evidence(copy.deepcopy(res), recorded=WHEN), allow_nan=False))


# -- the evidence of one real audit: the files it wrote, the source that ran, the records' files and lines ---------

@pytest.fixture(scope="module")
def written(tmp_path_factory):
    """The cheapest demo audit, written as it is and redacted."""
    from leakaudit.audit import make_config, run_audit

    root = tmp_path_factory.mktemp("evidence")
    res = run_audit(make_config(profile="smoke", n_members=150, n_nonmembers=150, epochs=3, seed=3), root / "plain",
                    verbose=False)
    res.save(root / "redacted", redact=True)
    return res, root / "plain", root / "redacted"


def _load(folder, name="evidence.json"):
    return json.loads((folder / name).read_text())


def test_the_files_written_are_fingerprinted_beside_them(written):
    _, plain, redacted = written
    for folder in (plain, redacted):
        outputs = _load(folder)["outputs"]
        assert [o["path"] for o in outputs] == ["results.json", "records.csv", "report.html"]
        for o in outputs:
            assert o["sha256"] == _sha(folder / o["path"]) and o["bytes"] == (folder / o["path"]).stat().st_size
    assert _load(plain)["outputs"][1]["sha256"] != _load(redacted)["outputs"][1]["sha256"]


def _tree_digest(pkg: Path) -> str:
    """source_digest's SHA-256 of the package folder ``pkg``, computed as its docstring states."""
    h = hashlib.sha256()
    for f in sorted((f for f in pkg.rglob("*") if f.suffix in (".py", ".j2", ".c", ".h")),
                    key=lambda f: f.relative_to(pkg)):
        path, data = f.relative_to(pkg).as_posix().encode(), f.read_bytes()
        h.update(len(path).to_bytes(8, "little") + path + len(data).to_bytes(8, "little") + data)
    return h.hexdigest()


def test_the_source_that_ran_is_identified():
    import subprocess

    from leakaudit.audit.result.evidence import source_digest

    assert environment()["leakaudit_source"] == source_digest()  # computed once per process
    source_digest.cache_clear()  # (others may have changed the checkout since)
    src = source_digest()
    assert len(src["sha256"]) == 64 and src["files"] > 100
    pkg = Path(leakaudit.__file__).parent
    assert src["sha256"] == _tree_digest(pkg)  # as the docstring says it is computed
    head = subprocess.run(["git", "-C", str(pkg), "rev-parse", "HEAD"], capture_output=True, text=True)
    if head.returncode == 0:
        assert src["commit"] == head.stdout.strip() and isinstance(src["uncommitted_changes"], bool)


def test_a_copy_of_the_source_has_its_digest_and_no_other_checkouts_commit(tmp_path):
    """The digest depends on the files' paths and bytes alone; a package lying untracked inside some git checkout
    (a virtual environment's) names no commit."""
    import shutil
    import subprocess
    import sys

    repo = tmp_path / "project"
    shutil.copytree(Path(leakaudit.__file__).parent, repo / "venv" / "leakaudit",
                    ignore=shutil.ignore_patterns("__pycache__"))
    if subprocess.run(["git", "init", "-q", str(repo)]).returncode != 0:
        pytest.skip("no git")
    subprocess.run(["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q",
                    "--allow-empty", "-m", "x"], check=True)
    code = "import json; from leakaudit.audit.result.evidence import source_digest; print(json.dumps(source_digest()))"
    copy = json.loads(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                                     env={"PYTHONPATH": str(repo / "venv")}).stdout)
    assert copy["commit"] is None and copy["sha256"] == _tree_digest(repo / "venv" / "leakaudit")


def test_libraries_are_named_by_the_distribution_that_provides_them():
    from importlib import metadata

    libs, provided = environment()["libraries"], metadata.packages_distributions()
    for module in ("numpy", "sklearn", "xgboost", "lightgbm", "torch"):
        dists = provided.get(module)
        if dists:  # installed: its distribution with its version, never "not installed" beside it
            assert all(libs[d] == metadata.version(d) for d in dists)
            assert "not installed" not in [libs.get(module), libs.get(dists[0])]
    assert not [k for k, v in libs.items() if v == "not installed" and k.replace("-", "_") in provided]


def test_each_record_is_traced_to_its_file_and_line(written):
    import gzip

    import pandas as pd

    res, plain, _ = written
    rec = pd.read_csv(plain / "records.csv")
    assert list(rec.columns[:3]) == ["record_0based", "source", "row"]
    assert set(rec["source"]) <= {"adult.data.gz", "adult.test.gz"} and rec["row"].min() >= 1
    files = res.data["files"]
    assert files["adult.data.gz"].endswith("row N is its line N")
    assert files["adult.test.gz"].endswith("row N is its line N + 1")
    from leakaudit.data._files import find_file

    lines = {name: gzip.open(find_file(f"adult/{name}", bundled=True), "rt").read().splitlines() for name in files}
    for _, r in rec.iterrows():  # each record's values are those on its line of its file
        line = lines[r["source"]][r["row"] - 1 + (r["source"] == "adult.test.gz")].split(", ")
        assert (int(line[0]), line[5], line[9]) == (r["age"], r["marital_status"], r["sex"])
    by_role = {f["path"]: f for f in _load(plain)["files"] if "path" in f}
    assert by_role["adult/adult.test.gz"]["sha256"] == DATA_FILES["adult/adult.test.gz"].sha256


def test_analyses_not_run_findings_and_personal_data(written):
    res, plain, redacted = written
    ev = _load(plain)
    not_run = {n["analysis"]: n for n in ev["not_run"]}
    # the demo at smoke: no released model file, DTP-1 not exceeded, no claimed epsilon
    assert "release weights" in not_run["structural checks of the model file"]["reason"]
    assert "claimed_epsilon" in not_run["one-run audit of the claimed epsilon"]["reason"]
    assert all(n["reason"] for n in ev["not_run"])
    status = {c["id"]: c["status"] for c in ev["checks"]}
    for entry in ev["attack_classes"] + ev["standards"]["items"]:
        if entry["status"] == "tested" and entry["checks"]:
            found = [status[c] for c in entry["checks"]]
            assert entry["finding"] == ("not met" if "exceeded" in found else
                                        "met" if set(found) == {"shown below"} else "undecided")
        else:
            assert entry.get("finding") is None
    assert ev["personal_data"].startswith("report.html and records.csv contain personal data")
    assert "<p id=\"personal-data\"><b>Personal data</b>" in (plain / "report.html").read_text()
    assert "written redacted" in _load(redacted)["personal_data"]


def test_redact_keeps_ids_scores_and_verdict_without_values(written):
    import pandas as pd

    from leakaudit.audit.result.output import read_records_csv
    from leakaudit.audit.result.results import rerender_report

    res, plain, redacted = written
    full, red = pd.read_csv(plain / "records.csv"), pd.read_csv(redacted / "records.csv")
    values = res.data["record_columns"] + ["label"]
    assert not set(values) & set(red.columns) and set(values) <= set(full.columns)
    assert list(red.columns) == [c for c in full.columns if c not in values]
    pd.testing.assert_frame_equal(red, full[red.columns])  # ids, scores, ranks unchanged
    assert _load(redacted, "results.json")["verdict"] == _load(plain, "results.json")["verdict"]
    html = (redacted / "report.html").read_text()
    row = full[full["is_member"] == 1].sort_values("risk_rank").iloc[0]
    assert f"{row['source']}, row {row['row']}" in html and f"marital_status: {row['marital_status']}" not in html
    assert f"marital_status: {row['marital_status']}" in (plain / "report.html").read_text()
    assert "Written redacted" in html
    assert list(read_records_csv(redacted / "records.csv").columns[:1]) == ["record"]
    rerender_report(redacted)  # the redacted folder renders again, to the bytes its evidence fingerprints
    assert _sha(redacted / "report.html") == _load(redacted)["outputs"][2]["sha256"]
    with pytest.raises(InvalidParameterError, match="redact must be True or False"):
        res.save(plain.parent / "bad", redact="yes")


def test_attack_accuracy_against_chance_beside_every_membership_check(written):
    res, plain, _ = written
    ev, results = _load(plain), _load(plain, "results.json")
    for c in ev["checks"]:
        if c["analysis"] == "membership":
            chance = results["membership"][c["id"].split(".")[1]]["against_chance"]
            assert c["against_chance"] == chance
            lo, hi = chance["advantage_ci"]
            assert lo <= chance["advantage"] <= hi and chance["accuracy"] == pytest.approx((1 + chance["advantage"]) / 2)
            assert chance["accuracy_ci"] == pytest.approx([(1 + lo) / 2, (1 + hi) / 2])
    item = next(i for i in ev["standards"]["items"] if i["id"] == "11.3.3")
    assert item["status"] == "tested" and set(item["against_chance"]) == set(results["membership"])
    html = (plain / "report.html").read_text()
    lira = results["membership"]["lira"]["against_chance"]
    lo, hi = lira["accuracy_ci"]
    assert f"<span>{lira['accuracy']:.3f} [{lo:.3f}, {hi:.3f}];</span> <span>{lira['advantage']:+.3f}" in html
